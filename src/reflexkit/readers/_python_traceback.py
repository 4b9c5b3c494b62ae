"""Python tracebacks: the exception and the innermost frame of the project's own code."""

from __future__ import annotations

import re

import attrs

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers._findings import (
    Findings,
    clip,
)
from reflexkit.readers._kinds import error_kind

__all__ = [
    "MISSING_HINT_CLASSES",
    "Traceback",
    "find_traceback",
    "parse_traceback",
    "unpipe",
]

M = re.MULTILINE

_TB_START = Pattern(r"^\s*Traceback \(most recent call last\):\s*$", M)
_FRAME = Pattern(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?$')
_EXC_LINE = Pattern(r"^(?P<cls>[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)(?:: (?P<msg>.*)|:)?$")
_LIBRARY = Pattern(
    r"(?:site-packages|dist-packages|/lib/python\d|\\lib\\|^<frozen |^<string>|/usr/lib/|"
    r"importlib/__init__\.py|^<[a-z_]+>$)"
)
_REPEATED = Pattern(r"^\s*\[Previous line repeated \d+ more times?\]$")
_ANONYMOUS_SCOPE = Pattern(r"^<(?:listcomp|setcomp|dictcomp|genexpr|lambda)>$")
"""Frames of comprehensions and lambdas, whose enclosing function is what a reader names."""
_QUOTES = frozenset({'"' * 3, "'" * 3})
"""The line that closes a traceback quoted inside another's message (``_RemoteTraceback``)."""
_MODULE_NOT_FOUND = Pattern(r"No module named '(?P<mod>[^']+)'")
MISSING_HINT_CLASSES = frozenset(
    {"FileNotFoundError", "ModuleNotFoundError", "PermissionError", "NotADirectoryError"}
)


@attrs.frozen
class Traceback:
    """The last Python traceback in a piece of output.

    Attributes:
        exception: The exception line (with its continuation lines), verbatim.
        cls: The exception class as printed (``yaml.scanner.ScannerError``).
        frame: The innermost frame in the project's own code, verbatim (``File "a.py", line 3,
            in f``), or the innermost frame when every frame is in a library.
        code: The source line printed under that frame.
        caller: When that frame is a comprehension's or a lambda's, the project's frame of
            the function it runs in, verbatim; else ``""``.
        repeated: The frame Python printed ``[Previous line repeated N more times]`` after
            (the call that recursed), verbatim; else ``""``.
    """

    exception: str
    cls: str
    frame: str
    code: str
    caller: str = attrs.field(default="", kw_only=True)
    repeated: str = attrs.field(default="", kw_only=True)


def _last_traceback(lines: list[str], start: int) -> Traceback | None:
    """Read a traceback whose ``Traceback (most recent call last):`` line is *start*."""
    frames: list[tuple[str, str, str]] = []  # (frame text, file, code line)
    repeated = ""
    indent_of_header = len(lines[start]) - len(lines[start].lstrip())
    for i in range(start + 1, len(lines)):
        line = lines[i]
        match = _FRAME.match(line)
        if match:
            frames.append((line.strip(), match["file"], _code_under(lines, i)))
            continue
        if frames and _REPEATED.match(line):
            repeated = frames[-1][0]
            continue
        stripped = line[indent_of_header:] if line[:indent_of_header].isspace() else line
        exc = _EXC_LINE.match(stripped.rstrip()) if stripped and not stripped[0].isspace() else None
        if exc is not None:
            block = [stripped.rstrip(), *_exception_continuation(lines[i + 1 : i + 4])]
            return _traceback_of(" / ".join(block), exc["cls"], frames, repeated)
    return None


def _code_under(lines: list[str], i: int) -> str:
    """Return the source line printed under the frame at *i* (not a ``^^^`` marker line)."""
    if i + 1 >= len(lines) or _FRAME.match(lines[i + 1]):
        return ""
    nxt = lines[i + 1].strip()
    return nxt if nxt and not set(nxt) <= set("^~ ") else ""


def _exception_continuation(extras: list[str]) -> list[str]:
    """Return the lines that continue an exception's message (indented, or not another one)."""
    block: list[str] = []
    for extra in extras:
        text = extra.strip()
        if (
            not text
            or _TB_START.match(extra)
            or text.startswith(("During handling", "The above"))
            or text in _QUOTES  # the end of a worker's quoted traceback
        ):
            break
        if not extra.startswith((" ", "\t")) and _EXC_LINE.match(text):
            break
        block.append(text)
    return block


def _traceback_of(
    exception: str, cls: str, frames: list[tuple[str, str, str]], repeated: str
) -> Traceback:
    """Return the traceback located at its innermost frame in the project's own code."""
    user = [f for f in frames if not _LIBRARY.search(f[1])]
    chosen = user[-1] if user else (frames[-1] if frames else ("", "", ""))
    caller = next((f[0] for f in reversed(user[:-1]) if not _anonymous(f[0])), "")
    return Traceback(
        exception,
        cls,
        chosen[0],
        chosen[2],
        caller=caller if user and _anonymous(chosen[0]) else "",
        repeated=repeated if repeated != chosen[0] else "",
    )


def _anonymous(frame: str) -> bool:
    """Return whether a frame line is a comprehension's or a lambda's."""
    match = _FRAME.match(frame)
    return match is not None and bool(_ANONYMOUS_SCOPE.match(match["func"] or ""))


_BARE_SYNTAX = Pattern(
    r'^(?P<frame>\s*File "[^"]+", line \d+)\n(?P<code>.*)\n(?:.*\n){0,2}?'
    r"(?P<exc>(?:SyntaxError|IndentationError|TabError): .*)$",
    M,
)


def find_traceback(text: str) -> Traceback | None:
    """Return the last complete traceback in *text* (or a bare SyntaxError), or ``None``."""
    starts = [m.start() for m in _TB_START.finditer(text)]
    if not starts:
        bare = _BARE_SYNTAX.search(text) if "Error: " in text else None
        if bare is None:
            return None
        cls = bare["exc"].split(":", 1)[0]
        return Traceback(bare["exc"].strip(), cls, bare["frame"].strip(), bare["code"].strip())
    lines = text[starts[-1] :].splitlines()
    return _last_traceback(lines, 0)


_CHAINED = (
    "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:",
)


def find_cause(text: str) -> Traceback | None:
    """Return the traceback the last one was chained to, or ``None``.

    ``raise X from exc`` and an exception raised while handling another print the cause's
    traceback first; its exception is often the real problem (a JSON error under a
    ``ConfigError``), and its frame the place to fix (a worker's function, under the
    ``pool.map`` call that re-raised it).
    """
    if not any(marker in text for marker in _CHAINED):
        return None
    starts = [m.start() for m in _TB_START.finditer(text)]
    if len(starts) < 2:  # noqa: PLR2004 -- the cause's traceback and the last one
        return None
    between = text[starts[-2] : starts[-1]]
    if not any(marker in between for marker in _CHAINED):
        return None
    return _last_traceback(between.splitlines(), 0)


_GROUP_MARGIN = Pattern(r"^ *(?:\+-?\+?-* ?\d* ?-*|\| ?)", M)
_GROUP_EXC = Pattern(r"^(?:[A-Za-z_]\w*\.)*\w*ExceptionGroup: .+$", M)


def unpipe(text: str) -> str:
    """Remove the ``| `` and ``+-`` margins of an ExceptionGroup traceback."""
    return _GROUP_MARGIN.sub("", text)


def _first_in_group(text: str, start: int) -> Traceback | None:
    """Return the first sub-exception's traceback after an ExceptionGroup's line."""
    first = _TB_START.search(text, start)
    if first is None:
        return find_traceback(text)
    following = _TB_START.search(text, first.end())
    block = text[first.start() : following.start() if following else len(text)]
    return _last_traceback(block.splitlines(), 0) or find_traceback(text)


def _where(tb: Traceback) -> list[str]:
    """Return where the exception was raised: the frame, its function, the recursing call."""
    where: list[str] = []
    if tb.frame:
        where.append(f"raised from {tb.frame}" + (f" ({clip(tb.code, 80)})" if tb.code else ""))
    if tb.caller:
        where.append(f"within {tb.caller}")
    if tb.repeated:
        where.append(f"recursing at {tb.repeated}")
    return where


def parse_traceback(text: str) -> Findings | None:
    """Recognise a Python script that died with an uncaught exception (or exception group)."""
    group = None
    if "Exception Group Traceback" in text:
        text = unpipe(text)
        group = _GROUP_EXC.search(text)
    tb = _first_in_group(text, group.end()) if group else find_traceback(text)
    if tb is None:
        return None
    short_cls = clip(tb.cls.rsplit(".", 1)[-1], 60)
    findings = Findings(tool="python", failure_type=FailureType.RUNTIME_ERROR)
    findings.headline = f"The Python program raised {short_cls}."
    if group is not None:
        findings.headline = f"The Python program raised an exception group (first: {short_cls})."
        findings.facts.append(clip(group.group(0), 200))
    findings.facts.append(clip(tb.exception, 240))
    findings.details.extend(_where(tb))
    cause = find_cause(text) if group is None else None
    if cause is not None:
        _read_cause(findings, text, tb, cause)
    missing = _MODULE_NOT_FOUND.search(tb.exception)
    if missing or short_cls == "ModuleNotFoundError":
        _advise_missing_module(findings, tb, missing["mod"] if missing else "the module")
    else:
        _advise_exception(findings, tb, short_cls)
    findings.steps.append("Re-run the same command to confirm the exception is gone.")
    return findings


def _read_cause(findings: Findings, text: str, tb: Traceback, cause: Traceback) -> None:
    """Add the exception the last one was chained to, and where it raised."""
    implicit = text.rfind(_CHAINED[1]) > text.rfind(_CHAINED[0])  # the last chain's words
    findings.details.append(  # implicit: the except block handling the first one raised
        f"{_CHAINED[1]} (the first: {clip(cause.exception, 200)})"
        if implicit
        else f"caused by {clip(cause.exception, 200)}"
    )
    if cause.frame and cause.frame != tb.frame and not _LIBRARY.search(cause.frame):
        findings.details.append(
            f"the {'first' if implicit else 'cause'} raised at {cause.frame}"
            + (f" ({clip(cause.code, 80)})" if cause.code else "")
        )


def _advise_missing_module(findings: Findings, tb: Traceback, module: str) -> None:
    """A module that is not installed: a dependency to install and declare."""
    top = module.split(".", 1)[0]
    findings.failure_type = FailureType.DEPENDENCY_ERROR
    findings.category = ReflectionCategory.MISSING_CONTEXT
    findings.advice = (
        f"The module {module!r} is not installed in the environment that ran the command: "
        "install its distribution (the name on PyPI may differ from the import name) and "
        "declare it in the project's dependencies, or import something that is installed."
    )
    findings.steps.append(
        f"Install it: `python -m pip install {top}` and add it to the dependencies."
    )
    findings.steps.append(f"Check the import at {tb.frame or 'the import line'}.")


def _advise_exception(findings: Findings, tb: Traceback, short_cls: str) -> None:
    """Advice for a syntax error, an error of a known kind, or any other exception."""
    if short_cls in {"SyntaxError", "IndentationError", "TabError"}:
        findings.advice = (
            f"The file does not parse: fix the {short_cls} at {tb.frame or 'the line named'} "
            "(the caret marks where the parser gave up; the real mistake is often just before "
            "it), then check with `python -m py_compile FILE`."
        )
    elif (kind := error_kind(tb.exception)) is not None:
        findings.category = kind.category
        findings.advice = kind.advice
        findings.steps.append(
            f"Look at {tb.frame or 'the innermost frame'}: {kind.name} ({short_cls})."
        )
    else:
        findings.advice = (
            f"Fix the code at {tb.frame or 'the innermost frame'} so it no longer raises "
            f"{short_cls}; read the message, it names the exact value or argument at fault."
        )
        if tb.frame:
            findings.steps.append(
                f"Open {tb.frame} and correct the call or value the message names."
            )
