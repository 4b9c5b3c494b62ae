"""``reflexkit calibrate``: self-reported confidence against outcomes (the P1 experiment).

From attempt reports, or from a labelled ``{confidence, correct}`` JSONL corpus; prints the
AUC over all, over the high-confidence subset, and the pre-registered kill condition.
"""

from __future__ import annotations

from pathlib import Path
from typing import Unpack

import attrs
import click

from reflexkit import _serde
from reflexkit.cli._core import (
    EXIT_BAD_INPUT,
    _fail,
    _state,
    read_corpus,
    reports_folder,
    reports_option,
)
from reflexkit.cli._output import say, say_json
from reflexkit.reports._calibration import (
    HIGH_CONFIDENCE,
    Bootstrap,
    Calibration,
    Outcome,
    calibrate,
    calibrate_pairs,
    read_labels,
)
from reflexkit.reports._report import read_reports

__all__ = ["calibrate_command"]

_MAX_LABELS_BYTES = 256 * 1024 * 1024  # about five million labelled lines


@click.command("calibrate")
@click.option(
    "--outcome",
    type=click.Choice([o.value for o in Outcome]),
    default=Outcome.VERIFICATION.value,
    show_default=True,
    help="What counts as a good attempt: its checks passed (and the judge agreed); it passed "
    "and was not redone later; or its subtask ended passing in the run.",
)
@reports_option
@click.option(
    "--labels",
    "labels",
    default=None,
    metavar="FILE",
    help='A labelled corpus instead of reports: JSON Lines of {"confidence": 0..1, '
    '"correct": true|false} ("-" reads stdin). Invalid lines are skipped and named.',
)
@click.option(
    "--high",
    "high_threshold",
    type=click.FloatRange(min=0.0, max=1.0),
    default=HIGH_CONFIDENCE,
    show_default=True,
    help="Where the high-confidence subset starts.",
)
@click.option(
    "--rounds",
    type=click.IntRange(min=1),
    default=2_000,
    show_default=True,
    help="Bootstrap resamples.",
)
@click.pass_context
def calibrate_command(
    ctx: click.Context,
    outcome: str,
    reports_dir: Path | None,
    labels: str | None,
    **bootstrap: Unpack[Bootstrap],  # --rounds and --high-threshold
) -> None:
    """Compute the AUC of the agents' self-reported confidence against outcomes.

    Reads every reflexkit.report.v1 report (or a --labels corpus) and prints n, the AUC (0.5
    is chance) with its 95% bootstrap interval, the same for the high-confidence subset with
    its lift, the share of good attempts per confidence tenth, and the pre-registered kill
    condition: an AUC near chance on the high subset means confidence carries no signal.
    """
    if labels is not None and reports_dir is not None:
        _fail(
            ["--labels and --reports can't go together: calibrate one or the other"],
            EXIT_BAD_INPUT,
        )
    if labels is not None:
        where, pairs, invalid, problems = read_corpus(labels, read_labels, limit=_MAX_LABELS_BYTES)
        result = attrs.evolve(
            calibrate_pairs(pairs, **bootstrap), skipped_invalid=invalid, problems=problems
        )
        title = f"labels in {where}"
    else:
        folder = reports_folder(ctx, reports_dir)
        result = calibrate(read_reports(folder), outcome=Outcome(outcome), **bootstrap)
        title = f"reports in {folder}; outcome: {outcome}"
    if _state(ctx).json:
        data = _serde.unstructure(result)
        data["bins"] = [{"range": r, "n": n, "good": g} for r, n, g in result.bins]
        say_json(data)
        return
    _print(result, title)


def _auc_text(auc: float | None, low: float | None, high: float | None, level: float) -> str:
    if auc is None:
        return "AUC: not defined (it needs both good and bad attempts)"
    return f"AUC = {auc:.3f}, {level:.0%} interval [{low:.3f}, {high:.3f}] (0.5 is chance)"


def _print(result: Calibration, title: str) -> None:
    say(title)
    skipped = (
        f"skipped {result.skipped_invalid} invalid lines"
        if result.outcome is None
        else f"skipped {result.skipped_no_confidence} without confidence, "
        f"{result.skipped_unknown} with no known outcome"
    )
    say(f"n = {result.n} ({result.good} good, {result.bad} bad); {skipped}")
    say(_auc_text(result.auc, result.low, result.high, result.level))
    subset = result.high_subset
    if subset is not None:
        lift = f", lift {result.lift:.2f}" if result.lift is not None else ""
        say(
            f"high-confidence subset (confidence >= {result.high_threshold:g}): n = {subset.n} "
            f"({subset.good} good, {subset.bad} bad){lift}"
        )
        say("  " + _auc_text(subset.auc, subset.low, subset.high, result.level))
    for label, n, good in result.bins:
        say(f"  confidence {label}: {n} attempts, {good:.0%} good")
    kill = result.kill_condition
    if kill is not None:
        say(f"kill condition (pre-registered): {kill.rule}")
        say(f"  {kill.verdict}")
