"""``reflexkit calibrate``: self-reported confidence against outcomes, from attempt reports."""

from __future__ import annotations

from pathlib import Path

import click
import orjson

from reflexkit import _serde
from reflexkit.cli._core import _state
from reflexkit.reports.calibration import Outcome, calibrate
from reflexkit.reports.report import read_reports

__all__ = ["calibrate_command"]


@click.command("calibrate")
@click.option(
    "--outcome",
    type=click.Choice([o.value for o in Outcome]),
    default=Outcome.VERIFICATION.value,
    show_default=True,
    help="What counts as a good attempt: its checks passed (and the judge agreed); it passed "
    "and was not redone later; or its subtask ended passing in the run.",
)
@click.option(
    "--reports",
    "reports_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The reports folder (default: reports.path of project.json).",
)
@click.option(
    "--rounds",
    type=click.IntRange(min=1),
    default=2_000,
    show_default=True,
    help="Bootstrap resamples.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as camelCase JSON.")
@click.pass_context
def calibrate_command(
    ctx: click.Context, outcome: str, reports_dir: Path | None, rounds: int, as_json: bool
) -> None:
    """Compute the AUC of the agents' self-reported confidence against outcomes.

    Reads every reflexkit.report.v1 report and prints n, the AUC (0.5 is chance) and its
    95% bootstrap interval, and the share of good attempts per confidence tenth.
    """
    project = _state(ctx).project()  # a bad project.json: one line per error, exit 2
    folder = reports_dir or project.root / project.config.reports.path
    result = calibrate(read_reports(folder), outcome=Outcome(outcome), rounds=rounds)
    if as_json:
        data = _serde.unstructure(result)
        data["bins"] = [{"range": r, "n": n, "good": g} for r, n, g in result.bins]
        click.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode())
        return
    click.echo(f"reports in {folder}; outcome: {result.outcome.value}")
    click.echo(
        f"n = {result.n} ({result.good} good, {result.bad} bad); skipped "
        f"{result.skipped_no_confidence} without confidence, {result.skipped_unknown} with no "
        "known outcome"
    )
    if result.auc is None:
        click.echo("AUC: not defined (it needs both good and bad attempts)")
    else:
        click.echo(
            f"AUC = {result.auc:.3f}, {result.level:.0%} interval "
            f"[{result.low:.3f}, {result.high:.3f}] (0.5 is chance)"
        )
    for label, n, good in result.bins:
        click.echo(f"  confidence {label}: {n} attempts, {good:.0%} good")
