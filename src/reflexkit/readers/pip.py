"""pip's and other Python installers' errors: packages that do not resolve, build failures."""

from __future__ import annotations

import re

from reflexkit._regex import lazy_regex
from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers.findings import (
    Findings,
    clip,
    dedupe,
)

__all__ = ["parse_pip"]

M = re.MULTILINE


_PIP_ERROR = lazy_regex(r"^(?P<line>ERROR: (?P<msg>.+))$", M)
_PIP_HINT = lazy_regex(r"^(?:Hint|hint|note): (?P<msg>.+)$", M)
_PIP_ERROR_CODE = lazy_regex(r"^ *(?P<line>error: [a-z]+(?:-[a-z]+)+) *$", M)
"""pip's named errors (``error: subprocess-exited-with-error``, ``metadata-generation-failed``)."""
_BUILD_EXCEPTION = lazy_regex(
    r"^\s+(?P<e>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception): [^\n]+)$", M
)
"""The exception a package's build script raised, inside pip's indented subprocess output."""
_BUILD_COMPILER_ERROR = lazy_regex(r"^\s+(?P<e>[^\s:]+:\d+(?::\d+)?: (?:fatal )?error: [^\n]+)$", M)
"""A compiler's error inside the build output of a package with C extensions."""
# the resolver's reasons, indented under `The conflict is caused by:`
_CONFLICT_CAUSES = lazy_regex(r"^The conflict is caused by:\n(?P<lines>(?:[ \t]+\S.*\n?)+)", M)
_FAILED_TO_BUILD = lazy_regex(r"^(?P<line>Failed to build \S.*)$", M)
_HASH_LINE = lazy_regex(r"^\s+(?P<req>\S+ --hash=sha\d+:[0-9a-f]{32,})\s*$", M)
"""The requirement lines with their hashes pip prints for ``--require-hashes`` to copy."""
_PIP_NOT_FOUND = lazy_regex(
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


def parse_pip(text: str, command: str) -> Findings | None:
    """Recognise pip's ``ERROR: ...`` lines (bad requirements, missing versions, conflicts)."""
    if "pip" not in command and not any(marker in text for marker in _PIP_MARKERS):
        return None
    errors = [m["line"].strip() for m in _PIP_ERROR.finditer(text)]
    codes = dedupe(m["line"] for m in _PIP_ERROR_CODE.finditer(text))
    if not errors and not codes and not ("pip" in command and "error:" in text):
        return None
    built = [m["e"].strip() for m in _BUILD_EXCEPTION.finditer(text)] if codes else []
    compiled = [m["e"].strip() for m in _BUILD_COMPILER_ERROR.finditer(text)] if codes else []
    if compiled:  # the build's own first error is the cause; pip's lines say where it stopped
        errors = [
            *compiled[:1],
            *codes,
            *(m["line"] for m in _FAILED_TO_BUILD.finditer(text)),
            *errors,
        ]
    if not errors:
        errors = (
            built[-1:] + codes
            or [line.strip() for line in text.splitlines() if "error" in line.lower()][:3]
        )
    findings = Findings(
        tool="pip",
        failure_type=FailureType.DEPENDENCY_ERROR,
        category=ReflectionCategory.MISSING_CONTEXT,
    )
    findings.facts = [clip(e, 200) for e in dedupe(errors)[:4]]
    findings.hints = [clip(m["msg"].strip(), 160) for m in _PIP_HINT.finditer(text)][:3]
    hashes = [m["req"] for m in _HASH_LINE.finditer(text)]
    findings.hints = [*hashes[:2], *findings.hints][:3]
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
    elif hashes:
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
    else:
        findings.advice = "Fix the requirement pip names in the error, then run the install again."
    findings.steps.append(f"Re-run `{command or 'pip install ...'}` after editing the requirement.")
    findings.confidence = 0.8
    return findings
