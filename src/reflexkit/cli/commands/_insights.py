"""The insights commands: ``reflexkit insights``, ``resume`` and ``lessons`` (#17).

Errors go through the main group's handler (one line on stderr, exit 2 for bad input, 1 for
failed work).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from reflexkit import _serde
from reflexkit.cli._core import EXIT_FAILED, _app, _fail, _state
from reflexkit.cli._output import say, say_json, say_table, show
from reflexkit.events import EventKind
from reflexkit.insights._analysis import AnalysisOutcome
from reflexkit.insights._events import InsightEvent
from reflexkit.insights._history import RunLogReader
from reflexkit.insights._lessons import harvest
from reflexkit.insights._models import Finding, PausedEntry
from reflexkit.insights._watch import FolderWaker, InsightWatch, StopSignals, analysis_input
from reflexkit.models import utcnow
from reflexkit.tasks._config import LoadedProject

if TYPE_CHECKING:
    from reflexkit.containers import Application

__all__ = ["insights", "lessons", "resume"]


def _dump(data: object) -> None:
    say_json(data)


def _table(
    title: str,
    source: Path,
    columns: tuple[str, ...],
    rows: Sequence[tuple[str, ...]],
) -> None:
    """A table on a terminal; one tab-separated line per row for pipes and scripts."""
    if rows:
        say_table(title, columns, rows, caption=source, pipe_as_tabs=True)


def _print_insights(
    project: LoadedProject, findings: list[Finding], paused: list[PausedEntry], skipped: int
) -> None:
    if not findings and not paused:
        say(f"no findings yet ({project.insights_path})")
    rows = [
        (
            f.created_at.strftime("%Y-%m-%d %H:%M"),
            f.rule.value,
            f"{f.subject_type.value} " + "/".join(p for p in (f.task_id, f.subject_id) if p),
            f.detail,
            f.action_taken,
        )
        for f in findings
    ]
    _table(
        "reflexkit insights",
        project.insights_path,
        ("when", "rule", "subject", "detail", "action"),
        rows,
    )
    for entry in paused:
        say(f"paused: {entry.task_id}/{entry.subtask_id}: {entry.reason}", one_line=True)
    if skipped:
        say(f"skipped {skipped} unreadable line(s) of {project.insights_path}")


def _analysis_json(outcome: AnalysisOutcome) -> dict[str, object]:
    # Spelled out: the converter writes tuples of models as lists without converting items.
    reply = outcome.reply
    return {
        "called": outcome.called,
        "source": outcome.source,
        "fallbackReason": outcome.fallback_reason,
        "summary": reply.summary,
        "taskActions": [_serde.unstructure(a) for a in reply.task_actions],
        "lessonActions": [_serde.unstructure(a) for a in reply.lesson_actions],
        "applied": _serde.unstructure(outcome.applied) if outcome.applied else None,
        "logged": [_serde.unstructure(f) for f in outcome.logged],
    }


def _print_analysis(outcome: AnalysisOutcome) -> None:
    if not outcome.called:
        say("analysis: no recent findings, nothing to analyse (no LLM call)")
        return
    say(f"analysis ({outcome.source}): {outcome.reply.summary}", one_line=True)
    if outcome.fallback_reason:
        say(f"  the LLM analysis failed ({outcome.fallback_reason}); the findings stand")
    for finding in outcome.logged:
        say(f"  {finding.subject_type.value} {finding.subject_id}: {finding.detail}", one_line=True)


@click.command()
@click.option(
    "--analyze",
    is_flag=True,
    help="Ask Claude once for actions on the recent findings (none: no call); apply at most one.",
)
@click.option(
    "--watch",
    is_flag=True,
    help="Stay and react to the run logs: the rules on each failed attempt, the analysis "
    "every --every completed attempts; one line per event. Ends on Ctrl-C or SIGTERM.",
)
@click.option(
    "--every",
    type=click.IntRange(min=1),
    default=None,
    help="With --watch: analyse every this many completed attempts (insights.batchThreshold).",
)
@click.pass_context
def insights(ctx: click.Context, analyze: bool, watch: bool, every: int | None) -> None:
    """List the findings of the insight rules and the paused subtasks."""
    as_json = _state(ctx).json
    if every is not None and not watch:
        raise click.UsageError("--every goes with --watch")
    app = _app(ctx)
    if watch:
        _watch(app, every=every, as_json=as_json)
        return
    project = app.project()
    log = app.insights.findings()
    findings = log.read()
    paused = app.insights.paused().paused()
    outcome = None
    if analyze:
        history = RunLogReader(project.runs_dir).history()
        recent, failures, tasks = analysis_input(
            history,
            log,
            app.insights.paused(),
            lookback_hours=project.config.insights.lookback_hours,
            now=utcnow(),
        )
        outcome = app.insights.analysis().run(recent, failures, tasks=tasks)
    if as_json:
        data: dict[str, object] = {
            "findings": [_serde.unstructure(f) for f in findings],
            "paused": [_serde.unstructure(p) for p in paused],
            "skippedLines": log.skipped,
        }
        if outcome is not None:
            data["analysis"] = _analysis_json(outcome)
        _dump(data)
        return
    _print_insights(project, findings, paused, log.skipped)
    if outcome is not None:
        _print_analysis(outcome)


def _watch(app: Application, *, every: int | None, as_json: bool) -> None:
    """``insights --watch``: react to the run logs until SIGINT or SIGTERM (exit 0)."""
    project = app.project()
    config = project.config.insights
    if not config.enabled:
        _fail(["insights.enabled is false: nothing to watch"], EXIT_FAILED)

    def emit(event: InsightEvent) -> None:
        kind, subtask, data = event
        if as_json:
            line = {"kind": kind.value, "subtaskId": subtask, "data": data}
            say_json(line, indent=False)
            return
        if kind is EventKind.FINDING:
            subject = "/".join(str(p) for p in (data.get("taskId"), data.get("subjectId")) if p)
            text = f"{data.get('rule')}: {data.get('subjectType')} {subject}: {data.get('detail')}"
        else:
            text = ", ".join(f"{k}={v}" for k, v in data.items() if v not in {"", None})
        say(f"{kind.value} {text}", one_line=True)

    watch = InsightWatch(
        rules=app.insights.rules(),
        analysis=app.insights.analysis,
        findings=app.insights.findings(),
        paused=app.insights.paused(),
        every=every or config.batch_threshold,
        lookback_hours=config.lookback_hours,
        emit=emit,
        clock=app.insights.clock(),
    )
    with StopSignals() as stop:
        waker = FolderWaker(project.runs_dir, stop)
        how = "inotify" if waker.blocking else "a look now and then"
        say(f"reflexkit: watching {project.runs_dir} ({how}); Ctrl-C ends", err=True, one_line=True)
        try:
            for _ in watch.run(waker):
                pass
        finally:
            waker.close()
    say("reflexkit: stopped watching", err=True)


@click.command()
@click.argument("subtask_id")
@click.option("--task", "task_id", default=None, help="Only the subtask of this task.")
@click.pass_context
def resume(ctx: click.Context, subtask_id: str, task_id: str | None) -> None:
    """Resume a subtask the insight rules paused, so the next run attempts it again."""
    app = _app(ctx)
    resumed = app.insights.paused().resume(subtask_id, task_id=task_id, reason="reflexkit resume")
    if not resumed:
        where = f" of task {task_id}" if task_id else ""
        _fail([f"{subtask_id}{where} is not paused"], EXIT_FAILED)
    for name in resumed:
        say(f"resumed {name}", one_line=True)


@click.group(invoke_without_command=True)
@click.pass_context
def lessons(ctx: click.Context) -> None:
    """List the project's lessons: fixes that worked, offered to other subtasks."""
    if ctx.invoked_subcommand is not None:
        return
    app = _app(ctx)
    book = app.insights.lessons()
    kept = list(book)
    untrusted = getattr(book, "untrusted", 0)
    if untrusted:  # an older reflexkit's lessons, or lines it did not write: say so, once
        say(
            f"reflexkit: {untrusted} lines of {show(str(app.project().lessons_path))} are not "
            "signed by this reflexkit (an older version or another machine wrote them, or "
            "something else did) and are not used; `reflexkit lessons harvest` learns the "
            "lessons again from memory and the run history",
            err=True,
        )
    if _state(ctx).json:
        _dump([_serde.unstructure(lesson) for lesson in kept])
        return
    if not kept:
        state = "no lessons in use" if untrusted else "no lessons yet"
        say(f"{state} ({app.project().lessons_path})")
        return
    rows = [
        (
            lesson.id,
            lesson.tool,
            lesson.failure_type.value,
            lesson.fingerprint,
            "/".join(p for p in (lesson.task_id, lesson.subtask_id) if p),
            lesson.suggestion,
        )
        for lesson in kept
    ]
    columns = ("id", "tool", "failure type", "fingerprint", "learnt on", "suggestion")
    _table("reflexkit lessons", app.project().lessons_path, columns, rows)


@lessons.command("remove")
@click.argument("lesson_id")
@click.pass_context
def lessons_remove(ctx: click.Context, lesson_id: str) -> None:
    """Forget one lesson, by its id."""
    if not _app(ctx).insights.lessons().remove(lesson_id):
        _fail([f"no lesson {lesson_id}"], EXIT_FAILED)
    say(f"removed {lesson_id}", one_line=True)


@lessons.command("harvest")
@click.pass_context
def lessons_harvest(ctx: click.Context) -> None:
    """Learn the lessons of past runs: reflections that preceded a pass (reads all memory)."""
    app = _app(ctx)
    history = RunLogReader(app.project().runs_dir).history()
    learnt = harvest(history, app.memory.store(), app.insights.lessons())
    say(f"learnt {len(learnt)} lesson(s)")
