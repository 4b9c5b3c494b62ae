"""Python type checkers and linters: mypy, pyright, ruff, flake8, pylint and formatters."""

from __future__ import annotations

import re

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers._findings import (
    Findings,
    Problem,
    clip,
    dedupe,
    group_problems,
    plural,
)

__all__ = ["parse_mypy", "parse_pyflakes_style", "parse_pyright"]

M = re.MULTILINE

# --- mypy ------------------------------------------------------------------------------------

_MYPY = Pattern(
    r"^(?P<loc>[^\s:][^:\n]*\.pyi?:\d+(?::\d+)?): (?P<sev>error|note): (?P<msg>.*?)"
    r"(?:  \[(?P<code>[a-z0-9-]+)\]| ?\n\[(?P<pcode>[a-z0-9-]+)\])?$",
    M,
)
_MYPY_SUMMARY = Pattern(r"^(?P<sum>Found \d+ errors? in \d+ files?.*)$", M)
_MYPY_HINT = Pattern(r'note: Hint: "(?P<cmd>[^"]+)"|note: \(or run "(?P<cmd2>[^"]+)"')
_MYPY_MISSING = frozenset({"import-untyped", "import-not-found", "import"})


_MYPY_CONTINUED = Pattern(r"^(?P<msg>[^\s].*?)(?:  \[(?P<code>[a-z0-9-]+)\])?$")
_MYPY_LINE_START = Pattern(r"^[^\s:][^:\n]*\.pyi?:\d+")


def _mypy_continued(message: str, text: str, end: int) -> tuple[str, str]:
    """Follow a ``--pretty`` message that wraps onto unindented lines; return it and its code."""
    lines = text[end + 1 : end + 600].split("\n")[:4]
    for line in lines:
        if not line or line[0].isspace() or _MYPY_LINE_START.match(line):
            break
        more = _MYPY_CONTINUED.match(line)
        if more is None:
            break
        message = f"{message} {more['msg']}"
        if more["code"]:
            return message, more["code"]
    return message, ""


def parse_mypy(text: str) -> Findings | None:
    """Recognise mypy's ``file:line: error: message  [code]`` lines."""
    problems, codes = _mypy_problems(text)
    if not problems:
        return None
    findings = Findings(tool="mypy", failure_type=FailureType.TYPECHECK_ERROR)
    findings.facts = group_problems(problems, limit=6)
    summary = _MYPY_SUMMARY.search(text)
    findings.summary = summary["sum"] if summary else ""
    findings.hints = dedupe(m["cmd"] or m["cmd2"] for m in _MYPY_HINT.finditer(text))
    findings.headline = (
        f"mypy reported {len(problems)} type error{'s' if len(problems) != 1 else ''}."
    )
    if codes and codes[0] in _MYPY_MISSING:
        findings.category = ReflectionCategory.MISSING_CONTEXT
        findings.advice = (
            "Type information for a third-party package is missing: install its stub package "
            "(as the hint says) and add it to the dev dependencies, then fix the remaining errors "
            "with real annotations rather than `# type: ignore`."
        )
    else:
        findings.advice = (
            "Make the annotations and the code agree at each location: change the code or the "
            "declared type to match what the error says, keeping subclass signatures compatible "
            "with their base class; do not silence errors with `# type: ignore` or `Any`."
        )
    findings.steps.extend(f"Run `{hint}`." for hint in findings.hints[:1])
    findings.steps.append(f"Fix {problems[0].loc} first, then re-run mypy with the same options.")
    findings.confidence = 0.85
    return findings


def _mypy_problems(text: str) -> tuple[list[Problem], list[str]]:
    """Return mypy's errors (quoted with their ``[code]``, as printed) and their codes."""
    problems: list[Problem] = []
    codes: list[str] = []
    for m in _MYPY.finditer(text):
        if m["sev"] != "error":
            continue
        code = m["code"] or m["pcode"] or ""
        message = m["msg"]
        if not code:
            message, code = _mypy_continued(message, text, m.end())
        codes.append(code)
        tail = f"  [{code}]" if code else ""  # as mypy prints it: a later attempt greps it
        problems.append(
            Problem(f"{m['loc']}: error: {clip(message, 150)}{tail}", f"{code}|{message}", m["loc"])
        )
    return problems, codes


# --- pyright ---------------------------------------------------------------------------------

_PYRIGHT = Pattern(r"^\s+(?P<loc>[^\s].*?:\d+:\d+) - (?P<sev>error|warning): (?P<msg>.*)$", M)
_PYRIGHT_RULE = Pattern(r"\((?P<rule>report\w+)\)\s*$")
_PYRIGHT_SUMMARY = Pattern(r"^(?P<sum>\d+ errors?, \d+ warnings?, \d+ informations?) *$", M)


def parse_pyright(text: str) -> Findings | None:
    """Recognise pyright's ``  file:line:col - error: message (reportRule)`` blocks."""
    heads = [m for m in _PYRIGHT.finditer(text) if m["sev"] == "error"]
    if not heads:
        return None
    problems = [_pyright_problem(text, head) for head in heads]
    findings = Findings(tool="pyright", failure_type=FailureType.TYPECHECK_ERROR)
    findings.facts = group_problems(problems, limit=6)
    summary = _PYRIGHT_SUMMARY.search(text)
    findings.summary = summary["sum"] if summary else ""
    findings.headline = (
        f"pyright reported {len(problems)} type error{'s' if len(problems) != 1 else ''}."
    )
    if "reportMissingImports" in text or "reportMissingModuleSource" in text:
        findings.category = ReflectionCategory.MISSING_CONTEXT
    findings.advice = (
        "Fix each location so the types agree: narrow Optional values before use (check for "
        "None first), return the declared type, and pass arguments of the expected type."
    )
    findings.steps.append(f"Start at {problems[0].loc}; re-run pyright on the same paths.")
    findings.confidence = 0.85
    return findings


def _pyright_problem(text: str, head: re.Match[str]) -> Problem:
    """Return one error with the rule named on its last (indented) continuation line."""
    following = [head["msg"]]
    for line in text[head.end() : head.end() + 2000].splitlines()[1:]:
        if not line[:1].isspace() or not line.strip() or _PYRIGHT.match(line):
            break
        following.append(line.strip())
    rules = [found["rule"] for found in map(_PYRIGHT_RULE.search, following) if found]
    rule = rules[0] if rules else ""
    message = _PYRIGHT_RULE.sub("", head["msg"]).strip()
    suffix = f" ({rule})" if rule else ""
    return Problem(
        f"{head['loc']} - error: {clip(message, 150)}{suffix}", f"{rule}|{message}", head["loc"]
    )


# --- ruff, flake8, pylint --------------------------------------------------------------------

_LINT_CONCISE = Pattern(
    r"^(?P<loc>[^\s:][^:\n]*\.pyi?:\d+:\d+): (?P<code>[A-Z]{1,4}\d{2,4}):? "
    r"(?P<fix>\[\*\] )?(?P<msg>.*)$",
    M,
)
_RUFF_FULL = Pattern(
    r"^(?P<code>[A-Z]{1,4}\d{2,4}) (?P<fix>\[\*\] )?(?P<msg>.+)\n\s*--> (?P<loc>\S+:\d+:\d+)$", M
)
_RUFF_GROUPED = Pattern(
    r"^(?P<file>[^\s:][^:\n]*\.pyi?):\n(?P<rows>(?:[ \t]+\d+:\d+ +[A-Z]{1,4}\d{2,4} .*\n?)+)", M
)
"""ruff's ``grouped`` format: a file's name on its own line, then ``  row:col CODE message``."""
_RUFF_GROUPED_ROW = Pattern(
    r"^[ \t]+(?P<pos>\d+:\d+) +(?P<code>[A-Z]{1,4}\d{2,4}) (?P<fix>\[\*\] )?(?P<msg>.*)$", M
)
_RUFF_SUMMARY = Pattern(r"^(?P<sum>Found \d+ errors?(?: \(\d+ fixed, \d+ remaining\))?\.?)$", M)
"""ruff's count, with what ``--fix`` fixed and left: ``Found 8 errors (6 fixed, 2 remaining).``"""
_COUNT_SUMMARY = Pattern(
    r"^(?P<sum>Found \d+ (?:[\w-]+ )?(?:errors?|issues?|problems?|violations?)"
    r"(?: in \d+ files?)?(?: \(\d+ fixed, \d+ remaining\))?\.?)$",
    M,
)
"""Any checker's closing count in ruff's words (``Found 2 dependency issues.``)."""
_LINT_FILE_LEVEL = Pattern(
    r"^(?P<loc>[^\s:][^:\n]*\.(?:pyi?|toml|cfg|ini|txt)): "
    r"(?P<code>[A-Z]{1,4}\d{2,4}):? (?P<msg>.*)$",
    M,
)
"""A finding about a whole file, with no line (``pyproject.toml: DEP002 'rich' ...``)."""
_RUFF_FIXABLE = Pattern(r"^\[\*\] (?P<sum>\d+ fixable with the .*)$", M)
_FLAKE8_REAL = Pattern(r"^(?:F821|F811|F63\d|E999|F82\d|E9\d\d)$")


def _lint_problems(text: str) -> tuple[list[Problem], list[str], int]:
    """Return the diagnostics of ruff's full, grouped or concise format (or flake8's, pylint's).

    Also their codes and how many ruff marks fixable (``[*]``).
    """
    problems: list[Problem] = []
    marks: list[str] = []
    for m in _RUFF_FULL.finditer(text) if "-->" in text else ():
        problems.append(
            Problem(f"{m['code']} {clip(m['msg'], 120)} at {m['loc']}", m["code"], m["loc"])
        )
        marks.append(m["fix"] or "")
    if not problems:
        grouped = ".py:\n" in text or ".pyi:\n" in text  # a file's name alone on its line
        for group in _RUFF_GROUPED.finditer(text) if grouped else ():
            for m in _RUFF_GROUPED_ROW.finditer(group["rows"]):
                loc = f"{group['file']}:{m['pos']}"  # the concise form of the same diagnostic
                fix = m["fix"] or ""
                problems.append(
                    Problem(f"{loc}: {m['code']} {fix}{clip(m['msg'], 120)}", m["code"], loc)
                )
                marks.append(fix)
    if not problems:
        concise = list(_LINT_CONCISE.finditer(text))
        whole_files = list(_LINT_FILE_LEVEL.finditer(text)) if concise else []
        for m in sorted([*concise, *whole_files], key=lambda match: match.start()):
            fix = m.groupdict().get("fix") or ""
            problems.append(  # ruff's `[*]` stays: the line is quoted as printed
                Problem(f"{m['loc']}: {m['code']} {fix}{clip(m['msg'], 120)}", m["code"], m["loc"])
            )
            marks.append(fix)
    return problems, [p.key for p in problems], sum(bool(mark) for mark in marks)


def parse_pyflakes_style(text: str, command: str) -> Findings | None:
    """Recognise ruff (full, grouped and concise formats), flake8 and pylint diagnostics."""
    problems, codes, fixable = _lint_problems(text)
    if not problems:
        return _parse_formatter(text, command)
    # Real bugs (undefined names, syntax errors) first: with many style findings they would
    # otherwise fall past the groups a reflection has room for.
    problems.sort(key=lambda problem: not _FLAKE8_REAL.match(problem.key))
    tool = _linter_name(text, command)
    findings = Findings(
        tool=tool, failure_type=FailureType.LINT_ERROR, category=ReflectionCategory.VERIFICATION
    )
    findings.facts = group_problems(problems, limit=6)
    summary = _RUFF_SUMMARY.search(text) or _COUNT_SUMMARY.search(text)
    findings.summary = summary["sum"] if summary else f"{len(problems)} problems"
    fix_line = _RUFF_FIXABLE.search(text)
    if fix_line:
        findings.hints.append(fix_line["sum"])
    code_names = ", ".join(dedupe(codes)[:8])
    named = "The linter" if tool == "linter" else tool
    findings.headline = f"{named} reported {plural(len(problems), 'problem')} ({code_names})."
    findings.advice = _lint_advice(codes, fixable if tool == "ruff" else 0)
    findings.steps.append(
        f"Start at {problems[0].loc}, then re-run `{command or tool}` until it is clean."
    )
    findings.confidence = 0.85
    return findings


def _linter_name(text: str, command: str) -> str:
    """Return the linter the command runs; else ruff when its output shows, else ``linter``."""
    words = command.split()
    return next(
        (
            t
            for t in ("ruff", "flake8", "pylint", "pycodestyle", "pyflakes")
            if t in words or any(w.endswith("/" + t) for w in words)
        ),
        # named only when it shows: ruff's `-->` frames or `Found N errors.`; else no name
        "ruff" if "-->" in text or _RUFF_SUMMARY.search(text) else "linter",
    )


def _lint_advice(codes: list[str], fixable: int) -> str:
    """Fix each rule by hand (real bugs named), ruff's --fix for the fixable, split for C901."""
    real_bugs = dedupe(c for c in codes if _FLAKE8_REAL.match(c))
    advice = "Fix each rule at the location named, keeping behaviour the same"
    if real_bugs:
        advice += (
            f"; {', '.join(real_bugs)} point at real bugs (undefined or redefined names, "
            "wrong comparisons): fix those by hand"
        )
    if fixable:
        advice += f"; {fixable} can be fixed automatically with `ruff check --fix`"
    if any(c.startswith("C9") for c in codes):
        advice += (
            "; for complexity (C901) split the function into smaller helpers instead of "
            "raising the limit"
        )
    return advice + ". Do not disable the rules."


_WOULD_REFORMAT = Pattern(
    r"^(?:Would reformat:? (?P<file>\S+)|would reformat (?P<bfile>\S+)"
    r"|unformatted: File would be reformatted\n\s*--> (?P<loc>\S+))$",
    M,
)
_REFORMAT_SUMMARY = Pattern(r"^(?P<sum>\d+ files? would be reformatted.*)$", M)


def _parse_formatter(text: str, command: str) -> Findings | None:
    """Recognise ``ruff format --check`` and ``black --check`` listing unformatted files."""
    found = list(_WOULD_REFORMAT.finditer(text))
    files = [m["file"] or m["bfile"] or m["loc"].split(":", 1)[0] for m in found]
    if not files:
        return None
    tool = "black" if "black" in command else "ruff format"
    findings = Findings(
        tool=tool, failure_type=FailureType.LINT_ERROR, category=ReflectionCategory.VERIFICATION
    )
    findings.facts = dedupe(  # as printed: `Would reformat: f`, `would reformat f`, `f:2:1`
        (f"{m['loc']} would be reformatted" if m["loc"] else m.group(0).strip()) for m in found
    )[:6]
    summary = _REFORMAT_SUMMARY.search(text)
    findings.summary = summary["sum"] if summary else ""
    findings.headline = f"{tool} --check found {plural(len(files), 'unformatted file')}."
    findings.advice = (
        f"Run the formatter itself (`{tool}` without --check) on the files named and keep its "
        "changes; formatting is not something to fix by hand."
    )
    findings.steps.append(f"Run `{tool} {' '.join(dedupe(files)[:3])}`, then re-run the check.")
    findings.confidence = 0.8
    return findings
