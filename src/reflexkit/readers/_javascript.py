"""Parsers for the JavaScript/TypeScript family.

tsc, eslint, node stack traces, jest and node:test (TAP and spec reporters).
"""

from __future__ import annotations

import re

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers._findings import (
    MAX_BLOCKS,
    Findings,
    Problem,
    clip,
    dedupe,
    group_problems,
    plural,
)
from reflexkit.readers._lines import matching_lines

__all__ = ["parse_eslint", "parse_jest", "parse_node", "parse_node_test", "parse_tsc"]

M = re.MULTILINE

# --- tsc -------------------------------------------------------------------------------------

_TSC = Pattern(
    r"^(?P<loc>[^\s(][^(\n]*\(\d+,\d+\)): error (?P<code>TS\d+): (?P<msg>.*)$"
    r"|^(?P<ploc>[^\s:][^:\n]*:\d+:\d+) - error (?P<pcode>TS\d+): (?P<pmsg>.*)$"
    r"|^error (?P<gcode>TS\d+): (?P<gmsg>.*)$",
    M,
)
_TSC_SUMMARY = Pattern(r"^(?P<sum>Found \d+ errors?.*)$", M)


def _tsc_problem(m: re.Match[str]) -> tuple[Problem, str, str]:
    """One diagnostic in any of tsc's three forms: the problem, its code and its file."""
    if m["loc"]:
        loc, code, msg, sep = m["loc"], m["code"], m["msg"], ": "
    elif m["ploc"]:
        loc, code, msg, sep = m["ploc"], m["pcode"], m["pmsg"], " - "
    else:
        loc, code, msg, sep = "", m["gcode"], m["gmsg"], ""
    head = f"{loc}{sep}" if loc else ""
    problem = Problem(f"{head}error {code}: {clip(msg, 150)}", f"{code}|{msg}", loc)
    return problem, code, re.split(r"[(:]", loc, maxsplit=1)[0]


def parse_tsc(text: str) -> Findings | None:
    """Recognise tsc diagnostics: ``file(line,col): error TS2322: ...`` and the pretty form."""
    read = [_tsc_problem(m) for m in _TSC.finditer(text)]
    if not read:
        return None
    problems = [problem for problem, _, _ in read]
    codes = [code for _, code, _ in read]
    findings = Findings(tool="tsc", failure_type=FailureType.TYPECHECK_ERROR)
    findings.facts = group_problems(problems, limit=6)
    summary = _TSC_SUMMARY.search(text)
    findings.summary = summary["sum"] if summary else ""
    findings.headline = (
        f"The TypeScript compiler reported {plural(len(problems), 'error')} "
        f"({', '.join(dedupe(codes)[:6])})."
    )
    _tsc_advice(findings, codes, [file for _, _, file in read])
    findings.steps.append(
        f"Fix {problems[0].loc or problems[0].text} first, then type-check again with the same "
        "command."
    )
    findings.confidence = 0.85
    return findings


def _tsc_advice(findings: Findings, codes: list[str], files: list[str]) -> None:
    """The category and advice: a wrong configuration, modules not found, or type errors."""
    config_errors = [c for c in codes if c.startswith(("TS5", "TS6", "TS18003"))]
    if config_errors or any(f.endswith(("tsconfig.json", ".json")) for f in files if f):
        findings.category = ReflectionCategory.TOOL_MISUSE
        findings.advice = (
            "The compiler configuration itself is wrong: correct the named options in "
            "tsconfig.json (exact option names and values from the TypeScript docs) before "
            "touching the source files."
        )
    elif (missing := sum(c in {"TS2307", "TS7016"} for c in codes)) * 2 >= len(codes):
        # Most errors are modules that can't be found: that is what to fix. One missing module
        # among many type errors leaves them the root cause (and is named in the facts).
        findings.category = ReflectionCategory.MISSING_CONTEXT
        findings.advice = (
            "A module or its type declarations cannot be found: install the package (and its "
            "@types/ package) or fix the import path, then type-check again."
        )
    else:
        findings.advice = (
            "Make the code match the declared types at each location: supply the missing "
            "properties and arguments, and convert values to the expected type instead of "
            "casting with `as any` or adding `@ts-ignore`."
        ) + (" Install or fix the import of the module tsc can't find as well." if missing else "")


# --- eslint ----------------------------------------------------------------------------------

_ESLINT_FILE = Pattern(r"^(?P<file>[^\s].*\.(?:[cm]?[jt]sx?|vue|svelte|json))$")
_ESLINT_ROW = Pattern(
    r"^\s+(?P<line>\d+):(?P<col>\d+)\s+(?P<sev>error|warning)\s+(?P<msg>.+?)(?:\s{2,}(?P<rule>[@\w/-]+))?\s*$"
)
_ESLINT_SUMMARY = Pattern(r"^(?P<sum>✖ \d+ problems? \(.*\))", M)
_ENV_GLOBALS = frozenset(
    {
        "document",
        "window",
        "fetch",
        "navigator",
        "localStorage",
        "process",
        "require",
        "module",
        "exports",
        "__dirname",
        "console",
        "describe",
        "it",
        "test",
        "expect",
        "jest",
        "Buffer",
        "setTimeout",
        "globalThis",
        "URL",
        "alert",
        "HTMLElement",
        "beforeEach",
    }
)
_UNDEF_NAME = Pattern(r"'(?P<name>[\w$]+)' is not defined")


_ESLINT_EXT = r"\.(?:[cm]?[jt]sx?|vue|svelte|json)"
_ESLINT_ONE_LINE = Pattern(
    # --format unix: file:line:col: message [Error/rule]
    rf"^(?P<file>[^\s:][^:\n]*{_ESLINT_EXT}):(?P<line>\d+):(?P<col>\d+): (?P<msg>.+?)"
    r" \[(?P<sev>Error|Warning)(?:/(?P<rule>[@\w/-]+))?\]$"
    # --format compact: file: line N, col N, Error - message (rule)
    rf"|^(?P<cfile>[^\s:][^:\n]*{_ESLINT_EXT}): line (?P<cline>\d+), col (?P<ccol>\d+), "
    r"(?P<csev>Error|Warning) - (?P<cmsg>.+?)(?: \((?P<crule>[@\w/-]+)\))?$",
    M,
)
_ESLINT_COUNT = Pattern(r"^(?P<sum>\d+ problems?)$", M)
_ESLINT_MAX_WARNINGS = Pattern(r"^(?P<line>ESLint found too many warnings \(maximum: \d+\)\.)$", M)


def _short_paths(files: list[str]) -> dict[str, str]:
    """Map absolute paths to their tails below the directory they share (one parent kept).

    The tail of a path as printed is still verbatim, and reads like the project's own path.
    """
    absolute = [f for f in files if f.startswith("/")]
    if not absolute:
        return {}
    parts = [f.split("/")[:-1] for f in absolute]
    common = parts[0]
    for other in parts[1:]:
        while other[: len(common)] != common:
            common = common[:-1]
    keep = max(len(common) - 1, 1) if len(set(absolute)) == 1 else len(common)
    return {f: "/".join(f.split("/")[keep:]) for f in absolute}


def _eslint_one_line_rows(
    text: str, severity: str
) -> tuple[list[Problem], list[str], list[str]] | None:
    """Read eslint's one-line formats (``unix``, ``compact``) like its stylish rows."""
    rows = [
        m for m in _ESLINT_ONE_LINE.finditer(text) if (m["sev"] or m["csev"]).lower() == severity
    ]
    if not rows:
        return None
    short = _short_paths([m["file"] or m["cfile"] for m in rows])
    problems: list[Problem] = []
    rules: list[str] = []
    undefined: list[str] = []
    for m in rows:
        path = m["file"] or m["cfile"]
        rule = m["rule"] or m["crule"] or ""
        msg = m["msg"] or m["cmsg"]
        rules.append(rule)
        name = _UNDEF_NAME.search(msg)
        if name:
            undefined.append(name["name"])
        problems.append(_one_line_problem(m, short.get(path, path), rule, msg))
    return problems, rules, undefined


def _one_line_problem(m: re.Match[str], path: str, rule: str, msg: str) -> Problem:
    """One row of the ``unix`` format (``f:1:2: msg [Error/rule]``) or the ``compact`` one."""
    if m["file"]:
        loc = f"{path}:{m['line']}:{m['col']}"
        shown = f"{loc}: {clip(msg, 140)} [{m['sev']}/{rule}]" if rule else f"{loc}: {msg}"
    else:
        loc = f"{path}: line {m['cline']}, col {m['ccol']}"
        shown = f"{loc}, {m['csev']} - {clip(msg, 140)}" + (f" ({rule})" if rule else "")
    return Problem(shown, f"{rule}|{msg}", loc)


def parse_eslint(text: str) -> Findings | None:
    """Recognise eslint's stylish format: a file line, then ``line:col severity message rule``.

    Also its one-line formats, ``--format unix`` and ``--format compact``. Errors are
    reported, and the warnings' other rules named beside them; warnings in full only when
    there are no errors (``--max-warnings 0``).
    """
    errors = _eslint_rows(text, "error") or _eslint_one_line_rows(text, "error")
    warnings = _eslint_rows(text, "warning") or _eslint_one_line_rows(text, "warning")
    found = errors or warnings
    if found is None:
        return None
    problems, rules, undefined = found
    findings = Findings(
        tool="eslint", failure_type=FailureType.LINT_ERROR, category=ReflectionCategory.VERIFICATION
    )
    _eslint_findings(findings, text, problems, rules, undefined)
    if errors and warnings:
        # errors come first, but the warnings fail a `--max-warnings` gate just the same
        warned = dedupe(r for r in warnings[1] if r and r not in rules)
        if warned:
            findings.details.append(
                f"also {plural(len(warnings[0]), 'warning')}: " + ", ".join(warned[:5])
            )
    return findings


def _eslint_rows(text: str, severity: str) -> tuple[list[Problem], list[str], list[str]] | None:
    """Return the problems of one severity, their rules and the undefined names, or ``None``."""
    current = ""
    problems: list[Problem] = []
    rules: list[str] = []
    undefined: list[str] = []
    for line in text.splitlines():
        head = _ESLINT_FILE.match(line)
        if head:
            current = head["file"]
            continue
        row = _ESLINT_ROW.match(line) if current else None
        if row is None or row["sev"] != severity:
            continue
        rule = row["rule"] or ""
        rules.append(rule)
        loc = f"{current}:{row['line']}:{row['col']}"
        name = _UNDEF_NAME.search(row["msg"])
        if name:
            undefined.append(name["name"])
        suffix = f" ({rule})" if rule else ""
        problems.append(
            Problem(f"{loc} {clip(row['msg'], 140)}{suffix}", f"{rule}|{row['msg']}", loc)
        )
    return (problems, rules, undefined) if problems else None


def _eslint_findings(
    findings: Findings,
    text: str,
    problems: list[Problem],
    rules: list[str],
    undefined: list[str],
) -> Findings:
    """Fill eslint findings from its problems."""
    findings.facts = group_problems(problems, limit=6, more_locs=2)
    summary = _ESLINT_SUMMARY.search(text) or _ESLINT_COUNT.search(text)
    findings.summary = summary["sum"] if summary else ""
    too_many = _ESLINT_MAX_WARNINGS.search(text)
    if too_many:
        findings.details.append(too_many["line"])
    rule_names = ", ".join(dedupe(r for r in rules if r)[:6])
    findings.headline = f"eslint reported {plural(len(problems), 'problem')}" + (
        f" ({rule_names})." if rule_names else "."
    )
    env_names = dedupe(n for n in undefined if n in _ENV_GLOBALS)
    env_count = sum(n in _ENV_GLOBALS for n in undefined)
    if env_names:
        # Unknown globals are the lesson only when they are most of what eslint reported;
        # one `'document' is not defined` among other rules leaves the code to fix.
        if 2 * env_count >= len(problems):
            findings.category = ReflectionCategory.MISSING_CONTEXT
        findings.advice = (
            f"{', '.join(env_names)} are environment globals eslint does not know about: declare "
            "the environment in the eslint config (`languageOptions.globals` with "
            "`globals.browser`/`globals.node`, or `env` in .eslintrc) instead of disabling the "
            "rule; fix the other rules in the code."
        )
    else:
        findings.advice = (
            "Fix each rule at the location named (the rule name tells what eslint wants); do not "
            "disable rules with comments."
        )
    findings.steps.append(f"Start at {problems[0].loc}; re-run eslint on the same paths.")
    findings.confidence = 0.85
    return findings


# --- node stack traces -----------------------------------------------------------------------

_JS_ERROR = Pattern(
    r"^(?P<line>(?P<cls>(?:[A-Z]\w*)?Error|[A-Z]\w*Exception)"
    r"(?: \[(?P<code>[A-Z_0-9]+)\])?: (?P<msg>.*))$",
    M,
)
_JS_FRAME = Pattern(r"^\s+at (?P<frame>.+)$", M)
_FRAME_LOC = Pattern(r"\(?(?P<loc>(?:file://)?[^\s()]+:\d+:\d+)\)?$")
_JS_INTERNAL = Pattern(r"node:|node_modules|<anonymous>|^internal/")
_JS_SOURCE_HEADER = Pattern(r"^(?P<loc>(?:file://)?[^\s:()]+\.[cm]?[jt]sx?:\d+)$", M)
_CANNOT_FIND = Pattern(r"Cannot find (?:module|package) '(?P<mod>[^']+)'")
_ERROR_CODE_PROP = Pattern(r"^\s+code: '(?P<code>[A-Z][A-Z0-9_]+)'", M)
"""The ``code`` property Node.js prints with an error object (``MODULE_NOT_FOUND``)."""


def _package_of(module: str) -> str:
    """Return the npm package a bare import names (``@scope/pkg/sub`` -> ``@scope/pkg``)."""
    parts = module.split("/")
    return "/".join(parts[:2]) if module.startswith("@") else parts[0]


def _user_frame(frames: list[str]) -> str:
    """Return the location of the first stack frame in the project's own code."""
    for frame in frames:
        loc = _FRAME_LOC.search(frame)
        if loc and not _JS_INTERNAL.search(loc["loc"]):
            return loc["loc"]
    return ""


def parse_node(text: str) -> Findings | None:
    """Recognise an uncaught error in a Node.js program: the error line and its stack."""
    for error in _JS_ERROR.finditer(text):
        after = text[error.end() : error.end() + 4000]
        frames = [m["frame"].strip() for m in _JS_FRAME.finditer(after)][:30]
        head = after.lstrip("\n").splitlines()[:8]
        if frames and any(line.startswith("    at ") for line in head):
            return _node_findings(text, error, frames, after)
    return None


def _node_findings(text: str, error: re.Match[str], frames: list[str], after: str) -> Findings:
    """The findings of one uncaught error with its stack."""
    findings = Findings(tool="node", failure_type=FailureType.RUNTIME_ERROR)
    findings.headline = f"The Node.js program threw {error['cls']}."
    findings.facts.append(clip(_with_message_below(error["line"], after), 220))
    causes = _causes(after)
    findings.facts.extend(clip(cause, 220) for cause in causes[:_MAX_CAUSES])
    first = f"at {frames[0]}"
    user = _thrown_from(text, error, frames)
    findings.details.append(
        f"thrown {first}" + (f", from {user}" if user and user not in first else "")
    )
    code = _ERROR_CODE_PROP.search(after)
    if code and code["code"] not in error["line"]:
        findings.details.append(f"code: '{code['code']}'")
    _node_advice(findings, error, user, causes)
    if user:
        findings.steps.append(f"Open {user} and fix the statement there.")
    findings.steps.append("Re-run the same node command to confirm the error is gone.")
    findings.confidence = 0.8
    return findings


_CAUSE = Pattern(r"^\s*(?:[A-Z]\w*)?(?:Error|Exception)(?: \[[A-Z_0-9]+\])?: \S")
_MAX_CAUSES = 2


def _causes(after: str) -> list[str]:
    """The errors printed between an error and its stack: its causes.

    ``Error: Cannot find package 'ts-node'`` under ``Error: Jest: Failed to parse the config``.
    """
    before_stack = after.split("\n    at ", 1)[0]
    return [line.strip() for line in before_stack.splitlines() if _CAUSE.match(line)]


_CARET_OR_CODE = Pattern(r"^\s*(?:[-~\s]*\^[-~^\s]*|\.\.\..*)$")


def _with_message_below(line: str, after: str) -> str:
    """An error line ending in ``:`` with the last line of its message, above the stack.

    ``Parse error on line 4:``, the snippet and its caret, then ``Expecting 'STRING'``.
    """
    if not line.endswith(":"):
        return line
    message = after.split("\n    at ", 1)[0].strip("\n").splitlines()
    said = [m.strip() for m in message if m.strip() and not _CARET_OR_CODE.match(m)]
    return f"{line} {said[-1]}" if said else line


def _thrown_from(text: str, error: re.Match[str], frames: list[str]) -> str:
    """The project's place of the error: its first own frame, or the file that does not parse.

    A file that does not parse is named above the error, not in its stack.
    """
    user = _user_frame(frames)
    header = None
    for header in _JS_SOURCE_HEADER.finditer(text, 0, error.start()):  # noqa: B007
        pass
    if header is not None and (not user or error["cls"] == "SyntaxError"):
        return header["loc"]
    return user


def _node_advice(findings: Findings, error: re.Match[str], user: str, causes: list[str]) -> None:
    """The type, category and advice of the error's kind (or of its causes')."""
    missing = _CANNOT_FIND.search("\n".join([error["line"], *causes]))
    if missing:
        _missing_module(findings, missing["mod"])
    elif "Cannot use import statement outside a module" in error["line"] or (
        "require is not defined in ES module scope" in error["line"]
    ):
        findings.category = ReflectionCategory.TOOL_MISUSE
        findings.advice = (
            "The file mixes module systems: use `require` in CommonJS, or make it an ES "
            'module (`"type": "module"` in package.json or the .mjs extension) — one '
            "system for the whole package."
        )
    elif error["code"] == "ENOENT" or "ENOENT" in error["line"]:
        findings.category = ReflectionCategory.MISSING_CONTEXT
        findings.advice = "The program reads a file that does not exist: create it or fix the path."
    else:
        findings.advice = (
            f"Fix the code at {user or 'the first frame'} so it no longer throws "
            f"{error['cls']}: "
            "read the message, it names the undefined name or the bad input."
        )


def _missing_module(findings: Findings, module: str) -> None:
    """A module that does not resolve: the project's own path, or a package not installed."""
    local = module.startswith((".", "/"))
    findings.failure_type = FailureType.RUNTIME_ERROR if local else FailureType.DEPENDENCY_ERROR
    # a path of the project's own that does not resolve is the import's mistake
    findings.category = (
        ReflectionCategory.ROOT_CAUSE if local else ReflectionCategory.MISSING_CONTEXT
    )
    findings.advice = (
        f"The path {module!r} does not resolve: fix the relative import (extension, "
        "directory, case) to point at an existing file."
        if local
        else f"The package {_package_of(module)!r} is not installed: add it with "
        f"`npm install {_package_of(module)}` "
        "(saved in package.json) or import a package that is a dependency."
    )


# --- jest ------------------------------------------------------------------------------------

_JEST_FAIL_FILE = Pattern(r"^\s*FAIL\s+(?P<file>\S+)", M)
_JEST_SUMMARY = Pattern(
    r"^(?P<sum>Tests:\s+(?:\d+ (?:failed|passed|skipped|todo|pending), )*\d+ total\b.*?)\s*$", M
)
"""jest's own count (``Tests: 1 failed, 2 passed, 3 total``), not any ``Tests:`` line."""
_JEST_CANNOT_FIND = Pattern(r"Cannot find module '(?P<mod>[^']+)'")
_JEST_SUITES = Pattern(r"^(?P<sum>Test Suites:\s+\d+ failed.*?)\s*$", M)
"""Failed suites: where a suite that did not load is counted (its tests are not)."""
_JEST_HEADER = Pattern(r"^  ● (?P<name>.+?)\s*$", M)
_JEST_DETAIL = Pattern(
    r"^\s+(?P<d>(?:expect\(.*|Expected(?: [\w ]+)?: .*|Received(?: [\w ]+)?: .*|"
    r"Received (?:function|promise) \w.*|"  # toThrow's and rejects' `did not throw`
    r"New snapshot was not written\..*|"  # --ci: a snapshot the repository does not have
    r"(?:[A-Z]\w*)?Error: .*|thrown: .*))$",
    M,
)
_JEST_SNAPSHOTS = Pattern(r"^ \u203a (?P<line>\d+ snapshots? (?:failed|obsolete)\.)$", M)
_JEST_AT = Pattern(r"^\s+at .*?\(?(?P<loc>[^\s()]+:\d+:\d+)\)?$", M)


_SUITE_FAILED = "Test suite failed to run"


def _read_jest_blocks(text: str, headers: list[re.Match[str]], findings: Findings) -> int:
    """Add one fact per ``●`` block (message, expected/received, location); count load errors."""
    suite_errors = 0
    for index, head in enumerate(headers):
        if index >= MAX_BLOCKS:
            findings.tests.extend(h["name"] for h in headers[index:] if h["name"] != _SUITE_FAILED)
            break
        end = headers[index + 1].start() if index + 1 < len(headers) else len(text)
        name = head["name"]
        if name == _SUITE_FAILED:
            suite_errors += 1
        else:
            findings.tests.append(name)
        findings.facts.append(_jest_fact(name, text[head.end() : min(end, head.end() + 6000)]))
    return suite_errors


def _jest_fact(name: str, body: str) -> str:
    """One ``●`` block as quoted: its name, its message or expected/received, its place."""
    details = dedupe(m["d"].strip() for m in _JEST_DETAIL.finditer(body))[:3]
    if not details:
        first = next((ln.strip() for ln in body.splitlines() if ln.strip()), "")
        details = [first] if first and not first.startswith((">", "at ")) else []
    loc = next((m["loc"] for m in _JEST_AT.finditer(body) if "node_modules" not in m["loc"]), "")
    return (
        name
        + (": " + clip("; ".join(details), 200) if details else "")
        + (f" ({loc})" if loc else "")
    )


def _advise_suite_not_loaded(text: str, findings: Findings) -> None:
    """Advise on a test file jest could not load: a wrong own path, or a missing package."""
    findings.advice = (
        "The test file did not even load: fix the import, syntax or configuration error it "
        "reports (missing module, ESM/CommonJS mismatch, transform config) first."
    )
    missing = _JEST_CANNOT_FIND.search(text)
    if missing and missing["mod"].startswith((".", "/")):
        # a path of the project's own that does not resolve is the import's mistake
        findings.advice = (
            f"The test file did not even load: the path {missing['mod']!r} does not resolve; "
            "fix the relative import (file name, extension, directory) to point at an "
            "existing file."
        )
    elif missing:
        findings.category = ReflectionCategory.MISSING_CONTEXT


def parse_jest(text: str) -> Findings | None:
    """Recognise jest's output: ``FAIL file``, the ``●`` test blocks and the Tests: line."""
    summary = _JEST_SUMMARY.search(text)
    headers = list(_JEST_HEADER.finditer(text))
    if not summary and not (headers and _JEST_FAIL_FILE.search(text)):
        return None
    findings = Findings(tool="jest", failure_type=FailureType.TEST_FAILURE)
    files = dedupe(m["file"] for m in _JEST_FAIL_FILE.finditer(text))
    suite_errors = _read_jest_blocks(text, headers, findings)
    findings.summary = _jest_summary(text, summary, suite_errors=suite_errors)
    if files:
        findings.details.append("FAIL " + ", ".join(files[:4]))
    snapshots = _JEST_SNAPSHOTS.search(text)  # `1 snapshot failed.` after jest's arrow
    if snapshots:
        findings.details.insert(0, snapshots["line"])
    count = len(findings.tests)
    where = f" in {files[0]}" if len(files) == 1 else ""
    findings.headline = f"jest reported {plural(count, 'failing test')}{where}."
    if suite_errors and not count:
        findings.headline = f"jest could not load {plural(suite_errors, 'test file')}{where}."
        _advise_suite_not_loaded(text, findings)
    else:
        findings.advice = _jest_advice(text, snapshot_failed=snapshots is not None)
    if findings.tests:
        target = files[0] if files else ""
        findings.steps.append(
            f'Run the failing test alone: `npx jest {target} -t "{findings.tests[0]}"`.'.replace(
                "  ", " "
            )
        )
    findings.steps.append("Re-run the whole suite to confirm.")
    findings.confidence = 0.85 if findings.facts else 0.55
    return findings


def _jest_summary(text: str, summary: re.Match[str] | None, *, suite_errors: int) -> str:
    """Jest's ``Tests:`` count, or its failed suites' count when suites did not load."""
    said = summary["sum"] if summary else ""
    suites = _JEST_SUITES.search(text) if suite_errors else None
    return suites["sum"] if suites and " failed" not in said else said


def _jest_advice(text: str, *, snapshot_failed: bool) -> str:
    """Advice for failing tests: a snapshot --ci did not write, one that differs, a value."""
    if "New snapshot was not written" in text:
        return (
            "The snapshot does not exist in the repository and --ci does not write it: check "
            "the Received output is what the task asked for, then write it once with `jest "
            "-u` (or without --ci) and commit the .snap file; fix the code first if it is wrong."
        )
    if snapshot_failed:
        return (
            "The output no longer matches the stored snapshot: read the - Snapshot / + Received "
            "lines; fix the code if the change is a mistake, or update the snapshot (`-u`) only "
            "when the new output is what the task asked for."
        )
    return (
        "Compare Expected with Received for each failing test and fix the code under test "
        "so it produces the expected value; when timers or async code are involved, check "
        "the order of calls rather than the assertions."
    )


# --- node:test -------------------------------------------------------------------------------

_TAP_NOT_OK = Pattern(r"^(?P<indent>\s*)(?P<line>not ok \d+ - (?P<name>.+?))(?:\s+#.*)?$", M)
_TAP_STACK_LOC = Pattern(r"^\s+[^\n(]*\((?:file://)?(?P<loc>[^\s()]+:\d+:\d+)\)$", M)
"""A frame of the ``stack:`` field: the failing line, where ``location:`` is the test's."""
_CANCELLED = Pattern(r"^(?P<sum>(?:#|\u2139) cancelled [1-9]\d*)$", M)
_TAP_FIELD = Pattern(
    r"^\s+(?P<key>location|error|failureType|expected|actual|code|name): ?(?P<val>.*)$", M
)
_TAP_FAIL = Pattern(r"^(?P<sum># fail \d+)$", M)
_SPEC_FAIL = Pattern(r"^(?P<indent>\s*)\u2716 (?P<name>.+?)(?: \([\d.]+m?s\))?$", M)
"""A failed test; a cancelled one has no duration."""
_SPEC_SUMMARY = Pattern(r"^(?P<sum>\u2139 fail \d+)$", M)
_SPEC_ERROR = Pattern(r"^\s+(?P<e>(?:[A-Z]\w*)?Error(?: \[\w+\])?: .*)$", M)
_SPEC_AT = Pattern(r"^\s+at .*?\((?:file://)?(?P<loc>[^\s()]+:\d+:\d+)\)$", M)


_TAP_NOT_OK_NEEDLE = Pattern(r"not ok ")
_TAP_FAIL_NEEDLE = Pattern(r"# fail ")
_SPEC_SUMMARY_NEEDLE = Pattern(r"\u2139 fail ")
_SPEC_FAIL_NEEDLE = Pattern(r"\u2716 ")
_TAP_ERROR_BLOCK = Pattern(r"error: \|-\n\s+(?P<l1>.+)\n(?:\s*\n)?\s+(?P<l2>.+)")


def _tap_error(fields: dict[str, str], raw_error: str, block: str, before: str) -> str:
    """Return a failed TAP test's error: its ``error:`` field, as printed where it is one line."""
    error = fields.get("error", "")
    if not error:
        err = _TAP_ERROR_BLOCK.search(block)
        return f"{err['l1'].strip()} {err['l2'].strip()}" if err else ""
    if error == "test failed":  # the file itself failed: its stderr is quoted above the line
        return _last_error_line(before, "# ") or error
    if fields.get("name", "AssertionError") != "AssertionError":
        return f"{fields['name']}: {error}"
    if raw_error.startswith(("error: '", 'error: "')):  # one line: quoted as printed
        return raw_error
    return error


def _read_tap(text: str, findings: Findings) -> None:
    """Add the failing tests of a TAP report (suites whose subtests failed are skipped)."""
    heads = matching_lines(text, _TAP_NOT_OK_NEEDLE, _TAP_NOT_OK, limit=MAX_BLOCKS + 1)
    for index, head in enumerate(heads[:MAX_BLOCKS]):
        end = heads[index + 1].start() if index + 1 < len(heads) else len(text)
        block = text[head.end() : min(end, head.end() + 4000)]
        fields, raw_error = _tap_fields(block)
        if fields.get("failureType") == "subtestsFailed":
            continue
        findings.tests.append(head["name"])
        before = text[heads[index - 1].end() if index else 0 : head.start()]
        error = _tap_error(fields, raw_error, block, before)
        parts = [clip(error, 150)] if error else []
        if fields.get("expected") or fields.get("actual"):
            parts.append(
                f"expected: {fields.get('expected', '')}, actual: {fields.get('actual', '')}"
            )
        loc = _tap_place(fields, block)
        findings.facts.append(  # the TAP line as printed, then where (before a long message)
            head["line"] + (f" ({loc})" if loc else "") + (": " + "; ".join(parts) if parts else "")
        )


def _tap_fields(block: str) -> tuple[dict[str, str], str]:
    """A TAP test's YAML fields (the first of each), and its ``error:`` line as printed."""
    fields: dict[str, str] = {}
    raw_error = ""
    for m in _TAP_FIELD.finditer(block):
        fields.setdefault(m["key"], m["val"].strip().strip("'|-").strip().strip('"'))
        raw_error = raw_error or (m[0].strip() if m["key"] == "error" else "")
    return fields, raw_error


def _tap_place(fields: dict[str, str], block: str) -> str:
    """Where the test is declared, and where it failed when its stack says elsewhere."""
    stack = block.split("stack: |-", 1)[1] if "stack: |-" in block else ""
    own = [m["loc"] for m in _TAP_STACK_LOC.finditer(stack) if not _JS_INTERNAL.search(m["loc"])]
    loc = fields.get("location", "")
    if own and own[0] != loc:
        return f"{loc}, failed at {own[0]}" if loc else own[0]
    return loc


_SPEC_QUOTED = Pattern(r"^\s+'(?P<m>.+)'$", M)
_SUBTESTS_FAILED = Pattern(r"^\d+ subtests? failed$")
_BARE_ERROR = Pattern(r"^(?P<e>(?:[A-Z]\w*)?Error(?: \[\w+\])?: .*)$", M)
_DOT_FAILED = "\nFailed tests:\n"
_NODE_TAP_PROOF = ("# Subtest: ", "\n# cancelled ", "\n# duration_ms ", "\n# suites ", "node:")
"""What node's TAP holds and other runners' TAP (tape, QUnit, ava) does not: its subtest
headers, its summary's cancelled/duration/suites counts, or a ``node:`` frame of a crash."""


def _last_error_line(text: str, prefix: str = "") -> str:
    """Return the last unindented ``SomeError: message`` line of *text* (after *prefix*)."""
    found = ""
    for raw in text.splitlines():
        line = raw.removeprefix(prefix)
        if _BARE_ERROR.match(line):
            found = line.strip()
    return found


def _read_spec(text: str, findings: Findings) -> None:
    """Add the failing tests of a spec or dot report (the final recap is not read twice)."""
    report = text.split("\u2716 failing tests:", 1)[0]
    if _DOT_FAILED in report:
        report = report.split(_DOT_FAILED, 1)[1]
    fails = matching_lines(report, _SPEC_FAIL_NEEDLE, _SPEC_FAIL)
    for index, head in enumerate(fails[:MAX_BLOCKS]):
        end = fails[index + 1].start() if index + 1 < len(fails) else len(report)
        body = report[head.end() : min(end, head.end() + 4000)]
        above = text[fails[index - 1].end() if index else 0 : head.start()]
        fact = _spec_fact(body, above)
        if fact:
            findings.tests.append(head["name"])
            findings.facts.append(f"{head['name']}: {fact}")


def _spec_fact(body: str, above: str) -> str:
    """A failed test's error (and place) as quoted; ``""`` for a suite whose subtests failed.

    A test file that failed as a whole (``'test failed'``) quotes its stderr from *above*.
    """
    error = _SPEC_ERROR.search(body)
    if error is None:
        quoted = _SPEC_QUOTED.match(body.lstrip("\n"))
        message = quoted["m"] if quoted else ""
        if not message or _SUBTESTS_FAILED.match(message):
            return ""
        if message == "test failed":
            message = _last_error_line(above) or message
        return clip(message, 150)
    message = error["e"].strip()
    if message.endswith(":"):
        following = [ln.strip() for ln in body[error.end() :].splitlines()[:4] if ln.strip()]
        if following and not following[0].startswith("at "):
            message += " " + following[0]
    at = _SPEC_AT.search(body)
    return clip(message, 150) + (f" ({at['loc']})" if at else "")


def parse_node_test(text: str) -> Findings | None:
    """Recognise node:test output in the TAP, spec and dot reporter formats."""
    taps = matching_lines(text, _TAP_FAIL_NEEDLE, _TAP_FAIL, limit=1)
    taps = taps if any(proof in text for proof in _NODE_TAP_PROOF) else []
    specs = matching_lines(text, _SPEC_SUMMARY_NEEDLE, _SPEC_SUMMARY, limit=1)
    dot = _DOT_FAILED in text and bool(matching_lines(text, _SPEC_FAIL_NEEDLE, _SPEC_FAIL, limit=1))
    if not taps and not specs and not dot:
        return None
    findings = Findings(tool="node:test", failure_type=FailureType.TEST_FAILURE)
    if taps:
        _read_tap(text, findings)
        findings.summary = taps[0]["sum"]
    else:
        _read_spec(text, findings)
        findings.summary = specs[0]["sum"] if specs else ""
    cancelled = _CANCELLED.search(text)
    if cancelled and findings.summary:  # tests cut short by a failing hook or parent
        findings.summary += f"; {cancelled['sum']}"
    _node_test_advice(findings)
    findings.confidence = 0.85 if findings.facts else 0.55
    return findings


def _node_test_advice(findings: Findings) -> None:
    count = len(findings.tests)
    findings.headline = f"node --test reported {count} failing test{'s' if count != 1 else ''}."
    findings.advice = (
        "Compare the actual with the expected value of each failing assertion and fix the code "
        "under test; a 'Missing expected exception' means the code must throw for that input."
    )
    if any("test timed out" in fact for fact in findings.facts):
        findings.advice += (
            " A 'test timed out' test never finished: await or resolve what it waits for."
        )
    if findings.tests:
        findings.steps.append(
            f'Run it alone: `node --test --test-name-pattern="{findings.tests[0]}"`.'
        )
    findings.steps.append("Re-run `node --test` to confirm all pass.")
