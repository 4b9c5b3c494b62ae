"""Nim: the compiler's errors, and a test program that ``nim c -r`` built and ran.

``nim c -r tests/t.nim`` compiles (``file.nim(12, 17) Error: message``), prints
``[SuccessX]`` when it built, then runs the program (``Hint: … [Exec]``). A program that dies
prints its traceback outermost first (``/src/x.nim(47) parseHook``) and ``Error: unhandled
exception: message [JsonError]``; a failed ``doAssert`` names its own place and condition;
``std/unittest`` prints ``t.nim(10, 3): Check failed: x == 2`` and ``[FAILED] name``. Then
nim says ``Error: execution of an external program failed``. A test file is one under
``tests/`` or named ``test…``/``t…``: its failures are test failures, and so is a test file
that does not compile (the runner's collection error), while the code under test that does
not compile is a build error.
"""

from __future__ import annotations

import re

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers._findings import Findings, clip, dedupe

__all__ = ["parse_nim"]

M = re.MULTILINE
_COMPILE_ERROR = Pattern(r"^(?P<loc>(?P<file>\S+\.nim)\(\d+, \d+\)) Error: (?P<msg>[^\n]*)$", M)
_BUILT = "[SuccessX]"
_UNHANDLED = Pattern(r"^(?P<line>Error: unhandled exception: [^\n]*)$", M)
_EXEC_FAILED = Pattern(r"^(?P<line>Error: execution of an external program failed: [^\n]*)$", M)
_FRAME = Pattern(r"^(?P<frame>(?P<file>\S+\.nim)\(\d+\) \S+)$", M)
_CHECK = Pattern(
    r"^ *(?P<line>\S+\.nim\(\d+, \d+\): Check failed: [^\n]*)"
    r"(?:\n +(?P<was>\S[^\n]* was [^\n]*))?$",
    M,
)
_DETAIL = Pattern(r"^ *(?P<line>(?:first type mismatch|required type|but expression)[^\n]*)$", M)
_NO_MODULE = Pattern(r"^cannot open file: (?P<name>[\w-]+)$")
_FAILED = Pattern(r"^ *\[FAILED\] (?P<name>[^\n]+)$", M)
_TEST_FILE = Pattern(r"(?:^|/)tests?/|(?:^|/)(?:test_?\w*|\w+_test)\.nim$")
_LIBRARY = Pattern(r"/lib/(?:nim/)?(?:system|pure|std|core|impure)/|/nim/lib/")


def parse_nim(text: str) -> Findings | None:
    """Recognise a Nim build's error or a program it built and ran that failed."""
    ran = _EXEC_FAILED.search(text) or (_BUILT in text and _UNHANDLED.search(text))
    if ran:
        return _run_failure(text)
    error = _COMPILE_ERROR.search(text)
    if error is None:
        return None
    in_test = _TEST_FILE.search(error["file"]) is not None
    missing = _NO_MODULE.match(error["msg"])
    if missing is not None:
        return Findings(
            tool="nim",
            failure_type=FailureType.DEPENDENCY_ERROR,
            category=ReflectionCategory.MISSING_CONTEXT,
            headline=f"Nim cannot find the module `{missing['name']}`: it is not installed.",
            facts=[clip(error.group(0), 300)],
            evidence=error.group(0),
            advice=f"`{missing['name']}` is a package the code imports and this machine does not "
            "have: install it (`nimble install`, or the project's .nimble `requires`) or fix the "
            "import's name; the code is not at fault.",
            steps=["Run `nimble install -d` (the project's dependencies), then build again."],
            confidence=0.8,
        )
    details = [d["line"] for d in _DETAIL.finditer(text, error.end(), error.end() + 2000)][:3]
    return Findings(
        tool="nim",
        failure_type=FailureType.TEST_FAILURE if in_test else FailureType.BUILD_ERROR,
        facts=[clip(error.group(0), 300)],
        details=details,
        evidence=error.group(0),
        headline="A test file did not compile: no test ran."
        if in_test
        else "The Nim compiler stopped at an error.",
        advice="Fix the error at the place the compiler names (a feature this compiler does not "
        "have, a type or a name it does not know), then build again.",
        steps=[f"Open {error['loc']} and fix what the compiler names there."],
        confidence=0.8,
    )


def _run_failure(text: str) -> Findings:
    """The program built and ran: its exception, its test line and the project frame."""
    frames = [m for m in _FRAME.finditer(text) if _LIBRARY.search(m["file"]) is None]
    test_frames = [m["frame"] for m in frames if _TEST_FILE.search(m["file"])]
    own = [m["frame"] for m in frames if not _TEST_FILE.search(m["file"])]
    checks = [m["line"] + (f"; {m['was']}" if m["was"] else "") for m in _CHECK.finditer(text)]
    failed = dedupe(m["name"] for m in _FAILED.finditer(text))
    unhandled = _UNHANDLED.search(text)
    executed = _EXEC_FAILED.search(text)
    is_test = bool(test_frames or checks or failed) or (
        executed is not None and _TEST_FILE.search(executed["line"]) is not None
    )
    findings = Findings(
        tool="nim",
        failure_type=FailureType.TEST_FAILURE if is_test else FailureType.RUNTIME_ERROR,
    )
    findings.tests = failed
    findings.facts = [clip(c, 240) for c in checks[:6]]
    if unhandled is not None:
        where = "; ".join(dedupe([*own[-1:], *test_frames[:1]]))
        findings.facts.append(clip(unhandled["line"], 240) + (f" at {where}" if where else ""))
    if executed is not None:
        findings.details.append(executed["line"])
    proof = unhandled or executed
    findings.evidence = proof.group(0) if proof is not None else ""
    findings.headline = (
        "The Nim test program built and ran, and a test failed."
        if is_test
        else "The Nim program built and ran, and died with an unhandled exception."
    )
    findings.advice = (
        "The code compiled; the test's own line and the project line that raised are quoted: "
        "fix the code under test so the check holds; change the test only if it is wrong."
    )
    if test_frames:
        findings.steps.append(f"Start at {test_frames[0]}, the test's line that failed.")
    findings.confidence = 0.8
    return findings
