"""Erlang: rebar3's compile errors and EUnit's failures (under rebar3, or printed by EUnit).

rebar3 prints ``===> Compiling src/x.erl failed`` and the compiler's ``src/x.erl:12:5:
message`` lines (warnings say ``Warning:``). ``rebar3 eunit`` numbers each failure under
``Failures:`` (``  1) mod:-name_test_/0-fun-3-/0:1170: description``), with ``Failure/Error:``
and the values (``expected: …`` / ``got: …``) or the error term and its stack as tuples
(``{mod,fun,arity,[{file,…},{line,N}]}``), then ``N tests, M failures``. EUnit alone prints
``mod: name_test...*failed*``, ``**error:{assertEqual,[…]}`` and ``Failed: 1.  Skipped: 0.
Passed: 3.``. A source file that does not compile is a build error; a test module that does
not (under ``test/``) is the runner's collection error, a test failure.
"""

from __future__ import annotations

import re

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType
from reflexkit.readers._findings import Findings, clip, dedupe, plural

__all__ = ["parse_eunit", "parse_rebar3_compile"]

M = re.MULTILINE
_COMPILING_FAILED = Pattern(r"^===> (?P<line>Compiling (?P<file>\S+) failed)$", M)
_DIAG = Pattern(r"^(?P<line>(?P<file>\S+\.[eh]rl):\d+(?::\d+)?: (?!Warning:)[^\n]+)$", M)
_EXAMPLE = Pattern(r"^ {2}(?P<number>\d+)\) (?P<name>\S[^\n]*)$", M)
_COUNT = Pattern(r"^(?P<line>\d+ tests?, \d+ failures?(?:, \d+ skipped)?(?:, \d+ cancelled)?)$", M)
_VALUE = Pattern(r"^ *(?P<line>(?:expected|got): [^\n]*)$")
_FRAME = Pattern(r"\{(?P<mod>[a-z]\w*),'?[\w\-/]+'?,\d+,")
_FAILED = Pattern(r"^(?P<name>\S[^\n]*?)\.\.\.\*failed\*$", M)
_EUNIT_COUNT = Pattern(r"^ *(?P<line>Failed: \d+\.\s+Skipped: \d+\.\s+Passed: \d+\.)$", M)
_LIBRARY = ("eunit", "proc_lib", "erl_eval", "lists", "gen_server", "timer", "rebar")
_TESTS = 6
_BODY = 30


def parse_rebar3_compile(text: str) -> Findings | None:
    """Recognise rebar3's ``Compiling x failed`` with the compiler's errors under it."""
    failed = _COMPILING_FAILED.search(text)
    if failed is None:
        return None
    errors = [d["line"] for d in _DIAG.finditer(text, failed.end())][:6]
    in_test = failed["file"].startswith("test/") or "/test/" in failed["file"]
    return Findings(
        tool="rebar3",
        failure_type=FailureType.TEST_FAILURE if in_test else FailureType.BUILD_ERROR,
        headline=f"The build could not compile {failed['file']}: no test ran.",
        facts=[clip(line, 240) for line in errors] or [failed["line"]],
        details=[failed["line"]],
        evidence=failed.group(0),
        advice="Fix the first compiler error at the place it names (an unbound variable, a "
        "missing function or a syntax error), then build again; warnings are not the cause.",
        steps=[f"Open {errors[0].split(': ', 1)[0]} and fix the error there."] if errors else [],
        confidence=0.85,
    )


def parse_eunit(text: str) -> Findings | None:
    """Recognise EUnit's failures, as rebar3 numbers them or as EUnit prints them alone."""
    count = _COUNT.search(text)
    alone = _EUNIT_COUNT.search(text)
    if count is not None and "Failure/Error:" in text:  # rebar3's; ExUnit counts the same way
        examples = list(_EXAMPLE.finditer(text))
        facts = [_example_fact(text, example) for example in examples[:_TESTS]]
        tests = [example["name"] for example in examples]
    elif alone is not None and count is None:
        failed = list(_FAILED.finditer(text))
        tests = [f["name"] for f in failed]
        facts = [_failed_fact(text, f) for f in failed[:_TESTS]]
    else:
        return None
    if not facts:
        return None
    findings = Findings(tool="EUnit", failure_type=FailureType.TEST_FAILURE)
    findings.tests = dedupe(tests)
    findings.facts = facts
    proof = count or alone
    findings.summary = proof["line"] if proof is not None else ""
    findings.evidence = findings.summary
    findings.headline = f"EUnit reported {plural(len(tests), 'failing test')}."
    findings.advice = (
        "Each failing test is quoted with what it expected and what it got (or the error "
        "term and the project function that raised it): fix the code under test so it holds; "
        "change the test only if it is wrong."
    )
    findings.confidence = 0.8
    return findings


def _failed_fact(text: str, failed: re.Match[str]) -> str:
    """EUnit's ``name...*failed*`` with the test's place and its error term, joined."""
    lines = text[failed.end() + 1 :].splitlines()[:_BODY]
    place = next((ln for ln in lines if ln.startswith("in function ")), "")
    term: list[str] = []
    for line in lines:
        if line.startswith("**") or term:
            if not line.strip() or line.strip().startswith("output:"):
                break
            term.append(line.strip())
    said = clip(" ".join(term), 300)
    return failed["name"] + (f" {place}" if place else "") + (f": {said}" if said else "")


def _example_fact(text: str, example: re.Match[str]) -> str:
    """A numbered failure with its values, or its error term and first project frame."""
    parts: list[str] = []
    frame = ""
    for line in text[example.end() + 1 :].splitlines()[:_BODY]:
        stripped = line.strip()
        if _EXAMPLE.match(line) or _COUNT.match(line) or stripped.startswith("Finished in"):
            break
        value = _VALUE.match(line)
        if stripped.startswith("Failure/Error:"):
            parts.append(clip(stripped, 200))
        elif value is not None:
            parts.append(clip(value["line"], 200))
        found = _FRAME.search(line)
        if found is not None and not frame and not found["mod"].startswith(_LIBRARY):
            frame = found.group(0)
    fact = example["name"] + (f": {'; '.join(parts[:3])}" if parts else "")
    return fact + (f" raised in {frame}" if frame else "")
