"""Readers of real tool output, one module per tool family, and the dispatcher that picks one.

:func:`analyse` strips terminal colours, runs the parsers in order of specificity (test
runners before type checkers before linters before compilers before tracebacks) and returns
the first that recognises the output, merged with what a wrapping tool (``make``,
``timeout``) adds. The order matters: pytest output contains tracebacks, a make run contains
gcc's diagnostics, ``npm test`` wraps jest.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from reflexkit.models import FailureContext, FailureType
from reflexkit.reflection._tools._base import ANSI, Findings, dedupe
from reflexkit.reflection._tools.javascript import (
    parse_eslint,
    parse_jest,
    parse_node,
    parse_node_test,
    parse_tsc,
)
from reflexkit.reflection._tools.native import (
    parse_cargo_test,
    parse_crash,
    parse_gcc,
    parse_make,
    parse_rust_panic,
    parse_rustc,
)
from reflexkit.reflection._tools.python import (
    parse_mypy,
    parse_pip,
    parse_pyflakes_style,
    parse_pyright,
    parse_pytest,
    parse_traceback,
    parse_unittest,
)
from reflexkit.reflection._tools.shell import (
    parse_generic,
    parse_git,
    parse_shell,
    parse_timeout,
)

__all__ = ["Findings", "analyse", "clean_output", "type_from_command"]

HEAD_CHARS = 12_000
TAIL_CHARS = 6_000
"""Longer outputs are read as their first and last parts: first errors and final summaries."""

_CR_SCRIPT = re.compile(r"\\r['\u2019:]|\$'\\r'|\r(?=['\u2019:])")

Parser = Callable[[str, FailureContext], Findings | None]

# Each parser runs only when one of its marker strings is in the output (substring tests are
# ~100x cheaper than a regex pass), which keeps a 100 KB output under a few milliseconds.
_PARSERS: tuple[tuple[tuple[str, ...], Parser], ...] = (
    (("CONFLICT (", "error: ", "fatal: ", "[rejected]"), lambda t, f: parse_git(t, f.command)),
    (("\\r", "\r"), lambda t, _f: parse_shell(t, None) if _CR_SCRIPT.search(t) else None),
    (("\nRan ", "FAILED ("), lambda t, _f: parse_unittest(t)),
    (
        (
            "::",
            "pytest",
            "short test summary",
            " passed",
            " failed",
            " error",
            "ERROR: ",
            "no tests",
        ),
        lambda t, f: parse_pytest(t, f.command),
    ),
    (("Tests:", "● "), lambda t, _f: parse_jest(t)),
    (("# fail ", "\u2139 fail "), lambda t, _f: parse_node_test(t)),
    (("test result: ", "... FAILED"), lambda t, _f: parse_cargo_test(t)),
    ((": error: ",), lambda t, _f: parse_mypy(t)),
    ((" - error: ",), lambda t, _f: parse_pyright(t)),
    (("error TS",), lambda t, _f: parse_tsc(t)),
    (("-->", ".py:", "eformat"), lambda t, f: parse_pyflakes_style(t, f.command)),
    (("  error  ", "  warning  "), lambda t, _f: parse_eslint(t)),
    (("error[", "error: "), lambda t, _f: parse_rustc(t)),
    (
        (
            ": error: ",
            ": fatal error: ",
            "undefined reference",
            "cannot find -l",
            "multiple definition",
        ),
        lambda t, _f: parse_gcc(t),
    ),
    (("ERROR: ", "pip", "error: "), lambda t, f: parse_pip(t, f.command)),
    (
        ("Traceback (most recent call last)", "SyntaxError: ", "IndentationError: ", "TabError: "),
        lambda t, _f: parse_traceback(t),
    ),
    (("    at ",), lambda t, _f: parse_node(t)),
    (("panicked at",), lambda t, _f: parse_rust_panic(t)),
    (("*** ",), lambda t, _f: parse_make(t)),
    ((), lambda t, f: parse_crash(t, f.exit_code)),
    ((), lambda t, f: parse_shell(t, f.exit_code)),
)

_COMMAND_TYPES: tuple[tuple[re.Pattern[str], FailureType], ...] = (
    (
        re.compile(
            r"\b(?:pytest|unittest|jest|vitest|mocha|cargo test|go test|npm (?:run )?test|"
            r"yarn test|pnpm test|node --test|tox|nox)\b"
        ),
        FailureType.TEST_FAILURE,
    ),
    (re.compile(r"\b(?:mypy|pyright|tsc|vue-tsc|basedpyright)\b"), FailureType.TYPECHECK_ERROR),
    (
        re.compile(
            r"\b(?:ruff|flake8|pylint|eslint|clippy|black --check|prettier|stylelint|"
            r"shellcheck)\b"
        ),
        FailureType.LINT_ERROR,
    ),
    (
        re.compile(
            r"\b(?:pip3?|npm (?:install|ci|i)|yarn (?:add|install)|poetry|uv (?:sync|add|pip)|"
            r"cargo (?:fetch|update|add))\b"
        ),
        FailureType.DEPENDENCY_ERROR,
    ),
    (
        re.compile(
            r"\b(?:gcc|g\+\+|clang|make|cmake|cargo build|cargo check|go build|javac|"
            r"npm run build)\b"
        ),
        FailureType.BUILD_ERROR,
    ),
    (re.compile(r"\b(?:git)\b"), FailureType.TOOL_ERROR),
    (re.compile(r"\b(?:python3?|node|cargo run|ruby|java|deno|bun)\b"), FailureType.RUNTIME_ERROR),
    (re.compile(r"^(?:ba|z|da)?sh\b|\.sh\b"), FailureType.TOOL_ERROR),
)


def clean_output(text: str) -> str:
    """Return *text* as the parsers read it: no colours, LF line ends, head and tail if long."""
    text = ANSI.sub("", text).replace("\r\n", "\n")
    if len(text) > HEAD_CHARS + TAIL_CHARS:
        text = text[:HEAD_CHARS] + "\n" + text[-TAIL_CHARS:]
    return text


def type_from_command(command: str) -> FailureType:
    """Guess the failure type from the command line alone (``UNKNOWN`` when it says nothing)."""
    for pattern, failure_type in _COMMAND_TYPES:
        if pattern.search(command):
            return failure_type
    return FailureType.UNKNOWN


def analyse(failure: FailureContext) -> Findings:
    """Read a failure's output with the parser for its format.

    Args:
        failure: The failure; its command and exit code help pick the parser.

    Returns:
        The findings of the first parser that recognised the output, or the generic reader's
        low-confidence findings when none did.
    """
    text = clean_output(failure.error_output)
    timeout = parse_timeout(text, failure.command, failure.exit_code)
    found: Findings | None = None
    for markers, parser in _PARSERS:
        if markers and not any(marker in text for marker in markers):
            continue
        found = parser(text, failure)
        if found is not None:
            break
    if found is not None and found.tool in {"gcc", "rustc", "clippy"}:
        wrapper = parse_make(text)
        if wrapper is not None:
            found.details.extend((wrapper.details or wrapper.facts)[:1])
    if timeout is not None:
        if found is not None and found.tool != "shell":
            timeout.details = dedupe([*found.facts[:2], *timeout.details])
        return timeout
    if found is None:
        found = parse_generic(text, failure.exit_code)
        guessed = type_from_command(failure.command)
        if guessed is not FailureType.UNKNOWN:
            found.failure_type = guessed
    return found
