"""The ``Stop`` hook: the transcript's tail, the judge, the verdict file and the report.

Apart from :mod:`reflexkit.hooks._handlers` so that the tool hooks, which Claude Code starts
on every tool call, never load it. docs/hooks.md describes its rules.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import orjson

from reflexkit import _serde
from reflexkit._files import atomic_write, read_regular
from reflexkit.exceptions import GenerationError, StoreError
from reflexkit.hooks._handlers import (
    HOOK_SUBTASK,
    MAX_PAYLOAD_BYTES,
    HookResult,
    _hook_json,
    _hooks_dir,
    _int,
    _state,
    log,
)
from reflexkit.models import utcnow
from reflexkit.redaction._gate import outbound_data
from reflexkit.tasks._config import LoadedProject

if TYPE_CHECKING:
    from reflexkit.reports._ending import AttemptEnding
    from reflexkit.reports._judge import CompletionJudge, JudgeInput, Judgement

__all__ = ["Seen", "stop", "task_of", "transcript"]

_TRANSCRIPT_TAIL_BYTES = 512 * 1024
_OWN_FEEDBACK = re.compile(r"Stop hook feedback|The completion judge \(\w+\) found")

_MAX_ID_CHARS = 100
_INTERRUPTED = re.compile(r"^\s*\[Request interrupted by user")
_DONE_TASKS = frozenset({"completed", "failed", "killed", "stopped", "done", "error"})


@attrs.frozen(kw_only=True)
class Seen:
    """What the transcript's tail tells of the session.

    Attributes:
        request: The last request of the user (not our feedback, not an interrupt).
        request_id: Its transcript entry's ``uuid``.
        answer: The last assistant text.
        interrupted: The user interrupted the agent after that request.
        pending: Tool calls of the agent with no result yet.
    """

    request: str = ""
    request_id: str = ""
    answer: str = ""
    interrupted: bool = False
    pending: tuple[str, ...] = ()


def transcript(payload: Mapping[str, Any]) -> Seen:
    """Read the transcript's tail: the request, the last answer, interrupts, pending tools."""
    path = payload.get("transcript_path")
    if not isinstance(path, str) or not path:
        return Seen()
    try:  # the payload names it: the safe reader (no FIFO, device or link; the tail only)
        tail = read_regular(path, limit=_TRANSCRIPT_TAIL_BYTES, keep="tail")
    except (OSError, ValueError) as err:  # ValueError: a NUL in the name
        log.warning("can't read the transcript %r: %s", path, err)
        return Seen()
    seen: dict[str, Any] = {"interrupted": False}
    calls: dict[str, str] = {}
    for line in tail.splitlines():
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        if isinstance(message, dict):
            _read_entry(entry, message, seen, calls)
    return Seen(
        request=seen.get("request", ""),
        request_id=seen.get("request_id", ""),
        answer=seen.get("answer", ""),
        interrupted=seen["interrupted"],
        pending=tuple(calls.values()),
    )


def _read_entry(
    entry: Mapping[str, Any],
    message: Mapping[str, Any],
    seen: dict[str, Any],
    calls: dict[str, str],
) -> None:
    """Fold one transcript entry into *seen* (and the tool calls still open into *calls*)."""
    content = message.get("content")
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    text = _text_of(content)
    if entry.get("type") == "assistant":
        calls.update(
            (block["id"], _call_name(block))
            for block in blocks
            if block.get("type") == "tool_use" and isinstance(block.get("id"), str)
        )
        if text:
            seen["answer"] = text
    elif entry.get("type") == "user":
        for block in blocks:
            if block.get("type") == "tool_result":
                calls.pop(str(block.get("tool_use_id")), None)
        _read_user_text(entry, text, seen)


def _read_user_text(entry: Mapping[str, Any], text: str, seen: dict[str, Any]) -> None:
    """A user entry's text: an interrupt, or a new request (not our own block's feedback)."""
    if _INTERRUPTED.match(text):
        seen["interrupted"] = True
    elif text and not entry.get("isMeta") and not _OWN_FEEDBACK.search(text):
        uuid = entry.get("uuid")
        seen.update(request=text, interrupted=False)
        seen["request_id"] = uuid if isinstance(uuid, str) else ""


def _call_name(block: Mapping[str, Any]) -> str:
    tool_input = block.get("input")
    command = tool_input.get("command") if isinstance(tool_input, Mapping) else None
    return str(command if isinstance(command, str) and command else block.get("name") or "tool")


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            block["text"]
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
            if isinstance(block.get("text"), str)
        )
    return ""


def _running(payload: Mapping[str, Any], seen: Seen) -> list[str]:
    """What the agent started that still runs: background tasks, tool calls with no result."""
    tasks = payload.get("background_tasks")
    running = [
        str(t.get("command") or t.get("description") or t.get("type") or "a background task")
        for t in (tasks if isinstance(tasks, list) else [])
        if isinstance(t, dict) and str(t.get("status", "running")).lower() not in _DONE_TASKS
    ]
    return running + list(seen.pending)


def task_of(payload: Mapping[str, Any], seen: Seen) -> str:
    """The user request a stop belongs to: Claude Code's ``prompt_id``, else the request's.

    ``""`` when neither says: the session's current task goes on.
    """
    prompt = payload.get("prompt_id")
    if isinstance(prompt, str) and prompt.strip():
        prompt = prompt.strip()
        if len(prompt) > _MAX_ID_CHARS or not prompt.isprintable():  # a UUID, or a hash of it
            prompt = hashlib.sha256(prompt.encode("utf-8", "surrogateescape")).hexdigest()[:32]
        return f"prompt:{prompt}"
    if seen.request_id:
        return f"entry:{seen.request_id}"
    if seen.request:
        return "request:" + hashlib.sha256(seen.request.encode()).hexdigest()[:16]
    return ""


@attrs.frozen(kw_only=True)
class _StopState:
    """The session's state as one stop sees it (read and updated under the state lock)."""

    attempt: int
    base: str
    blocks: int
    aborted: bool
    memo: str


def _begin_stop(project: LoadedProject, session: str, task: str, seen: Seen) -> _StopState:
    """Count the stop; a new request starts a new count of blocks; note an interrupt."""
    with _state(project, session) as state:
        state["stops"] = attempt = _int(state.get("stops")) + 1
        if task and state.get("task") != task:  # a new request of the user: a new count
            state.update(task=task, stopBlocks=0, judged="")
        current = state.get("task", "")
        aborted = "aborted" in state and state.get("aborted") == current
        state.pop("aborted", None)  # the stop after an interrupt is skipped, once
        if seen.interrupted:
            aborted = True
        base = state.get("base") if isinstance(state.get("base"), str) else None
        judged = state.get("judged")
        memo = judged if isinstance(judged, str) else ""
        return _StopState(
            attempt=attempt,
            base=base or "HEAD",
            blocks=_int(state.get("stopBlocks")),
            aborted=aborted,
            memo=memo,
        )


def _state_key(project: LoadedProject, task: str, attempt: JudgeInput) -> str:
    """The hash of what a judge sees (and which judge): an unchanged state is judged once."""
    digest = hashlib.sha256()
    judge = project.config.verification.judge.value
    for part in (judge, project.config.reflexion.model, task, attempt.subtask, attempt.diff):
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    digest.update(attempt.last_message.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def _verdict_path(project: LoadedProject, session: str) -> Path:
    return _hooks_dir(project) / "sessions" / f"{session}.verdict.json"


def _remembered(project: LoadedProject, session: str, key: str) -> Judgement | None:
    """The judgement of this very state, from the session's verdict file; else ``None``.

    Only a verdict file the hook signed counts: the agent can write the project's files,
    and a verdict it wrote itself ("complete") must not stand in for the judge's.
    """
    from reflexkit._keys import lessons_key, verified  # noqa: PLC0415 -- only the stop hook
    from reflexkit.reports._judge import Judgement, parse_verdict  # noqa: PLC0415 -- see top

    try:
        data = orjson.loads(read_regular(_verdict_path(project, session), limit=MAX_PAYLOAD_BYTES))
        if not isinstance(data, dict) or data.get("stateKey") != key:
            return None
        if not verified(data, lessons_key()):
            log.warning("the verdict file of %s is not signed by reflexkit; judging again", session)
            return None
        verdict = parse_verdict(data.get("verdict"), source="the verdict file")
    except (OSError, orjson.JSONDecodeError, GenerationError, StoreError):
        return None
    source = data.get("source")
    return Judgement(verdict=verdict, source=source if source in _SOURCES else "heuristic")


_SOURCES = frozenset({"llm", "heuristic", "fixture"})


@attrs.frozen(kw_only=True)
class _Stop:
    """One stop of a session: what the report and the verdict file of it record.

    Attributes:
        project: The project the session works in.
        session: The sanitised session id.
        task: The user request the stop belongs to (see :func:`task_of`).
        state: The session's state as the stop found it.
        ending: How the agent's last message ended.
        judgement: The judge's, when it judged (or remembered) this state.
        key: The hash of the state it judged (see :func:`_state_key`).
    """

    project: LoadedProject
    session: str
    task: str
    state: _StopState
    ending: AttemptEnding
    judgement: Judgement | None = None
    key: str = ""


def _write_verdict(stop: _Stop, decision: str) -> None:
    """Write ``<session>.verdict.json``: the whole verdict, for other tools; atomically.

    Readers see the old file or the new one, never a torn one (a temporary file renamed).
    """
    if stop.judgement is None or stop.judgement.verdict is None:
        return
    data = {
        "sessionId": stop.session,
        "task": stop.task,
        "stop": stop.state.attempt,
        "ending": stop.ending.kind.value,
        "at": utcnow().isoformat(),
        "decision": decision,
        "source": stop.judgement.source,
        "stateKey": stop.key,
        "verdict": _serde.unstructure(stop.judgement.verdict),
    }
    from reflexkit._keys import lessons_key, signed  # noqa: PLC0415 -- only the stop hook

    gated = outbound_data(data, "verdict")
    try:  # signed with the key outside the project, so the memo trusts only the hook's own
        gated = signed(gated, lessons_key())
    except StoreError as err:
        log.warning("can't sign the verdict file (%s); the next stop judges again", err)
    try:
        atomic_write(
            _verdict_path(stop.project, stop.session),
            orjson.dumps(gated, option=orjson.OPT_INDENT_2),
        )
    except OSError as err:
        log.warning("can't write the verdict file of %s: %s", stop.session, err)


def stop(project: LoadedProject, payload: Mapping[str, Any], session: str) -> HookResult:
    from reflexkit.reports._ending import classify_ending  # noqa: PLC0415 -- see top

    seen = transcript(payload)
    last = payload.get("last_assistant_message")
    last_message = last if isinstance(last, str) and last.strip() else seen.answer
    task = task_of(payload, seen)
    stop = _Stop(
        project=project,
        session=session,
        task=task,
        state=_begin_stop(project, session, task, seen),
        ending=classify_ending(last_message, running=_running(payload, seen)),
    )
    notes = [f"stop {stop.state.attempt}, ending {stop.ending.kind.value}"]
    stop = _judged(stop, seen, last_message, notes)
    _report(stop, notes)
    if stop.judgement is None or stop.judgement.verdict is None:
        return HookResult(note="; ".join(notes))
    judgement = stop.judgement
    decision = (
        "block" if judgement.rejects else "awaiting_user_input" if judgement.awaits_user else "stop"
    )
    with _state(project, session) as state:
        state["judged"] = stop.key
        if decision == "block":
            state["stopBlocks"] = _int(state.get("stopBlocks")) + 1
    _write_verdict(stop, decision)
    if decision == "awaiting_user_input":
        notes.append("awaiting user input: incomplete, but nothing missing (severity NONE)")
    if decision != "block":
        return HookResult(note="; ".join(notes))
    output = {"decision": "block", "reason": judgement.retry_feedback()}
    notes.append("blocked the stop")
    return HookResult(stdout=_hook_json(output), note="; ".join(notes))


def _not_judged(stop: _Stop) -> str | None:
    """Why this stop is not for the judge; ``None`` when it is."""
    from reflexkit.reports._ending import Ending  # noqa: PLC0415 -- see top

    blocks, most = stop.state.blocks, stop.project.config.hooks.max_stop_blocks
    if stop.state.aborted:
        return "the user interrupted this request"
    if stop.ending.kind in {Ending.WAITING_FOR_USER, Ending.WORKING}:
        return stop.ending.reason
    if blocks >= most:
        return f"{blocks} blocks of this request (hooks.maxStopBlocks)"
    return None


def _judged(stop: _Stop, seen: Seen, last_message: str, notes: list[str]) -> _Stop:
    """*stop* with the judge's judgement of it, when a judge is on and the stop is for it."""
    from reflexkit.containers import build_application  # noqa: PLC0415 -- only this hook
    from reflexkit.reports._judge import JudgeInput, read_instructions  # noqa: PLC0415
    from reflexkit.reports._report import diff_text  # noqa: PLC0415

    app = build_application(stop.project)  # the judge of verification.judge, or None for off
    try:
        judge: CompletionJudge | None = app.orchestration.judge()
        skipped = _not_judged(stop) if judge is not None else None
        if judge is None or skipped is not None:
            notes.extend([f"judge skipped: {skipped}"] if skipped else [])
            return stop
        attempt = JudgeInput(
            subtask=seen.request or "(the session's request is not in the transcript)",
            diff=diff_text(stop.project.root, base=stop.state.base),
            last_message=last_message,
            instructions=read_instructions(stop.project.root),
            checks_passed=None,
        )
        key = _state_key(stop.project, stop.task, attempt)
        # An unchanged state is not judged (nor paid for) again: the memo's verdict holds.
        memo = _remembered(stop.project, stop.session, key) if stop.state.memo == key else None
        judgement = memo or judge.judge(attempt)
    finally:
        app.shutdown_resources()  # closes a Claude judge's connections
    said = (
        f"error {judgement.error}"
        if judgement.verdict is None
        else f"complete={judgement.verdict.complete} {judgement.verdict.severity.value}"
    )
    again = " (memo: unchanged state, not judged again)" if memo else ""
    notes.append(f"judge {judgement.source}{again}: {said}")
    return attrs.evolve(stop, judgement=judgement, key=key)


def _report(stop: _Stop, notes: list[str]) -> None:
    """Write the attempt report of this stop (when ``reports.enabled``)."""
    from reflexkit.reports._report import (  # noqa: PLC0415 -- see top
        AttemptReporter,
        JudgeSummary,
        ReportIds,
        Verification,
        report_path,
    )

    attempt, verdict = stop.state.attempt, stop.judgement and stop.judgement.verdict
    ids = ReportIds(
        run_id=stop.session,
        subtask_id=HOOK_SUBTASK,
        attempt=attempt,
        task_id=HOOK_SUBTASK,
        session_id=stop.session,
        agent="claude-code",
    )
    summary = (
        JudgeSummary(
            complete=verdict.complete, severity=verdict.severity.value, source=stop.judgement.source
        )
        if verdict and stop.judgement
        else None
    )
    reporter = AttemptReporter(stop.project, source="stop-hook")
    verification = Verification(judge=summary, ending=stop.ending.kind.value)
    if reporter.finish(ids, base=stop.state.base, verification=verification) is not None:
        path = report_path(reporter.reports_dir, stop.session, HOOK_SUBTASK, attempt)
        notes.append(f"report {path}")
