"""Git under confinement, with real git processes and a repository set up to attack."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from reflexkit._git import git_env, git_refusal, program_keys
from reflexkit.orchestrator._verify import modified_files

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path]:
    """A repository whose config and hooks run programs that leave marks outside it."""
    repo, marks = tmp_path / "repo", tmp_path / "marks"
    repo.mkdir()
    marks.mkdir()
    git = ["git", "-C", str(repo)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "config", "user.email", "a@b.c"], check=True)
    subprocess.run([*git, "config", "user.name", "a"], check=True)
    (repo / "f.txt").write_text("one\n")
    subprocess.run([*git, "add", "f.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    for name in ("fsmonitor", "pre-commit", "pager", "editor"):
        script = tmp_path / f"{name}.sh"
        script.write_text(f"#!/bin/sh\ntouch {marks / name}\ncat\n")
        script.chmod(0o755)
    hooks = repo / ".git" / "hooks"
    shutil.copy(tmp_path / "pre-commit.sh", hooks / "pre-commit")
    for key, value in (
        ("core.fsmonitor", str(tmp_path / "fsmonitor.sh")),
        ("core.pager", str(tmp_path / "pager.sh")),
        ("core.editor", str(tmp_path / "editor.sh")),
        ("alias.st", f"!touch {marks / 'alias'}"),
    ):
        subprocess.run([*git, "config", key, value], check=True)
    (repo / "f.txt").write_text("two\n")
    return repo, marks


def test_the_hostile_repository_really_runs_its_programs(hostile: tuple[Path, Path]) -> None:
    """Without confinement git runs them (so the tests below test something)."""
    repo, marks = hostile
    subprocess.run(["git", "status"], cwd=repo, capture_output=True, check=False)
    subprocess.run(["git", "st"], cwd=repo, capture_output=True, check=False)
    assert {"fsmonitor", "alias"} <= {p.name for p in marks.iterdir()}


def test_reflexkits_own_git_runs_none_of_them(hostile: tuple[Path, Path]) -> None:
    """The own `git status` of reflexkit (changed files) under a planted fsmonitor runs nothing."""
    repo, marks = hostile
    assert "f.txt" in modified_files(repo)
    assert list(marks.iterdir()) == []


@pytest.mark.parametrize(
    "command",
    [
        "git status",
        "git diff",
        "git log -p",
        "git show HEAD",
        "git add -A && git commit -m two",
        "git commit --amend --no-edit",
        "git config --get core.fsmonitor",
    ],
)
def test_allowed_commands_run_no_program_of_the_repository(
    hostile: tuple[Path, Path], command: str
) -> None:
    """What the agent may run, run by a real shell with the confined environment: no mark."""
    repo, marks = hostile
    assert git_refusal(command) is None
    subprocess.run(
        ["bash", "-c", command], cwd=repo, env=git_env(), capture_output=True, check=False
    )
    assert list(marks.iterdir()) == []


@pytest.mark.parametrize(
    "command",
    [
        "git -c alias.x='!touch /tmp/pwned' x",
        "git -c core.fsmonitor=/tmp/x status",
        "git --config-env=core.pager=HOME log",
        "git config core.fsmonitor /tmp/x",
        "git config --add alias.y '!sh'",
        "git config --unset core.hooksPath",
        "git st",
        "git diff --output=/tmp/out",
        "git log --output /tmp/out",
        "git format-patch -o /tmp HEAD~1",
        "git -C /tmp status",
        "git --git-dir=/tmp/x/.git status",
        "git --work-tree=/tmp status",
        "git --exec-path=/tmp status",
        "git status > /tmp/out",
        "git diff >> ../out",
        "git ls-remote --upload-pack='touch /tmp/x' .",
        "git fetch 'ext::sh -c touch% /tmp/x'",
        "git rebase --exec 'touch /tmp/x' HEAD~1",
        "git rebase -x 'touch /tmp/x' HEAD~1",
        "git difftool -y",
        "git worktree add /tmp/wt",
        "git clone . /tmp/copy",
        "git archive -o /tmp/a.tar HEAD",
        "git bundle create /tmp/b HEAD",
        "git status; git -c alias.x='!sh' x",
        "git status\ngit -c alias.x='!sh' x",
        "git status && git $(echo -c) x",
        "GIT_DIR=/tmp/x git status",
        "env GIT_CONFIG_COUNT=0 git status",
        "xargs git < list",
        "g''it -c alias.x='!sh' x",
        "/usr/bin/git -c alias.x='!sh' x",
    ],
)
def test_commands_that_configure_run_or_write_outside_are_refused(command: str) -> None:
    """Each of these sets configuration, runs a program or writes outside: refused, with why."""
    why = git_refusal(command)
    assert why is not None
    assert why


def test_refused_commands_really_would_have_escaped(hostile: tuple[Path, Path]) -> None:
    """The issue's three, run unconfined on purpose: each leaves its mark (what is refused)."""
    repo, marks = hostile
    for command in (
        f"git -c alias.x='!touch {marks / 'c'}' x",
        f"git diff --output={marks / 'd'}",
    ):
        subprocess.run(["bash", "-c", command], cwd=repo, capture_output=True, check=False)
        assert git_refusal(command) is not None
    assert {"c", "d"} <= {p.name for p in marks.iterdir()}


def test_other_commands_are_left_to_the_permission_rules() -> None:
    """Commands that run no git are not this check's business; grep for 'git' is fine."""
    assert git_refusal("pytest -q") is None
    assert git_refusal("grep -r git docs") is None
    assert git_refusal("python3 -c 'print(1)' > out.txt") is None


@pytest.fixture
def drivers(hostile: tuple[Path, Path]) -> tuple[Path, Path]:
    """The hostile repository with filter, diff and merge drivers of its own naming.

    ``.gitattributes`` sends every file through them: the configuration an agent can write
    into ``.git/config`` with its file tools, whatever git commands it is allowed.
    """
    repo, marks = hostile
    script = repo.parent / "driver.sh"
    script.write_text(f'#!/bin/sh\ntouch "{marks}/$1"\ncat\n')
    script.chmod(0o755)
    for key, value in (
        ("filter.any-name.clean", f"{script} clean"),
        ("filter.any-name.smudge", f"{script} smudge"),
        ("filter.any-name.process", f"{script} process"),
        ("diff.any-name.command", f"{script} diffcmd"),
        ("diff.any-name.textconv", f"{script} textconv <"),
        ("merge.any-name.driver", f"{script} merge"),
        ("gpg.program", f"{script} gpg"),
        ("commit.gpgSign", "true"),
        ("interactive.diffFilter", f"{script} difffilter"),
    ):
        subprocess.run(["git", "-C", str(repo), "config", key, value], check=True)
    (repo / ".gitattributes").write_text("* filter=any-name diff=any-name merge=any-name\n")
    return repo, marks


def test_drivers_of_any_name_really_run_unconfined(drivers: tuple[Path, Path]) -> None:
    """Without confinement `git diff` runs them (so the tests below test something)."""
    repo, marks = drivers
    subprocess.run(["git", "diff"], cwd=repo, capture_output=True, check=False)
    assert list(marks.iterdir())


def test_reflexkits_own_git_runs_no_driver_of_the_repository(drivers: tuple[Path, Path]) -> None:
    """git_env for a repository empties every program its configuration names, by any name.

    Before, the confined `git diff` ran ``diff.<name>.command`` and the filters.
    """
    repo, marks = drivers
    env = git_env(repository=repo)
    for command in (
        ["git", "status"],
        ["git", "diff"],
        ["git", "log", "-p", "-1"],
        ["git", "add", "-A"],
        ["git", "commit", "-qm", "three"],
        ["git", "checkout", "HEAD", "--", "f.txt"],
    ):
        subprocess.run(command, cwd=repo, env=env, capture_output=True, check=False)
    modified_files(repo)  # reflexkit's own status call
    assert sorted(p.name for p in marks.iterdir()) == []


def test_the_agents_git_is_refused_while_the_repository_names_a_program(
    drivers: tuple[Path, Path],
) -> None:
    """The agent's environment was fixed at launch: a driver it adds later refuses its git."""
    repo, _ = drivers
    why = git_refusal("git status", repository=repo)
    assert why is not None
    assert "filter.any-name.clean" in why


@pytest.mark.parametrize(
    "command",
    [
        "git grep -O'touch /tmp/x' f",
        "git grep -Otouch f",
        "git grep -O touch f",
        "git diff --outp=/tmp/out",
        "git diff --out /tmp/out",
        "git show --output-dir /tmp",
        "git diff --ext-d",
        "git log --textc -p",
        "git rebase --exe='touch /tmp/x' HEAD~1",
        "git rebase -xtouch HEAD~1",
        "git grep --open-f=x f",
        "git config --fil=/tmp/x --list",
    ],
)
def test_abbreviated_and_glued_options_are_refused(command: str) -> None:
    """Git takes a unique start of a long option, and a short option's value glued on."""
    assert git_refusal(command) is not None, command


@pytest.mark.parametrize(
    "command",
    ["git diff --text", "git log --glob=refs/heads", "git commit --edit -m x", "git diff --stat"],
)
def test_options_that_are_starts_of_refused_ones_but_git_s_own_stay_allowed(command: str) -> None:
    """``--text`` is an option of its own, not an abbreviation of ``--textconv``."""
    assert git_refusal(command) is None, command


def test_the_agents_git_diff_still_shows_the_change(hostile: tuple[Path, Path]) -> None:
    """Confined `git diff` prints the diff (an empty ``diff.external`` made it die)."""
    repo, _ = hostile
    done = subprocess.run(
        ["git", "diff"], cwd=repo, env=git_env(), capture_output=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert b"+two" in done.stdout


@pytest.fixture
def planted(hostile: tuple[Path, Path]) -> tuple[Path, Path]:
    """The hostile repository with programs the agent wrote into it.

    A fake ``git``, a merge strategy ``git-merge-pwn``, and a nested repository whose
    textconv driver leaves a mark.
    """
    repo, marks = hostile
    own = ["git", "-C", str(repo), "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"]
    for args in (  # two branches that diverged: a merge of them runs the strategy
        ["branch", "-M", "trunk"],
        ["branch", "other"],
        ["commit", "--allow-empty", "-qm", "two"],
        ["checkout", "-q", "other"],
        ["commit", "--allow-empty", "-qm", "three"],
    ):
        subprocess.run([*own, *args], check=True, capture_output=True)
    for name in ("git", "git-merge-pwn", "evil"):
        script = repo / name
        script.write_text(f"#!/bin/sh\ntouch {marks / name}\n")
        script.chmod(0o755)
    nested = repo / "sub"
    nested.mkdir()
    subprocess.run(["git", "init", "-q", str(nested)], check=True)
    (nested / "f.txt").write_text("one\n")
    subprocess.run(["git", "-C", str(nested), "add", "f.txt"], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(nested),
            "-c",
            "user.email=a@b.c",
            "-c",
            "user.name=a",
            "commit",
            "-qm",
            "one",
        ],
        check=True,
    )
    subprocess.run(
        [
            "git",
            "-C",
            str(nested),
            "config",
            "diff.nested.textconv",
            f"touch {marks / 'nested'};cat",
        ],
        check=True,
    )
    (nested / ".gitattributes").write_text("* diff=nested\n")
    (nested / "f.txt").write_text("two\n")
    return repo, marks


ESCAPES = {
    "PATH assignment": ("PATH=.:$PATH git status", "git"),
    "PATH exported first": ("export PATH=.:$PATH; git status", "git"),
    "hashed path": ("hash -p ./evil git; git status", "evil"),
    "function named git": ("git() { ./evil; }; git status", "evil"),
    "a git of the agent's": ("./git status", "git"),
    "merge strategy on PATH": (
        f"PATH=.:$PATH {shutil.which('git')} merge -s pwn trunk",
        "git-merge-pwn",
    ),
    "a nested repository": ("cd sub && git diff", "nested"),
}


@pytest.mark.parametrize(("command", "mark"), ESCAPES.values(), ids=ESCAPES.keys())
def test_ways_around_the_git_check_are_refused(
    planted: tuple[Path, Path], command: str, mark: str
) -> None:
    """Each really runs the agent's program under the confined environment, and is refused."""
    repo, marks = planted
    subprocess.run(
        ["bash", "-c", command],
        cwd=repo,
        env=git_env(repository=repo),
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert mark in {p.name for p in marks.iterdir()}, command  # the escape is real
    assert git_refusal(command, repository=repo) is not None, command


@pytest.mark.parametrize(
    "command",
    [
        "git config core.fsmonitor list",
        "git config set core.pager get",
        "git config include.path list",
        "git merge --strategy=pwn HEAD",
        "git rebase -s pwn HEAD~1",
        "git merge -spwn HEAD",
    ],
)
def test_config_writes_and_strategies_of_no_git_of_its_own_are_refused(command: str) -> None:
    """A write that happens to hold the word ``list``; a strategy git runs from PATH."""
    assert git_refusal(command) is not None, command


def test_the_nested_repository_of_the_agents_shell_is_judged(planted: tuple[Path, Path]) -> None:
    """The agent's shell may already be in the nested repository (its cwd persists).

    Its git is judged by the configuration of the repository git finds from there.
    """
    repo, _ = planted
    assert git_refusal("git diff", repository=repo / "sub") is not None
    assert git_refusal("git status", repository=repo) is None


@pytest.mark.parametrize(
    "command",
    [
        "LC_ALL=C git log -1",
        "git merge -s ours HEAD",
        "git merge --strategy=ort HEAD",
        "git config --get user.name",
        "git config list",
        "git config get user.email",
    ],
)
def test_harmless_settings_stay_allowed(command: str) -> None:
    """A locale, git's own strategies and configuration reads are not refused."""
    assert git_refusal(command) is None, command


@pytest.fixture
def submodule(tmp_path: Path) -> tuple[Path, Path]:
    """A repository with a submodule whose own configuration names programs.

    Drivers (``filter.<name>.clean``, ``diff.<name>.textconv``) and ``core.fsmonitor`` in
    ``.git/modules/sub/config``, sent every file by the submodule's ``.gitattributes``, and
    a change in the submodule: the top's ``git status`` runs git in the submodule.
    """
    marks, inner, top = tmp_path / "marks", tmp_path / "inner", tmp_path / "top"
    marks.mkdir()
    own = ["-c", "user.email=a@b.c", "-c", "user.name=a", "-c", "protocol.file.allow=always"]
    env = git_env({"PATH": "/usr/bin:/bin"})
    inner.mkdir()
    (inner / "f.txt").write_text("one\n")
    for args in (
        ["init", "-q", str(inner)],
        ["-C", str(inner), "add", "f.txt"],
        ["-C", str(inner), *own, "commit", "-q", "-m", "one"],
        ["init", "-q", str(top)],
        ["-C", str(top), *own, "submodule", "add", "-q", str(inner), "sub"],
        ["-C", str(top), *own, "commit", "-qm", "sub"],
    ):
        subprocess.run(["git", *args], check=True, capture_output=True, env=env)
    script = tmp_path / "driver.sh"
    script.write_text(f'#!/bin/sh\ntouch "{marks}/$1"\ncat\n')
    script.chmod(0o755)
    config = top / ".git" / "modules" / "sub" / "config"
    for key, value in (
        ("filter.evil.clean", f"{script} clean"),
        ("diff.evil.textconv", f"{script} textconv <"),
        ("core.fsmonitor", f"{script} fsmonitor"),
    ):
        subprocess.run(["git", "config", "--file", str(config), key, value], check=True)
    (top / "sub" / ".gitattributes").write_text("* filter=evil diff=evil\n")
    (top / "sub" / "f.txt").write_text("two\n")
    return top, marks


def test_a_submodules_programs_really_run_unconfined(submodule: tuple[Path, Path]) -> None:
    """The top's `git status` runs them in the submodule (so the test below tests something)."""
    top, marks = submodule
    env = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}
    subprocess.run(["git", "status"], cwd=top, env=env, capture_output=True, check=False)
    assert {"clean", "fsmonitor"} <= {p.name for p in marks.iterdir()}


@pytest.mark.parametrize(
    "command",
    [
        ["git", "status"],
        ["git", "diff", "--submodule=diff"],
        ["git", "-C", "sub", "status"],
        ["git", "-C", "sub", "diff"],
        ["git", "-C", "sub", "add", "-A"],
    ],
)
def test_no_program_of_a_submodule_runs_confined(
    submodule: tuple[Path, Path], command: list[str]
) -> None:
    """git_env empties a submodule's drivers and reaches the git run in the submodule.

    Before, the drivers of ``.git/modules/sub/config`` were not found, and the fixed settings
    (``core.fsmonitor``, hooks) went in ``GIT_CONFIG_COUNT``, which git drops for the git it
    runs in a submodule: the top's `git status` ran the submodule's filter and fsmonitor.
    """
    top, marks = submodule
    subprocess.run(command, cwd=top, env=git_env(repository=top), capture_output=True, check=False)
    modified_files(top)  # reflexkit's own status call
    assert sorted(p.name for p in marks.iterdir()) == []


def test_a_driver_added_to_a_submodule_refuses_the_agents_git(
    submodule: tuple[Path, Path],
) -> None:
    """Keys found at launch are emptied; one a submodule's configuration gains later refuses."""
    top, _ = submodule
    found = program_keys(top)
    assert {"filter.evil.clean", "diff.evil.textconv"} <= set(found)
    assert "core.worktree" not in found  # git's own, pointing at the submodule's folder
    assert git_refusal("git status", repository=top, neutralised=found) is None
    config = top / ".git" / "modules" / "sub" / "config"
    subprocess.run(["git", "config", "--file", str(config), "merge.x.driver", "sh"], check=True)
    why = git_refusal("git status", repository=top, neutralised=found)
    assert why is not None
    assert "merge.x.driver" in why


OUTSIDE = [
    "git diff {secret} f.txt",
    "git diff --no-index {secret} f.txt",
    "git diff --no-inde {secret} f.txt",
    "git blame --contents {secret} -- f.txt",
    "git commit -F {secret}",
    "git commit -F{secret}",
    "git commit --allow-empty --file={secret}",
    "git grep -f {secret} -- f.txt",
    "git diff link/secret.txt f.txt",
    "git diff ../secret.txt f.txt",
    "git diff ~/.netrc f.txt",
    "git add --pathspec-from-file={secret}",
]


@pytest.mark.parametrize("template", OUTSIDE)
def test_git_reads_no_file_outside_the_project(hostile: tuple[Path, Path], template: str) -> None:
    """A path out of the project, as an argument or an option's value, is refused.

    Before, ``git diff /abs/file f.txt`` printed the file (git compares two paths as with
    ``--no-index`` when one is outside the work tree), and ``blame --contents`` and
    ``commit -F`` read it.
    """
    repo, _ = hostile
    secret = repo.parent / "secret.txt"
    secret.write_text("outside-the-project-7781\n")
    (repo / "link").symlink_to(repo.parent)
    command = template.format(secret=secret)
    assert git_refusal(command, repository=repo) is not None, command
    assert git_refusal(command) is not None or "link/" in command, command


def test_an_absolute_path_really_is_read_by_git_diff(hostile: tuple[Path, Path]) -> None:
    """Without the check, confined `git diff /abs/file f.txt` prints the file."""
    repo, _ = hostile
    secret = repo.parent / "secret.txt"
    secret.write_text("outside-the-project-7781\n")
    done = subprocess.run(
        ["git", "diff", str(secret), "f.txt"],
        cwd=repo,
        env=git_env(),
        capture_output=True,
        check=False,
    )
    assert b"outside-the-project-7781" in done.stdout


@pytest.mark.parametrize(
    "command",
    [
        "git diff origin/main -- src/app.py",
        "git show HEAD:src/app.py",
        "git log -p -- ./docs/../src",
        "git diff {repo}/f.txt",
        "git checkout -- f.txt",
        "git status .",
    ],
)
def test_paths_inside_the_project_stay_allowed(hostile: tuple[Path, Path], command: str) -> None:
    """Refs, revision paths and paths that stay inside the project are not refused."""
    repo, _ = hostile
    assert git_refusal(command.format(repo=repo), repository=repo) is None
