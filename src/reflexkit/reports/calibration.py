"""Calibration: does the agent's self-reported confidence tell good attempts from bad ones?

Each attempt report carries the agent's ``confidence`` (0 to 1) and, mechanically, how the
attempt turned out. :func:`calibrate` pairs them and computes the AUC: the chance that a
randomly chosen good attempt reported a higher confidence than a randomly chosen bad one (0.5
is chance, 1.0 perfect; ties count half), with the number of pairs behind it and a
percentile bootstrap interval, so a figure from twelve attempts is not read as a figure from
a thousand. Everything here is pure and deterministic (the bootstrap has a fixed seed).

What "good" means is the *outcome*:

* ``verification``: the attempt's checks passed, and the completion judge, if it ran, did not
  reject it;
* ``rework``: it passed, and no later attempt at the same subtask (same task and subtask ids,
  any run) had to redo it;
* ``final``: its subtask ended passing in the same run (the attempt led to success).

Reports with no confidence, or whose outcome is unknown (no checks and no judge, for
``verification``), are left out and counted.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

__all__ = ["Calibration", "Outcome", "auc", "bootstrap_interval", "calibrate", "pairs_of"]


class Outcome(enum.StrEnum):
    """What counts as a good attempt."""

    VERIFICATION = "verification"
    REWORK = "rework"
    FINAL = "final"


@attrs.frozen(kw_only=True)
class Calibration:
    """How well confidence separates good attempts from bad ones.

    Attributes:
        outcome: What counted as good.
        n: Attempts with both a confidence and a known outcome.
        good: How many of them were good.
        bad: How many were bad.
        auc: The AUC, or ``None`` when there were no good or no bad attempts.
        low: The lower end of the bootstrap interval (``None`` like ``auc``).
        high: The upper end.
        level: The interval's confidence level.
        skipped_no_confidence: Reports without a self-reported confidence.
        skipped_unknown: Reports whose outcome is unknown.
        bins: Per confidence tenth (``"0.0-0.1"`` ...): attempts and the share that was good.
    """

    outcome: Outcome
    n: int
    good: int
    bad: int
    auc: float | None
    low: float | None
    high: float | None
    level: float
    skipped_no_confidence: int
    skipped_unknown: int
    bins: tuple[tuple[str, int, float], ...]


def auc(scores: Sequence[float], labels: Sequence[bool]) -> float | None:
    """Return the AUC of *scores* for *labels* (Mann-Whitney, ties half), or None for one class.

    Runs in O(n log n): scores are ranked once, with tied scores sharing their mean rank.
    """
    n_good = sum(labels)
    n_bad = len(labels) - n_good
    if not n_good or not n_bad:
        return None
    order = sorted(range(len(scores)), key=scores.__getitem__)
    ranks = [0.0] * len(scores)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and scores[order[j + 1]] == scores[order[i]]:
            j += 1
        mean_rank = (i + j) / 2 + 1
        for k in range(i, j + 1):
            ranks[order[k]] = mean_rank
        i = j + 1
    rank_sum = sum(r for r, good in zip(ranks, labels, strict=True) if good)
    return (rank_sum - n_good * (n_good + 1) / 2) / (n_good * n_bad)


def bootstrap_interval(
    scores: Sequence[float],
    labels: Sequence[bool],
    *,
    rounds: int = 2_000,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[float, float] | None:
    """Return the percentile bootstrap interval of the AUC, or None when it can't be computed.

    Resamples with both classes kept at their sizes (a stratified bootstrap), so every
    resample has an AUC.
    """
    good = [s for s, y in zip(scores, labels, strict=True) if y]
    bad = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not good or not bad or rounds < 1:
        return None
    rng = random.Random(seed)  # noqa: S311 -- a reproducible bootstrap, not crypto
    values = []
    for _ in range(rounds):
        g = rng.choices(good, k=len(good))
        b = rng.choices(bad, k=len(bad))
        value = auc([*g, *b], [True] * len(g) + [False] * len(b))
        if value is not None:
            values.append(value)
    values.sort()
    tail = (1.0 - level) / 2
    low = values[min(int(tail * len(values)), len(values) - 1)]
    high = values[min(int((1.0 - tail) * len(values)), len(values) - 1)]
    return low, high


def _passed(report: Mapping[str, Any]) -> bool | None:
    verification = report.get("verification")
    if not isinstance(verification, Mapping):
        return None
    passed = verification.get("passed")
    judge = verification.get("judge")
    judge_ok = judge.get("complete") if isinstance(judge, Mapping) else None
    if passed is None and judge_ok is None:
        return None
    return passed is not False and judge_ok is not False


def _key(report: Mapping[str, Any]) -> tuple[str, str]:
    return str(report.get("taskId", "")), str(report.get("subtaskId", ""))


def pairs_of(
    reports: Iterable[Mapping[str, Any]], *, outcome: Outcome = Outcome.VERIFICATION
) -> tuple[list[tuple[float, bool]], int, int]:
    """Pair each report's confidence with its outcome.

    Args:
        reports: ``reflexkit.report.v1`` reports, in any order.
        outcome: What counts as good.

    Returns:
        The ``(confidence, good)`` pairs, the count of reports without a confidence, and the
        count of reports whose outcome is unknown.
    """
    ordered = sorted(
        reports,
        key=lambda r: (str(r.get("createdAt", "")), str(r.get("runId", "")), r.get("attempt", 0)),
    )
    last_of_run: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    latest: dict[tuple[str, str], str] = {}
    for report in ordered:
        last_of_run[(str(report.get("runId", "")), *_key(report))] = report
        latest[_key(report)] = str(report.get("createdAt", ""))
    pairs: list[tuple[float, bool]] = []
    no_confidence = unknown = 0
    for report in ordered:
        confidence = report.get("confidence")
        if not isinstance(confidence, int | float) or isinstance(confidence, bool):
            no_confidence += 1
            continue
        if outcome is Outcome.FINAL:
            good = _passed(last_of_run[(str(report.get("runId", "")), *_key(report))])
        else:
            good = _passed(report)
            if outcome is Outcome.REWORK and good:
                good = latest[_key(report)] == str(report.get("createdAt", ""))
        if good is None:
            unknown += 1
            continue
        pairs.append((float(confidence), good))
    return pairs, no_confidence, unknown


def calibrate(
    reports: Iterable[Mapping[str, Any]],
    *,
    outcome: Outcome = Outcome.VERIFICATION,
    rounds: int = 2_000,
    level: float = 0.95,
    seed: int = 0,
) -> Calibration:
    """Compute the AUC of self-reported confidence against *outcome*, with its interval.

    Args:
        reports: ``reflexkit.report.v1`` reports (see
            :func:`~reflexkit.reports.report.read_reports`).
        outcome: What counts as a good attempt.
        rounds: Bootstrap resamples.
        level: The interval's confidence level.
        seed: The bootstrap's seed: the same reports give the same interval.

    Returns:
        The figures; ``auc`` is ``None`` when every attempt was good, or every one bad.
    """
    pairs, no_confidence, unknown = pairs_of(reports, outcome=outcome)
    scores = [p[0] for p in pairs]
    labels = [p[1] for p in pairs]
    value = auc(scores, labels)
    interval = bootstrap_interval(scores, labels, rounds=rounds, level=level, seed=seed)
    bins: dict[int, list[bool]] = {}
    for score, good in pairs:
        bins.setdefault(min(int(score * 10), 9), []).append(good)
    return Calibration(
        outcome=outcome,
        n=len(pairs),
        good=sum(labels),
        bad=len(labels) - sum(labels),
        auc=value,
        low=interval[0] if interval else None,
        high=interval[1] if interval else None,
        level=level,
        skipped_no_confidence=no_confidence,
        skipped_unknown=unknown,
        bins=tuple(
            (f"{b / 10:.1f}-{(b + 1) / 10:.1f}", len(v), sum(v) / len(v))
            for b, v in sorted(bins.items())
        ),
    )
