"""Error lines found by their shape: which lines of an output are its errors.

The generic reader (``_generic``) asks this module for an output's error lines: each line is
scored by its words, codes and places (the project's own files first), and a picked line takes
the hint, label, place or reason printed around it. Everything stays verbatim.
"""

from __future__ import annotations

import re

from reflexkit._pattern import Pattern
from reflexkit.readers._blocks import (
    find_locations,
    is_library_path,
    location_path as _location_path,
)
from reflexkit.readers._findings import clip
from reflexkit.readers._lines import any_of

__all__ = ["LINE_LIMIT", "MAX_FACTS", "error_lines", "output_window"]

M = re.MULTILINE

_WINDOW = 12_000
MAX_FACTS = 6
_MIN_FACTS = 3
_FACT_BUDGET = 560
_DECORATION = "_=!*"
"""The quoted error lines together stay under this many characters."""
LINE_LIMIT = 200
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
_CLOSING_LINES = 3
"""A run's last lines: a strong line among them is its verdict, not its first error."""
_NUMBER = Pattern(r"\d+")
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
_VERDICT = Pattern(
    r"^[\s_=!*#>-]*(?:FAIL(?:ED|URE)?\b|ERROR\b|not ok\b|--- FAIL|[✗✖\u00d7✘❌✕●]|CONFLICT\b|"
    r"FATAL\b|CRITICAL\b|PANIC\b|panic:|Error:|error(?:\[\w+\])?:|fatal:)"
    r"|\.\.\. (?:FAILED|FAIL|ERROR)\s*$"
)
_BARE_TRAILER = Pattern(r"^\s*\S+:\d+: \w+$")  # pytest's "tests/x.py:7: AssertionError"
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
    return clip(kept.strip(), LINE_LIMIT)


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


def output_window(text: str) -> str:
    """The head and the tail of *text*, each line cut to ``_LINE_CAP`` characters.

    Every pattern then reads a bounded window of bounded lines: the reader's cost is linear
    in its input and has a ceiling, whatever the output holds (one line of 100,000
    characters, a run of blanks).
    """
    if len(text) > _WINDOW:
        text = text[: _WINDOW // 2] + "\n" + text[-_WINDOW // 2 :]
    return _LONG_LINE.sub(lambda m: m.group(0)[:_LINE_CAP], text)


def error_lines(lines: list[str], own: tuple[str, ...], *, strict: bool = False) -> list[str]:
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
        if len(picked) == MAX_FACTS:
            return picked
    for index in repeats:  # the same finding at other places, where room is left
        if find_locations(lines[index]):
            _pick(lines, index, picked)
        if len(picked) == MAX_FACTS:
            break
    return picked
