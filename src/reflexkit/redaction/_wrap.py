"""The rest of a secret that went on to the next line: wrapped by ``fold``, base64, a terminal.

``fold -w 48``, ``base64 -w 76``, a PEM body, a terminal or a log viewer cut a long line at
a fixed width, so a key or a token goes on at the start of the next line. The rules find
the first part (``GITHUB_TOKEN=ghp_Zq4...``, which ends its line), or
:func:`wrapped_heads` does when the part is too short for a rule (``SLACK=xoxb-12345``, a
line that ends in a token's prefix or just after ``password=``); :func:`join_wrapped`
then removes what continues it: the word that starts the next line, with no indent, when it
reads as the rest of a token (8 characters or more, digits and letters alternating or a
digit among upper- and lower-case letters; not a hash, a UUID, a version, a date or a
path), and every following line while the lines are whole words of one width (the body of
a wrapped block). A word followed by ``=`` or ``:`` starts an assignment of its own, not
the rest of a value; a test's id a terminal wrapped keeps its parameters.
"""

from __future__ import annotations

from collections.abc import Callable

from reflexkit._pattern import Pattern
from reflexkit.redaction._shapes import _generated_looking, _looks_path

__all__ = ["join_wrapped", "wrapped_heads"]

_ENDS_LINE = Pattern(r"\[REDACTED:(?P<rule>[\w:.-]{1,80})\](?=\r?\n)")
"""A secret replaced up to the end of its line."""
_RUN = Pattern(r"[A-Za-z0-9+/_.~-]{1,8192}={0,2}")
"""A token's characters (base64, base64url, a JWT's dots), at the start of a line."""
_ENDS_RUN = frozenset(" \t\r\"'`,;)]}>@")
"""What may follow the rest of a token on its line (not ``=`` or ``:``: a name of its own)."""
_NOT_A_TAIL = Pattern(
    r"[0-9a-f]{7,12}|[0-9a-f]{40}|[0-9a-f]{64}"  # a commit or a digest (git, sha256sum)
    r"|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"  # a UUID
    r"|v?\d{1,6}(?:\.\d{1,6}){1,3}(?:[-+][\w.]{1,32})?"  # a version: 3.11.4, v1.2.3-rc1
    r"|\d{4}-\d\d-\d\d[\w:.+-]{0,32}|\d+"  # a date, a number
)
_SKIPPED_RULES = frozenset({"private_key", "dense", "cut_fragment"})
"""Replacements that end at a block's or a cut's boundary, never inside a token."""
_MIN_TAIL = 8


def _is_path(run: str) -> bool:
    """A path (``/usr/lib``, ``./src``, ``tests/test_x.py``), not base64 holding ``/``."""
    rooted = run.startswith(("/", "./", "../", "~"))
    return _looks_path(run) and (rooted or "." in run.rsplit("/", 1)[-1])


def _continues(run: str, *, in_block: bool = False) -> bool:
    """*run*, at the start of the line after a secret, reads as the rest of a token.

    *in_block*: the line ends a block of whole lines of one width (the short last line of a
    wrapped token), where a shorter run holding a digit and a letter is enough.
    """
    if _NOT_A_TAIL.fullmatch(run) or _is_path(run):
        return False
    digits = sum(c.isdigit() for c in run)
    letters = any(c.isalpha() for c in run)
    if in_block:
        return digits >= 1 and letters
    if len(run) < _MIN_TAIL:
        return False
    mixed_case = any(c.islower() for c in run) and any(c.isupper() for c in run)
    return _generated_looking(run) or (digits >= 1 and mixed_case)


_TAIL_REVERSED = Pattern(r"={0,2}[^\s\"'`,;()\[\]{}<>=:@]{1,256}")
"""The last word of a line, read backwards (one anchored match: linear in the word)."""


def _line_tail(body: str) -> tuple[int, str] | None:
    """Where the last word of *body* starts, and the word: the head a wrap may have cut."""
    backwards = body[-260:][::-1]
    found = _TAIL_REVERSED.match(backwards)
    if found is None:
        return None
    return len(body) - found.end(), backwards[: found.end()][::-1]


def _next_run(line: str) -> str | None:
    """The rest of a token that starts *line*, or ``None``."""
    line = line.rstrip("\r\n")
    run = _RUN.match(line)
    if run is None or (run.end() < len(line) and line[run.end()] not in _ENDS_RUN):
        return None
    return run.group() if _continues(run.group()) else None


def wrapped_heads(
    region: str, after: str, counts: dict[str, int], *, is_head: Callable[[str, str], bool]
) -> str:
    """Replace the last word of each line of *region* that starts a token the next line ends.

    Args:
        region: Lines the rules ran on (redacted), each ending in a newline but maybe the last.
        after: The text after *region* (its first line follows the region's last).
        counts: The per-rule counts; each head replaced counts as ``wrapped_secret``.
        is_head: Whether a word, after the text before it on its line, starts a secret
            (``xoxb-12``, or any word after ``password=``).
    """
    lines = region.splitlines(keepends=True)
    changed = False
    for index, line in enumerate(lines):
        if not line.endswith("\n") or line.rstrip("\r\n").endswith("]"):
            continue
        body = line.rstrip("\r\n")
        tail = _line_tail(body)
        if tail is None:  # ``password=`` or ``://user:`` ends the line: its value on the next?
            stripped = body.rstrip(" \t")  # ``key = `` cut after its space
            if not stripped.endswith(("=", ":")) or not is_head("x", stripped):
                continue
            tail = (len(body), "")
        elif tail[1].isdigit() or not is_head(tail[1], body[: tail[0]]):
            continue
        following = (
            lines[index + 1] if index + 1 < len(lines) else after[: after.find("\n") + 1 or None]
        )
        if _next_run(following) is None:
            continue
        lines[index] = f"{body[: tail[0]]}[REDACTED:wrapped_secret]{line[len(body) :]}"
        counts["wrapped_secret"] = counts.get("wrapped_secret", 0) + 1
        changed = True
    return "".join(lines) if changed else region


def join_wrapped(text: str, counts: dict[str, int]) -> str:
    """Remove the rest of each secret that a wrap carried to the next lines (module docs).

    Args:
        text: Redacted text.
        counts: The per-rule counts, incremented for each rest removed.
    """
    if "]\n" not in text and "]\r\n" not in text:
        return text
    pieces: list[str] = []
    position = 0
    for match in _ENDS_LINE.finditer(text):
        rule = match.group("rule")
        if match.start() < position or rule in _SKIPPED_RULES:
            continue
        at = text.index("\n", match.end()) + 1
        width = -1
        while at < len(text):
            line_end = text.find("\n", at)
            line = text[at : len(text) if line_end == -1 else line_end].rstrip("\r")
            run = _RUN.match(line)
            if run is None:
                break
            whole = run.end() == len(line)
            if not whole and line[run.end()] not in _ENDS_RUN:
                break
            if len(line) != width and not _continues(run.group(), in_block=width != -1):
                break
            pieces += (text[position:at], f"[REDACTED:{rule}]")
            position = at + run.end()
            counts[rule] = counts.get(rule, 0) + 1
            if not whole or line_end == -1 or (width != -1 and len(line) != width):
                break  # the last line of the block
            width = len(line)
            at = line_end + 1
    if not pieces:
        return text
    pieces.append(text[position:])
    return "".join(pieces)
