"""Readers for C and C++ builds and tests: CMake, CTest, and the test programs' own reports.

The test programs: Catch2, GoogleTest and cmocka, Check, Unity, and a harness's verdict lines
such as ``FAILED: x`` (read under make or before a crash).

CMake prints ``CMake Error at CMakeLists.txt:4 (find_package):`` followed by the message
indented by two spaces and, for errors raised inside a module, a ``Call Stack (most recent call
first):`` whose project line (``CMakeLists.txt:3 (find_package)``) is the one to fix. Errors
without a location read ``CMake Error: The source directory ... does not exist.``. A package
CMake cannot find is a missing dependency; anything else is a build (configuration) error.
"""

from __future__ import annotations

import re

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers._findings import MAX_BLOCKS, Findings, clip, dedupe, plural
from reflexkit.readers._lines import matching_lines

__all__ = [
    "catch2_failures",
    "gtest_failures",
    "parse_catch2",
    "parse_check_suite",
    "parse_cmake",
    "parse_criterion",
    "parse_ctest",
    "parse_doctest_cpp",
    "parse_gtest",
    "parse_meson_test",
    "parse_unity",
    "program_test_failures",
]

M = re.MULTILINE

_ERROR_AT = Pattern(r"^CMake Error at (?P<loc>.+?:\d+) \((?P<cmd>[\w:]+)\):$", M)
_ERROR_PLAIN = Pattern(r"^CMake Error: (?P<msg>.+)$", M)
_ERROR_AT_NEEDLE = Pattern(r"CMake Error at ")
_ERROR_PLAIN_NEEDLE = Pattern(r"CMake Error: ")
_BODY_LINE = Pattern(r"^ {2,}(?P<text>\S.*)$")
_STACK_FRAME = Pattern(r"^  (?P<loc>\S+:\d+) \((?P<cmd>[\w:]+)\)$", M)
_NOT_FOUND = Pattern(
    r"Could NOT find (?P<pkg>[\w:.+-]+)|"
    r'Could not find a package configuration file provided by\s+"(?P<cfg>[^"]+)"|'
    r"No package '(?P<pc>[^']+)' found|"
    r"(?:The following required packages were not found|A required package was not found)"
)
_HINT = Pattern(r"(?:Add the installation prefix of|Set [\w_]+ to|Try setting)[^.]*\.")
_MAX_BODY_LINES = 12
_MODULE_FILE = Pattern(r"(?:^|/)(?:share/cmake[^/]*/Modules|Modules)/|^/usr/|^/opt/")


def parse_cmake(text: str) -> Findings | None:
    """Recognise CMake's ``CMake Error at file:line (command):`` blocks and plain errors."""
    blocks = matching_lines(text, _ERROR_AT_NEEDLE, _ERROR_AT)
    plain = matching_lines(text, _ERROR_PLAIN_NEEDLE, _ERROR_PLAIN)
    if not blocks and not plain:
        return None
    findings = Findings(tool="cmake", failure_type=FailureType.BUILD_ERROR)
    packages: list[str] = []
    hints: list[str] = []
    for block in blocks[:MAX_BLOCKS]:
        message = " ".join(_block_body(text, block.end()))
        findings.facts.append(
            f"CMake Error at {_cmake_where(text, block)}: {clip(_first_sentence(message), 160)}"
        )
        packages.extend(
            found["pkg"] or found["cfg"] or found["pc"] or ""
            for found in _NOT_FOUND.finditer(message)
        )
        hints.extend(m.group(0) for m in _HINT.finditer(message))
    findings.facts.extend(clip(m.group(0), 200) for m in plain[:3])
    findings.facts = dedupe(findings.facts)
    findings.hints = dedupe(hints)[:2]
    packages = dedupe(packages)
    if packages or any(_NOT_FOUND.search(f) for f in findings.facts):
        _advise_not_found(findings, packages)
    else:
        _advise_cmake_error(findings, len(blocks) + len(plain), located=bool(blocks))
    findings.confidence = 0.85
    return findings


def _cmake_where(text: str, block: re.Match[str]) -> str:
    """Return ``file:line (command)`` of an error, the project's frame for a module's error."""
    where = f"{block['loc']} ({block['cmd']})"
    if not _MODULE_FILE.search(block["loc"]):
        return where
    stack = _STACK_FRAME.findall(text[block.end() : block.end() + 3000])
    own = [f"{loc} ({cmd})" for loc, cmd in stack if not _MODULE_FILE.search(loc)]
    return own[0] if own else where


def _advise_not_found(findings: Findings, packages: list[str]) -> None:
    """A package CMake cannot find: a missing dependency."""
    findings.failure_type = FailureType.DEPENDENCY_ERROR
    findings.category = ReflectionCategory.MISSING_CONTEXT
    names = ", ".join(packages[:4]) or "a required package"
    findings.headline = f"CMake cannot find {names}."
    findings.advice = (
        f"Install the development package of {names} (headers and the CMake config or "
        "pkg-config file), or point CMake at an existing install with CMAKE_PREFIX_PATH / "
        "<Package>_DIR; make the dependency optional only if the code can do without it."
    )
    findings.steps.append(f"Install {names}, then re-run the same cmake command.")


def _advise_cmake_error(findings: Findings, count: int, *, located: bool) -> None:
    """An error in CMakeLists.txt (located), or in the cmake command line (not located)."""
    findings.category = ReflectionCategory.ROOT_CAUSE if located else ReflectionCategory.TOOL_MISUSE
    findings.headline = f"CMake configuration failed with {plural(count, 'error')}."
    if located:
        findings.advice = (
            "Fix CMakeLists.txt at the line named: the files a target lists must exist (paths "
            "are relative to the CMakeLists.txt), and the command's arguments must be spelled "
            "as its documentation says."
        )
        findings.steps.append("Fix the named line, then re-run the same cmake command.")
    else:
        findings.advice = (
            "Fix the cmake command line: the source directory (-S) must hold "
            "CMakeLists.txt and the build directory (-B) must be writable."
        )
        findings.steps.append("Fix the cmake arguments, then run it again.")


def _block_body(text: str, start: int) -> list[str]:
    """Return the message lines of one ``CMake Error at`` block (up to its call stack)."""
    lines: list[str] = []
    for line in text[start : start + 4000].splitlines()[1:40]:
        if line.startswith("Call Stack") or (not line.strip() and len(lines) > _MAX_BODY_LINES):
            break
        match = _BODY_LINE.match(line)
        if match:
            lines.append(match["text"].strip())
        elif line.strip() and not line.startswith(" "):
            break
    return lines


def _first_sentence(message: str) -> str:
    """Return the message's most telling sentence (the ``Could NOT find`` one when present)."""
    found = _NOT_FOUND.search(message)
    if found is not None:
        start = message.rfind(". ", 0, found.start())
        begin = start + 2 if start >= 0 else 0
        end = message.find(". ", found.end())
        return message[begin : end + 1 if end >= 0 else len(message)].strip()
    message = message.split(" Tried extensions ", 1)[0]
    end = message.find(". ")
    return message[: end + 1] if end >= 0 else message


# --- ctest -----------------------------------------------------------------------------------

_CTEST_FAILED = Pattern(r"^\s*(?P<line>\d+ - (?P<name>\S+) \((?P<why>[^)\n]+)\))$", M)
"""A line of ctest's closing list, under ``The following tests FAILED:``."""
_CTEST_FAILED_NEEDLE = Pattern(r" - ")
_CTEST_STATUS = Pattern(
    r"^\s*(?P<line>\d+/\d+ Test +#\d+: (?P<name>\S+) \.+\s*(?P<why>[^\n*]*\*{3}[^\n]*?))"
    r"(?:\s+[\d.]+ sec)?$",
    M,
)
"""ctest's status line of a test that did not pass: ``14/19 Test #14: misc ....***Failed``."""
_CTEST_NEXT = Pattern(r"^\s*(?:Start +\d+: |\d+/\d+ Test +#|\d+% tests passed)", M)
_CTEST_SUMMARY = Pattern(r"^(?P<line>\d+% tests passed, \d+ tests? failed out of \d+)$", M)
_CTEST_NONE = Pattern(r"^No tests were found!+$", M)
_FAIL_WORD = Pattern(r"(?i)(?<![\w-])(?:fail(?:ed|ure|s)?|assert\w*)(?![\w-])")
_ERROR_WORD = Pattern(r"(?i)(?<![\w-])(?:error|expected|mismatch)(?![\w-])")
_TELLING_WORD = Pattern(r"(?:fail(?:ed|ure|s)?|assert\w*|error|expected|mismatch)(?![\w-])")
"""A word that names a failure or an error (those of ``_FAIL_WORD`` and ``_ERROR_WORD``)."""
_NOT_A_FAILURE = Pattern(
    r"(?i)(?<![\w-])(?:pass(?:ed)?|ok)(?![\w-])|\d+ (?:tests? )?(?:fail|error)|"
    r"(?:fail|error)\w*:? \d+|^\W*(?:fail(?:ed|ure)?|error)\W*$"
)
"""A line that says what passed, a count (``27 Tests 1 Failures``), or a lone verdict word."""
_CRASHED = Pattern(r"(?i)segfault|sigsegv|bus error|illegal|sigill|sigbus")
_ABORTED = Pattern(r"(?i)aborted|exception")
_ASSERTION = Pattern(r"(?i)assert")
"""An abort after an assertion is the test's verdict, not a crash."""
_TIMED_OUT = Pattern(r"(?i)timeout")
_UNABLE_TO_FIND = Pattern(r"^Unable to find executable: \S+$", M)
_OWN_LINES = 2
"""A failing test's own lines quoted (its first assertion or error lines)."""


def parse_ctest(text: str) -> Findings | None:
    """Recognise a CTest run: its failed-tests list, status lines and what tests printed.

    With ``--output-on-failure`` the lines each failing test printed give its assertion or error.

    A test that crashed (``***Exception: SegFault``, ``(SEGFAULT)``) is a runtime error; one
    that failed or timed out is a test failure.
    """
    listed = matching_lines(text, _CTEST_FAILED_NEEDLE, _CTEST_FAILED)
    summary = _CTEST_SUMMARY.search(text)
    if summary is None and not _CTEST_NONE.search(text):
        return None
    findings = Findings(tool="ctest", failure_type=FailureType.TEST_FAILURE)
    if summary is None or not listed:
        findings.category = ReflectionCategory.TOOL_MISUSE
        findings.headline = "ctest found no tests to run."
        findings.advice = (
            "ctest runs the tests of the build directory it is run in: run it in (or point "
            "`--test-dir` at) the build directory, after building with testing enabled."
        )
        findings.steps.append("Run `ctest --test-dir <build dir> -N` to list the tests first.")
        findings.confidence = 0.6
        return findings
    findings.summary = summary["line"]
    statuses = {m["name"]: m for m in _CTEST_STATUS.finditer(text)}
    for failed in listed[:MAX_BLOCKS]:
        findings.tests.append(failed["name"])
        findings.facts.append(failed["line"])
        status = statuses.get(failed["name"])
        if status is not None:
            findings.details.append(status["line"])
            findings.facts.extend(_own_lines(text, status.end()))
    _advise_ctest(findings, text, [m["why"] for m in listed])
    findings.headline = f"ctest reported {plural(len(listed), 'failing test')}."
    findings.steps.append(
        f"Run it alone in the build directory: `ctest -R '^{findings.tests[0]}$' "
        "--output-on-failure`."
    )
    findings.confidence = 0.85
    return findings


def _advise_ctest(findings: Findings, text: str, whys: list[str]) -> None:
    """Advice by ctest's verdicts: not built, crashed, timed out, or failed."""
    said = " ".join(whys)
    asserted = any(_ASSERTION.search(fact) for fact in findings.facts)
    if all(why == "Not Run" for why in whys):
        _advise_not_run(findings, text)
    elif _CRASHED.search(said) or (_ABORTED.search(said) and not asserted):
        findings.failure_type = FailureType.RUNTIME_ERROR
        findings.advice = (
            "A test program crashed: run it alone under a debugger or rebuild with "
            "`-fsanitize=address,undefined` to get the faulting line, then fix the invalid "
            "memory access there."
        )
    elif _TIMED_OUT.search(said):
        findings.advice = (
            "A test ran past ctest's time limit: the code under test loops or waits forever on "
            "that input. Find the loop that makes no progress rather than raising the timeout."
        )
    else:
        findings.advice = (
            "Each failing test is quoted with the lines it printed: fix the code under test so "
            "the named assertion holds (or fix the test if its expectation is wrong)."
        )


def _advise_not_run(findings: Findings, text: str) -> None:
    """The test programs were never built (``***Not Run``): build before running ctest."""
    findings.category = ReflectionCategory.TOOL_MISUSE
    missing = _UNABLE_TO_FIND.search(text)
    if missing:
        findings.details.append(missing.group(0))
    findings.advice = (
        "ctest ran before the tests were built: its test programs do not exist. Build first "
        "(`cmake --build <build dir>`), then run ctest; nothing was tested."
    )


def _telling_lines(block: str) -> list[str]:
    """Return the lines of *block* holding a failure or error word (one search per line).

    The words are searched in a lower-cased copy (the same length) and the boundary before
    each is checked here: a case-insensitive pattern, or one led by a look-behind, costs
    several times more (the regex engine cannot skip ahead to a word's first letters).
    """
    lines: list[str] = []
    pos = 0
    lowered = block.lower()
    while (word := _TELLING_WORD.search(lowered, pos)) is not None:
        if word.start() and (
            lowered[word.start() - 1].isalnum() or lowered[word.start() - 1] in "_-"
        ):
            pos = word.end()  # inside a longer word (`nofail`, `my-error`): not the word
            continue
        start = block.rfind("\n", 0, word.start()) + 1
        end = block.find("\n", word.end())
        end = len(block) if end < 0 else end
        lines.append(block[start:end])
        pos = end + 1
    return lines


def _own_lines(text: str, start: int) -> list[str]:
    """Return the first lines a failing test printed that say what failed (not what passed)."""
    end = _CTEST_NEXT.search(text, start)
    block = text[start : end.start() if end else start + 20_000]
    catch = catch2_failures(block) or gtest_failures(block)
    if catch:
        return [text for _case, text in catch[:_OWN_LINES]]
    lines = [line.strip() for line in _telling_lines(block) if not _NOT_A_FAILURE.search(line)]
    failing = [line for line in lines if _FAIL_WORD.search(line)]
    failing += [line for line in lines if line not in failing]
    return dedupe(clip(line, 200) for line in failing)[:_OWN_LINES]


# --- Catch2 ----------------------------------------------------------------------------------
# Catch2's console reporter: a test case (and its sections) between two rules of dashes, then
# ``file:line: FAILED:``, the assertion macro indented, and what Catch2 says of it (``with
# expansion:`` and the values, ``due to unexpected exception with message:``, ``because no
# exception was thrown where one was expected:``), closed by ``test cases: 3 | 2 passed | 1
# failed``.

_CATCH_FAILED = Pattern(r"^(?P<loc>\S[^\n]*?:\d+): FAILED:$", M)
_CATCH_CASE = Pattern(r"^-{40,}\n(?P<name>(?:[^\n]+\n){1,4}?)-{40,}$", M)
_CATCH_SAYS = Pattern(r"^(?P<says>[a-z][^\n]*:)$")
_CATCH_SUMMARY = Pattern(r"^(?P<line>test cases:\s+\d+ \|[^\n]*\d+ failed[^\n]*)$", M)
_CATCH_FAILED_NEEDLE = Pattern(r": FAILED:")
_CATCH_SHOWN = 4


def catch2_failures(text: str) -> list[tuple[str, str]]:
    """Return Catch2's failed assertions as (test case, ``loc: FAILED: MACRO(...) says: value``)."""
    if _CATCH_FAILED_NEEDLE.search(text) is None:
        return []
    cases = [
        (m.end(), " / ".join(ln.strip() for ln in m["name"].splitlines()))
        for m in _CATCH_CASE.finditer(text)
    ]
    out: list[tuple[str, str]] = []
    for failed in _CATCH_FAILED.finditer(text):
        case = next((name for end, name in reversed(cases) if end < failed.start()), "")
        out.append((case, _catch_assertion(failed, text)))
        if len(out) >= MAX_BLOCKS:
            break
    return out


def _catch_assertion(failed: re.Match[str], text: str) -> str:
    """Render one failed assertion: its location, its macro and what Catch2 said of it."""
    lines = text[failed.end() + 1 : failed.end() + 3000].split("\n", 12)[:12]
    macro, says, values = "", "", []
    for line in lines:
        if not line.strip() or line.startswith(("---", "===", "...")):
            break
        said = _CATCH_SAYS.match(line)
        if said is not None:
            if says:
                break
            says = said["says"]
        elif says:
            values.append(line.strip())
        elif not macro:
            macro = line.strip()
    rendered = f"{failed['loc']}: FAILED:" + (f" {clip(macro, 200)}" if macro else "")
    if says:
        rendered += f" ({says} {clip(' '.join(values), 160)})" if values else f" ({says})"
    return rendered


def parse_catch2(text: str) -> Findings | None:
    """Recognise a Catch2 test program's report: its failed assertions and its case count."""
    summary = _CATCH_SUMMARY.search(text)
    failures = catch2_failures(text) if summary is not None else []
    if not failures or summary is None:
        return None
    findings = Findings(tool="catch2", failure_type=FailureType.TEST_FAILURE)
    findings.summary = findings.evidence = summary["line"]
    findings.tests = dedupe(case for case, _text in failures if case)
    findings.facts = [text for _case, text in failures[:_CATCH_SHOWN]]
    if len(failures) > _CATCH_SHOWN:
        findings.details.append(f"{len(failures) - _CATCH_SHOWN} more failed assertions")
    findings.headline = f"The Catch2 tests reported {plural(len(failures), 'failed assertion')}."
    findings.advice = (
        "Each failed assertion is quoted with its values (or the exception it met): fix the "
        "code under test so it holds; change the test only if its expectation is wrong."
    )
    if findings.tests:
        case = findings.tests[0].split(" / ", 1)[0]
        findings.steps.append(f'Run that case alone: the test program with `"{case}"`.')
    findings.confidence = 0.85
    return findings


# --- meson test ------------------------------------------------------------------------------
# ``14/16 name   FAIL   0.05s   exit status 1``; with ``--print-errorlogs`` the command (``>>>
# …``) and what the test printed between two rules (the first marked ``✀``); then ``Summary
# of Failures:``, the counts (``Fail:  1``) and ``Full log written to …/testlog.txt``.

_MESON_RESULT = Pattern(
    r"^ *\d+/\d+ (?P<name>\S+(?: \S+)*?) +(?P<verdict>FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS) +"
    r"[\d.]+s(?: +(?P<why>\S[^\n]*?))? *$",
    M,
)
_MESON_FAIL_COUNT = Pattern(r"^(?P<line>(?:Fail|Timeout): +[1-9]\d*) *$", M)
_MESON_LOG = Pattern(r"^(?P<line>Full log written to \S+)$", M)
_MESON_RAN = Pattern(r"^>>> (?P<cmd>[^\n]+)$", M)
_MESON_OUTPUT = Pattern(r"^―+ ✀ +―+\n(?P<out>.*?)^―{20,}$", M | re.DOTALL)


def parse_meson_test(text: str) -> Findings | None:
    """Recognise ``meson test``: its failing tests, the command each ran, what it printed."""
    count = _MESON_FAIL_COUNT.search(text)
    if count is None:
        return None
    results: dict[str, re.Match[str]] = {}
    for result in _MESON_RESULT.finditer(text):  # its first row, where its output follows
        results.setdefault(result["name"], result)
    if not results:
        return None
    findings = Findings(tool="meson test", failure_type=FailureType.TEST_FAILURE)
    findings.summary = findings.evidence = " ".join(count["line"].split())
    for name, result in list(results.items())[:MAX_BLOCKS]:
        findings.tests.append(name)
        printed = _meson_printed(text, result.end())
        why = f" ({result['why']})" if result["why"] else ""
        findings.facts.append(
            f"{name} {result['verdict']}{why}" + (f": {printed}" if printed else "")
        )
    ran = _MESON_RAN.search(text)
    if ran is not None:
        findings.details.append(f"ran: {clip(ran['cmd'], 200)}")
    log = _MESON_LOG.search(text)
    findings.headline = f"meson test reported {plural(len(results), 'failing test')}."
    findings.advice = (
        "The lines quoted are what each failing test printed: fix the code under test so its "
        "output or exit status is the expected one; change the test only if it is wrong."
    )
    if log is not None:
        findings.hints.append(log["line"])
        findings.steps.append(
            "Read the failing test's output in that log, or re-run `meson test "
            "--print-errorlogs` to see it."
        )
    findings.confidence = 0.85
    return findings


def _meson_printed(text: str, start: int) -> str:
    """The first lines a failing test printed (``--print-errorlogs``), right after its row."""
    block = _MESON_OUTPUT.search(text, start, start + 20_000)
    if block is None or _MESON_RESULT.search(text, start, block.start()):
        return ""
    lines = [line.strip() for line in block["out"].splitlines() if line.strip()]
    return clip("; ".join(lines[:4]), 200)


# --- doctest (C++) and Criterion (C) --------------------------------------------------------
# doctest: ``TEST CASE:  name``, then ``file:line: ERROR: CHECK( x ) is NOT correct!`` and
# ``  values: CHECK( 2 == 3 )``, closed by ``[doctest] test cases: 2 | 1 passed | 1 failed``.
# Criterion: ``[----] file:line: Assertion Failed``, its message on ``[----]`` lines, then
# ``[FAIL] suite::test: (0.00s)``, closed by ``[====] Synthesis: Tested: 3 | ... Failing: 2``.

_DOCTEST_SUMMARY = Pattern(r"^(?P<line>\[doctest\] test cases: [^\n]*\d+ failed[^\n]*)$", M)
_DOCTEST_CASE = Pattern(r"^TEST CASE:\s+(?P<name>\S[^\n]*)$", M)
_DOCTEST_ERROR = Pattern(
    r"^(?P<line>(?P<loc>\S[^\n]*?:\d+): (?:FATAL )?ERROR: [^\n]*)\n(?:[ \t]+(?P<more>\S[^\n]*))?",
    M,
)
_CRITERION_SUMMARY = Pattern(
    r"^(?P<line>\[====\] Synthesis: Tested: [^\n]*Failing: [1-9][^\n]*)$", M
)
_CRITERION_WHERE = Pattern(r"^\[----\] (?P<loc>\S+:\d+): (?P<what>[^\n]*)$", M)
_CRITERION_FAIL = Pattern(r"^\[FAIL\] (?P<name>\S+)(?::[^\n]*)?$", M)
_CRITERION_MESSAGE = Pattern(r"^\[----\][ \t]+(?P<msg>\S[^\n]*)$", M)


def parse_doctest_cpp(text: str) -> Findings | None:
    """Recognise a doctest (C++) program's report: each failed check in its test case."""
    summary = _DOCTEST_SUMMARY.search(text)
    if summary is None:
        return None
    cases = [(m.start(), m["name"].strip()) for m in _DOCTEST_CASE.finditer(text)]
    facts: list[str] = []
    tests: list[str] = []
    for error in _DOCTEST_ERROR.finditer(text, 0, summary.start()):
        case = next((name for at, name in reversed(cases) if at < error.start()), "")
        tests.append(case)
        more = f" ({clip(error['more'], 160)})" if error["more"] else ""
        facts.append((f"{case}: " if case else "") + clip(error["line"], 200) + more)
    return _c_framework_findings("doctest", summary["line"], dedupe(tests), facts)


def parse_criterion(text: str) -> Findings | None:
    """Recognise a Criterion (C) program's report: each failed test with its assertion."""
    summary = _CRITERION_SUMMARY.search(text)
    if summary is None:
        return None
    facts: list[str] = []
    tests: list[str] = []
    start = 0
    for failed in _CRITERION_FAIL.finditer(text, 0, summary.start()):
        block = text[start : failed.start()]
        start = failed.end()
        tests.append(failed["name"])
        where = _CRITERION_WHERE.search(block)
        said = [m["msg"] for m in _CRITERION_MESSAGE.finditer(block, where.end() if where else 0)]
        fact = failed["name"]
        if where is not None:
            fact += f": {where['loc']}: {where['what']}"
        facts.append(fact + (f" ({clip(said[0], 160)})" if said else ""))
    return _c_framework_findings("criterion", summary["line"], dedupe(tests), facts)


def _c_framework_findings(
    tool: str, summary: str, tests: list[str], facts: list[str]
) -> Findings | None:
    """A C or C++ test framework's failing tests: a test failure with its summary line."""
    if not facts:
        return None
    findings = Findings(tool=tool, failure_type=FailureType.TEST_FAILURE)
    findings.summary = findings.evidence = summary.strip()
    findings.tests = [t for t in tests if t]
    findings.facts = facts[:_CATCH_SHOWN]
    if len(facts) > _CATCH_SHOWN:
        findings.details.append(f"{len(facts) - _CATCH_SHOWN} more failed checks")
    findings.headline = f"The {tool} tests reported {plural(len(facts), 'failed check')}."
    findings.advice = (
        "Each failed check is quoted with where it is and the values it saw: fix the code "
        "under test so it holds; change the test only if its expectation is wrong."
    )
    findings.steps.append("Re-run the test program after each fix.")
    findings.confidence = 0.85
    return findings


# --- GoogleTest ------------------------------------------------------------------------------
# ``[ RUN      ] Suite.Test``, the failures it printed (``file:line: Failure`` and what was
# compared: ``Expected equality of these values:``, ``Which is:``, ``Value of:``), then
# ``[  FAILED  ] Suite.Test (0 ms)``; closed by ``[  FAILED  ] N tests, listed below:``.

_GTEST_RUN = Pattern(r"^\[ RUN      \] (?P<name>\S+)$", M)
_GTEST_FAILED = Pattern(r"^\[  FAILED  \] (?P<name>[^\s,]+)(?: \(\d+ ms\)|, where .*)?$", M)
_GTEST_FAILURE = Pattern(r"^(?P<loc>\S[^\n]*?[:(]\d+\)?): (?:Failure|error: .*)$", M)
_CMOCKA_ERROR = Pattern(r"^\[  ERROR   \] --- (?P<msg>.+)$", M)
_CMOCKA_LINE = Pattern(r"^\[   LINE   \] --- (?P<loc>\S+:\d+): error: Failure!$", M)
"""cmocka in GoogleTest's frame: what failed (``[  ERROR   ] --- 0x1 != 0x5``), then where."""
_GTEST_LISTED = Pattern(r"^(?P<line>\[  FAILED  \] \d+ tests?(?:\(s\))?, listed below:)$", M)
_GTEST_SHOWN = 4


def gtest_failures(text: str) -> list[tuple[str, str]]:
    """Return GoogleTest's failing tests as (``Suite.Test``, its first failure, as printed)."""
    if "[  FAILED  ]" not in text or "[ RUN      ]" not in text:
        return []
    out: list[tuple[str, str]] = []
    runs = {m["name"]: m.end() for m in _GTEST_RUN.finditer(text)}
    for failed in _GTEST_FAILED.finditer(text):
        start = runs.get(failed["name"])
        if start is None or start > failed.start() or any(n == failed["name"] for n, _ in out):
            continue
        block = text[start : failed.start()]
        cmocka = _CMOCKA_LINE.search(block)
        if cmocka is not None:  # cmocka prints what failed first, then the line
            said = " ".join(m["msg"] for m in _CMOCKA_ERROR.finditer(block))
            out.append((failed["name"], clip(f"{cmocka['loc']}: {said}".rstrip(": "), 240)))
            continue
        failure = _GTEST_FAILURE.search(block)
        if failure is None:
            out.append((failed["name"], clip(" ".join(block.split()), 200)))
            continue
        said = block[failure.end() : failure.end() + 1500].split("\n[", 1)[0]
        lines = [ln.strip() for ln in said.splitlines() if ln.strip()][:6]
        out.append((failed["name"], clip(f"{failure.group(0)}: {' '.join(lines)}", 240)))
        if len(out) >= MAX_BLOCKS:
            break
    return out


def parse_gtest(text: str) -> Findings | None:
    """Recognise a GoogleTest program's report: each failed test with what it compared."""
    failures = gtest_failures(text)
    if not failures:
        return None
    findings = Findings(tool="googletest", failure_type=FailureType.TEST_FAILURE)
    listed = _GTEST_LISTED.search(text)
    findings.summary = findings.evidence = listed["line"] if listed else ""
    findings.tests = [name for name, _said in failures]
    findings.facts = [f"{name}: {said}" for name, said in failures[:_GTEST_SHOWN]]
    findings.headline = f"{plural(len(failures), 'test')} failed ([  FAILED  ] lines)."
    findings.advice = (
        "Each failed test is quoted with the values it compared (`Which is:` is what the code "
        "produced): fix the code under test so the expectation holds; change the test only if "
        "its expectation is wrong."
    )
    if "[----------]" in text:  # GoogleTest's own frame (cmocka prints none)
        findings.steps.append(
            f"Run it alone: the test program with `--gtest_filter={findings.tests[0]}`."
        )
    else:
        findings.steps.append("Run the test program again after each fix.")
    findings.confidence = 0.85
    return findings


# --- C test programs: their own verdicts, Check and Unity -------------------------------

_PROGRAM_FAIL = Pattern(
    r"^(?P<line>[ \t]*\[?[ \t]*FAIL(?:ED|URE|S)?\b.*"
    r"|.*\S(?: -|:|[ \t])[ \t]*\[?FAIL(?:ED|URE)?\]?[!.]?(?:[ \t]+\(.*\))?[ \t]*"
    r"|not ok \d+\b.*|\S+:\d+:[FE]:[^:\n]+:[^:\n]+:\d+: .*|\S+:\d+:[^:\n]+:FAIL\b.*)$",
    M,
)
"""A test program's verdict on one check, in capitals as C harnesses print it (``FAILED: x``,
``x - FAILED``, ``[FAIL] x``), TAP's ``not ok``, Check's ``t.c:4:F:Core:test_add:0: msg`` or
Unity's ``t.c:12:test_add:FAIL: Expected 5 Was -1``; a match never spans two lines;
a tool's lower-case 'failure' is not one."""
_PROGRAM_COUNT = Pattern(
    r"^[ \t]*(?:(?:Tests?|Cases?|Checks?) )?(?:FAIL(?:ED|URES?)?|[Ff]ail(?:ed|ures?))[ \t]*[:=]"
    r"[ \t]*[1-9]\d*[ \t]*$|^[ \t]*[1-9]\d* (?:(?:tests?|cases?|checks?) )?(?:failed|FAILED)\.?"
    r"[ \t]*$|^\d+%: Checks: \d+, Failures: \d+, Errors: \d+[ \t]*$"
    r"|^\d+ Tests \d+ Failures \d+ Ignored[ \t]*$",
    M,
)
_NOT_A_TEST_LINE = Pattern(
    r"^(?:g|mingw32-)?make(?:\[\d+\])?: |: (?:fatal )?error: |^\s*(?:\d+|[A-Z]+): 0\s*$"
)
_FAIL_NEEDLE = Pattern(r"FAIL|not ok |:[FE]:")
_SAYS_WHY = Pattern(r"(?i)\b(?:expected|got|but|not|actual|should|was|is|instead)\b|[!=<>]=")
"""A line before a failing check that says what went wrong (``status is 2, not -2``)."""
_PROGRAM_LINES = 60
_SOURCE_LINE = Pattern(r"^\s*(\d+)\s|\bline (\d+)\b")
"""The test source's line a check names: leading (``177 x - FAILED``) or ``(at line 371)``."""
_RUN_GAP = 20
"""Checks at most this many source lines apart (and in order) are one test's cascade."""
_FAILS_KEPT = 8
_VERDICTS = frozenset({"FAIL", "FAILED", "FAILURE", "FAILURES", "FAILURES!!!"})
"""A run's closing verdict alone on its line: not one of its checks."""
"""How many lines before make's error or the crash are read as the program's own output."""


def program_test_failures(text: str, end: int) -> tuple[list[str], str]:
    """Return the failing checks a test program printed before *end*, and its failure count.

    A C test binary run by ``make test`` prints its own verdicts (``FAILED: test for x (at
    line 371)``, ``177 root_value   - FAILED``, ``FAIL: 2``): they, not make's line, say what
    failed. Returns the verdict lines (padding collapsed) with the line printed just before
    each when it is a message of its own, and the count line; empty when there are none.
    """
    start = end
    for _ in range(_PROGRAM_LINES):
        start = text.rfind("\n", 0, start - 1) if start > 0 else -1
        if start < 0:
            start = 0
            break
    block = text[start:end]
    if _FAIL_NEEDLE.search(block) is None:
        return [], ""
    counts = [m.group(0).strip() for m in _PROGRAM_COUNT.finditer(block)]
    checks: list[tuple[int | None, list[str]]] = []  # (test source line, its lines)
    for verdict in _PROGRAM_FAIL.finditer(block):  # one pass; the rest only for its matches
        line = verdict["line"]
        if _NOT_A_TEST_LINE.search(line) or line.strip() in counts or line.strip() in _VERDICTS:
            continue
        above = block.rfind("\n", 0, max(verdict.start() - 1, 0))
        before = block[above + 1 : max(verdict.start() - 1, 0)].strip() if verdict.start() else ""
        said = [clip(before, 120)] if before and _SAYS_WHY.search(before) else []
        if said and _PROGRAM_FAIL.match(before):
            said = []
        number = _SOURCE_LINE.search(line)
        at = int(number[1] or number[2]) if number else None
        checks.append((at, [*said, clip(" ".join(line.split()), 160)]))
    fails = [line for _no, lines in _runs_first(checks)[:_FAILS_KEPT] for line in lines]
    return dedupe(fails), (counts[-1] if counts else "")


def _runs_first(
    checks: list[tuple[int | None, list[str]]],
) -> list[tuple[int | None, list[str]]]:
    """Put the first check of each run of nearby source lines first, the rest after.

    A failed setup fails every check after it in the same test (``177 root_value``, ``178
    ...``): a check far below, or above, the one before it belongs to another test, and its
    first failure is a lesson of its own (``310 json_parse_string(...) != NULL``).
    """
    heads: list[tuple[int | None, list[str]]] = []
    rest: list[tuple[int | None, list[str]]] = []
    previous: int | None = None
    for check in checks:
        number = check[0]
        new_run = number is None or previous is None or not 0 < number - previous <= _RUN_GAP
        (heads if new_run else rest).append(check)
        previous = number
    return heads + rest


# --- Check (libcheck) ------------------------------------------------------------------------

_CHECK_SUMMARY = Pattern(r"^(?P<line>\d+%: Checks: \d+, Failures: \d+, Errors: \d+)\s*$", M)
_CHECK_TEST = Pattern(
    r"^(?P<line>(?P<loc>\S+:\d+):(?P<kind>[FE]):(?P<tcase>[^:\n]+):(?P<test>[^:\n]+):\d+: .*)$", M
)


def _c_test_report(
    text: str, summary_at: Pattern, failing_at: Pattern, tool: str, what: str
) -> tuple[Findings, list[re.Match[str]]] | None:
    """A C test program's summary line and its failing tests' lines, or None without both.

    What Check's and Unity's readers share: the summary is the evidence, each failing line a
    fact (the first six), its ``test`` group the test id.
    """
    summary = summary_at.search(text)
    failed = list(failing_at.finditer(text)) if summary is not None else []
    if summary is None or not failed:
        return None
    findings = Findings(tool=tool, failure_type=FailureType.TEST_FAILURE, confidence=0.85)
    findings.summary = findings.evidence = summary["line"]
    findings.tests = dedupe(m["test"] for m in failed)
    findings.facts = [clip(m["line"], 220) for m in failed[:6]]
    findings.headline = f"The C test {what} reported {plural(len(failed), 'failing test')}."
    return findings, failed


def parse_check_suite(text: str) -> Findings | None:
    """Recognise a Check (libcheck) suite's report: ``t.c:4:F:Core:test_add:0: message``."""
    found = _c_test_report(text, _CHECK_SUMMARY, _CHECK_TEST, "check", "suite")
    if found is None:
        return None
    findings, tests = found
    findings.advice = (
        "Each failing test is quoted with its assertion and the values it saw (`F` a failed "
        "check, `E` an error such as a crash or a signal): fix the code under test so it holds."
    )
    findings.steps.append(
        f"Run that case alone: the test program with `CK_RUN_CASE={tests[0]['tcase']}` "
        "(and `CK_FORK=no` to debug it)."
    )
    return findings


# --- Unity -----------------------------------------------------------------------------------

_UNITY_SUMMARY = Pattern(r"^(?P<line>\d+ Tests \d+ Failures \d+ Ignored)[ \t]*$", M)
_UNITY_FAIL = Pattern(r"^(?P<line>(?P<loc>\S+:\d+):(?P<test>\w+):FAIL\b.*)$", M)


def parse_unity(text: str) -> Findings | None:
    """Recognise a Unity test program's report: ``t.c:12:test_add:FAIL: Expected 5 Was -1``."""
    found = _c_test_report(text, _UNITY_SUMMARY, _UNITY_FAIL, "unity", "program")
    if found is None:
        return None
    findings, failed = found
    findings.advice = (
        "Each failing test is quoted with its line and what Unity saw (`Expected 5 Was -1`: "
        "the value the code produced comes last): fix the code under test so it holds."
    )
    findings.steps.append(f"Fix {failed[0]['loc']} first, then run the test program again.")
    return findings
