"""Claude Code hooks: reflexkit inside a plain Claude Code session, without our orchestrator.

:func:`run_hook` handles one event's JSON payload: ``SessionStart`` adds lessons,
``PostToolUse`` of a failed ``Bash`` stores a reflection, ``Stop`` writes the report and may
block an incomplete stop with the judge's feedback. A hook is a no-op unless
``hooks.enabled`` and never fails the session (exit 0, errors to the hook log). Each hook and
its rules are described in docs/hooks.md.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs
import orjson

from reflexkit._files import atomic_write, make_dirs, read_regular, safe_id
from reflexkit._lines import LineWriter
from reflexkit.exceptions import ConfigError
from reflexkit.models import FailureContext, FailureType, utcnow
from reflexkit.redaction._gate import outbound_data
from reflexkit.tasks._config import LoadedProject, load_project

# Each handler imports what only it needs (the stop hook, the reports, the containers):
# Claude Code starts a hook on every tool call, and most calls need none of them.

__all__ = [
    "ACTIVE_ENV",
    "EVENTS",
    "HOOK_SUBTASK",
    "HookResult",
    "answer",
    "run_hook",
]

log = logging.getLogger("reflexkit.hooks")

ACTIVE_ENV = "REFLEXKIT_HOOK_ACTIVE"
"""Set while a hook runs; a hook started with it set (by its own work) does nothing."""

HOOK_SUBTASK = "claude-code"
"""The subtask id of the reflections and reports of Claude Code sessions."""

SENTINEL_STALE_S = 600.0
"""A sentinel older than this is left over from a killed hook, and ignored."""

MAX_PAYLOAD_BYTES = 4 * 1024 * 1024
_SEEN_TOOL_USES = 200  # the tool-use ids a session remembers, against re-delivered events
_EXIT_CODE = re.compile(r"exit code:?\s*(-?\d+)", re.IGNORECASE)


@attrs.frozen(kw_only=True)
class HookResult:
    """What a hook prints and why.

    Attributes:
        stdout: The JSON Claude Code reads (``""`` for nothing).
        note: What happened, for the hook log and for tests.
    """

    stdout: str = ""
    note: str = ""


def _hook_json(output: Mapping[str, object]) -> str:
    """What Claude Code reads from a hook (context for the model), through the outbound gate."""
    return orjson.dumps(outbound_data(output, "hook_output")).decode()


# --- the entry point ------------------------------------------------------------------------


def answer(event: str, write: Callable[[str], object], *, config: Path | None = None) -> None:
    """Read the payload on stdin, run the hook and *write* what Claude Code should read.

    What both entry points do (``python -m reflexkit.hooks``, ``reflexkit hook``); never
    raises: a hook exits 0 whatever happens, its error a warning on stderr.
    """
    try:
        result = run_hook(event, sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1), config=config)
        if result.stdout:
            write(result.stdout)
    except Exception as err:  # noqa: BLE001 -- a hook exits 0 whatever happens
        log.warning("hook %s failed: %s: %s", event, type(err).__name__, err)


def run_hook(event: str, raw: bytes, *, config: Path | None = None) -> HookResult:
    """Handle one hook event; never raises.

    Args:
        event: ``stop``, ``post-tool-use`` or ``session-start``.
        raw: The payload Claude Code wrote on stdin.
        config: An explicit project.json (``--config``); else the one found from the
            payload's ``cwd``.

    Returns:
        What to print on stdout, and a note on what happened.
    """
    if os.environ.get(ACTIVE_ENV):
        return HookResult(note="skipped: started by a reflexkit hook's own work")
    payload, problem = _payload(raw)
    if payload is None:
        return HookResult(note=f"skipped: {problem}")
    try:
        project = _project(payload, config)
    except ConfigError as err:
        log.warning("hook %s: project.json: %s", event, "; ".join(err.errors))
        return HookResult(note="skipped: bad project.json")
    if not project.config.hooks.enabled:
        return HookResult(note="skipped: hooks.enabled is false")
    session = safe_id(str(payload.get("session_id") or "unknown"))
    sessions = _hooks_dir(project) / "sessions"
    started = time.monotonic()
    # Tool calls of one session may run in parallel: each has its own sentinel, so two
    # failed commands are both reflected on, while a re-delivered event is not run twice.
    tool_use = payload.get("tool_use_id") if event == "post-tool-use" else None
    name = f"{session}.{event}" + (f".{safe_id(tool_use)}" if isinstance(tool_use, str) else "")
    try:
        with _sentinel(sessions / f"{name}.running") as acquired:
            if not acquired:
                result = HookResult(note="skipped: this hook is already running for the session")
            else:
                os.environ[ACTIVE_ENV] = "1"
                try:
                    result = _HANDLERS[event](project, payload, session)
                finally:
                    os.environ.pop(ACTIVE_ENV, None)
    except Exception as err:  # noqa: BLE001 -- a hook never fails the session
        result = HookResult(note=f"error: {type(err).__name__}: {err}")
    _log(project, event, session, result.note, time.monotonic() - started)
    return result


def _payload(raw: bytes) -> tuple[dict[str, Any] | None, str]:
    if len(raw) > MAX_PAYLOAD_BYTES:
        return None, f"payload larger than {MAX_PAYLOAD_BYTES} bytes"
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as err:
        return None, f"payload is not JSON ({err})"
    if not isinstance(data, dict):
        return None, "payload is not a JSON object"
    if not isinstance(data.get("session_id"), str) or not data["session_id"]:
        return None, "payload has no session_id"
    return data, ""


def _project(payload: Mapping[str, Any], config: Path | None) -> LoadedProject:
    cwd = payload.get("cwd")
    here = Path(cwd) if isinstance(cwd, str) and cwd and Path(cwd).is_dir() else Path.cwd()
    return load_project(config, cwd=here)


def _hooks_dir(project: LoadedProject) -> Path:
    return project.root / ".reflexkit" / "hooks"


@contextlib.contextmanager
def _sentinel(path: Path) -> Iterator[bool]:
    """Hold *path* while the hook runs; yield False when another run holds a fresh one."""
    make_dirs(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        if not _stale(path):
            yield False
            return
        path.unlink(missing_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    try:
        yield True
    finally:
        path.unlink(missing_ok=True)


_SKEW_S = 2.0  # a sentinel this far "ahead" of a probe stamped later is coarse stamps, not skew


def _stale(sentinel: Path) -> bool:
    """Whether *sentinel* was left by a killed hook: older than :data:`SENTINEL_STALE_S`.

    Its age is measured on one clock, the file system's: a probe in the same folder is
    stamped now and the two stamps compared. The wall clock may differ from the file
    system's (a file server's own clock, a clock set back, a test travelling in time); by
    it a fresh sentinel could look old (and the hook run twice) or an old one new (and the
    hook held for good). A sentinel from the future on the file system's own clock was
    left before that clock was set back: stale too.
    """
    probe = sentinel.with_name(".clock")
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(probe, flags, 0o600)
        try:
            os.utime(fd)  # now, on the file system's clock
            now = os.fstat(fd).st_mtime
        finally:
            os.close(fd)
        age = now - sentinel.stat().st_mtime
    except OSError:
        return False  # can't tell: hold, rather than run a hook twice
    return age >= SENTINEL_STALE_S or age < -_SKEW_S


def _log(project: LoadedProject, event: str, session: str, note: str, seconds: float) -> None:
    """Append one line to the hook log; a log that can't be written is not an error."""
    entry = {"at": utcnow().isoformat(), "event": event, "session": session, "note": note}
    line = orjson.dumps({**outbound_data(entry, "hooks_log"), "ms": round(seconds * 1000)})
    path = project.root / project.config.hooks.log_path
    try:  # the writer every appender shares: whole lines, no link followed (#19)
        LineWriter(path, keep_open=False, mode=0o600).append(line)
    except OSError as err:
        log.warning("hook log %s: %s", path, err)
    if note.startswith("error"):
        log.warning("hook %s: %s", event, note)


# --- session state ------------------------------------------------------------------------


@contextlib.contextmanager
def _state(project: LoadedProject, session: str) -> Iterator[dict[str, Any]]:
    """Read, let the caller change, and atomically write back one session's state, locked."""
    path = _hooks_dir(project) / "sessions" / f"{session}.json"
    make_dirs(path.parent)
    # Neither file through a planted link, nor blocking on a FIFO in the state's place.
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    lock_fd = os.open(path.with_suffix(".lock"), flags, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX)
        try:
            state = orjson.loads(read_regular(path, limit=MAX_PAYLOAD_BYTES))
        except (OSError, orjson.JSONDecodeError):
            state = {}
        if not isinstance(state, dict):
            state = {}
        before = dict(state)
        yield state
        if state != before:
            atomic_write(path, orjson.dumps(state, option=orjson.OPT_INDENT_2))
    finally:
        os.close(lock_fd)


def _int(value: object) -> int:
    """A count from the state file; anything that is not a count is 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


# --- session-start ------------------------------------------------------------------------


def _session_start(project: LoadedProject, payload: Mapping[str, Any], session: str) -> HookResult:
    from reflexkit.reports._report import head_commit  # noqa: PLC0415 -- see top

    head = head_commit(project.root)
    with _state(project, session) as state:
        if head and payload.get("source") in {None, "startup", "clear"}:
            state["base"] = head
        state.setdefault("base", head)
    parts = []
    limit = project.config.hooks.lessons
    if limit:
        from reflexkit.containers import build_application  # noqa: PLC0415 -- only this hook

        app = build_application(project)
        try:
            service = app.reflection.service()
            lessons = service.get_recent(HOOK_SUBTASK, limit=limit)
            if lessons:
                parts.append(service.format_for_prompt(lessons))
        finally:
            app.shutdown_resources()
    if project.config.reports.enabled:
        from reflexkit.reports._report import self_report_instructions  # noqa: PLC0415

        parts.append(self_report_instructions(project.config.reports.self_report_path))
    if not parts:
        return HookResult(note="no lessons yet")
    output = {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": "\n\n".join(p.strip() for p in parts),
        }
    }
    return HookResult(stdout=_hook_json(output), note=f"added {len(parts)} part(s)")


# --- post-tool-use ------------------------------------------------------------------------


_EXIT_CODE_KEYS = ("exit_code", "exitCode", "returncode", "code")


def _bash_failure(payload: Mapping[str, Any]) -> tuple[str, int | None, str] | None:
    """Return (command, exit code, output) of a failed Bash call, or None when it did not fail."""
    command = _bash_command(payload)
    if command is None:
        return None
    if payload.get("hook_event_name") == "PostToolUseFailure":
        if payload.get("is_interrupt"):
            return None
        error = str(payload.get("error") or "")
        match = _EXIT_CODE.search(error)
        return command, int(match.group(1)) if match else None, error
    response = payload.get("tool_response")
    return _failed_response(command, response) if isinstance(response, Mapping) else None


def _bash_command(payload: Mapping[str, Any]) -> str | None:
    """The command line of a Bash call; ``None`` for another tool or an empty command."""
    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, Mapping) else None
    good = payload.get("tool_name") == "Bash" and isinstance(command, str) and command.strip()
    return command if good else None


def _failed_response(
    command: str, response: Mapping[str, Any]
) -> tuple[str, int | None, str] | None:
    """A PostToolUse response as (command, exit code, output) if the command failed."""
    code = next((response[k] for k in _EXIT_CODE_KEYS if type(response.get(k)) is int), None)
    failed = code not in {None, 0} or response.get("is_error") is True
    if response.get("interrupted") is True or not failed:
        return None
    output = "\n".join(
        str(response[k]) for k in ("stdout", "stderr") if isinstance(response.get(k), str)
    )
    return command, code, output


def _post_tool_use(project: LoadedProject, payload: Mapping[str, Any], session: str) -> HookResult:
    response = payload.get("tool_response")
    interrupted = isinstance(response, Mapping) and response.get("interrupted") is True
    if payload.get("is_interrupt") is True or interrupted:  # the user stopped the agent
        from reflexkit.hooks._stop import Seen, task_of, transcript  # noqa: PLC0415 -- rare

        task = task_of(payload, transcript(payload) if "prompt_id" not in payload else Seen())
        with _state(project, session) as state:
            state["aborted"] = task or state.get("task", "")
        return HookResult(note="the user interrupted: the next stop of this request is skipped")
    failure = _bash_failure(payload)
    if failure is None:
        return HookResult(note="not a failed Bash command")
    tool_use = payload.get("tool_use_id")
    attempt = _count_failure(project, session, tool_use if isinstance(tool_use, str) else None)
    if attempt is None:
        return HookResult(note=f"skipped: {tool_use} was already reflected on")
    command, code, output = failure
    description = (payload.get("tool_input") or {}).get("description")
    context = FailureContext(
        task_id=HOOK_SUBTASK,
        subtask_id=HOOK_SUBTASK,
        attempt_number=attempt,
        error_output=output or f"`{command}` failed with no output",
        session_id=session,
        description=description if isinstance(description, str) else "",
        failure_type=None if code is not None else FailureType.TOOL_ERROR,
        command=command,
        exit_code=code,
    )
    return _reflect(project, context)


def _count_failure(project: LoadedProject, session: str, tool_use: str | None) -> int | None:
    """Count one failed command of the session: its number, ``None`` for a re-delivered one."""
    with _state(project, session) as state:
        seen = [t for t in state.get("toolUses", []) if isinstance(t, str)]
        if tool_use in seen:
            return None
        if tool_use is not None:
            state["toolUses"] = [*seen, tool_use][-_SEEN_TOOL_USES:]
        state["failures"] = attempt = _int(state.get("failures")) + 1
    return attempt


def _reflect(project: LoadedProject, context: FailureContext) -> HookResult:
    """Reflect on a failed command through the service the containers build, and save it."""
    from reflexkit.containers import build_application  # noqa: PLC0415 -- only this hook

    app = build_application(project)
    try:
        service = app.reflection.service()
        reflection = service.generate(context)
        saved = service.save(reflection)
    finally:
        app.shutdown_resources()
    if not saved:
        return HookResult(note="error: the reflection could not be saved")
    return HookResult(note=f"reflection {reflection.id} ({reflection.source.value}) saved")


def _stop(project: LoadedProject, payload: Mapping[str, Any], session: str) -> HookResult:
    from reflexkit.hooks._stop import stop  # noqa: PLC0415 -- the tool hooks never load it

    return stop(project, payload, session)


_HANDLERS = {
    "session-start": _session_start,
    "post-tool-use": _post_tool_use,
    "stop": _stop,
}

EVENTS: tuple[str, ...] = tuple(_HANDLERS)
"""The hooks :func:`run_hook` handles."""
