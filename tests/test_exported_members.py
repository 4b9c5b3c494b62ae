"""The public face of ``reflexkit``: what users build with, pinned (as httpx's test is).

A name added to or dropped from ``reflexkit.__all__`` is an API change: make it here, on
purpose, and in the docs.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest

import reflexkit

EXPORTED = [
    "Application",
    "ClaudeCodeSubagent",
    "CommandSubagent",
    "ConfigError",
    "CorruptRecordWarning",
    "EpisodicMemory",
    "FailureContext",
    "FailureType",
    "FakeServices",
    "GenerationError",
    "InMemoryMemory",
    "JsonlMemory",
    "LoadedProject",
    "Orchestrator",
    "ProjectConfig",
    "Reflection",
    "ReflectionCategory",
    "ReflectionGenerator",
    "ReflectionService",
    "ReflectionSource",
    "ReflexionConfig",
    "ReflexkitError",
    "RunInterrupted",
    "ScriptedSubagent",
    "SetupError",
    "StoreError",
    "Subagent",
    "SubagentRequest",
    "SubagentResult",
    "Subtask",
    "Task",
    "VerificationConfig",
    "__version__",
    "build_application",
    "dumps",
    "fake_services",
    "load_project",
    "load_task",
    "loads",
    "structure",
    "unstructure",
]


def test_exported_members() -> None:
    """``__all__`` is exactly the pinned list, and every name is ours and resolves."""
    assert reflexkit.__all__ == EXPORTED
    assert len(EXPORTED) <= 41  # about forty: what users build with, not every module
    for name in EXPORTED:
        member = getattr(reflexkit, name)
        if inspect.isclass(member) or inspect.isfunction(member):
            assert member.__module__.startswith("reflexkit."), name
    assert set(EXPORTED) <= set(dir(reflexkit))


# Each subpackage's face: what its ``__init__`` exports (``from reflexkit.orchestrator import
# Verifier``). Its modules are private (``_verify.py``), so this list is all it promises.
SUBPACKAGES = {
    "reflexkit.cli": [
        "COMMANDS",
        "Command",
        "cli",
        "main",
    ],
    "reflexkit.hooks": [
        "HookResult",
        "install_hooks",
        "run_hook",
    ],
    "reflexkit.insights": [
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
    ],
    "reflexkit.llm": [
        "DEFAULT_MODEL",
        "NO_WAIT",
        "REASONS",
        "Asker",
        "Claude",
        "Effort",
        "OutputMode",
        "RequestOptions",
        "RetryPolicy",
        "Thinking",
        "TransientError",
        "check_stop",
        "reply_text",
    ],
    "reflexkit.memory": [
        "EpisodicMemory",
        "InMemoryMemory",
        "JsonlMemory",
        "MemoryStats",
        "PostgresMemory",
    ],
    "reflexkit.orchestrator": [
        "ClaudeCodeSubagent",
        "CommandSubagent",
        "Orchestrator",
        "RunSummary",
        "ScriptedSubagent",
        "Subagent",
        "SubagentRequest",
        "SubagentResult",
        "SubtaskOutcome",
        "VerificationResult",
    ],
    "reflexkit.readers": [
        "ENTRY_POINT_GROUP",
        "Findings",
        "Problem",
        "ReadFunction",
        "Reader",
        "analyse",
        "clean_output",
        "clip",
        "dedupe",
        "error_kind",
        "find_locations",
        "group_problems",
        "is_library_path",
        "plural",
        "register_reader",
        "registered_readers",
        "signal_exit",
        "type_from_command",
        "unregister_reader",
    ],
    "reflexkit.redaction": [
        "CUT_LINE",
        "MAX_OUTPUT_CHARS",
        "RULES",
        "SINKS",
        "Redacted",
        "Redactor",
        "Rule",
        "Sink",
        "cut_lines",
        "outbound",
        "outbound_data",
        "redact_failure",
        "redact_text",
        "window",
    ],
    "reflexkit.reflection": [
        "ClaudeGenerator",
        "DefaultReflectionService",
        "FallbackGenerator",
        "FixtureGenerator",
        "FixtureRecorder",
        "HeuristicGenerator",
        "ReflectionGenerator",
        "ReflectionService",
        "ServiceHealth",
        "fixture_key",
        "prompt_key",
    ],
    "reflexkit.reports": [
        "AttemptAudit",
        "AttemptEnding",
        "AttemptReporter",
        "Calibration",
        "ClaudeJudge",
        "CompletionJudge",
        "Ending",
        "FixtureJudge",
        "HeuristicJudge",
        "JudgeInput",
        "Judgement",
        "RiskVerdict",
        "Verdict",
        "build_report",
        "calibrate",
        "calibrate_pairs",
        "classify_ending",
        "detectability",
        "evaluate_risk",
        "git_changes",
        "git_history",
        "read_labels",
        "read_reports",
        "report_schema",
        "self_report_instructions",
        "take_self_report",
        "write_report",
    ],
    "reflexkit.tasks": [
        "LoadedProject",
        "MemoryConfig",
        "OrchestratorConfig",
        "ProjectConfig",
        "ReflexionConfig",
        "Subtask",
        "Task",
        "VerificationConfig",
        "load_project",
        "load_task",
    ],
    "reflexkit.testing": [
        "FakeApi",
        "FakeMessagesApi",
        "FakeOpenAIApi",
        "HistoryWriter",
        "MemoryContract",
        "PostgresServer",
        "RecordedRequest",
        "RunScript",
        "Scripted",
        "ToolCall",
        "Turn",
        "make_reflection",
    ],
}


@pytest.mark.parametrize("package", sorted(SUBPACKAGES))
def test_subpackage_exported_members(package: str) -> None:
    """A subpackage's ``__all__`` is its pinned list, and every name resolves to ours."""
    module = importlib.import_module(package)
    assert module.__all__ == SUBPACKAGES[package]
    for name in module.__all__:
        member = getattr(module, name)
        if inspect.isclass(member) or inspect.isfunction(member):
            assert member.__module__.startswith("reflexkit."), name
    assert set(module.__all__) <= set(dir(module))


# The test helpers stay importable by module path (docs/testing.md shows them that way).
PUBLIC_MODULES_IN = {"reflexkit.testing"}


def test_modules_under_subpackages_are_private() -> None:
    """Below the top level a module is ``__init__``, ``__main__``, ``exceptions`` or ``_name``.

    A new module under a subpackage is named ``_name.py``, and its package's ``__init__``
    exports what users need of it.
    """
    root = Path(reflexkit.__file__).parent
    public = []
    for path in sorted(root.glob("*/**/*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        package = ".".join(("reflexkit", *parts[:-1]))
        if package in PUBLIC_MODULES_IN or any(p.startswith("_") for p in parts):
            continue  # __init__, __main__, _name, or inside a private package (_demo)
        if parts[-1] not in {"exceptions", "testing"}:
            public.append(".".join(("reflexkit", *parts)))
    assert public == []
