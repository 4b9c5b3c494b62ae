"""Insights: rules over run history before any LLM, paused subtasks, lessons that travel.

The loop calls three parts (see docs/insights.md for where):

* the rule tier, :class:`InsightRules` (:class:`HistoryRules`; :class:`FixedRules` in tests);
* the analysis, :class:`AnalysisCycle` with an :class:`InsightAnalyst`
  (:class:`ClaudeAnalyst`, :class:`HeuristicAnalyst`);
* the lessons, :class:`LessonBook` (:class:`JsonlLessons`; :class:`InMemoryLessons` in
  tests) and :func:`format_lessons`.

``reflexkit insights --watch`` is :class:`InsightWatch`, woken by a :class:`FolderWaker`.

This package reads the run logs as JSON and never imports the orchestrator.
"""

from reflexkit.insights._analysis import (
    AnalysisCycle,
    AnalysisOutcome,
    ClaudeAnalyst,
    HeuristicAnalyst,
    InsightAnalyst,
)
from reflexkit.insights._history import AttemptRecord, RunHistory, RunLogReader, SubtaskRun
from reflexkit.insights._lessons import (
    LESSONS_HEADING,
    InMemoryLessons,
    JsonlLessons,
    LessonBook,
    format_lessons,
    harvest,
    tool_of,
)
from reflexkit.insights._models import (
    Finding,
    Lesson,
    LessonAction,
    PausedEntry,
    Rule,
    Severity,
    SubjectType,
    TaskAction,
)
from reflexkit.insights._rules import (
    AttemptCheck,
    FixedRules,
    HistoryRules,
    InsightRules,
    RunStartCheck,
    evaluate,
)
from reflexkit.insights._store import FindingLog, PausedSubtasks
from reflexkit.insights._watch import FolderWaker, InsightWatch, StopSignals

__all__ = [
    "LESSONS_HEADING",
    "AnalysisCycle",
    "AnalysisOutcome",
    "AttemptCheck",
    "AttemptRecord",
    "ClaudeAnalyst",
    "Finding",
    "FindingLog",
    "FixedRules",
    "FolderWaker",
    "HeuristicAnalyst",
    "HistoryRules",
    "InMemoryLessons",
    "InsightAnalyst",
    "InsightRules",
    "InsightWatch",
    "JsonlLessons",
    "Lesson",
    "LessonAction",
    "LessonBook",
    "PausedEntry",
    "PausedSubtasks",
    "Rule",
    "RunHistory",
    "RunLogReader",
    "RunStartCheck",
    "Severity",
    "StopSignals",
    "SubjectType",
    "SubtaskRun",
    "TaskAction",
    "evaluate",
    "format_lessons",
    "harvest",
    "tool_of",
]
