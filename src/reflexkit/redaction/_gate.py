"""The outbound gate: every text that leaves reflexkit passes :func:`outbound` on its way out.

A *sink* is a place text leaves to: memory, the run log, attempt reports, insights, lessons,
the hooks log, fixture files, every request to a model, the terminal. Each is registered in
:data:`SINKS` with its kind and the function at its boundary that calls the gate, and
``tests/redaction/test_sinks.py`` walks the registry: it plants secrets and hostile text in
each sink's path and checks what comes out, and it fails for a registered boundary that does
not call the gate.

What the gate does, by the sink's kind:

* every kind: secrets are redacted (:class:`~reflexkit.redaction.Redactor`, the rule table and
  the secret-looking environment values);
* ``terminal``: control characters and escape sequences are removed, and characters that
  reorder or hide text (bidi overrides such as U+202E, zero-width and tag characters) are
  shown as ``<U+XXXX>`` (:func:`reflexkit._text.strip_control`);
* ``prompt`` (a request to a model, the prompt of an attempt handed to an agent, the context
  a hook hands Claude Code): the same neutralising as for a terminal (a tag character is an
  instruction a reader can't see); the fence around tool- and agent-derived text is the
  prompt builders' (:func:`reflexkit._text.fence`);
* ``record`` (JSON lines and files): JSON escapes control characters itself; text is kept as
  written, redacted.

Structured data (a record before it is serialised, a request's keyword arguments) goes
through :func:`outbound_data`: every string in it, keys included, passes the gate.
"""

from __future__ import annotations

import functools
import os
import threading
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import attrs

from reflexkit._text import strip_control
from reflexkit.redaction._engine import Redactor, env_secrets

if TYPE_CHECKING:
    from reflexkit.models import Reflection

__all__ = [
    "SINKS",
    "Sink",
    "SinkKind",
    "gated_reflection",
    "outbound",
    "outbound_data",
    "set_redactor",
    "stored",
]

SinkKind = Literal["record", "terminal", "prompt"]

T = TypeVar("T")


@attrs.frozen
class Sink:
    """One place text leaves reflexkit.

    Attributes:
        name: The sink's name, as callers pass it to :func:`outbound`.
        kind: What makes text safe there besides redaction (see the module documentation).
        boundaries: ``module:qualified.name`` of each function at the sink's boundary: the
            last of ours the text passes before it leaves. Each calls the gate.
    """

    name: str
    kind: SinkKind
    boundaries: tuple[str, ...]


SINKS: Mapping[str, Sink] = {
    sink.name: sink
    for sink in (
        Sink("memory", "record", ("reflexkit.redaction._gate:gated_reflection",)),
        Sink("run_log", "record", ("reflexkit.events:RunLog.write",)),
        Sink("report", "record", ("reflexkit.reports._report:write_report",)),
        Sink("insights", "record", ("reflexkit.insights._jsonl:append_records",)),
        Sink("lessons", "record", ("reflexkit.insights._jsonl:append_records",)),
        Sink("hooks_log", "record", ("reflexkit.hooks._handlers:_log",)),
        Sink("verdict", "record", ("reflexkit.hooks._stop:_write_verdict",)),
        Sink(
            "fixture",
            "record",
            (
                "reflexkit.reflection._fixture:FixtureRecorder.generate",
                "reflexkit.reports._judge:JudgeRecorder.judge",
            ),
        ),
        Sink(
            "model_request",
            "prompt",
            ("reflexkit.reflection._prompts:_gated", "reflexkit.llm._client:Claude.send"),
        ),
        Sink("agent_prompt", "prompt", ("reflexkit.orchestrator._subagents:_gated_prompt",)),
        Sink("kept_prompt", "record", ("reflexkit.orchestrator._kept_prompts:keep_prompt",)),
        Sink("hook_output", "prompt", ("reflexkit.hooks._handlers:_hook_json",)),
        Sink(
            "terminal",
            "terminal",
            (
                "reflexkit.cli._output:say",
                "reflexkit.cli._output:show",
                "reflexkit._log:GatedFormatter.format",
                "reflexkit.cli._core:_fail",
                "reflexkit.cli._core:_usage_failed",
                "reflexkit.hooks.__main__:_Parser.error",
            ),
        ),
        # JSON for the terminal: redacted here; its control and hidden characters are written
        # as JSON escapes once serialised (reflexkit._text.escape_json_text), so it stays valid.
        Sink("terminal_json", "record", ("reflexkit.cli._output:show_json",)),
    )
}
"""Every sink, in one place. A new way out of reflexkit is registered here, and its boundary
calls :func:`outbound` or :func:`outbound_data` (``tests/redaction/test_sinks.py`` checks)."""

_lock = threading.Lock()
_redactor: Redactor | None = None
_given = False
_built_for: tuple[dict[Any, Any], tuple[tuple[str, str], ...]] | None = None
"""The environment the gate's redactor was last checked against, and its secrets."""


def set_redactor(redactor: Redactor | None) -> None:
    """Use *redactor* at the gate from now on (``None``: a fresh one reading ``os.environ``).

    The composition root passes the one it built, so the gate and the reflection service
    redact alike.
    """
    global _redactor, _given
    with _lock:
        _redactor, _given = redactor, redactor is not None


def _current() -> Redactor:
    """The gate's redactor; its own follows the secret-looking variables of ``os.environ``.

    The environment is read for secrets again only when it changed: it is compared with a
    copy (a microsecond: the same objects while nothing changed), not read again on every
    call (a third of a millisecond for every text that left).
    """
    global _redactor, _built_for  # noqa: PLW0603 -- the gate's one redactor per process
    raw = getattr(os.environ, "_data", None)  # CPython's encoded copy: no decoding per item
    environ = raw if isinstance(raw, dict) else dict(os.environ)
    with _lock:
        if _given and _redactor is not None:
            return _redactor
        if _redactor is None or _built_for is None or environ != _built_for[0]:
            secrets = tuple(sorted(env_secrets(os.environ).items()))
            if _redactor is None or _built_for is None or secrets != _built_for[1]:
                _redactor = Redactor()
            _built_for = (dict(environ), secrets)
        return _redactor


@functools.cache
def _kind(sink: str) -> SinkKind:
    try:
        return SINKS[sink].kind
    except KeyError:
        msg = f"no sink named {sink!r}: register it in reflexkit.redaction._gate.SINKS"
        raise ValueError(msg) from None


def outbound(text: str, sink: str, *, redactor: Redactor | None = None) -> str:
    """Return *text* made safe to leave through *sink*: redacted, and neutralised for it.

    Args:
        text: Any text on its way out.
        sink: A name in :data:`SINKS`.
        redactor: The redactor to use (the gate's own by default, see :func:`set_redactor`).

    Raises:
        ValueError: *sink* is not registered.
    """
    kind = _kind(sink)
    clean = (redactor or _current()).redact(text).text
    if kind == "record":
        return clean
    return strip_control(clean)


def gated_reflection(reflection: Reflection, sink: str = "memory") -> Reflection:
    """*reflection* as a store may hold it: its texts through the gate; itself when clean.

    Every way into a store passes here: each store's own write (:func:`stored`), so also
    the service's save, ``memory copy`` (records read from a file an agent can write, or an
    older version wrote) and the replay of a spool. Ids, the fingerprint and the other keys
    stay as they are: memory is looked up by them.
    """
    texts = "\n".join((reflection.analysis, reflection.suggestion, *reflection.action_items))
    if not _current().may_find(texts):  # one scan of all of them: nothing to redact
        if sink == "memory":
            _PASSED[id(reflection)] = reflection
        return reflection
    analysis = outbound(reflection.analysis, sink)
    suggestion = outbound(reflection.suggestion, sink)
    items = outbound_data(reflection.action_items, sink)
    if (
        analysis == reflection.analysis
        and suggestion == reflection.suggestion
        and items is reflection.action_items
    ):
        gated = reflection
    else:
        gated = attrs.evolve(
            reflection, analysis=analysis, suggestion=suggestion, action_items=items
        )
    if sink == "memory":
        _PASSED[id(gated)] = gated
    return gated


_PASSED: weakref.WeakValueDictionary[int, Reflection] = weakref.WeakValueDictionary()
"""The reflections :func:`gated_reflection` returned for memory, by identity, while they live:
a store's write passes them on without reading their texts again (the service gates before it
saves)."""


def stored(reflection: Reflection) -> Reflection:
    """*reflection* as a store writes it: through the gate, unless this very object passed.

    Each store calls this in its own write, so a caller of ``append`` (the Python API, a
    backend of a user's) can't skip the gate; one the service gated costs a dictionary
    lookup.
    """
    if _PASSED.get(id(reflection)) is reflection:
        return reflection
    return gated_reflection(reflection)


def outbound_data(data: T, sink: str, *, redactor: Redactor | None = None) -> T:
    """Return JSON-like *data* with every string in it (keys too) passed through the gate.

    Mappings, lists and tuples are rebuilt; other values (numbers, ``None``, booleans) are
    kept. Data with nothing to change comes back as the same objects.
    """
    _kind(sink)
    gate = redactor or _current()
    return _walk(data, sink, gate)  # type: ignore[no-any-return]  # the same shape, by construction


def _walk(value: Any, sink: str, redactor: Redactor) -> Any:  # noqa: ANN401 -- JSON data
    if isinstance(value, str):
        return outbound(value, sink, redactor=redactor) if value else value
    if isinstance(value, Mapping):
        items = [(_walk(k, sink, redactor), _walk(v, sink, redactor)) for k, v in value.items()]
        if all(a is k and b is v for (a, b), (k, v) in zip(items, value.items(), strict=True)):
            return value
        return dict(items)
    if isinstance(value, list | tuple):
        walked = [_walk(item, sink, redactor) for item in value]
        if all(a is b for a, b in zip(walked, value, strict=True)):
            return value
        return type(value)(walked) if isinstance(value, tuple) else walked
    return value
