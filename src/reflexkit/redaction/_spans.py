"""Where a rule reads: the line around a position, its neighbours, and the gaps between edits.

A long line is cut at the delimiter nearest a position, not scanned whole; a region can take
the lines of context its rule needs. The engine (``_engine``) asks; docs/reflections.md has
the rest.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from reflexkit.redaction._windows import (
    _NEAR,
    CUT_LINE,
    _Edit,
)

_LONG_LINE = 4096
"""Past this, a line is read near its trigger only (a minified file, output without newlines)."""
_DELIMITERS = " \t\n\r\f\v\"'<>,;"
"""Where a long token ends."""


def _line_start_near(text: str, position: int) -> int:
    """The start of the line holding *position*; on a very long line, a word start near it."""
    low = max(position - _LONG_LINE, 0)
    newline = text.rfind("\n", low, position)
    if newline != -1 or low == 0:
        return newline + 1
    near = max(position - _NEAR, 0)
    space = text.find(" ", near, position)
    return space + 1 if space != -1 else near


def _line_end_near(text: str, position: int) -> int:
    """Just past the line holding *position*; on a very long line, a word end near it."""
    high = min(position + _LONG_LINE, len(text))
    newline = text.find("\n", position, high)
    if newline != -1:
        return newline + 1
    if high == len(text):
        return high
    near = min(position + _NEAR, len(text))
    space = text.rfind(" ", position, near)
    if space != -1:
        return space
    # A long token: read it to its end. One ``find`` per delimiter (memchr) rather than a
    # regular expression: a line of a thousand triggers asks this a thousand times.
    stops = [at for c in _DELIMITERS if (at := text.find(c, near, high)) != -1]
    return min(stops, default=high)


def _line_end(text: str, position: int) -> int:
    """The index just past the line holding *position*, its newline included."""
    newline = text.find("\n", position)
    return len(text) if newline == -1 else newline + 1


def _boundaries(text: str, start: int, stop: int) -> Iterator[re.Match[str]]:
    """The cut lines between *start* and *stop* (found by their literal start first)."""
    for opener in ("[...", "[…"):
        position = text.find(opener, start, stop)
        while position != -1:
            line_start = _line_start_near(text, position)
            found = CUT_LINE.match(text, line_start, _line_end_near(text, position))
            if found is not None and found.start() >= start:
                yield found
            position = text.find(opener, position + 1, stop)


def _next_boundary(text: str, start: int, stop: int) -> int | None:
    """The start of the first cut line after *start*, before *stop*."""
    found = [m.start() for m in _boundaries(text, start, stop)]
    return min(found) if found else None


def _previous_boundary(text: str, start: int, stop: int) -> int | None:
    """Just past the last cut line between *start* and *stop*."""
    found = [m.end() for m in _boundaries(text, start, stop)]
    if not found:
        return None
    last = max(found)
    return last + 1 if text[last : last + 1] == "\n" else last


def cut_lines(text: str) -> list[tuple[int, int]]:
    """Return the ``(start, end)`` of every window boundary line in *text*."""
    return sorted((m.start(), m.end()) for m in _boundaries(text, 0, len(text)))


_CONTEXT_MARKERS = (
    "machine",
    "default",
    '"sensitive"',
    ": |",
    ": >",
    ":|",
    ":>",
    " |\n",  # ``password: !!binary |``: a YAML tag before the block
    " >\n",
    "]=>",
    "name:",  # a Kubernetes env entry: ``- name: DB_PASSWORD`` then ``value: ...``
    ": some(",  # Rust's {:#?}: ``password: Some(`` then the value on the next line
    "name =",
    "<name>",  # Maven's ``<name>Private-Token</name>`` then ``<value>...</value>``
    "eyj",  # a JWT wrapped at the line's end: its payload or signature on the next line
)
"""Lines holding these start a secret spread over the next lines (``.netrc``, Terraform JSON)."""


def _with_context(text: str, regions: list[tuple[int, int]], lines: int) -> list[tuple[int, int]]:
    """Extend each region over the next *lines* lines (multi-line ``.netrc`` entries)."""
    out: list[tuple[int, int]] = []
    for start, end in regions:
        stop = end
        lowered = text[start:end].lower()
        if any(marker in lowered for marker in _CONTEXT_MARKERS):
            for _ in range(lines):
                if stop >= len(text) or CUT_LINE.match(text, stop, _line_end_near(text, stop)):
                    break  # a secret never goes on across a cut: its halves are read apart
                stop = _line_end_near(text, stop)
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], stop))
        else:
            out.append((start, stop))
    return out


def _outside(regions: list[tuple[int, int]], edits: list[_Edit]) -> Iterator[tuple[int, int]]:
    """The parts of *regions* that no block edit covers (both are whole lines)."""
    if not edits:
        yield from regions
        return
    for start, end in regions:
        position = start
        for e_start, e_end, _ in edits:
            if e_end <= position or e_start >= end:
                continue
            if e_start > position:
                yield position, e_start
            position = max(position, e_end)
        if position < end:
            yield position, end
