"""The memory commands: ``recent``, ``prune``, ``stats`` and ``memory copy|sync``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import click

from reflexkit import _serde
from reflexkit.cli._core import (
    EXIT_BAD_INPUT,
    _app,
    _check_id,
    _fail,
    _project,
    _state,
    _store,
)
from reflexkit.cli._output import say, say_json, say_table
from reflexkit.models import utcnow
from reflexkit.reflection._retry_prompt import format_reflections
from reflexkit.tasks._config import MAX_DAYS

if TYPE_CHECKING:
    from reflexkit.memory import MemoryStats

__all__ = ["memory", "prune", "recent", "stats"]


@click.command()
@click.argument("subtask_id")
@click.option(
    "--task",
    "task_id",
    default=None,
    help="Only reflections of this task (subtask ids repeat across tasks).",
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=None,
    help="How many reflections (default: reflexion.maxReflectionsPerRetry).",
)
@click.option(
    "--format",
    "format_",
    type=click.Choice(["prompt", "json"]),
    default="prompt",
    show_default=True,
    help="The retry-prompt section, or the records as a JSON list (--json is the same as "
    "--format json).",
)
@click.pass_context
def recent(
    ctx: click.Context,
    subtask_id: str,
    task_id: str | None,
    limit: int | None,
    format_: str,
) -> None:
    """Show the most recent reflections of a subtask, oldest first.

    Ids are letters, digits, '.', '_' and '-' (at most 100). Lessons of different runs are
    never merged; those of runs before the newest one are headed "Earlier run".
    """
    _check_id(subtask_id, "SUBTASK_ID")
    _check_id(task_id, "--task")
    settings = _project(ctx).config.reflexion
    limit = limit or settings.max_reflections_per_retry
    records = _store(ctx).recent(subtask_id, limit=limit, task_id=task_id)
    if format_ == "json" or _state(ctx).json:
        say_json(records)
    else:
        # What the service's format_for_prompt renders, without building the service.
        text = format_reflections(records, max_chars=settings.max_prompt_chars)
        say(text, nl=False)  # through the gate again: a record may be older, or edited on disk


@click.command()
@click.option(
    "--older-than",
    "days",
    type=click.IntRange(min=0, max=MAX_DAYS),
    default=None,
    help="Age in days (default: reflexion.retentionDays).",
)
@click.option("--dry-run", is_flag=True, help="Count what would go; remove nothing.")
@click.pass_context
def prune(ctx: click.Context, days: int | None, dry_run: bool) -> None:
    """Remove reflections older than a number of days."""
    app = _app(ctx)
    days = days if days is not None else app.project().config.reflexion.retention_days
    cutoff = utcnow() - timedelta(days=days)
    store = app.memory.store()
    if dry_run:
        count = sum(1 for r in store if r.created_at < cutoff)
    else:
        count = store.prune(older_than=cutoff)
    if _state(ctx).json:
        data = {"removed": count, "olderThanDays": days, "dryRun": dry_run}
        say_json(data)
    elif dry_run:
        say(f"would remove {count} reflections older than {days} days")
    else:
        say(f"removed {count} reflections older than {days} days")


@click.command()
@click.pass_context
def stats(ctx: click.Context) -> None:
    """Count what memory holds: records, subtasks, categories, failure types, corrupt lines."""
    from reflexkit.events import led_to_success  # noqa: PLC0415

    app = _app(ctx)
    store = app.memory.store()
    backend = app.project().config.memory.backend.value
    where = getattr(store, "where", None)  # the database, for the postgres backend
    kind = "file" if where is None else "database"
    location = str(app.project().memory_path if where is None else where)
    figures = store.stats()
    helped_ids = led_to_success(app.project().root / ".reflexkit" / "runs")
    helped = [r for r in store if r.id in helped_ids] if helped_ids else []
    led = {
        "records": len(helped),
        "byCategory": dict(Counter(r.category.value for r in helped)),
        "bySource": dict(Counter(r.source.value for r in helped)),
    }
    if _state(ctx).json:
        data = {
            **_serde.unstructure(figures),
            "ledToSuccess": led,
            "backend": backend,
            "location": location,
        }
        say_json(data)
        return
    size = f"{'table' if where is not None else 'file'} size (bytes)"
    rows = list(_stat_rows(figures, led, size=size))
    say_table(f"reflexkit memory ({backend})", ("figure", "value"), rows, right=("value",))
    say(f"{kind}: {location}")  # whole, unwrapped


def _stat_rows(
    figures: MemoryStats, led: dict[str, Any], *, size: str
) -> Iterator[tuple[str, object]]:
    """The rows of ``stats``' table: the store's figures, then what led to success."""
    yield from (
        ("records", figures.records),
        ("subtasks", figures.subtasks),
        ("corrupt lines skipped", figures.corrupt),
    )
    if figures.size_bytes is not None:
        yield size, figures.size_bytes
    for title, counts in (
        ("category", figures.by_category),
        ("failure type", figures.by_failure_type),
        ("source", figures.by_source),
    ):
        yield from ((f"{title}: {key}", value) for key, value in sorted(counts.items()))
    yield "led to success (from run logs)", led["records"]
    for title, field in (("category", "byCategory"), ("source", "bySource")):
        counts = led[field]
        yield from ((f"  led to success, {title}: {k}", v) for k, v in sorted(counts.items()))


@click.group()
def memory() -> None:
    """Move and sync reflections between memory backends."""


@memory.command("copy")
@click.option(
    "--from", "source", type=click.Choice(["jsonl", "postgres"]), required=True, help="Copy from."
)
@click.option(
    "--to", "target", type=click.Choice(["jsonl", "postgres"]), required=True, help="Copy to."
)
@click.pass_context
def memory_copy(ctx: click.Context, source: str, target: str) -> None:
    """Copy every reflection from one backend to the other; safe to run again.

    The JSONL side is memory.path of project.json, the postgres side the database that
    $REFLEXKIT_DATABASE_URL (or memory.dsnEnv) names. A reflection already in the target
    (same id) is skipped, so a second run copies nothing.
    """
    if source == target:
        _fail([f"--from and --to are both {source}: nothing to copy"], EXIT_BAD_INPUT)
    app = _app(ctx)
    jsonl = app.memory.jsonl()
    with app.memory.postgres() as postgres:
        if target == "postgres":
            total = sum(1 for _ in jsonl)
            added = postgres.add_many(iter(jsonl))
        else:
            seen = {r.id for r in jsonl}
            total = added = 0
            for r in postgres:
                total += 1
                if r.id not in seen:
                    jsonl.append(r)
                    seen.add(r.id)
                    added += 1
    say(f"copied {added} reflections from {source} to {target} ({total - added} already there)")


@memory.command("sync")
@click.pass_context
def memory_sync(ctx: click.Context) -> None:
    """Replay the reflections spooled while the database was away (postgres backend)."""
    with _app(ctx).memory.postgres() as postgres:
        count = postgres.sync()
    say(f"replayed {count} spooled reflections into the database")
