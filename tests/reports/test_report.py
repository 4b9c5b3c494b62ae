"""Attempt reports: git numstat from real repositories, self-reports, schema, atomic writes."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from reflexkit.reports._report import (
    AttemptReporter,
    FileChange,
    GitChanges,
    JudgeSummary,
    ReportIds,
    ReportSettings,
    Verification,
    build_report,
    diff_text,
    git_changes,
    read_reports,
    report_path,
    report_schema,
    safe_id,
    self_report_instructions,
    take_self_report,
    write_report,
)
from reflexkit.tasks._config import LoadedProject, ProjectConfig, ReportsConfig

from .conftest import git

IDS = ReportIds(run_id="run1", subtask_id="discount", attempt=1, task_id="cart")
GOOD = {
    "confidence": 0.7,
    "mostLikelyWrong": {"surface": "data", "description": "rounding of half cents"},
    "knownNotInDiff": "I did not run the slow tests",
}


def validate(report: dict[str, Any]) -> None:
    """Fail unless *report* validates against the shipped schema (draft 2020-12)."""
    validator = jsonschema.Draft202012Validator(
        report_schema(), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    validator.validate(report)


def test_schema_is_a_valid_json_schema() -> None:
    """The shipped file is itself a valid draft 2020-12 schema."""
    jsonschema.Draft202012Validator.check_schema(report_schema())


def test_git_changes_counts_staged_unstaged_and_untracked(repo: Path) -> None:
    """Modified, staged, deleted, new and binary files all appear with their line counts."""
    (repo / "src" / "cart" / "pricing.py").write_text("def price(x):\n    return x * 2\n\n")
    (repo / "src" / "cart" / "tax.py").write_text("RATE = 0.2\nOTHER = 1\n")
    git(repo, "add", "src/cart/tax.py")
    (repo / "README.md").unlink()
    (repo / "new_untracked.py").write_text("a = 1\nb = 2\nc = 3")
    (repo / "logo.bin").write_bytes(b"\x00\x01\x02")
    (repo / ".reflexkit").mkdir()
    (repo / ".reflexkit" / "self-report.json").write_text("{}")
    changes = git_changes(repo)
    assert changes.problem is None
    assert changes.files == (
        FileChange(path="README.md", insertions=0, deletions=1),
        FileChange(path="logo.bin", insertions=None, deletions=None),
        FileChange(path="new_untracked.py", insertions=3, deletions=0),
        FileChange(path="src/cart/pricing.py", insertions=2, deletions=1),
        FileChange(path="src/cart/tax.py", insertions=2, deletions=0),
    )
    assert (changes.insertions, changes.deletions) == (7, 2)


def test_git_changes_against_a_base_commit(repo: Path) -> None:
    """Changes committed during the attempt count when the base is the starting commit."""
    start = git(repo, "rev-parse", "HEAD").strip()
    (repo / "migrations").mkdir()
    (repo / "migrations" / "0001_orders.sql").write_text("CREATE TABLE o (id int);\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "attempt")
    assert git_changes(repo).files == ()
    assert [f.path for f in git_changes(repo, base=start).files] == ["migrations/0001_orders.sql"]


def test_git_changes_in_a_repository_without_commits(tmp_path: Path) -> None:
    """A fresh repository compares with the empty tree."""
    git(tmp_path, "init", "-q")
    (tmp_path / "a.py").write_text("x = 1\n")
    git(tmp_path, "add", "a.py")
    assert git_changes(tmp_path).files == (FileChange(path="a.py", insertions=1, deletions=0),)


def test_git_changes_outside_a_repository(tmp_path: Path) -> None:
    """Outside a repository the list is empty and the problem is named, not raised."""
    changes = git_changes(tmp_path)
    assert changes.files == ()
    assert changes.problem == "not a git repository"


def test_odd_file_names_survive(repo: Path) -> None:
    """Spaces, tabs and non-ASCII in names come through -z unquoted."""
    (repo / "dir with space").mkdir()
    (repo / "dir with space" / "naïve\tname.py").write_text("x = 1\n")
    git(repo, "add", ".")
    assert [f.path for f in git_changes(repo).files] == ["dir with space/naïve\tname.py"]


def test_report_with_self_report(repo: Path) -> None:
    """A valid self-report fills the self-reported fields; the report validates."""
    (repo / "src" / "auth").mkdir()
    (repo / "src" / "auth" / "login.py").write_text("def login():\n    pass\n")
    report = build_report(
        IDS,
        changes=git_changes(repo),
        self_report=json.dumps(GOOD).encode(),
        verification=Verification(
            passed=True,
            command="pytest -q",
            exit_code=0,
            judge=JudgeSummary(complete=True, severity="NONE", source="heuristic"),
            ending="completed",
        ),
        settings=ReportSettings(clock=lambda: datetime(2026, 1, 31, 12, tzinfo=UTC)),
    )
    validate(report)
    assert report["schema"] == "reflexkit.report.v1"
    assert report["createdAt"] == "2026-01-31T12:00:00Z"
    assert report["confidence"] == 0.7
    assert report["mostLikelyWrong"] == GOOD["mostLikelyWrong"]
    assert report["knownNotInDiff"] == GOOD["knownNotInDiff"]
    assert report["risk"]["needsReview"] is True
    assert report["risk"]["surface"] == "auth"
    assert report["filesChanged"] == [
        {"path": "src/auth/login.py", "insertions": 2, "deletions": 0}
    ]
    assert report["provenance"]["degraded"] is False
    assert report["provenance"]["selfReport"] == "ok"


@pytest.mark.parametrize(
    ("raw", "status", "problem"),
    [
        (None, "missing", "no self-report"),
        (b"", "invalid", "empty"),
        (b"{not json", "invalid", "invalid JSON"),
        (b"[1, 2]", "invalid", "expected an object"),
        (b'{"confidence": 1.5}', "invalid", "$.confidence"),
        (b'{"confidence": "0.9"}', "invalid", "$.confidence"),
        (b'{"mostLikelyWrong": {"surface": "kernel", "description": "x"}}', "invalid", "surface"),
        (b'{"confidence": 0.5, "extra": 1}', "invalid", "$.extra: unknown key"),
        (b" " * 70_000 + b"{}", "invalid", "larger than"),
    ],
)
def test_missing_or_invalid_self_report_degrades(
    raw: bytes | None, status: str, problem: str
) -> None:
    """A missing or bad self-report leaves nulls, degraded: true, and says why."""
    report = build_report(IDS, changes=GitChanges(), self_report=raw)
    validate(report)
    assert (report["confidence"], report["mostLikelyWrong"], report["knownNotInDiff"]) == (
        None,
        None,
        None,
    )
    assert report["provenance"]["degraded"] is True
    assert report["provenance"]["selfReport"] == status
    assert any(problem in line for line in report["provenance"]["problems"])


def test_git_problem_degrades_too(tmp_path: Path) -> None:
    """A report whose file list could not be measured says so."""
    report = build_report(IDS, changes=git_changes(tmp_path), self_report=json.dumps(GOOD).encode())
    validate(report)
    assert report["provenance"]["degraded"] is True
    assert "files changed: not a git repository" in report["provenance"]["problems"]


def test_take_self_report_reads_once(tmp_path: Path) -> None:
    """The self-report is consumed, so the next attempt can't reuse a stale one."""
    path = tmp_path / ".reflexkit" / "self-report.json"
    path.parent.mkdir()
    path.write_text('{"confidence": 0.4}')
    assert take_self_report(path) == b'{"confidence": 0.4}'
    assert not path.exists()
    assert take_self_report(path) is None


def test_take_self_report_ignores_a_symlink(tmp_path: Path) -> None:
    """A self-report that is a link to another file is not followed."""
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read")
    link = tmp_path / "self-report.json"
    link.symlink_to(secret)
    assert take_self_report(link) is None
    assert secret.exists()


@pytest.mark.parametrize(
    "hostile", ["../../etc/passwd", "/abs/path", "..", ".hidden", "a/b\\c", "", "x" * 300]
)
def test_ids_never_escape_the_reports_folder(tmp_path: Path, hostile: str) -> None:
    """Run and subtask ids with separators or dots stay inside the reports folder."""
    ids = ReportIds(run_id=hostile or "r", subtask_id=hostile or "s", attempt=2)
    written = write_report(build_report(ids, changes=GitChanges(), self_report=None), tmp_path)
    assert written.resolve().is_relative_to(tmp_path.resolve())
    assert written.parent.parent == tmp_path
    assert len(written.name) < 200


def test_safe_id_keeps_plain_ids_and_separates_different_ones() -> None:
    """A plain id is unchanged; two ids that clean to the same text stay distinct."""
    assert safe_id("fix-discount_2.v1") == "fix-discount_2.v1"
    assert safe_id("a/b") != safe_id("a_b")
    assert safe_id("a/b") != safe_id("a:b")


def test_write_is_atomic_and_readable(tmp_path: Path) -> None:
    """The report lands at <run>/<subtask>-<attempt>.json and leaves no temporary file."""
    report = build_report(IDS, changes=GitChanges(), self_report=None)
    path = write_report(report, tmp_path / "reports")
    assert path == report_path(tmp_path / "reports", "run1", "discount", 1)
    assert json.loads(path.read_text()) == report
    assert [p.name for p in path.parent.iterdir()] == ["discount-1.json"]
    (tmp_path / "reports" / "run1" / "junk.json").write_text("[]")
    assert read_reports(tmp_path / "reports") == [report]


def test_instructions_describe_a_valid_self_report() -> None:
    """The JSON example the prompt shows is itself a valid self-report."""
    text = self_report_instructions(".reflexkit/self-report.json")
    example = text.split("```json\n", 1)[1].split("```", 1)[0]
    assert "`.reflexkit/self-report.json`" in text
    report = build_report(IDS, changes=GitChanges(), self_report=example.encode())
    assert report["provenance"]["selfReport"] == "ok"


def test_diff_text_shows_tracked_and_untracked_changes(repo: Path) -> None:
    """The judge's diff holds edits and new files, and none of reflexkit's own files."""
    (repo / "src" / "cart" / "pricing.py").write_text("def price(x):\n    return x * 2\n")
    (repo / "src" / "cart" / "tax.py").write_text("RATE = 0.2\n")
    (repo / ".reflexkit").mkdir()
    (repo / ".reflexkit" / "self-report.json").write_text('{"confidence": 1}')
    text = diff_text(repo)
    assert "+    return x * 2" in text
    assert "-    return x" in text
    assert "diff --git a/src/cart/tax.py b/src/cart/tax.py\nnew file mode" in text
    assert "+RATE = 0.2" in text
    assert ".reflexkit" not in text


def test_diff_text_outside_a_repository_is_empty(tmp_path: Path) -> None:
    """No repository, no diff, no exception."""
    (tmp_path / "a.py").write_text("x = 1\n")
    assert diff_text(tmp_path) == ""


def project_at(root: Path, *, enabled: bool) -> LoadedProject:
    """A project rooted at *root* with reports on or off."""
    return LoadedProject(config=ProjectConfig(reports=ReportsConfig(enabled=enabled)), root=root)


def test_reporter_off_writes_nothing(repo: Path) -> None:
    """With reports off: no prompt text, no base, no report, no file at all."""
    reporter = AttemptReporter(project_at(repo, enabled=False))
    (repo / ".reflexkit").mkdir()
    (repo / ".reflexkit" / "self-report.json").write_text('{"confidence": 1}')
    before = sorted(p for p in repo.rglob("*") if ".git" not in p.parts)
    assert reporter.prompt_section() == ""
    assert reporter.start() is None
    (repo / "src" / "cart" / "pricing.py").write_text("changed\n")
    assert reporter.finish(IDS, verification=Verification(passed=True)) is None
    assert sorted(p for p in repo.rglob("*") if ".git" not in p.parts) == before


def test_reporter_around_an_attempt(repo: Path) -> None:
    """start() clears a stale self-report and pins the base; finish() writes a valid report."""
    reporter = AttemptReporter(project_at(repo, enabled=True))
    stale = repo / ".reflexkit" / "self-report.json"
    stale.parent.mkdir()
    stale.write_text('{"confidence": 0.99}')
    assert ".reflexkit/self-report.json" in reporter.prompt_section()
    base = reporter.start()
    assert not stale.exists()
    (repo / "db").mkdir()
    (repo / "db" / "schema.sql").write_text("CREATE TABLE t (id int);\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "the agent commits")
    stale.write_text('{"confidence": 0.6}')
    report = reporter.finish(IDS, base=base, verification=Verification(passed=False))
    assert report is not None
    validate(report)
    assert report["confidence"] == 0.6
    assert report["risk"]["needsReview"] is True
    assert report["risk"]["surface"] == "data"
    assert (repo / ".reflexkit" / "reports" / "run1" / "discount-1.json").is_file()


def test_reporter_never_raises_when_the_folder_is_unwritable(repo: Path) -> None:
    """A reports path that can't be created is logged, not raised."""
    (repo / "blocker").write_text("a file where the folder should be")
    config = ProjectConfig(reports=ReportsConfig(enabled=True, path="blocker/reports"))
    reporter = AttemptReporter(LoadedProject(config=config, root=repo))
    assert reporter.finish(IDS) is None


# --- repo and reflectionMode (the Mosaic design's fields, #28) ---------------------------------


def run_with_reports(root: Path, monkeypatch: pytest.MonkeyPatch, reflexion: dict[str, Any]) -> Any:
    """`reflexkit run` with reports on in the git repository *root*; its one report."""
    from click.testing import CliRunner  # noqa: PLC0415 -- only these tests drive the CLI

    from reflexkit.cli import cli  # noqa: PLC0415

    (root / ".reflexkit").mkdir(exist_ok=True)
    (root / ".reflexkit" / "project.json").write_text(
        json.dumps({"reports": {"enabled": True}, "reflexion": reflexion})
    )
    (root / "script.json").write_text(json.dumps({"price": [{"src/cart/pricing.py": "x = 2\n"}]}))
    task = {"id": "cart", "description": "", "subtasks": [{"id": "price", "description": "."}]}
    (root / "task.json").write_text(json.dumps(task))
    monkeypatch.chdir(root)
    monkeypatch.delenv("REFLEXKIT_CONFIG", raising=False)
    result = CliRunner().invoke(
        cli, ["run", "task.json", "--subagent", "scripted", "--script", "script.json"]
    )
    assert result.exit_code == 0, result.output + result.stderr
    [path] = (root / ".reflexkit" / "reports").rglob("*.json")
    report = json.loads(path.read_text())
    validate(report)
    return report


@pytest.mark.parametrize(
    ("reflexion", "mode"),
    [({"backend": "heuristic"}, "orchestrated"), ({"enabled": False}, "off")],
)
def test_a_run_reports_its_repo_and_reflection_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reflexion: dict[str, Any], mode: str
) -> None:
    """`repo` is the repository root's name, seen from a subfolder too; the mode is the loop's."""
    root = tmp_path / "shop-api"
    (root / "src" / "cart").mkdir(parents=True)
    (root / "src" / "cart" / "pricing.py").write_text("x = 1\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "start")
    report = run_with_reports(root, monkeypatch, reflexion)
    assert report["repo"] == "shop-api"
    assert report["provenance"]["reflectionMode"] == mode
    assert report["provenance"]["source"] == "orchestrator"


def test_a_stop_hook_report_is_solo_and_outside_git_names_the_folder(tmp_path: Path) -> None:
    """The stop hook's reports are solo; with no repository the project folder names it."""
    root = tmp_path / "notes"
    root.mkdir()
    reporter = AttemptReporter(project_at(root, enabled=True), source="stop-hook")
    report = reporter.finish(IDS)
    assert report is not None
    validate(report)
    assert report["repo"] == "notes"
    assert report["provenance"]["reflectionMode"] == "solo"


def test_the_repo_is_the_top_of_the_repository(repo: Path) -> None:
    """A project in a subfolder of a repository reports the repository, not the subfolder."""
    sub = repo / "services" / "billing"
    sub.mkdir(parents=True)
    report = AttemptReporter(project_at(sub, enabled=True)).finish(IDS)
    assert report is not None
    assert report["repo"] == repo.name
