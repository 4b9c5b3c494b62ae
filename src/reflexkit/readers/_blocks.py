"""Failure blocks found by their shape: a header naming the failing test, then its body.

Test runners of every ecosystem print a failing test the same way: a header line that names
it (``1) Class::method``, ``not ok 3 - name``, ``--- FAIL: TestX``, ``FAIL: test_x
(module.Class)``, ``[FAIL] x``, ``Class#method [file:line]:``, ``name ... FAILED``,
``Failure -> file @ line`` and the test's name below), then a body with the assertion or the
error, often an expected/actual pair, and the location. :func:`read_blocks` finds the
headers by those shapes, not by tool names, and keeps each block's facts with its own test:
the assertion quoted beside a test id is the one printed under that id.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

import attrs

from reflexkit._pattern import Pattern
from reflexkit.readers._findings import clip, dedupe
from reflexkit.readers._lines import any_of

__all__ = ["Block", "find_locations", "is_library_path", "read_blocks"]

M = re.MULTILINE

_MAX_BLOCKS = 12
_BODY_LINES = 40
_MESSAGE_LIMIT = 160

_DURATION = r"(?:\s+[(\[]<? ?\d[\d.]* ?(?:ms|s|sec|seconds?|m)[)\]])?"
"""A test's time after its verdict: ``(2ms)``, ``[4.09ms]``, ``[< 1 ms]``."""

_HEADER = Pattern(
    r"^[ \t]{0,8}\d{1,4}\) (?P<num>\S.*?)\s*$"
    r"|^[ \t]*not ok \d+(?: -)? (?P<tap>[^#\n]*?[^#\s])(?:\s+#.*)?$"  # TAP 14 subtests indent
    r"|^[ \t]*--- FAIL: (?P<go>\S+)"
    r"|^[ \t]*(?:FAIL|ERROR):? +(?P<fail>(?!\d+ (?:tests?|failed))(?!\()\S.*?)\s*$"
    r"|^[ \t\u2502|]*\[ *(?:FAIL|FAILED|ERROR) *\] +(?P<bracket>(?!\d+ tests?\b|--- )\S.*?)"
    + _DURATION
    + r"[ \t\u2502|]*$"
    r"|^(?:Failure|Error) (?:->|\u2192) (?P<arrow>\S.*?)\s*$"
    # the verdict, `in`, the dotted id (`Failure in pkg.test_m.C.test_x`), or the name and
    # the id in parentheses (`Failure in test test_x (pkg.tests.C.test_x)`)
    r"|^(?:Failure|Error|FAILURE|ERROR) in (?:test )?(?:[\w\[\]-]+ \((?P<inid>[\w.\[\]-]+)\)"
    r"|(?P<indotted>[\w\[\]-]+(?:\.[\w\[\]-]+)+))\s*$"
    r"|^[ \t]*(?P<dots>\S.*?) ?\.{3,} ?\*?(?:FAIL|FAILED|ERROR|failed|Failed)\*?"
    + _DURATION
    + r"\s*$"
    r"|^[ \t]*\((?:fail|FAIL|failed)\) (?P<paren>\S.*?)" + _DURATION + r"\s*$"
    r"|^[ \t]*(?:Failed|FAILED) (?P<timed>[^\s\[]+) \[<? ?\d[\d.]* ?(?:ms|s|m)\]\s*$"
    r"|^[ \t]*(?:={3,}|\*{3,}|#{3,}) (?P<deco>[^\s\[].*?) (?:FAILED|FAIL|ERROR)\s*$"
    r"|^(?P<at>\S.*?): Test Failed at (?P<atloc>\S+:\d+)\s*$"
    # the verdict, the place in parentheses, the name: `Failure ('test-tax.R:4'): vat`
    r"|^(?:Failure|Error|FAILURE|ERROR|Failed|FAILED) \(['\"]?(?P<ploc>[^'\"()\s]+:\d+)['\"]?\): "
    r"(?P<pname>\S.*?)\s*$"
    # the place, then the verdict and the name: `tests/s.scm:5: FAIL capitalize empty`
    r"|^(?P<lloc>\S+:\d+(?::\d+)?): (?:FAIL|FAILED|ERROR) (?P<lname>\S.*?)\s*$"
    # a numbered run's row with its verdict: `2/2 ring-wrap FAIL 0.02s exit status 1`
    r"|^[ \t]*\d+/\d+ (?P<row>[^\s.][^\s]*) +(?:FAIL|ERROR|TIMEOUT)\b.*$"
    # a verdict alone, its test's fields under it (rackunit's `FAILURE` then `name:`...)
    r"|^[ \t]*(?P<bare>FAILURE|FAILED|FAIL)[ \t]*$"
    r"|^[ \t]*\d+/\d+ (?P<frac>(?!Test +#)[^\s.][^\n]*?)\.{3}"
    r"(?![.\s]|(?:OK|ok|SKIP|skip|PASS|pass)\b)\S.*$"
    r"|^(?:\d\d:\d\d )?\+\d+(?: ~\d+)? -\d+: (?:\S+\.\w+: )?(?P<ebrack>\S.*?) \[E\]\s*$"
    r"|^[ \t]*(?P<colon>[\w./:#<>\[\]-]+): FAILED\b.*$"
    r"|^[ \t]*\d+/\d+ Test +#\d+: (?P<ctestrun>\S+) \.+\**(?:Failed|\w* ?aborted|Exception|"
    r"SEGFAULT|Timeout)"
    r"|^[ \t]*\d+ - (?P<ctest>\S+) \((?:Failed|Subprocess aborted|SEGFAULT|Timeout|"
    r"Exception|Child aborted|Not Run)\)"
    r"|^[ \t]*#[ \t]+Failed test (?P<perl>'[^'\n]*'|\S.*?)\s*$"
    r"|^[ \t]*[\u2717\u2716\u00d7\u2718\u274c\u2715] "
    r"(?P<cross>(?![Ff]ound \d|\d+ (?:problems?|errors?|warnings?|issues?)\b|\||\[(?i:error|warn))"
    r"\S.*?)\s*$",
    M,
)
"""A failing test's header; the group that matched holds its id (or a location, ``arrow``)."""

_ID_BELOW = Pattern(r"^(?:Failure|Error|Failed|FAILED|FAIL|ERROR):?$")
"""A numbered header that names no test (minitest's ``1) Failure:``): the id is below it."""
_ID_AND_PLACE = Pattern(r"^(?P<id>\S.*?) \[(?P<loc>[^\]\s]+:\d+)\]:?$")
"""``WordCountTest#test_x [test/test_x.rb:10]:`` (minitest, and runners printing so)."""
_BODY_END = Pattern(
    r"^(?:Finished in |Failed examples:|Test Summary|FAILURES!|ERRORS!|Tests?:|Ran \d|"
    r"\d+ (?:examples?|tests?|runs?|specs?|successes|passed|failed)\b|Randomized with seed|"
    r"Time: \d|OK \(|FAILED \(|Total Test time|The following tests FAILED|There (?:was|were) "
    r"\d+ |-{20,}|={20,}|\u23af{6,}|[\u2500\u2550]{6,}|(?:Ok|OK|Fail|Skipped|Timeout):\s+\d+\s*$)"
)
"""Lines that close the last block: the runner's summary or its next section."""
_MESSAGE = Pattern(
    r"^\*\*(?:error|exit|throw):|"
    r"\b(?:[A-Z]\w*(?:Error|Exception|Failure)|Error|Exception)\b|[Ff]ailed asserting|"
    r"\bassert(?:ion)?\b|\b[Ee]xpected\b|\bnot (?:found|raised|defined|equal)\b|"
    r"(?i:\bundefined\b|\bunknown\b|\binvalid\b)|\bcannot\b|\bcan't\b|\*\* \(|\bpanic|"
    r"\bfailed\b|\bFAILED\b|\bnil\b|\bnull\b|"
    r"\bmismatch|\bdiffer|\bwant\b|\bgot\b|!=|\bis not\b|\bdid not\b|\bunable\b"
)
_MESSAGE_KEYS = any_of((
    "**", "error", "exception", "failure", "failed", "assert", "expected", "not ", "undefined",
    "unknown", "invalid", "cannot", "can't", "panic", "nil", "null", "mismatch", "differ",
    "want", "got", "!=", "is not", "did not", "unable",
))  # fmt: skip
"""Every shape of ``_MESSAGE`` holds one of these (lower-cased): a cheap first test."""


def _is_message(line: str) -> bool:
    """Whether *line* reads as a failure's message (an error, an assertion, a value's)."""
    return _MESSAGE_KEYS.search(line.lower()) is not None and _MESSAGE.search(line) is not None


_STRONG = Pattern(
    r"\b[A-Z]\w*(?:Error|Exception)\b(?!/)|^\*\* \(|^\*\*(?:error|exit|throw):|^Error: "
    r"|^[Ff]ailed asserting"
)
"""An exception's class or an assertion's verdict: the block's message before any other."""
_PAIR = Pattern(
    r"^\s*(?:[-+]\s*)?(?:expected|actual|received|got|want(?:ed)?|left|right|but was|but got|"
    r"Expected|Actual|Received|Got|Want|Left|Right|Passed in|Expression|Evaluated|Which is)\b"
    r"(?: [\w ]{0,20})?\s*[:=]"
    r"|^\s*-* ?Result (?:was|should have been)\b.*:$"  # `---- Result was:`, the value below
    r"|^\s*(?:\+\+|--)\S.*\((?:Expected|Actual)\)\s*$"  # a diff's `++want (Expected)`
    r"|^\s*\{(?:expected|value|actual|got),"  # Erlang's `{expected,10.13}`
)
_NOISE = Pattern(
    r"^\s*(?:\d+\s*[|\u2502]|[|\u2502]|[\^~\s]+$|\.\.\.$|---$|code:\s*$|stacktrace:|Stack trace:|"
    r"#\d+ \{main\}|\(compared using|Diff:|@@|[<>]{3}|\S+ = \S+$|#?\s*[\w ]+\s{2,}\d+\s*$)"
)
_LOCATION = Pattern(
    r'File "(?P<py>[^"\n]+)", line (?P<pyline>\d+)(?:, characters \d+-\d+)?'
    r"|(?<![^\s\"'(\[<,=#])(?:file://)?"
    r"(?P<path>(?:[A-Za-z]:)?[\w.@+~/\\-]*\w\.[A-Za-z]\w{0,9})"
    r"(?::(?P<line>\d+)(?::(?P<col>\d+))?|\((?P<pline>\d+)(?:[,:] ?(?P<pcol>\d+))?\)"
    r"|:\[(?P<bline>\d+),(?P<bcol>\d+)\])"
    r'|(?<![^\s"(])(?P<named>"[^"\n]+\.\w+"|[\w./-]+\.\w+)(?:[,:]? (?:line|on line|@) |:line )'
    r"(?P<nl>\d+)"
    r"|\bin (?P<php>\S+\.\w+) on line (?P<phpline>\d+)"
    r"|(?<!\S)(?P<spaced>[\w./-]*\w\.[A-Za-z]\w{0,9}) (?P<sline>\d+):(?P<scol>\d+)\b"
)
"""Locations as printed: ``f:1[:2]``, ``f(1,2)``, ``File "f", line 1``, ``f line 1``,
``f @ 1``, ``in f on line 1``; stack frames of JVM ``(F.java:1)``, JS ``at f (x.js:1:2)``,
Go ``\\tx.go:1 +0x``, Ruby ``x.rb:1:in``, PHP ``#0 x.php(1):``, Elixir ``x.ex:1: M.f/1``,
Lua ``x.lua:1: in``, R and Haskell ``x.hs:1:2:`` all contain one of these."""
_LIBRARY = Pattern(
    r"site-packages|dist-packages|node_modules|/usr/(?:lib|include|local/lib|share)/|"
    r"^/(?:lib|opt|nix)/|/lib/python\d|\\lib\\|<frozen|^<\w+>|^<internal:|runpy\.py|^internal/|"
    r"^node:|/rustc/|\.cargo/registry|/go/pkg/mod|/usr/local/go/|/jdk[^/]*/|java\.base/|"
    r"/\.pyenv/|/\.rustup/|/\.venv/|/venv/|/gems/|/vendor/|bits/|c\+\+/\d+|^\(\w+ [\d.]+\)|"
    r"^lib/(?:enum|kernel|ex_unit)\.ex$"
)


@attrs.define
class Block:
    """One failing test as printed.

    Attributes:
        test: The test's id as printed (``CartTest::testTotal``, ``TestParse/empty``).
        message: The block's first error or assertion line, verbatim.
        pairs: Its expected/actual lines, verbatim.
        location: Its first location in the project's own files, verbatim.
        verdict: The line that gave the test's verdict (``name ... FAIL``), when it is the
            header: the message when its body has none.
        weak: The header is an ``ERROR x`` line whose id names no test (``ERROR: In
            procedure f:``, ``ERROR TS2322: ...``): a program's or compiler's error line as
            often as a test's, a test only where the output's verdict says tests ran.
    """

    test: str
    message: str = ""
    pairs: list[str] = attrs.field(factory=list)
    location: str = ""
    verdict: str = ""
    weak: bool = False

    def fact(self) -> str:
        """Return the block as one quotable line: id, message, pair, location."""
        text = self.test
        if self.message.startswith(self.test):  # a verdict line that names its test
            text = self.message
        elif self.message and self.message not in text:
            text += f": {self.message}"
        pairs = [p for p in self.pairs if p not in text]
        if pairs:
            text += " (" + "; ".join(pairs) + ")"
        if self.location and self.location not in text:
            text += f" at {self.location}"
        return text


@functools.lru_cache(maxsize=1024)
def is_library_path(path: str) -> bool:
    """Return whether *path* is a library's or the system's rather than the project's own."""
    return bool(_LIBRARY.search(path))


_DIGIT = re.compile(r"\d")
"""Every location shape holds a line number: a line without a digit holds none."""


def find_locations(text: str) -> list[str]:
    """Return the locations printed in *text*, verbatim, first occurrence first.

    Read line by line (no location spans two lines), each line once: the generic reader
    asks for the locations of a line when it ranks it and again for the whole output, and
    a line's answer is kept (a bounded cache) for the second time.
    """
    if "\n" not in text:
        return list(_line_locations(text)) if _DIGIT.search(text) else []
    return dedupe(
        location
        for line in text.splitlines()
        if _DIGIT.search(line)
        for location in _line_locations(line)
    )


_CACHED_LINE = 400
"""Lines up to this long have their locations kept; a longer one is read each time."""


def _line_locations(line: str) -> tuple[str, ...]:
    if len(line) > _CACHED_LINE:
        return _locations_in(line)
    return _cached_locations(line)


def _locations_in(line: str) -> tuple[str, ...]:
    return tuple(m.group(0) for m in _LOCATION.finditer(line))


_cached_locations = functools.lru_cache(maxsize=4096)(_locations_in)


@functools.lru_cache(maxsize=4096)
def location_path(location: str) -> str:
    """Return the path of a location as printed."""
    if location.startswith('File "'):
        return location[6:].split('"', 1)[0]
    location = location.removeprefix("in ").removeprefix("file://")
    return re.split(
        r":\[?\d|\(\d|[,:]? line \d| on line \d| @ \d| \d+:\d|:line \d", location, maxsplit=1
    )[0].strip('"')


def own_location(text: str) -> str:
    """Return the first location in *text* that is not a library's, or ``""``."""
    return next(
        (loc for loc in find_locations(text) if not is_library_path(location_path(loc))), ""
    )


def read_blocks(text: str) -> list[Block]:
    """Return the failing tests printed in *text*, each with the facts printed under it."""
    lines = text.splitlines()
    starts = _headers(lines)
    last = _VERDICT_LAST | (_BRACKET if _verdicts_follow_details(lines, starts) else frozenset())
    blocks: dict[str, Block] = {}
    for number, (_, match) in enumerate(starts):
        block = _block(match, _body_of(lines, starts, number, last))
        if block is None:
            continue
        # a progress line, then the report (or a closing line naming the id alone): one block
        known = next((t for t in blocks if t == block.test or t.startswith(block.test + " ")), "")
        if known:
            _merge(blocks[known], block)
        elif len(blocks) < _MAX_BLOCKS:
            blocks[block.test] = block
    for block in blocks.values():
        block.message = block.message or block.verdict
    return list(blocks.values())


_HEADER_LINE = 300
"""A header is a short line: longer ones are not tried."""


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _verdicts_follow_details(lines: list[str], starts: list[tuple[int, re.Match[str]]]) -> bool:
    """Whether ``[FAILED] x`` verdicts come after their test's details (Nim's unittest).

    So when the first such header has lines indented under the level it stands at just above
    it that say what failed, after a line that is no header (``[OK] other``, ``[Suite] s``).
    """
    first = next((index for index, m in starts if m.lastgroup == "bracket"), None)
    if first is None or first == 0:
        return False
    level = _indent(lines[first])
    above = first - 1
    while above >= 0 and lines[above].strip() and _indent(lines[above]) > level:
        above -= 1
    headed = above >= 0 and any(index == above for index, _ in starts)
    details = lines[above + 1 : first]
    return bool(details) and not headed and any(_is_message(line) for line in details)


def _headers(lines: list[str]) -> list[tuple[int, re.Match[str]]]:
    """The failing tests' header lines: their index and the shape that matched."""
    starts: list[tuple[int, re.Match[str]]] = []
    for index, line in enumerate(lines):
        match = _HEADER.match(line) if len(line) <= _HEADER_LINE else None
        if match is not None:
            starts.append((index, match))
    return starts


def _body_of(
    lines: list[str], starts: list[tuple[int, re.Match[str]]], number: int, last: frozenset[str]
) -> list[str]:
    started = _started_above(lines, starts, number)
    if started is not None:  # `[ RUN ] x` ... `[ FAILED ] x`: the lines between are x's
        return lines[started + 1 : starts[number][0]]
    return _beside(lines, starts, number, last)


_STARTED = Pattern(r"^\W*\[? *(?:RUN|START(?:ED)?|RUNNING)\b *\]? *:? *(?P<id>\S.*?)\s*$")
"""A runner's line that a test starts (``[ RUN      ] Suite.Test``, ``=== RUN   TestX``)."""


def _started_above(
    lines: list[str], starts: list[tuple[int, re.Match[str]]], number: int
) -> int | None:
    """The index of the line above the *number*-th header that started its test, if any."""
    index, match = starts[number]
    test = (match[match.lastgroup or ""] or "").strip() if match.lastgroup else ""
    begin = max(starts[number - 1][0] + 1 if number else 0, index - _BODY_LINES)
    for above in range(index - 1, begin - 1, -1):
        started = _STARTED.match(lines[above])
        if started is not None:
            return above if test and started["id"] == test else None
    return None


def _beside(
    lines: list[str], starts: list[tuple[int, re.Match[str]]], number: int, last: frozenset[str]
) -> list[str]:
    """The lines of the *number*-th block: below its header, or above it.

    A runner that prints the failure before its verdict (``(fail) a > b``) has the block's
    lines above the header, back to the previous one.
    """
    index, match = starts[number]
    if match.lastgroup in last:
        begin = starts[number - 1][0] + 1 if number else 0
        return lines[max(begin, index - _BODY_LINES) : index]
    end = starts[number + 1][0] if number + 1 < len(starts) else len(lines)
    return lines[index + 1 : min(end, index + 1 + _BODY_LINES)]


_BRACKET = frozenset({"bracket"})
_VERDICT_LAST = frozenset({"paren"})
"""Headers a runner prints after the test's failure (``(fail) a > b [4ms]``): the lines
above them, back to the previous header, are the test's."""


def _merge(first: Block, later: Block) -> None:
    first.message = first.message or later.message
    first.pairs = first.pairs or later.pairs
    first.location = first.location or later.location
    first.verdict = first.verdict or later.verdict


def _block(match: re.Match[str], body: list[str]) -> Block | None:
    """Read one block: its id from the header (or the line below it), facts from its body."""
    kind = match.lastgroup or ""
    named = _id_of(kind, match, body)
    if named is None:
        return None
    test, where, body = named
    placed = _ID_AND_PLACE.match(test)
    if placed is not None:
        test, where = placed["id"], placed["loc"]
    if not test or len(test) > 200:  # noqa: PLR2004 -- an id, not a paragraph
        return None
    block = Block(test=test, location=where, weak=kind == "fail" and _is_weak(match, test))
    _read_body(block, _until_end(body))
    if kind in {"colon", "dots"}:
        block.verdict = clip(match.group(0).strip(), _MESSAGE_LIMIT)
    if kind == "atloc":  # `name: Test Failed at f:7`, then its Expression/Evaluated pair
        block.message = clip(match.group(0).strip(), _MESSAGE_LIMIT)
    if kind == "bare" and "message" in _fields(body):
        block.message = clip(_fields(body)["message"], _MESSAGE_LIMIT)
    if kind == "row":  # a runner's row: the verdict is the message when nothing else is
        block.verdict = clip(match.group(0).strip(), _MESSAGE_LIMIT)
    if kind == "frac":  # `1/2 name...expected 4, found 3`: the header says what failed
        block.message = clip(match.group(0).strip().split(" ", 1)[1], _MESSAGE_LIMIT)
    return block


_TEST_ID = Pattern(r"(?i)test|::|#|\w\.\w+\)| > | \u203a |/")
"""What a test's id holds and an error's message seldom does: ``test``, ``a::b``, ``C#m``,
``x (mod.Class)``, ``a > b``, ``a/b``."""


_WHERE_FIRST = Pattern(r"(?:in|at|on|while|during|from) ")
"""``ERROR in ./src/index.js 1:0-38`` (webpack): a place, not a test's id."""


_NO_TEST_ID = Pattern(
    r"^\d{4}[/-]\d\d[/-]\d\d\b|\((?:\w+(?:::|\.))*\w*(?:Error|Exception)\)|:$|^While\b"
)
"""What an error line holds and a test's id does not: a log's date first (``ERROR
2024/01/02 ...``), an exception's class in parentheses, a heading's closing colon."""


def _is_weak(match: re.Match[str], test: str) -> bool:
    """Whether an ``ERROR``/``FAIL`` header is an error line more likely than a test's."""
    if not match.group(0).lstrip().startswith("ERROR"):
        return False
    if _WHERE_FIRST.match(test) is not None or _NO_TEST_ID.search(test) is not None:
        return True
    return not _TEST_ID.search(test)


_Named = tuple[str, str, list[str]]
"""A block's test id, its location if the header prints one, and the body under it."""


def _numbered(match: re.Match[str], body: list[str]) -> _Named | None:
    test = match["num"].strip()
    if _ID_BELOW.match(test):  # minitest's `1) Failure:`: the id is on the next line
        if not body:
            return None
        test, body = body[0].strip(), body[1:]
    if test.endswith(":") and len(test) > 1:
        test = test[:-1]
    return test, "", body


def _below_its_place(match: re.Match[str], body: list[str]) -> _Named:
    """busted: the header is the location, the test's name is below."""
    return (body[0].strip() if body else ""), match["arrow"].strip(), body[1:]


def _by_its_fields(_match: re.Match[str], body: list[str]) -> _Named:
    """Rackunit's bare ``FAILURE``: the fields say which test, its place, else its name."""
    fields = _fields(body)
    return fields.get("location") or fields.get("name") or fields.get("test") or "", "", body


_ID_READERS: dict[str, Callable[[re.Match[str], list[str]], _Named | None]] = {
    "num": _numbered,
    "arrow": _below_its_place,
    "bare": _by_its_fields,
    # `#   Failed test 'name'`: the phrase is how the id is printed
    "perl": lambda m, body: (m.group(0).strip().lstrip("#").strip(), "", body),
    # the TAP line is the test's id: `not ok 3 - name`
    "tap": lambda m, body: (m.group(0).split(" #", 1)[0].strip(), "", body),
    "atloc": lambda m, body: (m["at"], m["atloc"], body),  # `name: Test Failed at f:7`
    "pname": lambda m, body: (m["pname"], m["ploc"], body),  # `Failure ('f.R:4'): name`
    # `f.scm:5: FAIL name`: the place is how the id is printed
    "lname": lambda m, body: (m.group(0).strip(), m["lloc"], body),
}
"""How a header shape prints its test's id, where that is not simply its group."""


def _id_of(kind: str, match: re.Match[str], body: list[str]) -> _Named | None:
    """The test's id as its header shape prints it, its location if printed there, the body."""
    reader = _ID_READERS.get(kind)
    if reader is not None:
        return reader(match, body)
    return (match[kind] or "").strip(), "", body


_FIELD = Pattern(r"^\s*(?P<key>[a-z]+):\s+(?P<value>\S.*?)\s*$")


def _fields(body: list[str]) -> dict[str, str]:
    """The ``key: value`` fields at the top of a block's body (rackunit, TAP's YAML)."""
    fields: dict[str, str] = {}
    for line in body:
        field = _FIELD.match(line)
        if field is None:
            break
        fields.setdefault(field["key"], field["value"].strip('"'))
    return fields


def _until_end(body: list[str]) -> list[str]:
    for index, line in enumerate(body):
        if _BODY_END.match(line.strip()):
            return body[:index]
    return body


def _read_body(block: Block, body: list[str]) -> None:
    """Fill in the block's message, expected/actual pair and location from its body."""
    pairs: list[str] = []
    first = strong = plain = ""
    for index, raw in enumerate(body):
        line = raw.strip().lstrip("#").strip()
        if not line or (strong and not _PAIR.match(line)):
            continue
        if _PAIR.match(line):
            pairs.append(clip(_with_value_below(line, body, index), 120))  # "Expected:" + value
        elif _NOISE.match(raw):
            continue
        elif not _is_message(line):
            if not plain and not _LOCATION.match(line):
                plain = line  # the first words under a header, when none reads as an error
        else:
            line = _with_value_below(line, body, index)  # "NoMethodError:" and its message
            strong = line if _STRONG.search(line) else ""
            first = first or line
    block.message = clip(strong or first or plain, _MESSAGE_LIMIT)
    block.pairs = dedupe(pairs)[:2]
    own = [
        loc for loc in find_locations("\n".join(body)) if not is_library_path(location_path(loc))
    ]
    declared = block.location or (own[0] if own else "")
    test_frame = _outermost_test_frame(body, declared)
    inside = next((loc for loc in own if _inside_the_test(loc, declared)), "")
    if test_frame:  # a stack printed innermost frame first, ending in the test's own line
        block.location = f"{declared}, in the test at {test_frame}"
    else:  # the assertion's frame further down the test's declared file
        block.location = f"{inside} (test at {declared})" if inside else declared


def _outermost_test_frame(body: list[str], shown: str) -> str:
    """The last place in a test file of the body's first run of lines holding new places.

    A stack printed innermost frame first (Ruby, Elixir) ends in the test's own line; the
    run ends at a blank line, so a warning printed after the block lends it no place, and a
    place already *shown* (the block's header) starts no run.
    """
    found: list[str] = []
    for line in body:
        if found and not line.strip():
            break
        found.extend(
            loc
            for loc in _line_locations(line)
            if loc not in shown
            and not is_library_path(location_path(loc))
            and _TEST_PATH.search(location_path(loc))
        )
    return found[-1] if found else ""


_TEST_PATH = Pattern(
    r"(?:^|/)(?:tests?|spec|__tests__)/|[_.-](?:test|spec)s?\.\w+$|(?:^|/)test_[^/]*$"
)
"""A test file's path: where a stack (innermost frame first) shows the test's own line."""


def _inside_the_test(place: str, declared: str) -> bool:
    """Whether *place* is a line further down the file of the test's declared place.

    A runner that names the test's declaration (``name => ./t.ts:4:6``) and prints the
    failing assertion's frame under it (``at file:///p/t.ts:5:3``): the assertion's line is
    where it failed.
    """
    if not place or place == declared:
        return False
    here, there = location_path(place), location_path(declared)
    same = here.rsplit("/", 1)[-1] == there.rsplit("/", 1)[-1]
    return same and _line_of(place) > _line_of(declared)


def _line_of(place: str) -> int:
    numbers = _LINE_NUMBER.findall(place[len(location_path(place)) :])
    return int(numbers[0]) if numbers else 0


_LINE_NUMBER = Pattern(r"\d+")


def _with_value_below(line: str, body: list[str], index: int) -> str:
    """A line ending in ``:`` joined to the line below it (past one blank), its value."""
    if not line.endswith(":"):
        return line
    below = [b.strip() for b in body[index + 1 : index + 3] if b.strip()]
    value = below[0] if below else ""
    return f"{line} {value}" if value else line
