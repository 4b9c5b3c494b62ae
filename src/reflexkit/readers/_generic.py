"""The generic reader: error lines, locations and codes found by their shape, in any language.

It reads what no format's reader claims, so it must be good on output nobody has seen. It
looks for what every tool prints in some form: error lines (``error:``, ``error[E0308]``,
``FAIL``, ``not ok``, ``panic:``, ``SomethingError``/``Exception``), locations as printed
(``path:line[:col]``, ``File "x", line N``, ``at f (file:line:col)``, ``--> file:line:col``,
``file(line,col)``), codes (``E0308``, ``TS2322``, ``SC2086``), expected/actual pairs and
summary lines. Lines that name the project's own files rank above library and system paths.
Everything is quoted verbatim.
"""

from __future__ import annotations

import re

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers._blocks import (
    Block,
    find_locations,
    is_library_path,
    location_path as _location_path,
    read_blocks,
)
from reflexkit.readers._error_lines import (
    LINE_LIMIT,
    MAX_FACTS,
    error_lines,
    output_window,
)
from reflexkit.readers._findings import Findings, clip, dedupe, plural
from reflexkit.readers._kinds import KILLED, ErrorKind, error_kind, killed, signal_exit
from reflexkit.readers._lines import matching_lines
from reflexkit.readers._verdicts import SETUP, Verdict, verdict

__all__ = ["find_locations", "is_library_path", "parse_generic"]

M = re.MULTILINE

_MAX_LOCATIONS = 3

_CODES = (
    # `E0308`, `TS2322`, `SC-1234` (the word boundary checked behind the first letter, so
    # the search skips to capitals: a pattern led by `\b` is tried at every character)
    Pattern(r"(?P<code>[A-Z](?<=\b[A-Z])(?:[A-Z]{0,3}\d{3,5}|[A-Z]+-\d{3,4}))\b"),
    Pattern(r"\[(?P<code>[a-z]+(?:-[\w.]+)+)(?:,[^\]\n]*)?\]"),  # `[no-unused-vars]`
    Pattern(r"\((?P<code>[a-z]+[A-Z]\w+|[a-z]+(?:-[a-z]+)+)\)\s*$", M),  # `(noUnusedVars)`
    # `no-dup-id: msg` leading its line
    Pattern(r"(?P<code>[a-z](?<![^\n][a-z])[a-z\d]*(?:-[a-z\d]+)+)(?:\[[\w-]+\])?: \S"),
)
"""Rule ids and error codes, each shape a pattern of its own that starts with a character
class or a literal, so the search skips to where one may start."""

_MAX_CODES = 5

_PAIR = Pattern(
    r"^\s*(?:#\s*|//\s*)?(?:[-+]\s)?(?P<key>expected|actual|received|got|want(?:ed)?|left|right|"
    r"Expected|Actual|Received|Got|Want|Left|Right|expect|but was|but got)\b\s*[:=]?\s*\S.*",
    M,
)

_SUMMARY = Pattern(
    r"^.*\b\d+ (?:failed|failing|failures?|errors?|tests? failed|problems?|offen[cs]es?|"
    r"violations?|broken|ERRORS?|FAILURES?|WARNINGS?)\b.*$"
    r"|^.*\b(?:Findings|Violations|Offenses|Issues): [1-9].*$"
    # a formatter's count of the files it changed (`Modified 1 of 3 files`)
    r"|^(?:Modified|Reformatted|Rewrote|Changed|Fixed) [1-9]\d* (?:of \d+ )?files?\b.*$"
    r"|^.*\bTests?:\s.*$|^.*\bFAILED \(.*$|^(?:#|\u2139) (?:fail|failed|not ok) \d+$",
    M,
)

_SUMMARY_NEEDLE = Pattern(
    r"\d (?:fail|error|problem|test|offen|violation|broken|ERROR|FAILURE|WARNING)|Tests?:\s|"
    r"FAILED \(|odified [1-9]|eformatted [1-9]|ewrote [1-9]|hanged [1-9]|ixed [1-9]|"
    r"(?:#|\u2139) (?:fail|not ok) \d|(?:Findings|Violations|Offenses|Issues): [1-9]"
)
"""Every summary line holds one of these: the lines that do are the only ones read."""

_TEST_SHAPE = Pattern(
    r"^\s*(?:FAIL\b|FAIL:|not ok\b|--- FAIL|#\s+Failed test\b|Result: FAIL)"
    r"|\b\d+ (?:failed|failing)\b|\bTests? failed\b",
    M,
)

_COMPILE_SHAPE = Pattern(
    r"^\S+\.\w+:\d+(?:[:.]\d+)?(?:-\d+(?:[:.]\d+)?)?:\s*(?:fatal )?(?:error|ERROR|Error)\b"
    r"|^error(?:\[\w+\])?:|\berror (?:TS|CS|C|FS|BC|MSB)\d+"
    # a build tool's tagged error with a place (sbt's `[error] f.scala:3:5:`, Maven's
    # `[ERROR] /x/F.java:[12,5]`), kotlinc's `e: f.kt:3:5`, Elm's `-- TYPE MISMATCH ---`
    r"|^(?:\[(?:error|ERROR)\]|e:) (?:file://)?\S+\.\w+:\[?\d+|^-- [A-Z][A-Z ]+ -{3,}"
    # `f.pas(16,10) Error:`, `f.nim(10, 18) Error:`: a place in parentheses, then the error
    r"|^\S+\.\w+\(\d+(?:[,:] ?\d+)?\):? (?:[Ee]rror|Fatal)\b"
    # a place with its span of characters (Haxe's `f.hx:4: characters 23-33 : msg`), a
    # file's error whose warning was made one (`f.y: error: ... [-Werror=conflicts-sr]`)
    r"|^\S+\.\w+:\d+: characters \d+-\d+ : |^\S+\.\w+: error: [^\n]*\[-Werror=[\w-]+\]$"
    # a place alone (OCaml's `File "x.ml", line 5, characters 2-9:`, gfortran's `f.f90:6:8:`),
    # the source line under it, then `Error:`
    r"|^(?:File \"[^\"\n]+\", line \d+, characters \d+-\d+|\S+\.\w+:\d+(?::\d+)?):\n"
    r"(?:.*\n){0,8}?Error: "
    # an error's class, then the place a renderer prints under it (`--> f.sol:10:25:`)
    r"|^\w*Error: [^\n]*\n\s*--> \S+:\d+"
    # an error, then the source line it is about in a numbered gutter (`6 \u2502 code`):
    # a compiler's renderer (Sass's, Crystal's); a program's error has a stack instead
    r"|^[^\n]*\b(?:[Ee]rror|ERROR)\b[^\n]*\n(?:[^\n]*\n){0,3}?[ \t]*\d+[ \t]*[\u2502|] "
    # a parser's error in the input file it names, placed in words (`Error: f.gv: syntax
    # error in line 7 near ';'`)
    r"|^(?:[Ee]rror: )?[\w./-]+\.\w+: (?:[Ss]yntax|[Pp]arse) error (?:in|at|on) line \d+",
    M,
)

_LOCATED_MESSAGE = Pattern(
    r"^\S+\.[a-z]\w{0,5}:\d+:\d+: (?![Ww]arning|note|info|hint)"
    r"(?:[a-z][a-z]+|\"[^\"\n]+\") [^\n]*$",
    M,
)
"""A compiler's ``file.erl:7:27: variable 'X' is unbound`` (or protoc's ``f.proto:8:3: "Money"
is not defined.``): a located message, no rule code."""

_RUNTIME_SHAPE = Pattern(
    r"^\s*(?:Traceback|panic:|Exception in thread|Uncaught|thread '.*' panicked)"
    r"|\b(?:Segmentation fault|core dumped|Aborted|Bus error)\b"
    r"|^\s+at \S.*[:(]\d+|^[A-Z][\w.]*(?:Error|Exception)\b|^Exception: \S"
    # an exception no handler caught, in any language's words (`raised CONSTRAINT_ERROR`,
    # `Unhandled TYPE-ERROR`, `Unhandled exception:`)
    r"|^\s*(?:[Uu]nhandled|[Uu]ncaught|raised) (?:exception\b|[\w.:-]*(?:ERROR|Error|Exception)\b)"
    # a program's stack, printed as it died (Guile's, SBCL's, CHICKEN's)
    r"|^\s*(?:Backtrace(?: for)?:|Call history:)"
    # a program's error named by its kind and class (Clojure's `Execution error (X) at`)
    r"|^(?:Execution|Syntax) error \(?"
    # Julia's `ERROR: LoadError: UndefVarError:`, and any `ERROR: SomeError:`
    r"|^ERROR: (?:LoadError: )?\w*(?:Error|Exception)\b"
    # interpreters' own words: Elixir's `** (XError)`, Ruby's `... (NoMethodError)` closing
    # the line, PHP's `Uncaught TypeError` and `PHP Parse error`, R's `Execution halted`,
    # Lua's `stack traceback:`, Perl's `at f.pl line 6.`
    r"|^\*\* \(\w*(?:Error|Exception)\)|\([A-Z]\w*(?:Error|Exception)\)\s*$"
    r"|\bUncaught [A-Z]\w*(?:Error|Exception)\b|\bPHP (?:Parse|Fatal) error\b"
    r"|^Execution halted$|^stack traceback:|\bat \S+ line \d+\.$"
    # a Scheme's `Exception in car: 5 is not a pair`, a task runner's `rake aborted!` over
    # Ruby frames printed flush (`/x/Rakefile:10:in `block'`)
    r"|^Exception in [^\n:]{1,40}: \S|^\w+ aborted!$|^\S+\.\w+:\d+:in [`'][^\n]*'$"
    # an evaluator's own `RUNTIME ERROR: msg` (Jsonnet's), its frames under it
    r"|^(?:RUNTIME ERROR|Runtime [Ee]rror):? \S"
    # an interpreter's numbered error while running a file (`Error 41 running "x", line 9:`)
    r"|^[Ee]rror \d+ running \"?[^\s\"]+\"?, line \d+: ",
    M,
)

_CALLS = Pattern(r"^Calls: \S.*$", M)

_STRICT = ("strict mode", "treated as errors", "warnings as errors", "-Werror")

_QUOTED_COMMAND = Pattern(r"[\"`'](?P<cmd>[a-z][\w.-]* [a-z-][^\"`']*)[\"`']")

_HINT = Pattern(
    r"^\s*(?:- )?(?:hint|help|Hint|HINT|note: Hint|suggestion|Suggestion|Did you mean|did you mean|"
    r"Did you (?:remember|forget) to|"
    r"To fix|Try|Run|Use|\(use)\b ?:?\s*(?P<hint>.*\S)",
    M,
)

_LOG = Pattern(
    r"^\s*(?:Full log written to|A complete log of this run can be found in:?|Check the log at|"
    r"See the log at|[Ll]og file:|[Ss]ee (?:the )?log(?: file)?:?) \S+$",
    M,
)
"""Where the tool wrote what it did not print: the details of the failure are there."""

_STYLISH_ROW = Pattern(r"^\d+(?::\d+)?(?:-\d+:\d+)?:?\s|^\d+ \| ")

_STYLISH_FILE = Pattern(r"^(?:FILE: )?(?P<file>[^\s:]+\.\w+)$", M)


def _own_locations(text: str, facts: list[str], own: tuple[str, ...]) -> list[str]:
    """Return the project's own locations named in the output and not yet in *facts*."""
    quoted = " ".join(facts)
    candidates = [loc for loc in find_locations(text) if not is_library_path(_location_path(loc))]
    if own:
        mine = [loc for loc in candidates if any(o in _location_path(loc) for o in own)]
        candidates = mine + [loc for loc in candidates if loc not in mine]
    return [loc for loc in candidates if loc not in quoted][:_MAX_LOCATIONS]


_SHAPES = (
    (("FAIL", "not ok", "Failed test", " failed", " failing", "Test failed", "Tests failed"),
     _TEST_SHAPE, FailureType.TEST_FAILURE),
    (("error", "Error: ", "[ERROR]", ": ERROR", "e: ", "-- ", "characters", "rror in line"),
     _COMPILE_SHAPE,
     FailureType.BUILD_ERROR),
    ((": ",), _LOCATED_MESSAGE, FailureType.BUILD_ERROR),
    (("Traceback", "panic", "Exception", "Uncaught", "Segmentation fault", "core dumped",
      "Aborted", "Bus error", "at ", "Error", "raised ", "nhandled", "ERROR", "Backtrace",
      "Call history", "xecution error", "yntax error", "** (", "PHP ", "halted", "traceback",
      " line ", "Exception in ", "aborted!", ":in ", "RUNTIME", "untime ", "running "),
     _RUNTIME_SHAPE,
     FailureType.RUNTIME_ERROR),
)  # fmt: skip
"""The shapes of a failure type, each tried only when one of its words is in the output
(a substring test is a fraction of a pattern's pass over every line)."""


def _shape_type(text: str) -> FailureType:
    """Guess the failure type from the output's shape alone."""
    for needles, shape, failure_type in _SHAPES:
        if any(needle in text for needle in needles) and shape.search(text):
            return failure_type
    return FailureType.UNKNOWN


def parse_generic(
    text: str, exit_code: int | None, files_modified: tuple[str, ...] = (), *, command: str = ""
) -> Findings:
    """Quote the error lines, locations, codes and summary of output no reader recognised.

    Args:
        text: The cleaned output.
        exit_code: The command's exit code.
        files_modified: The files the attempt changed; lines naming them rank first.
        command: The command line; a re-run command the output prints for it is a hint.

    Returns:
        Findings of tool ``"command"``; the failure type is guessed from the output's shape
        (``unknown`` when it has none, for the caller to read from the command line).
    """
    window = output_window(text)
    lines = [line for line in window.splitlines() if line.strip()]
    proof = verdict(window)
    findings = _started(window, proof, exit_code)
    code = f" with exit code {exit_code}" if exit_code is not None else ""
    if not lines:
        return _printed_nothing(findings, code)
    if proof is not None and proof.setup:
        return _could_not_run(findings, proof, lines, exit_code)
    if proof is not None and _NO_TESTS.search(proof.line):
        return _no_tests(findings, proof, window)
    blocks = read_blocks(window)
    if _are_tests(blocks, proof):
        return _failing_tests(findings, blocks, window, command)
    own = tuple(f for f in files_modified if f)
    strict = proof is not None and any(word in proof.line for word in _STRICT)
    facts = (
        error_lines(lines, own, strict=strict)
        or _diff_files(window)
        or (not strict and error_lines(lines, own, strict=True))
        or []
    )
    if not facts:
        return _last_lines(findings, lines, code)
    findings.facts = facts
    _add_stylish_file(findings, window)
    _add_context(findings, window, own, closing=proof is None or proof.closing)
    return _by_shape(findings, code, exit_code)


_NO_TESTS = Pattern(
    r"\b(?:No test files found|No tests? (?:found|ran|were found|matched)|[Nn]o tests to run)\b"
)
_FILTER = Pattern(
    r"^\s*(?:filter|pattern|testPathPattern|testNamePattern|--?\w*filter\w*)s?: \S.*$", M
)
"""The filter a runner says it applied (vitest's ``filter: test/a.test.ts``)."""


def _no_tests(findings: Findings, proof: Verdict, window: str) -> Findings:
    """The runner found no test for the files or filter it was given: the command's mistake."""
    findings.facts = [proof.line, *(m.group(0).strip() for m in _FILTER.finditer(window))][:3]
    findings.category = ReflectionCategory.TOOL_MISUSE
    findings.headline = "The test runner found no test to run for the files or filter given."
    findings.advice = (
        "No test ran, so nothing was checked: fix the test path or filter in the command "
        "(check the file's name and the runner's include pattern), or add the test first."
    )
    findings.steps.append("List the test files the runner sees, then pass one that exists.")
    findings.confidence = 0.6
    return findings


def _by_shape(findings: Findings, code: str, exit_code: int | None) -> Findings:
    """Error lines found by their shape: the headline, the advice of their kind, the step."""
    findings.headline = (
        f"The command failed{code}; no reader knows its output's format, so these are its "
        "error lines by their shape."
    )
    _advise(findings, KILLED if killed(exit_code) else error_kind(" ".join(findings.facts)))
    findings.steps.append(
        f"Reproduce it: re-run the command and look at `{clip(findings.facts[0], 90)}`."
    )
    findings.confidence = 0.4
    return findings


def _started(window: str, proof: Verdict | None, exit_code: int | None) -> Findings:
    """The findings' type and evidence from the verdict (else the shape), and the signal."""
    findings = Findings(
        tool="command",
        failure_type=proof.failure_type if proof else _shape_type(window),
        evidence=proof.line if proof else "",
    )
    signal = signal_exit(exit_code)
    if signal:
        findings.details.append(signal)
    return findings


def _printed_nothing(findings: Findings, code: str) -> Findings:
    findings.headline = f"The command failed{code} and printed nothing."
    findings.advice = (
        "Nothing was printed, so the failure is not explained: re-run the command with "
        "verbose output (or run its steps one by one) to see which step fails and why."
    )
    findings.confidence = 0.1
    return findings


_LED_BY_A_PLACE = Pattern(r"^[\w./@~-]+\.\w+:\d+\b")
"""A line that opens with a file's place (``a.proto:5:9:Message name ...``): a finding, though
it says no ``error``."""
_MAX_PLACED = 4


def _last_lines(findings: Findings, lines: list[str], code: str) -> Findings:
    """No error line in any shape: the output's last lines, quoted as they are.

    The verdict's line (a quality gate's ``Final rating: 0/10``) is quoted first: it is the
    one line known to say why the run failed.
    """
    placed = [line.strip() for line in lines if _LED_BY_A_PLACE.match(line)][:_MAX_PLACED]
    last = placed or [line.strip() for line in lines[-2:]]
    proof = [findings.evidence] if findings.evidence and findings.evidence not in last else []
    findings.facts = [clip(line, LINE_LIMIT) for line in [*proof, *last]]
    findings.headline = (
        f"The command failed{code}; its output has no error line in a format reflexkit "
        + (
            "knows, so its lines led by a file's place are quoted: a checker's findings."
            if placed
            else "knows, so its last lines are quoted."
        )
    )
    findings.advice = (
        "Read the quoted lines and reproduce the failure with the same command before "
        "changing code; re-run it with verbose output to see what failed."
    )
    findings.confidence = 0.2
    return findings


def _add_stylish_file(findings: Findings, window: str) -> None:
    """Rows of a stylish report (``7:4  error  ...``) name their file on the line above."""
    if any(_STYLISH_ROW.match(fact) for fact in findings.facts):
        header = _STYLISH_FILE.search(window)
        if header is not None:
            findings.details.append(f"in {header['file']}")


_DIFF_FILE = Pattern(
    r"^--- (?P<old>\S+)[^\n]*\n\n?\+\+\+ (?P<file>\S*)[^\n]*\n\n?@@ "
    r"|^\+\+\+ (?P<new>\S+)[^\n]*\n@@ ",
    M,
)


def _diff_files(window: str) -> list[str]:
    """The ``+++ file`` lines of a unified diff: a formatter's check names the files so.

    A diff whose ``+++`` line names no file (``flynt``'s, ``unimport``'s) names it on its
    ``---`` line.
    """
    return [_diff_file_line(m) for m in _DIFF_FILE.finditer(window)][:MAX_FACTS]


def _diff_file_line(match: re.Match[str]) -> str:
    lines = [line for line in match.group(0).split("\n") if line]
    if match["old"] is not None and not match["file"]:
        return lines[0]
    return next(line for line in lines if line.startswith("+++ "))


def _advise(findings: Findings, kind: ErrorKind | None) -> None:
    """The category and the advice of the error lines' kind, or of their type."""
    if kind is not None:
        findings.category = kind.category
        findings.advice = kind.advice
        if kind.failure_type is not None and findings.failure_type in {
            FailureType.UNKNOWN,
            FailureType.RUNTIME_ERROR,
        }:
            findings.failure_type = kind.failure_type
        return
    findings.advice = (
        "Start from the first error line quoted: it names what went wrong and where; later "
        "errors often follow from it. Fix that, then re-run the same command."
    )
    if findings.failure_type is FailureType.TEST_FAILURE:
        findings.category = ReflectionCategory.ROOT_CAUSE
    if findings.failure_type is FailureType.DEPENDENCY_ERROR:
        findings.category = SETUP  # a header or package the build cannot have


def _add_context(
    findings: Findings, window: str, own: tuple[str, ...], *, closing: bool = True
) -> None:
    """Add the project's location, the codes, expected/actual lines and the summary."""
    quoted = " ".join(findings.facts)
    where = _own_locations(window, findings.facts, own)
    if where:
        findings.details.append(_placed(where, window))
    findings.details.extend(d for d in _explaining_notes(window) if d not in quoted)
    marked = _MARKED_FRAME.search(window)
    if marked is not None and marked["frame"] not in quoted:
        findings.details.append(f"where it stopped: {marked['frame']}")
    findings.hints = _hints(window)
    pairs = dedupe(clip(m.group(0).strip(), 160) for m in _PAIR.finditer(window))
    findings.details.extend(p for p in pairs[:2] if p not in quoted)
    codes = _codes(window, quoted)
    if codes:
        findings.details.append("codes " + ", ".join(codes))
    findings.summary = _summary(findings.evidence if closing else "", window, quoted)
    below = _rows_below_the_minimum(findings.evidence, window)
    if below:
        findings.details.append("below the minimum: " + ", ".join(below))
    calls = _CALLS.search(window)  # R's call chain: its stack, innermost last
    if calls is not None and calls.group(0) not in quoted:
        findings.details.append(clip(calls.group(0), 160))


_PREPOSITION = Pattern(r"\b(?P<word>on|in|at) $")
_MARKED_FRAME = Pattern(r"^[ \t]*(?P<frame>\S[^\n]*?\S)[ \t]*<-{1,2}[ \t]*$", M)
"""A frame of a call history marked where the program stopped (CHICKEN's ``<--``)."""
_NOTE = Pattern(r"^(?P<place>\S+:\d+(?::\d+)?): note: (?P<note>\S.*)$", M)
_ERROR_AT = Pattern(r"^\S+:\d+(?::\d+)?: (?:fatal )?error: (?P<message>\S.*)$", M)


_MINIMUM = Pattern(r"\bminimum:? (?P<min>\d+(?:\.\d+)?)%")
_PERCENT_ROW = Pattern(
    r"^\|?[ \t]*(?P<name>[^|\s-][^|\n]*?)[ \t]*\|[^\n]*?(?P<pct>\d+(?:\.\d+)?)%[ \t]*\|?[ \t]*$", M
)
_LISTED_ROWS = 3


def _rows_below_the_minimum(evidence: str, window: str) -> list[str]:
    """A gate's table rows whose percentage is under the minimum its verdict names.

    ``RESULT: FAILED (minimum: 80.0%, actual: 28.6%)`` under a table of files and their
    percentages: the files that pull the total down (``cart.py (17%)``), not the total.
    """
    gate = _MINIMUM.search(evidence)
    if gate is None:
        return []
    least = float(gate["min"])
    rows = [
        f"{m['name']} ({m['pct']}%)"
        for m in _PERCENT_ROW.finditer(window)
        if float(m["pct"]) < least and m["name"].upper() != "TOTAL"
    ]
    return rows[:_LISTED_ROWS]


def _placed(where: list[str], window: str) -> str:
    """The places, each with the word the output put before it (``on main.tf line 14``)."""
    said = []
    for loc in where:
        index = window.find(loc)
        word = _PREPOSITION.search(window, max(index - 3, 0), index) if index > 0 else None
        said.append(f"{word['word']} {loc}" if word is not None else loc)
    return ", ".join(said) if _PREPOSITION.match(said[0][:3]) else "at " + ", ".join(said)


def _explaining_notes(window: str) -> list[str]:
    """The first note under an error that says more than the error repeats.

    ``note: 'total' declared without an initial value`` under an uninitialised value's error.
    """
    if ": note: " not in window:
        return []
    errors = [m["message"] for m in _ERROR_AT.finditer(window)]
    for note in _NOTE.finditer(window):
        if not any(note["note"] in error or error.startswith(note["note"]) for error in errors):
            return [clip(note.group(0).strip(), 160)]
    return []


_WRAPPED_HINT = Pattern(r"\b[Dd]id you\n[ \t]*mean\b[^\n]*", M)
"""A suggestion the tool wrapped at its line width (``Did you`` ending one line, ``mean
"bucket_name"?`` opening the next): quoted as printed."""


def _hints(window: str) -> list[str]:
    """The tool's own hints, the commands they quote first, and where its log is."""
    hints = [m["hint"] for m in _HINT.finditer(window)]
    hints += [m.group(0).strip() for m in _WRAPPED_HINT.finditer(window)]
    hints += [m.group(0).strip() for m in _LOG.finditer(window)]
    commands = [m["cmd"] for hint in hints for m in _QUOTED_COMMAND.finditer(hint)]
    return dedupe(clip(h, 160) for h in [*commands, *hints])[:2]


def _codes(window: str, quoted: str) -> list[str]:
    """The rule ids and error codes the quoted lines do not show."""
    found = [(m.start(), m["code"]) for pattern in _CODES for m in pattern.finditer(window)]
    codes = dedupe(code for _, code in sorted(found))
    return [c for c in codes if c not in quoted][:_MAX_CODES]


def _summary(closing: str, window: str, quoted: str) -> str:
    """The verdict line that closes the run, else the last summary line, if not quoted."""
    if closing and closing not in quoted:
        return clip(closing, 160)
    summaries = [m.group(0).strip() for m in matching_lines(window, _SUMMARY_NEEDLE, _SUMMARY)]
    if summaries and summaries[-1] not in quoted:
        return clip(summaries[-1], 160)
    return ""


_NOT_FOUND_STATUS = Pattern(r"^[^\n]*\bError 127\b[^\n]*$", M)
"""A build tool's line with the status of a program that is not there (``Error 127``)."""
_NOT_FOUND = 127
"""The shell's exit status for a command it cannot find."""


def _could_not_run(
    findings: Findings, proof: Verdict, lines: list[str], exit_code: int | None
) -> Findings:
    """The check never started: a lesson about the environment, not the code.

    A program that is not installed (status 127, as the exit code or a build tool's ``Error
    127`` says) is what the environment lacks; its status line is quoted with the error.
    """
    status = _NOT_FOUND_STATUS.search("\n".join(lines))
    findings.facts = [proof.line, *([status.group(0).strip()] if status else [])]
    missing = proof.failure_type is FailureType.DEPENDENCY_ERROR
    lacking = missing or status is not None or exit_code == _NOT_FOUND
    findings.category = SETUP if lacking else ReflectionCategory.TOOL_MISUSE
    findings.headline = (
        "The check could not run, so it says nothing about the code: the environment "
        + (
            "lacks the module the command runs."
            if missing
            else "lacks a program, interpreter or service the command needs, or the command "
            "line names a program, script or subcommand that is not there."
        )
    )
    findings.advice = "Fix the environment, not the code or the approach: " + (
        "install the module in the interpreter the command runs (a virtualenv first on "
        "PATH may not have it), or call the project's own interpreter."
        if missing
        else "install or start what is missing, use the project's own command or script "
        "name (check its package.json, Makefile or scripts), or make the script executable."
    )
    findings.steps.append("Check which program the command runs (`which`, `type`) and run it.")
    findings.hints = _suggested(lines)
    findings.confidence = 0.6
    return findings


_DID_YOU_MEAN = Pattern(r"[Dd]id you mean\b")


def _suggested(lines: list[str]) -> list[str]:
    """The tool's own suggestion: ``Did you mean `test`?``, or the line below ``...this?``."""
    for index, line in enumerate(lines):
        if not _DID_YOU_MEAN.search(line):
            continue
        said = line.strip()
        if said.endswith(("this?", "one of these?", ":")) and index + 1 < len(lines):
            return [clip(lines[index + 1].strip(), 120)]
        return [clip(said, 120)]
    return []


def _are_tests(blocks: list[Block], proof: Verdict | None) -> bool:
    """Whether the blocks are failing tests: a test verdict, or blocks that read as tests."""
    if not blocks:
        return False
    if proof is not None:
        return proof.failure_type is FailureType.TEST_FAILURE
    return any((b.message or b.pairs) and not b.weak for b in blocks)


_RERUN_LIMIT = 2
_FAILING_FILES = Pattern(
    r"^(?:Files? with failing tests|Failed (?:test )?files?|Failing (?:test )?files?):[ \t]*\S.*$",
    M,
)
"""A runner's closing list of the test files that failed (tcltest's ``Files with failing
tests: stack.test``)."""


def _failing_tests(findings: Findings, blocks: list[Block], window: str, command: str) -> Findings:
    """Findings of failing tests read from their blocks: each fact is one test's own."""
    findings.failure_type = FailureType.TEST_FAILURE
    findings.tests = [b.test for b in blocks]
    findings.facts = [clip(b.fact(), 280) for b in blocks]
    findings.headline = (
        f"{plural(len(blocks), 'failing test')} by the shape of the output (no reader knows "
        "its format); each is quoted with the assertion or error printed under it."
    )
    summaries = [m.group(0).strip() for m in matching_lines(window, _SUMMARY_NEEDLE, _SUMMARY)]
    closing = findings.evidence if not findings.evidence.startswith("not ok") else ""
    findings.summary = clip(closing or (summaries[-1] if summaries else ""), 160)
    findings.details.extend(m.group(0).strip() for m in _FAILING_FILES.finditer(window))
    logs = [m.group(0).strip() for m in _LOG.finditer(window)]
    findings.hints = dedupe([*_reruns(window, command), *logs])[: _RERUN_LIMIT + 1]
    kind = error_kind(" ".join(b.message for b in blocks))
    findings.category = kind.category if kind is not None else ReflectionCategory.ROOT_CAUSE
    findings.advice = (
        "Each failing test is quoted with what it printed: compare the expected and actual "
        "values (or the error) and fix the code under test; change a test only if it is "
        "wrong. Re-run the failing tests first, then the whole suite."
    )
    findings.steps.append(f"Start with `{clip(blocks[0].test, 90)}`.")
    findings.confidence = 0.5
    return findings


def _reruns(window: str, command: str) -> list[str]:
    """Lines that re-run one failing test with the command's own program (``rspec f:7``)."""
    program = command.split(maxsplit=1)[0].rsplit("/", 1)[-1] if command.split() else ""
    if not program or not program[0].isalpha():
        return []
    pattern = Pattern(rf"^\s*({re.escape(program)} \S+:\d+)\b", re.MULTILINE)
    ran = [m["cmd"] for m in _RAN.finditer(window)]
    return dedupe([*(m[1] for m in pattern.finditer(window)), *ran])[:_RERUN_LIMIT]


_RAN = Pattern(r"^>>> (?P<cmd>\S.*\S)\s*$", re.MULTILINE)
"""A runner's line with the command a failing test ran (``>>> ./test_ring wrap``)."""
