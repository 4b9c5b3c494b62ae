"""Readers of tool output: text in, findings out.

A reader recognises one output format (pytest's, rustc's, tsc's ...) and returns
:class:`Findings`: the facts quoted verbatim (failing tests, error codes, ``file:line``
locations, expected and actual values), the failure type and category the format implies, and
next steps. :func:`analyse` picks the reader for a failure's output; the built-in readers are
registered on import, and other packages add theirs with :func:`register_reader` or the
``reflexkit.readers`` entry-point group. The helpers a reader's author needs (:func:`clip`,
:func:`error_kind`, :func:`find_locations` ...) are exported here too. See docs/readers.md.

This package imports only the leaves of reflexkit (``models``), so any subsystem may use it.
"""

from __future__ import annotations

from reflexkit.readers._analyse import analyse, clean_output, type_from_command
from reflexkit.readers._blocks import find_locations, is_library_path
from reflexkit.readers._builtin import BUILTIN_READERS
from reflexkit.readers._findings import Findings, Problem, clip, dedupe, group_problems, plural
from reflexkit.readers._kinds import error_kind, signal_exit
from reflexkit.readers._registry import (
    ENTRY_POINT_GROUP,
    Reader,
    ReadFunction,
    register_reader,
    registered_readers,
    unregister_reader,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "Findings",
    "Problem",
    "ReadFunction",
    "Reader",
    "analyse",
    "clean_output",
    "clip",
    "dedupe",
    "error_kind",
    "find_locations",
    "group_problems",
    "is_library_path",
    "plural",
    "register_reader",
    "registered_readers",
    "signal_exit",
    "type_from_command",
    "unregister_reader",
]

for _reader in BUILTIN_READERS:
    register_reader(_reader)
del _reader
