"""Recorded LLM replies, replayed offline: deterministic reflections for tests and CI.

:class:`FixtureRecorder` wraps a live ``ClaudeGenerator`` and appends each reply under the
:func:`~reflexkit.reflection._prompts.prompt_key` of its request; :class:`FixtureGenerator`
replays them (the last line of a key wins); :func:`fixture_key` prints a failure's key. The
file format is described in docs/llm.md.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import attrs
import orjson

from reflexkit import _serde
from reflexkit._files import read_regular
from reflexkit._lines import LineWriter
from reflexkit.exceptions import ConfigError, GenerationError
from reflexkit.llm import RequestOptions
from reflexkit.models import FailureContext, Reflection, ReflectionSource, utcnow
from reflexkit.redaction import Redactor
from reflexkit.redaction._gate import outbound_data
from reflexkit.reflection._claude import ClaudeGenerator
from reflexkit.reflection._prompts import parse_reply, reflection_from_reply, reflection_request

__all__ = [
    "FixtureGenerator",
    "FixtureMissingError",
    "FixtureRecorder",
    "fixture_key",
]

log = logging.getLogger("reflexkit.reflection")


class FixtureMissingError(GenerationError):
    """No recorded reply has the key of a failure (reason ``fixture_not_found``).

    Attributes:
        key: The missing prompt key: record it, or see it with ``reflexkit fixtures key``.
        path: The fixture file that was searched.
    """

    def __init__(self, key: str, path: Path) -> None:
        self.key = key
        self.path = path
        super().__init__("fixture_not_found", f"no fixture with promptHash {key} in {path}")


def fixture_key(
    failure: FailureContext,
    /,
    *,
    options: RequestOptions = RequestOptions(),  # noqa: B008 -- a frozen value
    previous: Sequence[Reflection] = (),
    root: str | os.PathLike[str] | None = None,
) -> str:
    """Return the fixture key of a failure: what ``reflexkit fixtures key`` prints.

    It is the key ClaudeGenerator records under, given the same options. The reflection
    service redacts and classifies a failure before a generator sees it, so pass the failure
    as the service prepares it to get the key the service will ask for.

    Args:
        failure: The failure.
        options: The request options of the recording (model, mode, max_tokens...).
        previous: The subtask's earlier reflections at the time, oldest first.
        root: The project root cut from paths (the current directory by default).

    Returns:
        Twelve lowercase hex digits.
    """
    return reflection_request(failure, options=options, previous=previous, root=root).key


class FixtureGenerator:
    """A :class:`~reflexkit.reflection._protocols.ReflectionGenerator` replaying recorded replies.

    The file is read on first use and again whenever it changes on disk.

    Args:
        path: The JSONL fixture file.
        options: The request options of the recording (part of the key).
        root: The project root cut from paths (the current directory by default).
        clock: Returns the creation time of a reflection.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        /,
        *,
        options: RequestOptions = RequestOptions(),  # noqa: B008 -- a frozen value
        root: str | os.PathLike[str] | None = None,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.path = Path(path)
        self.options = options
        self._root = root
        self._clock = clock
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._completions: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"FixtureGenerator({str(self.path)!r}, model={self.options.model!r})"

    def key(self, failure: FailureContext, /, *, previous: Sequence[Reflection] = ()) -> str:
        """Return the key :meth:`generate` looks up for *failure* (it reads no file)."""
        return fixture_key(failure, options=self.options, previous=previous, root=self._root)

    def generate(
        self, failure: FailureContext, /, *, previous: Sequence[Reflection] = ()
    ) -> Reflection:
        """Replay the recorded reply for *failure*.

        Args:
            failure: The (already redacted) failure.
            previous: The subtask's earlier reflections, oldest first (part of the key).

        Returns:
            The reflection, ``source=fixture``.

        Raises:
            FixtureMissingError: ``fixture_not_found`` (no file, or no reply under the key; the
                error names the key and the file).
            GenerationError: ``fixture_invalid`` (the file can't be read, or a line or the
                completion does not validate).
        """
        prompt = reflection_request(
            failure, options=self.options, previous=previous, root=self._root
        )
        try:
            completions = self._load()
        except GenerationError as err:
            if err.reason != "fixture_not_found":
                raise
            raise FixtureMissingError(prompt.key, self.path) from None  # no file: every key misses
        if prompt.key not in completions:
            raise FixtureMissingError(prompt.key, self.path)
        try:
            reply = parse_reply(completions[prompt.key], source=f"fixture {prompt.key}")
        except GenerationError as err:
            raise GenerationError("fixture_invalid", str(err)) from None
        reflection = reflection_from_reply(
            reply,
            failure,
            failure_type=prompt.failure_type,
            source=ReflectionSource.FIXTURE,
            clock=self._clock,
        )
        return attrs.evolve(reflection, model=self.options.model)

    def _load(self) -> dict[str, Any]:
        """Return the completions by key, reading the file again when it changed."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            raise GenerationError("fixture_not_found", f"no fixture file at {self.path}") from None
        except OSError as err:
            raise GenerationError("fixture_invalid", f"cannot read {self.path}: {err}") from None
        stamp = (stat.st_mtime_ns, stat.st_size)
        with self._lock:
            if stamp != self._stamp:
                self._completions = _read(self.path)
                self._stamp = stamp
            return self._completions


_MAX_FIXTURE_FILE = 256 << 20  # replies are a few KiB each: a million of them


def _read(path: Path) -> dict[str, Any]:
    """Read a fixture file: ``{"promptHash": str, "completion": object}`` per line.

    A bad line (torn by a crash, a merge conflict, a hand edit) is skipped and reported
    (a warning naming the file and line): the good lines around it still replay, and a key
    that was only on the bad line is a miss (``fixture_not_found``), which
    ``fixtureMiss: error`` turns into an error, never a silent fallback.

    Raises:
        GenerationError: ``fixture_invalid``: the file can't be read (a FIFO, a device, too
            big), or it holds no good line at all but some bad ones.
    """
    try:  # the config names it: the safe reader (a committed link to a user's file is fine)
        raw = read_regular(path, limit=_MAX_FIXTURE_FILE, follow=True)
    except OSError as err:
        raise GenerationError("fixture_invalid", f"cannot read {path}: {err}") from None
    completions: dict[str, Any] = {}
    bad: list[str] = []
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = _serde.loads(line, source=where)
        except ConfigError as err:
            bad.append("; ".join(err.errors))
            continue
        if (
            not isinstance(record, dict)
            or set(record) != {"promptHash", "completion"}
            or not isinstance(record["promptHash"], str)
            or not isinstance(record["completion"], dict)
        ):
            bad.append(f'{where}: expected {{"promptHash": "<12 hex>", "completion": {{...}}}}')
            continue
        completions[record["promptHash"]] = record["completion"]
    for why in bad:
        log.warning("skipped a bad fixture line: %s", why)
    if bad and not completions:
        raise GenerationError("fixture_invalid", "; ".join(bad[:3]))
    return completions


class FixtureRecorder:
    """A :class:`~reflexkit.reflection._protocols.ReflectionGenerator` that records live replies.

    It asks *generator* for each reflection and appends the validated reply to *path* under
    its prompt key, so a :class:`FixtureGenerator` with the same model and mode replays it
    offline. This is what ``reflexkit reflect --record-fixtures FILE`` uses. A fixture that
    can't be written is logged at error level; the live reflection is still returned.

    The service hands it failures already redacted, so the prompt held no secret; the reply
    is redacted again before it is written all the same (a fixture file is committed).

    Args:
        generator: The live generator.
        path: The JSONL fixture file; created with its folder when missing.
        redactor: Redacts the reply's text before it is written (one reading
            ``os.environ`` by default).

    Attributes:
        recorded: How many replies were written.
    """

    def __init__(
        self,
        generator: ClaudeGenerator,
        path: str | os.PathLike[str],
        /,
        *,
        redactor: Redactor | None = None,
    ) -> None:
        self.generator = generator
        self.path = Path(path)
        self.recorded = 0
        self._redactor = redactor or Redactor()

    def __repr__(self) -> str:
        return f"FixtureRecorder({self.generator!r}, {str(self.path)!r})"

    def close(self) -> None:
        """Close the live generator's HTTP connections."""
        self.generator.close()

    def generate(
        self, failure: FailureContext, /, *, previous: Sequence[Reflection] = ()
    ) -> Reflection:
        """Generate a live reflection and record its reply.

        Raises:
            GenerationError: As :meth:`ClaudeGenerator.generate`; nothing is recorded then.
        """
        completion = self.generator.complete(failure, previous=previous)
        data = outbound_data(
            _serde.unstructure(completion.reply), "fixture", redactor=self._redactor
        )
        if data.get("failureType") is None:
            data.pop("failureType", None)
        line = orjson.dumps({"promptHash": completion.key, "completion": data}) + b"\n"
        try:
            self._append(line)
        except OSError as err:
            log.error("could not record fixture %s in %s: %s", completion.key, self.path, err)  # noqa: TRY400 -- the message says it all
        else:
            self.recorded += 1
        return completion.reflection

    def _append(self, line: bytes) -> None:
        """Append one line with a single write, so concurrent recorders never interleave."""
        LineWriter(self.path, keep_open=False).append(line)
