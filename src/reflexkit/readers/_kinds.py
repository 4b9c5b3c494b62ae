"""Kinds of error, recognised from an error message in any language, with advice that fits.

A reader knows its format; what the error *means* is often the same across languages: a value
that is ``None``/``null``/``nil``, a permission refused, a file that is missing, a service that
does not answer. :func:`error_kind` names the kind from the exception class and message, so a
``PermissionError`` is never advised as a missing file and an ``AttributeError`` on ``None`` is
not treated as a failed assertion. :func:`signal_exit` says what an exit code such as 137 or 139
means.
"""

from __future__ import annotations

import attrs

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType, ReflectionCategory

__all__ = ["KILLED", "ErrorKind", "error_kind", "killed", "signal_exit"]


@attrs.frozen
class ErrorKind:
    """What an error message means, whatever the language.

    Attributes:
        name: A short name (``"null value"``, ``"permission"``).
        category: The reflection category it implies.
        advice: What to do differently, one or two sentences.
        failure_type: The failure type it implies when it overrides the reader's
            (a missing module is a ``dependency_error``), else ``None``.
    """

    name: str
    category: ReflectionCategory
    advice: str
    failure_type: FailureType | None = None


_RC = ReflectionCategory

_KINDS: tuple[tuple[Pattern, ErrorKind], ...] = (
    (
        Pattern(
            r"'NoneType' object|\bNoneType\b|Cannot read propert(?:y|ies) of (?:undefined|null)|"
            r"(?:undefined|null) is not (?:an object|a function)|NullPointerException|"
            r"nil pointer dereference|nil map|on a `None` value|is None\b|"
            r"Cannot set propert(?:y|ies) of (?:undefined|null)|NoMethodError: undefined method .* "
            r"for nil"
        ),
        ErrorKind(
            "null value",
            _RC.ROOT_CAUSE,
            "A value is None/null/nil where the code uses it as an object: find where it comes "
            "from (a function with no return, a lookup that missed, an optional never set) and "
            "handle that case or fix its source; do not just guard the line that crashed.",
        ),
    ),
    (
        Pattern(
            r"PermissionError|Permission denied|EACCES|EPERM|Operation not permitted|"
            r"AccessDenied|Access is denied|permission denied|InvalidClientTokenId|"
            r"\b(?:401|403)\b.*(?:Unauthori[sz]ed|Forbidden)|Unauthori[sz]ed|Forbidden"
        ),
        ErrorKind(
            "permission",
            _RC.MISSING_CONTEXT,
            "Access was refused, the path or resource exists: check which user runs the command, "
            "the file's mode and owner, and which credentials or token it loads (and from "
            "where); do not chmod 777, run as root, or delete the file.",
        ),
    ),
    (
        Pattern(
            r"ModuleNotFoundError|No module named|Cannot find module|ERR_MODULE_NOT_FOUND|"
            r"ClassNotFoundException|NoClassDefFoundError|cannot find package|"
            r"no required module provides package|Could not resolve dependenc|"
            r"there is no package called|module '[^']+' not found|"
            r"unresolved import|cannot load such file|Can't locate \S+ in @INC|"
            r"Do you need to install|Could not find (?:a )?(?:package|plugin|module)|"
            r"\bClass [\"'][\w\\\\]+[\"'] not found"
        ),
        ErrorKind(
            "missing module",
            _RC.MISSING_CONTEXT,
            "A module or package the code imports is not installed where the command runs: add "
            "it to the project's dependencies and install them, or fix the import's name.",
            FailureType.DEPENDENCY_ERROR,
        ),
    ),
    (
        Pattern(r"CONFLICT \(|Merge conflict|merge conflict|both modified:|Unmerged paths"),
        ErrorKind(
            "conflict",
            _RC.TOOL_MISUSE,
            "A merge, rebase or cherry-pick stopped on conflicts: resolve the conflict markers in "
            "the files named, stage them, and continue the operation the tool names; do not "
            "start it over.",
        ),
    ),
    (
        Pattern(
            r"command not found|is not recognized as an internal or external command|"
            r"executable file not found|No such command|: not found$|Unknown command"
        ),
        ErrorKind(
            "missing command",
            _RC.MISSING_CONTEXT,
            "A program the command runs is not installed or not on PATH: install it, call it by "
            "its right name or path, or run the project-local one (`python -m`, `npx`).",
        ),
    ),
    (
        Pattern(
            r"unbound variable|parameter null or not set|environment variable \S+ (?:is )?not set|"
            r"(?:is|was) not set in the environment|KeyError: '[A-Z][A-Z0-9_]{2,}'"
        ),
        ErrorKind(
            "unset variable",
            _RC.MISSING_CONTEXT,
            "A variable or setting the program needs is not set where it runs: set it (or give "
            "it a documented default) in the environment or configuration the command uses.",
        ),
    ),
    (
        Pattern(
            r"ConnectionRefused|Connection refused|ECONNREFUSED|ECONNRESET|ENOTFOUND|"
            r"Name or service not known|Temporary failure in name resolution|"
            r"could not connect to server|Failed to establish a new connection|"
            r"Failed to connect to|Couldn't connect to server|Could not connect to|"
            r"No route to host|Network is unreachable"
        ),
        ErrorKind(
            "connection",
            _RC.MISSING_CONTEXT,
            "A service the code connects to is not reachable: start it (or a test double) before "
            "the command, check the host and port it is configured with, and fail fast with a "
            "clear message when it is down.",
        ),
    ),
    (
        Pattern(
            r"RecursionError|maximum recursion depth|Maximum call stack size exceeded|"
            r"StackOverflowError|stack overflow|goroutine stack exceeds"
        ),
        ErrorKind(
            "recursion",
            _RC.APPROACH_FLAW,
            "The recursion never reaches its base case: check the stopping condition and that "
            "each call makes the problem smaller, or rewrite it as a loop.",
        ),
    ),
    (
        Pattern(
            r"MemoryError|OutOfMemoryError|heap out of memory|out of memory|Cannot allocate memory|"
            r"std::bad_alloc"
        ),
        ErrorKind(
            "memory",
            _RC.APPROACH_FLAW,
            "The program ran out of memory: stream or batch the data instead of loading it "
            "whole, and look for a structure that grows without bound.",
        ),
    ),
    (
        Pattern(r"TimeoutError|timed out|Timeout|deadline exceeded|DeadlineExceeded|ETIMEDOUT"),
        ErrorKind(
            "timeout",
            _RC.APPROACH_FLAW,
            "Something waited longer than its limit: find what it waits for (a server, a lock, "
            "a loop with no exit), make that available or bounded, rather than raising the "
            "limit.",
        ),
    ),
    (
        Pattern(
            r"FileNotFoundError|No such file or directory|ENOENT|NoSuchFileException|"
            r"FileNotFoundException|cannot open file|does not exist"
        ),
        ErrorKind(
            "missing file",
            _RC.MISSING_CONTEXT,
            "The program expects a file or path that does not exist where it runs: create it, "
            "pass the right path, or resolve it relative to the code rather than the current "
            "directory.",
        ),
    ),
    (
        Pattern(r"UnicodeDecodeError|UnicodeEncodeError|invalid UTF-8|codec can't (?:de|en)code"),
        ErrorKind(
            "encoding",
            _RC.ROOT_CAUSE,
            "Text is read or written with the wrong encoding: pass the encoding explicitly "
            "(``encoding='utf-8'``) or open binary data in binary mode.",
        ),
    ),
    (
        Pattern(
            r"KeyError|IndexError|index out of range|IndexOutOfBounds|out of bounds|"
            r"ArrayIndexOutOfBoundsException|no such key"
        ),
        ErrorKind(
            "missing key",
            _RC.ROOT_CAUSE,
            "The code looks up a key or index that is not there: check what the collection "
            "really holds at that point (print it) and handle the absent case or fix the key.",
        ),
    ),
    (
        Pattern(r"AssertionError|assertion failed|Assertion .* failed|AssertionFailedError"),
        ErrorKind(
            "assertion",
            _RC.ROOT_CAUSE,
            "An assertion failed: compare the expected and actual values quoted and fix the code "
            "that computes the actual one (change the test only if the test is wrong).",
        ),
    ),
)


def error_kind(message: str) -> ErrorKind | None:
    """Return the kind of the error *message* (class and text), or ``None`` when unknown.

    Args:
        message: An exception line or error message, e.g.
            ``PermissionError: [Errno 13] Permission denied: '/home/u/.aws/credentials'``.

    Returns:
        The first matching kind; the order puts the more specific meaning first (a
        ``TypeError`` about ``NoneType`` is a null value, a ``PermissionError`` is never a
        missing file).
    """
    for pattern, kind in _KINDS:
        if pattern.search(message):
            return kind
    return None


KILLED = ErrorKind(
    "killed",
    _RC.APPROACH_FLAW,
    "The process was killed from outside (SIGKILL/SIGTERM): usually the out-of-memory killer "
    "or a time limit. Find what grows or waits without bound (load less at once, stream or "
    "batch, bound every wait) rather than retrying the same run.",
)
"""What a process killed by SIGKILL or SIGTERM (exit 137, 143, -9, -15) means."""

_KILL_SIGNALS = frozenset({9, 15})

_SIGNALS = {
    9: "killed by SIGKILL (out of memory, or a time limit that killed it)",
    15: "terminated by SIGTERM (stopped from outside, often by a time limit)",
    11: "crashed with SIGSEGV (segmentation fault: invalid memory access)",
    6: "aborted with SIGABRT (a failed runtime check or assertion)",
    7: "crashed with SIGBUS (misaligned or unmapped memory)",
    8: "crashed with SIGFPE (arithmetic error such as integer division by zero)",
    2: "interrupted by SIGINT",
}
_SHELL_SIGNAL_BASE = 128


def killed(exit_code: int | None) -> bool:
    """Return whether *exit_code* says the process was killed by SIGKILL or SIGTERM."""
    if exit_code is None:
        return False
    number = -exit_code if exit_code < 0 else exit_code - _SHELL_SIGNAL_BASE
    return number in _KILL_SIGNALS


def signal_exit(exit_code: int | None) -> str | None:
    """Say what a signal exit code means (137 or -9: killed ...), or ``None`` for others.

    Shells report death by signal N as 128 + N; Python's subprocess reports it as -N.
    """
    if exit_code is None:
        return None
    if exit_code < 0:
        number = -exit_code
    elif exit_code > _SHELL_SIGNAL_BASE:
        number = exit_code - _SHELL_SIGNAL_BASE
    else:
        return None
    meaning = _SIGNALS.get(number)
    return f"exit code {exit_code}: {meaning}" if meaning else None
