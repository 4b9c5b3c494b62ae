"""The Insights container: live parts on disk, fakes under fake_services()."""

from __future__ import annotations

from pathlib import Path

import pytest

from reflexkit.containers import build_application, fake_services
from reflexkit.insights import (
    AnalysisCycle,
    ClaudeAnalyst,
    FixedRules,
    HeuristicAnalyst,
    HistoryRules,
    InMemoryLessons,
    InsightAnalyst,
    InsightRules,
    JsonlLessons,
    LessonBook,
)
from reflexkit.tasks._config import (
    GeneratorBackend,
    InsightsConfig,
    LoadedProject,
    ProjectConfig,
    ReflexionConfig,
)


def _project(root: Path, backend: GeneratorBackend) -> LoadedProject:
    config = ProjectConfig(
        reflexion=ReflexionConfig(backend=backend),
        insights=InsightsConfig(consecutive_failure_limit=5),
    )
    return LoadedProject(config=config, root=root)


def test_live_parts_use_the_project_files(tmp_path: Path) -> None:
    """Rules, lessons and findings live under the project's .reflexkit/, with its config."""
    app = build_application(_project(tmp_path, GeneratorBackend.LLM))
    try:
        rules = app.insights.rules()
        assert isinstance(rules, HistoryRules)
        assert isinstance(rules, InsightRules)
        assert rules.config.consecutive_failure_limit == 5
        assert rules.reader.runs == tmp_path / ".reflexkit" / "runs"
        lessons = app.insights.lessons()
        assert isinstance(lessons, JsonlLessons)
        assert isinstance(lessons, LessonBook)
        assert lessons.path == tmp_path / ".reflexkit" / "lessons.jsonl"
        assert app.insights.findings().path == tmp_path / ".reflexkit" / "insights.jsonl"
        cycle = app.insights.analysis()
        assert isinstance(cycle, AnalysisCycle)
        assert isinstance(cycle.analyst, ClaudeAnalyst)
        assert isinstance(cycle.fallback, HeuristicAnalyst)
    finally:
        app.shutdown_resources()


@pytest.mark.parametrize("backend", [GeneratorBackend.HEURISTIC, GeneratorBackend.FIXTURE])
def test_offline_backends_analyse_without_network(
    tmp_path: Path, backend: GeneratorBackend
) -> None:
    """The heuristic and fixture backends get the heuristic analyst: nothing is sent."""
    app = build_application(_project(tmp_path, backend))
    analyst = app.insights.analysis().analyst
    assert isinstance(analyst, HeuristicAnalyst)
    assert isinstance(analyst, InsightAnalyst)


def test_fake_services_bind_the_in_memory_fakes(tmp_path: Path) -> None:
    """Under fake_services() the rules, the analyst and the lessons touch no disk or network."""
    app = build_application(_project(tmp_path, GeneratorBackend.LLM))
    with fake_services(app) as fakes:
        assert isinstance(app.insights.rules(), FixedRules)
        assert app.insights.rules() is fakes.rules()
        assert isinstance(app.insights.lessons(), InMemoryLessons)
        assert isinstance(app.insights.analysis().analyst, HeuristicAnalyst)
        assert app.insights.analysis().lessons is fakes.lessons()
    assert isinstance(app.insights.rules(), HistoryRules)
    assert not (tmp_path / ".reflexkit").exists()
