"""Parsers for the Python tool family.

pytest, unittest, tracebacks, mypy, pyright, ruff, flake8 (and pylint's similar format) and pip.
"""

from __future__ import annotations

import re

from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.reflection._tools._base import (
    MAX_BLOCKS,
    Findings,
    Problem,
    clip,
    dedupe,
    group_problems,
    plural,
)

__all__ = [
    "parse_mypy",
    "parse_pip",
    "parse_pyflakes_style",
    "parse_pyright",
    "parse_pytest",
    "parse_traceback",
    "parse_unittest",
]

M = re.MULTILINE

# --- tracebacks ------------------------------------------------------------------------------

_TB_START = re.compile(r"^\s*Traceback \(most recent call last\):\s*$", M)
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?$')
_EXC_LINE = re.compile(r"^(?P<cls>[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)(?:: (?P<msg>.*)|:)?$")
_LIBRARY = re.compile(
    r"(?:site-packages|dist-packages|/lib/python\d|\\lib\\|^<frozen |^<string>|/usr/lib/|"
    r"importlib/__init__\.py|^<[a-z_]+>$)"
)
_MODULE_NOT_FOUND = re.compile(r"No module named '(?P<mod>[^']+)'")
_MISSING_HINT_CLASSES = frozenset(
    {"FileNotFoundError", "ModuleNotFoundError", "PermissionError", "NotADirectoryError"}
)


class Traceback:
    """The last Python traceback in a piece of output.

    Attributes:
        exception: The exception line (with its continuation lines), verbatim.
        cls: The exception class as printed (``yaml.scanner.ScannerError``).
        frame: The innermost frame in the project's own code, verbatim (``File "a.py", line 3,
            in f``), or the innermost frame when every frame is in a library.
        code: The source line printed under that frame.
    """

    __slots__ = ("cls", "code", "exception", "frame")

    def __init__(self, exception: str, cls: str, frame: str, code: str) -> None:
        self.exception = exception
        self.cls = cls
        self.frame = frame
        self.code = code


def _last_traceback(lines: list[str], start: int) -> Traceback | None:
    """Read a traceback whose ``Traceback (most recent call last):`` line is *start*."""
    frames: list[tuple[str, str, str]] = []  # (frame text, file, code line)
    i = start + 1
    indent_of_header = len(lines[start]) - len(lines[start].lstrip())
    while i < len(lines):
        line = lines[i]
        match = _FRAME.match(line)
        if match:
            code = ""
            if i + 1 < len(lines) and not _FRAME.match(lines[i + 1]):
                nxt = lines[i + 1].strip()
                if nxt and not set(nxt) <= set("^~ "):
                    code = nxt
            frames.append((line.strip(), match["file"], code))
            i += 1
            continue
        stripped = line[indent_of_header:] if line[:indent_of_header].isspace() else line
        if stripped and not stripped[0].isspace() and _EXC_LINE.match(stripped.rstrip()):
            exc = _EXC_LINE.match(stripped.rstrip())
            assert exc is not None  # noqa: S101 -- matched just above
            block = [stripped.rstrip()]
            for extra in lines[i + 1 : i + 4]:
                text = extra.strip()
                if (
                    not text
                    or _TB_START.match(extra)
                    or text.startswith(("During handling", "The above"))
                ):
                    break
                if extra.startswith((" ", "\t")) or not _EXC_LINE.match(text):
                    block.append(text)
                else:
                    break
            user = [f for f in frames if not _LIBRARY.search(f[1])]
            chosen = user[-1] if user else (frames[-1] if frames else ("", "", ""))
            return Traceback(" / ".join(block), exc["cls"], chosen[0], chosen[2])
        i += 1
    return None


_BARE_SYNTAX = re.compile(
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


def parse_traceback(text: str) -> Findings | None:
    """Recognise a Python script that died with an uncaught exception."""
    tb = find_traceback(text)
    if tb is None:
        return None
    short_cls = tb.cls.rsplit(".", 1)[-1]
    findings = Findings(tool="python", failure_type=FailureType.RUNTIME_ERROR)
    findings.headline = f"The Python program raised {short_cls}."
    findings.facts.append(clip(tb.exception, 240))
    if tb.frame:
        where = tb.frame + (f" ({clip(tb.code, 80)})" if tb.code else "")
        findings.details.append(f"raised from {where}")
    missing = _MODULE_NOT_FOUND.search(tb.exception)
    if missing or short_cls == "ModuleNotFoundError":
        module = missing["mod"] if missing else "the module"
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
    elif short_cls in {"SyntaxError", "IndentationError", "TabError"}:
        findings.advice = (
            f"The file does not parse: fix the {short_cls} at {tb.frame or 'the line named'} "
            "(the caret marks where the parser gave up; the real mistake is often just before "
            "it), then check with `python -m py_compile FILE`."
        )
    elif short_cls in _MISSING_HINT_CLASSES:
        findings.category = ReflectionCategory.MISSING_CONTEXT
        findings.advice = (
            "The program expects a file or path that does not exist where it runs: create it, "
            "pass the right path, or resolve it relative to the script rather than the current "
            "directory."
        )
        findings.steps.append(f"Check the path used at {tb.frame or 'the failing line'}.")
    else:
        findings.advice = (
            f"Fix the code at {tb.frame or 'the innermost frame'} so it no longer raises "
            f"{short_cls}; read the message, it names the exact value or argument at fault."
        )
        if tb.frame:
            findings.steps.append(
                f"Open {tb.frame} and correct the call or value the message names."
            )
    findings.steps.append("Re-run the same command to confirm the exception is gone.")
    return findings


# --- pytest ----------------------------------------------------------------------------------

_PYTEST_MARK = re.compile(
    r"^=+ (?:test session starts|FAILURES|ERRORS|short test summary info)(?: =+)?$"
    r"|^(?:FAILED|ERROR) [^\s:]+\.py(?:::|\s|$)"
    r"|^=* ?\d+ (?:failed|passed|errors?)\b.* in [\d.]+s",
    M,
)
_PYTEST_SHORT = re.compile(
    r"^(?P<kind>FAILED|ERROR) (?P<id>[^\s\[]+(?:\[[^\n]*?\])?)(?: - (?P<msg>.*))?$", M
)
_PYTEST_SECTION = re.compile(r"^_{3,} (?P<title>.+?) _{3,}$", M)
_PYTEST_BIG = re.compile(r"^={5,} .* ={5,}$|^!{5,} .* !{5,}$", M)
_PYTEST_SUMMARY = re.compile(
    r"^[=\s]*(?P<sum>(?:\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|warnings?|"
    r"deselected|rerun)(?:, )?)+)(?: in [\d.]+s.*?)?[=\s]*$",
    M,
)
_PYTEST_INTERRUPTED = re.compile(r"^!+ (?P<msg>Interrupted: .+?) !+$", M)
_PYTEST_USAGE = re.compile(
    r"^(?P<line>ERROR: (?:file or directory not found: .+|usage: .+|not found: .+)"
    r"|(?:pytest|__main__\.py): error: .+)$",
    M,
)
_PYTEST_LOC = re.compile(r"^(?P<loc>[^\s:][^:\n]*\.py:\d+)(?:: (?P<cls>\w+))?$", M)
_E_LINE = re.compile(r"^E {1,}(?P<msg>.*)$", M)
_E_NOISE = re.compile(
    r"^(?:[+\-?] |Omitting |Full diff|Use -v|\+  where|\+    where|At index|Left contains|"
    r"Right contains|Differing items|Drill down|Extra items|$)"
)
_ASSERT_FLOAT = re.compile(r"assert -?\d+\.\d{8,}")
_FIXTURE_MISSING = re.compile(r"fixture '(?P<name>[^']+)' not found")
_ASYNC_UNSUPPORTED = "async def functions are not natively supported"
_PLUGIN_ITEM = re.compile(r"^\s+- (?P<name>[\w.-]+)$", M)


def _pytest_sections(text: str) -> list[tuple[str, str]]:
    """Split the FAILURES/ERRORS part of pytest's output into (title, body) pairs."""
    heads = list(_PYTEST_SECTION.finditer(text))
    out: list[tuple[str, str]] = []
    for index, head in enumerate(heads):
        if index >= MAX_BLOCKS:
            break
        end = heads[index + 1].start() if index + 1 < len(heads) else len(text)
        big = _PYTEST_BIG.search(text, head.end(), end)
        out.append((head["title"], text[head.end() : big.start() if big else end]))
    return out


def _section_message(body: str) -> tuple[str, str]:
    """Return the key message (E lines, or the first line) and the location of a section."""
    messages = [m["msg"].rstrip() for m in _E_LINE.finditer(body)]
    useful = [m.strip() for m in messages if not _E_NOISE.match(m.strip())]
    loc_match = None
    for loc_match in _PYTEST_LOC.finditer(body):  # noqa: B007 -- the last one is wanted
        pass
    loc = loc_match["loc"] if loc_match else ""
    if useful:
        return " / ".join(dedupe(useful)[:2]), loc
    for line in body.splitlines():
        stripped = line.strip()
        if stripped and not line.startswith((" ", "\t", ">")) and not _PYTEST_LOC.match(stripped):
            return stripped, loc
    return "", loc


def _pytest_usage(lines: list[str], command: str) -> Findings:
    """Findings for a pytest run that stopped on its command line (no test ran)."""
    findings = Findings(
        tool="pytest",
        failure_type=FailureType.TEST_FAILURE,
        category=ReflectionCategory.TOOL_MISUSE,
    )
    findings.headline = "pytest did not run any test: its command line is wrong."
    findings.facts.extend(clip(line.strip(), 200) for line in lines)
    findings.advice = (
        "Fix the pytest invocation: point it at test paths that exist (relative to the "
        "directory it runs in) and use only options of installed plugins."
    )
    findings.steps.append(f"Check the paths and options of `{clip(command, 80)}`.")
    findings.confidence = 0.7
    return findings


def parse_pytest(text: str, command: str) -> Findings | None:  # noqa: C901, PLR0912, PLR0915 -- one pass over one format
    """Recognise pytest's output: failing test ids, assertion lines, collection errors."""
    if not _PYTEST_MARK.search(text) and "pytest" not in command:
        return None
    shorts = [(m["kind"], m["id"], (m["msg"] or "").strip()) for m in _PYTEST_SHORT.finditer(text)]
    sections = _pytest_sections(text)
    summary_match = None
    for summary_match in _PYTEST_SUMMARY.finditer(text):  # noqa: B007 -- the last one is wanted
        pass
    interrupted = _PYTEST_INTERRUPTED.search(text)
    usage = [m["line"] for m in _PYTEST_USAGE.finditer(text)] if "pytest" in command else []
    if usage and not shorts:
        return _pytest_usage(usage[-2:], command)
    if not shorts and not sections and not summary_match and not interrupted:
        return None
    findings = Findings(tool="pytest", failure_type=FailureType.TEST_FAILURE)
    by_title = dict(sections)
    ids = dedupe(test_id for _, test_id, _ in shorts if "::" in test_id)
    findings.tests = ids
    details_for: dict[str, tuple[str, str]] = {}
    for title, body in sections:
        details_for[title] = _section_message(body)
    used_titles: set[str] = set()
    for kind, test_id, msg in shorts:
        name = test_id.rsplit("::", 1)[-1]
        title = next(
            (
                t
                for t in (
                    name,
                    f"ERROR at setup of {name}",
                    f"ERROR at teardown of {name}",
                    f"ERROR collecting {test_id}",
                )
                if t in by_title
            ),
            "",
        )
        used_titles.add(title)
        message, loc = details_for.get(title, ("", ""))
        message = message or msg
        label = f"{'ERROR ' if kind == 'ERROR' else ''}{test_id}"
        if title.startswith("ERROR collecting"):
            label = title
        fact = label + (f": {clip(message, 200)}" if message else "") + (f" ({loc})" if loc else "")
        findings.facts.append(fact)
    for title, _body in sections:
        if title in used_titles:
            continue
        message, loc = details_for[title]
        if title.startswith("ERROR collecting") or not shorts:
            findings.facts.append(
                title
                + (f": {clip(message, 200)}" if message else "")
                + (f" ({loc})" if loc else "")
            )
    if summary_match:
        findings.summary = summary_match["sum"].strip().rstrip(",")
    if interrupted:
        findings.details.append(interrupted["msg"])
    failed = len(ids) or len(sections)
    findings.headline = (
        f"pytest reported {failed} failing test{'s' if failed != 1 else ''}."
        if failed
        else "pytest failed."
    )
    joined = "\n".join(findings.facts)
    fixture = _FIXTURE_MISSING.search(text)
    if _ASYNC_UNSUPPORTED in text:
        plugins = dedupe(m["name"] for m in _PLUGIN_ITEM.finditer(text))
        findings.category = ReflectionCategory.MISSING_CONTEXT
        findings.details.append(_ASYNC_UNSUPPORTED)
        findings.advice = (
            "The tests are async but no async plugin is active: install one ("
            + ", ".join(plugins[:5])
            + ') and enable it (for pytest-asyncio: `asyncio_mode = "auto"` or '
            "`@pytest.mark.asyncio`), rather than changing the code under test."
        )
        findings.steps.append(
            "Add the async plugin to the test dependencies and the pytest config."
        )
    elif fixture:
        findings.category = ReflectionCategory.MISSING_CONTEXT
        findings.details.append(fixture.group(0))
        findings.advice = (
            f"The fixture {fixture['name']!r} is not defined where these tests can see it: "
            "define it in a conftest.py beside or above the tests (or import the plugin that "
            "provides it)."
        )
        findings.steps.append(
            f"Define `@pytest.fixture def {fixture['name']}()` in the nearest conftest.py."
        )
    elif "ERROR collecting" in text or interrupted:
        findings.advice = (
            "Collection failed before any test ran: fix the import or syntax error in the test "
            "module or in the code it imports (a renamed or missing function, a circular import), "
            "then run the whole suite again."
        )
        if "ModuleNotFoundError" in joined or "No module named" in joined:
            findings.category = ReflectionCategory.MISSING_CONTEXT
        findings.steps.append(
            "Make the names the test module imports exist with those exact names."
        )
    elif shorts and all(kind == "ERROR" for kind, _, _ in shorts):
        findings.advice = (
            "The tests never ran: their setup (a fixture or setup method) raised. Fix what the "
            "setup needs (a service, a file, a fixture's own code) before touching the tests."
        )
        if re.search(r"\b(?:Connection\w*Error|FileNotFoundError|ModuleNotFoundError)\b", joined):
            findings.category = ReflectionCategory.MISSING_CONTEXT
    else:
        if _ASSERT_FLOAT.search(joined):
            findings.steps.append(
                "A float differs in its last digits: compare with `pytest.approx(...)` or round "
                "the result, do not change the expected value."
            )
        if re.search(r"\b(?:FileNotFoundError|ModuleNotFoundError)\b", joined):
            findings.category = ReflectionCategory.MISSING_CONTEXT
        findings.advice = (
            "Read each failing assertion: the left side is what the code returned, the right "
            "side what the test expects. Fix the code under test so it returns the expected "
            "value; change a test only if the test itself is wrong."
        )
    first = ids[0] if ids else ""
    if first:
        findings.steps.append(f'Run the first failing test alone: `python -m pytest "{first}" -x`.')
    findings.steps.append("Then run the full suite to check nothing else broke.")
    findings.confidence = 0.85 if findings.facts else 0.55
    return findings


# --- unittest --------------------------------------------------------------------------------

_UT_HEADER = re.compile(
    r"^(?P<kind>FAIL|ERROR): (?P<name>\S+) \((?P<where>[^)]*)\)(?P<rest>.*)$", M
)
_UT_SEP = re.compile(r"^-{40,}$", M)
_UT_SUMMARY = re.compile(r"^(?P<sum>FAILED \([^)]*\))$", M)
_UT_RAN = re.compile(r"^Ran \d+ tests? in ", M)


def parse_unittest(text: str) -> Findings | None:
    """Recognise unittest's output: FAIL/ERROR blocks with their traceback and summary."""
    headers = list(_UT_HEADER.finditer(text))
    if not headers or not (_UT_RAN.search(text) or _UT_SUMMARY.search(text)):
        return None
    findings = Findings(tool="unittest", failure_type=FailureType.TEST_FAILURE)
    classes: list[str] = []
    for index, head in enumerate(headers):
        if index >= MAX_BLOCKS:
            break
        end = headers[index + 1].start() if index + 1 < len(headers) else len(text)
        block = text[head.end() : end]
        sep = _UT_SEP.search(block)
        block = block[sep.end() :] if sep else block
        stop = _UT_SEP.search(block) or re.search(r"^={40,}$", block, M)
        block = block[: stop.start()] if stop else block
        tb = find_traceback(block)
        header = head.group(0).strip()
        where = head["where"]
        test_id = where if where.endswith("." + head["name"]) else f"{where}.{head['name']}"
        findings.tests.append(test_id if head["name"] != "setUpClass" else header)
        if tb:
            classes.append(tb.cls)
            where = f" (at {tb.frame})" if tb.frame else ""
            findings.facts.append(f"{clip(header, 130)}: {clip(tb.exception, 200)}{where}")
        else:
            findings.facts.append(clip(header, 130))
    summary = _UT_SUMMARY.search(text)
    findings.summary = summary["sum"] if summary else ""
    findings.headline = (
        f"unittest reported {len(headers)} failing test{'s' if len(headers) != 1 else ''}."
    )
    if any(c.rsplit(".", 1)[-1] in _MISSING_HINT_CLASSES for c in classes):
        findings.category = ReflectionCategory.MISSING_CONTEXT
        findings.advice = (
            "A test needs a file or module that is not there when the tests run: create the "
            "fixture file or build its path from the test module's location "
            "(`Path(__file__).parent / ...`) instead of the current directory."
        )
    else:
        findings.advice = (
            "For each FAIL, the AssertionError shows the value the code produced against the "
            "expected one; for each ERROR, the exception names the broken call. Fix the code "
            "under test at the frames named, then run the tests again."
        )
    first = findings.tests[0] if findings.tests and "(" not in findings.tests[0] else ""
    if first:
        findings.steps.append(f"Run one failing test alone: `python -m unittest {first}`.")
    findings.steps.append("Re-run the whole test module to confirm every FAIL and ERROR is gone.")
    findings.confidence = 0.85
    return findings


# --- mypy ------------------------------------------------------------------------------------

_MYPY = re.compile(
    r"^(?P<loc>[^\s:][^:\n]*\.pyi?:\d+(?::\d+)?): (?P<sev>error|note): (?P<msg>.*?)"
    r"(?:  \[(?P<code>[a-z0-9-]+)\]| ?\n\[(?P<pcode>[a-z0-9-]+)\])?$",
    M,
)
_MYPY_SUMMARY = re.compile(r"^(?P<sum>Found \d+ errors? in \d+ files?.*)$", M)
_MYPY_HINT = re.compile(r'note: Hint: "(?P<cmd>[^"]+)"|note: \(or run "(?P<cmd2>[^"]+)"')
_MYPY_MISSING = frozenset({"import-untyped", "import-not-found", "import"})


def parse_mypy(text: str) -> Findings | None:
    """Recognise mypy's ``file:line: error: message  [code]`` lines."""
    problems: list[Problem] = []
    codes: list[str] = []
    for m in _MYPY.finditer(text):
        if m["sev"] != "error":
            continue
        code = m["code"] or m["pcode"] or ""
        codes.append(code)
        tail = f" [{code}]" if code else ""
        problems.append(
            Problem(f"{m['loc']}: {clip(m['msg'], 150)}{tail}", f"{code}|{m['msg']}", m["loc"])
        )
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
    if any(c in _MYPY_MISSING for c in codes) and codes and codes[0] in _MYPY_MISSING:
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


# --- pyright ---------------------------------------------------------------------------------

_PYRIGHT = re.compile(r"^\s+(?P<loc>[^\s].*?:\d+:\d+) - (?P<sev>error|warning): (?P<msg>.*)$", M)
_PYRIGHT_RULE = re.compile(r"\((?P<rule>report\w+)\)\s*$")
_PYRIGHT_SUMMARY = re.compile(r"^(?P<sum>\d+ errors?, \d+ warnings?, \d+ informations?) *$", M)


def parse_pyright(text: str) -> Findings | None:
    """Recognise pyright's ``  file:line:col - error: message (reportRule)`` blocks."""
    heads = [m for m in _PYRIGHT.finditer(text) if m["sev"] == "error"]
    if not heads:
        return None
    problems: list[Problem] = []
    for head in heads:
        tail = text[head.end() : head.end() + 2000]
        following = [head["msg"]]
        for line in tail.splitlines()[1:]:
            if not line[:1].isspace() or not line.strip() or _PYRIGHT.match(line):
                break
            following.append(line.strip())
        rule = ""
        for line in following:
            found = _PYRIGHT_RULE.search(line)
            if found:
                rule = found["rule"]
                break
        message = _PYRIGHT_RULE.sub("", head["msg"]).strip()
        suffix = f" ({rule})" if rule else ""
        problems.append(
            Problem(
                f"{head['loc']} - error: {clip(message, 150)}{suffix}",
                f"{rule}|{message}",
                head["loc"],
            )
        )
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


# --- ruff, flake8, pylint --------------------------------------------------------------------

_LINT_CONCISE = re.compile(
    r"^(?P<loc>[^\s:][^:\n]*\.pyi?:\d+:\d+): (?P<code>[A-Z]{1,4}\d{2,4}):? "
    r"(?P<fix>\[\*\] )?(?P<msg>.*)$",
    M,
)
_RUFF_FULL = re.compile(
    r"^(?P<code>[A-Z]{1,4}\d{2,4}) (?P<fix>\[\*\] )?(?P<msg>.+)\n\s*--> (?P<loc>\S+:\d+:\d+)$", M
)
_RUFF_SUMMARY = re.compile(r"^(?P<sum>Found \d+ errors?\.?)$", M)
_RUFF_FIXABLE = re.compile(r"^\[\*\] (?P<sum>\d+ fixable with the .*)$", M)
_FLAKE8_REAL = re.compile(r"^(?:F821|F811|F63\d|E999|F82\d|E9\d\d)$")


def parse_pyflakes_style(text: str, command: str) -> Findings | None:
    """Recognise ruff (full and concise formats), flake8 and pylint diagnostics."""
    problems: list[Problem] = []
    fixable = 0
    codes: list[str] = []
    for m in _RUFF_FULL.finditer(text):
        problems.append(
            Problem(f"{m['code']} {clip(m['msg'], 120)} at {m['loc']}", m["code"], m["loc"])
        )
        codes.append(m["code"])
        fixable += bool(m["fix"])
    if not problems:
        for m in _LINT_CONCISE.finditer(text):
            problems.append(
                Problem(f"{m['loc']}: {m['code']} {clip(m['msg'], 120)}", m["code"], m["loc"])
            )
            codes.append(m["code"])
            fixable += bool(m["fix"])
    if not problems:
        return _parse_formatter(text, command)
    words = command.split()
    tool = next(
        (
            t
            for t in ("ruff", "flake8", "pylint", "pycodestyle", "pyflakes")
            if t in words or any(w.endswith("/" + t) for w in words)
        ),
        "ruff" if "-->" in text else "flake8",
    )
    findings = Findings(
        tool=tool, failure_type=FailureType.LINT_ERROR, category=ReflectionCategory.VERIFICATION
    )
    findings.facts = group_problems(problems, limit=6)
    summary = _RUFF_SUMMARY.search(text)
    findings.summary = summary["sum"] if summary else f"{len(problems)} problems"
    fix_line = _RUFF_FIXABLE.search(text)
    if fix_line:
        findings.hints.append(fix_line["sum"])
    code_names = ", ".join(dedupe(codes)[:8])
    findings.headline = f"{tool} reported {plural(len(problems), 'problem')} ({code_names})."
    real_bugs = dedupe(c for c in codes if _FLAKE8_REAL.match(c))
    advice = "Fix each rule at the location named, keeping behaviour the same"
    if real_bugs:
        advice += (
            f"; {', '.join(real_bugs)} point at real bugs (undefined or redefined names, "
            "wrong comparisons): fix those by hand"
        )
    if fixable and tool == "ruff":
        advice += f"; {fixable} can be fixed automatically with `ruff check --fix`"
    if any(c.startswith("C9") for c in codes):
        advice += (
            "; for complexity (C901) split the function into smaller helpers instead of "
            "raising the limit"
        )
    findings.advice = advice + ". Do not disable the rules."
    findings.steps.append(
        f"Start at {problems[0].loc}, then re-run `{command or tool}` until it is clean."
    )
    findings.confidence = 0.85
    return findings


_WOULD_REFORMAT = re.compile(
    r"^(?:Would reformat:? (?P<file>\S+)|would reformat (?P<bfile>\S+)"
    r"|unformatted: File would be reformatted\n\s*--> (?P<loc>\S+))$",
    M,
)


def _parse_formatter(text: str, command: str) -> Findings | None:
    """Recognise ``ruff format --check`` and ``black --check`` listing unformatted files."""
    files = [
        m["file"] or m["bfile"] or m["loc"].split(":", 1)[0] for m in _WOULD_REFORMAT.finditer(text)
    ]
    if not files:
        return None
    tool = "black" if "black" in command else "ruff format"
    findings = Findings(
        tool=tool, failure_type=FailureType.LINT_ERROR, category=ReflectionCategory.VERIFICATION
    )
    findings.facts = [f"would reformat {name}" for name in dedupe(files)[:6]]
    findings.headline = f"{tool} --check found {plural(len(files), 'unformatted file')}."
    findings.advice = (
        f"Run the formatter itself (`{tool}` without --check) on the files named and keep its "
        "changes; formatting is not something to fix by hand."
    )
    findings.steps.append(f"Run `{tool} {' '.join(dedupe(files)[:3])}`, then re-run the check.")
    findings.confidence = 0.8
    return findings


# --- pip -------------------------------------------------------------------------------------

_PIP_ERROR = re.compile(r"^(?P<line>ERROR: (?P<msg>.+))$", M)
_PIP_HINT = re.compile(r"^(?:Hint|hint|note): (?P<msg>.+)$", M)
_PIP_NOT_FOUND = re.compile(
    r"No matching distribution found for (?P<req>\S+)"
    r"|Could not find a version that satisfies the requirement (?P<req2>\S+)"
)


_PIP_MARKERS = (
    "Could not find a version",
    "No matching distribution",
    "Invalid requirement",
    "ResolutionImpossible",
    "pip's dependency resolver",
    "subprocess-exited-with-error",
    "Failed building wheel",
    "externally-managed-environment",
)


def parse_pip(text: str, command: str) -> Findings | None:
    """Recognise pip's ``ERROR: ...`` lines (bad requirements, missing versions, conflicts)."""
    if "pip" not in command and not any(marker in text for marker in _PIP_MARKERS):
        return None
    errors = [m["line"].strip() for m in _PIP_ERROR.finditer(text)]
    if not errors and not ("pip" in command and "error:" in text):
        return None
    if not errors:
        errors = [line.strip() for line in text.splitlines() if "error" in line.lower()][:3]
    findings = Findings(
        tool="pip",
        failure_type=FailureType.DEPENDENCY_ERROR,
        category=ReflectionCategory.MISSING_CONTEXT,
    )
    findings.facts = [clip(e, 200) for e in dedupe(errors)[:4]]
    findings.hints = [clip(m["msg"].strip(), 160) for m in _PIP_HINT.finditer(text)][:3]
    findings.headline = "pip could not install the requirements."
    joined = "\n".join(errors)
    not_found = _PIP_NOT_FOUND.search(joined)
    if "Invalid requirement" in joined:
        findings.category = ReflectionCategory.ROOT_CAUSE
        findings.advice = (
            "A requirement line is malformed: write it as a valid PEP 508 specifier "
            "(`name==1.2`, `name>=1.2,<2`), as the hint says, then install again."
        )
    elif not_found:
        req = not_found["req"] or not_found["req2"]
        findings.advice = (
            f"No release matches {req}: check the package name on PyPI and pick a version that "
            "exists for this Python version, or relax the pin."
        )
    elif "ResolutionImpossible" in text or "conflict" in joined.lower():
        findings.category = ReflectionCategory.ROOT_CAUSE
        findings.advice = (
            "The pinned versions conflict with each other: relax or align the pins that the "
            "resolver names, rather than installing packages one by one."
        )
    else:
        findings.advice = "Fix the requirement pip names in the error, then run the install again."
    findings.steps.append(f"Re-run `{command or 'pip install ...'}` after editing the requirement.")
    findings.confidence = 0.8
    return findings
