r"""The one way the command line writes to the terminal: every line through the outbound gate.

Commands print with :func:`say` (text), :func:`say_json` (data as JSON) and :func:`say_table`
(a rich table, its cells gated before rich lays them out, so a long token wrapped across
cell lines can't escape redaction). Nothing else in ``reflexkit.cli`` writes to stdout or
stderr: ``tests/redaction/test_gate.py`` scans the source for ``click.echo``, ``print``,
``console.print`` and ``sys.stdout.write`` and fails for one outside a registered boundary.

Text from memory, run logs, task files and tool output is printed here whatever its age: a
record an older version wrote, or one edited on disk, passes the gate again on its way out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, Unpack

import click

from reflexkit._text import escape_json_text, one_line as _one_line
from reflexkit.cli import _streams

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["say", "say_json", "say_on", "say_table", "show", "show_json"]


def show(text: object) -> str:
    """*text* as one line for the terminal: through the outbound gate, then one line."""
    from reflexkit.redaction._gate import outbound  # noqa: PLC0415 -- the engine, on first use

    return _one_line(outbound(str(text), "terminal"))


def say(text: object = "", *, err: bool = False, nl: bool = True, one_line: bool = False) -> None:
    """Write *text* to stdout, or stderr with *err*, through the outbound gate.

    Secrets are redacted; control characters and escape sequences are removed and bidi or
    hidden characters shown as ``<U+XXXX>``. Lines are kept, or joined with *one_line*
    (an id or a detail that must not start a line of its own).
    """
    from reflexkit.redaction._gate import outbound  # noqa: PLC0415 -- the engine, on first use

    safe = outbound(str(text), "terminal") if text != "" else ""
    click.echo(_one_line(safe) if one_line else safe, err=err, nl=nl)


def say_on(console: Console, text: str, *, style: str = "") -> str:
    """Write *text* as one line on a rich *console* (a live status), through the gate.

    Returns:
        The line as written (for the status line to repeat).
    """
    line = show(text)
    console.print(line, style=style, markup=False, highlight=False)
    return line


def show_json(data: object, *, indent: bool = True) -> str:
    r"""*data* (a model or JSON data) as camelCase JSON for the terminal, through the gate.

    Every string, keys included, is redacted; after serialising, each character that would
    control the terminal or hide text (ESC, C1 controls, U+202E ...) is written as a JSON
    escape (``\u202e``), so the output is valid JSON that reads back as the data was, and
    a terminal shows the escape instead of obeying it. Records come from files an agent can
    write: nothing in them is printed raw.
    """
    from reflexkit import _serde  # noqa: PLC0415 -- JSON output only; the hot paths print text
    from reflexkit.redaction._gate import outbound_data  # noqa: PLC0415 -- the same

    gated = outbound_data(_serde.unstructure(data), "terminal_json")
    return escape_json_text(_serde.dumps(gated, indent=indent).decode())


def say_json(data: object, *, indent: bool = True) -> None:
    """Write *data* to stdout as camelCase JSON, through the gate (:func:`show_json`)."""
    click.echo(show_json(data, indent=indent))


class TableOptions(TypedDict, total=False):
    """How :func:`say_table` lays a table out."""

    caption: str | Path | None
    """A line under the table (a path, for example)."""
    right: Iterable[str]
    """The columns to right-align (numbers)."""
    pipe_as_tabs: bool
    """Off a terminal, one tab-separated line per row instead (for scripts)."""


def say_table(
    title: str,
    columns: Sequence[str],
    rows: Iterable[Sequence[object]],
    **how: Unpack[TableOptions],
) -> None:
    """Write a rich table to stdout, every cell, the title and the caption gated first.

    Args:
        title: The table's title.
        columns: The column headings.
        rows: The cells, one sequence per row (any object, shown with ``str``).
        how: ``caption``, ``right`` and ``pipe_as_tabs`` (:class:`TableOptions`).
    """
    from rich.markup import escape  # noqa: PLC0415 -- rich only where a table is drawn
    from rich.table import Table  # noqa: PLC0415

    console = _streams.console()
    if how.get("pipe_as_tabs") and not console.is_terminal:
        for row in rows:
            click.echo("\t".join(show(value) for value in row))
        return

    def cell(value: object) -> str:
        return escape(show(value))

    caption = how.get("caption")
    table = Table(title=cell(title), caption=None if caption is None else cell(caption))
    aligned = set(how.get("right", ()))
    for column in columns:
        table.add_column(cell(column), justify="right" if column in aligned else "left")
    for row in rows:
        table.add_row(*(cell(value) for value in row))
    console.print(table)
