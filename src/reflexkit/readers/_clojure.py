"""Clojure: clojure.test's report and the ``Execution error`` a Clojure program dies with.

clojure.test prints each failing assertion as ``FAIL in (test-name) (file.clj:12)`` (an
exception as ``ERROR in …``), the ``testing`` context, ``expected: (= …)`` and ``actual: …``
(for an error, the exception and its stack as ``at ns$fn.invoke (file.clj:3)`` frames), then
``Ran N tests containing M assertions.`` and ``F failures, E errors.``. A Clojure program that
dies prints ``Execution error (Class) at ns/fn (file:line).`` and the message; a namespace
that cannot be found is ``Could not locate a/b__init.class, a/b.clj or a/b.cljc on
classpath.``: a test namespace that cannot be found is a runner given the wrong class path.
"""

from __future__ import annotations

import re

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers._findings import Findings, clip, plural

__all__ = ["parse_clojure_error", "parse_clojure_test"]

M = re.MULTILINE
_REPORT = Pattern(r"^(?P<verdict>FAIL|ERROR) in \((?P<test>[^)\n]+)\) \((?P<loc>[^)\n]*)\)$", M)
_COUNT = Pattern(r"^(?P<line>\d+ failures, \d+ errors\.)$", M)
_RAN = Pattern(r"^(?P<line>Ran \d+ tests containing \d+ assertions\.)$", M)
_FIELD = Pattern(r"^ *(?P<line>(?:expected|actual): [^\n]*)$")
_FRAME = Pattern(r"^ *(?:at )?(?P<frame>[\w.$-]+(?:/[\w$-]+)? \([\w.-]+:\d+\))$")
_LIBRARY = ("clojure.", "java.", "jdk.", "sun.", "user$eval")
_EXECUTION = Pattern(
    r"^(?P<line>(?:Execution|Syntax) error (?:\((?P<cls>\w+)\) )?(?:at|compiling at|"
    r"reading source at|macroexpanding) [^\n]*?"
    # Clojure's line always ends at its source, `(core.clj:12).` or `(REPL:1:5).`: another
    # tool's "Syntax error at line 3" or "Execution error at step 'deploy'" does not.
    r"\([^()\s]+:\d+(?::\d+)?\)\.?)\n(?P<msg>[^\n]+)$",
    M,
)
_NOT_ON_PATH = Pattern(r"Could not locate (?P<ns>\S+?)(?:__init\.class|\.clj)\b")
_REPORTS = 6
_BODY = 20


def parse_clojure_test(text: str) -> Findings | None:
    """Recognise clojure.test's report: each FAIL or ERROR with its values, the two counts."""
    count = _COUNT.search(text)
    reports = list(_REPORT.finditer(text))
    if count is None or not reports:
        return None
    findings = Findings(tool="clojure.test", failure_type=FailureType.TEST_FAILURE)
    previous = ""
    for report in reports[:_REPORTS]:
        fact = _report_fact(text, report)
        said = (
            fact.split("; actual: ", 1)[-1].split(", raised at ", 1)[0]
            if "; actual: " in fact
            else ""
        )
        same = bool(said) and said == previous
        previous = said
        findings.facts.append(f"{report.group(0)} (the same error)" if same else fact)
    findings.tests = list(dict.fromkeys(r["test"] for r in reports))
    ran = _RAN.search(text)
    findings.summary = f"{ran['line']} {count['line']}" if ran else count["line"]
    findings.evidence = count["line"]
    findings.headline = f"The test run reported {plural(len(reports), 'failing assertion')}."
    findings.advice = (
        "Each failing assertion is quoted with what it expected and what it got (an error with "
        "the project's frame that raised it): fix the code under test so it holds; change the "
        "test only if it is wrong."
    )
    findings.steps.append(  # `clojure.test/…` would name a runner a `lein test` output lacks
        f"Run that test alone with `test-vars` on `#'{findings.tests[0]}`, after loading its "
        "namespace."
    )
    findings.confidence = 0.85
    return findings


def _report_fact(text: str, report: re.Match[str]) -> str:
    """``FAIL in (t) (f.clj:3)`` with its expected and actual lines, an error's own frame."""
    parts: list[str] = []
    frame = ""
    for line in text[report.end() + 1 :].splitlines()[:_BODY]:
        if _REPORT.match(line) or _COUNT.match(line) or line.startswith("Ran "):
            break
        field = _FIELD.match(line)
        if field is not None:
            parts.append(clip(field["line"], 200))
            continue
        found = _FRAME.match(line)
        if found is not None and not frame and not found["frame"].startswith(_LIBRARY):
            frame = found["frame"]
    fact = report.group(0) + (f": {'; '.join(parts)}" if parts else "")
    return fact + (f", raised at {frame}" if frame else "")


def parse_clojure_error(text: str) -> Findings | None:
    """Recognise a Clojure program's ``Execution error (Class) at …`` and its message."""
    error = _EXECUTION.search(text)
    if error is None:
        return None
    message = error["msg"].strip()
    missing = _NOT_ON_PATH.search(message)
    findings = Findings(
        tool="clojure",
        failure_type=FailureType.RUNTIME_ERROR,
        facts=[clip(f"{error['line']} {message}", 300)],
        evidence=error["line"],
        confidence=0.75,
    )
    if missing is not None and "test" in missing["ns"]:
        findings.failure_type = FailureType.TEST_FAILURE
        findings.category = ReflectionCategory.TOOL_MISUSE
        findings.headline = "The test namespace is not on the class path: no test ran."
        findings.advice = (
            "The runtime looked for the test namespace on the class path and did not find it: add "
            "the test folder to it (`-cp src:test`, or the project's test alias) and check "
            "that the file's path matches the namespace (dashes become underscores)."
        )
        findings.steps.append("Add the test folder to the class path, then run the tests again.")
        return findings
    findings.headline = f"The program died with {error['cls'] or 'an error'}."
    findings.advice = (
        "Read the message and the place it names: fix the code there (a missing namespace is "
        "a class path or file name that does not match the namespace)."
    )
    return findings
