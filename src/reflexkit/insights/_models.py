"""The value types of insights: findings, lessons, paused subtasks and analysis actions.

Frozen attrs classes with no serialisation of their own: the one converter in
:mod:`reflexkit._serde` writes and reads them as camelCase JSON.
"""

from __future__ import annotations

import enum
import hashlib
import uuid
from datetime import datetime

import attrs

from reflexkit.models import FailureType, non_empty, utcnow

__all__ = [
    "ActiveTask",
    "AnalysisReply",
    "Finding",
    "Lesson",
    "LessonAction",
    "LessonActionKind",
    "PausedEntry",
    "Rule",
    "Severity",
    "SubjectType",
    "TaskAction",
    "TaskActionKind",
    "description_hash",
    "new_lesson_id",
]


class Rule(enum.StrEnum):
    """Which rule (or which step of the analysis) produced a finding."""

    CONSECUTIVE_FAILURES = "consecutive_failures"
    """Stuck or exhausted in the last N runs: the subtask is paused."""
    TIMEOUT_PATTERN = "timeout_pattern"
    """N timed-out attempts in a row."""
    NO_CHANGE_REPEAT = "no_change_repeat"
    """An attempt changed no files and failed exactly as the one before."""
    FILE_FAILURE_CORRELATION = "file_failure_correlation"
    """One file modified in N or more failed attempts within the lookback."""
    STALE_OUTPUT = "stale_output"
    """The agent's output was under ``minResultLength`` in the last N attempts."""
    ANALYSIS = "analysis"
    """The analysis: its prose (subject type ``analysis``), or an action it proposed,
    applied or not."""


class Severity(enum.StrEnum):
    """How much a finding did."""

    WARNING = "warning"
    """Worth reading; nothing was changed."""
    ACTION_TAKEN = "action_taken"
    """Something was changed: see ``actionTaken``."""


class SubjectType(enum.StrEnum):
    """What a finding is about."""

    SUBTASK = "subtask"
    FILE = "file"
    LESSON = "lesson"
    ANALYSIS = "analysis"
    """The analysis's own prose (``subjectId``: who wrote it, ``llm`` or ``heuristic``)."""


@attrs.frozen(kw_only=True)
class Finding:
    """What a rule noticed, and what it did about it.

    Attributes:
        rule: The rule.
        severity: ``warning``, or ``action_taken`` when something was changed.
        subject_type: ``subtask``, ``file`` or ``lesson``.
        subject_id: The subtask id, the file path or the lesson id.
        detail: One or two sentences for a person: what was seen, what to do.
        action_taken: What was changed (``paused``), ``""`` for none.
        task_id: The task of a subtask finding; ``""`` for files and lessons.
        created_at: When it was found.
    """

    rule: Rule
    severity: Severity
    subject_type: SubjectType
    subject_id: str
    detail: str
    action_taken: str = ""
    task_id: str = ""
    created_at: datetime = attrs.field(factory=utcnow, eq=False)


def new_lesson_id() -> str:
    """Return a fresh lesson id."""
    return "lsn-" + uuid.uuid4().hex[:12]


@attrs.frozen(kw_only=True)
class Lesson:
    """A suggestion that worked on one subtask, offered to others that fail the same way.

    Attributes:
        id: Unique; ``reflexkit lessons remove ID`` takes it.
        fingerprint: The fingerprint of the failure it fixed.
        failure_type: The kind of check that failed.
        tool: The tool that reported it (``pytest``, ``pip``, ``subagent``).
        suggestion: The suggestion that preceded the passing attempt.
        task_id: Where it was learnt.
        subtask_id: Where it was learnt.
        reflection_id: The reflection it came from (``""`` when added by the analysis).
        created_at: When it was learnt.
    """

    id: str = attrs.field(validator=non_empty)
    fingerprint: str
    failure_type: FailureType
    tool: str
    suggestion: str = attrs.field(validator=non_empty)
    task_id: str = ""
    subtask_id: str = ""
    reflection_id: str = ""
    created_at: datetime = attrs.field(factory=utcnow)


def description_hash(description: str) -> str:
    """Return the hash a paused subtask keeps of its description (whitespace-normalised)."""
    normalised = " ".join(description.split())
    return hashlib.sha256(normalised.encode()).hexdigest()[:16]


@attrs.frozen(kw_only=True)
class PausedEntry:
    """One paused subtask, or the record that it was resumed.

    Attributes:
        task_id: The task.
        subtask_id: The subtask.
        paused: ``True`` while paused; ``False`` once resumed.
        description_hash: The hash of the description it was paused with; a changed
            description resumes it.
        since: When it was paused or resumed, for people: no rule compares it.
        after_run: The last run of the history when it was paused or resumed (``""``: there
            was none): the runs up to it are not held against the subtask again. A
            position, not a time: run logs stamped by other clocks (a deterministic run's
            2000-01-01, a ``SOURCE_DATE_EPOCH`` ahead) can't be compared with *since*.
            ``None`` in entries written before positions were kept: *since* decides.
        reason: Why.
    """

    task_id: str
    subtask_id: str = attrs.field(validator=non_empty)
    paused: bool
    description_hash: str = ""
    since: datetime = attrs.field(factory=utcnow)
    after_run: str | None = None
    reason: str = ""


@attrs.frozen(kw_only=True)
class ActiveTask:
    """A subtask the analysis is told about: what runs, and how it has been going.

    Attributes:
        task_id: The task.
        subtask_id: The subtask.
        status: ``active`` (it will run again) or ``paused``.
        runs: Its runs in the history looked at.
        last_outcome: How its last run ended (``passed``, ``stuck`` ...), ``""`` if unknown.
    """

    task_id: str
    subtask_id: str
    status: str = "active"
    runs: int = 0
    last_outcome: str = ""


class TaskActionKind(enum.StrEnum):
    """What the analysis may do to a subtask."""

    PAUSE = "pause"
    RESUME = "resume"


class LessonActionKind(enum.StrEnum):
    """What the analysis may do to the lessons."""

    ADD = "add"
    REMOVE = "remove"


@attrs.frozen(kw_only=True)
class TaskAction:
    """One change to a subtask the analysis proposes."""

    action: TaskActionKind
    subtask_id: str = attrs.field(validator=non_empty)
    task_id: str = ""
    reason: str = attrs.field(validator=non_empty)


@attrs.frozen(kw_only=True)
class LessonAction:
    """One change to the lessons the analysis proposes.

    ``remove`` names ``lessonId``; ``add`` gives ``suggestion`` and at least one of
    ``fingerprint`` or ``tool`` with ``failureType``.
    """

    action: LessonActionKind
    reason: str = attrs.field(validator=non_empty)
    lesson_id: str = ""
    fingerprint: str = ""
    tool: str = ""
    failure_type: FailureType | None = None
    suggestion: str = ""


@attrs.frozen(kw_only=True)
class AnalysisReply:
    """The structured answer of the analysis: observations and at most a few actions.

    Attributes:
        summary: What the findings mean, in a few sentences.
        task_actions: Changes to subtasks, most important first.
        lesson_actions: Changes to lessons, most important first.
    """

    summary: str = ""
    task_actions: tuple[TaskAction, ...] = ()
    lesson_actions: tuple[LessonAction, ...] = ()
