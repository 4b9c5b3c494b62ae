"""Readers for Go's toolchain: ``go test``, ``go build``/``go vet`` diagnostics and panics.

Go prints the same ``file.go:line:col: message`` shape for compiler errors, module errors and
``go vet`` findings; the message (and the command) tells them apart. ``go test`` adds
``--- FAIL: TestName`` lines with the test's own log lines (``file_test.go:12: got 3, want
4``), ``FAIL<TAB>package`` lines, and panics with a goroutine dump whose first frame in the
project's own code (not the runtime's, the standard library's or a module cache's) is the place
to fix.
"""

from __future__ import annotations

import json
import re
import shlex

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType, ReflectionCategory
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
    "parse_go_command",
    "parse_go_diagnostics",
    "parse_go_panic",
    "parse_go_test",
    "user_frame",
]

M = re.MULTILINE

# --- diagnostics: go build, go vet, module errors --------------------------------------------

_DIAG = Pattern(
    r"^(?:vet: )?(?P<loc>(?:[A-Za-z]:)?[^\s:][^:\n]*\.go:\d+(?::\d+)?): (?P<msg>\S.*)$", M
)
_PKG_NEEDLE = Pattern(r"# ")
_GO_GET_NEEDLE = Pattern(r"go (?:get|mod|work) ")
_PKG_HEADER = Pattern(r"^# (?P<pkg>\S+)(?: \[[^\]]+\])?$", M)
_GO_GET = Pattern(r"^\s+(?P<hint>go (?:get|mod tidy|mod download|work use)\b.*)$", M)
_NO_MODULE = Pattern(
    r"no required module provides package (?P<pkg>\S+?);|"
    r"missing go\.sum entry for module providing package (?P<sum>\S+)|"
    r"cannot find module providing package (?P<cache>\S+)|"
    r"module (?P<mod>\S+) provides package \S+ and is replaced but not required|"
    r"cannot find package \"(?P<gopath>[^\"\n]+)\" in any of:|"
    r"(?P<fetch>[\w.~/-]+@v[\w.+-]+): (?=Get \"|dial tcp|reading |verifying |invalid version|"
    r"unknown revision|unrecognized import path)",
)
"""An import no module provides, or whose module cannot be downloaded (``mod@v1.2.3: Get …``)."""
_DETAILS = Pattern(r"\n((?:\t[^\n]*(?:\n|$))+)")
"""The tab-indented lines under a diagnostic (``\thave (…)``, ``\twant (…)``)."""
_DETAIL_LINES = 4
_DETAILED = 100
"""Diagnostics read in detail; the first ones are the ones to fix (the reflection shows six)."""
_CLASSIFIED = 60
"""The kind of a run (build, vet, modules) is read from its first diagnostics."""
_VET_COMMAND = Pattern(r"\bgo\s+vet\b|\bstaticcheck\b|\bgolangci-lint\b")
_GO_TEST_COMMAND = Pattern(r"\bgo\s+test\b")
_TOP_PACKAGE = Pattern(r"[^./]*")
_TO_ADD = Pattern(r"; to add(?: it)?:$")
_NOT_IN_STD = Pattern(r"package (?P<pkg>\S+) is not in (?:GOROOT|std)")
_TOO_MANY = Pattern(r"^\S+\.go:\d+:\d+: too many errors$", M)
_NEWER_GO = Pattern(r"^note: module requires Go (?P<want>\S+)$", M)
"""An older Go than go.mod's ``go`` line: newer builtins and packages are ``undefined``."""
_FILES_GIVEN = Pattern(r"\S+\.go(?:\s|$)")
_FILES_PACKAGE = "command-line-arguments"
"""The package go names when it is given .go files instead of a package."""
_STATICCHECK = Pattern(r"\((?:SA|S|ST|QF)\d{4}\)$|\(U1000\)$")
_VET_MESSAGES = Pattern(
    r"passes lock by value|copies lock|call has possible (?:Printf )?formatting directive|"
    r"format %\S* has arg|format %\S* reads arg|wrong number of args for format|"
    r"redundant (?:and|or):|suspect (?:and|or):|self-assignment of|unreachable code|"
    r"result of \S+ call not used|composite literal uses unkeyed fields|struct field tag|"
    r"possible misuse of|loop variable \S+ captured by func literal|"
    r"should have signature|comparison of function \S+ (?:==|!=) nil|"
    r"the cancel function (?:returned by|is not used)|possible nil pointer dereference|"
    r"arg \S+ in printf call|Println call has possible|Errorf format|Sprintf format|"
    r"misuse of unbuffered os\.Signal channel|unusedresult|call of \S+ copies lock value|"
    r"assignment copies lock value|range var \S+ copies lock"
)


def parse_go_diagnostics(text: str, command: str) -> Findings | None:
    """Recognise Go's ``file.go:line:col: message`` diagnostics (compiler, vet, modules).

    The kind follows the messages: a package no module provides is a ``dependency_error``;
    ``go vet``'s (and staticcheck's) findings are a ``lint_error``; the rest ``build_error``.
    """
    diags = [m for m in _DIAG.finditer(text) if not _TOO_MANY.match(m.group(0))]
    if not diags:
        return None
    messages = [d["msg"][:300] for d in diags[:_CLASSIFIED]]
    missing = [m for m in (_NO_MODULE.search(msg) for msg in messages) if m]
    problems = [
        Problem(f"{d['loc']}: {clip(_with_details(d, text), 240)}", d["msg"], d["loc"])
        for d in diags[:_DETAILED]
    ]
    packages = dedupe(m["pkg"] for m in matching_lines(text, _PKG_NEEDLE, _PKG_HEADER))
    hints = dedupe(m["hint"].strip() for m in matching_lines(text, _GO_GET_NEEDLE, _GO_GET))
    if missing:
        findings = _module_findings(missing, problems, hints)
    elif _vet_run(text, command, messages):
        findings = _vet_findings(problems, packages)
    else:
        findings = _build_findings(problems, packages, command)
    findings.facts = group_problems(problems, limit=6)
    _finish_diagnostics(findings, text, hints, packages)
    return findings


def _with_details(diag: re.Match[str], text: str) -> str:
    """Return a diagnostic's message with the tab-indented lines go prints under it.

    ``have (…)`` / ``want (…)`` under a wrong return count or argument list, and a type's
    missing or mistyped method under ``cannot use``, are the error's own details.
    """
    msg = _TO_ADD.sub("", diag["msg"])
    details = _DETAILS.match(text, diag.end())
    if details is None or _NO_MODULE.search(msg):  # a package's search paths: no detail
        return msg
    lines = [line.strip() for line in details[1].splitlines()[:_DETAIL_LINES]]
    return f"{msg.rstrip(':')}: {'; '.join(lines)}"


def _finish_diagnostics(
    findings: Findings, text: str, hints: list[str], packages: list[str]
) -> None:
    """Add a go.mod asking for a newer Go, Go's own hints and the packages named."""
    newer = _NEWER_GO.search(text) if findings.failure_type is FailureType.BUILD_ERROR else None
    if newer:
        _read_newer_go(newer, findings)
    findings.hints = hints[:3]
    if packages and findings.failure_type is not FailureType.DEPENDENCY_ERROR:
        findings.details.append("package " + ", ".join(packages[:4]))
    findings.confidence = 0.85


def _vet_run(text: str, command: str, messages: list[str]) -> bool:
    """Return whether the diagnostics are go vet's (its messages, under its command or alone)."""
    vet_found = [msg for msg in messages if _VET_MESSAGES.search(msg) or _STATICCHECK.search(msg)]
    is_vet = _is_vet(command) and not text.lstrip().startswith("vet: ")
    return bool(vet_found) and (is_vet or len(vet_found) == len(messages))


def _vet_findings(problems: list[Problem], packages: list[str]) -> Findings:
    """Findings for go vet's (or staticcheck's) findings: likely bugs the compiler accepts."""
    findings = Findings(
        tool="go vet",
        failure_type=FailureType.LINT_ERROR,
        category=ReflectionCategory.VERIFICATION,
        headline=f"go vet reported {_count(problems, 'finding')}"
        + (f" in {packages[0]}." if len(packages) == 1 else "."),
        advice="Each finding is a likely bug the compiler accepts: fix the code at each "
        "location (the printf verb, the copied lock, the duplicated condition) rather than "
        "silencing the analyzer.",
    )
    findings.steps.append(f"Start at {problems[0].loc}; re-run `go vet ./...` after fixing.")
    return findings


def _is_vet(command: str) -> bool:
    """Return whether the command runs ``go vet`` (or staticcheck, which prints the same)."""
    return bool(_VET_COMMAND.search(command))


def _count(problems: list[Problem], noun: str) -> str:
    """Return ``"3 errors"`` for the problems."""
    return f"{len(problems)} {noun}{'' if len(problems) == 1 else 's'}"


def _module_findings(
    missing: list[re.Match[str]], problems: list[Problem], hints: list[str]
) -> Findings:
    """Findings for imports that no module in go.mod provides."""
    packages = dedupe(
        m["pkg"] or m["sum"] or m["cache"] or m["mod"] or m["gopath"] or m["fetch"] or ""
        for m in missing
    )
    sums_only = all(m["sum"] for m in missing)
    findings = Findings(
        tool="go",
        failure_type=FailureType.DEPENDENCY_ERROR,
        category=ReflectionCategory.MISSING_CONTEXT,
        headline=f"Go cannot find the module for {', '.join(packages[:4])}.",
    )
    if all(m["gopath"] for m in missing):
        findings.category = ReflectionCategory.TOOL_MISUSE
        findings.advice = (
            "Go ran in GOPATH mode (no go.mod, or GO111MODULE=off) and looked for the imports "
            "under GOROOT and GOPATH only: run it in module mode (`go mod init <import path>` at "
            "the repository root, then `go mod tidy`) rather than copying packages into GOPATH."
        )
    elif all(m["fetch"] for m in missing):
        findings.headline = f"Go could not download {', '.join(packages[:4])}."
        findings.advice = (
            "go.mod requires the module but it could not be downloaded (no network, or the "
            "proxy refused it), so nothing was compiled: fetch it where the proxy is reachable "
            "(`go mod download`) or vendor it (`go mod vendor`); the code is not at fault."
        )
        findings.steps.append("Check GOPROXY and the network, then run `go mod download`.")
    elif sums_only:
        findings.advice = (
            "go.mod requires the module but go.sum has no checksum for it: run `go mod tidy` "
            "(or the `go get` Go prints) and commit go.sum with go.mod."
        )
    else:
        findings.advice = (
            "The imported packages are not required in go.mod: add each module with "
            "`go get <module>` (or `go mod tidy`), or fix the import path if it is a typo or "
            "one of the project's own packages."
        )
    findings.steps.extend(f"Run `{hint}`." for hint in hints[:2])
    if not hints and not findings.steps:
        findings.steps.append("Run `go mod tidy`, then build again.")
    if problems:
        findings.steps.append(f"Check the import at {problems[0].loc}.")
    return findings


def _build_findings(problems: list[Problem], packages: list[str], command: str) -> Findings:
    """Findings for compiler errors."""
    tool = "go test" if _GO_TEST_COMMAND.search(command) else "go build"
    findings = Findings(
        tool=tool,
        failure_type=FailureType.BUILD_ERROR,
        headline=f"The Go compiler reported {_count(problems, 'error')}"
        + (f" in {packages[0]}." if len(packages) == 1 else "."),
    )
    not_std = [m for m in (_NOT_IN_STD.search(p.key[:300]) for p in problems) if m]
    if _files_alone(problems, packages, command):
        findings.category = ReflectionCategory.TOOL_MISUSE
        findings.advice = (
            "Given .go files, go compiles those files alone as package command-line-arguments: "
            "the rest of the package is left out, so its names are `undefined`. Name the "
            "package instead (`go test -run TestName .` or `./pkg/...`)."
        )
        findings.steps.append("Re-run on the package (`.`), not on its files.")
        return findings
    if not_std:
        findings.category = ReflectionCategory.MISSING_CONTEXT
        findings.advice = (
            f"{not_std[0]['pkg']!r} is neither a standard-library package nor under the module "
            "path: import the project's own packages with the module path from go.mod as "
            "prefix, and add third-party modules with `go get`."
        )
    else:
        findings.advice = (
            "Fix each error at its location: Go refuses unused imports and variables, and "
            "needs exact types (convert explicitly); an `undefined:` name is a typo or a "
            "missing declaration."
        )
    findings.steps.append(f"Fix {problems[0].loc} first, then re-run `{command or 'go build'}`.")
    return findings


def _files_alone(problems: list[Problem], packages: list[str], command: str) -> bool:
    """Return whether ``go test x_test.go`` compiled a test file without its package."""
    return (
        _FILES_PACKAGE in packages
        and bool(_GO_TEST_COMMAND.search(command) and _FILES_GIVEN.search(command))
        and any(p.key.startswith("undefined: ") for p in problems)
    )


def _read_newer_go(note: re.Match[str], findings: Findings) -> None:
    """The module asks for a newer Go than the one that ran: its errors follow from that."""
    findings.facts.insert(0, note.group(0))
    findings.category = ReflectionCategory.MISSING_CONTEXT
    findings.advice = (
        f"go.mod asks for Go {note['want']} and an older go compiled it: the `undefined` names "
        f"are likely builtins or packages newer Go provides. Run the tests with Go "
        f"{note['want']} or later (check `go version`) rather than rewriting the code."
    )
    findings.steps[:] = [f"Check `go version`: go.mod needs Go {note['want']} or later."]


# --- the go command refusing its arguments -----------------------------------------------------

_GO_RUNS = Pattern(r"(?:^|[\s;&|(])go\s+(?P<sub>test|build|vet|run|install)\b")
_GO_ARGS_ERROR = Pattern(
    r"^(?P<line>(?:go: )?(?:pattern \S+: .+|stat \S+: directory not found|no Go files in \S+|"
    r"go\.mod file not found in current directory or any parent directory.*|"
    r"cannot find main module.*|directory \S+ is outside (?:main module|module root).*|"
    r"warning: \S+ matched no packages))$",
    M,
)
"""What go prints when the packages it was given do not exist (a misspelt or wrong path), or
when it runs outside any module: nothing was compiled or tested."""


def parse_go_command(text: str, command: str) -> Findings | None:
    """Recognise the go command refusing the packages it was given (no test or build ran)."""
    runs = _GO_RUNS.search(command)
    found = _GO_ARGS_ERROR.search(text) if runs else None
    if runs is None or found is None:
        return None
    testing = runs["sub"] == "test"
    findings = Findings(
        tool="go test" if testing else "go",
        failure_type=FailureType.TEST_FAILURE if testing else FailureType.BUILD_ERROR,
        category=ReflectionCategory.TOOL_MISUSE,
        headline=f"go {runs['sub']} found no package to work on at the path it was given.",
        facts=[clip(found["line"], 200)],
        advice="Nothing was compiled or run: the package path is misspelt or not in this module. "
        "Run it from the folder that holds go.mod and name packages as `./...`, `.` or `./pkg` "
        "(check them with `go list ./...`).",
        steps=["List the packages with `go list ./...`, then run the same command on one."],
        confidence=0.75,
    )
    if "go.mod file not found" in found["line"] or "main module" in found["line"]:
        findings.advice = (
            "go ran outside the module: run it in the folder that holds go.mod (or a folder "
            "below it); nothing was compiled or run."
        )
    return findings


# --- panics and their goroutine dumps --------------------------------------------------------

_PANIC = Pattern(
    r"^(?P<line>(?:panic: |fatal error: )(?P<msg>.*?))(?: \[recovered\])?$"
    r"(?:\n\s*panic: .*)?(?:\n\[signal (?P<signal>[^\]]*)\])?",
    M,
)
_PANIC_NEEDLE = Pattern(r"panic: |fatal error: ")
_RACE_NEEDLE = Pattern(r"WARNING: DATA RACE")
_RACE = Pattern(r"^WARNING: DATA RACE\n(?P<access>\S[^\n]*?)(?: at 0x[0-9a-f]+)? by [^\n]*:$", M)
_RACE_ADVICE = (
    "Several goroutines read and write the same variable without synchronisation: protect it "
    "with a sync.Mutex, use a channel to hand it over, or give each goroutine its own copy "
    "and combine the results after wg.Wait()."
)
_FRAME_LOC = Pattern(r"\n(?:\t| {6})(?P<loc>\S+\.go:\d+)(?: \+0x[0-9a-f]+)?$", M)
"""The location line of a frame; the line before it names the function."""
_ARGS = Pattern(r"\([^()]*\)$| in goroutine \d+$")
_CREATED_BY = Pattern(r"^created by ")
_NOT_OURS_DIR = Pattern(r"/pkg/mod/|/vendor/|\\pkg\\mod\\")
"""Third-party code: the module cache and vendored modules (the standard library is known by
its package names, so a project under ``$GOPATH/src`` still counts as the project's own)."""
_STD_TOP = frozenset(
    {
        *("archive", "bufio", "builtin", "bytes", "cmp", "compress", "container", "context"),
        *("crypto", "database", "debug", "embed", "encoding", "errors", "expvar", "flag", "fmt"),
        *("go", "hash", "html", "image", "index", "internal", "io", "iter", "log", "maps"),
        *("math", "mime", "net", "os", "path", "plugin", "reflect", "regexp", "runtime"),
        *("slices", "sort", "strconv", "strings", "structs", "sync", "syscall", "testing"),
        *("text", "time", "unicode", "unique", "unsafe", "weak"),
    }
)


def _is_std_function(func: str) -> bool:
    """Return whether *func* (``regexp.MustCompile``, ``testing.tRunner``) is the runtime's."""
    name = func.removeprefix("created by ").strip()
    if name.startswith("panic"):
        return True
    top = _TOP_PACKAGE.match(name)
    return top is not None and top.group(0) in _STD_TOP


def user_frame(dump: str) -> str:
    """Return the first frame location (``/src/app/cart.go:39``) in the project's own code.

    Frames of the runtime, the standard library (``regexp.MustCompile``) and of modules in the
    module cache (``/go/pkg/mod/``) are skipped; an empty string when there is none.
    """
    frames = _user_frames(dump, first_only=True)
    return frames[0][1] if frames else ""


def _user_frames(dump: str, *, first_only: bool = False) -> list[tuple[str, str]]:
    """Return ``(function, location)`` of the frames in the project's own code.

    A frame is two lines, ``pkg.Func(args)`` then a tab and ``/path/file.go:12 +0x1d``; the
    location lines are found first (one linear search), the function is the line above.
    """
    frames: list[tuple[str, str]] = []
    for frame in _FRAME_LOC.finditer(dump):
        loc = frame["loc"]
        func = _ARGS.sub("", dump[dump.rfind("\n", 0, frame.start()) + 1 : frame.start()].strip())
        if not func or _CREATED_BY.match(func) or loc.startswith("_testmain.go"):
            continue
        if not _NOT_OURS_DIR.search(loc) and not _is_std_function(func):
            frames.append((func, loc))
            if first_only:
                break
    return frames


def races(text: str) -> list[str]:
    """Return one fact per data race the race detector reported at a distinct project line."""
    facts: dict[str, str] = {}
    for race in matching_lines(text, _RACE_NEEDLE, _RACE):
        frames = _user_frames(text[race.start() : race.start() + 3000].split("\n=====", 1)[0])
        where = frames[0][1] if frames else ""
        facts.setdefault(
            where, f"WARNING: DATA RACE ({race['access']})" + (f" at {where}" if where else "")
        )
    return list(facts.values())[:3]


def parse_go_panic(text: str) -> Findings | None:
    """Recognise a Go program that panicked or died (``panic:``/``fatal error:`` + goroutines)."""
    panics = matching_lines(text, _PANIC_NEEDLE, _PANIC, limit=1)
    panic = panics[0] if panics else None
    if panic is None and "WARNING: DATA RACE" in text:
        return _race_findings(text)
    if panic is None or text.find("\ngoroutine ", panic.end() - 1) < 0:
        return None
    dump = text[panic.end() : panic.end() + 12_000]
    where = user_frame(dump)
    msg = panic["msg"]
    findings = Findings(tool="go program", failure_type=FailureType.RUNTIME_ERROR)
    findings.headline = (
        "The Go program panicked."
        if panic["line"].startswith("panic")
        else "The Go runtime stopped the program with a fatal error."
    )
    findings.facts.append(clip(panic["line"], 220) + (f" at {where}" if where else ""))
    if panic["signal"]:
        findings.details.append(f"[signal {clip(panic['signal'], 80)}]")
    findings.advice = _panic_advice(msg, where)
    if where:
        findings.steps.append(f"Open {where} and fix the statement there.")
    findings.steps.append("Re-run the program with the same arguments to confirm.")
    if "no such file or directory" in msg or "cannot find the file" in msg:
        findings.category = ReflectionCategory.MISSING_CONTEXT
    findings.confidence = 0.85 if where else 0.7
    return findings


def _race_findings(text: str) -> Findings | None:
    """Findings for a program the race detector stopped (``-race``, exit code 66)."""
    facts = races(text)
    if not facts:
        return None
    return Findings(
        tool="go program",
        failure_type=FailureType.RUNTIME_ERROR,
        headline="The race detector found goroutines using the same memory without a lock.",
        facts=facts,
        advice=_RACE_ADVICE,
        steps=["Guard the shared variable at the named line, then re-run with -race."],
        confidence=0.8,
    )


def _panic_advice(msg: str, where: str) -> str:
    """Return advice for one panic message."""
    at = where or "the first frame in the project's code"
    if "nil pointer dereference" in msg or "nil map" in msg:
        return (
            f"A nil pointer or map is used at {at}: check the value exists (the `ok` of a map "
            "lookup, the error of the call that returned it) before using it."
        )
    if "index out of range" in msg or "slice bounds out of range" in msg:
        return f"An index is outside the slice at {at}: check the length before indexing."
    if "deadlock" in msg:
        return (
            "Every goroutine is blocked: an unbuffered channel send has no receiver (or a "
            "WaitGroup/lock is never released). Receive in another goroutine, buffer the "
            "channel, or close it when done."
        )
    if "concurrent map" in msg:
        return "Several goroutines use one map at once: guard it with a sync.Mutex."
    return (
        f"Fix the code at {at} so the condition that panics cannot occur: return an error "
        "instead of panicking, and check inputs (files, arguments, patterns) first."
    )


# --- go test ---------------------------------------------------------------------------------

_RESULT = Pattern(r"^(?P<indent>\s*)--- (?P<res>FAIL|PASS|SKIP): (?P<name>\S+) \(", M)
_RUN = Pattern(r"^=== (?:RUN|CONT|NAME|PAUSE) +(?P<name>\S+)$", M)
_LOG = Pattern(
    r"^(?P<indent> +)(?P<loc>[\w.-]+\.go:\d+): (?P<msg>.*)(?P<more>(?:\n(?P=indent)    .*)*)$", M
)
_PKG_FAIL = Pattern(r"^(?P<line>FAIL\t(?P<pkg>\S+)(?:\t| )(?P<rest>.*))$", M)
_PKG_OK = Pattern(r"^ok  \t\S+", M)
_TIMED_OUT = Pattern(r"^panic: test timed out after (?P<after>\S+)$", M)
_RUNNING = Pattern(r"^running tests:\n(?P<list>(?:\t\S+ \([^)]*\)\n?)+)", M)
_TEST_FUNC = Pattern(r"\.(?P<name>(?:Test|Example|Fuzz|Benchmark)\w*)(?:\.func\d+)*$")
_BUILD_FAILED = "[build failed]"
_LOG_LINES = 2
"""A failing test's log lines quoted (the rest are counted)."""
_GOROUTINE = Pattern(r"^goroutine \d+ \[[^\]\n]*\]:$", M)
_BLOCKED_FRAMES = 3
"""The project's frames quoted above a waiting test's own (where its goroutine is blocked)."""
_WAITING_FACTS = 3
"""At most this many facts for a timed-out run: the panic and where tests were waiting."""


def from_test_json(text: str) -> str:
    """Return the plain output inside ``go test -json`` events (other lines are kept)."""
    out: list[str] = []
    for line in text.splitlines():
        if not line.startswith('{"'):
            out.append(line + "\n")
            continue
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser
            out.append(line + "\n")
            continue
        if isinstance(event, dict) and isinstance(event.get("Output"), str):
            out.append(event["Output"])
    return "".join(out)


_GTS_FAIL = Pattern(r"^=== FAIL: (?P<pkg>\S+) (?P<name>\S*) ?\((?P<dur>[^)\n]*)\)$", M)
"""gotestsum's header of a failed test (its ``short`` format), its output below it."""
_GTS_DONE = Pattern(r"^(?P<line>DONE \d+ tests?(?:, \d+ \w+)* in [\d.]+s)$", M)
_GTS_NEXT = Pattern(r"^(?:=== |DONE \d)", M)


def _gotestsum(text: str, command: str) -> Findings | None:
    """Findings for gotestsum's ``=== FAIL: pkg TestX (0.00s)`` blocks and ``DONE`` line."""
    headers = list(_GTS_FAIL.finditer(text)) if "=== FAIL: " in text else []
    done = _GTS_DONE.search(text) if headers else None
    if not headers or done is None:
        return None
    findings = Findings(tool="go test", failure_type=FailureType.TEST_FAILURE)
    names = [h["name"] for h in headers]
    for header in headers[:MAX_BLOCKS]:
        name = header["name"] or header["pkg"]
        end = _GTS_NEXT.search(text, header.end())
        block = text[header.end() : end.start() if end else len(text)]
        panic = _PANIC.search(block)
        logs = [
            f"{m['loc']}: " + " ".join(filter(None, (m["msg"].strip(), _log_more(m["more"]))))
            for m in _LOG.finditer(block)
        ]
        if not block.strip() and any(other.startswith(f"{name}/") for other in names):
            continue  # a parent whose subtests failed says nothing of its own
        findings.tests.append(name)
        facts = _panic_fact(panic["line"], _user_frames(block[panic.end() :])) if panic else ""
        fact = _failed_test_fact(name, facts, logs)  # quoted as gotestsum prints the test
        findings.facts.append(f"=== FAIL: {header['pkg']} {fact.removeprefix('--- FAIL: ')}")
    findings.summary = findings.evidence = done["line"]
    packages = dedupe(h["pkg"] for h in headers if h["pkg"] != ".")
    _advise_failed_tests(findings, packages)
    findings.headline = f"The Go tests reported {plural(len(findings.tests), 'failing test')}."
    if findings.tests:
        pattern = "/".join(f"^{re.escape(part)}$" for part in findings.tests[0].split("/"))
        target = packages[0] if packages else "./..."
        findings.steps.append(f"Run it alone: `gotestsum -- -run {shlex.quote(pattern)} {target}`.")
    findings.steps.append(f"Re-run `{command or 'gotestsum'}` to confirm all pass.")
    findings.confidence = 0.85
    return findings


def parse_go_test(text: str, command: str) -> Findings | None:
    """Recognise ``go test`` output, with ``-v`` or without, or ``-json``: failed tests, panics."""
    if '"Action":"' in text and text.lstrip().startswith('{"'):
        text = from_test_json(text)
    summarised = _gotestsum(text, command)
    if summarised is not None:
        return summarised
    results = list(_RESULT.finditer(text))
    failed_pkgs = list(_PKG_FAIL.finditer(text))
    timed_out = _TIMED_OUT.search(text) if "panic: test timed out" in text else None
    if not _says_failed(results, failed_pkgs, timed_out):
        return None
    compiled = _compile_failure(text, command, failed_pkgs)
    if compiled is not None:
        return compiled
    findings = Findings(tool="go test", failure_type=FailureType.TEST_FAILURE)
    if timed_out:
        _read_timeout(text, timed_out, findings)
    _read_failures(text, results, findings)
    raced = "WARNING: DATA RACE" in text
    if raced:
        findings.facts[:0] = races(text)
    if not findings.facts:
        _read_package_exit(text, failed_pkgs, findings)
    packages = dedupe(p["pkg"] for p in failed_pkgs)
    findings.summary = "; ".join(p["line"].strip() for p in failed_pkgs[:3])
    if not timed_out:
        _advise_failed_tests(findings, packages)
    if raced:
        findings.advice = _RACE_ADVICE
    findings.steps.extend(_go_test_steps(findings.tests, packages, command))
    findings.confidence = 0.85 if findings.facts else 0.55
    return findings


def _says_failed(
    results: list[re.Match[str]], failed_pkgs: list[re.Match[str]], timed_out: re.Match[str] | None
) -> bool:
    """Return whether go test's own verdicts say something failed."""
    return any(r["res"] == "FAIL" for r in results) or bool(failed_pkgs) or timed_out is not None


def _advise_failed_tests(findings: Findings, packages: list[str]) -> None:
    """Headline and advice for tests that failed (not stopped by -timeout)."""
    count = len(findings.tests)
    findings.headline = f"go test reported {count} failing test{'s' if count != 1 else ''}" + (
        f" in {', '.join(packages[:3])}." if packages else "."
    )
    findings.advice = (
        "Each log line gives the test file line and got/want: fix the code under test so it "
        "returns what the test wants (or fix the test if its expectation is wrong); a panic "
        "names the line in the code that crashed."
    )


def _go_test_steps(tests: list[str], packages: list[str], command: str) -> list[str]:
    """Return the steps: the first failing (sub)test alone in its package, then the command."""
    steps: list[str] = []
    if tests:
        pattern = "/".join(f"^{re.escape(part)}$" for part in tests[0].split("/"))
        target = packages[0] if packages else "./..."
        steps.append(f"Run it alone: `go test -run {shlex.quote(pattern)} {target}`.")
    steps.append(f"Re-run `{command or 'go test ./...'}` to confirm all pass.")
    return steps


def _compile_failure(text: str, command: str, failed_pkgs: list[re.Match[str]]) -> Findings | None:
    """Findings for ``FAIL pkg [build failed]``: the compiler's (or go.mod's) errors."""
    if not any(_BUILD_FAILED in p["rest"] or "[setup failed]" in p["rest"] for p in failed_pkgs):
        return None
    compiled = parse_go_diagnostics(text, command)
    if compiled is None:
        return None
    if compiled.failure_type is FailureType.BUILD_ERROR:
        compiled.tool = "go test"
        compiled.headline = compiled.headline.replace(
            "The Go compiler", "go test could not compile the tests:"
        ).replace(": reported", ":")
    elif compiled.tool == "go vet":  # go test runs vet first: its findings stop the test build
        compiled.tool = "go test"
        compiled.failure_type = FailureType.BUILD_ERROR
        compiled.category = ReflectionCategory.ROOT_CAUSE
        compiled.headline = compiled.headline.replace(
            "go vet reported", "go test's vet checks stopped the test build with"
        )
    compiled.details.extend(p["line"].strip() for p in failed_pkgs[:2])
    return compiled


def _read_failures(text: str, results: list[re.Match[str]], findings: Findings) -> None:
    """Add each failing test with its log lines (``-v`` prints them before ``--- FAIL``)."""
    logs = _logs_by_test(text, results)
    failed = dedupe(m["name"] for m in results if m["res"] == "FAIL")
    panics = _panics_by_test(text, results)
    for name in failed:
        lines = logs.get(name, [])
        has_failing_child = any(other.startswith(name + "/") for other in failed)
        if has_failing_child and not lines and name not in panics:
            continue
        findings.tests.append(name)
        if not lines and name.startswith("Example"):
            lines = _example_mismatch(text, name)
        if len(findings.facts) < MAX_BLOCKS:
            findings.facts.append(_failed_test_fact(name, panics.get(name, ""), lines))
    if not findings.tests:
        findings.tests = failed


_EXAMPLE_OUTPUT = Pattern(
    r"^got:\n(?P<got>(?:.*\n)*?)want:\n(?P<want>(?:.*\n)*?)(?=FAIL|---|===|ok |$)", M
)


def _example_mismatch(text: str, name: str) -> list[str]:
    """Return an Example's first line that differs: ``got: X`` and ``want: Y``, as printed."""
    start = text.find(f"--- FAIL: {name} ")
    found = _EXAMPLE_OUTPUT.search(text, start, start + 8000) if start >= 0 else None
    if found is None:
        return []
    got, want = found["got"].splitlines(), found["want"].splitlines()
    for index in range(max(len(got), len(want))):
        have = got[index] if index < len(got) else ""
        wanted = want[index] if index < len(want) else ""
        if have != wanted:
            return [f"got: {clip(have, 120)}", f"want: {clip(wanted, 120)}"]
    return []


_TESTIFY_LABEL = Pattern(r"^(?P<label>Error Trace|Error|Test|Messages):\s+(?P<value>.*)$")
"""testify's labelled lines: the trace and the test repeat what go test shows; the error's
text, its expected/actual lines and the test's message are kept."""
_MORE_LINES = 6


def _log_more(more: str) -> str:
    """Return a log message's continuation lines joined (testify's labels read as its text)."""
    out: list[str] = []
    testify = "Error Trace:" in more
    for raw in more.splitlines():
        line = raw.strip()
        label = _TESTIFY_LABEL.match(line) if line and testify else None
        if label is None:
            if testify and line == "Diff:":  # the diff repeats the expected and actual lines
                break
            if line:
                out.append(line)
        elif label["label"] == "Messages":
            out.append(f"Messages: {label['value'].strip()}")
        elif label["label"] == "Error":
            out.append(label["value"].strip())
        if len(out) >= _MORE_LINES:
            break
    return " ".join(out)


def _logs_by_test(text: str, results: list[re.Match[str]]) -> dict[str, list[str]]:
    """Map each test to its log lines: a log line belongs to the last test run or reported."""
    logs: dict[str, list[str]] = {}
    current = ""
    events = sorted(
        [(m.start(), "run", m) for m in _RUN.finditer(text)]
        + [(m.start(), "result", m) for m in results]
        + [(m.start(), "log", m) for m in _LOG.finditer(text)],
        key=lambda event: event[0],
    )
    for _start, kind, match in events:
        if kind != "log":
            current = match["name"]
        elif current:
            message = f"{match['msg'].strip()} {_log_more(match['more'])}".strip()
            logs.setdefault(current, []).append(f"{match['loc']}: {message}")
    return logs


def _failed_test_fact(name: str, panic: str, lines: list[str]) -> str:
    """Return ``--- FAIL: TestX: panic ...`` or ``--- FAIL: TestX: log lines`` (as go prints)."""
    verdict = f"--- FAIL: {name}"  # quoted as go test prints it
    if panic:
        return f"{verdict}: {panic}"
    if not lines:
        return verdict
    shown = "; ".join(_clip_keeping_want(line, 160) for line in lines[:_LOG_LINES])
    more = f" (+{len(lines) - _LOG_LINES} more)" if len(lines) > _LOG_LINES else ""
    return f"{verdict}: {shown}{more}"


def _clip_keeping_want(line: str, limit: int) -> str:
    """Clip a log line, keeping its ``want:`` part whole when a long ``got:`` part comes first.

    ``got: <long value> want: <value>``: the value the test wanted is the one to quote.
    """
    head, sep, want = line.rpartition(" want: ")
    if len(line) <= limit or not sep or len(want) > limit:
        return clip(line, limit)
    return f"{clip(head, max(limit - len(want), 100))}{sep}{want}"


def _panics_by_test(text: str, results: list[re.Match[str]]) -> dict[str, str]:
    """Map the test that panicked to ``panic: msg at user/frame.go:12 (called from ...)``."""
    out: dict[str, str] = {}
    for panic in matching_lines(text, _PANIC_NEEDLE, _PANIC):
        if panic["line"].startswith("panic: test timed out"):
            continue
        before = [r for r in results if r.start() < panic.start() and r["res"] == "FAIL"]
        frames = _user_frames(text[panic.end() : panic.end() + 12_000])
        name = before[-1]["name"] if before else _test_in_frames(frames)
        out.setdefault(name, _panic_fact(panic["line"], frames))
    return out


def _test_in_frames(frames: list[tuple[str, str]]) -> str:
    """Return the first test function among the frames (``TestParse``), else ``"panic"``."""
    tests = [m["name"] for f, _ in frames if (m := _TEST_FUNC.search(f))]
    return tests[0] if tests else "panic"


def _panic_fact(line: str, frames: list[tuple[str, str]]) -> str:
    """Return the panic line, where it crashed and the test's line that called that code."""
    where = frames[0][1] if frames else ""
    caller = next((loc for f, loc in frames[1:] if _TEST_FUNC.search(f)), "")
    return (
        clip(line, 180)
        + (f" at {where}" if where else "")
        + (f" (called from {caller})" if caller else "")
    )


def _read_timeout(text: str, timed_out: re.Match[str], findings: Findings) -> None:
    """A test binary killed by ``-timeout``: name the tests still running and where they wait."""
    findings.failure_type = FailureType.TIMEOUT
    findings.category = ReflectionCategory.ROOT_CAUSE
    findings.headline = f"go test stopped the tests after {timed_out['after']} (-timeout)."
    findings.facts.append(timed_out.group(0))
    running = _RUNNING.search(text) if "running tests:" in text else None
    names = (
        [line.split(" ", 1)[0].strip() for line in running["list"].splitlines()] if running else []
    )
    dump = text[timed_out.end() : timed_out.end() + 12_000]
    for goroutine in _GOROUTINE.split(dump):
        frames = _user_frames(goroutine)
        at = next((i for i, (func, _loc) in enumerate(frames) if _TEST_FUNC.search(func)), -1)
        if at < 0:
            continue
        func, loc = frames[at]
        test = _TEST_FUNC.search(func)
        if test and test["name"] not in names:
            names.append(test["name"])
        if len(findings.facts) < _WAITING_FACTS:
            blocked = ", called from ".join(f for _f, f in frames[: min(at, _BLOCKED_FRAMES)])
            findings.facts.append(
                f"{func} waiting at {loc}" + (f" (blocked at {blocked})" if blocked else "")
            )
    findings.tests.extend(dedupe(names))
    findings.advice = (
        "A test blocked until the time limit: a channel receive with no sender, a lock taken "
        "twice or a wait on something that never happens. Fix the blocking call at the named "
        "line (release the lock, send or close the channel, add a context deadline) instead of "
        "raising -timeout."
    )


def _read_package_exit(text: str, failed_pkgs: list[re.Match[str]], findings: Findings) -> None:
    """A test binary that exited without a ``--- FAIL`` (log.Fatal, os.Exit): quote its end."""
    for pkg in failed_pkgs[:2]:
        above = [
            line.strip()
            for line in text[: pkg.start()].splitlines()[-4:]
            if line.strip() and line.strip() != "FAIL" and not _PKG_OK.match(line)
        ]
        findings.facts.extend(clip(line, 180) for line in above[-2:])
    findings.facts = dedupe(findings.facts)
