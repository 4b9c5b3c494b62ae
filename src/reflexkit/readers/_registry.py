"""The registry of readers: which reader may read an output, and in which order they are tried.

A :class:`Reader` names an output format, the marker strings any output of that format
contains (a cheap first test), its priority and the function that reads it. Readers are tried
from the highest priority down; the first whose function returns :class:`Findings` wins. The
built-in readers are registered when :mod:`reflexkit.readers` is imported; other packages add
theirs through the entry-point group ``reflexkit.readers`` (loaded on first use) or by calling
:func:`register_reader`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from importlib.machinery import PathFinder
from pathlib import Path

import attrs

from reflexkit._log import get_logger
from reflexkit.models import FailureContext
from reflexkit.readers._findings import Findings

__all__ = [
    "ENTRY_POINT_GROUP",
    "ReadFunction",
    "Reader",
    "register_reader",
    "registered_readers",
    "unregister_reader",
]

ENTRY_POINT_GROUP = "reflexkit.readers"
"""Entry points in this group name a :class:`Reader` object (``package.module:READER``)."""

ReadFunction = Callable[[str, FailureContext], Findings | None]
"""Reads cleaned output (see ``clean_output``) of *failure*; ``None`` when not its format."""

_log = get_logger(__name__)


def _markers(value: Iterable[str]) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    return tuple(value)


@attrs.frozen(cache_hash=True)  # a reading's cache key holds every reader: hashed once
class Reader:
    """One output format's reader.

    Attributes:
        name: A unique name (``"pytest"``, ``"go-test"``); registering a second reader under a
            name that is taken is an error unless ``replace=True``.
        read: Reads the output (colours stripped, LF line ends, head and tail of a long
            output) and the failure (its command and exit code); returns ``None`` when the
            output is not in its format.
        markers: Strings one of which every output of the format contains. ``read`` is only
            called when one is present (substring tests are ~100x cheaper than a regex pass);
            empty: always called.
        priority: Higher is tried first. Formats that contain others rank above them: a
            test runner's output holds tracebacks, ``make`` holds compiler errors. The
            built-in bands: 1000 the coding agent's own failure, 900 wrappers (git, CRLF
            scripts), 800 test runners, 700 type checkers, 600 linters, 500 compilers, 400
            installers, 300 runtime errors and stack traces, 200 build tools, 100 exit codes
            alone.
    """

    name: str = attrs.field(validator=attrs.validators.min_len(1))
    read: ReadFunction = attrs.field(validator=attrs.validators.is_callable())
    markers: tuple[str, ...] = attrs.field(default=(), converter=_markers)
    priority: int = 0

    def may_read(self, text: str) -> bool:
        """Return whether one of the markers is in *text* (always true without markers)."""
        if not self.markers:
            return True
        for marker in self.markers:  # noqa: SIM110 -- any() costs 2% more: runs for every reader
            if marker in text:
                return True
        return False


_registered: dict[str, Reader] = {}
_ordered: tuple[Reader, ...] | None = None
_entry_points_loaded = False


def register_reader(reader: Reader, /, *, replace: bool = False) -> Reader:
    """Add *reader* to the readers :func:`~reflexkit.readers.analyse` tries.

    Args:
        reader: The reader.
        replace: Replace a registered reader of the same name (a built-in one too).

    Returns:
        *reader*, so a module can keep it: ``READER = register_reader(Reader(...))``.

    Raises:
        TypeError: *reader* is not a :class:`Reader`.
        ValueError: A reader of that name is registered and *replace* is false.
    """
    global _ordered  # noqa: PLW0603 -- the registry is process-wide by design
    if not isinstance(reader, Reader):
        msg = f"register_reader() takes a Reader, not {type(reader).__name__}"
        raise TypeError(msg)
    if reader.name in _registered and not replace:
        msg = f"a reader named {reader.name!r} is already registered (pass replace=True)"
        raise ValueError(msg)
    _registered.pop(reader.name, None)
    _registered[reader.name] = reader
    _ordered = None
    return reader


def unregister_reader(name: str, /) -> Reader | None:
    """Remove the reader called *name*; return it, or ``None`` when there was none."""
    global _ordered  # noqa: PLW0603 -- the registry is process-wide by design
    _ordered = None
    return _registered.pop(name, None)


def registered_readers() -> tuple[Reader, ...]:
    """Return the registered readers in the order they are tried.

    The first call also loads the readers of the ``reflexkit.readers`` entry-point group; an
    entry point that fails to load or names no :class:`Reader` is skipped with a warning in
    the log, so a broken plugin never stops a reflection.
    """
    global _ordered  # noqa: PLW0603 -- the registry is process-wide by design
    _load_entry_points()
    if _ordered is None:
        order = {name: index for index, name in enumerate(_registered)}
        _ordered = tuple(sorted(_registered.values(), key=lambda r: (-r.priority, order[r.name])))
    return _ordered


def _group_may_be_declared(group: str) -> bool:
    """Whether an installed distribution may declare entry points in *group*.

    ``importlib.metadata`` costs some 25 ms to import and scan (#19), for a group that is
    almost always empty. This looks where it would look, the ``*.dist-info`` and
    ``*.egg-info`` folders of each ``sys.path`` folder, for an ``entry_points.txt`` that
    names *group*; it answers false only when it is sure: a zip or an egg on the path, or
    another finder of distributions, means true, and the real scan decides.
    """
    if any(
        hasattr(finder, "find_distributions") and finder is not PathFinder
        for finder in sys.meta_path
    ):
        return True  # someone else's distributions: only importlib.metadata knows them
    return any(_folder_may_declare(entry or ".", group) for entry in sys.path)


def _folder_may_declare(folder: str, group: str) -> bool:
    """Whether a distribution in the ``sys.path`` entry *folder* may declare *group*."""
    if folder.lower().endswith(".egg"):
        return True
    try:
        children = os.scandir(folder)
    except FileNotFoundError:
        return False
    except OSError:  # a zip file, or a folder we can't list
        return True
    with children:
        for child in children:
            if not child.name.lower().endswith((".dist-info", ".egg-info")):
                continue
            try:
                declared = Path(child.path, "entry_points.txt").read_text(errors="replace")
            except (FileNotFoundError, NotADirectoryError):
                continue
            except OSError:
                return True
            if group in declared:
                return True
    return False


def _load_entry_points() -> None:
    global _entry_points_loaded  # noqa: PLW0603 -- loaded once per process
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    if not _group_may_be_declared(ENTRY_POINT_GROUP):
        return
    from importlib.metadata import entry_points  # noqa: PLC0415 -- only when it may find one

    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            reader = point.load()
        except Exception:  # noqa: BLE001 -- a broken plugin is reported, never fatal
            _log.warning(
                "reader entry point %r failed to load; skipped", point.value, exc_info=True
            )
            continue
        if not isinstance(reader, Reader):
            _log.warning(
                "reader entry point %r is a %s, not a reflexkit.readers.Reader; skipped",
                point.value,
                type(reader).__name__,
            )
            continue
        if reader.name in _registered:
            _log.warning(
                "reader entry point %r: name %r is taken; skipped", point.value, reader.name
            )
            continue
        register_reader(reader)
