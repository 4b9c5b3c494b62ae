"""``reflexkit show [RUN]``: a run, attempt by attempt: its prompts and its outcomes (#27).

Read from the run log (``.reflexkit/runs/<id>.jsonl``) and the prompts kept beside it
(``.reflexkit/runs/<id>/prompts/``). Everything printed passes the terminal gate; the prompt
files are read by the safe reader (a regular file, no link, bounded): an agent could have
written anything there.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import orjson

from reflexkit._files import read_regular
from reflexkit._lines import open_lines, scan
from reflexkit.cli._console import _describe
from reflexkit.cli._core import EXIT_BAD_INPUT, _fail, _state
from reflexkit.cli._output import say, say_json, show
from reflexkit.events import Event, EventKind

__all__ = ["show_command"]

_MAX_PROMPT_BYTES = 1 << 20
"""A kept prompt is at most 200,000 characters; a bigger file there is not one of ours."""

_ATTEMPT_ENDS = {
    EventKind.PASSED: "passed",
    EventKind.VERIFICATION_FAILED: "failed",
    EventKind.SETUP_FAILED: "setup_error",
    EventKind.INTERRUPTED: "interrupted",
    EventKind.NEEDS_INPUT: "needs_input",
}
_SUBTASK_ENDS = {
    EventKind.STUCK,
    EventKind.EXHAUSTED,
    EventKind.BUDGET_SPENT,
    EventKind.SKIPPED,
    EventKind.PAUSED,
}


def _run_logs(runs: Path) -> list[Path]:
    """The run logs in *runs*, oldest first: regular files only, never followed.

    An agent can put anything there: a dangling link, a link to ``/dev/zero``, a FIFO, a
    folder named ``x.jsonl``. Those are skipped, so the runs beside them still show.
    """
    found: list[tuple[float, Path]] = []
    for path in runs.glob("*.jsonl") if runs.is_dir() else ():
        try:
            info = path.lstat()
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            found.append((info.st_mtime, path))
    return [path for _, path in sorted(found)]


def _find_log(runs: Path, run: str | None) -> Path:
    """The run log *run* names: an id, a unique prefix of one, a path; the latest by default."""
    if run is not None and run.endswith(".jsonl") and Path(run).is_file():
        return Path(run)
    logs = _run_logs(runs)
    if not logs:
        _fail([f"no run logs in {runs}: nothing has run here yet"], EXIT_BAD_INPUT)
    if run is None:
        return logs[-1]
    matches = [p for p in logs if p.stem == run] or [p for p in logs if p.stem.startswith(run)]
    if len(matches) != 1:
        what = "no run" if not matches else f"{len(matches)} runs"
        _fail([f"{what} in {runs} with an id starting {run!r}"], EXIT_BAD_INPUT)
    return matches[0]


def _events(path: Path) -> list[Event]:
    """The run log's events; a line that is not one is skipped."""
    fd = open_lines(path)
    events = []
    try:
        for _offset, _end, line in scan(fd):
            if not line:
                continue
            try:
                raw = orjson.loads(line)
                data = raw.get("data") if isinstance(raw.get("data"), dict) else {}
                attempt = raw.get("attempt")
                events.append(
                    Event(
                        kind=EventKind(raw["kind"]),
                        subtask_id=str(raw.get("subtaskId") or ""),
                        attempt=attempt if type(attempt) is int else 0,
                        data=data,
                    )
                )
            except (orjson.JSONDecodeError, ValueError, TypeError, KeyError, AttributeError):
                continue  # not an event: a torn line, another program's
    finally:
        os.close(fd)
    return events


def _prompt(root: Path, relative: object) -> str | None:
    """A kept prompt's text, read safely; ``None`` when there is none to read."""
    if not isinstance(relative, str) or not relative.startswith(".reflexkit/"):
        return None
    own = root / ".reflexkit"  # the run log names it; it may lead out (``..``, a link)
    try:
        raw = read_regular(
            relative.removeprefix(".reflexkit/"), limit=_MAX_PROMPT_BYTES, within=own
        )
        return raw.decode("utf-8", "replace")
    except OSError:
        return None


def _attempts(events: list[Event], root: Path) -> list[dict[str, Any]]:
    """Per attempt: its prompt, how it ended, and what the run said of it, in order."""
    attempts: dict[tuple[str, int], dict[str, Any]] = {}
    endings: list[dict[str, Any]] = []
    for event in events:
        key = (event.subtask_id, event.attempt)
        if event.kind is EventKind.ATTEMPT_STARTED:
            path = event.data.get("promptPath")
            attempts[key] = {
                "subtaskId": event.subtask_id,
                "attempt": event.attempt,
                "promptPath": path,
                "prompt": _prompt(root, path),
                "outcome": "unfinished",
                "said": [],
            }
        elif key in attempts and event.kind not in _SUBTASK_ENDS:
            if event.kind in _ATTEMPT_ENDS:
                attempts[key]["outcome"] = _ATTEMPT_ENDS[event.kind]
            line = _describe(event)
            if line:  # without the "[subtask] attempt N: " the attempt's heading says
                attempts[key]["said"].append(line.split(": ", 1)[-1])
        if event.kind in _SUBTASK_ENDS:
            endings.append(
                {
                    "subtaskId": event.subtask_id,
                    "outcome": event.kind.value,
                    "reason": event.data.get("reason"),
                }
            )
    return [*attempts.values(), *endings]


@click.command("show")
@click.argument("run", required=False)
@click.option(
    "--prompts/--no-prompts", default=True, help="Print each attempt's prompt (default: yes)."
)
@click.pass_context
def show_command(ctx: click.Context, run: str | None, prompts: bool) -> None:
    """Show a run, attempt by attempt: prompts and outcomes (default: the latest run).

    RUN is a run id, a unique start of one (as `run` prints it), or a run log's path.
    """
    project = _state(ctx).project()
    log = _find_log(project.root / ".reflexkit" / "runs", run)
    events = _events(log)
    task, passed = _run_facts(events)
    items = _attempts(events, project.root)
    if _state(ctx).json:
        data = {
            "runId": log.stem,
            "taskId": task,
            "passed": passed,
            "runLog": str(log),
            "attempts": [i for i in items if "attempt" in i],
            "endings": [i for i in items if "attempt" not in i],
        }
        say_json(data)
        return
    verdict = "did not finish" if passed is None else _VERDICTS[passed]
    say(f"run {log.stem} of task {task or '?'}: {verdict}", one_line=True)
    say(f"run log: {log}", one_line=True)
    for item in items:
        say("")
        for line in _item_lines(item, prompts=prompts):
            say(line)


_VERDICTS = {True: "passed", False: "did not pass"}


def _run_facts(events: list[Event]) -> tuple[object, bool | None]:
    """The run's task id and whether it passed, ``None`` for what the log doesn't say."""
    started = next((e for e in events if e.kind is EventKind.RUN_STARTED), None)
    finished = next((e for e in events if e.kind is EventKind.RUN_FINISHED), None)
    passed = finished.data.get("allPassed") if finished else None
    return started.data.get("taskId") if started else None, passed if type(passed) is bool else None


def _item_lines(item: dict[str, Any], *, prompts: bool) -> Iterator[str]:
    """The lines that show one attempt (or one subtask's ending), terminal-safe."""
    if "attempt" not in item:
        yield show(f"[{item['subtaskId']}] {item['outcome']}: {item['reason']}")
        return
    yield show(f"[{item['subtaskId']}] attempt {item['attempt']}: {item['outcome']}")
    yield from (f"  {line}" for line in item["said"])
    if not prompts:
        return
    if item["prompt"] is None:
        yield "  " + show(f"prompt: not kept ({item['promptPath'] or 'an older run'})")
        return
    yield "  " + show(f"prompt ({item['promptPath']}):")
    yield from ("    " + show(line) if line.strip() else "" for line in item["prompt"].splitlines())
