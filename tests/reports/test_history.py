"""The P2 harness, `reflexkit git-history`, on real repositories with dated histories (#28)."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reflexkit.cli import cli
from reflexkit.reports._history import Commit, classify

START = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


class Repo:
    """A git repository whose every commit is dated by the test, not by the clock."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True)
        self.git("init", "-q", "-b", "main")
        self.git("config", "user.email", "dev@example.com")
        self.git("config", "user.name", "dev")

    def git(self, *args: str, at: datetime = START) -> str:
        """Run git at the time *at*; its stdout."""
        stamp = at.strftime("%Y-%m-%dT%H:%M:%S+0000")
        env = {**os.environ, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
        return subprocess.run(
            ["git", *args], cwd=self.root, env=env, check=True, capture_output=True, text=True
        ).stdout

    def commit(self, message: str, files: dict[str, str], *, at: datetime) -> str:
        """Write *files*, commit them with *message* at *at*; the new commit's sha."""
        for name, text in files.items():
            path = self.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        self.git("add", ".", at=at)
        self.git("commit", "-q", "-m", message, at=at)
        return self.git("rev-parse", "HEAD").strip()

    def feature_branch(self, name: str, files: dict[str, str], *, at: datetime) -> str:
        """A branch with one commit, merged with --no-ff an hour later; the merge's sha."""
        self.git("checkout", "-q", "-b", name, at=at)
        self.commit(f"Add {name}", files, at=at)
        self.git("checkout", "-q", "main", at=at)
        merged = at + timedelta(hours=1)
        self.git("merge", "-q", "--no-ff", name, "-m", f"Merge branch '{name}'", at=merged)
        return self.git("rev-parse", "HEAD").strip()

    def revert(self, sha: str, reason: str, *, at: datetime) -> str:
        """Revert *sha* with *reason* in the body, at *at*."""
        self.git("revert", "--no-edit", "--no-commit", sha, at=at)
        subject = self.git("log", "-1", "--format=%s", sha).strip()
        body = f'Revert "{subject}"\n\nThis reverts commit {sha}.\n\n{reason}'
        self.git("commit", "-q", "-m", body, at=at)
        return self.git("rev-parse", "HEAD").strip()


def day(n: int, hours: int = 0) -> datetime:
    """*n* days (and *hours*) after the start."""
    return START + timedelta(days=n, hours=hours)


@pytest.fixture
def shop(tmp_path: Path) -> Repo:
    """A shop's history: each gate's failures, and look-alikes that are none."""
    repo = Repo(tmp_path / "shop")
    repo.commit(
        "start",
        {
            "src/cart.py": "total = 0\n",
            "src/auth/session.py": "ttl = 1\n",
            "src/export.py": "x = 1\n",
            "tests/test_export.py": "def test(): pass\n",
            "README.md": "# shop\n",
        },
        at=day(0),
    )
    # self_reflection: a plain feature, fixed the next day; nothing checks or flags it
    repo.feature_branch("cart-discount", {"src/cart.py": "total = 1\n"}, at=day(10))
    repo.commit("fix: rounding in the cart total", {"src/cart.py": "total = 2\n"}, at=day(11))
    # human_review: a change to the session code, fixed ten hours later
    repo.commit("feat: throttle logins", {"src/auth/session.py": "ttl = 2\n"}, at=day(20))
    repo.commit("Fix the lockout counter", {"src/auth/session.py": "ttl = 3\n"}, at=day(20, 10))
    # ci: a squash-merged pull request, then a fix that names the failing test
    repo.commit("Add CSV export (#12)", {"src/export.py": "x = 2\n"}, at=day(30))
    repo.commit(
        "fix: failing test of the export",
        {"src/export.py": "x = 3\n", "tests/test_export.py": "def test(): assert 1\n"},
        at=day(30, 5),
    )
    # self_reflection: a revert with no reason a check would give
    cached = repo.commit("feat: cache prices", {"src/prices.py": "cache = {}\n"}, at=day(40))
    repo.revert(cached, "Prices went stale for a day.", at=day(41))
    # human_review: a revert of an infra change
    deployed = repo.commit("feat: deploy on fly", {"fly.toml": "app = 'shop'\n"}, at=day(50))
    repo.revert(deployed, "The new config broke staging.", at=day(50, 2))
    # none: a hotfix branch's merge is no feature change a later fix could be charged to
    repo.feature_branch("hotfix/cart", {"src/cart.py": "total = 4\n"}, at=day(55))
    repo.commit("fix: cart total once more", {"src/cart.py": "total = 5\n"}, at=day(55, 3))
    # none: a fix after the window, and a fix of files no feature touched
    repo.feature_branch("search", {"src/search.py": "q = 1\n"}, at=day(60))
    repo.commit("fix: search ranking", {"src/search.py": "q = 2\n"}, at=day(65))
    repo.commit("fix: typo in the readme", {"README.md": "# Shop\n"}, at=day(66))
    return repo


def history(root: Path, *args: str) -> dict[str, Any]:
    """`reflexkit git-history PATH --json ARGS`, from an empty folder; the parsed JSON."""
    result = CliRunner().invoke(cli, ["git-history", str(root), "--json", *args])
    assert result.exit_code == 0, result.output + result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


@pytest.mark.usefixtures("project_dir")  # run from an empty folder with no project.json
def test_each_failure_goes_to_the_gate_that_would_have_caught_it(shop: Repo) -> None:
    """Reverts and quick fixes are found, charged to their original, and bucketed."""
    data = history(shop.root)
    found = {s["subject"]: s for s in data["signals"]}
    assert {s: f["gate"] for s, f in found.items()} == {
        "fix: rounding in the cart total": "self_reflection",
        "Fix the lockout counter": "human_review",
        "fix: failing test of the export": "ci",
        'Revert "feat: cache prices"': "self_reflection",
        'Revert "feat: deploy on fly"': "human_review",
    }
    cart = found["fix: rounding in the cart total"]
    assert cart["kind"] == "quick_fix"
    assert cart["originalSubject"] == "Merge branch 'cart-discount'"  # the merge, not its commit
    assert cart["hoursAfter"] == 23.0
    revert = found['Revert "feat: deploy on fly"']
    assert (revert["kind"], revert["originalSubject"], revert["hoursAfter"]) == (
        "revert",
        "feat: deploy on fly",
        2.0,
    )
    assert "infra" in revert["why"]
    assert data["tally"] == {"ci": 1, "human_review": 2, "self_reflection": 2}
    assert (data["repo"], data["days"], data["fixHours"]) == ("shop", 180, 72)
    assert data["until"] == "2025-05-06T09:00:00Z"  # the newest commit, not today
    kill = data["killCondition"]
    assert kill["met"] is False
    assert "2 of 5 signals (40%)" in kill["verdict"]


@pytest.mark.usefixtures("project_dir")
def test_the_window_and_the_fix_hours_are_options(shop: Repo) -> None:
    """--days counts back from the newest commit; --fix-hours widens what a quick fix is."""
    recent = history(shop.root, "--days", "20")
    assert [s["subject"] for s in recent["signals"]] == ['Revert "feat: deploy on fly"']
    assert recent["killCondition"]["met"] is None  # 1 signal: undecided
    wide = history(shop.root, "--fix-hours", "200")
    assert "fix: search ranking" in {s["subject"] for s in wide["signals"]}
    assert "fix: typo in the readme" not in {s["subject"] for s in wide["signals"]}


@pytest.mark.usefixtures("project_dir")
def test_a_history_whose_checks_catch_everything_meets_the_kill_condition(tmp_path: Path) -> None:
    """Every repair names a check: the self-reflection bucket is empty, the condition MET."""
    repo = Repo(tmp_path / "lib")
    repo.commit("start", {"lib/a.py": "0\n"}, at=day(0))
    for n in range(1, 6):
        repo.commit(f"feat: step {n}", {"lib/a.py": f"{n}\n"}, at=day(n))
        repo.commit(f"fix: lint error from step {n}", {"lib/a.py": f"{n}.\n"}, at=day(n, 1))
    result = CliRunner().invoke(cli, ["git-history", str(repo.root)])
    assert result.exit_code == 0, result.stderr
    assert "kill condition (pre-registered): only-self-reflection bucket near empty" in (
        result.stdout
    )
    assert "MET: 0 of 5 signals (0%)" in result.stdout


@pytest.mark.usefixtures("project_dir")
def test_not_a_repository_is_bad_input(tmp_path: Path) -> None:
    """A folder outside git, or an unknown revision: exit 2 and one line."""
    result = CliRunner().invoke(cli, ["git-history", str(tmp_path)])
    assert result.exit_code == 2
    assert "not a git repository" in result.stderr
    repo = Repo(tmp_path / "r")
    repo.commit("start", {"a": "1"}, at=day(0))
    for rev in ("no-such-branch", "--output=/tmp/x"):
        result = CliRunner().invoke(cli, ["git-history", str(repo.root), "--rev", rev])
        assert result.exit_code == 2
        assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("subject", "gate"),
    [
        ("fix: flaky checkout test", "ci"),
        ("fix: broken build on Windows", "ci"),
        ("fix: type errors in the cart", "ci"),
        ("fix: wrong content type header", "self_reflection"),
        ("fix: build the cache key from the user id", "self_reflection"),
        ("fix: failing login for SSO users", "self_reflection"),
    ],
)
def test_only_words_that_name_a_check_put_a_fix_in_ci(subject: str, gate: str) -> None:
    """The ci words are checks (a flaky test, a broken build), not the same words in prose."""
    fix = Commit(sha="b", parents=("a",), at=START, subject=subject, files=("src/cart.py",))
    assert classify(fix, None)[0] == gate
