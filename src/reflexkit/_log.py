"""The command line's log settings: a ``reflexkit:`` prefix on stderr, ``--debug`` for all."""

from __future__ import annotations

import logging
import sys

__all__ = ["configure", "get_logger"]

_FORMAT = "reflexkit: %(levelname)s: %(message)s"


def configure(*, debug: bool) -> None:
    """Log warnings (everything, with *debug*) to stderr as ``reflexkit: LEVEL: message``.

    A later call replaces an earlier one (``--debug`` given after the command name).
    """
    logging.basicConfig(
        level=logging.DEBUG if debug else logging.WARNING,
        format=_FORMAT,
        stream=sys.stderr,
        force=True,
    )


def get_logger(name: str) -> logging.Logger:
    """Return the logger called *name*."""
    return logging.getLogger(name)
