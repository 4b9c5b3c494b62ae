"""Loggers that import :mod:`logging` on first use, and the command line's log settings.

Importing :mod:`logging` (with the traceback, string and textwrap modules it brings) costs a
few milliseconds of every command's start-up, and ``reflexkit recent`` or ``reflect`` usually
log nothing (#19). A module on those paths takes its logger from :func:`get_logger`: a stand-in
that imports :mod:`logging` and fetches the real logger the first time it is used, then hands
out the real logger's methods.

The command line's settings (a ``reflexkit:`` prefix, the level of ``--debug``) must be in place
before the first record is handled. :func:`configure` applies them at once when
:mod:`logging` is loaded, or else when one of our loggers is first used;
:func:`ensure_configured` applies them before code that logs through :mod:`logging` itself
(the anthropic SDK, dependency_injector's container) runs.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import logging

__all__ = ["configure", "ensure_configured", "get_logger"]

_FORMAT = "reflexkit: %(levelname)s: %(message)s"

_pending: bool | None = None
"""``--debug`` of a :func:`configure` call not applied yet, or ``None``."""


def configure(*, debug: bool) -> None:
    """Log warnings (everything, with *debug*) to stderr as ``reflexkit: LEVEL: message``.

    Applied now if :mod:`logging` is loaded, else the first time a logger is used (see the
    module documentation). A later call replaces an earlier one.
    """
    global _pending  # noqa: PLW0603 -- one setting per process, like logging's own
    _pending = debug
    if "logging" in sys.modules:
        ensure_configured()


def ensure_configured() -> None:
    """Apply the settings of :func:`configure`, if any are waiting."""
    global _pending
    if _pending is None:
        return
    debug, _pending = _pending, None
    import logging  # noqa: PLC0415 -- the point of the module

    logging.basicConfig(
        level=logging.DEBUG if debug else logging.WARNING,
        format=_FORMAT,
        stream=sys.stderr,
        force=True,  # --debug after the subcommand raises the level set before it
    )


class _LazyLogger:
    """A logger fetched on first use (see the module documentation)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __getattr__(self, attr: str) -> Any:  # noqa: ANN401 -- whatever a Logger has
        if attr.startswith("__"):  # copy, pickle and friends ask for optional dunders
            raise AttributeError(attr)
        import logging  # noqa: PLC0415 -- the point of the module

        ensure_configured()
        value = getattr(logging.getLogger(self.name), attr)
        if callable(value):  # bound methods stay right; levels and handlers may change
            self.__dict__[attr] = value
        return value

    def __repr__(self) -> str:
        return f"get_logger({self.name!r})"


def get_logger(name: str) -> logging.Logger:
    """Return the logger called *name*, importing :mod:`logging` when it is first used."""
    return cast("logging.Logger", _LazyLogger(name))
