"""``reflexkit git-history`` (P2) and ``reflexkit outcomes`` (P3): the history experiments.

Both run offline, print their pre-registered kill condition with a verdict, and print JSON
with ``--json``. ``reflexkit calibrate`` is the third (P1).
"""

from __future__ import annotations

from pathlib import Path

import attrs
import click

from reflexkit.cli._core import (
    EXIT_BAD_INPUT,
    _fail,
    _state,
    read_corpus,
    reports_folder,
    reports_option,
)
from reflexkit.cli._output import say, say_json
from reflexkit.redaction._gate import outbound
from reflexkit.reports._calibration import KillCondition
from reflexkit.reports._history import git_history
from reflexkit.reports._outcomes import detectability, read_board, tasks_from_reports
from reflexkit.reports._report import read_reports

__all__ = ["git_history_command", "outcomes_command"]

_MAX_BOARD_BYTES = 256 * 1024 * 1024


def _echo_json(data: object) -> None:
    say_json(data)


def _echo_kill(kill: KillCondition) -> None:
    say(f"kill condition (pre-registered): {kill.rule}")
    say(f"  {kill.verdict}")


@click.command("git-history")
@click.argument(
    "path", type=click.Path(file_okay=False, path_type=Path), default=Path(), required=False
)
@click.option("--rev", default="HEAD", show_default=True, help="The commit to read back from.")
@click.option(
    "--days",
    type=click.IntRange(min=1, max=36_500),
    default=180,
    show_default=True,
    help="The window, counted back from the newest commit (never from today).",
)
@click.option(
    "--fix-hours",
    type=click.IntRange(min=1, max=8_760),
    default=72,
    show_default=True,
    help="A fix this soon after a feature change to the same files is a quick fix.",
)
@click.pass_context
def git_history_command(
    ctx: click.Context, path: Path, rev: str, days: int, fix_hours: int
) -> None:
    """Which gate would have caught the reverts and quick fixes in a repository's history (P2).

    Reads git log offline; each revert, and each fix soon after a feature change to the same
    files, goes to the first gate that would have caught it: ci (a check), human_review (the
    risk floor flags it) or self_reflection (nothing else would). Prints the tally and the
    pre-registered kill condition: a near-empty self_reflection bucket.
    """
    risk = _state(ctx).project().config.risk
    if rev.startswith("-"):
        _fail([f"--rev {rev}: expected a commit, not an option"], EXIT_BAD_INPUT)
    try:
        result = git_history(path, rev=rev, days=days, fix_hours=fix_hours, risk=risk)
    except (OSError, ValueError) as err:
        _fail([f"{path}: {err}"], EXIT_BAD_INPUT)
    except Exception as err:  # noqa: BLE001 -- subprocess.TimeoutExpired and the like
        _fail([f"{path}: git could not read the history: {err}"], EXIT_BAD_INPUT)
    if _state(ctx).json:  # --json, before or after the command name
        _echo_json(result)
        return
    window = f"{result.since:%Y-%m-%d} .. {result.until:%Y-%m-%d}" if result.until else "no commits"
    say(
        f"repo {result.repo} ({rev} {result.rev[:12]}), {window} ({result.days} days): "
        f"{result.commits} commits, {result.feature_changes} feature changes"
    )
    reverts = sum(s.kind == "revert" for s in result.signals)
    say(
        f"signals: {len(result.signals)} ({reverts} reverts, "
        f"{len(result.signals) - reverts} quick fixes)"
    )
    for gate, count in result.tally.items():
        say(f"  {gate:<16} {count}")
    for signal in result.signals:
        say(
            f"  {signal.kind} {signal.commit[:12]} {outbound(signal.subject, 'terminal')[:60]!r}: "
            f"{signal.gate} ({outbound(signal.why, 'terminal')[:120]})"
        )
    _echo_kill(result.kill_condition)


@click.command("outcomes")
@reports_option
@click.option(
    "--board",
    default=None,
    metavar="FILE",
    help='A board export instead of reports: JSON Lines of {"id", "completedAt", "signals": '
    '[{"kind", "at"}]} ("-" reads stdin). Invalid lines are skipped and named.',
)
@click.option(
    "--window-days",
    type=click.IntRange(min=1, max=36_500),
    default=30,
    show_default=True,
    help="How long after completion an outcome signal may come.",
)
@click.pass_context
def outcomes_command(
    ctx: click.Context,
    reports_dir: Path | None,
    board: str | None,
    window_days: int,
) -> None:
    """How many finished tasks get a machine-detectable outcome within a window (P3).

    From the attempt reports (checks ran, a judge's verdict, the subtask reworked by a later
    run) or a board export. Prints the base rate, per signal, and the pre-registered kill
    condition: a base rate under 20% keeps self-reports as caveat notes only.
    """
    if board is not None and reports_dir is not None:
        _fail(["--board and --reports can't go together: count one or the other"], EXIT_BAD_INPUT)
    if board is not None:
        where, tasks, invalid, problems = read_corpus(board, read_board, limit=_MAX_BOARD_BYTES)
        result = attrs.evolve(
            detectability(tasks, window_days=window_days, source=f"board {where}"),
            skipped_invalid=invalid,
            problems=problems,
        )
    else:
        folder = reports_folder(ctx, reports_dir)
        tasks = tasks_from_reports(read_reports(folder))
        result = detectability(tasks, window_days=window_days, source=f"reports in {folder}")
    if _state(ctx).json:  # --json, before or after the command name
        _echo_json(result)
        return
    say(f"{result.source}; window {result.window_days} days")
    rate = f"{result.rate:.0%}" if result.rate is not None else "not defined"
    say(
        f"finished tasks: {result.completed}; with a machine-detectable outcome: "
        f"{result.detectable} (base rate {rate})"
        + (f"; skipped {result.skipped_invalid} invalid lines" if result.skipped_invalid else "")
    )
    for kind, count in result.by_signal.items():
        say(f"  {kind:<16} {count}")
    if result.undetectable:
        say("  no signal: " + ", ".join(outbound(i, "terminal") for i in result.undetectable))
    _echo_kill(result.kill_condition)
