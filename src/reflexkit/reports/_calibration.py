"""Calibration: does the agent's self-reported confidence tell good attempts from bad ones?

:func:`calibrate` pairs each report's ``confidence`` with its outcome (``verification``,
``rework`` or ``final``) and computes the AUC with a seeded bootstrap interval, overall and on
the high-confidence subset, and the pre-registered kill condition (:class:`KillCondition`);
:func:`read_labels` and :func:`calibrate_pairs` do the same for a labelled corpus. Pure and
deterministic; the outcomes and the condition are described in docs/reports.md.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypedDict, TypeVar, Unpack

import attrs
import orjson

from reflexkit import _serde

T = TypeVar("T")

__all__ = [
    "CHANCE_MARGIN",
    "HIGH_CONFIDENCE",
    "MIN_PER_CLASS",
    "Bootstrap",
    "Calibration",
    "Discrimination",
    "KillCondition",
    "Outcome",
    "auc",
    "bootstrap_interval",
    "calibrate",
    "calibrate_pairs",
    "kill_condition",
    "pairs_of",
    "read_labels",
    "read_records",
]

HIGH_CONFIDENCE = 0.8
"""Where the high-confidence subset starts: a self-rated confidence of at least this."""

CHANCE_MARGIN = 0.05
"""The pre-registered kill condition: a high-subset AUC within this of 0.5 is chance."""

_CHANCE = 0.5

MIN_PER_CLASS = 5
"""The kill condition is undecided while the high subset has fewer good, or bad, attempts."""

KILL_RULE = (
    "AUC near chance on the high-confidence subset (confidence >= {high:g}): |AUC - 0.5| <= "
    "{margin:g}, or its interval includes 0.5 -> confidence carries no signal where it is "
    "high; do not build the closed calibration loop"
)


class Outcome(enum.StrEnum):
    """What counts as a good attempt."""

    VERIFICATION = "verification"
    REWORK = "rework"
    FINAL = "final"


@attrs.frozen(kw_only=True)
class Discrimination:
    """How well confidence separates good from bad within one set of attempts.

    Attributes:
        n: Attempts in the set.
        good: How many were good.
        bad: How many were bad.
        auc: The AUC, or ``None`` without both good and bad attempts.
        low: The lower end of its bootstrap interval.
        high: The upper end.
    """

    n: int
    good: int
    bad: int
    auc: float | None
    low: float | None
    high: float | None


@attrs.frozen(kw_only=True)
class KillCondition:
    """The pre-registered kill condition and what the data says of it.

    Attributes:
        rule: The condition, as registered.
        met: ``True`` when the high subset's AUC is near chance, ``False`` when not, ``None``
            when the subset has fewer than :data:`MIN_PER_CLASS` good or bad attempts.
        verdict: One sentence saying which, with the figure.
    """

    rule: str
    met: bool | None
    verdict: str


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
        high_threshold: Where the high-confidence subset starts.
        high_subset: The AUC within it.
        lift: Its share of good attempts over the share among all (``None`` when either is
            undefined).
        kill_condition: The pre-registered kill condition and its verdict.
        skipped_invalid: Lines of a labelled corpus that were not valid.
        problems: What was wrong with them, one line each (the first 20).
    """

    outcome: Outcome | None
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
    high_threshold: float = HIGH_CONFIDENCE
    high_subset: Discrimination | None = None
    lift: float | None = None
    kill_condition: KillCondition | None = None
    skipped_invalid: int = 0
    problems: tuple[str, ...] = ()


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


class Bootstrap(TypedDict, total=False):
    """The experiment's settings, as :func:`calibrate_pairs` takes them."""

    rounds: int
    level: float
    seed: int
    high_threshold: float


def calibrate(
    reports: Iterable[Mapping[str, Any]],
    *,
    outcome: Outcome = Outcome.VERIFICATION,
    **bootstrap: Unpack[Bootstrap],
) -> Calibration:
    """Compute the AUC of self-reported confidence against *outcome*, with its interval.

    Args:
        reports: ``reflexkit.report.v1`` reports (see
            :func:`~reflexkit.reports._report.read_reports`).
        outcome: What counts as a good attempt.
        bootstrap: ``rounds``, ``level``, ``seed`` and ``high_threshold``, as
            :func:`calibrate_pairs` takes them.

    Returns:
        The figures; ``auc`` is ``None`` when every attempt was good, or every one bad.
    """
    pairs, no_confidence, unknown = pairs_of(reports, outcome=outcome)
    result = calibrate_pairs(pairs, **bootstrap)
    return attrs.evolve(
        result, outcome=outcome, skipped_no_confidence=no_confidence, skipped_unknown=unknown
    )


def _discrimination(
    pairs: Sequence[tuple[float, bool]], *, rounds: int, level: float, seed: int
) -> Discrimination:
    scores = [p[0] for p in pairs]
    labels = [p[1] for p in pairs]
    interval = bootstrap_interval(scores, labels, rounds=rounds, level=level, seed=seed)
    return Discrimination(
        n=len(pairs),
        good=sum(labels),
        bad=len(labels) - sum(labels),
        auc=auc(scores, labels),
        low=interval[0] if interval else None,
        high=interval[1] if interval else None,
    )


def kill_condition(subset: Discrimination, *, high_threshold: float) -> KillCondition:
    """Judge the pre-registered kill condition on the high-confidence subset's figures."""
    rule = KILL_RULE.format(margin=CHANCE_MARGIN, high=high_threshold)
    if subset.auc is None or min(subset.good, subset.bad) < MIN_PER_CLASS:
        verdict = (
            f"undecided: the high-confidence subset ({subset.n} attempts, {subset.good} good, "
            f"{subset.bad} bad) needs at least {MIN_PER_CLASS} good and {MIN_PER_CLASS} bad "
            "attempts"
        )
        return KillCondition(rule=rule, met=None, verdict=verdict)
    interval = (
        f" (interval [{subset.low:.3f}, {subset.high:.3f}])" if subset.low is not None else ""
    )
    low, high = subset.low, subset.high
    includes = low is not None and high is not None and low <= _CHANCE <= high
    if abs(subset.auc - _CHANCE) <= CHANCE_MARGIN or includes:
        verdict = (
            f"MET: AUC {subset.auc:.3f}{interval} on {subset.n} high-confidence attempts is "
            "near chance: confidence does not tell good from bad where it is high"
        )
        return KillCondition(rule=rule, met=True, verdict=verdict)
    side = "above" if subset.auc > _CHANCE else "below (confidence is inverted)"
    verdict = (
        f"not met: AUC {subset.auc:.3f}{interval} on {subset.n} high-confidence attempts is "
        f"{side} chance by more than {CHANCE_MARGIN:g}, its interval clear of 0.5"
    )
    return KillCondition(rule=rule, met=False, verdict=verdict)


def calibrate_pairs(
    pairs: Sequence[tuple[float, bool]],
    *,
    rounds: int = 2_000,
    level: float = 0.95,
    seed: int = 0,
    high_threshold: float = HIGH_CONFIDENCE,
) -> Calibration:
    """Calibrate ``(confidence, good)`` pairs: all of them, and the high-confidence subset.

    Args:
        pairs: The labelled attempts (from :func:`pairs_of` or :func:`read_labels`).
        rounds: Bootstrap resamples.
        level: The intervals' confidence level.
        seed: The bootstrap's seed.
        high_threshold: Where the high-confidence subset starts.

    Returns:
        The figures, with ``outcome`` ``None`` (the labels said what was good).
    """
    whole = _discrimination(pairs, rounds=rounds, level=level, seed=seed)
    high = [p for p in pairs if p[0] >= high_threshold]
    subset = _discrimination(high, rounds=rounds, level=level, seed=seed)
    lift = None
    if high and whole.good:
        lift = (subset.good / subset.n) / (whole.good / whole.n)
    bins: dict[int, list[bool]] = {}
    for score, good in pairs:
        bins.setdefault(min(int(score * 10), 9), []).append(good)
    return Calibration(
        outcome=None,
        n=whole.n,
        good=whole.good,
        bad=whole.bad,
        auc=whole.auc,
        low=whole.low,
        high=whole.high,
        level=level,
        skipped_no_confidence=0,
        skipped_unknown=0,
        bins=tuple(
            (f"{b / 10:.1f}-{(b + 1) / 10:.1f}", len(v), sum(v) / len(v))
            for b, v in sorted(bins.items())
        ),
        high_threshold=high_threshold,
        high_subset=subset,
        lift=lift,
        kill_condition=kill_condition(subset, high_threshold=high_threshold),
    )


_SHOWN_PROBLEMS = 20


def _label(data: object) -> tuple[float, bool] | str:
    """One line's ``(confidence, correct)``, or what is wrong with it."""
    if not isinstance(data, dict):
        return f"expected an object with confidence and correct, got {_serde.kind(data)}"
    problems = []
    confidence, correct = data.get("confidence"), data.get("correct")
    if "confidence" not in data:
        problems.append("$.confidence: required, but missing")
    elif (
        not isinstance(confidence, int | float)
        or isinstance(confidence, bool)
        or not 0.0 <= confidence <= 1.0
    ):
        problems.append(f"$.confidence: expected a number from 0 to 1, got {_shown(confidence)}")
    if "correct" not in data:
        problems.append("$.correct: required, but missing")
    elif not isinstance(correct, bool):
        problems.append(f"$.correct: expected true or false, got {_shown(correct)}")
    if problems:
        return "; ".join(problems)
    return float(confidence), bool(correct)  # type: ignore[arg-type]  # checked above


def _shown(value: object) -> str:
    text = orjson.dumps(value).decode()
    return text if len(text) <= 40 else text[:37] + "..."  # noqa: PLR2004


def _json_records(raw: bytes) -> Iterator[tuple[str, object, str | None]]:
    """Each record as ``(where, value, error)``: ``line N`` (``item N`` of an array)."""
    if raw.lstrip()[:1] == b"[":
        try:
            items = orjson.loads(raw)
        except orjson.JSONDecodeError:
            items = None  # not one array after all: read it line by line
        if isinstance(items, list):
            for index, item in enumerate(items):
                yield f"item {index}", item, None
            return
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield f"line {number}", orjson.loads(line), None
        except orjson.JSONDecodeError as err:
            yield f"line {number}", None, f"invalid JSON: {err}"


def read_records(
    raw: bytes, parse: Callable[[object], T | str | None], *, source: str
) -> tuple[list[T], int, list[str]]:
    """Parse each record of a JSON Lines file (or a JSON array; blank lines skipped) with *parse*.

    *parse* returns the value, what is wrong (the record is skipped and counted, never fatal)
    or ``None`` (skipped silently).

    Returns:
        The values in file order, how many records were invalid, and the first problems
        (``"<source>: line 3: $.confidence: ..."``).
    """
    values: list[T] = []
    invalid = 0
    problems: list[str] = []
    for where, data, error in _json_records(raw):
        found = error or parse(data)
        if isinstance(found, str):
            invalid += 1
            if len(problems) < _SHOWN_PROBLEMS:
                problems.append(f"{source}: {where}: {found}")
        elif found is not None:
            values.append(found)
    return values, invalid, problems


def read_labels(
    raw: bytes, *, source: str = "labels"
) -> tuple[list[tuple[float, bool]], int, list[str]]:
    """Read a labelled corpus of ``{"confidence": 0..1, "correct": bool}`` (other keys ignored).

    Returns:
        The ``(confidence, correct)`` pairs, as :func:`read_records` returns them.
    """
    return read_records(raw, _label, source=source)
