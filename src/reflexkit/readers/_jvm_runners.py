"""JVM test runners beyond JUnit 4's text: the JUnit Platform console launcher, and Gradle.

The console launcher (``junit-platform-console-standalone``) draws a tree (``└─ name() ✘
message``), then ``Failures (N):`` with each failing test as ``  JUnit Jupiter:Class:method()``,
its ``MethodSource [...]``, ``=> exception: message`` and the frames indented under it, then
boxed counts (``[         1 tests failed          ]``).

Gradle names each failing test ``Class > method() FAILED`` with the exception indented under
it (``    org.opentest4j.AssertionFailedError at FooTest.java:12``, or the message and ``at``
frames with ``exceptionFormat = 'full'``), then ``3 tests completed, 1 failed``, ``> Task :test
FAILED`` and ``* What went wrong:``. A dependency it cannot resolve (``Could not resolve …``,
``No cached version … offline mode``) is a set-up failure; a compile task that failed prints
the compiler's lines (javac's ``File.java:3: error:``, kotlinc's ``e: file:///F.kt:3:5 …``).
"""

from __future__ import annotations

import re

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers._findings import Findings, clip, dedupe, plural
from reflexkit.readers._java import is_library_frame

__all__ = ["parse_gradle", "parse_junit_console"]

M = re.MULTILINE
_BOXED_FAILED = Pattern(r"^\[ +(?P<n>\d+) tests failed +\]$", M)
_CONSOLE_TEST = Pattern(r"^ {2}(?P<engine>JUnit [\w ]+|[\w-]+):(?P<test>\S[^\n]*)$", M)
_RAISED = Pattern(r"^ +=> (?P<line>[^\n]+)$")
_FRAME = Pattern(r"^ +(?:at )?(?P<frame>[\w$.<>/-]+\((?P<where>[\w$.-]+:\d+)\))$")
_BODY = 40
_TESTS = 6

_GRADLE_TEST = Pattern(r"^(?P<test>\S[^\n]*? > [^\n]+?) FAILED$", M)
_GRADLE_COUNT = Pattern(r"^(?P<line>\d+ tests? completed, \d+ failed(?:, \d+ skipped)?)$", M)
_GRADLE_TASK = Pattern(r"^> Task (?P<task>:\S+) FAILED$", M)
_WENT_WRONG = Pattern(r"^\* What went wrong:\n(?P<what>[^\n]+)(?P<more>(?:\n *>[^\n]*)*)", M)
_UNRESOLVED = Pattern(
    r"Could not resolve|Could not find [\w.-]+:[\w.-]+|offline mode|Could not GET|"
    r"Could not download|Could not determine the dependencies"
)
_COMPILER_LINE = Pattern(
    r"^(?P<line>(?:e: (?:file://)?\S+\.kts?:\d+:\d+ [^\n]+|\S+\.java:\d+: error: [^\n]+))$", M
)


def parse_junit_console(text: str) -> Findings | None:
    """Recognise the JUnit Platform console launcher's ``Failures (N):`` and its boxed count."""
    failed = _BOXED_FAILED.search(text)
    start = text.find("\nFailures (")
    if failed is None or failed["n"] == "0" or start < 0:
        return None
    findings = Findings(tool="JUnit", failure_type=FailureType.TEST_FAILURE)
    tests = list(_CONSOLE_TEST.finditer(text, start))
    for test in tests[:_TESTS]:
        findings.facts.append(_console_fact(test, text[test.end() + 1 :].splitlines()[:_BODY]))
    findings.tests = dedupe(t["test"] for t in tests)
    findings.summary = " ".join(failed.group(0).strip("[] ").split())
    findings.evidence = failed.group(0)
    findings.headline = f"JUnit reported {plural(int(failed['n']), 'failing test')}."
    findings.advice = (
        "Each failing test is quoted with its exception and the test's own line: fix the code "
        "under test so the assertion holds; change the test only if it is wrong."
    )
    if tests:
        findings.steps.append(
            f"Run that test alone with `--select-method` ({clip(tests[0]['test'], 80)})."
        )
    findings.confidence = 0.85
    return findings


def _console_fact(test: re.Match[str], body: list[str]) -> str:
    """``Class:method()``: the exception after ``=>`` and the first frame of the project's."""
    raised = frame = ""
    for line in body:
        if _CONSOLE_TEST.match(line):
            break
        found = _RAISED.match(line)
        if found is not None and not raised:
            raised = clip(found["line"], 240)
            continue
        at = _FRAME.match(line)
        if at is not None and raised and not is_library_frame(at["frame"]):
            frame = at["frame"]
            break
    return test["test"] + (f": {raised}" if raised else "") + (f" at {frame}" if frame else "")


_FAILING_TESTS = Pattern(r"\bThere were (?:\d+ )?failing tests\b")
"""What went wrong when a test task failed, whether or not its tests were printed."""


def parse_gradle(text: str) -> Findings | None:
    """Recognise Gradle's failed build: its failing tests, a dependency, a compile task."""
    wrong = _WENT_WRONG.search(text)
    task = _GRADLE_TASK.search(text)
    if wrong is None and task is None and _GRADLE_COUNT.search(text) is None:
        return None  # a `a > b FAILED` line alone is no proof that Gradle ran
    tests = list(_GRADLE_TEST.finditer(text))
    what = (
        " ".join(
            part.strip().lstrip("> ").strip()
            for part in (wrong["what"], *wrong["more"].splitlines())
            if part.strip()
        )
        if wrong is not None
        else ""
    )
    if tests:
        return _gradle_tests(text, tests, what)
    findings = Findings(tool="Gradle", failure_type=FailureType.BUILD_ERROR)
    proof = wrong or task
    findings.evidence = proof.group(0).splitlines()[-1] if proof is not None else ""
    if _UNRESOLVED.search(what):
        findings.failure_type = FailureType.DEPENDENCY_ERROR
        findings.category = ReflectionCategory.MISSING_CONTEXT
        findings.headline = "Gradle could not resolve the build's dependencies: nothing ran."
        findings.facts = [clip(what, 300)]
        findings.advice = (
            "A dependency could not be downloaded (no network, an offline build without it in "
            "the cache, or a wrong coordinate): fix the coordinate or make the repository "
            "reachable; the code under test is not at fault."
        )
        return findings
    compiled = [m["line"] for m in _COMPILER_LINE.finditer(text)][:6]
    findings.facts = [clip(line, 240) for line in compiled] or ([clip(what, 300)] if what else [])
    if not compiled and _FAILING_TESTS.search(what):
        return _gradle_quiet_tests(findings)
    findings.details = [task.group(0)] if task is not None else []
    findings.headline = (
        f"Gradle's task {task['task']} failed." if task is not None else "The Gradle build failed."
    )
    findings.advice = (
        "Fix the first compiler error at the place it names, then run the build again."
        if compiled
        else "Read what went wrong: it names the task that failed and why."
    )
    findings.confidence = 0.75
    return findings


def _gradle_quiet_tests(findings: Findings) -> Findings:
    """Gradle's test task failed naming no test (``-q``, test logging off): its report has them."""
    findings.failure_type = FailureType.TEST_FAILURE
    findings.headline = "Gradle's test task reported failing tests; this output names none of them."
    findings.advice = (
        "The tests' report (the path Gradle names) lists each failing test with its assertion: "
        "read it, or re-run the task with `--info` to print them, then fix the code under test."
    )
    findings.confidence = 0.7
    return findings


def _gradle_tests(text: str, tests: list[re.Match[str]], what: str) -> Findings:
    """Gradle's failing tests, each with the exception and place indented under it."""
    findings = Findings(tool="Gradle", failure_type=FailureType.TEST_FAILURE)
    for test in tests[:_TESTS]:
        lines = text[test.end() + 1 :].splitlines()[:12]
        said = next((ln.strip() for ln in lines if ln.startswith("    ") and ln.strip()), "")
        frame = ""
        for line in lines[1:]:
            at = _FRAME.match(line)
            if not line.startswith("    "):
                break
            if at is not None and not is_library_frame(at["frame"]):
                frame = at["frame"]
                break
        findings.facts.append(
            test["test"]
            + (f": {clip(said, 240)}" if said else "")
            + (f" at {frame}" if frame else "")
        )
    findings.tests = dedupe(t["test"] for t in tests)
    count = _GRADLE_COUNT.search(text)
    findings.summary = count["line"] if count is not None else ""
    findings.evidence = findings.summary or tests[0].group(0)
    if what:
        findings.details.append(clip(what, 200))
    findings.headline = f"Gradle's tests failed: {plural(len(findings.tests), 'failing test')}."
    findings.advice = (
        "Each failing test is quoted with its exception and place: fix the code under test so "
        "it holds; change the test only if it is wrong."
    )
    first = tests[0]["test"].split(" > ")
    findings.steps.append(f"Run that test alone: `gradle test --tests '{first[0].strip()}'`.")
    findings.confidence = 0.85
    return findings
