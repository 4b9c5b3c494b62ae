"""The events of what the insight rules found and what the analysis did (#17, #28).

The loop emits them into its run (``Orchestrator``), and ``reflexkit insights --watch`` prints
them: a ``finding`` per finding, a ``file_flagged`` beside each file correlated with failures,
and an ``analysis_completed`` after each analysis.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import attrs

from reflexkit import _serde
from reflexkit.events import EventData, EventKind
from reflexkit.insights._analysis import AnalysisOutcome
from reflexkit.insights._models import Finding, Rule, SubjectType

__all__ = ["InsightEvent", "analysis_data", "finding_event", "insight_events"]


def finding_event(finding: Finding, subtask_id: str, *, at: datetime) -> tuple[str, EventData]:
    """The subtask a ``finding`` event is on, and its data: the finding's scalar fields.

    A finding about a subtask is on that subtask; any other (a file, a lesson) is on the
    attempt's *subtask_id*. Its ``createdAt`` is *at*, the run's clock: a deterministic run's
    log stays byte-identical.
    """
    data = _serde.unstructure(attrs.evolve(finding, created_at=at))
    on = finding.subject_id if finding.subject_type is SubjectType.SUBTASK else subtask_id
    return on, {k: v for k, v in data.items() if isinstance(v, str | int | float | bool)}


InsightEvent = tuple[EventKind, str, EventData]
"""The kind, the subtask it is on (``""``: run-wide) and the data of one insight event."""


def insight_events(
    items: Iterable[Finding | AnalysisOutcome], subtask_id: str = "", *, at: datetime
) -> list[InsightEvent]:
    """The events of what the rules found and what the analysis did, in order.

    * a ``finding`` per finding (the analysis's prose and each action it proposed are
      findings too);
    * a ``file_flagged`` beside each ``file_failure_correlation`` finding: ``path``,
      ``failureLimit`` is in its ``detail``;
    * an ``analysis_completed`` after each analysis: ``findingsCount``,
      ``actionsRecommended``, ``source``, ``fallbackReason``, ``applied``.
    """
    events: list[InsightEvent] = []
    for item in items:
        if isinstance(item, AnalysisOutcome):
            if not item.called:
                continue
            logged = [item.prose] if item.prose is not None else []
            events += insight_events([*logged, *item.logged], subtask_id, at=at)
            events.append((EventKind.ANALYSIS_COMPLETED, "", analysis_data(item)))
            continue
        on, data = finding_event(item, subtask_id, at=at)
        events.append((EventKind.FINDING, on, data))
        if item.rule is Rule.FILE_FAILURE_CORRELATION:
            flagged: EventData = {"path": item.subject_id, "detail": item.detail}
            events.append((EventKind.FILE_FLAGGED, subtask_id, flagged))
    return events


def analysis_data(outcome: AnalysisOutcome) -> EventData:
    """The data of an ``analysis_completed`` event."""
    applied = outcome.applied
    return {
        "findingsCount": outcome.findings_count,
        "actionsRecommended": outcome.actions_recommended,
        "source": outcome.source,
        "fallbackReason": outcome.fallback_reason or "",
        "applied": f"{applied.subject_id}: {applied.action_taken}" if applied else "",
    }
