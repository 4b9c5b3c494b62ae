"""pip's and other Python installers' errors: packages that do not resolve, build failures."""

from __future__ import annotations

import re

from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers._findings import (
    Findings,
    clip,
    dedupe,
)
from reflexkit.readers._pattern import Pattern

__all__ = ["parse_pip"]

M = re.MULTILINE


_PIP_ERROR = Pattern(r"^(?P<line>ERROR: (?P<msg>.+))$", M)
_PIP_HINT = Pattern(r"^(?:Hint|hint|note): (?P<msg>.+)$", M)
_PIP_ERROR_CODE = Pattern(r"^ *(?P<line>error: [a-z]+(?:-[a-z]+)+) *$", M)
"""pip's named errors (``error: subprocess-exited-with-error``, ``metadata-generation-failed``)."""
_BUILD_EXCEPTION = Pattern(
    r"^[ \t]+(?P<e>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception): [^\n]+)$", M
)
"""The exception a package's build script raised, inside pip's indented subprocess output."""
_BUILD_ERROR_LINE = Pattern(r"^[ \t]+(?P<e>error: (?![a-z]+(?:-[a-z]+)+\s*$)[^\n]+)$", M)
"""A build backend's own ``error: message`` inside pip's indented subprocess output
(setuptools' ``error: Multiple top-level packages discovered ...``), not pip's named errors."""
_PIP_CRASH = "\nERROR: Exception:\n"
"""pip's own crash: ``ERROR: Exception:``, its traceback, then the exception line."""
_CRASH_EXCEPTION = Pattern(
    r"^(?P<exc>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)(?::[^\n]*)?)$", M
)
_PARSE_ERROR = Pattern(r"DecodeError|ParseError|Invalid\w*(?:Requirement|Version|Pyproject)")
_LOCAL_PROJECT = Pattern(
    r"\binstall\b.*?(?:\s-e\s*|\s--editable[\s=]|\s)(?:\.|\./\S*)(?:\[\S*\])?(?:\s|$)"
)
"""``pip install -e .``, ``pip install .[dev]``: the project being built is the user's own."""
_BUILD_COMPILER_ERROR = Pattern(r"^[ \t]+(?P<e>[^\s:]+:\d+(?::\d+)?: (?:fatal )?error: [^\n]+)$", M)
"""A compiler's error inside the build output of a package with C extensions."""
# the resolver's reasons, indented under `The conflict is caused by:`
_CONFLICT_CAUSES = Pattern(r"^The conflict is caused by:\n(?P<lines>(?:[ \t]+\S.*\n?)+)", M)
_FAILED_TO_BUILD = Pattern(r"^(?P<line>Failed to build \S.*)$", M)
_HASH_LINE = Pattern(r"^[ \t]+(?P<req>\S+ --hash=sha\d+:[0-9a-f]{32,})\s*$", M)
"""The requirement lines with their hashes pip prints for ``--require-hashes`` to copy."""
_BACKEND_ADVICE = Pattern(
    r"^[ \t]+(?P<a>(?:Alternatively,? |Make sure |Try |Please |Consider |Set |Use |Install |"
    r"You (?:can|may|need|should|must) )[^\n]+)$",
    M,
)
"""What a build backend advises inside pip's indented subprocess output (setuptools-scm's
``Alternatively, set the version in the environment with SETUPTOOLS_SCM_PRETEND_VERSION``)."""
_PIP_BOILERPLATE = Pattern(
    r"^(?:See above for (?:output|details)|This (?:error originates|is an issue))"
)
"""pip's own notes on every build failure: they say nothing of this one."""
_PIP_NOT_FOUND = Pattern(
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


_MAX_CAUSES = 4


def _conflict_causes(text: str) -> list[str]:
    """Return the resolver's reasons printed under ``The conflict is caused by:``."""
    causes = _CONFLICT_CAUSES.search(text)
    lines = causes["lines"].splitlines()[:_MAX_CAUSES] if causes else []
    return [clip(line.strip(), 160) for line in lines]


def _crash(text: str) -> re.Match[str] | None:
    """Return the exception line of pip's own traceback, after ``ERROR: Exception:``."""
    start = ("\n" + text).find(_PIP_CRASH)
    return _CRASH_EXCEPTION.search(text, start + len(_PIP_CRASH) - 1) if start >= 0 else None


def _error_lines(
    text: str, errors: list[str], codes: list[str]
) -> tuple[list[str], re.Match[str] | None, list[str]]:
    """Return the lines that say what failed, pip's own crash and the build backend's error."""
    built = [m["e"].strip() for m in _BUILD_EXCEPTION.finditer(text)] if codes else []
    compiled = [m["e"].strip() for m in _BUILD_COMPILER_ERROR.finditer(text)] if codes else []
    if compiled:  # the build's own first error is the cause; pip's lines say where it stopped
        errors = [
            *compiled[:1],
            *codes,
            *(m["line"] for m in _FAILED_TO_BUILD.finditer(text)),
            *errors,
        ]
    crash = _crash(text)
    own: list[str] = []
    if crash:  # pip itself raised: the exception says what it could not read
        errors = [crash["exc"].strip(), *errors]
    elif codes and not built and not compiled:
        own = [m["e"].strip() for m in _BUILD_ERROR_LINE.finditer(text)]
        errors = [*own[:1], *codes, *errors] if own else errors
    return errors or _fallback_lines(text, built, codes), crash, own


def _fallback_lines(text: str, built: list[str], codes: list[str]) -> list[str]:
    """Lines to quote when pip printed no ``ERROR:``: the build's exception, else any error."""
    return (
        built[-1:] + codes
        or [line.strip() for line in text.splitlines() if "error" in line.lower()][:3]
    )


def _advise(
    findings: Findings,
    text: str,
    errors: list[str],
    codes: list[str],
    crash: re.Match[str] | None,
) -> None:
    """Set the category, headline and advice that fit pip's errors."""
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
    elif _HASH_LINE.search(text):
        findings.category = ReflectionCategory.ROOT_CAUSE
        findings.advice = (
            "In --require-hashes mode every requirement needs its hash: add the lines pip "
            "printed (name==version --hash=...) to the requirements file, never drop the mode."
        )
    elif "ResolutionImpossible" in text or "conflict" in joined.lower():
        findings.category = ReflectionCategory.ROOT_CAUSE
        findings.advice = (
            "The pinned versions conflict with each other: relax or align the pins that the "
            "resolver names, rather than installing packages one by one."
        )
        findings.details.extend(_conflict_causes(text))
    elif codes:
        findings.headline = "pip could not build a package."
        findings.advice = (
            "The package's own build step failed (the error inside the subprocess output, "
            "not pip): install or declare what it needs (a build dependency belongs in "
            "`[build-system] requires`) or fix its setup script, then install again."
        )
    elif crash and _PARSE_ERROR.search(crash["exc"]):
        findings.category = ReflectionCategory.ROOT_CAUSE
        findings.headline = "pip could not read the project's metadata."
        findings.advice = (
            "A file pip reads does not parse (the exception names it and the line): fix the "
            "syntax of pyproject.toml or the requirement it points at, then install again."
        )
    else:
        findings.advice = "Fix the requirement pip names in the error, then run the install again."


def parse_pip(text: str, command: str) -> Findings | None:
    """Recognise pip's ``ERROR: ...`` lines (bad requirements, missing versions, conflicts)."""
    if "pip" not in command and not any(marker in text for marker in _PIP_MARKERS):
        return None
    errors = [m["line"].strip() for m in _PIP_ERROR.finditer(text)]
    codes = dedupe(m["line"] for m in _PIP_ERROR_CODE.finditer(text))
    if not errors and not codes and not ("pip" in command and "error:" in text):
        return None
    errors, crash, own = _error_lines(text, errors, codes)
    findings = Findings(
        tool="pip",
        failure_type=FailureType.DEPENDENCY_ERROR,
        category=ReflectionCategory.MISSING_CONTEXT,
    )
    findings.facts = [clip(e, 200) for e in dedupe(errors)[:4]]
    findings.hints = _pip_hints(text)
    findings.headline = "pip could not install the requirements."
    _advise(findings, text, errors, codes, crash)
    if own and _LOCAL_PROJECT.search(command):
        _advise_own_build(findings)
    findings.steps.append(f"Re-run `{command or 'pip install ...'}` after editing the requirement.")
    findings.confidence = 0.8
    return findings


def _pip_hints(text: str) -> list[str]:
    """Return the hash lines to add, a build backend's own advice, then pip's hints."""
    hints = [
        clip(m["msg"].strip(), 160)
        for m in _PIP_HINT.finditer(text)
        if not _PIP_BOILERPLATE.match(m["msg"].strip())
    ][:3]
    hashes = [m["req"] for m in _HASH_LINE.finditer(text)]
    advice = [clip(m["a"].strip(), 110) for m in _BACKEND_ADVICE.finditer(text)][:2]
    return [*hashes[:2], *advice, *hints][:3]


def _advise_own_build(findings: Findings) -> None:
    """The build backend refused the project itself: its packaging config is wrong.

    (A build dependency that is missing raises instead, and stays missing context.)
    """
    findings.category = ReflectionCategory.ROOT_CAUSE
    findings.advice = (
        "The project's own build failed (the error inside the subprocess output): fix its "
        "packaging configuration in pyproject.toml/setup.py (package discovery, metadata, "
        "build requirements) as the error says, then install again."
    )
