"""Redaction: secrets out of failure output before it is stored, printed or sent anywhere.

Three layers, each replacing a secret by ``[REDACTED:<rule>]``:

1. **Multi-line secrets**: PEM, OpenSSH, SSH2 and PGP private key blocks and PuTTY key
   bodies are removed whole, from the line of their ``BEGIN`` to the line of their ``END``.
   Output may reach us already windowed (head and tail kept, a ``[... N characters cut ...]``
   line between them): a block whose ``BEGIN`` has no ``END`` before the next window
   boundary (a cut line or the end of the text) is removed up to that boundary, and an
   ``END`` with no ``BEGIN`` after the previous boundary is removed from it.
2. **Environment values**: the exact values of the running process's secret-looking
   environment variables (``DB_PASSWORD``, ``DEPLOY_TOKEN`` ...), captured once when the
   :class:`Redactor` is built, so a leaked value is caught even when it has no known shape.
3. **Rules** (:data:`RULES`), each written from a token format's public description:
   prefixes, lengths and alphabets of cloud and API keys, auth headers, URL credentials,
   command-line passwords and ``name=value`` pairs whose name says secret.

Cost is bounded by a prefilter: one pass of a combined trigger pattern finds the few lines
where a secret could be (a token prefix, a secret-looking name followed by ``=`` or ``:``,
``://...@`` ...); the rules run on those lines alone (in a big region, each near its own
triggers). Text without a trigger is returned as is, without a copy.

The counts per rule (never the values) are returned, so they can go on the reflection
record. Paths, test names, git hashes, UUIDs, digests and ordinary words stay untouched.
"""

from __future__ import annotations

import bisect
import functools
import os
import re
from collections.abc import Generator, Mapping
from urllib.parse import quote

import attrs

from reflexkit._pattern import Pattern
from reflexkit.models import FailureContext
from reflexkit.redaction._fold import fold
from reflexkit.redaction._prefilter import Trigger
from reflexkit.redaction._rules import RULES, Redacted, Rule
from reflexkit.redaction._rules._patterns import (
    _B64_TAIL,
    _BLOCK,
    _BLOCK_RULE,
    _BLOCK_TRIGGER,
    _KEY_BODY,
    _KEY_TEXT_LINES,
    _STDIN_READER,
)
from reflexkit.redaction._shapes import (
    _NUMBERS,
    _PLACEHOLDER,
    _TEMPLATED,
    _URL_VALUE,
    _is_aws_secret,
    _looks_path,
    _name_strength,
    _randomish,
)
from reflexkit.redaction._spans import (
    _LONG_LINE,
    _line_end,
    _line_end_near,
    _line_start_near,
    _next_boundary,
    _outside,
    _previous_boundary,
    _with_context,
)
from reflexkit.redaction._spread import _PAIR_VALUE, _spread
from reflexkit.redaction._windows import (
    CUT_LINE,
    MAX_OUTPUT_CHARS,
    _apply,
    _cut_points,
    _Edit,
    window,
)
from reflexkit.redaction._wrap import join_wrapped, wrapped_heads

# --- environment ----------------------------------------------------------------------------

_NOT_SECRET_ENV = Pattern(
    r"^(?:SSH_AUTH_SOCK|XAUTHORITY|GPG_AGENT_INFO|KEYTIMEOUT|GIT_ASKPASS|SSH_ASKPASS|SUDO_ASKPASS)$"
)
_ENV_MIN, _ENV_MAX = 8, 8192


def env_secrets(env: Mapping[str, str]) -> dict[str, str]:
    """Return ``{value: name}`` of the secret-looking variables worth searching for."""
    values: dict[str, str] = {}
    for name, value in env.items():
        bare = value.strip()
        strength = _name_strength(name.replace("-", "_"))
        if (
            _NOT_SECRET_ENV.match(name)
            or strength == 0
            or (strength == 1 and not _randomish(bare))  # SESSION_ENGINE=django.contrib...
            or not _ENV_MIN <= len(bare) <= _ENV_MAX
            or "\n" in bare
        ):
            continue
        if not _is_aws_secret(bare) and (
            _looks_path(bare)
            or _PLACEHOLDER.match(bare)
            or _TEMPLATED.match(bare)
            or _URL_VALUE.match(bare)
            or _NUMBERS.fullmatch(bare)
        ):
            continue
        values.setdefault(bare, name)
        encoded = quote(bare, safe="")
        if encoded != bare:
            values.setdefault(encoded, name)
    return values


# --- the engine -----------------------------------------------------------------------------


class Redactor:
    """Replaces secrets in text; see the module documentation for what counts as one.

    Args:
        environ: Where secret-looking variables are read from, once, at construction;
            ``os.environ`` by default. Pass ``{}`` to use the rule table alone.
        rules: The rule table (the default is :data:`RULES`).
        max_output_chars: How much of a failure's redacted output
            :meth:`redact_failure` keeps, head and tail (``None``: all of it).
    """

    def __init__(
        self,
        *,
        environ: Mapping[str, str] | None = None,
        rules: tuple[Rule, ...] = RULES,
        max_output_chars: int | None = MAX_OUTPUT_CHARS,
    ) -> None:
        env = os.environ if environ is None else environ
        values = env_secrets(env)
        ordered = sorted(values, key=lambda v: (-len(v), v))
        self._env_names = values
        self._env_pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        self._rules = rules
        by_keyword: dict[str, set[int]] = {}
        for index, rule in enumerate(rules):
            for marker in rule.keywords:
                by_keyword.setdefault(marker, set()).add(index)
        self._markers = [(marker, frozenset(ids)) for marker, ids in by_keyword.items()]
        self._unmarked = frozenset(i for i, rule in enumerate(rules) if not rule.keywords)
        self.max_output_chars = max_output_chars
        triggers = [_BLOCK_TRIGGER, _CUT_TRIGGER, *(f"(?:{r.trigger})" for r in rules)]
        if ordered:
            triggers.append("|".join(map(re.escape, ordered)))
        self._trigger = Trigger("|".join(triggers))
        self._context = max((r.context_lines for r in rules), default=0)

    # --- public -----------------------------------------------------------------------------

    def redact(self, text: str) -> Redacted:
        """Return *text* with every secret replaced by ``[REDACTED:<rule>]``.

        Args:
            text: Any text: tool output, a command line, a description.

        Returns:
            The redacted text and the per-rule counts.
        """
        counts: dict[str, int] = {}
        edits = self._edits(text, counts)
        if not edits:
            return Redacted(text, counts)
        return Redacted(join_wrapped(_apply(text, edits, 0, len(text)), counts), counts)

    def may_find(self, text: str) -> bool:
        """False only when :meth:`redact` would return *text* unchanged: no trigger, no disguise.

        One scan, for the gate's quick look at the texts of a record together.
        """
        return self._trigger.may_match(text) or fold(text) is not None

    def redact_window(self, text: str, max_chars: int) -> Redacted:
        """Redact all of *text*, then keep the head and the tail of the result.

        Text much longer than *max_chars* is cut first (head and tail, a little more than
        is kept), so the cost is bounded by *max_chars*, not by the input: 32 MiB of output
        costs what 250 KB does. Secrets are then found in what is left, so a secret that
        straddles the final cut is removed whole and counted; a secret cut in half by the
        first cut is removed by its half (the cut line is a window boundary). The counts are
        those of the kept text.

        Args:
            text: Any text.
            max_chars: About how many characters to keep; the cut falls at line ends and
                is marked by a ``[... N characters cut ...]`` line.
        """
        if len(text) > max(_PRECUT * max_chars, _PRECUT_MIN):  # bounded work
            text = window(text, max_chars + max_chars // 4)
        counts: dict[str, int] = {}
        edits = self._edits(text, counts)
        size = len(text) + sum(len(new) - (end - start) for start, end, new in edits)
        if size <= max_chars:
            if not edits:
                return Redacted(text, counts)
            return Redacted(join_wrapped(_apply(text, edits, 0, len(text)), counts), counts)
        head_end, tail_start = _cut_points(text, edits, max_chars)
        head = _apply(text, edits, 0, head_end)
        tail = _apply(text, edits, tail_start, len(text))
        cut = size - len(head) - len(tail)
        separator = "" if head.endswith("\n") or not head else "\n"
        kept = f"{head}{separator}[... {cut} characters cut ...]\n{tail}"
        return Redacted(join_wrapped(kept, counts) if edits else kept, counts)

    def redact_failure(self, failure: FailureContext) -> tuple[FailureContext, dict[str, int]]:
        """Redact a failure's error output, command and description.

        The output is redacted whole, then cut to :attr:`max_output_chars` (head and tail).

        Returns:
            The redacted failure and the per-rule counts summed over the three fields.
        """
        total: dict[str, int] = {}
        limit = self.max_output_chars
        output = (
            self.redact_window(failure.error_output, limit)
            if limit is not None
            else self.redact(failure.error_output)
        )
        command, description = self.redact(failure.command), self.redact(failure.description)
        for result in (output, command, description):
            for rule, count in result.counts.items():
                total[rule] = total.get(rule, 0) + count
        if (
            output.text is failure.error_output
            and command.text is failure.command
            and description.text is failure.description
        ):
            return failure, total
        clean = attrs.evolve(
            failure,
            error_output=output.text,
            command=command.text,
            description=description.text,
        )
        return clean, total

    __call__ = redact_failure

    # --- finding --------------------------------------------------------------------------

    def _edits(self, text: str, counts: dict[str, int]) -> list[_Edit]:
        """Return the replacements for *text* as sorted, disjoint ``(start, end, new)``.

        Secrets are looked for in *text* with its disguises folded (:func:`fold`: escaped
        separators, invisible characters and look-alike letters in a name); each edit
        replaces the same span of *text*.
        """
        folded = fold(text)
        if folded is None:
            return self._found_edits(text, counts)
        copy, back = folded
        edits: list[_Edit] = []
        for start, end, new in self._found_edits(copy, counts):
            spans = _replaced(copy[start:end], new)
            if spans is None:  # not told apart: the region goes in its folded form
                edits.append((back(start), back(end), new))
                continue
            edits += ((back(start + a), back(start + b), mark) for a, b, mark in spans)
        return edits

    def _found_edits(self, text: str, counts: dict[str, int]) -> list[_Edit]:
        """:meth:`_edits` on text without disguises."""
        found = self._candidates(text)
        edits = self._block_edits(text, found.blocks, counts) if found.blocks else []
        regions = found.regions
        if any(found.withheld):
            edits, regions = _withhold_dense(text, found, edits, counts)
        if self._context:
            regions = _with_context(text, regions, self._context)
        changed: list[_Edit] = []
        found_values: dict[str, str] = {}  # each secret value a rule found -> the rule
        carried: set[int] = set()  # starts of lines after a cut whose first word must go
        for start, end in _outside(sorted(regions), edits):
            old = text[start:end]
            new = self._redact_region(old, counts, found_values)
            if end in found.before_cut or start in found.after_cut:
                new, carry = _redact_fragments(
                    new,
                    counts,
                    tail=end in found.before_cut,
                    head=start in found.after_cut,
                    carried=start in carried,
                )
                if carry:
                    carried.add(_line_end(text, end))
            if end < len(text) and text[end - 1] == "\n":  # the next line may end a token
                new = wrapped_heads(
                    new, text[end : end + _LONG_LINE], counts, is_head=_starts_secret
                )
            elif "\n" in new.rstrip("\n"):
                new = wrapped_heads(new, "", counts, is_head=_starts_secret)
            if new != old:
                changed.append((start, end, new))
        merged = sorted(edits + changed)
        return _spread(text, merged, found_values, counts) if found_values else merged

    def _candidates(self, text: str) -> _Candidates:
        """Scan *text* once: key block markers, cut lines, and the lines to run rules on."""
        found = _Candidates()
        regions = found.regions
        spans = self._trigger.spans(text)
        skip: int | None = None
        while (span := _advance(spans, skip)) is not None:
            start, end = span
            skip = None
            if _BLOCK_TRIGGER_RE.fullmatch(text, start, end):
                found.blocks.append(start)
                continue
            if found.dense(start):  # withheld whole: jump to the end of its line
                skip = _line_end_near(text, end)
                regions[-1] = (regions[-1][0], max(regions[-1][1], skip))
                continue
            line_start = _line_start_near(text, start)
            line_end = _line_end_near(text, end)
            if not text.startswith(("[...", "[…"), start):
                own_end = line_end
                line_start, line_end = _extend(text, start, end, line_start, line_end)
                if line_end > own_end and _BASE64_KEY.match(text, start):
                    skip = line_end  # a key's wrapped base64 lines: read once, not once per line
                hits, first, withheld = 1, start, False
                while regions and regions[-1][1] >= line_start:  # overlaps: one region
                    line_start = min(line_start, regions[-1][0])
                    line_end = max(line_end, regions.pop()[1])
                    hits += found.hits.pop()
                    first = found.first.pop()
                    withheld = found.withheld.pop() or withheld
                regions.append((line_start, line_end))
                found.hits.append(hits)
                found.first.append(first)
                found.withheld.append(withheld or _dense(hits, start - first))
            elif CUT_LINE.match(text, line_start, line_end) is not None:
                if line_start > 0:  # the line before the cut may end in half a secret
                    found.before_cut.add(line_start)
                    _add_region(found, _line_start_near(text, line_start - 1), line_start)
                if line_end < len(text):  # and the line after may start with the rest
                    found.after_cut.add(line_end)
                    _add_region(found, line_end, _line_end_near(text, line_end))
        return found

    def _redact_region(self, text: str, counts: dict[str, int], found: dict[str, str]) -> str:
        """Apply the environment values and the rules to a few lines of text.

        Terminal escape sequences (colour codes around a name, its ``=`` and its value) are
        removed before the rules run; lines where nothing was found keep them.
        """
        if "\x1b" in text:
            plain = _ANSI.sub("", text)
            redacted = self._redact_plain(plain, counts, found)
            return text if redacted is plain else redacted
        return self._redact_plain(text, counts, found)

    def _redact_plain(self, text: str, counts: dict[str, int], found: dict[str, str]) -> str:
        """:meth:`_redact_region` on text without escape sequences; *text* itself if clean."""
        original = text
        if self._env_pattern is not None:
            names = self._env_names

            def env_sub(match: re.Match[str]) -> str:
                rule = f"env:{names[match.group(0)]}"
                counts[rule] = counts.get(rule, 0) + 1
                return f"[REDACTED:{rule}]"

            text = self._env_pattern.sub(env_sub, text)
        for _ in range(_PASSES):  # a redaction may expose a shape a rule before it rejected
            before = text
            lowered = (_PLACEHOLDERS.sub("", text) if "[REDACTED:" in text else text).lower()
            selected = {i for marker, rules in self._markers if marker in lowered for i in rules}
            ids = _TestIds()  # read once a pass, moved along as the rules replace text
            for index in sorted(selected | self._unmarked):
                rule = self._rules[index]
                if rule.gate is None or rule.gate.search(text) is not None:
                    text = _apply_rule(rule, text, counts, found, ids)
            if text == before:
                break
        if "[REDACTED:" in text and "\n" in text:
            text = _WRAPPED_TAIL.sub(lambda m: _redact_tail(m, counts), text)
        return original if text == original else text

    def _block_edits(self, text: str, hits: list[int], counts: dict[str, int]) -> list[_Edit]:
        """Remove private key blocks whole, and their parts cut off by a window boundary."""
        tokens = _block_markers(text, hits)
        edits: list[_Edit] = []
        window_start = 0
        for index, (start, end, is_begin) in enumerate(tokens):
            if start < window_start:
                continue
            if is_begin:
                closing = next((t for t in tokens[index + 1 :] if not t[2] and t[0] >= end), None)
                span = _block_to_end(text, start, end, closing)
            else:  # an END with no BEGIN since the window began: remove from the boundary
                boundary = _previous_boundary(text, window_start, start)
                span = (boundary if boundary is not None else window_start, end, _BLOCK_MARK)
            counts[_BLOCK_RULE] = counts.get(_BLOCK_RULE, 0) + 1
            edits.append(span)
            window_start = span[1]
        return edits


_BLOCK_MARK = f"[REDACTED:{_BLOCK_RULE}]"


def _block_markers(text: str, hits: list[int]) -> list[tuple[int, int, bool]]:
    """The ``BEGIN`` and ``END`` markers near *hits*, in order: ``(start, end, is_begin)``."""
    found_tokens: set[tuple[int, int, bool]] = set()
    for hit in hits:  # a marker starts at most a few dozen characters before its hit
        for found in _BLOCK.finditer(text, max(hit - 80, 0), min(hit + 80, len(text))):
            putty = found.group("putty")
            is_begin = found.group("kind") == "BEGIN" if putty is None else "Lines" in putty
            found_tokens.add((found.start(), found.end(), is_begin))
    return sorted(found_tokens)


def _block_to_end(text: str, start: int, end: int, closing: tuple[int, int, bool] | None) -> _Edit:
    """The edit of a block from its ``BEGIN`` (*start*..*end*) to *closing* or a boundary."""
    stop = closing[0] if closing is not None else len(text)
    boundary = _next_boundary(text, end, stop)
    if closing is not None and boundary is None:
        return (start, closing[1], _BLOCK_MARK)
    # cut off by a boundary: remove up to it, keep the cut line's own line
    span_end = boundary if boundary is not None else len(text)
    newline = "\n" if text[span_end - 1 : span_end] == "\n" else ""
    return (start, span_end, _BLOCK_MARK + newline)


def _withhold_dense(
    text: str, found: _Candidates, edits: list[_Edit], counts: dict[str, int]
) -> tuple[list[_Edit], list[tuple[int, int]]]:
    """Replace the dense regions whole (see ``_DENSE_SPACING``); return the edits and the rest."""
    rest: list[tuple[int, int]] = []
    withheld: list[_Edit] = []
    for (start, end), dense in zip(found.regions, found.withheld, strict=True):
        if not dense:
            rest.append((start, end))
            continue
        newline = "\n" if text[end - 1 : end] == "\n" else ""
        withheld.append((start, end, f"[REDACTED:dense]{newline}"))
        counts["dense"] = counts.get("dense", 0) + 1
    kept = [e for e in edits if not any(a <= e[0] < b for a, b, _ in withheld)]
    return sorted(kept + withheld), rest


def _redact_tail(match: re.Match[str], counts: dict[str, int]) -> str:
    """Replace the tail of a wrapped quoted value whose head a rule removed."""
    tail = match.group("tail")
    if not (any(c.isdigit() for c in tail) and any(c.isalpha() for c in tail)):
        return match.group()  # a word: the next line's own text, not half a token
    rule = match.group("rule")
    counts[rule] = counts.get(rule, 0) + 1
    start = match.start("tail") - match.start()
    return f"{match.group()[:start]}[REDACTED:{rule}]{match.group('quote')}"


def _replaced(old: str, new: str) -> list[_Edit] | None:
    """The spans of *old* that *new* replaced by ``[REDACTED:<rule>]``, or ``None``.

    The rest of the region (its bidi controls, colours, escapes) then keeps its own form;
    ``None`` when *new* is not *old* with placeholders put in (colours removed with them).
    """
    parts = _PLACEHOLDERS_SPLIT.split(new)
    if not old.startswith(parts[0]):
        return None
    position, spans = len(parts[0]), []
    for index in range(1, len(parts), 2):
        mark, segment = parts[index], parts[index + 1]
        last = index + 2 >= len(parts)
        if last:
            found = len(old) - len(segment) if old.endswith(segment) else -1
        else:
            found = old.find(segment, position) if segment else -1
        if found < position:
            return None
        spans.append((position, found, mark))
        position = found + len(segment)
    return spans if position == len(old) else None


_PLACEHOLDERS_SPLIT = Pattern(r"(\[REDACTED:[\w:.-]+\])")

_PRECUT = 2
_PRECUT_MIN = 1 << 16
"""Text over ``_PRECUT`` times the window (and 64 KiB) is cut before it is read
(:meth:`Redactor.redact_window`)."""

_PASSES = 3
"""How often the rules run over a region that changed: to a fixed point, so redacting twice
changes nothing more, with a bound for the pathological."""

_PLACEHOLDERS = Pattern(r"\[REDACTED:[\w:.-]+\]")
"""Our own replacements: never the context (``secret``, ``token``) that lets a rule run."""

_ANSI = Pattern(
    r"\x1b\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]"  # CSI: colours, cursor moves
    r"|\x1b[\]PX^_][^\x07\x1b\n]*(?:\x07|\x1b\\)?"  # OSC and other strings: hyperlinks
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]"  # any other escape
)
"""Terminal escape sequences: removed from a candidate line before the rules run on it."""

_BLOCK_TRIGGER_RE = Pattern(_BLOCK_TRIGGER)
_STDIN_READER_RE = Pattern(_STDIN_READER)
_KEY_TEXT_RE = Pattern(_KEY_TEXT_LINES)
_BASE64_KEY = Pattern("LS0tLS1CRUdJTi|" + _KEY_BODY)
"""``-----BEGIN`` in base64 (a PEM block encoded whole: ``client-key-data``, ``base64 key.pem``),
or a key's base64 body printed without its ``BEGIN`` line: both wrap over the next lines."""
_BASE64_LINES = Pattern(
    r"(?:[ \t]*(?:[A-Za-z0-9+/]{16,1024}|" + _B64_TAIL + r")={0,2}[ \t]*(?:\r?\n|\Z))*"
)


@attrs.define
class _Candidates:
    """What one scan of the triggers found."""

    blocks: list[int] = attrs.field(factory=list)  # positions of key block markers
    regions: list[tuple[int, int]] = attrs.field(factory=list)  # lines to run the rules on
    before_cut: set[int] = attrs.field(factory=set)  # ends of lines followed by a cut line
    after_cut: set[int] = attrs.field(factory=set)  # starts of lines following one
    hits: list[int] = attrs.field(factory=list)  # triggers in each region
    first: list[int] = attrs.field(factory=list)  # where its first trigger starts
    withheld: list[bool] = attrs.field(factory=list)  # too dense to read: withheld whole

    def dense(self, position: int) -> bool:
        """The last region is withheld whole and reaches *position*."""
        return bool(self.regions) and self.withheld[-1] and position <= self.regions[-1][1]


_DENSE_HITS = 64
_DENSE_SPACING = 32
"""A region with at least ``_DENSE_HITS`` triggers, fewer than ``_DENSE_SPACING`` characters
apart on average (``password=password=...``, ``sk-sk-sk-...``), is not output any tool
prints: reading it rule by rule costs a hundred times what ordinary text does, so it is
withheld whole as ``[REDACTED:dense]`` and counted, and the scan jumps past it. Nothing in
it is shown, so nothing in it leaks; the cost stays linear in the text."""


def _dense(hits: int, spread: int) -> bool:
    """*hits* triggers over *spread* characters are too many to read one by one."""
    return hits >= _DENSE_HITS and hits * _DENSE_SPACING > spread


def _advance(
    spans: Generator[tuple[int, int], int | None, None], skip: int | None
) -> tuple[int, int] | None:
    """The next trigger span, after *skip* when given; ``None`` at the end."""
    try:
        return spans.send(skip) if skip is not None else next(spans)
    except StopIteration:
        return None


def _extend(text: str, start: int, end: int, line_start: int, line_end: int) -> tuple[int, int]:
    """Widen a candidate line over the lines its secret goes on to (or comes from)."""
    if text.startswith("Private-Key:", start):  # openssl -text: the dump below
        dump = _KEY_TEXT_RE.match(text, line_end)
        line_end = dump.end() if dump is not None else line_end
    if _BASE64_KEY.match(text, start):  # `base64 key.pem`, a bare key body: wrapped lines
        wrapped = _BASE64_LINES.match(text, line_end)
        line_end = wrapped.end() if wrapped is not None else line_end
    line_end = _continued(text, end, line_end)
    if _STDIN_READER_RE.match(text, start):  # `+ echo PW` is the line before or after
        line_start = _line_start_near(text, max(line_start - 1, 0))
        line_end = _line_end_near(text, line_end) if line_end < len(text) else line_end
    return line_start, line_end


_CONTINUATIONS = 8
"""How many following lines a wrapped quoted value (pprint, rich) may take."""
_LINE_TAIL = Pattern(
    r"(?:[\w.-]{0,80}[\"']?)?(?:[ \t]|\x1b\[[0-9;]*m)*(?:[:=](?:[ \t]|\x1b\[[0-9;]*m)*)?"
    r"(?:[\"'](?:[ \t]|\x1b\[[0-9;]*m)*)?\r?\n"
)
"""What may end a line whose value the next line holds: the rest of the name, the name's
closing quote, ``:`` or ``=`` (whichever trigger found the line), a quote that opens."""
_QUOTE_NEXT = Pattern(r"(?:[ \t]|\x1b\[[0-9;]*m)*[\"']")


def _continued(text: str, trigger_end: int, line_end: int) -> int:
    """Extend a candidate line over the lines a wrapped quoted value goes on to.

    pprint and rich put a long value on the line after its name (``'token':`` at the end of
    one line, ``'abc...'`` on the next) and split a long string into adjacent literals, one
    per line. A line that ends at the separator or in a quote, followed by a line that
    starts with a quote, goes on.
    """
    position = max(trigger_end, text.rfind("\n", 0, line_end - 1) + 1)
    for _ in range(_CONTINUATIONS):
        if (
            line_end >= len(text)
            or text[line_end - 1] != "\n"
            or _LINE_TAIL.fullmatch(text, _tail_start(text, position, line_end), line_end) is None
            or _QUOTE_NEXT.match(text, line_end) is None
        ):
            break
        position = line_end
        line_end = _line_end_near(text, line_end)
    if _breaks_a_quote(text, line_end) and _CLOSING_NEXT.match(text, line_end) is not None:
        line_end = _line_end_near(text, line_end)  # rich wrapped the value inside its quotes
    return line_end


_CLOSING_NEXT = Pattern(r"(?:[ \t]|\x1b\[[0-9;]*m)*[^\s'\"\x1b]+(?:\x1b\[[0-9;]*m)*['\"]")
"""A line that starts with the rest of a quoted word and its closing quote."""
_OPEN_TOKEN = Pattern(r"(?:\x1b\[[0-9;]*m)*[^\s'\"\x1b]{8,}(?:[ \t]|\x1b\[[0-9;]*m)*\r?\n")
_WRAPPED_TAIL = Pattern(
    r"(?P<quote>['\"])[^'\"\n]*\[REDACTED:(?P<rule>[\w:.-]+)\][ \t]*\r?\n[ \t]*"
    r"(?P<tail>[A-Za-z0-9_+/=.~-]+)(?P=quote)(?![^\s,)\]}:;])"
)
"""A quoted value whose redacted head ends its line and whose tail starts the next one."""


def _breaks_a_quote(text: str, line_end: int) -> bool:
    """The line before *line_end* ends inside a quoted word: ``'1//0gLm2...Pw1L``."""
    if line_end >= len(text) or text[line_end - 1] != "\n":
        return False
    line_start = text.rfind("\n", 0, line_end - 1) + 1
    quote = max(text.rfind("'", line_start, line_end), text.rfind('"', line_start, line_end))
    return quote != -1 and _OPEN_TOKEN.fullmatch(text, quote + 1, line_end) is not None


def _tail_start(text: str, position: int, line_end: int) -> int:
    """Where the quote that may end a line starts: just after the line's last quoted word."""
    last_quote = max(text.rfind('"', position, line_end), text.rfind("'", position, line_end))
    if last_quote == -1:
        return position
    return last_quote if _LINE_TAIL.fullmatch(text, last_quote, line_end) else position


def _add_region(found: _Candidates, start: int, end: int) -> None:
    """Append the lines ``start:end``, merged into the last region when they touch it."""
    regions = found.regions
    if regions and regions[-1][0] <= start <= regions[-1][1]:
        regions[-1] = (regions[-1][0], max(regions[-1][1], end))
    else:
        regions.append((start, end))
        found.hits.append(0)
        found.first.append(start)
        found.withheld.append(False)


_CUT_TRIGGER = r"\[(?:\.\.\.|…)"

_FRAGMENT_TAIL = Pattern(r"[^\s\"'`,;()\[\]{}<>=:@]+={0,2}\Z")
_FRAGMENT_HEAD = Pattern(r"[^\s\"'`,;()\[\]{}<>@]+")
_REDACTED_END = Pattern(r"\[REDACTED:(?!private_key\])[\w:.-]+\]\Z")
_TOKEN_START = Pattern(
    r"(?:gh[pousr]_|github_pat_|gl(?:pat|dt|rt|ptt|cbt|soat|ft|oas)-|xox[a-z]-|xapp-|sk-|"
    r"[sr]k_(?:live|test)_|whsec_|A(?:KIA|SIA|ROA|IDA)|AIza|ya29\.|eyJ|npm_|pypi-|hf_|SG\.|"
    r"do[opr]_v1_|dapi|shp(?:at|ca|pa|ss)_|HRKU-|AGE-SECRET-KEY-|hv[sbr]\.|dckr_|glsa_|GOCSPX-)"
)
_SECRET_BEFORE = Pattern(
    r"(?i:(?:pass|pwd|secret|token|key|auth|credential|sig|cookie)[\w.-]*[\"']?[ \t]*"
    r"(?:=|:|=>)[ \t]*[\"']?|(?:bearer|basic|token)[ \t]+|://[^\s:/@]*:)\Z"
)


def _redact_fragments(
    text: str, counts: dict[str, int], *, tail: bool, head: bool, carried: bool
) -> tuple[str, bool]:
    """Redact half a secret at a cut: the end of the line before it, the start of the next.

    A head+tail cut may fall inside a line, leaving ``password=hun`` before the cut line and
    ``ter2`` after it, or the first half of a token. The word touching the cut goes when the
    text before it says secret (``password=``, ``Bearer ``, ``://user:``), when it starts like
    a known token, or when it looks generated; the word after the cut goes too when the one
    before it went (*carried*), or when it looks generated itself.

    Returns:
        The text, and whether the word after the cut must go as well.
    """
    carry = False
    if tail:
        line = text.rstrip("\n")
        found = None if _SECRET_BEFORE.search(line) else _FRAGMENT_TAIL.search(line)
        if found is None:
            ends_redacted = line.endswith("]") and _REDACTED_END.search(line) is not None
            carry = ends_redacted or _SECRET_BEFORE.search(line) is not None
        elif _fragment_is_secret(found.group(), line[: found.start()]):
            text = f"{line[: found.start()]}[REDACTED:cut_fragment]{text[len(line) :]}"
            counts["cut_fragment"] = counts.get("cut_fragment", 0) + 1
            carry = True
    if head:
        found = _FRAGMENT_HEAD.match(text)
        if found is not None and (carried or _fragment_is_secret(found.group(), "")):
            text = f"[REDACTED:cut_fragment]{text[found.end() :]}"
            counts["cut_fragment"] = counts.get("cut_fragment", 0) + 1
    return text, carry


def _starts_secret(fragment: str, before: str) -> bool:
    """*fragment* ends its line and starts a secret: a known token's prefix, or a value.

    Not inside a test's id that a terminal wrapped (``test_get[key=Ab12`` ...): its
    parameters name a test.
    """
    if (
        "[REDACTED" in fragment
        or _PLACEHOLDER.match(fragment)
        or _TEMPLATED.match(fragment)
        or _OPEN_TEST_ID.search(before)
    ):
        return False
    return _SECRET_BEFORE.search(before) is not None or _TOKEN_START.match(fragment) is not None


_OPEN_TEST_ID = Pattern(r"[Tt]est\w*\[[^\]\n]*\Z|(?<![\w.-])Test\w*/[^\s]*\Z")
"""The start of a test's id whose parameters go on past the end of the line."""


def _fragment_is_secret(fragment: str, before: str) -> bool:
    """Tell half a secret from the end or the start of an ordinary line."""
    if (
        not fragment
        or "[REDACTED" in fragment
        or _PLACEHOLDER.match(fragment)
        or _TEMPLATED.match(fragment)
    ):
        return False
    if _SECRET_BEFORE.search(before) or _TOKEN_START.match(fragment):
        return True
    return len(fragment) >= 16 and not _looks_path(fragment) and _randomish(fragment)  # noqa: PLR2004


def _near_own_triggers(rule: Rule, text: str) -> list[tuple[int, int]] | None:
    """Where *rule* reads a big region: near its own triggers; ``None``: all of *text*.

    Triggers close together all along a long line (one without newlines, or a minified
    file), or on line after line, merge into one region, and every rule whose keyword is
    anywhere in it read all of it: a hundred rules, each over the whole region. There each
    rule reads only what a lone trigger of its own would have made a region: its line (on a
    long line, the words around it), the lines its secret goes on to (:func:`_extend`), and
    the next line (the value of a YAML block, ``key: |``). A rule that triggers on a key's
    base64 body reads the region whole, as before (its wrapped lines go on and on).
    So the cost stays a few readings of the region, whatever its triggers. A region of
    ordinary size, and a rule that reads the lines after its trigger, are read whole.
    """
    if len(text) <= _LONG_LINE or rule.context_lines:
        return None
    spans: list[tuple[int, int]] = []
    for start, end in _own_trigger(rule.trigger).spans(text):
        if _BASE64_KEY.match(text, start):  # a key's base64 body: it reads the region whole
            return None
        low, high = _extend(
            text, start, end, _line_start_near(text, start), _line_end_near(text, end)
        )
        if high < len(text):  # and the next line: a value after ``key: |`` or a wrap
            high = _line_end_near(text, high)
        if spans and low <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], high))
        else:
            spans.append((low, high))
    return spans


@functools.cache
def _own_trigger(source: str) -> Trigger:
    return Trigger(source)


def _apply_rule(
    rule: Rule,
    text: str,
    counts: dict[str, int],
    found: dict[str, str],
    ids: _TestIds | None = None,
) -> str:
    """Replace what *rule* finds in *text*, counting it and noting each value in *found*.

    Matches are collected first, so a rule whose pattern only looks ahead at the value (the
    assignment rule) still finds ``password=`` inside the value of a rejected match. On a
    long line only matches near the rule's own triggers count (:func:`_near_own_triggers`);
    *ids* are the test ids of *text*, moved along to the text returned.
    """
    ids = _TestIds() if ids is None else ids
    spans = _near_own_triggers(rule, text)
    group = "secret" if "secret" in rule.pattern.groupindex else 0
    pieces: list[str] = []
    replaced: list[tuple[int, int, int]] = []
    position = 0
    pattern = rule.pattern
    matches = (
        pattern.finditer(text)
        if spans is None
        else (m for low, high in spans for m in pattern.finditer(text, low, high))
    )
    for match in matches:
        start, end = match.span(group)
        if start < position or not _is_secret(rule, match, group, ids):
            continue
        start, end = _unquoted_span(match.group(group), start, end)
        mark = f"[REDACTED:{rule.name}]"
        pieces += (text[position:start], mark)
        replaced.append((start, end, len(mark)))
        _note(text[start:end], rule.name, found)
        position = end
        counts[rule.name] = counts.get(rule.name, 0) + 1
    if not pieces:
        return text
    pieces.append(text[position:])
    ids.moved(replaced)
    return "".join(pieces)


def _is_secret(rule: Rule, match: re.Match[str], group: int | str, ids: _TestIds) -> bool:
    """Whether *rule*'s *match* is a secret to replace, not a look-alike or a replacement."""
    secret = match.group(group)
    return not (
        not secret
        or "[REDACTED:" in secret  # already handled by an earlier rule
        or _inside_placeholder(match.string, match.start(group))  # the tail of one
        or ids.names_a_test(match.string, match.start(), secret)
        or (rule.check is not None and not rule.check(match))
    )


class _TestIds:
    """The test ids of a region: read when a rule first finds something there, then moved.

    Every rule of a pass reads the same region, and a rule changes it only where it
    replaces a secret: the ids are read once a pass, and each replacement moves those after
    it (reading them again after every rule that replaced something read a long line of
    secrets once per rule).
    """

    def __init__(self) -> None:
        self._starts: list[int] | None = None
        self._ends: list[int] = []

    def names_a_test(self, text: str, start: int, secret: str) -> bool:
        """The match at *start* is inside a test id, and *secret* no token of a known format."""
        if self._starts is None:
            spans = (
                [m.span() for m in _TEST_ID.finditer(text)]
                if any(mark in text for mark in _TEST_MARKS)
                else []
            )
            self._starts, self._ends = [a for a, _ in spans], [b for _, b in spans]
        at = bisect.bisect_right(self._starts, start) - 1
        return at >= 0 and start < self._ends[at] and _TOKEN_START.match(secret) is None

    def moved(self, replaced: list[tuple[int, int, int]]) -> None:
        """Move the ids by *replaced*: ``(start, end, new length)``, in order, disjoint."""
        if not self._starts:
            return
        ends = [end for _, end, _ in replaced]
        shifts = [0]
        for start, end, size in replaced:
            shifts.append(shifts[-1] + size - (end - start))

        def move(position: int) -> int:
            at = bisect.bisect_right(ends, position)
            if at < len(replaced) and replaced[at][0] < position:  # inside a replaced span
                start, _, size = replaced[at]
                return start + shifts[at] + min(position - start, size)
            return position + shifts[at]

        self._starts = [move(p) for p in self._starts]
        self._ends = [move(p) for p in self._ends]


def _unquoted_span(secret: str, start: int, end: int) -> tuple[int, int]:
    """The span of *secret* (at *start*..*end*) without its quotes, which stay in the text."""
    if len(secret) > 1 and secret[0] in {'"', "'"} and secret[-1] == secret[0]:
        return start + 1, end - 1
    if secret[:2] in {'\\"', "\\'"} and secret[-2:] == secret[:2] and len(secret) > 3:  # noqa: PLR2004
        return start + 2, end - 2
    return start, end


def _note(value: str, rule: str, found: dict[str, str]) -> None:
    """Remember a replaced *value* (and each value of its pairs) so its copies go too."""
    found.setdefault(value, rule)
    if "=" in value:  # a Cookie header, a connection string: each value may be printed alone
        for pair in _PAIR_VALUE.finditer(value):
            found.setdefault(pair.group(1), rule)


_TEST_ID = Pattern(
    r"(?<![\w.-])(?:[\w./-]*\.py::)?(?:\w+::)*[Tt]est\w*\[[^\]\n]{0,512}\]"  # pytest
    r"|(?<![\w.-])Test\w*/[^\s]{1,512}"  # go test's subtests: ``TestGetKey/key=Ab12``
    "|(?m:^[ \t]*(?:\u2715|\u2713|\u00d7|\u221a|\u2717|\u2714|\u25cf)[ \t][^\n]{1,512})"  # jest ✕ ✓
    r"|(?m:^[ \t]*(?:FAIL|PASS)[ \t]+[^\s]+[ \t]+>[ \t][^\n]{1,512})"  # vitest: file > suite > test
)
"""A test's id holding its parameters: ``test_get_key[key=Ab12Cd34Ef56]``. Its parameters name
a test, so they stay: a "run it alone" command must name a test that exists."""
_TEST_MARKS = ("est", "\u2715", "\u2713", "\u00d7", "\u221a", "\u2717", "\u2714", "\u25cf", " > ")
"""Text without one of these names no test: the ids are not looked for."""


def _inside_placeholder(text: str, position: int) -> bool:
    """*position* is inside a ``[REDACTED:<rule>]`` an earlier rule wrote."""
    opener = text.rfind("[REDACTED:", max(0, position - 80), position + len("[REDACTED:"))
    return opener != -1 and text.find("]", opener) >= position


def redact_failure(
    failure: FailureContext, *, redactor: Redactor | None = None
) -> tuple[FailureContext, dict[str, int]]:
    """Redact a failure with *redactor* (a fresh one reading ``os.environ`` by default).

    Returns:
        The redacted failure and the per-rule counts.
    """
    return (redactor or Redactor()).redact_failure(failure)


def redact_text(text: str, *, redactor: Redactor | None = None) -> str:
    """Return *text* redacted by *redactor* (a fresh one reading ``os.environ`` by default)."""
    return (redactor or Redactor()).redact(text).text
