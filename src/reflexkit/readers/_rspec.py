"""RSpec's report: its numbered failures, the ``Failed examples:`` list and the closing count.

RSpec prints each failing example as a numbered block under ``Failures:`` (``  1) A#m does
x``), with the failing line (``Failure/Error: …``), the values (``expected: …`` / ``got:
…``) or the error class and message, and the backtrace as ``# ./spec/x_spec.rb:7:in …``
lines; then ``N examples, M failures`` and ``rspec ./spec/x_spec.rb:7 # …`` lines to re-run
each. Pending examples are numbered too, under ``Pending:``: they are not failures. A file
that cannot be loaded (``An error occurred while loading …``) stops the run before any
example: a gem it requires that is not installed is a set-up failure, not the code's.
"""

from __future__ import annotations

import re

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers._findings import Findings, clip, dedupe, plural

__all__ = ["parse_rspec"]

M = re.MULTILINE
_SUMMARY = Pattern(
    r"^(?P<line>\d+ examples?, \d+ failures?(?:, \d+ errors?)?(?:, \d+ pending)?"
    r"(?:, \d+ errors? occurred outside of examples)?)$",
    M,
)
_EXAMPLE = Pattern(r"^ {2}(?P<number>\d+)\) (?P<name>\S.*)$")
_LOAD_ERROR = Pattern(r"^(?P<line>An error occurred while loading \S+?\.?)(?: - |$)", M)
_FRAME = Pattern(r"^ *(?P<loc># (?:\./)?[\w./-]+:\d+)(?::in |$)")
_RERUN = Pattern(r"^(?P<line>(?P<tool>rspec|crystal spec) \S+)(?: # .*)?$", M)
_LISTED = Pattern(r"^(?:rspec|crystal spec) \S+ # (?P<name>\S.*)$", M)
_CRYSTAL_COUNT = Pattern(r", \d+ errors?, \d+ pending$")
"""Crystal's count always names its errors before pending; RSpec's never does."""
_CRYSTAL_FRAME = Pattern(r"^ *# (?:\./)?[\w./-]+\.cr:\d+", M)
_VALUE = Pattern(r"^ *(?P<line>(?:expected|got|Expected|Actual|Diff)\b[^\n]*)$")
_ERROR_CLASS = Pattern(r"^ *(?P<cls>(?:[A-Z]\w*::)*[A-Z]\w*(?:Error|Exception|Interrupt)):$")
_MISSING_GEM = Pattern(r"cannot load such file -- (?P<name>[^\s./][^\s]*)")
_OWN_LINES = ("Failure/Error:", "(files took ", "An error occurred while loading ")
"""Lines only RSpec prints (with a count another runner could print too)."""
_EXAMPLES = 6
_BODY_LINES = 30


def parse_rspec(text: str) -> Findings | None:
    """Recognise an RSpec run: its closing count with failing examples or a load error."""
    summary = _SUMMARY.search(text)
    listed = _LISTED.search(text)
    if summary is None and listed is None:  # a long run's count may be cut: its list is not
        return None
    if listed is None and not any(proof in text for proof in _OWN_LINES):
        return None  # hspec, ExUnit and others print `N examples, M failures` too
    loading = _LOAD_ERROR.search(text)
    failures = _failures(text)
    if not failures and loading is None:
        return None
    rerun = _RERUN.search(text, summary.end() if summary is not None else 0)
    tool = "crystal spec" if _is_crystal(text, summary, rerun) else "RSpec"
    findings = Findings(tool=tool, failure_type=FailureType.TEST_FAILURE)
    findings.summary = summary["line"] if summary is not None else ""
    findings.evidence = findings.summary or (listed.group(0) if listed is not None else "")
    if loading is not None and not failures:
        return _load_failure(text, loading, findings)
    previous = ""
    for name, body in failures:
        findings.tests.append(name)
        if len(findings.facts) >= _EXAMPLES:
            continue
        said, where = _what_failed(body)
        same = bool(said) and said == previous
        previous = said
        fact = name + (" (the same error)" if same else f": {said}" if said else "")
        findings.facts.append(fact + (f" ({where})" if where and not same else ""))
    count = len(failures)
    more = count - len(findings.facts)
    if more > 0:
        findings.facts.append(f"(+{more} more failing)")
    findings.headline = f"{tool} reported {plural(count, 'failing example')}."
    findings.advice = (
        "Each failing example is quoted with its expected and actual values (or the error it "
        "raised) and the spec line: fix the code under test so it holds; change the spec only "
        "if its expectation is wrong."
    )
    if rerun is not None:
        findings.steps.append(f"Re-run the first failing example alone: `{rerun['line']}`.")
    findings.confidence = 0.85
    return findings


def _is_crystal(text: str, summary: re.Match[str] | None, rerun: re.Match[str] | None) -> bool:
    """Crystal's spec runner, by its re-run list, its count line or its ``.cr`` frames."""
    if rerun is not None:
        return rerun["tool"] != "rspec"
    if summary is not None and _CRYSTAL_COUNT.search(summary["line"]):
        return True
    return _CRYSTAL_FRAME.search(text) is not None


def _failures(text: str) -> list[tuple[str, list[str]]]:
    """The numbered examples that failed, with the lines of each (not the pending ones).

    Those under ``Failures:`` failed; a long run's head and tail may have cut that header
    off, and then a numbered block is a failure by its own ``Failure/Error:`` line. Without
    any, the ``Failed examples:`` list at the end names them.
    """
    found: list[tuple[str, list[str], bool]] = []
    body: list[str] | None = None
    section = ""
    for line in text.splitlines():
        example = _EXAMPLE.match(line)
        if example is not None and section != "Pending":
            body = []
            found.append((example["name"], body, section == "Failures"))
        elif line.startswith(("Finished in ", "Failed examples:", "Pending:", "Failures:")):
            body = None
            section = line.split(":", 1)[0] if line.endswith(":") or "Pending" in line else ""
        elif body is not None and len(body) < _BODY_LINES:
            body.append(line)
    failed = [
        (name, lines)
        for name, lines, listed in found
        if listed or any("Failure/Error:" in ln for ln in lines)
    ]
    return failed or [(m["name"], []) for m in _LISTED.finditer(text)]


def _what_failed(body: list[str]) -> tuple[str, str]:
    """The values or the error of one failing example, and its place (a frame of its own)."""
    values = [v["line"].strip() for v in map(_VALUE.match, body) if v is not None]
    said = ""
    for index, line in enumerate(body):
        error = _ERROR_CLASS.match(line)
        if error is not None and index + 1 < len(body):
            said = f"{error['cls']}: {body[index + 1].strip()}"
            break
    if values and not said:
        said = "; ".join(dedupe(values)[:3])
    if not said:
        said = next((ln.strip() for ln in body if ln.strip().startswith("Failure/Error:")), "")
    frames = [f["loc"] for f in map(_FRAME.match, body) if f is not None]
    where = frames[0] if frames else ""
    return clip(said, 240), where


def _load_failure(text: str, loading: re.Match[str], findings: Findings) -> Findings:
    """A file that could not be loaded: a missing gem is set-up, anything else the code's."""
    lines = text[loading.end() :].splitlines()[:_BODY_LINES]
    said, where = _what_failed(lines)
    findings.facts.append(
        loading["line"] + (f" {said}" if said else "") + (f" ({where})" if where else "")
    )
    gem = _MISSING_GEM.search(said)
    if gem is not None and said.startswith("LoadError"):
        findings.failure_type = FailureType.DEPENDENCY_ERROR
        findings.category = ReflectionCategory.MISSING_CONTEXT
        findings.headline = f"The specs could not load: the gem `{gem['name']}` is missing."
        findings.advice = (
            f"No example ran: a file the specs load requires `{gem['name']}`, which is not "
            "installed. Install the project's gems (`bundle install`) or add the gem to the "
            "Gemfile's test group; the code under test is not at fault."
        )
        findings.steps.append("Run `bundle install`, then run the specs again.")
    else:
        findings.headline = "A spec file could not be loaded: no example ran."
        findings.advice = (
            "Loading the specs raised before any example ran: fix the error at the place "
            "quoted (a syntax error, a constant or file that is not there), then re-run."
        )
    findings.confidence = 0.8
    return findings
