"""git's refusals, conflicts and hooks."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.reflection._heuristic import HeuristicGenerator

from ..conftest import (  # noqa: TID252 -- tests/ is no package; importlib mode resolves it
    reflection_text,
    run_in_bash,
)

GEN = HeuristicGenerator()


_GIT_ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/nonexistent",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Dev",
    "GIT_AUTHOR_EMAIL": "dev@example.org",
    "GIT_COMMITTER_NAME": "Dev",
    "GIT_COMMITTER_EMAIL": "dev@example.org",
    "LC_ALL": "C",
}


def _git(cwd: Path, *commands: str) -> None:
    for command in commands:
        subprocess.run(
            ["bash", "-c", command], cwd=cwd, env=_GIT_ENV, check=True, capture_output=True
        )


GIT_ENV = {
    "GIT_AUTHOR_NAME": "Dev",
    "GIT_AUTHOR_EMAIL": "dev@example.org",
    "GIT_COMMITTER_NAME": "Dev",
    "GIT_COMMITTER_EMAIL": "dev@example.org",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/nonexistent",
}


@pytest.mark.skipif(shutil.which("git") is None, reason="no git on this machine")
def test_git_push_without_upstream_quotes_the_command_it_suggests(tmp_path: Path) -> None:
    """The command git prints indented on a line of its own is the hint."""
    _git(
        tmp_path,
        "git init -q --bare remote.git",
        "git init -q -b main work",
        "cd work && git remote add origin ../remote.git && echo a > a && git add a "
        "&& git commit -qm a && git checkout -q -b topic/export",
    )
    failure = run_in_bash("git push", tmp_path / "work", env=_GIT_ENV)
    text = reflection_text(GEN.generate(failure))
    assert "has no upstream branch" in text
    assert "git push --set-upstream origin topic/export" in text


@pytest.mark.skipif(shutil.which("git") is None, reason="no git on this machine")
def test_git_stash_pop_conflict_says_the_stash_is_kept(tmp_path: Path) -> None:
    """A conflicting ``git stash pop`` keeps the stash: git's own verdict is quoted."""
    _git(
        tmp_path,
        "git init -q -b main . && printf 'workers = 2\\n' > app.ini && git add app.ini "
        "&& git commit -qm init",
        "printf 'workers = 4\\n' > app.ini && git stash -q",
        "printf 'workers = 8\\n' > app.ini && git commit -qam eight",
    )
    failure = run_in_bash("git stash pop", tmp_path, env=_GIT_ENV)
    text = reflection_text(GEN.generate(failure))
    assert "CONFLICT (content): Merge conflict in app.ini" in text
    assert "The stash entry is kept in case you need it again." in text


@pytest.mark.skipif(shutil.which("git") is None, reason="no git on this machine")
def test_git_commit_with_nothing_staged_is_tool_misuse(tmp_path: Path) -> None:
    """``no changes added to commit`` has no error line: the files were never staged."""
    for command in (
        "git init -q -b main",
        "git config user.email dev@example.org",
        "git config user.name Dev",
        "echo a > notes.txt && git add notes.txt && git commit -qm init",
    ):
        subprocess.run(["bash", "-c", command], cwd=tmp_path, check=True)
    (tmp_path / "notes.txt").write_text("b\n")
    (tmp_path / "todo.txt").write_text("c\n")
    reflection = GEN.generate(run_in_bash("git commit -m 'Update notes'", tmp_path))
    text = reflection_text(reflection)
    assert "no changes added to commit" in text
    assert "todo.txt" in text  # the new file git lists as untracked
    assert reflection.category == ReflectionCategory.TOOL_MISUSE


@pytest.mark.skipif(shutil.which("git") is None, reason="no git on this machine")
def test_git_pull_on_a_detached_head_is_quoted_as_tool_misuse(tmp_path: Path) -> None:
    """``git pull`` off any branch prints no ``error:`` line, only git's own sentence."""
    _git(
        tmp_path,
        "git init -q -b main",
        "echo 1 > v && git add v && git commit -qm one",
        "echo 2 > v && git commit -qam two",
        "git checkout -q HEAD~1",
    )
    failure = run_in_bash("git pull", tmp_path, env=GIT_ENV)
    reflection = GEN.generate(failure)
    text = reflection_text(reflection)
    assert "You are not currently on a branch." in text
    assert reflection.category is ReflectionCategory.TOOL_MISUSE
    assert reflection.failure_type is FailureType.TOOL_ERROR


@pytest.mark.skipif(shutil.which("git") is None, reason="no git on this machine")
def test_git_push_declined_by_a_hook_quotes_the_hooks_message(tmp_path: Path) -> None:
    """The server's hook says why on ``remote:`` lines; fetching would not help."""
    remote, work = tmp_path / "remote.git", tmp_path / "work"
    work.mkdir()
    _git(tmp_path, f"git init -q --bare -b main {remote}")
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(
        "#!/bin/sh\necho 'commit message must reference a ticket (ABC-123)' >&2\nexit 1\n",
        encoding="utf-8",
    )
    hook.chmod(0o755)
    _git(
        work,
        "git init -q -b main",
        f"git remote add origin {remote}",
        "echo x > a && git add a && git commit -qm 'tweak'",
    )
    failure = run_in_bash("git push origin main", work, env=GIT_ENV)
    reflection = GEN.generate(failure)
    text = reflection_text(reflection)
    assert "commit message must reference a ticket (ABC-123)" in text
    assert "(pre-receive hook declined)" in text
    assert "Fetch and integrate" not in text


@pytest.mark.skipif(shutil.which("git") is None, reason="no git on this machine")
def test_git_refusal_names_the_paths_it_lists(tmp_path: Path) -> None:
    """``would be overwritten by checkout:`` lists the paths; git's verdict is ``Aborting``."""
    steps = [
        "git init -q -b main",
        "git -c user.name=a -c user.email=a@example.org commit -q --allow-empty -m init",
        "echo one > notes.md && git add notes.md",
        "git -c user.name=a -c user.email=a@example.org commit -q -m notes",
        "git branch release && git checkout -q release && echo rel > notes.md",
        "git -c user.name=a -c user.email=a@example.org commit -q -am rel",
        "git checkout -q main && echo local > notes.md",
    ]
    for step in steps:
        subprocess.run(["bash", "-c", step], cwd=tmp_path, check=True, capture_output=True)
    failure = run_in_bash("git checkout release", tmp_path)
    assert "would be overwritten by checkout" in failure.error_output
    text = reflection_text(GEN.generate(failure))
    assert "notes.md" in text
    assert "Aborting" in text
