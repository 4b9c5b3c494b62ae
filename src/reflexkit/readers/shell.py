"""Readers for git, shell scripts and timeouts."""

from __future__ import annotations

import re

from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers.findings import Findings, clip, dedupe

__all__ = ["parse_git", "parse_shell", "parse_timeout"]

M = re.MULTILINE

_TIMEOUT_EXIT = 124
"""GNU ``timeout`` exits with 124 when it killed the command."""
_NOT_EXECUTABLE_EXIT = 126
_NOT_FOUND_EXIT = 127

# --- git -------------------------------------------------------------------------------------

_CONFLICT = re.compile(r"^(?P<line>CONFLICT \([^)]+\): .+)$", M)
_GIT_ERROR = re.compile(r"^(?P<line>(?:error|fatal): .+)$", M)
_GIT_HINT_CMD = re.compile(r'"(?P<cmd>git [^"]+)"')
_GIT_REJECTED = re.compile(r"^(?P<line>\s*! \[(?:rejected|remote rejected)\].*)$", M)
_AUTO_MERGE_FAILED = re.compile(r"^(?P<line>Automatic merge failed;.*)$", M)


def parse_git(text: str, command: str) -> Findings | None:
    """Recognise git conflicts, rejected pushes and ``error:``/``fatal:`` lines from git."""
    conflicts = [m["line"].strip() for m in _CONFLICT.finditer(text)]
    rejected = [m["line"].strip() for m in _GIT_REJECTED.finditer(text)]
    is_git = command.lstrip().startswith("git ") or bool(conflicts) or bool(rejected)
    if not is_git:
        return None
    errors = [m["line"].strip() for m in _GIT_ERROR.finditer(text)]
    if not (conflicts or rejected or errors):
        return None
    findings = Findings(
        tool="git", failure_type=FailureType.TOOL_ERROR, category=ReflectionCategory.TOOL_MISUSE
    )
    findings.facts = [clip(line, 180) for line in dedupe(conflicts)[:5]]
    findings.facts.extend(clip(line, 180) for line in dedupe(errors + rejected)[:3])
    auto = _AUTO_MERGE_FAILED.search(text)
    if auto:
        findings.details.append(auto["line"].strip())
    findings.hints = dedupe(m["cmd"] for m in _GIT_HINT_CMD.finditer(text))[:4]
    if conflicts:
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
    elif rejected:
        findings.headline = "git push was rejected."
        findings.advice = (
            "Fetch and integrate the remote changes (rebase or merge), then push again; never "
            "force-push shared branches."
        )
    else:
        findings.headline = "git refused the command."
        findings.advice = (
            "Read git's error: fix the state it names (uncommitted changes, wrong ref or path) "
            "before re-running."
        )
    findings.confidence = 0.8
    return findings


# --- shell -----------------------------------------------------------------------------------

_CR = re.compile(r"\\r['\u2019:]|\$'\\r'|\r(?=['\u2019:]| : )|\^M")
_SHELL_ERROR = re.compile(
    r"^(?P<line>(?:[^\n:]+: )?(?:line \d+: )?[^\n]*?(?:No such file or directory|command not found|"
    r"Permission denied|bad interpreter[^\n]*|not found|syntax error[^\n]*|unbound variable))\s*$",
    M,
)


_BASH_LINE = re.compile(r"^(?:/\S+/)?(?:ba|z|da)?sh: line \d+: |^\S+\.sh: line \d+: ", M)


def parse_shell(text: str, exit_code: int | None) -> Findings | None:
    """Recognise shell-level failures: CRLF scripts, missing commands, permissions, syntax."""
    crlf = _CR.search(text) if ("\\r" in text or "\r" in text or "^M" in text) else None
    bash_line = ": line " in text and _BASH_LINE.search(text) is not None
    if not crlf and exit_code not in {2, 126, 127} and not bash_line:
        return None
    lines = [m["line"].strip() for m in _SHELL_ERROR.finditer(text)]
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
    elif any("unbound variable" in line for line in lines):
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
    elif exit_code == _NOT_FOUND_EXIT or any(
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
    findings.confidence = 0.75
    return findings


# --- timeout ---------------------------------------------------------------------------------

_TIMEOUT_CMD = re.compile(r"^\s*(?:\S*/)?timeout\s+(?:-\S+\s+)*(?P<secs>\d+(?:\.\d+)?[smhd]?)\s")
_NUMBERS = re.compile(r"\d+")
_TIMEOUT_TEXT = re.compile(
    r"(?i)\b(?:timed out|timeout expired|TimeoutExpired|deadline exceeded)\b"
)


def parse_timeout(text: str, command: str, exit_code: int | None) -> Findings | None:
    """Recognise a command killed by ``timeout`` (exit code 124) or a time limit."""
    limit = _TIMEOUT_CMD.match(command)
    tail = text[-600:]
    killed = (
        exit_code == _TIMEOUT_EXIT
        or (limit is not None and exit_code in {137, 143})
        or (exit_code not in {0, None} and bool(_TIMEOUT_TEXT.search(tail)))
    )
    if not killed:
        return None
    findings = Findings(
        tool="timeout", failure_type=FailureType.TIMEOUT, category=ReflectionCategory.APPROACH_FLAW
    )
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if lines:
        last = lines[-1]
        shape = _NUMBERS.sub("#", last)
        repeats = sum(1 for line in lines if _NUMBERS.sub("#", line) == shape)
        findings.facts.append(clip(last, 200))
        if repeats > 1:
            findings.details.append(
                f"the same line repeated {repeats} times: the program was waiting or looping"
            )
        others = dedupe(line for line in lines if _NUMBERS.sub("#", line) != shape)
        findings.details.extend(clip(line, 150) for line in others[-2:])
    secs = (
        f" after {limit['secs']}" + ("" if limit["secs"][-1].isalpha() else " s") if limit else ""
    )
    findings.headline = f"The command was killed by the time limit{secs} (exit code {exit_code})."
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
