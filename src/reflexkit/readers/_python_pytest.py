"""pytest's output: failing tests with their assertions, collection errors, the summary."""

from __future__ import annotations

import re

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers._findings import (
    MAX_BLOCKS,
    Findings,
    clip,
    dedupe,
)
from reflexkit.readers._generic import is_library_path
from reflexkit.readers._kinds import error_kind
from reflexkit.readers._python_traceback import find_traceback, unpipe

__all__ = ["parse_pytest"]

M = re.MULTILINE


_PYTEST_MARK = Pattern(
    r"^=+ (?:test session starts|FAILURES|ERRORS|short test summary info)(?: =+)?$"
    r"|^(?:FAILED|ERROR) [^\s:]+\.py(?:::|\s|$)"
    r"|^=* ?\d+ (?:failed|passed|errors?)\b.* in [\d.]+s",
    M,
)
_PYTEST_SHORT = Pattern(
    r"^(?P<kind>FAILED|ERROR) (?P<id>[^\s\[]+(?:\[[^\n]*?\])?)(?: - (?P<msg>.*))?$", M
)
_PYTEST_SECTION = Pattern(r"^_{3,} (?P<title>.+?) _{3,}$", M)
_PYTEST_BIG = Pattern(r"^={5,} .* ={5,}$|^!{5,} .* !{5,}$", M)
_PYTEST_SUMMARY = Pattern(
    r"^[=\s]*(?P<sum>(?:\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|warnings?|"
    r"deselected|rerun)(?:, )?)+)(?: in [\d.]+s.*?)?[=\s]*$",
    M,
)
_PYTEST_STOPPED = Pattern(r"^!+ (?P<msg>stopping after \d+ failures?) !+$", M)
_PYTEST_INTERRUPTED = Pattern(r"^!+ (?P<msg>Interrupted: .+?) !+$", M)
_PYTEST_USAGE = Pattern(
    r"^(?P<line>ERROR: (?:file or directory not found: .+|usage: .+|not found: .+)"
    r"|(?:\S*python[\d.]* -m )?(?:pytest|py\.test|__main__\.py): error: .+)$",
    M,
)
_UNKNOWN_OPTIONS = Pattern(r"error: (?P<fact>unrecognized arguments: (?P<args>.+))$")
_CONFIG_FILE = Pattern(r"^\s*(?P<line>(?:inifile|configfile): (?!None\s*$)\S.*)$", M)
_PLUGIN_OF = (
    ("--cov", "pytest-cov"),
    ("--no-cov", "pytest-cov"),
    ("-n", "pytest-xdist"),
    ("--dist", "pytest-xdist"),
    ("--timeout", "pytest-timeout"),
    ("--benchmark", "pytest-benchmark"),
    ("--mypy", "pytest-mypy"),
    ("--reruns", "pytest-rerunfailures"),
    ("--asyncio-mode", "pytest-asyncio"),
    ("--snapshot-update", "syrupy"),
    ("--randomly", "pytest-randomly"),
    ("--html", "pytest-html"),
)
"""Options of common plugins, by prefix, and the plugin that adds them."""
_PYTEST_LOC = Pattern(r"^(?P<loc>[^\s:][^:\n]*\.py:\d+)(?::(?: (?P<cls>\w+).*)?)? *$", M)
_E_LINE = Pattern(r"^E {1,}(?P<msg>.*)$", M)
_E_NOISE = Pattern(
    r"^(?:[+\-?] |Omitting |Full diff|Use -v|\+  where|\+    where|At index|Left contains|"
    r"Right contains|Differing items|Drill down|Extra items|$)"
)
_MIN_PREFIX = 12
_CHAINED = Pattern(
    r"^(?:The above exception was the direct cause of the following exception|"
    r"During handling of the above exception, another exception occurred):$",
    M,
)
_STATEMENT = Pattern(r"^>\s+(\S.*)$", M)
"""The line pytest marks with ``>``: the statement that failed."""
_BARE_ASSERT = Pattern(r"^(?:assert (?:False|None|0|\[\]|\{\}|''|\(\))|AssertionError)$")
"""An assertion that names no value: the failing statement says what was checked."""
_XDIST_WORKER = Pattern(r"^\[gw\d+\] .*\n", M)
_GROUP_EXC = Pattern(r"^(?:[A-Za-z_]\w*\.)*\w*ExceptionGroup: .+$", M)
_EXAMPLE = Pattern(r"^(?:Falsifying example|Failing test case|Falsifying explicit example):")
_DOCTEST_EXAMPLE = Pattern(r"^\d*\s*(>>> .+)$", M)
_DOCTEST_GOT = Pattern(
    r"^Expected:\n(?P<expected>(?:[ \t]+.*\n)+?)Got(?: nothing|:\n(?P<got>(?:[ \t]+.*\n?)+))", M
)
_DOCTEST_UNEXPECTED = Pattern(r"^UNEXPECTED EXCEPTION: .+$", M)
_ASSERT_FLOAT = Pattern(r"assert -?\d+\.\d{8,}")
_FIXTURE_MISSING = Pattern(r"fixture '(?P<name>[^']+)' not found")
_ASYNC_UNSUPPORTED = "async def functions are not natively supported"
_PLUGIN_ITEM = Pattern(r"^\s+- (?P<name>[\w.-]+)$", M)
_NEVER_AWAITED = Pattern(r"RuntimeWarning: coroutine '[^'\n]+' was never awaited")


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
    """Return the key message and the project's location of a FAILURES/ERRORS section.

    Reads every ``--tb`` style: ``E`` lines (long, short, auto), a whole traceback (native,
    ExceptionGroups), doctest's Expected/Got, hypothesis's falsifying example.
    """
    body = _XDIST_WORKER.sub("", body)
    loc = _section_location(body)
    if ">>>" in body and ("\nExpected:" in body or "UNEXPECTED EXCEPTION" in body):
        return _doctest_message(body), loc
    if "Traceback (most recent call last)" in body and not _E_LINE.search(body):
        found = _traceback_message(body)
        if found is not None:
            return found[0], found[1] or loc
    return _e_lines_message(body) or _first_plain_line(body), loc


def _section_location(body: str) -> str:
    """Return the last ``path:line[: ErrorClass]`` in the project's code (else any), or ``""``.

    That is how pytest prints the line that raised (long and auto styles); when it is not the
    test's own frame, the test's line follows (``, called from ...``). A chained error is read
    from its last section, the one of the exception that ended the test.
    """
    chained = list(_CHAINED.finditer(body))
    matches = list(_PYTEST_LOC.finditer(body, chained[-1].end() if chained else 0))
    found = [
        (m["loc"], f"{m['loc']}: {m['cls']}" if m["cls"] and m["cls"] != "in" else m["loc"])
        for m in matches or _PYTEST_LOC.finditer(body)
    ]
    own = [(loc, shown) for loc, shown in found if not is_library_path(loc)]
    if not own:
        return found[-1][1] if found else ""
    raised, shown = own[-1]
    test_frame = own[0][0]  # pytest prints the test's own frame first
    if test_frame != raised:
        return f"{shown}, called from {test_frame}"
    return shown


def _traceback_message(body: str) -> tuple[str, str] | None:
    """Return the exception (an ExceptionGroup's too) and frame of a native-style section."""
    plain = unpipe(body)
    tb = find_traceback(plain)
    if tb is None:
        return None
    group = _GROUP_EXC.search(plain)
    return (f"{group.group(0)} / {tb.exception}" if group else tb.exception), tb.frame


def _e_lines_message(body: str) -> str:
    """Return the first two telling ``E`` lines (after the statement of a bare ``assert``)."""
    messages = [m["msg"].rstrip() for m in _E_LINE.finditer(body)]
    useful = [m.strip() for m in _join_examples(messages) if not _E_NOISE.match(m.strip())]
    if not useful:
        return ""
    statement = _STATEMENT.findall(body) if _BARE_ASSERT.match(useful[0]) else []
    if statement:  # `assert False`: quote the statement that failed
        useful.insert(0, statement[-1].strip())
    return " / ".join(dedupe(useful)[:2])


def _first_plain_line(body: str) -> str:
    """Return the first unindented line that is not a location (``--tb=line``, ``no``)."""
    for line in body.splitlines():
        stripped = line.strip()
        if stripped and not line.startswith((" ", "\t", ">")) and not _PYTEST_LOC.match(stripped):
            return stripped
    return ""


def _untruncated(message: str, text: str) -> str:
    """Return the summary's message ending in ``...`` whole, from where it is printed in full."""
    if not message.endswith("...") or len(message) < _MIN_PREFIX:
        return message
    at = text.find(message[:-3], max(text.find("FAILURES"), 0))
    if at < 0:
        return message
    end = text.find("\n", at)
    return text[at : end if end >= 0 else len(text)].rstrip()


def _line_style_location(message: str, text: str) -> str:
    """Return the ``path:line`` that ``--tb=line`` prints before *message*, or ``""``."""
    head = message[: max(_MIN_PREFIX, min(len(message), 40))].removesuffix("...")
    found = re.search(rf"^(?P<loc>\S+\.py:\d+): {re.escape(head)}", text, M)
    return found["loc"] if found else ""


def _join_examples(messages: list[str]) -> list[str]:
    """Join hypothesis's multi-line ``Falsifying example: f(`` and its arguments into one line."""
    out: list[str] = []
    open_call = False
    for message in messages:
        stripped = message.strip()
        if open_call and out:
            if stripped == ")":
                out[-1] = out[-1].rstrip(", ") + ")"
                open_call = False
            else:
                out[-1] += ("" if out[-1].endswith("(") else " ") + stripped
            continue
        out.append(message)
        open_call = bool(_EXAMPLE.match(stripped)) and stripped.endswith("(")
    return out


def _doctest_message(body: str) -> str:
    """Return a failed doctest's example and its Expected/Got (or the exception), verbatim."""
    examples = _DOCTEST_EXAMPLE.findall(body)
    example = examples[-1].strip() if examples else ""
    got = _DOCTEST_GOT.search(body)
    if got:
        expected = " ".join(got["expected"].split())
        actual = " ".join(got["got"].split())
        return f"{example}: Expected: {expected}, Got: {actual}"
    unexpected = _DOCTEST_UNEXPECTED.search(body)
    return f"{example}: {unexpected.group(0).strip()}" if unexpected else example


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


_CONFTEST = Pattern(r"^(?P<line>ImportError while loading conftest '(?P<path>[^'\n]+)'\.)$", M)
"""pytest could not import a conftest.py: no test was collected."""


def _conftest_error(text: str, command: str) -> Findings | None:
    """Findings for a conftest.py that does not import (pytest exits 4 before collecting)."""
    conftest = _CONFTEST.search(text) if "while loading conftest" in text else None
    if conftest is None:
        return None
    error = next((m["msg"].strip() for m in _E_LINE.finditer(text, conftest.end())), "")
    where = _PYTEST_LOC.search(text, conftest.end())
    missing = "ModuleNotFoundError" in error or "No module named" in error
    return Findings(
        tool="pytest",
        failure_type=FailureType.TEST_FAILURE,
        category=ReflectionCategory.MISSING_CONTEXT if missing else ReflectionCategory.ROOT_CAUSE,
        headline="pytest could not import a conftest.py: no test ran.",
        facts=dedupe([conftest["line"], error, where["loc"] if where else ""]),
        advice=(
            "Every test under it depends on that conftest.py: install the module it imports "
            "(the project's test dependencies) or fix the import, then run the tests again."
            if missing
            else "Fix the error in that conftest.py (it runs before any test), then run again."
        ),
        steps=[f"Fix the import, then run `{clip(command or 'pytest', 80)}` again."],
        evidence=conftest["line"],
        confidence=0.8,
    )


def parse_pytest(text: str, command: str) -> Findings | None:
    """Recognise pytest's output: failing test ids, assertion lines, collection errors."""
    conftest = _conftest_error(text, command)
    if conftest is not None:
        return conftest
    if not _PYTEST_MARK.search(text) and "pytest" not in command:
        return None
    shorts = [(m["kind"], m["id"], (m["msg"] or "").strip()) for m in _PYTEST_SHORT.finditer(text)]
    sections = _pytest_sections(text)
    summaries = list(_PYTEST_SUMMARY.finditer(text))
    interrupted = _PYTEST_INTERRUPTED.search(text)
    if not shorts:
        stopped = _ran_no_test(text, command, reported=bool(sections or interrupted))
        if stopped is not None:
            return stopped
    if not any((shorts, sections, summaries, interrupted)):
        return None
    findings = Findings(tool="pytest", failure_type=FailureType.TEST_FAILURE)
    findings.tests = dedupe(test_id for _, test_id, _ in shorts if "::" in test_id)
    _read_tests(findings, text, shorts, sections)
    if summaries:
        findings.summary = summaries[-1]["sum"].strip().rstrip(",")
    _read_run_details(findings, text, interrupted)
    failed = len(findings.tests) or len(sections)
    findings.headline = (
        f"pytest reported {failed} failing test{'s' if failed != 1 else ''}."
        if failed
        else "pytest failed."
    )
    _advise_run(findings, text, shorts, sections, collection=interrupted is not None)
    _conclude(findings)
    return findings


def _conclude(findings: Findings) -> None:
    """Add the steps (the first failing test alone, then the suite) and the confidence."""
    if findings.tests:
        findings.steps.append(
            f'Run the first failing test alone: `python -m pytest "{findings.tests[0]}" -x`.'
        )
    findings.steps.append("Then run the full suite to check nothing else broke.")
    findings.confidence = 0.85 if findings.facts else 0.55


_NO_TESTS = Pattern(
    r"^=* ?(?P<sum>no tests ran|\d+ deselected|\d+ skipped(?:, \d+ deselected)?)"
    r"(?: in [\d.]+s)?(?: \([^)\n]*\))? ?=*$",
    M,
)
"""pytest's closing line when no test ran: none collected, all deselected by -k/-m, or skipped."""


def _ran_no_test(text: str, command: str, *, reported: bool) -> Findings | None:
    """Findings for a run with no failing test: a wrong command line, or no test selected.

    Args:
        text: The output.
        command: The command line.
        reported: Whether the output has failure sections or an interruption (then tests or
            their collection did fail, and the usual reading applies).
    """
    usage = _usage_lines(text, command)
    if usage:
        return _missing_plugin(text, usage, command) or _pytest_usage(usage[-2:], command)
    ran_none = None if reported else _NO_TESTS.search(text)
    return _no_tests_findings(ran_none["sum"], command) if ran_none is not None else None


def _missing_plugin(text: str, usage: list[str], command: str) -> Findings | None:
    """Findings for unknown options that came from the project's configuration, not the command.

    They are the ``addopts`` of a plugin that is not installed: nothing was tested.
    """
    unknown = next((m for m in map(_UNKNOWN_OPTIONS.search, usage) if m is not None), None)
    config = _CONFIG_FILE.search(text)
    if unknown is None or config is None:
        return None
    options = unknown["args"].split()
    if any(option in command for option in options):
        return None  # the command passed them: a misuse of the command line, read as such
    plugins = dedupe(
        plugin
        for option in options
        for prefix, plugin in _PLUGIN_OF
        if plugin and option.split("=", 1)[0].startswith(prefix)
    )
    named = " and ".join(plugins) if plugins else "the plugin that adds them"
    return Findings(
        tool="pytest",
        failure_type=FailureType.DEPENDENCY_ERROR,
        category=ReflectionCategory.MISSING_CONTEXT,
        headline="pytest did not start: the project's configuration uses options of a plugin "
        "that is not installed.",
        facts=[clip(unknown["fact"], 200), config["line"]],
        advice=f"Install {named} (the project's test or dev dependencies) in the environment "
        "that runs pytest; don't strip the options from the configuration, nothing was tested.",
        steps=[f"Install the test dependencies, then run `{clip(command, 80)}` again."],
        evidence=usage[-1],
        confidence=0.8,
    )


def _no_tests_findings(summary: str, command: str) -> Findings:
    """Findings for a pytest run that selected no test (exit code 5): nothing was checked."""
    return Findings(
        tool="pytest",
        failure_type=FailureType.TEST_FAILURE,
        category=ReflectionCategory.TOOL_MISUSE,
        headline="pytest ran no test: the paths, -k or -m selected none.",
        summary=summary,
        facts=[summary],
        advice="Nothing was checked: the -k expression or -m marker matches no test name, or "
        "the path holds no test files pytest collects (test_*.py with test_ functions). Fix "
        "the selection (`pytest --collect-only -q` lists the ids), not the code.",
        steps=[f"Run `{clip(command or 'pytest', 80)} --collect-only -q` to see what it selects."],
        confidence=0.7,
    )


def _usage_lines(text: str, command: str) -> list[str]:
    """Return pytest's complaints about its own command line (when the command runs pytest)."""
    return [m["line"] for m in _PYTEST_USAGE.finditer(text)] if "pytest" in command else []


def _section_title(test_id: str, by_title: dict[str, str]) -> str:
    """Return the title of the FAILURES/ERRORS section of *test_id*, or ``""``."""
    name = test_id.rsplit("::", 1)[-1]
    dotted = ".".join(test_id.split("::")[1:])  # `Class.test` is how a method's section is titled
    candidates = (
        name,
        dotted,
        f"ERROR at setup of {name}",
        f"ERROR at teardown of {name}",
        f"ERROR collecting {test_id}",
        f"[doctest] {name}",
    )
    return next((title for title in candidates if title in by_title), "")


def _fact(label: str, message: str, loc: str) -> str:
    """Return ``label: message (loc)``, the message clipped."""
    return label + (f": {clip(message, 200)}" if message else "") + (f" ({loc})" if loc else "")


def _read_tests(
    findings: Findings,
    text: str,
    shorts: list[tuple[str, str, str]],
    sections: list[tuple[str, str]],
) -> None:
    """Add one fact per test of the short summary, then the sections no summary line names."""
    by_title = dict(sections)
    details_for = {title: _section_message(body) for title, body in sections}
    used_titles: set[str] = set()
    for kind, test_id, msg in shorts:
        title = _section_title(test_id, by_title)
        used_titles.add(title)
        message, loc = details_for.get(title, ("", ""))
        # a truncated summary message is looked up in the test's own section, never another's
        message = message or _untruncated(msg, by_title.get(title, "") if title else text)
        if message and not loc:
            loc = _line_style_location(message, text)
        label = f"{'ERROR ' if kind == 'ERROR' else ''}{test_id}"
        if title.startswith(("ERROR collecting", "ERROR at ")):  # the summary's `ERROR path`
            label = f"{label} ({title})"
        findings.facts.append(_fact(label, message, loc))
    for title, _body in sections:
        if title not in used_titles and (title.startswith("ERROR collecting") or not shorts):
            findings.facts.append(_fact(title, *details_for[title]))


def _read_run_details(findings: Findings, text: str, interrupted: re.Match[str] | None) -> None:
    """Add what the run says about itself: interrupted, stopped by -x, a coroutine not awaited."""
    if interrupted:
        findings.details.append(interrupted["msg"])
    never_awaited = _NEVER_AWAITED.search(text)  # the cause of a `'coroutine'` error
    if never_awaited:
        findings.details.insert(0, never_awaited.group(0))
    stopped = _PYTEST_STOPPED.search(text)
    if stopped:
        findings.details.append(f"{stopped['msg']} (-x: the other tests did not run)")


def _advise_run(
    findings: Findings,
    text: str,
    shorts: list[tuple[str, str, str]],
    sections: list[tuple[str, str]],
    *,
    collection: bool,
) -> None:
    """Advice for the run: no async plugin, a missing fixture, collection, or the tests."""
    joined = "\n".join(findings.facts)
    fixture = _FIXTURE_MISSING.search(text)
    if _ASYNC_UNSUPPORTED in text:
        _advise_async(findings, text)
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
    elif "ERROR collecting" in text or collection:
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
    else:
        _advise(findings, shorts, sections, joined)
    timed_out = _TIMED_OUT.search(text)
    if timed_out is not None and not collection:
        # A per-test limit fails one test while the run goes on: a test failure, as the
        # corpora label jest's and mocha's; only a limit that ends the run is a timeout.
        findings.evidence = timed_out.group(0)
        findings.advice = (
            "A test ran past its time limit: the frames quoted show where it was waiting or "
            "looping. Make that code finish (a queue read with no writer, a loop that makes "
            "no progress, a lock never released) rather than raising the limit."
        )


_TIMED_OUT = Pattern(r"^E\s+Failed: Timeout \(>[\d.]+s\) from pytest-timeout\.?$", M)
"""pytest-timeout's verdict on a test that ran too long (its ``E`` line)."""


def _advise_async(findings: Findings, text: str) -> None:
    """Async tests with no async plugin active: name the plugins pytest lists."""
    plugins = dedupe(m["name"] for m in _PLUGIN_ITEM.finditer(text))
    findings.category = ReflectionCategory.MISSING_CONTEXT
    findings.details.append(_ASYNC_UNSUPPORTED)
    findings.advice = (
        "The tests are async but no async plugin is active: install one ("
        + ", ".join(plugins[:5])
        + ') and enable it (for pytest-asyncio: `asyncio_mode = "auto"` or '
        "`@pytest.mark.asyncio`), rather than changing the code under test."
    )
    findings.steps.append("Add the async plugin to the test dependencies and the pytest config.")


def _advise(
    findings: Findings,
    shorts: list[tuple[str, str, str]],
    sections: list[tuple[str, str]],
    joined: str,
) -> None:
    """Advice for failing tests and errors at setup or teardown, fitting the error's kind."""
    titles = [title for title, _ in sections]
    setup = any(t.startswith("ERROR at setup of") for t in titles)
    teardown = any(t.startswith("ERROR at teardown of") for t in titles)
    errors_only = bool(shorts) and all(kind == "ERROR" for kind, _, _ in shorts)
    kind = error_kind(findings.facts[0]) if findings.facts else None
    if _ASSERT_FLOAT.search(joined):
        findings.steps.append(
            "A float differs in its last digits: compare with `pytest.approx(...)` or round "
            "the result, do not change the expected value."
        )
    if kind is not None:
        findings.category = kind.category
    if errors_only:
        _advise_errors_only(findings, setup=setup, teardown=teardown)
        return
    if any(t.startswith("[doctest]") for t in titles):
        findings.advice = (
            "A docstring example no longer shows what the code returns: fix the function so it "
            "returns what the example expects under Expected, or update the example only if "
            "the documented behaviour was meant to change."
        )
        return
    if kind is not None and kind.name != "assertion":
        findings.advice = f"The test raised rather than failed an assertion. {kind.advice}"
        return
    findings.advice = (
        "Read each failing assertion: the left side is what the code returned, the right "
        "side what the test expects. Fix the code under test so it returns the expected "
        "value; change a test only if the test itself is wrong."
    )


def _advise_errors_only(findings: Findings, *, setup: bool, teardown: bool) -> None:
    """Advice when every test errored: in teardown (the tests passed) or in setup."""
    if teardown and not setup:
        findings.headline = findings.headline.replace("failing test", "test erroring at teardown")
        findings.advice = (
            "The tests themselves ran (and passed): the error came in teardown, the code after "
            "a fixture's `yield` or a tearDown method. Fix that cleanup code or what it checks, "
            "not the test body."
        )
        return
    findings.advice = (
        "The tests never ran: their setup (a fixture or setup method) raised. Fix what the "
        "setup needs (a service, a file, a fixture's own code) before touching the tests."
    )
    if teardown:
        findings.advice += " Another test's teardown (the code after `yield`) failed too."
