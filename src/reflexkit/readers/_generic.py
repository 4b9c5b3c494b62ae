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

from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers._blocks import (
    Block,
    find_locations,
    is_library_path,
    location_path as _location_path,
    read_blocks,
)
from reflexkit.readers._findings import Findings, clip, dedupe, plural
from reflexkit.readers._kinds import KILLED, ErrorKind, error_kind, killed, signal_exit
from reflexkit.readers._lines import any_of, matching_lines
from reflexkit.readers._pattern import Pattern
from reflexkit.readers._verdicts import SETUP, Verdict, verdict

__all__ = ["find_locations", "is_library_path", "parse_generic"]

M = re.MULTILINE

_WINDOW = 12_000
_MAX_FACTS = 6
_MIN_FACTS = 3
_FACT_BUDGET = 560
_MAX_LOCATIONS = 3
_DECORATION = "_=!*"
"""The quoted error lines together stay under this many characters."""
_LINE_LIMIT = 200
_LINE_CAP = 500
"""Lines of the window are cut to this many characters (a quoted line keeps 200)."""

_ERROR_LINE_START = Pattern(
    r"\s*(?:E\d*\s*:?\s|error\s|ERROR\s|FAIL(?:ED|URE)?\b|FAIL:|not ok\b|panic:|"
    r"fatal error|Uncaught\b|Unhandled\b|[✗✖\u00d7✘❌]|\[(?:ERROR|FAIL|FATAL)\])"
    r"|\[(?:error|Error)\] |e: \S|-- [A-Z][A-Z ]+ -{3,}"  # sbt, kotlinc, Elm's headers
    r"|\s*(?:#\s*)?Failed test\b|\s*(?:CONFLICT|CRITICAL|SEVERE|PANIC|ABORT(?:ED)?|FAILURE)\b"
    r"|[\s_=!*#>-]*(?:FAIL(?:ED)?|ERROR)\b"
    r"|\S+: \*\*\* |[\s!=_*]*Interrupted: |\s*\*\* \(\w+"
    r"|[\w.-]+:(?:ERROR|FAIL(?:ED)?|ASSERT):? ?\S|ASSERT:\S|\w+ aborted!$"
    r"|[ \t]*x (?=[A-Z`'\"])"  # a renderer's cross, in ASCII (miette's `  x Expected ','`)
)
"""The error line's shapes that open the line (tried with ``match``: at its start only)."""
_WORD = -1
"""A shape's match starts where the word holding its key starts (``TypeError``)."""
_ERROR_LINE_INSIDE: tuple[tuple[tuple[str, ...], int, Pattern], ...] = (
    (
        ("error", "fatal"),
        len("Compilation "),
        Pattern(
            r"(?:^|[\s:\]|>(])(?:error|fatal|Error|ERROR|FATAL|Fatal)(?:\[[\w-]+\])?(?::|!| -)"
            r"|\berror (?:TS|CS|C|LNK|[A-Z]{1,4}\d{3})\d+"
            r"|\b(?:[Ss]yntax|[Pp]arse|[Cc]ompile|[Cc]ompilation|fatal|[Tt]ype|[Rr]untime|"
            r"internal|Execution) errors?\b"
            r"|\b(?:Error|ERROR|Errors) (?:at|in|on|while)\b"
            r"|(?:^|\s)(?:error|ERROR|fatal|FATAL)\s{2,}\S"  # a severity column (stylish)
        ),
    ),
    (
        ("error", "exception", "failure"),
        _WORD,
        Pattern(r"\b[A-Z][A-Za-z0-9]*(?:Error|Exception|Failure)\b(?::|$| in | at |@)"),
    ),
    (
        ("fail", "error"),
        len("... "),
        Pattern(
            r"(?:\s|\|)(?:FAIL|FAILED|ERROR)(?:\s*\||\s*$)"  # a verdict column: "name | FAIL |"
            r"|\.\.\. (?:FAILED|FAIL|ERROR)\s*$"
        ),
    ),
    (
        ("segmentation", "core dumped", "abort", "killed"),
        0,
        Pattern(r"\b(?:Segmentation fault|core dumped|Aborted|Killed)\b"),
    ),
    (
        ("econn", "enoent", "eacces", "eperm", "eaddrinuse", "etimedout", "epipe", "enotfound",
         "eexist", "eisdir", "enotdir", "enospc", "erofs", "eagain", "ehostunreach",
         "enetunreach"),
        0,
        Pattern(
            r"\bE(?:CONN\w+|NOENT|ACCES|PERM|ADDRINUSE|TIMEDOUT|PIPE|NOTFOUND|EXIST|ISDIR|NOTDIR|"
            r"NOSPC|ROFS|AGAIN|HOSTUNREACH|NETUNREACH)\b"
        ),
    ),
    (
        ("assert",),
        0,
        Pattern(r"\bAssertion(?:Error)?\b.*\bfailed\b|(?i:\bassert(?:ion)? failed\b)"),
    ),
    (("[",), 0, Pattern(r"\[[A-Z]{1,4}\d{2,5}\b")),  # [B602:...], [E0308]
    (("\u2715", "\u25cf"), 0, Pattern(r"[✕●]\s")),
    (("panicked",), 0, Pattern(r"\bpanicked at\b")),
)  # fmt: skip
"""The error line's shapes found inside it: its words (lower-cased), how far before the first
of them a match can start (``_WORD``: at the start of the word holding it), the pattern. Each
is tried only when one of its words is in the line, from just before the first: a few small
patterns read from the words they need, not one alternation of forty tried at every place."""


def _is_error_line(line: str, low: str | None = None) -> bool:
    """Whether *line* is an error line in any tool's shape (``error:``, ``FAIL``, ``E:``...)."""
    low = line.lower() if low is None else low
    if not _may_be_an_error_line(line, low):
        return False
    if _ERROR_LINE_START.match(line) is not None:
        return True
    return any(_found_from_key(line, low, *shape) for shape in _ERROR_LINE_INSIDE)


def _found_from_key(
    line: str, low: str, keys: tuple[str, ...], lead: int, pattern: Pattern
) -> bool:
    """Whether *pattern* matches *line*, read from *lead* characters before its first key.

    Every match holds a key and starts at most *lead* characters before it, so nothing
    before that place can match (word boundaries and look-behinds still see the characters
    before it).
    """
    found = [index for index in map(low.find, keys) if index >= 0]
    if not found:
        return False
    start = min(found)
    if len(low) != len(line):  # lower-casing changed the length: places differ
        start = 0
    elif lead == _WORD:
        while start and line[start - 1].isalnum():
            start -= 1
    else:
        start = max(start - lead, 0)
    return pattern.search(line, start) is not None


_DIAGNOSTIC = Pattern(
    # a line that starts with a location, or a rule code, and goes on with a message
    r"^\s*(?:[A-Za-z]:)?[\w.@+~/\\-]*\w\.[A-Za-z]\w{0,9}:\d+(?:[:.]\d+)?:?\s+\S"
    # a name, then its place (`os at app/views.py:1`); a subject, then its check's code in
    # parentheses (`blog.Post.author: (fields.E304) ...`)
    r"|^\S+ at [\w./-]+\.\w+:\d+\s*$|^\S+: \([\w.]+\.[A-Z]\d{3}\) \S"
    r"|^\s*[A-Z]{1,4}\d{3,5}\b:?\s+\S|^\s*\d+: [A-Z]{1,4}\d{1,5}:? \S"
    # a place in words (`... at line 5, column 5.`, `line 4 column 2 - Warning:`)
    r"|^.{0,200}?\bat line \d+, column \d+\b|^\s*[Ll]ine \d+,? column \d+\b"
    r"|^.{0,40}?\|\s*[A-Z]{1,4}\d{2,5}\s*\|"  # a rule-code column: "L: 1 | P: 11 | LT01 |"
    r"|^\s*\^[-~^]*\s+[A-Z]{1,4}\d{2,5}\b"  # a caret under the code: "^-- SC2086 (info): ..."
    r"|^\S+: (?:[A-Za-z]:)?[\w.@+~/\\-]*\w\.[A-Za-z]\w{0,9}:\d+:\s+\S"  # "prog: file:line: msg"
    # a stylish reporter's row under its file (`  3:53-3:56  warning  msg  rule`), a
    # dotfile's place (`.env:3 200 Found spaced assign`)
    r"|^\s*(?:[\u2716\u00d7\u2717\u26a0]\s+)?\d+:\d+(?:-\d+:\d+)?\s{2,}\S"
    r"|^(?:[\w.@+~/\\-]*/)?\.[A-Za-z][\w.-]{0,30}:\d+(?::\d+)?:?\s+\S"
)
_PADDING = Pattern(r" {8,}")  # a padded column (robot): kept short
_EXCEPTION_MESSAGE = Pattern(r"\b[A-Z]\w*(?:Error|Exception|Failure)\b: \S")
_IDENTIFIER = Pattern(r"[\w.:/-]{28,}")
_LESSER = Pattern(r"(?:^|\s)(?:warning|WARNING|warn|note|info|INFO)(?::|\s{2,}|\b)")
_WEAK_LINE = Pattern(
    r"(?i)\b(?:cannot|can't|could not|couldn't|unable to|not found|no such|denied|refused|"
    r"invalid|missing|undefined|unexpected|failed|failure|not allowed|unknown|violat\w*|"
    r"expected|mismatch|not supported|unsupported|not raised|did not|would reformat|"
    r"is not (?:of type|valid|one of|allowed)|unresolved|undeclared|must (?:be|not|have)|"
    r"unused|never used|has no|had no|does not have|lacks?|is required|differ|"
    r"is (?:less|greater|more|longer|shorter) than|not in|not one of|"
    r"would be reformatted|needs? formatting|not formatted|DID NOT|issues? found|"
    r"problems? found|violations? found)\b"
    r"|^\s*\S+ != \S+\s*$"
)
_NOT_AN_ERROR = Pattern(
    r"(?i)\s*(?:ok|pass(?:ed)?|\[?(?:info|debug)\]?|warning|note|hint|help)\b|\s*[✓✔√]"
)
"""A line that opens with a pass or a lesser word (used with ``match``)."""
_ZERO_ERRORS = Pattern(r"(?i)\b0 (?:errors?|failed|failures)\b|^[\w()-][\w ()-]*: 0\s*$")
"""A count of no errors, or ``name: 0`` (tried only on a line holding ``0``)."""
_CODE = Pattern(
    r"\b(?:[A-Z]{1,4}\d{3,5}|[A-Z]{2,}-\d{3,4})\b|\[(?P<slug>[a-z]+(?:-[\w.]+)+)(?:,[^\]\n]*)?\]"
    r"|\((?P<rule>[a-z]+[A-Z]\w+|[a-z]+(?:-[a-z]+)+)\)\s*$"
    r"|^(?P<lead>[a-z][a-z\d]*(?:-[a-z\d]+)+)(?:\[[\w-]+\])?: \S",
    M,
)
_MAX_CODES = 5
_CLOSING_LINES = 3
"""A run's last lines: a strong line among them is its verdict, not its first error."""
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
    r"^\S+\.\w+:\d+(?:[:.]\d+)?(?:-\d+(?:[:.]\d+)?)?:\s*(?:fatal )?error\b"
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
_NUMBER = Pattern(r"\d+")
_CALLS = Pattern(r"^Calls: \S.*$", M)
_FRAME = Pattern(
    r"^\s+(?:at |from |#\d+ |\[C\]: in |\(\S+ [\d.]+\) )"
    r"|: in (?:function|main chunk|\?|local|method|upvalue|field)\b"
    r"|^\s*\S+\.\w+:\d+: (?:\(\w+\)|anonymous fn|[\w.]+/\d+$|in `)"  # Elixir, Lua
    r"|^\s+\S+\.\w+:\d+:in `|^\s+File \"[^\"]+\", line \d+, in "
    r"|^\s+\d+: (?:<unknown>|[\w:<>$.]+)\s*$"  # a numbered native frame (Rust's backtrace)
)
"""A stack frame of Lua, Elixir, Ruby, PHP, JS, JVM, Python, Rust (``at``, ``in function``...)."""
_WORDS = Pattern(r"^\s*[^\s+\-|\[\]{}()].*[A-Za-z]{2}")
"""A line that says something (not a diff line or a bracket of a printed value)."""
_STACK_HEADER = Pattern(
    r"^\s*(?:stack traceback:|Stack (?:back)?trace:|Traceback \(|stacktrace:|Call Stack)"
)
_STRICT_WARNING = Pattern(r"^\s*\S*\s*(?:WARNING|[Ww]arning)\b(?: \d+ in \S+ line \d+)?\s*[:-]")
_STRICT = ("strict mode", "treated as errors", "warnings as errors", "-Werror")
_VERDICT = Pattern(
    r"^[\s_=!*#>-]*(?:FAIL(?:ED|URE)?\b|ERROR\b|not ok\b|--- FAIL|[✗✖\u00d7✘❌✕●]|CONFLICT\b|"
    r"FATAL\b|CRITICAL\b|PANIC\b|panic:|Error:|error(?:\[\w+\])?:|fatal:)"
    r"|\.\.\. (?:FAILED|FAIL|ERROR)\s*$"
)
_QUOTED_COMMAND = Pattern(r"[\"`'](?P<cmd>[a-z][\w.-]* [a-z-][^\"`']*)[\"`']")
_BARE_TRAILER = Pattern(r"^\s*\S+:\d+: \w+$")  # pytest's "tests/x.py:7: AssertionError"
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
_ERROR_WORD = Pattern(r"(?i)\berror\b")


def _score(line: str, own: tuple[str, ...]) -> int:
    """Rank an output line: error shapes high, project files higher, library paths lower."""
    if _NOT_AN_ERROR.match(line) or ("0" in line and _ZERO_ERRORS.search(line.strip())):
        return 0
    digit = _DIGIT.search(line) is not None
    score = _shape_score(line, digit=digit)
    if not score:
        return 0
    if score > 1 and _LESSER.search(line) and not _ERROR_WORD.search(line):
        score -= 1
    score += _adjustment(line)
    return score + (_location_score(line, own) if digit else 0)


def _shape_score(line: str, *, digit: bool) -> int:
    """The line's shape: 3 an error line's, 2 a diagnostic's, 1 a weak line's, 0 none.

    A diagnostic starts with a place or a rule code; a weak line says could not, missing ...
    """
    low = line.lower()
    if _is_error_line(line, low):
        return 3
    if digit and _DIAGNOSTIC.match(line):  # a location or a rule code: a digit either way
        return 2
    return 1 if _may_be_weak(low) and _WEAK_LINE.search(line) else 0


def _location_score(line: str, own: tuple[str, ...]) -> int:
    """+1 for a place in the project, +2 in a file the attempt changed, -1 in a library."""
    paths = [_location_path(loc) for loc in find_locations(line)]
    if not paths:
        return 0
    if all(is_library_path(p) for p in paths):
        return -1
    mine = own and any(p.endswith(own) or any(o in p for o in own) for p in paths)
    return 2 if mine else 1


_BRACKET_CODE = Pattern(r"\[[A-Z]{1,4}\d{2,5}\b")
_ERROR_KEYS = (
    "error", "fatal", "fail", "not ok", "panic", "uncaught", "unhandled", "exception",
    "segmentation", "core dumped", "abort", "killed", "assert", "conflict", "critical",
    "severe", "***", "** (", "interrupted", "econn", "enoent", "eacces", "eperm", "eaddrinuse",
    "etimedout",
    "epipe", "enotfound", "eexist", "eisdir", "enotdir", "enospc", "erofs", "eagain",
    "ehostunreach", "enetunreach", "\u2717", "\u2716", "\u00d7", "\u2718", "\u274c", "\u2715",
    "\u25cf",
)  # fmt: skip
"""Every error line's shape contains one of these (lower-cased): a cheap first test."""


_WEAK_KEYS = (
    "can", "could", "unable", "not", "no such", "denied", "refused", "invalid", "missing",
    "undefined", "unexpected", "fail", "allowed", "unknown", "violat", "expected", "mismatch",
    "support", "did", "would", "format", "found", "!=", "unresolved", "undeclared", "must",
    "unused", "never used", "has no", "had no", "does not have", "lack", "required",
    "differ", " than", "not in", "not one of",
)  # fmt: skip
"""Every shape of ``_WEAK_LINE`` contains one of these (lower-cased)."""
_DIGIT = Pattern(r"\d")
_ANY_ERROR_KEY = any_of(_ERROR_KEYS)
_ANY_WEAK_KEY = any_of(_WEAK_KEYS)


def _may_be_weak(low: str) -> bool:
    """Return whether a line (lower-cased) can match ``_WEAK_LINE``: one literal scan."""
    return _ANY_WEAK_KEY.search(low) is not None


def _may_be_an_error_line(line: str, low: str) -> bool:
    """Return whether *line* can be an error line (a literal scan, ~10x cheaper)."""
    if line.lstrip()[:1] == "E" or line.startswith(("e: ", "-- ")) or line.lstrip()[:2] == "x ":
        return True
    if "[" in line and _BRACKET_CODE.search(line):
        return True
    return _ANY_ERROR_KEY.search(low) is not None


def _adjustment(line: str) -> int:
    """Verdicts and exception messages rank higher; pytest's bare trailers lower."""
    if _VERDICT.match(line) or _EXCEPTION_MESSAGE.search(line):
        return 1
    if _BARE_TRAILER.match(line):
        return -1
    return 0


_LONG_LINE = Pattern(rf"^[^\n]{{{_LINE_CAP + 1},}}", M)  # tried at line starts only


def _window(text: str) -> str:
    """The head and the tail of *text*, each line cut to ``_LINE_CAP`` characters.

    Every pattern then reads a bounded window of bounded lines: the reader's cost is linear
    in its input and has a ceiling, whatever the output holds (one line of 100,000
    characters, a run of blanks).
    """
    if len(text) > _WINDOW:
        text = text[: _WINDOW // 2] + "\n" + text[-_WINDOW // 2 :]
    return _LONG_LINE.sub(lambda m: m.group(0)[:_LINE_CAP], text)


def _error_lines(lines: list[str], own: tuple[str, ...], *, strict: bool = False) -> list[str]:
    """Pick the best error lines, best first (then in output order), one per shape.

    A stack frame is where an error passed, not the error: frames rank below the line just
    above the stack, which states it. With *strict* (warnings treated as errors, said by the
    output's verdict) a warning line is an error line.
    """
    candidates = _candidates(lines, own, strict=strict)
    picked: list[str] = []
    shapes: set[str] = set()
    repeats: list[int] = []
    for index in candidates:
        shape = _NUMBER.sub("#", lines[index].strip())
        if shape in shapes:
            repeats.append(index)
        elif not _repeats_an_identifier(lines[index], picked) and _pick(lines, index, picked):
            shapes.add(shape)
        if len(picked) == _MAX_FACTS:
            return picked
    for index in repeats:  # the same finding at other places, where room is left
        if find_locations(lines[index]):
            _pick(lines, index, picked)
        if len(picked) == _MAX_FACTS:
            break
    return picked


def _pick(lines: list[str], index: int, picked: list[str]) -> bool:
    """Add the line at *index* as a fact if it is new and fits the budget; say if it did."""
    fact = _as_fact(lines, index)
    used = sum(len(p) for p in picked)
    if any(fact in p for p in picked) or (picked and used + len(fact) > _FACT_BUDGET):
        return False
    picked.append(fact)
    return True


_USAGE_HEADER = Pattern(r"^(?:\S+ (?:error|ERR!|ERROR):?)?\s*(?:Usage|Options|USAGE|OPTIONS):\s*$")
"""A header alone on its line over a command's synopsis (``npm error Usage:``)."""


def _candidates(lines: list[str], own: tuple[str, ...], *, strict: bool) -> list[int]:
    """The indexes of the lines worth quoting: error lines best first, then weak lines.

    Weak lines (could not, missing ...) after the first error line explain it; without an
    error line, the weak lines are all there is.
    """
    scored = _scores(lines, own, strict=strict)
    usage = next((i for i, line in enumerate(lines) if _USAGE_HEADER.match(line)), len(lines))
    if usage:  # what the command printed after its usage header is its manual
        scored = [(i, s if i < usage else 0) for i, s in scored]
    strong = [(i, s) for i, s in scored if s >= 2]  # noqa: PLR2004 -- an error shape at least
    strong.sort(key=lambda pair: (-pair[1], pair[0]))
    first = min((i for i, _ in strong), default=0)
    if first >= len(lines) - _CLOSING_LINES:  # only the run's closing lines are strong
        first = -1
    weak = [(i, s) for i, s in scored if s == 1 and i > first] if strong else scored
    weak = [(i, s) for i, s in weak if s > 0]
    return [i for i, _ in strong + weak[: max(_MIN_FACTS - len(strong), 0)]]


def _scores(lines: list[str], own: tuple[str, ...], *, strict: bool) -> list[tuple[int, int]]:
    """Each line's index and rank; a finding headed by its rule id, its place below, first."""
    stack = [bool(_STACK_HEADER.match(line) or _FRAME.search(line)) for line in lines]
    stack.append(False)
    return [
        (index, 4 if _rule_headed(line) and _placed_below(lines, index) else rank)
        for index, line in enumerate(lines)
        for rank in [_ranked(line, own, strict=strict, frame=stack[index], above=stack[index + 1])]
    ]


def _as_fact(lines: list[str], index: int) -> str:
    """The line at *index* as quoted: with what completes it around it, undecorated, clipped."""
    line = _PADDING.sub("  ", _with_continuation(lines, index))
    line = _with_place(lines, index, line)
    line = _with_label(lines, index, line)
    line = _with_location_below(lines, index, line)
    kept = line.strip() if line.lstrip().startswith("** (") else _undecorated(line)
    return clip(kept.strip(), _LINE_LIMIT)


_TRAILING_MARK = Pattern(r"(?<=\w)[!*]$")


def _undecorated(line: str) -> str:
    """The line without its decoration (``=== x ===``, ``**x**``), a sentence's ``!`` kept."""
    kept = line.strip().strip(_DECORATION)
    mark = _TRAILING_MARK.search(line.strip())
    return kept + mark.group(0) if mark is not None and not kept.endswith(mark.group(0)) else kept


def _ranked(line: str, own: tuple[str, ...], *, strict: bool, frame: bool, above: bool) -> int:
    """Rank a line; *frame*: it is a stack frame or header, *above*: the next line is."""
    if strict and _STRICT_WARNING.match(line):
        return 4 if find_locations(line) or "-" in line else 3
    if frame:
        return min(_score(line, own), 1)
    label = _caret_label(line)
    if label:  # ranked by what it says, not by the carets
        return _score(label, own)
    score = _score(line, own)
    if above and _WORDS.search(line):
        score = max(score, 2) + 2  # the message a stack trace explains
    if "-" in line and (_RULE_FINDING.match(line) or _RULE_ALONE.match(line)):
        score = max(score, 2)  # a checker's finding headed by its rule id
    return score


def _rule_headed(line: str) -> bool:
    return "-" in line and _RULE_FINDING.match(line) is not None


def _placed_below(lines: list[str], index: int) -> bool:
    """Whether the line under a rule-headed finding is its place (``f.yml:4 ...``)."""
    return index + 1 < len(lines) and _PLACE_ALONE.match(lines[index + 1]) is not None


_RULE_FINDING = Pattern(r"^[a-z][a-z\d]*(?:-[a-z\d]+)+(?:\[[\w-]+\])?: [A-Z`\"'][^\n]*$")
"""A finding that opens with its rule id (``package-latest: Package installs should ...``),
its place on the line below."""
_RULE_ALONE = Pattern(r"^\s*[^\w\s]{0,4}\s*[a-z][a-z\d]*(?:-[a-z\d]+)+\s*$")
"""A rule id alone on its line, a finding's header (``\u276f\u2771 no-yaml-load``)."""


def _repeats_an_identifier(line: str, picked: list[str]) -> bool:
    """Return whether *line* names the same long identifier (a test id) as a picked line."""
    names = _IDENTIFIER.findall(line)
    return any(name in fact for name in names for fact in picked)


_PLACE_ABOVE = Pattern(r"^In (?P<place>\S+ line \d+):$")
_CARET = Pattern(r"^\s*\^[-~^]*\s")
_CARET_LABEL = Pattern(
    r"[\s\u2502|:]*(?:\d+\s*[\u2502|])?\s*\^[-~^|]*[ \t]+(?P<label>[^\s^~|-].*\S)"
)
"""A caret line with its label (``  |   ^^^ Expected `int`, found `str` ``, ``│  ^ unexpected
token``): the label says what is wrong at the place the carets point to."""
_LABEL_LOOKAHEAD = 6


def _caret_label(line: str) -> str:
    """The label of a caret line, or ``""``."""
    if "^" not in line:
        return ""
    match = _CARET_LABEL.match(line)
    return match["label"] if match is not None else ""


_LOCATION_BELOW = Pattern(
    r"\s*(?:-->|,-\[|[\u256d\u250c]\u2500+\[?|\u256d\u25b8)\s*(?P<loc>[^\s\[\]]+:\d+(?::\d+)?)\]?\s*$"
)
"""The place a renderer prints on the line under its error: rustc's and ty's ``--> f:1:2``,
miette's ``,-[f:1:2]``, codespan's ``\u250c\u2500 f:1:2``, annotate's ``\u256d\u25b8 f:1:2``."""


def _with_location_below(lines: list[str], index: int, line: str) -> str:
    """An error line without a location, with the place printed on the line under it."""
    if index + 1 >= len(lines) or find_locations(line):
        return line
    below = _LOCATION_BELOW.match(lines[index + 1])
    if below is None and _RULE_FINDING.match(lines[index]):
        below = _PLACE_ALONE.match(lines[index + 1])
    return f"{line} at {below['loc']}" if below is not None else line


_PLACE_ALONE = Pattern(r"^\s*(?P<loc>[\w./-]+\.\w+:\d+(?::\d+)?)(?:\s|$)")
"""A line that opens with a place: where the rule-headed finding above it is."""


def _with_label(lines: list[str], index: int, line: str) -> str:
    """An error line followed (within a snippet) by a caret line's label, with that label.

    Renderers of many tools (rustc's, ruff's, ty's, codespan's, miette's) print the error,
    the place, the source line, then carets under the span and what is wrong there.
    """
    if _caret_label(lines[index]):
        return line
    for below in lines[index + 1 : index + 1 + _LABEL_LOOKAHEAD]:
        label = _caret_label(below)
        if label:
            return line if label in line else f"{line} ({label})"
        if _is_error_line(below):
            break  # the next error: this one has no label
    return line


def _with_place(lines: list[str], index: int, line: str) -> str:
    """A caret line under a source line, named with the ``In file line N:`` above them."""
    if not _CARET.match(lines[index]):
        return _caret_label(lines[index]) or line
    for back in range(index - 1, max(index - 6, -1), -1):
        place = _PLACE_ABOVE.match(lines[back].strip())
        if place is not None:
            return f"{place['place']}: {line.strip().lstrip('^-~ ')}"
    return line


_ANNOUNCES_A_LIST = Pattern(r"(?:\([1-9]\d*\)|\b[Ff]ound [1-9]\d* [^\n]*[.!])$")
"""A line that announces the items below it: ``Unused files (1)``, ``Found 1 cycle!``."""
_BULLET = Pattern(r"^\s*[*\u2022-] \S")
"""An item of a list under a heading (``Unused dependencies`` then ``* moment``)."""
_FIELD_BELOW = Pattern(r"^\s+[a-z][a-z ]{2,30}: [^\s=;(){}][^=;(){}]*$")
"""An indented ``for module path: x`` under an error: the error's own detail (not a line of
code such as ``const rate: u32 = f();``)."""


_LISTED = 3
"""Items of a list quoted with its heading."""
_REASON_BELOW = Pattern(r"^\s*(?:Reason|Cause|Details?|Message): \S")
"""The line under an error that says why (Common Test's ``Reason: {badmatch,...}``)."""


def _with_continuation(lines: list[str], index: int) -> str:
    """Return the line, joined to its next line when it heads it.

    A header (``...:``) heads its indented or plain next line; a line that announces a
    list (``Unused files (1)``) heads its first item; an error heads its indented ``key:
    value`` detail (``for module path: json-pointer``).
    """
    line = lines[index].strip()
    if index + 1 < len(lines) and (
        _ANNOUNCES_A_LIST.search(line)
        or _FIELD_BELOW.match(lines[index + 1])
        or _REASON_BELOW.match(lines[index + 1])
        or (_BULLET.match(lines[index + 1]) and not line.endswith((".", ":", ";")))
    ):
        return f"{line} {lines[index + 1].strip()}"
    if line.endswith(":") and index + 1 < len(lines) and _BULLET.match(lines[index + 1]):
        # a heading over a list: its first items (`undeclared dependencies: - 'a' - 'b'`)
        items = [b.strip() for b in lines[index + 1 : index + 1 + _LISTED] if _BULLET.match(b)]
        return " ".join([line, *items])
    if line.endswith(":") and index + 1 < len(lines):
        following = lines[index + 1]
        indent = len(lines[index]) - len(lines[index].lstrip())
        indented = len(following) - len(following.lstrip()) > indent
        plain = not _is_error_line(following) and not _DIAGNOSTIC.match(following)
        if indented or plain:
            return f"{line} {following.strip()}"
    return line


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
    (("error", "Error: ", "[ERROR]", "e: ", "-- ", "characters", "rror in line"), _COMPILE_SHAPE,
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
    window = _window(text)
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
        _error_lines(lines, own, strict=strict)
        or _diff_files(window)
        or (not strict and _error_lines(lines, own, strict=True))
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


def _last_lines(findings: Findings, lines: list[str], code: str) -> Findings:
    """No error line in any shape: the output's last lines, quoted as they are.

    The verdict's line (a quality gate's ``Final rating: 0/10``) is quoted first: it is the
    one line known to say why the run failed.
    """
    last = [line.strip() for line in lines[-2:]]
    proof = [findings.evidence] if findings.evidence and findings.evidence not in last else []
    findings.facts = [clip(line, _LINE_LIMIT) for line in [*proof, *last]]
    findings.headline = (
        f"The command failed{code}; its output has no error line in a format reflexkit "
        "knows, so its last lines are quoted."
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
    return [_diff_file_line(m) for m in _DIFF_FILE.finditer(window)][:_MAX_FACTS]


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
    codes = dedupe(
        m["slug"] or m["rule"] or m["lead"] or m.group(0) for m in _CODE.finditer(window)
    )
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
