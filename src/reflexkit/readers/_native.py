"""Parsers for compiled languages and their build tools.

cargo/rustc (compile errors, clippy, tests, dependencies), gcc/clang and the linker, make, and
crashes (segfaults, aborts).
"""

from __future__ import annotations

import re

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers._cxx import program_test_failures
from reflexkit.readers._findings import (
    MAX_BLOCKS,
    Findings,
    Problem,
    clip,
    dedupe,
    group_problems,
    plural,
)
from reflexkit.readers._lines import matching_lines

__all__ = [
    "parse_cargo_test",
    "parse_crash",
    "parse_gcc",
    "parse_make",
    "parse_rust_panic",
    "parse_rustc",
]

M = re.MULTILINE

# --- rustc and clippy ------------------------------------------------------------------------

_RUST_DIAG = Pattern(
    r"^(?P<sev>error|warning)(?:\[(?P<code>E\d{4})\])?: (?P<msg>.+)\n\s*--> (?P<loc>\S+:\d+:\d+)$",
    M,
)
_RUST_LINT = Pattern(
    r"#\[(?:allow|warn|deny)\((?P<lint>(?:clippy::)?[a-z_]+)\)\]|index\.html#(?P<url>[a-z_]+)"
)
_RUST_SUMMARY = Pattern(r"^(?P<sum>error: could not compile `[^`]+`.*?)\s*$", M)
_CARGO_ERROR = Pattern(r"^error: (?P<msg>.+)$", M)
_CARGO_REQUIRED_BY = Pattern(r"^(?P<line>required by package `.+)$", M)
_RUST_NOTE = Pattern(r"^(?:\s*= )?(?P<line>(?:help|note): .+)$", M)
_RUST_NOTE_NOISE = Pattern(r"for further information|#\[|on by default|implied by|--explain")
# the primary span's label: `  |     ^^^^^ no `tokenize` in `parser`` (the secondary spans use -)
_RUST_PRIMARY_LABEL = Pattern(r"^\s*\d*\s*\|[\s|]*(?:-+[\s|]+)*\^+ (?P<label>\S.*)$", M)
"""The primary span's label (``^^^ expected `usize`, found `f64```), after any secondary
spans (``-----``) printed on the same line."""
_RUST_NOTE_ITEMS = Pattern(r"(?:\n {8,}(?P<item>\S.*))+")  # a note's list: `Cell: Eq`
_CAUSED_BY = Pattern(r"^Caused by:\n\s+(?P<msg>.+)$", M)
_SPAN_LABELS = 3  # the first errors get their span's label
_WARNINGS_BESIDE = 2
# `no `tokenize` in `parser``: the module is the project's own, the item is what is missing
_OWN_MODULE_LABEL = Pattern(r"\^+ no `[^`]+` in `(?!crate`)[^`]+`$", M)
_CARGO_DEPENDENCY = Pattern(
    r"as a dependency of|no matching package|failed to select a version|failed to load source|"
    r"failed to download|registry|failed to get `"
)


def parse_rustc(text: str, command: str = "") -> Findings | None:
    """Recognise rustc/clippy diagnostics (``error[E0308]: ...`` then `` --> file:line:col``)."""
    diags = list(_RUST_DIAG.finditer(text))
    errors = [d for d in diags if d["sev"] == "error"]
    if not errors:
        return _parse_cargo_error(text, command)
    problems, lints, notes = _rust_problems(text, diags)
    clippy = any(lint.startswith("clippy::") for lint in lints)
    findings = Findings(
        tool="clippy" if clippy else "rustc",
        failure_type=FailureType.LINT_ERROR if clippy else FailureType.BUILD_ERROR,
        category=ReflectionCategory.VERIFICATION if clippy else ReflectionCategory.ROOT_CAUSE,
    )
    findings.facts = group_problems(problems, limit=6)
    summary = _RUST_SUMMARY.search(text)
    findings.summary = summary["sum"] if summary else ""
    codes = dedupe(d["code"] for d in errors if d["code"])
    findings.headline = _rustc_headline(len(errors), codes, clippy=clippy)
    if clippy:
        findings.advice = (
            "Apply what each lint's help line suggests at the location named (the lints are "
            "denied by `-D warnings`); do not add `#[allow(...)]` to silence them."
        )
    else:
        findings.details.extend(_rust_details(notes, diags))
        findings.details.extend(_lint_level(text))
        _advise_rustc(findings, text, errors, codes)
    findings.steps.append(
        "Declare the crates in Cargo.toml, then re-run the same cargo command."
        if findings.failure_type is FailureType.DEPENDENCY_ERROR
        else f"Fix {problems[0].loc} first, then re-run the same cargo command."
    )
    findings.confidence = 0.85
    return findings


def _rustc_headline(count: int, codes: list[str], *, clippy: bool) -> str:
    """Return ``The Rust compiler reported 2 errors (E0308, E0599).``."""
    return (
        f"{'cargo clippy' if clippy else 'The Rust compiler'} reported {count} "
        f"error{'s' if count != 1 else ''}" + (f" ({', '.join(codes)})." if codes else ".")
    )


def _rust_problems(
    text: str, diags: list[re.Match[str]]
) -> tuple[list[Problem], list[str], list[str]]:
    """Return the errors as problems, the lints they name, and the first error's notes."""
    problems: list[Problem] = []
    lints: list[str] = []
    notes: list[str] = []
    at_errors = [index for index, diag in enumerate(diags) if diag["sev"] == "error"]
    for index in at_errors[:MAX_BLOCKS]:  # warnings before the errors don't take their places
        diag = diags[index]
        end = diags[index + 1].start() if index + 1 < len(diags) else len(text)
        body = text[diag.end() : min(end, diag.end() + 3000)]
        notes = notes or _first_notes(body)  # the first error's: rustc's explanation of it
        lint = _lint_of(body)
        lints.extend([lint] if lint else [])
        label = f"error[{diag['code']}]" if diag["code"] else "error"
        suffix = (f" ({lint})" if lint else "") + (
            _span_label(body, diag["msg"]) if len(problems) < _SPAN_LABELS else ""
        )
        problems.append(
            Problem(
                f"{label}: {clip(diag['msg'], 140)}{suffix} at {diag['loc']}",
                f"{diag['code'] or lint}|{diag['msg']}",
                diag["loc"],
            )
        )
    return problems, lints, notes


def _lint_of(body: str) -> str:
    """Return the lint a diagnostic names (``clippy::needless_range_loop``), or ``""``."""
    found = _RUST_LINT.search(body)
    if found is None:
        return ""
    return found["lint"] or f"clippy::{found['url']}"


def _advise_rustc(
    findings: Findings, text: str, errors: list[re.Match[str]], codes: list[str]
) -> None:
    """Advice for compile errors: rustc's own explanation, or the crates to declare."""
    findings.advice = (
        "Read each error with its help/note lines: rustc usually names the missing trait "
        "impl, lifetime or type and shows the fix. Apply it at the location named"
        + (f"; `rustc --explain {codes[0]}` explains {codes[0]}" if codes else "")
        + "."
    )
    if {"E0432", "E0433"} & set(codes) and not _OWN_MODULE_LABEL.search(text):
        findings.category = ReflectionCategory.MISSING_CONTEXT
    if _all_crates_missing(text, errors):
        findings.failure_type = FailureType.DEPENDENCY_ERROR
        findings.advice = (
            "The code uses crates the manifest does not declare: add each one under "
            "[dependencies] (or [dev-dependencies] for tests) in Cargo.toml, as the help "
            "line's `cargo add` says, rather than changing the code."
        )


_UNLINKED_CRATE = Pattern(r"unlinked crate `|undeclared crate or module `|`cargo add ")


def _all_crates_missing(text: str, errors: list[re.Match[str]]) -> bool:
    """Return whether every error is an import of a crate Cargo.toml does not declare."""
    return all(
        error["code"] in {"E0432", "E0433"}
        and _UNLINKED_CRATE.search(text, error.end(), error.end() + 800) is not None
        for error in errors
    )


def _rust_details(notes: list[str], diags: list[re.Match[str]]) -> list[str]:
    """Return the first error's notes, then the first warnings printed beside the errors.

    A warning next to an error is often the same mistake (an unused import left by a rename).
    """
    warnings = [
        f"warning: {clip(d['msg'], 100)} at {d['loc']}"
        for d in diags[:MAX_BLOCKS]
        if d["sev"] == "warning"
    ]
    return [clip(note, 140) for note in notes] + warnings[:_WARNINGS_BESIDE]


_LINT_LEVEL = Pattern(
    r"^note: the lint level is defined here\n\s*--> (?P<loc>\S+)\n[ |]*\n"
    r"\s*\d+\s*\| (?P<src>[^\n]+)$",
    M,
)
"""Where warnings were made errors (``#![deny(warnings)]``): the attribute, not the code."""


def _lint_level(text: str) -> list[str]:
    """The place and source line that made the errors' lints errors, once."""
    level = _LINT_LEVEL.search(text) if "the lint level is defined here" in text else None
    if level is None:
        return []
    return [f"the lint level is defined here: {level['loc']} {clip(level['src'].strip(), 100)}"]


def _first_notes(body: str) -> list[str]:
    """Return the first two help and note lines of one diagnostic, with their lists."""
    return [
        _with_items(m, body) for m in _RUST_NOTE.finditer(body) if not _RUST_NOTE_NOISE.search(m[0])
    ][:2]


def _span_label(body: str, message: str) -> str:
    """Return `` (label)`` of the primary span (``^^^ label``) unless the message says it."""
    primary = _RUST_PRIMARY_LABEL.search(body)
    label = primary["label"].strip() if primary else ""
    return f" ({clip(label, 80)})" if label and label not in message else ""


def _with_items(note: re.Match[str], body: str) -> str:
    """Return a ``note: ...:`` line with the list rustc indents under it, joined: ``a, b``."""
    line = note["line"]
    if not line.endswith(":"):
        return line
    items = _RUST_NOTE_ITEMS.match(body, note.end())
    if items is None:
        return line
    return f"{line} " + ", ".join(part.strip() for part in items.group(0).split("\n") if part)


_CARGO_MISUSE = Pattern(
    r"^no (?:test|bin|example|bench) target named|^could not find `Cargo\.toml`|"
    r"^package ID specification `[^`]+` did not match any packages"
)
"""cargo refusing what it was asked: a target or package it does not have, no manifest."""
_CARGO_TEST = Pattern(r"\bcargo\s+(?:\+\S+\s+)?(?:test|nextest)\b")


def _cargo_misuse(message: str, *, testing: bool) -> Findings:
    """Findings for a cargo command naming a target, package or folder that is not there."""
    return Findings(
        tool="cargo",
        failure_type=FailureType.TEST_FAILURE if testing else FailureType.BUILD_ERROR,
        category=ReflectionCategory.TOOL_MISUSE,
        headline="cargo did not run: what it was asked for does not exist.",
        facts=[clip(f"error: {message}", 200)],
        advice="Nothing was compiled or tested: name a target or package the manifest has "
        "(`cargo test --test <file in tests/>`, `-p <package>`), from the folder that holds "
        "Cargo.toml; `cargo test -- <filter>` filters tests by name.",
        steps=["List the targets with `cargo test -- --list`, then run one by its name."],
        confidence=0.75,
    )


def _parse_cargo_error(text: str, command: str = "") -> Findings | None:
    """Recognise a cargo error with a ``Caused by:`` chain (manifests, dependencies)."""
    first = _CARGO_ERROR.search(text)
    if first is None or "could not compile" in first["msg"] or "test failed" in first["msg"]:
        return None
    if _CARGO_MISUSE.search(first["msg"]):
        return _cargo_misuse(first["msg"], testing=bool(_CARGO_TEST.search(command)))
    chain = [m["msg"].strip() for m in _CAUSED_BY.finditer(text)]
    if not chain and not _CARGO_DEPENDENCY.search(first["msg"]):
        return None
    dependency = bool(_CARGO_DEPENDENCY.search(first["msg"] + " ".join(chain)))
    findings = Findings(
        tool="cargo",
        failure_type=FailureType.DEPENDENCY_ERROR if dependency else FailureType.BUILD_ERROR,
        category=ReflectionCategory.MISSING_CONTEXT
        if dependency
        else ReflectionCategory.TOOL_MISUSE,
    )
    findings.facts.append(clip(f"error: {first['msg']}", 200))
    findings.details.extend(clip(c, 160) for c in chain[-2:])
    findings.details.extend(clip(m["line"], 160) for m in _CARGO_REQUIRED_BY.finditer(text))
    findings.headline = (
        "cargo could not resolve the project's dependencies." if dependency else "cargo failed."
    )
    findings.advice = (
        "Fix the dependency declaration in Cargo.toml: a path dependency must point at a folder "
        "that holds a Cargo.toml, a registry dependency must name an existing crate and version."
        if dependency
        else "Fix the manifest or command cargo names in the error, then run it again."
    )
    findings.steps.append("Check the `[dependencies]` entries in Cargo.toml against what exists.")
    findings.confidence = 0.75
    return findings


# --- cargo test ------------------------------------------------------------------------------

_DOC_TEST = r"\S+ - .+? \(line \d+\)(?: - compile(?: fail)?)?"
"""A doc-test's name: ``src/lib.rs - Stack<T>::push (line 12)``, spaces and all."""
_RUST_TEST_FAILED = Pattern(
    rf"^test (?P<name>{_DOC_TEST}|\S+) (?:- should panic )?\.\.\. FAILED$", M
)
_RUST_TEST_RESULT = Pattern(r"^(?P<sum>test result: FAILED\..*?)(?:; finished in .*)?$", M)
_RUST_PANIC = Pattern(
    r"^thread '(?P<thread>[^']+)'(?: \(\d+\))? panicked at (?P<loc>[^\s:]+:\d+:\d+):\n(?P<msg>.*)$",
    M,
)
_RUST_PANIC_OLD = Pattern(
    r"^thread '(?P<thread>[^']+)' panicked at '(?P<msg>.*)', (?P<loc>\S+:\d+:\d+)$", M
)
_RUST_LEFT_RIGHT = Pattern(r"^\s*left: (?P<left>.*)\n\s*right: (?P<right>.*)$", M)
_RUST_EXPECTED_SUBSTRING = Pattern(r"^ *expected substring: .+$", M)
"""What ``should_panic(expected = ...)`` wanted, printed under its note."""
_RUST_NO_PANIC = Pattern(
    r"^(?P<line>note: (?:test did not panic as expected|panic did not contain expected string)"
    r".*)$",
    M,
)
_RUST_RERUN = Pattern(r"^error: test failed, to rerun pass [`'](?P<target>[^`'\n]+)[`']$", M)
"""cargo names the test target (``--test test_version``, ``--lib``) that failed."""
_RUST_SECTION = Pattern(rf"^---- (?P<name>{_DOC_TEST}|\S+) stdout ----$", M)


def parse_cargo_test(text: str) -> Findings | None:
    """Recognise ``cargo test`` output: failed tests, panics with left/right, the result line."""
    result = _RUST_TEST_RESULT.search(text)
    failed = dedupe(m["name"] for m in _RUST_TEST_FAILED.finditer(text))
    if not result and not failed:
        return None
    findings = Findings(tool="cargo test", failure_type=FailureType.TEST_FAILURE)
    sections = list(_RUST_SECTION.finditer(text))
    for index, section in enumerate(sections[:MAX_BLOCKS]):
        end = sections[index + 1].start() if index + 1 < len(sections) else len(text)
        findings.facts.append(
            _rust_test_fact(section["name"], text[section.end() : min(end, section.end() + 8000)])
        )
    covered = {s["name"] for s in sections}
    findings.facts.extend(name for name in failed if name not in covered)
    findings.tests = failed or [s["name"] for s in sections]
    findings.summary = result["sum"].strip() if result else ""
    findings.headline = f"cargo test reported {plural(len(findings.tests), 'failing test')}."
    findings.advice = (
        "For a failed assert_eq, left is what the code produced and right what the test "
        "expects: fix the code at the panic location. A should_panic test that did not panic "
        "means the code must reject that input (panic or return an error) instead of succeeding."
    )
    findings.steps.extend(_rerun_steps(text, findings.tests))
    findings.confidence = 0.85
    return findings


def _rust_test_fact(name: str, body: str) -> str:
    """Return one failing test with its panic (and left/right) or its should_panic note."""
    panic = _RUST_PANIC.search(body) or _RUST_PANIC_OLD.search(body)
    no_panic = _RUST_NO_PANIC.search(body)
    if panic is None:
        return f"{name}: {no_panic['line'].strip()}" if no_panic else name
    fact = f"{name} panicked at {panic['loc']}: {clip(panic['msg'], 120)}"
    left_right = _RUST_LEFT_RIGHT.search(body)
    if left_right:
        left, right = clip(left_right["left"], 100), clip(left_right["right"], 100)
        fact += f" (left: {left}, right: {right})"
    if no_panic:  # should_panic(expected = ...) saw another panic
        fact += f"; {no_panic['line'].strip()}"
        wanted = _RUST_EXPECTED_SUBSTRING.search(body, no_panic.end())
        if wanted is not None:
            fact += f" ({clip(wanted.group(0).strip(), 120)})"
    return fact


def _rerun_steps(text: str, tests: list[str]) -> list[str]:
    """Return how to run the first failing test alone (a doc-test, or in cargo's target)."""
    steps: list[str] = []
    if tests and " (line " in tests[0]:
        item = tests[0].split(" - ", 2)[1].split(" (line ")[0]
        steps.append(f"Run the doc-tests alone: `cargo test --doc {item}`.")
    elif tests:
        rerun = _RUST_RERUN.search(text)
        target = f"{rerun['target']} " if rerun else ""
        steps.append(f"Run it alone: `cargo test {target}{tests[0]} -- --exact --nocapture`.")
    steps.append("Re-run `cargo test` to confirm all pass.")
    return steps


def parse_rust_panic(text: str) -> Findings | None:
    """Recognise a Rust program that panicked outside a test run (``cargo run``)."""
    panic = _RUST_PANIC.search(text) or _RUST_PANIC_OLD.search(text)
    if panic is None:
        return None
    findings = Findings(tool="rust program", failure_type=FailureType.RUNTIME_ERROR)
    findings.headline = f"The Rust program panicked in thread '{panic['thread']}'."
    findings.facts.append(f"panicked at {panic['loc']}: {clip(panic['msg'], 160)}")
    findings.advice = (
        f"Fix the code at {panic['loc']}: replace the panicking operation (index, unwrap, "
        "expect, arithmetic) with a checked one (`get`, `?`, `checked_*`) or make sure its "
        "precondition holds."
    )
    findings.steps.append("Re-run with `RUST_BACKTRACE=1` if the panic location is in a library.")
    findings.confidence = 0.8
    return findings


# --- gcc / clang / ld ------------------------------------------------------------------------

_C_FILE = (
    r"[^\s:][^:\n]*\.(?:c|h|cc|cpp|cxx|c\+\+|hpp|hh|hxx|h\+\+|ipp|tcc|inl|m|mm|s|S|cu|cuh)"
    r"|[^\s:][^:\n]*/include/[^:\s]+"
)
_GCC = Pattern(
    rf"^(?P<loc>(?:{_C_FILE})(?::\d+){{1,2}}): "
    r"(?P<sev>fatal error|error|warning|note): (?P<msg>.*)$",
    M,
)
_REQUIRED_HERE = Pattern(rf"^(?P<loc>(?:{_C_FILE}):\d+(?::\d+)?):   required from here$", M)
_INCLUDED_FROM = Pattern(rf"^(?:In file included|\s+) from (?P<loc>(?:{_C_FILE}):\d+)[:,]$", M)
_SYSTEM_ROOTS = ("/usr/", "/opt/", "/Library/", "/Applications/", "/nix/store/")
_SYSTEM_PARTS = (
    "/include/c++/",
    "/lib/gcc/",
    "/lib/clang/",
    ".sdk/",
    ":\\Program Files",
    ":/Program Files",
)
_MAX_ERRORS = 40
"""Errors read in detail (the rest are counted): the first ones are the ones to fix."""
_LD_UNDEFINED = Pattern(r"undefined reference to [`'](?P<sym>[^'\n]+)'")
_LD_OBJECT = Pattern(r"(?P<obj>[^\s:]+):\(\.[^)\n]*\): (?:[^\n]*: )?$")
_IMPLICIT_NAME = Pattern(r"implicit declaration of function [`'\u2018](?P<sym>\w+)")
_LD_MULTIPLE = Pattern(r"multiple definition of [`'](?P<sym>[^'\n]+)'", M)
_LLD_UNDEFINED = Pattern(
    r"^(?:ld\.lld|ld64\.lld|lld-link|ld): error: undefined symbol: (?P<sym>.+)$"
    r"(?:\n>>> referenced by (?P<ref>\S+))?",
    M,
)
_LD_OTHER = Pattern(
    r"^(?P<line>.*(?:cannot find -l\S+|Undefined symbols for architecture \S+|"
    r"symbol\(s\) not found for architecture \S+).*)$",
    M,
)
_MACOS_SYMBOL = Pattern(r'^\s+"(?P<sym>[^"]+)", referenced from:$', M)
_TEMP_OBJECT = Pattern(r"^/tmp/|^/var/folders/|\\Temp\\|^cc\w+\.o$")
_LD_SUMMARY = Pattern(
    r"^(?P<line>(?:collect2: error: ld returned \d+ exit status|"
    r"clang(?:\+\+)?: error: linker command failed with exit code \d+.*))$",
    M,
)
_LD = Pattern(
    r"undefined reference to|cannot find -l|multiple definition of|"
    r"Undefined symbols for architecture|undefined symbol: "
)


def _is_system(loc: str) -> bool:
    """Return whether a diagnostic's file is a system or toolchain header, not the project's."""
    return loc.startswith(_SYSTEM_ROOTS) or any(part in loc for part in _SYSTEM_PARTS)


def _short(loc: str) -> str:
    """Return ``bits/unique_ptr.h:1065:30`` for a long system-header location."""
    parts = loc.replace("\\", "/").split("/")
    return "/".join(parts[-2:])


def _user_site(text: str, error: re.Match[str], before: int, after: int) -> str:
    """Return where the project's code leads to an error inside a system header.

    gcc prints the instantiation chain *before* the error, ending in ``file:line:col:   required
    from here``; clang prints it *after*, as ``note: in instantiation of ... requested here``;
    an error with neither is reached through the ``In file included from`` stack.
    """
    for here in reversed(list(_REQUIRED_HERE.finditer(text, before, error.start()))):
        if not _is_system(here["loc"]):
            return here["loc"]
    for note in _GCC.finditer(text, error.end(), after):
        if note["sev"] != "note":
            break
        if "requested here" in note["msg"] and not _is_system(note["loc"]):
            return note["loc"]
    included = [m["loc"] for m in _INCLUDED_FROM.finditer(text, before, error.start())]
    return next((loc for loc in reversed(included) if not _is_system(loc)), "")


_FIRST_ERROR_CHARS = 260
"""How much of the first error's message is quoted (C++'s name types at length)."""


def _gcc_problems(text: str, diags: list[re.Match[str]]) -> list[Problem]:
    """Return the errors located in the project's own files, in output order."""
    problems: list[Problem] = []
    previous_end = 0
    for index, diag in enumerate(diags):
        if diag["sev"] not in {"error", "fatal error"}:
            continue
        if len(problems) >= _MAX_ERRORS:
            break
        following = next((d.start() for d in diags[index + 1 :] if d["sev"] != "note"), len(text))
        # the first error is the one to fix: its operand and template types are kept whole
        msg = clip(diag["msg"], _FIRST_ERROR_CHARS if not problems else 150)
        if _is_system(diag["loc"]):
            site = _user_site(text, diag, previous_end, following)
            shown = (
                f"{site}: {diag['sev']}: {msg} [in {_short(diag['loc'])}]"
                if site
                else (f"{diag['loc']}: {diag['sev']}: {msg}")
            )
            problems.append(Problem(shown, diag["msg"], site or diag["loc"]))
        else:
            problems.append(
                Problem(f"{diag['loc']}: {diag['sev']}: {msg}", diag["msg"], diag["loc"])
            )
        previous_end = diag.end()
    return problems


def _called_but_nowhere(implicit: list[re.Match[str]], text: str) -> bool:
    """Whether every undefined symbol is one the code called without any declaration."""
    declared_nowhere = {m["sym"] for d in implicit if (m := _IMPLICIT_NAME.search(d["msg"]))}
    undefined = {m["sym"] for m in _LD_UNDEFINED.finditer(text)}
    return bool(undefined) and undefined <= declared_nowhere


def _linker_facts(text: str) -> list[str]:
    """Return the linker's complaints, one per symbol (temporary object names left out)."""
    facts: list[str] = []
    for m in _LD_UNDEFINED.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        prefix = _LD_OBJECT.search(text, line_start, m.start())
        obj = prefix["obj"] if prefix else ""
        where = f" (in {obj})" if obj and not _TEMP_OBJECT.search(obj) else ""
        facts.append(f"undefined reference to `{m['sym']}'{where}")
    facts.extend(
        f"undefined symbol: {m['sym']}" + (f" (referenced by {m['ref']})" if m["ref"] else "")
        for m in _LLD_UNDEFINED.finditer(text)
    )
    facts.extend(f"multiple definition of `{m['sym']}'" for m in _LD_MULTIPLE.finditer(text))
    for m in _LD_OTHER.finditer(text):
        line = m["line"].strip()
        if line.startswith("Undefined symbols"):
            symbols = [s["sym"] for s in _MACOS_SYMBOL.finditer(text)][:4]
            line += " " + ", ".join(symbols) if symbols else ""
        facts.append(clip(line, 180))
    return dedupe(facts)


_CLANG_COUNT = Pattern(r"^(?P<line>\d+ (?:warnings? and \d+ )?errors? generated\.)$", M)
_FIX_IT = Pattern(r"did you (?:forget|mean)\b")
"""A note that names the fix (``did you forget to '#include <vector>'?``) is the tool's hint."""


def _advise_gcc(
    findings: Findings,
    diags: list[re.Match[str]],
    problems: list[Problem],
    linker: list[str],
    *,
    called_nowhere: bool,
) -> None:
    """Set the category and advice of a C/C++ build's errors and the linker's complaints."""
    missing_header = any(
        d["sev"] == "fatal error" and ("No such file" in d["msg"] or "file not found" in d["msg"])
        for d in diags
    )
    if missing_header:
        findings.category = ReflectionCategory.MISSING_CONTEXT
        findings.advice = (
            "A header cannot be found: fix the #include name or add its directory with -I (or "
            "install the library's development package)."
        )
    elif linker and (called_nowhere or not problems):
        _advise_linker(findings, linker, called_nowhere=called_nowhere)
    elif any(p.text.endswith("]") and " [in " in p.text for p in problems):
        findings.advice = (
            "The errors inside the standard library come from the project's lines named first: "
            "the type used there lacks what the template needs (an operator<, a copy, an "
            "override of a pure virtual function); add it or change the call."
        )
    else:
        findings.advice = (
            "Make declarations and definitions agree: the header's prototype, the function "
            "definition and the struct's members must match exactly what the code uses."
        )


def _advise_linker(findings: Findings, linker: list[str], *, called_nowhere: bool) -> None:
    """Advice for the linker's complaints alone (or a call to a function nothing declares)."""
    if called_nowhere:
        findings.advice = (
            "The code calls a function that no header declares (implicit declaration) and no "
            "object defines (undefined reference): the name is misspelt or the function was "
            "never written; call the existing function or write it, with its prototype."
        )
    elif all(f.startswith("multiple definition") for f in linker):
        # Nothing is missing: a header defines what it should only declare.
        findings.advice = (
            "A symbol is defined in more than one object: a header defines a variable or "
            "function that every file including it repeats. Declare it `extern` (or `static "
            "inline`) in the header and define it in exactly one .c/.cpp file."
        )
    else:
        findings.category = ReflectionCategory.MISSING_CONTEXT
        findings.advice = (
            "The linker cannot resolve the symbols: define each undefined function (with the "
            "exact signature the caller uses), compile and link the source file that defines "
            "it, or link its library (-l); a multiple definition means a header defines a "
            "variable or function that should be declared `extern`/`inline` there and defined "
            "in one .c/.cpp file."
        )


_CHECKER_RULE = Pattern(r"[^\[\s]\s+\[[A-Za-z][\w./-]*(?:,-?[\w./=-]+)*\]\s*$")
"""A rule id closing a diagnostic: a checker's (gcc names a flag, ``[-Wformat=]``), clang-tidy's
``[clang-analyzer-core.uninitialized.Assign,-warnings-as-errors]`` too."""


def parse_gcc(text: str) -> Findings | None:
    """Recognise gcc/clang diagnostics (``file:line:col: error: ...``) and linker errors.

    An error inside a system header (a libstdc++ template) is reported at the project's line
    that instantiated it (gcc's ``required from here``, clang's ``requested here``).
    """
    diags = list(_GCC.finditer(text))
    errors = [d for d in diags if d["sev"] in {"error", "fatal error"}]
    linker = _linker_facts(text) if _LD.search(text) else []
    if not errors and not linker:
        return None
    if not linker and all(_CHECKER_RULE.search(d.group(0)) for d in errors):
        return None  # a checker in gcc's format (cppcheck's `[arrayIndexOutOfBounds]`)
    problems = _gcc_problems(text, diags)
    findings = Findings(tool="gcc", failure_type=FailureType.BUILD_ERROR)
    findings.facts = group_problems(problems, limit=5)
    findings.facts.extend(linker[:4])
    implicit = _gcc_details(findings, diags)
    count = len(problems) + len(linker)
    findings.headline = f"The C/C++ build failed with {count} error{'s' if count != 1 else ''}."
    findings.summary = _gcc_summary(text, linker=bool(linker))
    _advise_gcc(
        findings,
        diags,
        problems,
        linker,
        called_nowhere=bool(linker) and _called_but_nowhere(implicit, text),
    )
    findings.steps.extend(_gcc_steps(text, problems))
    findings.confidence = 0.85
    return findings


_DECLARATION = Pattern(
    r"^\s*(?:initializing argument \d+ of|declared here|candidate(?::| function))"
)
"""A note that points at the declaration an error's call does not fit (gcc, clang)."""


def _gcc_details(findings: Findings, diags: list[re.Match[str]]) -> list[re.Match[str]]:
    """Add the first ``previous ...`` note, implicit declarations and the notes naming a fix.

    Returns the implicit-declaration warnings: a bug even as a warning (it explains an
    undefined reference or a wrong return type), quoted beside the errors.
    """
    notes = [d for d in diags if d["sev"] == "note" and "previous" in d["msg"]]
    declared = [  # the declaration an error's call or use does not fit, in the project's file
        d
        for d in diags
        if d["sev"] == "note" and _DECLARATION.search(d["msg"]) and not _is_system(d["loc"])
    ]
    findings.details.extend(
        dedupe(f"{d['loc']}: note: {clip(d['msg'], 100)}" for d in [*notes[:1], *declared[:1]])
    )
    implicit = [d for d in diags if d["sev"] == "warning" and "implicit declaration" in d["msg"]]
    findings.details.extend(f"{d['loc']}: warning: {clip(d['msg'], 120)}" for d in implicit[:2])
    findings.hints = dedupe(
        clip(d["msg"], 140) for d in diags if d["sev"] == "note" and _FIX_IT.search(d["msg"])
    )[:2]
    return implicit


def _gcc_summary(text: str, *, linker: bool) -> str:
    """Return collect2's (or clang's linker) verdict line, else clang's ``N errors generated.``."""
    ld_summary = _LD_SUMMARY.search(text) if linker else None
    if ld_summary is not None:
        return ld_summary["line"]
    count_line = _CLANG_COUNT.search(text)
    return count_line["line"] if count_line is not None else ""


def _gcc_steps(text: str, problems: list[Problem]) -> list[str]:
    """Return the steps: the first error first, or where the undefined symbol should come from."""
    steps: list[str] = []
    if problems:
        steps.append(f"Fix {problems[0].loc} first; later errors often follow from it.")
    undefined = [m["sym"] for m in _LD_UNDEFINED.finditer(text)]
    if undefined and not problems:
        steps.append(
            f"Find where `{undefined[0]}` is (or should be) defined and add that source file or "
            "library to the link command."
        )
    steps.append("Rebuild with the same command (keep -Wall) and check for new warnings.")
    return steps


# --- make ------------------------------------------------------------------------------------

_MAKE_STOP = Pattern(
    r"^(?P<line>(?:(?:g|mingw32-)?make(?:\[\d+\])?: )?(?:[^\s:]+:\d+: )?"
    r"\*\*\* (?P<msg>.+?)\.?\s+Stop\.)$",
    M,
)
_MAKE_RECIPE = Pattern(
    r"^(?P<line>(?:g|mingw32-)?make(?:\[\d+\])?: "
    r"\*\*\* \[(?P<target>[^\]]+)\] Error (?P<code>\d+))$",
    M,
)


_MAKE_NOT_REMADE = Pattern(
    r"^(?P<line>(?:g|mingw32-)?make(?:\[\d+\])?: Target '[^'\n]+' not remade because of errors\.)$",
    M,
)
"""``make -k`` kept going after a failure and says which goal it could not build."""


_NOT_FOUND_EXIT = "127"
_TEST_LOG = Pattern(r"^See (?P<log>\S+\.log)$", M)
"""Automake's test harness names the log that holds the failing tests' output."""
_MAKE_NEEDLE = Pattern(r"\*\*\* ")
"""make's marker: the lines holding it are matched whole (not a ``^`` search of every line)."""


def parse_make(text: str) -> Findings | None:
    """Recognise make's own errors (``Makefile:5: *** missing separator.  Stop.``)."""
    stops = matching_lines(text, _MAKE_NEEDLE, _MAKE_STOP, limit=1)
    stop = stops[0] if stops else None
    recipes = matching_lines(text, _MAKE_NEEDLE, _MAKE_RECIPE)
    if stop is None and not recipes:
        return None
    findings = Findings(tool="make", failure_type=FailureType.BUILD_ERROR)
    if stop:
        _read_make_stop(findings, stop)
    if recipes:
        _read_make_recipes(findings, text, recipes, stopped=stop is not None)
    findings.steps.append("Re-run `make` (add `-n` first to see the commands it would run).")
    findings.confidence = 0.8 if stop else 0.5
    return findings


def _read_make_stop(findings: Findings, stop: re.Match[str]) -> None:
    """Read make's own error (``*** missing separator.  Stop.``, no rule for a target)."""
    findings.facts.append(stop["line"].strip())
    findings.category = ReflectionCategory.TOOL_MISUSE
    msg = stop["msg"]
    findings.headline = "make stopped on an error in the Makefile or its targets."
    if "missing separator" in msg:
        findings.advice = (
            "Recipe lines in a Makefile must start with a TAB character, not spaces: replace "
            "the leading spaces on the named line with one tab (and check the lines around it)."
        )
    elif "No rule to make target" in msg:
        findings.advice = (
            "make has no rule for the named target or prerequisite: fix the file name, create "
            "the missing file, or add a rule for it."
        )
        if ", needed by " in msg:  # a prerequisite (a source file) is missing, not a goal
            findings.category = ReflectionCategory.MISSING_CONTEXT
    else:
        findings.advice = "Fix the Makefile at the line make names, then run make again."


def _read_make_recipes(
    findings: Findings, text: str, recipes: list[re.Match[str]], *, stopped: bool
) -> None:
    """A recipe failed: its ``[target] Error N`` lines and, unless make stopped, what it printed.

    A recursive make prints one line per level: the innermost names the failing command's
    target, the outermost the target that was asked for.
    """
    recipe = recipes[0]
    findings.details.extend(dedupe([recipe["line"].strip(), recipes[-1]["line"].strip()]))
    not_remade = _MAKE_NOT_REMADE.search(text)
    if not_remade:
        findings.details.append(not_remade["line"])
    if stopped:
        return
    fails, count = program_test_failures(text, recipe.start())
    if fails:
        _read_program_tests(findings, recipe, fails, count)
        log = _TEST_LOG.search(text, 0, recipe.start())
        if log is not None:
            findings.details.append(log.group(0))
            findings.steps.append(f"Read {log['log']}: it holds each failing test's own output.")
        return
    above = [ln.strip() for ln in text[: recipe.start()].splitlines()[-3:] if ln.strip()]
    findings.facts.extend(clip(line, 180) for line in above[-2:])
    findings.headline = (
        f"A recipe of target {recipe['target']} failed with exit code {recipe['code']}."
    )
    findings.advice = (
        "make only reports that a command in the recipe failed: fix the error printed "
        "by that command above this line."
    )
    if recipe["code"] == _NOT_FOUND_EXIT:  # the recipe's program is not installed
        findings.category = ReflectionCategory.MISSING_CONTEXT
        findings.advice = (
            "A program the recipe runs is not installed (exit code 127, command not "
            "found): install it or declare it as a dev dependency, or change the recipe "
            "to a tool the project has."
        )


def _read_program_tests(
    findings: Findings, recipe: re.Match[str], fails: list[str], count: str
) -> None:
    """The recipe ran a test program that printed its own failing checks: a test failure."""
    findings.failure_type = FailureType.TEST_FAILURE
    findings.evidence = count or fails[-1]
    findings.summary = count
    findings.facts = [*fails[:6], *findings.facts]
    findings.headline = (
        f"The test program run by target {recipe['target']} reported failing checks."
    )
    findings.advice = (
        "The checks quoted failed in the test program make ran: fix the code under test so "
        "each holds (the line number is the test source's), then run the same target again."
    )


# --- crashes ---------------------------------------------------------------------------------

_CRASH = Pattern(
    r"^(?P<line>.*(?:Segmentation fault|core dumped|\bAborted(?: \(core dumped\))?\s*$|Bus error|"
    r"stack smashing detected|"
    r"AddressSanitizer|double free|free\(\): invalid).*)$",
    M,
)
_CRASH_NEEDLE = Pattern(
    r"Segmentation fault|core dumped|Aborted|Bus error|stack smashing detected|"
    r"AddressSanitizer|double free|free\(\): invalid"
)
"""What a crash line holds: the lines holding it are matched whole (a ``^.*`` search of every
line cost a millisecond on 16 kB)."""
_CRASH_MARKERS = (
    "Segmentation fault",
    "core dumped",
    "Aborted",
    "Bus error",
    "stack smashing",
    "AddressSanitizer",
    "double free",
    "free(): ",
)
_CRASH_EXIT = {
    139: "SIGSEGV (segmentation fault)",
    134: "SIGABRT (abort)",
    135: "SIGBUS",
    -11: "SIGSEGV",
    -6: "SIGABRT",
}


_MAKE_CRASH = Pattern(r"(?:g|mingw32-)?make(?:\[\d+\])?: \*\*\* \[")
_RAN_PROGRAM = Pattern(r"^(?P<cmd>\.{1,2}/[\w./-]+(?: [^\n]{0,120})?)$", M)
"""A recipe line make echoed that runs a program built in the tree (``./xmltest``)."""


def _crashed_program(text: str, crash: re.Match[str]) -> str:
    """Return the last program make ran before it reported the crash (its echoed command)."""
    if not _MAKE_CRASH.search(crash["line"]):
        return ""
    ran = [m["cmd"] for m in _RAN_PROGRAM.finditer(text, 0, crash.start())]
    return ran[-1].strip() if ran else ""


def parse_crash(text: str, exit_code: int | None) -> Findings | None:
    """Recognise a native crash (segfault, abort, sanitizer report) from output or exit code."""
    signal = _CRASH_EXIT.get(exit_code) if exit_code is not None else None
    if signal is None and not any(marker in text for marker in _CRASH_MARKERS):
        return None
    lines = matching_lines(text, _CRASH_NEEDLE, _CRASH, limit=1)
    line = lines[0] if lines else None
    if line is None and signal is None:
        return None
    findings = Findings(tool="native program", failure_type=FailureType.RUNTIME_ERROR)
    if line:
        findings.facts.append(clip(line["line"], 200))
        program = _crashed_program(text, line)
        if program:
            findings.facts.append(f"crashed running {program}")
        fails, _count = program_test_failures(text, line.start())
        if fails:
            findings.details.append("failing before the crash: " + "; ".join(fails[:4]))
    if signal:
        findings.details.append(f"exit code {exit_code}: {signal}")
    findings.headline = "The program crashed."
    findings.advice = (
        "A crash means invalid memory access or a failed runtime check: rebuild with `-g "
        "-fsanitize=address,undefined` (or run under gdb/valgrind) to get the exact line, then "
        "check pointers, array bounds and buffer sizes there."
    )
    findings.steps.append(
        "Rebuild with `-g -fsanitize=address` and re-run to get the faulting line."
    )
    findings.confidence = 0.6
    return findings
