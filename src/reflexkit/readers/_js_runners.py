"""Readers for the JavaScript test runners vitest and mocha.

vitest prints one block per failure, headed `` FAIL  file > suite > test``, with the error
line (``AssertionError: expected 1 to be 2``), a diff and ``\u276f file:line:col`` locations, and
ends with ``Test Files`` and ``Tests`` summary lines. mocha prints ``N passing``/``N failing``
and then numbered failures: ``1) suite`` with the test's title on the next lines, the error
and its ``at`` stack.
"""

from __future__ import annotations

import re

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers._findings import MAX_BLOCKS, Findings, clip, plural
from reflexkit.readers._lines import matching_lines

__all__ = ["parse_mocha", "parse_vitest"]

M = re.MULTILINE

_INTERNAL = Pattern(r"node:|node_modules|<anonymous>|^internal/")
_ERROR_LINE = Pattern(
    r"^\s*(?P<e>(?:[A-Z][\w$]*)?(?:Error|Exception)(?: \[\w+\])?: .*|"
    r"(?:[A-Z][\w$]*)?Error(?: \[\w+\])?)$"
)

# --- vitest ----------------------------------------------------------------------------------

_VITEST_HEAD = Pattern(r"^ FAIL  (?P<file>[^\s>\[]+)(?: > (?P<name>[^\n]+)| \[ [^\n]+ \])?$", M)
_VITEST_HEAD_NEEDLE = Pattern(r" FAIL  ")
_VITEST_SUMMARY_NEEDLE = Pattern(r"Test Files  |Tests  ")
_VITEST_END = Pattern(r"^\u23af+(?:\[\d+/\d+\]\u23af*)?$|^\u23af+ [A-Z]", M)
_VITEST_LOC = Pattern(r"^\s*\u276f (?:(?P<fn>\S+) )?(?P<loc>[^\s()]+:\d+:\d+)$", M)
_VITEST_SUMMARY = Pattern(r"^\s*(?P<sum>(?:Test Files|Tests)  .*\(\d+\))$", M)
_EQUALITY_NOTE = Pattern(r" // Object\.is equality$| imported from \S+$")
_CANNOT_FIND = Pattern(r"Cannot find (?:module|package) '(?P<mod>[^']+)'")


def parse_vitest(text: str) -> Findings | None:
    """Recognise vitest's failure blocks (`` FAIL  file > test``) and its summary lines."""
    heads = matching_lines(text, _VITEST_HEAD_NEEDLE, _VITEST_HEAD)
    summaries = [m["sum"] for m in matching_lines(text, _VITEST_SUMMARY_NEEDLE, _VITEST_SUMMARY)]
    if not heads or not summaries:
        return None
    findings = Findings(tool="vitest", failure_type=FailureType.TEST_FAILURE)
    load_errors: list[str] = []
    for index, head in enumerate(heads):
        name = head["name"] or ""
        if name:
            findings.tests.append(name)
        if len(findings.facts) >= MAX_BLOCKS:
            continue
        error, loc = _vitest_error(_vitest_body(text, heads, index))
        if not name:
            load_errors.append(error)
        # the id as vitest prints it, file first: `test/a.test.ts > suite > test`
        label = f"{head['file']} > {name}" if name else f"{head['file']} (failed to load)"
        findings.facts.append(
            label + (f": {clip(error, 100)}" if error else "") + (f" ({loc})" if loc else "")
        )
    findings.summary = "; ".join(s.strip() for s in summaries[-2:])
    _vitest_advice(findings, heads, load_errors)
    findings.confidence = 0.85 if findings.facts else 0.55
    return findings


def _vitest_body(text: str, heads: list[re.Match[str]], index: int) -> str:
    """The text of the *index*-th failure block, up to the next block or its closing rule."""
    head = heads[index]
    end = heads[index + 1].start() if index + 1 < len(heads) else len(text)
    body = text[head.end() : min(end, head.end() + 6000)]
    stop = _VITEST_END.search(body)
    return body[: stop.start()] if stop else body


def _vitest_error(body: str) -> tuple[str, str]:
    """A failure block's error line and its first location outside node's and libraries'."""
    error = next((m["e"].strip() for m in map(_ERROR_LINE.match, body.splitlines()) if m), "")
    loc = next((m["loc"] for m in _VITEST_LOC.finditer(body) if not _INTERNAL.search(m["loc"])), "")
    return _EQUALITY_NOTE.sub("", error), loc


def _vitest_advice(findings: Findings, heads: list[re.Match[str]], load_errors: list[str]) -> None:
    """The headline, the advice (a test file that does not load) and the steps."""
    count = len(findings.tests)
    findings.headline = f"vitest reported {plural(count, 'failing test')}" + (
        f" and {plural(len(load_errors), 'test file')} that failed to load." if load_errors else "."
    )
    missing = [m for m in (_CANNOT_FIND.search(e) for e in load_errors) if m]
    if missing and len(load_errors) >= count:
        findings.category = ReflectionCategory.MISSING_CONTEXT
    findings.advice = _runner_advice(missing)
    first = next((h for h in heads if h["name"]), None)
    if first is not None:
        leaf = first["name"].rsplit(" > ", 1)[-1]
        findings.steps.append(f'Run it alone: `npx vitest run {first["file"]} -t "{leaf}"`.')
    findings.steps.append("Re-run `npx vitest run` to confirm all pass.")


def _runner_advice(missing: list[re.Match[str]]) -> str:
    """Advice for a test run, naming an import that does not resolve."""
    if missing:
        module = missing[0]["mod"]
        return (
            f"A test file imports {module!r}, which does not resolve: create the module or fix "
            "the import path (extension and directory) before the tests can run; then compare "
            "expected with received for the failing assertions."
        )
    return (
        "Compare the expected with the received value of each failing assertion and fix the "
        "code under test (at the location named, not the test), unless the test's expectation "
        "is wrong."
    )


# --- mocha -----------------------------------------------------------------------------------

_MOCHA_FAILING = Pattern(r"^\s*(?P<n>\d+) failing$", M)
_MOCHA_PASSING = Pattern(r"^\s*(?P<sum>\d+ passing \([^)]*\))$", M)
_MOCHA_EXCEPTION_NEEDLE = Pattern(r"Exception during run: ")
_MOCHA_EXCEPTION = Pattern(r"^\s*Exception during run: (?P<e>.+)$", M)
_MAX_TESTS = 100
"""Failing tests named at most (the count is mocha's own)."""
_MOCHA_FAILING_NEEDLE = Pattern(r"\d failing")
_MOCHA_PASSING_NEEDLE = Pattern(r"\d passing \(")
_MOCHA_BLOCK = Pattern(r"^  (?P<num>\d+)\) (?P<title>\S.*)$", M)
_MOCHA_AT = Pattern(r"^\s+at (?:.*?\()?(?P<loc>(?:file://)?[^\s()]+:\d+:\d+)\)?$", M)


def parse_mocha(text: str) -> Findings | None:
    """Recognise mocha's ``N passing``/``N failing`` report and its numbered failures."""
    found = matching_lines(text, _MOCHA_FAILING_NEEDLE, _MOCHA_FAILING, limit=1)
    failing = found[0] if found else None
    if failing is None:
        return _mocha_exception(text)
    report = text[failing.end() :]
    blocks = list(_MOCHA_BLOCK.finditer(report))[:_MAX_TESTS]
    findings = Findings(tool="mocha", failure_type=FailureType.TEST_FAILURE)
    for index, head in enumerate(blocks):
        end = blocks[index + 1].start() if index + 1 < len(blocks) else len(report)
        title, rest = _mocha_title(head["title"], report[head.end() : min(end, head.end() + 6000)])
        findings.tests.append(title[-1])
        if len(findings.facts) < MAX_BLOCKS:
            findings.facts.append(_mocha_fact(title, rest))
    passed = matching_lines(text, _MOCHA_PASSING_NEEDLE, _MOCHA_PASSING, limit=1)
    passing = passed[0]["sum"] if passed else ""
    findings.summary = ", ".join(s for s in (passing, failing.group(0).strip()) if s)
    findings.headline = f"mocha reported {plural(int(failing['n']), 'failing test')}."
    _mocha_advice(findings)
    findings.confidence = 0.85 if findings.facts else 0.55
    return findings


def _mocha_fact(title: list[str], rest: str) -> str:
    """One failure as quoted: its title, its error and its first own location."""
    error = _mocha_error(rest)
    loc = next((m["loc"] for m in _MOCHA_AT.finditer(rest) if not _INTERNAL.search(m["loc"])), "")
    return (
        " ".join(title) + (f": {clip(error, 160)}" if error else "") + (f" ({loc})" if loc else "")
    )


def _mocha_advice(findings: Findings) -> None:
    findings.advice = _runner_advice([])
    if any("Timeout of" in fact for fact in findings.facts):
        findings.advice += (
            " A 'Timeout of Nms exceeded' means the test never finished: call done() or "
            "return/await the promise."
        )
    if findings.tests:
        findings.steps.append(f'Run it alone: `npx mocha --grep "{findings.tests[0]}"`.')
    findings.steps.append("Re-run mocha to confirm all pass.")


def _mocha_exception(text: str) -> Findings | None:
    """Read a run where mocha could not load the tests (``Exception during run: ...``)."""
    crashed = matching_lines(text, _MOCHA_EXCEPTION_NEEDLE, _MOCHA_EXCEPTION, limit=1)
    if not crashed:
        return None
    error = crashed[0]["e"].strip()
    missing = _CANNOT_FIND.search(error)
    return Findings(
        tool="mocha",
        failure_type=FailureType.TEST_FAILURE,
        category=ReflectionCategory.MISSING_CONTEXT if missing else ReflectionCategory.ROOT_CAUSE,
        headline="mocha could not load the test files, so no test ran.",
        facts=[clip(error, 220)],
        advice="A test file (or what it imports) fails while loading, so no test ran: fix the "
        "error it reports (a module path that does not resolve, a syntax error, an ESM/CommonJS "
        "mismatch) before looking at any test.",
        steps=["Fix the load error, then re-run mocha."],
        confidence=0.8,
    )


def _mocha_title(first: str, body: str) -> tuple[list[str], str]:
    """Return the parts of a failure's title (suite ... test) and the text after it."""
    parts = [first]
    offset = body.find("\n") + 1 if body.startswith("\n") else 0
    if not first.endswith(":"):
        for line in body[offset : offset + 1000].split("\n", 8)[:7]:
            offset += len(line) + 1
            parts.append(line.strip())
            if line.rstrip().endswith(":"):
                break
    parts = [p for p in parts if p]
    parts[-1] = parts[-1].removesuffix(":")
    return parts, body[offset : offset + 3000]


def _mocha_error(rest: str) -> str:
    """Return the error of a failure: its first line, and the next when it ends with ``:``."""
    lines = [line.strip() for line in rest.splitlines() if line.strip()]
    if not lines:
        return ""
    error = lines[0]
    if error.endswith(":") and len(lines) > 1 and not lines[1].startswith(("at ", "+ ")):
        error += " " + lines[1]
    return error
