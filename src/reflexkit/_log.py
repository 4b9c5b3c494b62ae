"""The command line's log settings: a ``reflexkit:`` prefix on stderr, ``--debug`` for all.

Every record passes the outbound gate on its way to the terminal (:class:`GatedFormatter`):
a warning that quotes tool output, an exception message, a library's debug line (the
anthropic SDK's and httpx's, with ``--debug``) print no secret and no live escape. Python
warnings (``CorruptRecordWarning`` quoting a planted record) are logged the same way.
"""

from __future__ import annotations

import logging
import sys

__all__ = ["GatedFormatter", "configure", "get_logger"]

_FORMAT = "reflexkit: %(levelname)s: %(message)s"


class GatedFormatter(logging.Formatter):
    """A formatter whose every line (traceback included) has passed the outbound gate."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as :class:`logging.Formatter` writes it, redacted and neutralised."""
        from reflexkit.redaction._gate import outbound  # noqa: PLC0415 -- only when a record is logged

        return outbound(super().format(record), "terminal")


def configure(*, debug: bool) -> None:
    """Log warnings (everything, with *debug*) to stderr as ``reflexkit: LEVEL: message``.

    A later call replaces an earlier one (``--debug`` given after the command name).
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(GatedFormatter(_FORMAT))
    logging.basicConfig(
        level=logging.DEBUG if debug else logging.WARNING,
        handlers=[handler],
        force=True,
    )
    # Warnings (a corrupt record skipped, quoting what it held) go through the same handler,
    # not Python's own printer, which writes them to stderr as they are.
    logging.captureWarnings(capture=True)


def get_logger(name: str) -> logging.Logger:
    """Return the logger called *name*."""
    return logging.getLogger(name)
