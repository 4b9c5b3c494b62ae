"""The prefilter: which lines of a text the rules need to read, in one scan.

Every rule names a *trigger*; one combined pattern of them all, run by RE2 as one automaton,
finds the lines where a secret could be. Its unbounded repetitions are bounded first
(:func:`bounded`), so each search reads a fixed distance and the scan stays linear.

Bounded, the automaton is big: compiling it costs about 30 ms, in every process that redacts
anything, and most texts (a failing test, a hook's log line) hold no trigger at all. So a
short text is first searched with the same triggers loosened (every repetition's upper bound
dropped), which compiles in a tenth of the time: a text that pattern misses can't hold a
trigger (the bounded pattern matches less, never more), and comes back unread; only a text
it finds compiles and runs the bounded one. One search of a short text costs what the text
costs, whatever the repetitions.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Generator, Iterator
from typing import Any, Protocol

from reflexkit._pattern import Pattern

__all__ = ["Trigger", "bounded", "loosened"]

_CHUNK = 1 << 20
_CONTINUATION = bytes(range(0x80, 0xC0))
_QUICK_MAX = 1 << 16
"""Texts up to this many characters are searched with the loosened pattern first."""


class _Match(Protocol):
    def span(self) -> tuple[int, int]: ...


class _Pattern(Protocol):
    def finditer(self, data: bytes, /) -> Iterator[_Match]: ...
    def search(self, data: bytes, pos: int, /) -> _Match | None: ...


def _load_re2() -> Any:  # noqa: ANN401 -- google-re2 ships no type information
    """Return the ``re2`` module of google-re2, or ``None`` where it is not installed."""
    try:
        return importlib.import_module("re2")
    except ImportError:  # pragma: no cover -- a dependency; the stdlib fallback is slower
        return None


_RE2 = _load_re2()


def _re2_options() -> Any:  # noqa: ANN401 -- google-re2 ships no type information
    """RE2's options for the prefilter: room for its automaton, and no logging of its own.

    On some inputs (a bundle of certificates: long base64 lines) the automaton outgrows
    RE2's default 8 MiB and RE2 falls back to a slower matcher, printing "DFA out of memory"
    to the terminal of whatever command was reflecting. 32 MiB keeps it fast there; when
    even that is not enough the fallback is still correct, and quiet.
    """
    options = _RE2.Options()
    options.max_mem = 32 << 20
    options.log_errors = False
    return options


_OPEN_CLASS = Pattern(r"(?<!\\)\]([*+])")
_OPEN_GROUP = Pattern(r"(?<!\\)\)([*+])")
_OPEN_COUNT = Pattern(r"\{(\d+),\}")
_REACH = 64
"""How far one repetition in a trigger reaches: a name, a flag, a few words of a command."""
_LINE_REACH = 160
"""How far ``[^\\n]*`` reaches in a trigger (``mongo ... -p``)."""


@functools.cache
def bounded(pattern: str) -> str:
    """Return *pattern* with every unbounded repetition bounded, for the prefilter.

    RE2 scans in linear time per search, but a search for the leftmost match runs on while
    any thread that started earlier is alive: ``-[a-z-]*`` on a line of ``sk-sk-sk-...``
    stays alive to the line's end at every match, and the scan turns quadratic. Bounded,
    each search reads a fixed distance past its start, so the scan is linear in the text.
    A trigger only selects lines; the rules then read the whole line.
    """
    pattern = pattern.replace("[^\\n]*", f"[^\\n]{{0,{_LINE_REACH}}}")
    pattern = _OPEN_CLASS.sub(lambda m: f"]{{{int(m[1] == '+')},{_REACH}}}", pattern)
    pattern = _OPEN_GROUP.sub(lambda m: f"){{{int(m[1] == '+')},3}}", pattern)
    return _OPEN_COUNT.sub(lambda m: f"{{{m[1]},{int(m[1]) + _REACH}}}", pattern)


# What a pattern's text is made of, as far as repetition counts go: an escape, a character
# class (with its leading ``^`` and ``]``, named classes and escapes inside), or a count.
_PIECES = Pattern(
    r"\\.|\[\^?\]?(?:\[:[a-z]+:\]|\\.|[^\]\\])*\]|\{(\d+),\d+\}",
    re.DOTALL,
)


@functools.cache
def loosened(pattern: str) -> str:
    """Return *pattern* with the upper bound of every counted repetition dropped.

    ``x{2,40}`` becomes ``x{2,}``; a ``{`` escaped or inside a character class is text and
    stays. The result matches wherever *pattern* (or :func:`bounded` of it) matches. A
    pattern that quotes text (RE2's ``Q ... E`` escapes) comes back as it is.
    """
    if "\\Q" in pattern:
        return pattern
    return _PIECES.sub(lambda m: m[0] if m[1] is None else f"{{{m[1]},}}", pattern)


@functools.cache
def _automaton(pattern: str) -> _Pattern:
    """*pattern* compiled, once per process: every :class:`Trigger` of the same rules shares it.

    A command builds more than one redactor (the reflection service's, the gate's), each
    with the same triggers; compiling the automaton costs milliseconds, so it is done once.
    """
    if _RE2 is None:
        return re.compile(pattern.encode())
    return _RE2.compile(pattern, options=_re2_options())  # type: ignore[no-any-return]


class Trigger:
    """The prefilter: one combined pattern scanned once over the text.

    RE2 (google-re2, a dependency) runs the whole alternation as one automaton, about
    0.3 GB/s; Python's ``re`` tries each alternative at each position, about 1 MB/s for
    this table. The text is scanned in chunks of about 1 MB cut at line ends (no trigger
    spans a line), encoded to UTF-8, so the extra memory stays small whatever its size.
    Both automata are compiled when first needed (see the module docstring).

    Args:
        pattern: The combined triggers, their repetitions as the rules write them.
    """

    def __init__(self, pattern: str) -> None:
        self.source = pattern
        self.pattern = bounded(pattern)

    @functools.cached_property
    def _compiled(self) -> _Pattern:
        return _automaton(self.pattern)

    @functools.cached_property
    def _quick(self) -> _Pattern | None:
        return None if _RE2 is None else _automaton(loosened(self.source))

    def may_match(self, text: str) -> bool:
        """False only when no trigger can be in *text* (a short text, read once)."""
        if len(text) > _QUICK_MAX or (quick := self._quick) is None:
            return True
        return quick.search(text.encode("utf-8", "surrogatepass"), 0) is not None

    def spans(self, text: str) -> Generator[tuple[int, int], int | None, None]:
        """Yield the ``(start, end)`` of every trigger match in *text*, in order.

        Send a position to skip the matches before it (a region already withheld whole).
        """
        if not self.may_match(text):
            return
        position = 0
        size = len(text)
        while position < size:
            stop = text.find("\n", position + _CHUNK) if size - position > _CHUNK else -1
            stop = size if stop == -1 else stop + 1
            chunk = text if position == 0 and stop == size else text[position:stop]
            if chunk.isascii():
                data = chunk.encode("ascii")
                at = 0
                while (match := self._compiled.search(data, at)) is not None:
                    start, end = match.span()  # one call: RE2's are costly per hit
                    skip = yield position + start, position + end
                    at = max(end, start + 1, (skip or 0) - position)
            else:
                yield from self._unicode_spans(chunk, position)
            position = stop

    def _unicode_spans(self, chunk: str, offset: int) -> Iterator[tuple[int, int]]:
        """Map byte positions in the UTF-8 of *chunk* back to character positions."""
        data = chunk.encode("utf-8", "surrogatepass")
        last_byte = last_char = 0
        for match in self._compiled.finditer(data):
            start, end = match.span()
            last_char += len(data[last_byte:start].translate(None, _CONTINUATION))
            last_byte = start
            width = len(data[start:end].translate(None, _CONTINUATION))
            yield offset + last_char, offset + last_char + width
