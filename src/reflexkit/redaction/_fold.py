r"""Fold disguises out of a copy of the text, so the rules read what a reader would see.

A secret's name or its ``=`` can be written so no rule reads it, while a terminal, a
browser, a JSON parser or a person still does:

* escaped: ``password\\u003d...`` (JSON), ``\\x3d`` (Python, C), ``&#61;``, ``&#x3D;``,
  ``&equals;`` (HTML), the quotes around a value as ``\\u0022``, ``&quot;``;
* continued: a shell's ``\\`` at the end of a line (``sshpass -p \\``, the password on the
  next), which the shell removes with the line end;
* hidden inside: a zero-width space or joiner, a soft hyphen, a bidi control, a tag
  character, a combining mark, an escape sequence (a colour, an OSC 8 link) or a control
  character (NUL) in ``pass<here>word``: the terminal gate removes or shows it, and what
  is left on the screen reads ``password=...`` (a control character between two words,
  as in ``/proc/PID/environ``, is read as the separator it is there);
* look-alikes: full-width letters (U+FF30 for ``P``), a Cyrillic ``a`` (U+0430) in
  ``password``, mathematical letters.

:func:`fold` returns a copy with each of these replaced by what it stands for (or removed),
and a map from positions in the copy back to the text. The engine finds secrets in the copy
and replaces the same spans of the text, and nothing else. Text with none of these is not
copied; RE2 looks for them, so text without them costs one scan at hundreds of MB/s.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import itertools
import re
import unicodedata
from collections.abc import Callable, Iterator
from typing import Any

from reflexkit.redaction._prefilter import _CONTINUATION, _RE2, _re2_options

__all__ = ["fold"]

_ESCAPES = {
    "3d": "=",
    "3a": ":",
    "22": '"',
    "27": "'",
    "26": "&",
    "2f": "/",
    "20": " ",
}
_ENTITIES = {"equals": "=", "colon": ":", "quot": '"', "apos": "'", "amp": "&", "sol": "/"}
_DECIMAL = {"61": "=", "58": ":", "34": '"', "39": "'", "38": "&", "47": "/", "32": " "}
_OCTAL = {"075": "=", "072": ":", "042": '"', "047": "'"}

_INVISIBLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\u0300-\u036f"
    "\U0001bca0-\U0001bca3\U000e0000-\U000e007f\U000e0100-\U000e01ef"
)
"""Characters with no glyph of their own (zero-width, joiners, soft hyphen, bidi controls,
variation selectors, tags) and combining marks: nothing a reader sees between two letters."""


@functools.cache
def _look_alikes() -> dict[int, str]:
    """Letters and signs drawn like ASCII ones, each to the ASCII it imitates."""
    table: dict[int, str] = {}
    for low, high in (
        (0xFF01, 0xFF5E),  # full-width forms
        (0x1D400, 0x1D7FF),  # mathematical letters and digits
        (0x2100, 0x214F),  # letterlike symbols
        (0x24B6, 0x24E9),  # circled letters
        (0x1F130, 0x1F189),  # squared letters
        (0xFE50, 0xFE6B),  # small forms: U+FE66 is ``=``
        (0x1D2C, 0x1D6A),  # modifier letters: superscript capitals and small letters
        (0x2070, 0x209C),  # superscripts and subscripts
        (0x02B0, 0x02B8),  # modifier letters h, j, r, w, y
    ):
        for code in range(low, high + 1):
            plain = unicodedata.normalize("NFKC", chr(code))
            if len(plain) == 1 and plain.isascii() and plain.isprintable():
                table[code] = plain
    # Cyrillic, Greek and Latin letters drawn like ASCII ones, by code point
    for ascii_letter, codes in {
        "A": (0x0410, 0x0391),
        "a": (0x0430, 0x03B1, 0x0251),
        "B": (0x0412, 0x0392),
        "C": (0x0421,),
        "c": (0x0441, 0x03F2),
        "d": (0x0501,),
        "E": (0x0415, 0x0395),
        "e": (0x0435,),
        "G": (0x050C,),
        "g": (0x0261,),
        "H": (0x041D, 0x0397),
        "h": (0x04BB,),
        "I": (0x0406, 0x0399),
        "i": (0x0456, 0x03B9, 0x0131),
        "J": (0x0408,),
        "j": (0x0458, 0x03F3),
        "K": (0x041A, 0x039A),
        "k": (0x03BA,),
        "l": (0x04CF,),
        "M": (0x041C, 0x039C),
        "N": (0x039D,),
        "O": (0x041E, 0x039F),
        "o": (0x043E, 0x03BF),
        "P": (0x0420, 0x03A1),
        "p": (0x0440, 0x03C1),
        "Q": (0x051A,),
        "q": (0x051B,),
        "S": (0x0405,),
        "s": (0x0455,),
        "T": (0x0422, 0x03A4),
        "v": (0x03BD,),
        "W": (0x051C,),
        "w": (0x051D,),
        "X": (0x0425, 0x03A7),
        "x": (0x0445,),
        "Y": (0x04AE, 0x03A5),
        "y": (0x0443, 0x028F),
        "Z": (0x0396,),
    }.items():
        table.update(dict.fromkeys(codes, ascii_letter))
    small_capitals = {
        "a": 0x1D00, "b": 0x0299, "c": 0x1D04, "d": 0x1D05, "e": 0x1D07, "g": 0x0262,
        "h": 0x029C, "i": 0x026A, "j": 0x1D0A, "k": 0x1D0B, "l": 0x029F, "m": 0x1D0D,
        "n": 0x0274, "o": 0x1D0F, "p": 0x1D18, "r": 0x0280, "s": 0xA731, "t": 0x1D1B,
        "u": 0x1D1C, "v": 0x1D20, "w": 0x1D21, "y": 0x028F, "z": 0x1D22,
    }  # fmt: skip
    table.update({code: letter for letter, code in small_capitals.items()})
    table.update({0xA78A: "=", 0x2E40: "=", 0x2236: ":", 0xA789: ":", 0x02D0: ":"})
    return table


@functools.cache
def _fold_pattern() -> re.Pattern[str]:
    """:data:`_FOLD_SOURCE` compiled, on first use (the table costs milliseconds to build)."""
    return re.compile(_FOLD_SOURCE + "|(?P<l>[" + "".join(map(chr, sorted(_look_alikes()))) + "])")


_SPLIT_NAMES = (
    "password", "passwd", "passphrase", "secret", "token", "apikey", "api_key", "api-key",
    "authorization", "bearer", "credential", "cookie", "private_key", "access_key",
)  # fmt: skip
"""Words that make a name a secret's, which a narrow wrap may cut in two."""
_CUTS = {f"{word[:cut]}\\r?\\n{word[cut:]}" for word in _SPLIT_NAMES for cut in range(1, len(word))}
_SPLIT_SOURCE = "(?i:" + "|".join(sorted(_CUTS)) + ")"
_SPLIT_SOURCE += "|:\\r?\\n//|:/\\r?\\n/"  # a URL's ``://`` cut: ``postgres:`` / ``//app:...@``
_SPLIT_SOURCE += (
    "|(?i:key|password|passwd|secret|token)"  # ``key`` / ``= v`` and ``key =`` / `` v``
    "(?:[ \\t]{0,4}\\r?\\n[ \\t]{0,4}[=:]|[ \\t]{0,4}=\\r?\\n[ \\t]{1,4}[A-Za-z0-9+/])"
)
"""A secret's name cut by a line end with nothing between (``fold -w 20``: ``DB_PASS`` /
``WORD=...``): a terminal shows the two parts as one word across the wrap."""
_JUNCTION = re.compile(
    r"[A-Za-z_-][ \t]{0,4}\r?\n(?:[A-Za-z_-]|[ \t]{0,4}[=:])"
    r"|:/?\r?\n/|[A-Za-z][ \t]{0,4}=\r?\n[ \t]"
)
"""Where :data:`_SPLIT_SOURCE` may match: short ASCII text without one is not scanned."""

_FOLD_SOURCE = (
    r"\\(?:u00(?P<u>3[dDaA]|2[02367fF])|x(?P<x>3[dDaA]|2[02367fF])|(?P<o>07[25]|04[27])|/"
    r"|\r?\n)"  # a shell's line continuation: the shell reads on as if no line ended
    r"|&(?:#0*(?P<d>61|58|34|39|38|47|32);|#[xX]0*(?P<h>3[dDaA]|2[02367fF]);"
    r"|(?P<e>equals|colon|quot|apos|amp|sol);)"
    r"|\x1b\[[\x30-\x3f]{0,64}[\x20-\x2f]{0,16}[\x40-\x7e]"  # CSI: colours
    r"|\x1b[\]PX^_][^\x07\x1b\n]{0,1000}(?:\x07|\x1b\\)?"  # OSC (an OSC 8 link), DCS ...
    r"|\x1b[\x20-\x2f]{0,16}[\x30-\x7e]"
    r"|(?P<c>[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f])"
    "|[" + _INVISIBLE + "]"
    "|(?P<w>" + _SPLIT_SOURCE + ")"
)
"""One disguise: an escape of a separator or quote, an escape sequence, an invisible character,
a look-alike letter. In the common subset of ``re`` and RE2: RE2 scans for it (:func:`_spans`)."""


@functools.cache
def _scanner() -> Any:  # noqa: ANN401 -- google-re2 ships no type information
    """:func:`_fold_pattern` compiled by RE2 (a scan of its alternation at hundreds of MB/s)."""
    return None if _RE2 is None else _RE2.compile(_fold_pattern().pattern, options=_re2_options())


def _spans(text: str) -> Iterator[tuple[int, int]]:
    """The ``(start, end)`` of every disguise in *text*, in order."""
    scanner = _scanner()
    if scanner is None:  # pragma: no cover -- google-re2 is a dependency
        yield from (m.span() for m in _fold_pattern().finditer(text))
        return
    data = text.encode("utf-8", "surrogatepass")
    if len(data) == len(text):  # ASCII: bytes are characters
        yield from (m.span() for m in scanner.finditer(data))
        return
    last_byte = last_char = 0
    for match in scanner.finditer(data):
        start, end = match.span()
        last_char += len(data[last_byte:start].translate(None, _CONTINUATION))
        last_byte = start
        yield last_char, last_char + len(data[start:end].translate(None, _CONTINUATION))


def _escaped(code: str) -> str:
    return _ESCAPES[code.lower()]


_BY_GROUP: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("u", _escaped),
    ("x", _escaped),
    ("h", _escaped),
    ("d", _DECIMAL.__getitem__),
    ("o", _OCTAL.__getitem__),
    ("e", _ENTITIES.__getitem__),
    ("l", lambda letter: _look_alikes()[ord(letter)]),
)
"""What each group of :func:`_fold_pattern` stands for."""


def _replacement(match: re.Match[str]) -> str:
    groups = match.groupdict()
    for name, meaning in _BY_GROUP:
        if (found := groups[name]) is not None:
            return meaning(found)
    if groups["c"] is not None:
        return _control(match)
    if groups["w"] is not None:
        return match.group().replace("\r", "").replace("\n", "")
    return "/" if match.group() == "\\/" else ""


def _control(match: re.Match[str]) -> str:
    r"""A control character: gone inside a word (``pass\0word``), a separator between two.

    A terminal shows nothing for it, so ``pass<NUL>word`` reads ``password``; between
    ``...bYc`` and ``DB_PASS=`` (``/proc/PID/environ``) it separates two values.
    """
    text, start, end = match.string, match.start(), match.end()
    before = text[start - 1 : start]
    after = text[end : end + 1]
    inside = before.isalpha() and after.isalpha() and before.islower() == after.islower()
    return "" if inside else " "


_CONTROLS = bytes([*range(9), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])
_SHORT = 1 << 14
"""Up to this, an ASCII text is looked at in Python first (RE2 costs microseconds a call)."""


def _may_hide(text: str) -> bool:
    """Whether *text* may hold a disguise; ``False`` is certain (short ASCII text, none)."""
    if len(text) > _SHORT or not text.isascii():
        return True
    if "\\" in text or "&" in text or _may_list_argv(text) or _JUNCTION.search(text):
        return True
    data = text.encode("ascii")
    return len(data.translate(None, _CONTROLS)) != len(data)  # a control character


def _disguises(text: str) -> Iterator[tuple[int, int, str]]:
    """Each disguise of :data:`_FOLD_SOURCE` in *text*: its span and what it stands for."""
    for start, end in _spans(text):
        match = _fold_pattern().match(text, start)
        if match is None or match.end() != end:  # pragma: no cover -- the same pattern
            continue
        yield start, end, _replacement(match)


_ARGV_HINT = re.compile(r"""['"][ \t]*,?\s{0,40}['"]-""")
_ARGV = re.compile(
    r"""\[[ \t]*(?P<q>['"])(?:(?!(?P=q))[^\n\\]|\\.){0,1024}(?P=q)"""
    r"""(?:[ \t]*,?\s{0,40}(?P=q)(?:(?!(?P=q))[^\n\\]|\\.){0,1024}(?P=q)){1,256}"""
)
"""A list of quoted words: a command's argv as Python (``CalledProcessError``), strace,
JSON or Go's ``%q`` print it, also one word a line (pprint)."""
_ARGV_WORD = re.compile(r"""(?P<q>['"])(?:(?!(?P=q))[^\n\\]|\\.){0,1024}(?P=q)""")


def _may_list_argv(text: str) -> bool:
    """Whether *text* may hold a command's argv with a flag in it (one cheap scan)."""
    return ("'-" in text or '"-' in text) and _ARGV_HINT.search(text) is not None


def _argv_separators(text: str) -> Iterator[tuple[int, int, str]]:
    """The separators of each argv list that holds a flag, each read as the space it was.

    ``['mysql', '-u', 'root', '-pXq7...']`` reads ``mysql -u root -pXq7...`` in the copy, so
    the rules of command lines read the command as a shell would have run it.
    """
    if not _may_list_argv(text):
        return
    for found in _ARGV.finditer(text):
        words = list(_ARGV_WORD.finditer(text, found.start("q"), found.end()))
        if not any(word.group()[1:2] == "-" for word in words):
            continue
        for before, word in itertools.pairwise(words):
            yield before.end() - 1, word.start() + 1, " "


def fold(text: str) -> tuple[str, Callable[[int], int]] | None:
    """Return *text* with its disguises folded, and the map of positions back; ``None``: none.

    The map takes a position in the copy to the position in *text* of the same character
    (for a position just after a folded disguise, the position just after it in *text*).
    """
    if not _may_hide(text):
        return None
    pieces: list[str] = []
    after: list[int] = []  # where each folded disguise ends, in the copy
    shift: list[int] = []  # how many characters shorter the copy is from there on
    position = delta = 0
    for start, end, new in heapq.merge(_disguises(text), _argv_separators(text)):
        if start < position:  # inside one already folded
            continue
        pieces += (text[position:start], new)
        delta += end - start - len(new)
        after.append(end - delta)
        shift.append(delta)
        position = end
    if not pieces:
        return None
    pieces.append(text[position:])
    copy = "".join(pieces)

    def back(at: int) -> int:
        index = bisect.bisect_right(after, at)
        return at + (shift[index - 1] if index else 0)

    return copy, back
