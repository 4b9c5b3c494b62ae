"""Installers' errors: pip's, and a project's dependencies not installed or out of reach.

pip: packages that do not resolve, build failures. Any ecosystem: a runner that finds the
project's dependencies not installed, a runner newer than the suite, a registry it cannot reach.
"""

from __future__ import annotations

import re

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers._findings import (
    Findings,
    clip,
    dedupe,
)

__all__ = ["parse_dependency_setup", "parse_pip"]

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


# --- a project's dependencies not installed, or their registry out of reach -------------------

_NOT_INSTALLED = Pattern(
    r"^(?P<line>[^\n]*(?:Could not find Hex, which is needed to build dependency \S+"
    r"|Unchecked dependencies for environment \S+"
    r"|the dependency is not available, run \"mix deps\.get\""
    r"|vendor/autoload\.php\"?\.?(?: *$|\)?: [Ff]ailed to open stream)"
    r"|Could not find gem '[^'\n]+' in (?:locally installed gems|any of the gem sources)"
    r"|Bundler::GemNotFound"
    r"|Could not find '[\w-]+' \([^)\n]*\) among \d+ total gem)[^\n]*)$",
    M,
)
"""A runner that finds the project's dependencies not installed: mix without Hex or
``deps.get``, PHPUnit without composer's ``vendor/autoload.php``, bundler's missing gems."""
_RUNNER_TOO_NEW = Pattern(
    r"^(?P<line>[^\n]*must be compatible with PHPUnit\\Framework\\TestCase::\w+\(\)[^\n]*)$", M
)
"""A suite written for an older PHPUnit, run by a newer one: its ``setUp()`` lacks ``: void``."""
_UNREACHABLE = Pattern(
    r"^(?P<line>[^\n]*(?:getaddrinfo(?: for [\w.-]+)? failed|getaddrinfo (?:ENOTFOUND|EAI_AGAIN)"
    r"|Could not resolve host(?:name)?\b|Temporary failure in name resolution"
    r"|Name or service not known|Network is unreachable)[^\n]*)$",
    M,
)
_INSTALL_COMMAND = Pattern(
    r"\b(?:composer (?:install|update|require)|(?:npm|pnpm|bun) (?:install|i|ci|add)\b"
    r"|(?:yarn|bundle)(?:\s+(?:install|add)\b|\s*(?:$|&&|;|\|))"
    r"|gem install|mix deps\.get|luarocks install|cpanm?\b"
    r"|dotnet restore|(?:dart|flutter) pub get|swift package resolve|opam install|cabal update)"
)
_FRAME = Pattern(r"^\s*(?:from|at) |:in [`']")
"""A stack frame under the line: no hint of the tool's."""
_FETCHING = Pattern(r"https?://\S+|ssh://\S+|\bgit\b.*\bls-remote\b|could not be downloaded")
"""A line above the network error that names what was being fetched."""


def parse_dependency_setup(text: str, command: str) -> Findings | None:
    """Recognise a check that cannot run for its project's dependencies, in any ecosystem.

    Not installed (``mix test`` without Hex, ``phpunit`` without ``vendor/``, a gem bundler
    cannot find), a runner newer than the suite (PHPUnit's ``TestCase::setUp(): void``), or
    an installer whose registry or git host cannot be reached: a ``dependency_error`` about
    the set-up, not the code.
    """
    too_new = _RUNNER_TOO_NEW.search(text)
    found = too_new or _NOT_INSTALLED.search(text)
    if found is not None:
        below = [
            line.strip()
            for line in text[found.end() :].splitlines()[1:4]
            if line.strip() and not _FRAME.search(line)
        ]
        return _setup_findings(  # the line and what the tool says under it (`mix local.hex`)
            [clip(line, 220) for line in [*_raised_by_the_tool(text, found), *below[:1]]],
            "The installed test runner is newer than the one the suite is written for."
            if too_new
            else "The project's dependencies are not installed where the check ran.",
            "Run the suite with the runner version the project pins (the one its lock file "
            "installs into the project), not a newer one installed system-wide."
            if too_new
            else "Install the project's dependencies with its own package manager, as the "
            "lines quoted say, before running the check; the code under test is not at fault.",
            ReflectionCategory.TOOL_MISUSE if too_new else ReflectionCategory.MISSING_CONTEXT,
        )
    if not _INSTALL_COMMAND.search(command):
        return None
    down = _UNREACHABLE.search(text)
    if down is None:
        return None
    above = text[max(0, down.start() - 1500) : down.start()].splitlines()[-6:]
    fetching = [line.strip() for line in above if _FETCHING.search(line)][-1:]  # the nearest
    return _setup_findings(
        dedupe([*(clip(f, 220) for f in fetching), clip(down["line"].strip(), 220)]),
        "The installer could not reach the registry or host it fetches from.",
        "The network to the package registry is not there: install from what is already "
        "on the machine (a lock file's cache, vendored packages, an offline mirror) or drop "
        "the dependency that needs the host; retrying will not help.",
        ReflectionCategory.MISSING_CONTEXT,
    )


_RAISED_AT = Pattern(r"^\S+:\d+:in [`'][^'\n]*': ")
"""A Ruby frame before the message it raised (bundler's ``resolver.rb:271:in `x': …``)."""


def _raised_by_the_tool(text: str, found: re.Match[str]) -> list[str]:
    """The line found; raised inside the tool, its message alone and the tool's line above."""
    line = found["line"].strip()
    frame = _RAISED_AT.match(line)
    if frame is None:
        return [line]
    above = text[: found.start()].rstrip("\n").rpartition("\n")[2].strip()
    return [*([above] if above and not _FRAME.search(above) else []), line[frame.end() :]]


def _setup_findings(
    facts: list[str], headline: str, advice: str, category: ReflectionCategory
) -> Findings:
    findings = Findings(
        tool="dependencies",
        failure_type=FailureType.DEPENDENCY_ERROR,
        category=category,
        facts=facts,
        headline=headline,
        advice=advice,
    )
    findings.evidence = facts[-1]
    findings.steps.append("Set up the project's dependencies, then run the same check again.")
    findings.confidence = 0.75
    return findings
