"""Readers for git, shell scripts and timeouts."""

from __future__ import annotations

import re

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers._findings import Findings, clip, dedupe, plural
from reflexkit.readers._generic import find_locations, is_library_path
from reflexkit.readers._kinds import error_kind
from reflexkit.readers._python_traceback import find_traceback

__all__ = ["hung_frame", "parse_diff_check", "parse_git", "parse_shell", "parse_timeout"]

M = re.MULTILINE

_TIMEOUT_EXIT = 124
"""GNU ``timeout`` exits with 124 when it killed the command."""
_NOT_EXECUTABLE_EXIT = 126
_NOT_FOUND_EXIT = 127

# --- git -------------------------------------------------------------------------------------

_CONFLICT = Pattern(r"^(?P<line>CONFLICT \([^)]+\): .+)$", M)
_GIT_ERROR = Pattern(r"^(?P<line>(?:error|fatal): .+)$", M)
_GIT_HINT_CMD = Pattern(
    r'"(?P<cmd>git [^"]+)"|^hint:\s+(?P<line>git [^#\n]+?)\s*(?:#[^\n]*)?$'
    r"|^ {2,8}(?P<indented>git [a-z][^#\n]*?)\s*$",
    M,
)
"""A command git's hints quote (``"git add <file>"``) or list on its own line (``hint:   git
config pull.rebase false  # merge``, or indented: ``    git push --set-upstream origin x``)."""
_GIT_REJECTED = Pattern(r"^(?P<line>\s*! \[(?:rejected|remote rejected)\].*)$", M)
_NOTHING_TO_COMMIT = Pattern(
    r"^(?P<line>(?:no changes|nothing) added to commit\b.*|nothing to commit, .+)$", M
)
"""``git commit`` with nothing staged: its verdict line, after the paths ``git status`` lists."""
_STATUS_PATH = Pattern(r"^\t(?P<path>\S.*)$", M)
_GIT_NO_BRANCH = Pattern(
    r"^(?P<line>You are not currently on a branch\.|There is no tracking information for the "
    r"current branch\.)$",
    M,
)
"""git's refusals that carry no ``error:`` prefix: a detached HEAD, a branch with no upstream."""
_REMOTE_SAYS = Pattern(r"^remote: (?P<msg>\S.*?)\s*$", M)
"""What the server printed (a hook's reason), padded with blanks by git."""
_REMOTE_NOISE = Pattern(
    r"^(?:Enumerating|Counting|Compressing|Writing|Total|Resolving|error: |To )|"
    r"^(?:Create a pull request|See |\s*https?://)"
)
_AUTO_MERGE_FAILED = Pattern(r"^(?P<line>Automatic merge failed;.*)$", M)


_GIT_LISTED = Pattern(r"^(?:error|fatal): [^\n]*:\n(?P<files>(?:\t[^\n]+(?:\n|$))+)", M)
"""An error followed by the tab-indented paths it is about (files checkout would overwrite)."""
_GIT_VERDICT = Pattern(
    r"^(?P<line>Aborting|Aborting commit due to [^\n]+"
    r"|The stash entry is kept in case you need it again\.)$",
    M,
)


def _nothing_to_commit(text: str) -> Findings | None:
    """Findings for ``git commit`` that had nothing staged (no ``error:`` line is printed)."""
    verdict = _NOTHING_TO_COMMIT.search(text)
    if verdict is None:
        return None
    findings = Findings(
        tool="git", failure_type=FailureType.TOOL_ERROR, category=ReflectionCategory.TOOL_MISUSE
    )
    findings.facts.append(verdict["line"].strip())
    paths = dedupe(" ".join(m["path"].split()) for m in _STATUS_PATH.finditer(text))
    if paths:
        findings.details.append("paths: " + ", ".join(clip(p, 80) for p in paths[:6]))
    findings.headline = "git commit found nothing staged to commit."
    findings.advice = (
        "Stage the files the task changed (`git add <file>`, new files too) before committing; "
        "check `git status` for the paths git lists."
    )
    findings.steps.append("`git add` the changed and new files, then commit again.")
    findings.confidence = 0.8
    return findings


def parse_git(text: str, command: str) -> Findings | None:
    """Recognise git conflicts, rejected pushes and ``error:``/``fatal:`` lines from git."""
    conflicts = [m["line"].strip() for m in _CONFLICT.finditer(text)]
    rejected = [m["line"].strip() for m in _GIT_REJECTED.finditer(text)]
    if not (command.lstrip().startswith("git ") or conflicts or rejected):
        return None
    no_branch = [m["line"] for m in _GIT_NO_BRANCH.finditer(text)]
    errors = no_branch + [m["line"].strip() for m in _GIT_ERROR.finditer(text)]
    if not (conflicts or rejected or errors):
        return _nothing_to_commit(text)
    findings = Findings(
        tool="git", failure_type=FailureType.TOOL_ERROR, category=ReflectionCategory.TOOL_MISUSE
    )
    findings.facts = [clip(line, 180) for line in dedupe(conflicts)[:5]]
    findings.facts.extend(clip(line, 180) for line in dedupe(errors + rejected)[:3])
    _read_git_details(findings, text)
    if conflicts:
        _advise_conflicts(findings, conflicts)
    elif rejected:
        _advise_rejected(findings, text, rejected)
    else:
        findings.headline, findings.advice = _GIT_REFUSED[bool(no_branch)]
    findings.confidence = 0.8
    return findings


# --- a check that compares files: git diff --exit-code, diff -u ------------------------------

_DIFF_COMMAND = Pattern(r"\bgit\s+diff\b[^|;&\n]*--exit-code|(?:^|[;&|(]\s*)diff\s+-\S*u")
_DIFF_FILE = Pattern(r"^\+\+\+ (?:b/)?(?P<path>[^\t\n]+)", M)
_DIFF_CHANGE = Pattern(
    r"^@@ [^\n]*@@.*\n(?:[ \\].*\n)*(?P<minus>-.*)?\n?(?:-.*\n)*(?P<plus>\+.*)?", M
)
"""A hunk's first removed line and the first added one after it."""
_FORMATTER = Pattern(
    r"\b(?:fmt|format|black|isort|prettier|gofmt|goimports|clang-format|rustfmt|yapf|autopep8|"
    r"shfmt|stylua|mix format|dotnet format)\b"
)
_MAX_DIFF_FILES = 3


def parse_diff_check(text: str, command: str) -> Findings | None:
    """Recognise a check that compares files and prints their unified diff.

    ``script && git diff --exit-code`` (golden files a test script regenerates, code a
    formatter rewrites) and ``diff -u expected actual``: the files that differ and each one's
    first removed and added line are the facts. After a formatter the drift is a lint error;
    otherwise the output the command produced no longer matches the expected one: a test
    failure.
    """
    if not _DIFF_COMMAND.search(command):
        return None
    heads = list(_DIFF_FILE.finditer(text))
    changed: dict[str, re.Match[str]] = {}  # each file's first change, in the diff's order
    for index, head in enumerate(heads):
        end = heads[index + 1].start() if index + 1 < len(heads) else len(text)
        change = _DIFF_CHANGE.search(text, head.end(), end)
        if change is not None and (change["minus"] or change["plus"]):
            changed.setdefault(head["path"].strip(), change)
    if not changed:
        return None
    files = list(changed)
    formatted = _FORMATTER.search(command) is not None
    findings = Findings(
        tool="git diff" if "diff --git " in text else "diff",
        failure_type=FailureType.LINT_ERROR if formatted else FailureType.TEST_FAILURE,
    )
    for path in files[:_MAX_DIFF_FILES]:
        lines = [line for line in (changed[path]["minus"], changed[path]["plus"]) if line]
        findings.facts.append(clip(f"{path}: " + " / ".join(lines), 240))
    findings.headline = f"{plural(len(files), 'file')} differ from the expected version" + (
        " after the formatter ran." if formatted else ": the output the commands produced changed."
    )
    findings.advice = (
        "Run the formatter and commit what it writes; the code's behaviour is not in question."
        if formatted
        else "Each `-` line is what was expected and each `+` line what the commands now write: "
        "fix the code whose output changed, or regenerate the expected files only if the new "
        "output is the intended one."
    )
    findings.steps.append(f"Compare the first difference in {files[0]}, then re-run the check.")
    findings.confidence = 0.75
    return findings


def _read_git_details(findings: Findings, text: str) -> None:
    """Add git's ``Automatic merge failed`` line, the paths an error lists, its verdict, hints."""
    auto = _AUTO_MERGE_FAILED.search(text)
    if auto:
        findings.details.append(auto["line"].strip())
    listed = dedupe(
        path.strip() for m in _GIT_LISTED.finditer(text) for path in m["files"].splitlines()
    )
    if listed:
        findings.details.append("paths: " + ", ".join(clip(p, 80) for p in listed[:5]))
    verdict = _GIT_VERDICT.search(text)
    findings.summary = verdict["line"] if verdict else ""
    findings.hints = dedupe(
        m["cmd"] or m["line"] or m["indented"] for m in _GIT_HINT_CMD.finditer(text)
    )[:4]


def _advise_conflicts(findings: Findings, conflicts: list[str]) -> None:
    """Resolve the conflicts, then the ``--continue`` (or ``--abort``) git's hints name."""
    files = [line.rsplit(" in ", 1)[-1] for line in conflicts if " in " in line]
    findings.headline = (
        f"git stopped on {len(conflicts)} conflict{'s' if len(conflicts) != 1 else ''}."
    )
    cont = next((h for h in findings.hints if h.endswith("--continue")), "")
    abort = next((h for h in findings.hints if h.endswith("--abort")), "")
    findings.advice = (
        "Resolve the conflict instead of retrying the command: edit the conflicted files to "
        "keep both sides' intended changes and remove the <<<<<<< ======= >>>>>>> markers, "
        "`git add` them, then "
        + (f"run `{cont}`" if cont else "commit")
        + (f" (or `{abort}` to start over)." if abort else ".")
    )
    findings.steps.extend(f"Resolve the markers in {f}." for f in files[:3])
    if cont:
        findings.steps.append(f"`git add` the resolved files and run `{cont}`.")


def _advise_rejected(findings: Findings, text: str, rejected: list[str]) -> None:
    """A push the server's hook refused (its ``remote:`` reason), or one behind the remote."""
    if not any("hook declined" in line for line in rejected):
        findings.headline = "git push was rejected."
        findings.advice = (
            "Fetch and integrate the remote changes (rebase or merge), then push again; never "
            "force-push shared branches."
        )
        return
    said = dedupe(
        m["msg"] for m in _REMOTE_SAYS.finditer(text) if not _REMOTE_NOISE.match(m["msg"])
    )
    findings.facts[:0] = [clip(line, 180) for line in said[:2]]
    findings.headline = "git push was refused by a hook on the server."
    findings.advice = (
        "The server's hook refused the pushed commits: its `remote:` lines say why. Change "
        "the commits to meet that rule (amend the message, move or drop the change, get the "
        "approval it names), then push again; fetching or forcing does not help."
    )


_GIT_REFUSED = {
    True: (
        "git has no current branch or no upstream to work with.",
        (
            "HEAD is detached or the branch tracks no remote branch: switch to a branch "
            "(`git switch main`) or name what to pull/push (`git pull origin main`, `git "
            "branch --set-upstream-to=origin/main`) before running the command again."
        ),
    ),
    False: (
        "git refused the command.",
        (
            "Read git's error: fix the state it names (uncommitted changes, wrong ref or path) "
            "before re-running."
        ),
    ),
}
"""Headline and advice of git's refusal: with no branch or upstream, or any other."""


# --- shell -----------------------------------------------------------------------------------

_CR = Pattern(r"\\r['\u2019:]|\$'\\r'|\r(?=['\u2019:]| : )|\^M")
_SHELL_ERROR = Pattern(
    r"^(?P<line>(?:[^\n:]+: )?(?:line \d+: )?[^\n]*?(?:No such file or directory|command not found|"
    r"Permission denied|bad interpreter[^\n]*|not found|syntax error[^\n]*|unbound variable|"
    r"(?:integer expression|unary operator|binary operator) expected|too many arguments|"
    r"bad substitution|ambiguous redirect|numeric argument required|operand expected[^\n]*|"
    r"invalid arithmetic operator[^\n]*|division by 0[^\n]*|bad array subscript))\s*$",
    M,
)
_EXPRESSION_ERRORS = (
    "expected",
    "too many arguments",
    "bad substitution",
    "ambiguous redirect",
    "numeric argument required",
    "arithmetic",
    "division by 0",
    "bad array subscript",
)
"""Errors of a test (``[``), an expansion or an arithmetic expression: the script's own bug."""


_BASH_LINE = Pattern(r"^(?:/\S+/)?(?:ba|z|da)?sh: line \d+: |^\S+\.sh: line \d+: ", M)


def parse_shell(text: str, exit_code: int | None) -> Findings | None:
    """Recognise shell-level failures: CRLF scripts, missing commands, permissions, syntax."""
    crlf = _CR.search(text) if ("\\r" in text or "\r" in text or "^M" in text) else None
    bash_line = ": line " in text and _BASH_LINE.search(text) is not None
    if not crlf and exit_code not in {2, 126, 127} and not bash_line:
        return None
    matches = list(_SHELL_ERROR.finditer(text))
    lines = [m["line"].strip() for m in matches]
    if not crlf and not lines:
        return None
    findings = Findings(
        tool="shell", failure_type=FailureType.TOOL_ERROR, category=ReflectionCategory.TOOL_MISUSE
    )
    findings.facts = [clip(line, 180) for line in dedupe(lines)[:3]] or [
        clip(text.strip().splitlines()[0], 180)
    ]
    if crlf:
        findings.headline = (
            "The script has Windows (CRLF) line endings, so the shell sees a stray carriage return."
        )
        findings.advice = (
            "Convert the script to LF line endings (`sed -i 's/\\r$//' FILE` or `dos2unix FILE`) "
            "and keep them with `*.sh text eol=lf` in .gitattributes; the script's logic is not "
            "the problem."
        )
        findings.steps.append(
            "Convert the line endings of the script named in the error, then run it again."
        )
    else:
        _advise_shell_error(findings, lines, exit_code)
    if matches:
        _add_printed_after(text, matches[-1].end(), findings)
    findings.confidence = 0.75
    return findings


def _advise_shell_error(findings: Findings, lines: list[str], exit_code: int | None) -> None:
    """Set the headline, category and advice of the shell's error lines."""
    if not _advise_script_bug(findings, lines):
        _advise_cannot_run(findings, lines, exit_code)


def _advise_script_bug(findings: Findings, lines: list[str]) -> bool:
    """Advice for the script's own mistakes (unset variable, syntax, shebang, a bad test)."""
    if any("unbound variable" in line for line in lines):
        findings.headline = "The script used a variable that is not set (set -u)."
        findings.category = ReflectionCategory.MISSING_CONTEXT
        findings.advice = (
            "Set or export the variable before the script runs, or give it a default in the "
            "script (`${NAME:-default}`); do not drop `set -u`."
        )
    elif any("syntax error" in line for line in lines):
        findings.headline = "The shell could not parse the script."
        findings.category = ReflectionCategory.ROOT_CAUSE
        findings.advice = (
            "Fix the shell syntax at the line named (unclosed if/fi, do/done, quotes or "
            "brackets); check it with `bash -n FILE` before running it again."
        )
    elif any("required file not found" in line or "bad interpreter" in line for line in lines):
        findings.headline = "The script's interpreter (its #! line) could not be started."
        findings.advice = (
            "Check the script's first line: the interpreter path must exist (prefer "
            "`#!/usr/bin/env bash`) and the file must have LF line endings, not CRLF (convert "
            "with `sed -i 's/\\r$//' FILE`)."
        )
        findings.steps.append(
            "Inspect the first line with `head -1 FILE | od -c`; fix the shebang or line endings."
        )
    elif any(line.endswith(_EXPRESSION_ERRORS) for line in lines):
        findings.headline = "A shell test or expansion got a value it cannot use."
        findings.category = ReflectionCategory.ROOT_CAUSE
        findings.advice = (
            "The variable in the test or expression at the line named is empty or not a number: "
            'quote it and give it a default (`"${COUNT:-0}"`), and check the command that '
            "was meant to set it; bash goes on after such an error, so what it printed next "
            "may be wrong."
        )
    else:
        return False
    return True


def _advise_cannot_run(findings: Findings, lines: list[str], exit_code: int | None) -> None:
    """Advice for a command the shell could not find or execute, or another shell error."""
    if exit_code == _NOT_FOUND_EXIT or any(
        "command not found" in line or line.endswith("not found") for line in lines
    ):
        findings.headline = "The shell could not find a command."
        findings.category = ReflectionCategory.MISSING_CONTEXT
        findings.advice = (
            "Install the missing program or call it by the right name or path (check PATH, the "
            "virtualenv, or `npx`/`python -m` for project-local tools)."
        )
    elif exit_code == _NOT_EXECUTABLE_EXIT or any("Permission denied" in line for line in lines):
        findings.headline = "The shell could not execute a file."
        findings.advice = (
            "Make the script executable (`chmod +x FILE`) or run it through its interpreter."
        )
    else:
        findings.headline = "The shell script failed."
        findings.advice = (
            "Fix the line of the script the shell names (quote variables, check paths)."
        )
        kind = error_kind(" ".join(lines))
        if kind is not None:
            findings.category = kind.category
            findings.advice = f"{kind.advice} Then run the script again."


def _add_printed_after(text: str, end: int, findings: Findings) -> None:
    """Quote the last line a script printed after the shell's error, if it went on.

    A failed ``[`` or a missing command does not stop a script without ``set -e``: what it
    printed last (its own verdict, ``bundle too large``) is how the failure looks in the log.
    """
    after = [line.strip() for line in text[end:].splitlines() if line.strip()]
    if after and after[-1] not in findings.facts:
        findings.details.append("printed after the error: " + clip(after[-1], 120))


# --- timeout ---------------------------------------------------------------------------------

_TIMEOUT_CMD = Pattern(
    r"^\s*(?:\S*/)?timeout\s+(?:(?:-[sk]\s+\S+|-\S+)\s+)*(?P<secs>\d+(?:\.\d+)?[smhd]?)\s"
)
"""``timeout [-s SIG] [-k DURATION] [--long-option] DURATION command``."""
_NUMBERS = Pattern(r"\d+")
_TAIL_SHOWN = 2
_OUR_LIMIT = Pattern(r"^\[timed out after [\d.]+ ?s and was killed\]$", M)
_CALL_FIRST = "(most recent call first)"
_FAULTHANDLER_TIMEOUT = Pattern(r"^Timeout \(\d+:\d\d:\d\d(?:\.\d+)?\)!$", M)
_FRAME_LINE = Pattern(
    r'^\s*File "[^"]+", line \d+|^\s+at \S|^(?:Current thread|Thread) 0x[0-9a-f]+ \(most recent'
)
_PY_FRAME = Pattern(r'^\s*File "(?P<file>[^"]+)", line \d+(?:,)? in \S+', M)
_WORD = Pattern(r"[A-Za-z]{2,}")
_OTHER_124 = Pattern(r"^xargs: .* exited with status 255; aborting$", M)
"""xargs exits with 124 too, when a command it ran exited with 255 (and says so)."""
_TIMEOUT_TEXT = Pattern(r"(?i)\b(?:timed out|timeout expired|TimeoutExpired|deadline exceeded)\b")


def parse_timeout(
    text: str,
    command: str,
    exit_code: int | None,
    *,
    timed_out: bool = False,
    trust_text: bool = True,
) -> Findings | None:
    """Recognise a command killed by ``timeout`` (exit code 124) or a time limit.

    Args:
        text: The cleaned output.
        command: The command line (``timeout 5 ...`` names the limit).
        exit_code: The exit code; ``None`` when the caller killed it.
        timed_out: The caller (reflexkit's own limit) killed the command.
        trust_text: Whether "timed out" in the output's tail alone makes it a time-out. Off
            when a test runner read the output: a runner reporting one test's own time limit
            finished its run, so the run is a ``test_failure``, not a ``timeout``.
    """
    limit = _TIMEOUT_CMD.match(command)
    tail = text[-600:]
    ours = _OUR_LIMIT.search(tail) if exit_code is None else None
    own_dump = _FAULTHANDLER_TIMEOUT.search(text)
    if own_dump is not None and not _ends_in_dump(text[own_dump.end() :]):
        own_dump = None  # pytest's faulthandler_timeout only warns; the run went on
    killed = (
        timed_out
        or ours is not None
        or own_dump is not None
        or _killed_by_exit(tail, exit_code, limit=limit is not None, trust_text=trust_text)
    )
    if not killed:
        return None
    findings = Findings(
        tool="timeout", failure_type=FailureType.TIMEOUT, category=ReflectionCategory.APPROACH_FLAW
    )
    lines = _printed_lines(text)
    hung = hung_frame(text)
    if hung:
        findings.facts.append(clip(hung, 200))
        findings.steps.append(f"Look at what {clip(hung, 120)} waits for.")
    if lines:
        _read_last_lines(findings, lines)
    elif ours is not None:
        findings.facts.append(ours.group(0).strip("[]"))
    findings.headline = _timeout_headline(
        limit, exit_code, ours=ours is not None, timed_out=timed_out, own_dump=own_dump
    )
    findings.advice = (
        "Do not just raise the time limit: the program waits for something that never happens "
        "(a server that is not running, a loop with no exit). Start or mock the dependency it "
        "waits for, and bound every wait or retry loop with a deadline that fails fast with a "
        "clear message."
    )
    findings.steps.append(
        "Find the loop or wait that produced the last line and give it a maximum of attempts."
    )
    findings.confidence = 0.7 if lines else 0.5
    return findings


def _printed_lines(text: str) -> list[str]:
    """Return the lines the program printed: not our own limit's line, not a dump's frames."""
    return [
        line.strip()
        for line in text.strip().splitlines()
        if line.strip() and not _OUR_LIMIT.search(line) and not _FRAME_LINE.match(line)
    ]


def _killed_by_exit(tail: str, exit_code: int | None, *, limit: bool, trust_text: bool) -> bool:
    """Return whether the exit code (or a "timed out" at the end) says a time limit killed it.

    124 is GNU ``timeout``'s (unless xargs says it is its own); 137 or 143 under ``timeout``
    are its ``-s KILL`` or ``-k``.
    """
    return (
        (exit_code == _TIMEOUT_EXIT and not _OTHER_124.search(tail))
        or (limit and exit_code in {137, 143})
        or (trust_text and exit_code not in {0, None} and bool(_TIMEOUT_TEXT.search(tail)))
    )


def _read_last_lines(findings: Findings, lines: list[str]) -> None:
    """Quote the last line the killed program printed, how often it repeated, its first lines."""
    last = lines[-1]
    shape = _NUMBERS.sub("#", last)
    repeats = sum(1 for line in lines if _NUMBERS.sub("#", line) == shape)
    findings.facts.append(clip(last, 200))
    if repeats > 1:
        first = next(line for line in lines if _NUMBERS.sub("#", line) == shape)
        since = f" (the first: {clip(first, 120)})" if first != last else ""
        findings.details.append(
            f"the same line repeated {repeats} times{since}: the program was waiting or looping"
        )
    others = dedupe(
        line
        for line in lines
        if _NUMBERS.sub("#", line) != shape and _WORD.search(line)  # not `...`, `}`, `1..3`
    )
    # the first line the program printed (its start: `attempt 1: pending`), then its last
    shown = [*others[:1], *others[-2:]] if len(others) > _TAIL_SHOWN else others
    findings.details.extend(clip(line, 150) for line in shown)


def _timeout_headline(
    limit: re.Match[str] | None,
    exit_code: int | None,
    *,
    ours: bool,
    timed_out: bool,
    own_dump: re.Match[str] | None,
) -> str:
    """Say who stopped the command: reflexkit's limit, the program's watchdog, or ``timeout``."""
    if ours or (timed_out and exit_code is None):
        return "reflexkit's time limit for the command ran out and killed it."
    if own_dump is not None and limit is None and exit_code != _TIMEOUT_EXIT:
        return (
            f"The program's own watchdog ({own_dump.group(0)}) stopped it (exit code {exit_code})."
        )
    secs = (
        f" after {limit['secs']}" + ("" if limit["secs"][-1].isalpha() else " s") if limit else ""
    )
    return f"The command was killed by the time limit{secs} (exit code {exit_code})."


def _ends_in_dump(rest: str) -> bool:
    """Return whether *rest* holds nothing but faulthandler's thread headers and frames."""
    return all(not line.strip() or _FRAME_LINE.match(line) for line in rest.splitlines())


def hung_frame(text: str) -> str:
    """Return the frame of the project's own code a killed program was in, verbatim, or ``""``.

    Reads a faulthandler dump (``most recent call first``: the first own frame), a Python
    traceback (the innermost own frame), or else the first own ``file:line`` printed.
    """
    at = text.rfind(_CALL_FIRST)
    if at >= 0:
        for match in _PY_FRAME.finditer(text, at):
            if not is_library_path(match["file"]):
                return match.group(0).strip()
    traceback = find_traceback(text)
    if traceback is not None and traceback.frame:
        return traceback.frame
    for location in find_locations(text):
        path = location[6:].split('"', 1)[0] if location.startswith('File "') else location
        if not is_library_path(path):
            return location
    return ""
