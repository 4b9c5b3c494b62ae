"""Git under confinement: the environment every git runs with, and what an agent may run.

Git runs commands named in its configuration: ``core.fsmonitor`` on every ``git status``,
``core.hooksPath`` hooks on a commit, aliases starting with ``!``, editors, pagers, external
diff tools, ``ext::`` transports. An agent allowed to run ``git`` could set those (``git
config``, ``git -c``) and so run anything, even inside reflexkit's own ``git status``; it
could also write outside the project (``git diff --output=...``, ``-C``, ``--work-tree``).

Two layers close that:

* :func:`git_env` is the environment of every git reflexkit runs (its own calls) and of the
  Claude Code CLI (so the agent's git too): no system or global configuration
  (``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL=/dev/null``), and command-line configuration
  (which wins over the repository's own ``.git/config``, and reaches the git run in each
  submodule) that turns hooks, fsmonitor, pagers, editors, credential helpers and the
  ``ext`` transport off, and empties every driver the repository's or a submodule's
  configuration names.
* :func:`git_refusal` checks a Bash command an agent asks to run: every git in it must be a
  subcommand on a short list of git's own (an alias is never run: git's own commands win
  over aliases of the same name), with no option that sets configuration (``-c``,
  ``--config-env``), moves the repository (``-C``, ``--git-dir``, ``--work-tree``), reads a
  file outside the project (a path out of it, ``--no-index``, ``--contents``), writes a file
  (``--output``, ``-o``, redirections) or runs a program (``--upload-pack``, ``--exec``,
  ``--ext-diff``), and ``git config`` only reads.
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
import subprocess
from collections.abc import Collection, Mapping
from pathlib import Path

__all__ = ["GIT_CONFIG", "git_env", "git_refusal", "program_keys"]

GIT_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", os.devnull),
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("core.editor", "true"),
    ("core.askPass", ""),
    ("core.sshCommand", "false"),
    ("sequence.editor", "true"),
    ("credential.helper", ""),
    ("protocol.ext.allow", "never"),
    ("uploadpack.packObjectsHook", ""),
    ("interactive.diffFilter", ""),
    ("core.alternateRefsCommand", ""),
    ("core.gitProxy", ""),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("log.showSignature", "false"),
    ("gpg.program", ""),
    ("gpg.ssh.program", ""),
    ("gpg.x509.program", ""),
    ("gpg.ssh.defaultKeyCommand", ""),
)
"""Configuration every confined git gets on its command line (it beats ``.git/config``)."""


_DRIVER_KEYS = re.compile(
    r"^(?:filter\..+\.(?:clean|smudge|process)|diff\..+\.(?:command|textconv)|merge\..+\.driver"
    r"|credential\..+\.helper)$",
    re.IGNORECASE,
)
"""Keys that name a program under a name the repository chooses (``filter.<name>.clean``):
no fixed list can override them, so each is found in the repository's configuration."""
_REFUSED_KEYS = re.compile(r"^(?:core\.worktree|diff\.external)$", re.IGNORECASE)
"""Keys that can't be emptied, only refused: ``core.worktree`` moves git's work outside the
project; an empty ``diff.external`` is a program git fails to start on every ``git diff``
(reflexkit's own diffs pass ``--no-ext-diff``)."""


def program_keys(repository: Path) -> tuple[str, ...]:
    """The keys of *repository*'s configuration (includes followed) that name a program.

    Drivers of any name (``filter.*.clean``, ``smudge``, ``process``, ``diff.*.command``,
    ``textconv``, ``merge.*.driver``, ``credential.*.helper``), ``core.worktree`` and
    ``diff.external``, read by a confined git (reading configuration runs nothing), in the
    repository's own configuration and in each of its submodules' (``.git/modules/**/config``
    and a submodule's own ``.git``): a ``git status`` or ``git diff --submodule=diff`` runs
    git in each submodule, under that submodule's configuration. ``()`` when there is no
    repository or no git.
    """
    own = _read_git(["config", *_LIST], repository)
    if own is None:
        return ()
    found = dict.fromkeys(_programs(own))
    for config in _submodule_configs(repository):
        names = _read_git(["config", "--file", str(config), *_LIST], repository) or b""
        for name in _programs(names):
            if name.lower() != "core.worktree" or not _own_work_tree(config, repository):
                found[name] = None
    return tuple(found)


_LIST = ("--list", "--includes", "--name-only", "-z")


def _programs(names: bytes) -> list[str]:
    """The names, out of ``git config --list --name-only -z``, that name a program."""
    listed = names.decode("utf-8", "replace").split("\0")
    return [n for n in listed if _DRIVER_KEYS.match(n) or _REFUSED_KEYS.match(n)]


def _own_work_tree(config: Path, repository: Path) -> bool:
    """A submodule's ``core.worktree`` (git sets it) names a folder inside the project."""
    value = _read_git(["config", "--file", str(config), "--get", "core.worktree"], repository)
    if value is None:
        return False
    where = (config.parent / value.decode("utf-8", "surrogateescape").strip()).resolve()
    return where.is_relative_to(repository.resolve())


def _sq_quote(text: str) -> str:
    """*text* in single quotes, as git writes (and reads) ``GIT_CONFIG_PARAMETERS``."""
    return "'" + text.replace("'", "'\\''") + "'"


def _read_git(arguments: list[str], repository: Path) -> bytes | None:
    """The output of a git that only reads, with no configuration of ours or the system's."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_", "GIT_CONFIG_COUNT"))
        and key not in _UNSAFE_VARIABLES
    }
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        # ``ls-files`` reads the index, which starts ``core.fsmonitor``: it is off, as for
        # every confined git
        GIT_CONFIG_PARAMETERS=" ".join(_sq_quote(f"{k}={v}") for k, v in GIT_CONFIG),
    )
    try:
        done = subprocess.run(  # noqa: S603 -- our own read-only git arguments
            ["git", *arguments],  # noqa: S607
            cwd=repository,
            env=env,
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


_MAX_SUBMODULE_CONFIGS = 256


def _submodule_configs(repository: Path) -> list[Path]:
    """The configuration files of *repository*'s submodules, nested ones included.

    Those git keeps under ``<git dir>/modules/`` (absorbed), and those of a submodule whose
    ``.git`` is a folder of its own in the work tree (found by git's own list of gitlinks).
    """
    common = _read_git(["rev-parse", "--path-format=absolute", "--git-common-dir"], repository)
    if common is None:
        return []
    found: list[Path] = []
    modules = Path(common.decode("utf-8", "surrogateescape").strip()) / "modules"
    if modules.is_dir():
        found += sorted(p for p in modules.rglob("config") if p.is_file())
    staged = _read_git(["ls-files", "--stage", "-z"], repository) or b""
    top = _read_git(["rev-parse", "--show-toplevel"], repository) or b""
    root = Path(top.decode("utf-8", "surrogateescape").strip() or repository)
    for entry in staged.split(b"\0"):
        if entry.startswith(b"160000 "):
            path = entry.split(b"\t", 1)[-1].decode("utf-8", "surrogateescape")
            own = root / path / ".git"
            if own.is_dir() and not own.is_symlink():
                found.append(own / "config")
                found += sorted(p for p in (own / "modules").rglob("config") if p.is_file())
    return [p for p in found if p.is_file()][:_MAX_SUBMODULE_CONFIGS]


def git_env(
    base: Mapping[str, str] | None = None, *, repository: Path | None = None
) -> dict[str, str]:
    """Return *base* (``os.environ`` by default) with git confined (see the module docstring).

    Configuration the caller passes itself through ``GIT_CONFIG_COUNT`` is replaced. With
    *repository*, every driver its configuration names (:func:`program_keys`) is emptied
    too, whatever its name: a filter, a diff or merge driver, a credential helper.
    """
    env = {
        key: value
        for key, value in (os.environ if base is None else base).items()
        if not key.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))
        and key not in _UNSAFE_VARIABLES
    }
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_COUNT=str(len(GIT_CONFIG)),
        GIT_EDITOR="true",
        GIT_SEQUENCE_EDITOR="true",
        GIT_PAGER="cat",
        GIT_TERMINAL_PROMPT="0",
        GIT_ASKPASS="true",
        GIT_PROTOCOL_FROM_USER="0",
    )
    found = program_keys(repository) if repository is not None else ()
    config = [*GIT_CONFIG, *((key, "") for key in found if _DRIVER_KEYS.match(key))]
    env["GIT_CONFIG_COUNT"] = str(len(config))
    for n, (key, value) in enumerate(config):
        env[f"GIT_CONFIG_KEY_{n}"] = key
        env[f"GIT_CONFIG_VALUE_{n}"] = value
    # The same, as ``git -c`` passes it: git hands GIT_CONFIG_PARAMETERS on to the git it runs
    # in each submodule, and drops GIT_CONFIG_COUNT there.
    env["GIT_CONFIG_PARAMETERS"] = " ".join(_sq_quote(f"{k}={v}") for k, v in config)
    return env


# Variables that point git at other repositories, configuration or programs.
_UNSAFE_VARIABLES = frozenset(
    {
        "GIT_CONFIG",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_SYSTEM",
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_EXEC_PATH",
        "GIT_EXTERNAL_DIFF",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_PROXY_COMMAND",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_NAMESPACE",
        "GIT_CEILING_DIRECTORIES",
    }
)

# git's own subcommands an agent may run: they read the repository or change the project's
# files and history, and under git_env they run no program of the repository's choosing.
_SUBCOMMANDS = frozenset(
    {
        "add",
        "blame",
        "branch",
        "cat-file",
        "checkout",
        "cherry-pick",
        "clean",
        "commit",
        "config",
        "describe",
        "diff",
        "grep",
        "log",
        "ls-files",
        "ls-tree",
        "merge",
        "merge-base",
        "mv",
        "rebase",
        "reflog",
        "reset",
        "restore",
        "rev-list",
        "rev-parse",
        "revert",
        "rm",
        "shortlog",
        "show",
        "stash",
        "status",
        "switch",
        "tag",
        "version",
        "whatchanged",
    }
)
_GLOBAL_FLAGS = frozenset(
    {
        "--no-pager",
        "-P",
        "--no-optional-locks",
        "--literal-pathspecs",
        "--no-replace-objects",
    }
)
_CONFIG_READS = frozenset(
    {
        "--get",
        "--get-all",
        "--get-regexp",
        "--list",
        "-l",
        "get",
        "list",
    }
)
# Options that write a file, run a program, or read configuration from elsewhere.
_REFUSED_OPTIONS = re.compile(
    r"^(?:--output(?:-directory)?|--upload-pack|--receive-pack|--exec|--ext-diff|--textconv"
    r"|--template|--config-env|--open-files-in-pager|--interactive|--edit-todo|--file"
    r"|--blob|--system|--global|--worktree|--include|--tool|--gui|--extcmd|--no-index"
    r"|--contents|--pathspec-from-file|--ignore-revs-file|--exclude-from)(?:=.*)?$"
)
_REFUSED_LONG = (
    "--output",
    "--output-directory",
    "--upload-pack",
    "--receive-pack",
    "--exec",
    "--ext-diff",
    "--textconv",
    "--template",
    "--config-env",
    "--open-files-in-pager",
    "--interactive",
    "--edit-todo",
    "--file",
    "--system",
    "--global",
    "--worktree",
    "--include",
    "--tool",
    "--extcmd",
    "--no-index",
    "--contents",
    "--pathspec-from-file",
    "--ignore-revs-file",
    "--exclude-from",
)
"""The long options of :data:`_REFUSED_OPTIONS`: git also takes any unique start of one
(``--outp=...`` is ``--output=...``), so a start of one is refused too."""
_OWN_OPTIONS = frozenset({"--text", "--edit", "--glob", "--in-place"})
"""git's own options that happen to be the start of a refused one (``--text``, not
``--textconv``): an exact option wins over an abbreviation."""
_REFUSED_SHORT = {"-o": "writes a file", "-x": "runs a command", "-i": "runs an editor"}
_SHORT_EXEMPT = frozenset({"grep", "ls-files", "commit", "add", "clean"})
"""Subcommands where those short options mean something harmless (``grep -o``, ``-i``)."""
_ALWAYS_REFUSED_SHORT = {"-O": "runs a command"}
"""``git grep -O<program>`` opens the matches in any program."""
_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "|&", "(", ")", "{", "}"})
_REDIRECT = re.compile(r"^\d*(?:>|>>|>&|&>|<>|>\|)")
_WRAPPERS = frozenset(
    {
        "env",
        "exec",
        "command",
        "builtin",
        "xargs",
        "nohup",
        "timeout",
        "nice",
        "ionice",
        "stdbuf",
        "setsid",
        "sudo",
        "doas",
        "time",
        "busybox",
        "eval",
        "sh",
        "bash",
        "dash",
        "zsh",
    }
)
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_HARMLESS_VARIABLES = re.compile(r"^(?:LC_[A-Z]+|LANG|LANGUAGE|TZ|TERM|COLUMNS|LINES|NO_COLOR)=")
"""What a command line that runs git may set: the locale and the terminal. ``PATH=.:$PATH``
would have the shell run the agent's own ``git`` (or git a ``git-merge-<name>`` of its)."""
_SHELL_REDEFINES = frozenset(
    {
        "export",
        "declare",
        "typeset",
        "readonly",
        "local",
        "hash",
        "alias",
        "unalias",
        "enable",
        "shopt",
        "set",
        "source",
        ".",
        "function",
        "cd",
        "pushd",
        "popd",
    }
)
"""Builtins that change which program ``git`` is (``hash -p ./x git``, ``export PATH=.``,
an alias) or which repository it finds (``cd sub``): not on a command line that runs git."""
_SYSTEM_GITS = frozenset({"/usr/bin/git", "/bin/git", "/usr/local/bin/git"})
_STRATEGIES = frozenset({"ort", "recursive", "resolve", "octopus", "ours", "subtree"})
"""git's own merge strategies; any other name runs ``git-merge-<name>`` found on PATH."""


def git_refusal(
    command: str, *, repository: Path | None = None, neutralised: Collection[str] = ()
) -> str | None:
    """Return why the Bash *command* must not run under confinement, or ``None``.

    Only the git invocations in it are judged (other commands are the permission rules'
    business), but a git whose words can't be known before the shell runs them
    (``$(...)``, backquotes, ``${...}``) is refused, and so is a redirection in a
    command line that runs git.

    With *repository*, a git is also refused while the repository's configuration names a
    program (:func:`program_keys`) that the agent's environment did not empty when it was
    made (*neutralised*: the keys found then): an agent that writes a driver into
    ``.git/config`` can't have its git run it.
    """
    why = _refusal(command) or _outside_refusal(command, repository)
    if why is not None or repository is None or not _runs_git(command):
        return why
    emptied = set(neutralised)
    added = [k for k in program_keys(repository) if k not in emptied or _REFUSED_KEYS.match(k)]
    if added:
        return (
            f"the repository's configuration names a program git would run ({added[0]}): "
            "git is refused until it is removed from .git/config"
        )
    return None


def _outside_refusal(command: str, repository: Path | None) -> str | None:
    """Why a git of *command* may not run: it names a path outside the project, or ``None``.

    ``git diff /etc/passwd f`` (git compares two paths when one is outside the work tree, as
    with ``--no-index``), ``git blame --contents ~/.netrc -- f``, ``git commit -F
    ../secret`` then ``git log``: each reads a file outside the project and shows it. Every
    word of a git invocation that reads as a path (and the value of an option, after ``=``
    or glued on) must stay inside *repository*, links resolved; without one, a path may not
    be absolute, start at ``~`` or climb out with ``..``.
    """
    if not _runs_git(command):
        return None
    line = command.replace("\r", " ").replace("\n", " ; ")
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|(){}<>")
    lexer.whitespace_split = True
    try:
        commands = _commands(list(lexer))
    except ValueError as err:
        return f"the command line can't be read ({err})"
    for words in commands:
        if not _is_git(words):
            continue
        for word in words[1:]:
            path = _path_in(word)
            if path is not None and not _inside(path, repository):
                return f"git may not read {path!r}: it is outside the project"
    return None


_GLUED = re.compile(r"-[A-Za-z](?=[/~.])")
"""A short option with a path glued on: ``-F/etc/passwd``, ``-F../x``."""


def _path_in(word: str) -> str | None:
    """The path *word* names, as an argument or an option's value; ``None``: no path."""
    if word.startswith("--") and "=" in word:
        word = word.split("=", 1)[1]
    elif (glued := _GLUED.match(word)) is not None:
        word = word[glued.end() :]
    elif word.startswith("-"):
        return None
    if word.startswith(("/", "~", "../")) or word == ".." or "/../" in word:
        return word
    return word if "/" in word or word.endswith("..") else None


def _inside(path: str, repository: Path | None) -> bool:
    """*path* names a place inside *repository* (links resolved), or, without one, may."""
    if path.startswith("~"):
        return False
    if repository is None:
        normal = os.path.normpath(path)
        return not (Path(normal).is_absolute() or normal == ".." or normal.startswith("../"))
    root = repository.resolve()
    where = Path(os.path.realpath(root / path))  # an absolute *path* replaces root
    return where == root or where.is_relative_to(root)


def _runs_git(command: str) -> bool:
    return "git" in re.sub(r"[\\'\"]", "", command)


def _refusal(command: str) -> str | None:
    unquoted = re.sub(r"[\\'\"]", "", command)
    if "git" not in unquoted:
        return None
    command = command.replace("\r", " ").replace("\n", " ; ")  # a newline ends a command
    if any(mark in command for mark in ("$(", "`", "${", "<(", ">(")):
        return "a command line that runs git may not use command or parameter substitution"
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|(){}<>")
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError as err:
        return f"the command line can't be read ({err})"
    if any(w == "git" and nxt == "(" for w, nxt in itertools.pairwise(words)):
        return "a command line may not define a function named git"
    commands = _commands(words)
    if any(_is_git(c) for c in commands):  # what git is, and where it runs, stay as they are
        for words_of in commands:
            why = _redefinition(words_of)
            if why is not None:
                return why
    return next(filter(None, map(_judge, commands)), None)


def _is_git(words: list[str]) -> bool:
    rest = [w for w in words if not _ASSIGNMENT.match(w)]
    return bool(rest) and rest[0].rsplit("/", 1)[-1] == "git"


def _redefinition(words: list[str]) -> str | None:
    """Why one simple command may not share a command line with git, or ``None``."""
    for word in words:
        if not _ASSIGNMENT.match(word):
            break
        if not _HARMLESS_VARIABLES.match(word):
            name = word.split("=", 1)[0]
            return f"a command line that runs git may not set {name}"
    rest = [w for w in words if not _ASSIGNMENT.match(w)]
    if rest and rest[0] in _SHELL_REDEFINES:
        return (
            f"a command line that runs git may not use {rest[0]} (it changes which git runs, "
            "or in which repository)"
        )
    return None


def _commands(words: list[str]) -> list[list[str]]:
    commands: list[list[str]] = [[]]
    for word in words:
        if word in _SEPARATORS or word == "\n":
            commands.append([])
        else:
            commands[-1].append(word)
    return [c for c in commands if c]


def _judge(words: list[str]) -> str | None:
    """Why one simple command (its words) may not run, or ``None``."""
    while words and _ASSIGNMENT.match(words[0]):
        if words[0].startswith("GIT_"):
            return f"git's environment may not be set ({words[0].split('=', 1)[0]})"
        words = words[1:]
    if not words:
        return None
    program = words[0].rsplit("/", 1)[-1]
    if program in _WRAPPERS and any(w.rsplit("/", 1)[-1] == "git" for w in words[1:]):
        return f"git may only be run directly, not through {words[0]}"
    if program != "git":
        return None
    return _judge_invocation(words)


def _judge_invocation(words: list[str]) -> str | None:
    """Why one git invocation (its words, ``git`` first) may not run, or ``None``."""
    if words[0] != "git" and words[0] not in _SYSTEM_GITS:
        return f"git must be run by its name, not as {words[0]} (a program of that name)"
    if any(_REDIRECT.match(w) or w in {"<", ">"} for w in words):
        return "a git command may not redirect its output to a file"
    return _judge_git(words[1:])


def _judge_git(args: list[str]) -> str | None:
    at = 0
    while at < len(args) and args[at].startswith("-"):
        if args[at] not in _GLOBAL_FLAGS:
            return (
                f"git option {args[at].split('=', 1)[0]} is not allowed (configuration, "
                "another repository or work tree, or another git)"
            )
        at += 1
    if at == len(args):
        return None
    sub, rest = args[at], args[at + 1 :]
    if sub not in _SUBCOMMANDS:
        return f"git {sub} is not allowed here (aliases, network and tools that run programs)"
    if sub == "config" and not _config_reads_only(rest):
        return "git config may only read (--get, --list): configuration runs programs"
    return _strategy_refusal(sub, rest) or _judge_options(sub, rest)


_CONFIG_MODIFIERS = re.compile(
    r"^(?:--(?:type|default)=.*|--(?:null|name-only|show-origin|show-scope|includes|no-includes"
    r"|local|bool|int|bool-or-int|path|expiry-date|fixed-value|all|regexp|url)|-z)$"
)


def _config_reads_only(rest: list[str]) -> bool:
    """``git config`` reading: its action (after display options) is a read, with few names.

    ``git config core.fsmonitor list`` holds the word ``list`` but writes.
    """
    words = [w for w in rest if not _CONFIG_MODIFIERS.match(w)]
    if not words or words[0] not in _CONFIG_READS:
        return False
    names = [w for w in words[1:] if not w.startswith("-")]
    most = 0 if words[0] in {"--list", "-l", "list"} else 2
    return len(names) <= most and all(w in _CONFIG_READS for w in words[1:] if w.startswith("-"))


def _strategy_refusal(sub: str, rest: list[str]) -> str | None:
    """Why a merge strategy is refused: not git's own, so a ``git-merge-<name>`` on PATH."""
    if sub not in {"merge", "rebase", "cherry-pick", "revert", "pull"}:
        return None
    short = sub in {"merge", "rebase", "pull"}  # cherry-pick's -s is --signoff
    for at, arg in enumerate(rest):
        if arg == "--":
            break
        name: str | None = None
        if arg.startswith("--strat") and "--strategy".startswith(arg.split("=", 1)[0]):
            name = (
                arg.split("=", 1)[1] if "=" in arg else (rest[at + 1] if at + 1 < len(rest) else "")
            )
        elif short and arg.startswith("-s") and not arg.startswith("--"):
            name = arg[2:] or (rest[at + 1] if at + 1 < len(rest) else "")
        if name is not None and name not in _STRATEGIES:
            return f"git {sub} strategy {name!r} is not git's own (it would run git-merge-{name})"
    return None


def _judge_options(sub: str, rest: list[str]) -> str | None:
    for arg in rest:
        if arg == "--":
            break
        why = _long_refusal(arg) if arg.startswith("--") else _short_refusal(sub, arg)
        if why is not None:
            return f"git {sub} {arg.split('=', 1)[0]} is not allowed ({why})"
    return None


def _long_refusal(arg: str) -> str | None:
    """Why a long option is refused: it is, or starts, one that writes or runs (``--outp``)."""
    name = arg.split("=", 1)[0]
    if _REFUSED_OPTIONS.match(arg):
        return "writes a file, runs a program or reads one outside the project"
    if name in _OWN_OPTIONS or len(name) < 4:  # noqa: PLR2004 -- ``--x``: ambiguous to git too
        return None
    if any(option.startswith(name) for option in _REFUSED_LONG):
        return "an abbreviation of an option that writes or reads a file, or runs a program"
    return None


def _short_refusal(sub: str, arg: str) -> str | None:
    """Why a short option is refused, its value glued on or not (``-Oprogram``, ``-xcmd``)."""
    if not arg.startswith("-") or len(arg) < 2:  # noqa: PLR2004
        return None
    flag = arg[:2]
    if flag in _ALWAYS_REFUSED_SHORT:
        return _ALWAYS_REFUSED_SHORT[flag]
    if flag in _REFUSED_SHORT and sub not in _SHORT_EXEMPT:
        return _REFUSED_SHORT[flag]
    return None
