"""Head-and-tail windows of long text, and the edits that redaction applies to it."""

from __future__ import annotations

import re

from reflexkit._pattern import Pattern

MAX_OUTPUT_CHARS = 200_000
"""How much redacted failure output :meth:`Redactor.redact_failure` keeps (head and tail)."""

_HEAD_SHARE = 0.3

CUT_LINE = Pattern(r"^[ \t]*\[(?:\.\.\.|…)[^\n\]]{0,200}?(?:\.\.\.|…)\][ \t]*$", re.MULTILINE)
"""A window boundary: a line such as ``[... 1234 characters cut ...]`` left by a head+tail cut."""

_NEAR = 300
"""How far around a trigger a long line is read: a name, its separator and a long value."""

_Edit = tuple[int, int, str]


def _apply(text: str, edits: list[_Edit], start: int, stop: int) -> str:
    """Return ``text[start:stop]`` with the edits inside it applied."""
    pieces: list[str] = []
    position = start
    for e_start, e_end, new in edits:
        if e_end <= start or e_start >= stop:
            continue
        pieces.append(text[position:e_start])
        pieces.append(new)
        position = e_end
    pieces.append(text[position:stop])
    return "".join(pieces)


def _cut_points(text: str, edits: list[_Edit], max_chars: int) -> tuple[int, int]:
    """Choose where the head ends and the tail starts, in *text*'s own positions.

    Both fall at line ends where there is one near, and never inside an edit.
    """
    head_room = int(max_chars * _HEAD_SHARE)
    tail_room = max_chars - head_room
    head_end = _position_after(text, edits, head_room, forward=True)
    tail_start = _position_after(text, edits, tail_room, forward=False)
    newline = text.rfind("\n", 0, head_end)
    if newline > head_end - head_room // 2:
        head_end = newline + 1
    newline = text.find("\n", tail_start)
    if newline != -1 and newline < tail_start + tail_room // 2:
        tail_start = newline + 1
    for e_start, e_end, _ in edits:
        if e_start < head_end < e_end:
            head_end = e_start
        if e_start < tail_start < e_end:
            tail_start = e_end
    return head_end, max(tail_start, head_end)


def _position_after(text: str, edits: list[_Edit], room: int, *, forward: bool) -> int:
    """The position in *text* where *room* characters of redacted text end (or begin)."""
    if forward:
        position, left = 0, room
        for e_start, e_end, new in edits:
            if e_start - position >= left:
                break
            left -= e_start - position + len(new)
            position = e_end
            if left <= 0:
                return position
        return min(position + left, len(text))
    position, left = len(text), room
    for e_start, e_end, new in reversed(edits):
        if position - e_end >= left:
            break
        left -= position - e_end + len(new)
        position = e_start
        if left <= 0:
            return position
    return max(position - left, 0)


def window(text: str, max_chars: int) -> str:
    """Keep the head and the tail of already redacted *text*, cut at line ends.

    The cut is marked by a ``[... N characters cut ...]`` line, which :class:`Redactor`
    reads as a window boundary.
    """
    if len(text) <= max_chars:
        return text
    head_end, tail_start = _cut_points(text, [], max_chars)
    head, tail = text[:head_end], text[tail_start:]
    separator = "" if head.endswith("\n") or not head else "\n"
    cut = len(text) - len(head) - len(tail)
    return f"{head}{separator}[... {cut} characters cut ...]\n{tail}"
