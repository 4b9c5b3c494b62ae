r"""The command's standard streams, made safe before anything is printed or opened.

A closed standard descriptor is reopened on ``/dev/null`` (so no file opened later becomes
"stdout"); a character the stream's encoding can't hold is written as a ``\uXXXX`` escape,
so ``--json`` stays valid; a reader that goes away ends the command quietly with exit 141.
docs/cli.md describes each.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import os
import select
import sys
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "ESCAPE",
    "EXIT_BROKEN_PIPE",
    "broken_pipe",
    "console",
    "exit_if_reader_left",
    "prepare",
]

ESCAPE = "reflexkit.escape"
"""The codec error handler that writes an unencodable character as ``\\uXXXX``."""

EXIT_BROKEN_PIPE = 141
"""128 + SIGPIPE: the reader of stdout went away."""

_BMP_END = 0xFFFF


def _escape(err: UnicodeError) -> tuple[str, int]:
    if not isinstance(err, UnicodeEncodeError):
        raise err
    out = []
    for char in err.object[err.start : err.end]:
        code = ord(char)
        if code > _BMP_END:  # a surrogate pair, as JSON writes it
            code -= 0x10000
            out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        else:
            out.append(f"\\u{code:04x}")
    return "".join(out), err.end


codecs.register_error(ESCAPE, _escape)


def _reopen_closed_descriptors() -> None:
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)  # the lowest free number: *fd* itself
            if null != fd:  # pragma: no cover -- a lower descriptor was closed too, and taken
                os.dup2(null, fd)
                os.close(null)


def prepare() -> None:
    """Reopen closed standard descriptors and make stdout and stderr unable to fail on text.

    Called first thing by :func:`reflexkit.cli.main`; safe to call again.
    """
    _reopen_closed_descriptors()
    for name, fd in (("stdout", 1), ("stderr", 2)):
        stream = getattr(sys, name)
        if stream is None:  # the descriptor was closed when Python started: it is /dev/null now
            stream = io.TextIOWrapper(
                open(fd, "wb", closefd=False),  # noqa: SIM115 -- lives as long as sys.stdout
                encoding="utf-8",
                line_buffering=True,
            )
            setattr(sys, name, stream)
        if isinstance(stream, io.TextIOWrapper) and stream.errors != ESCAPE:
            with contextlib.suppress(ValueError, OSError):  # a detached or closed stream
                stream.reconfigure(errors=ESCAPE)


def stdout_is_broken() -> bool:
    """Whether stdout is a pipe (or socket) whose reader has gone away.

    ``poll`` reports ``POLLERR`` on the write end of a pipe with no reader; a regular file or
    a terminal never is "broken" here.
    """
    try:
        fd = sys.__stdout__.fileno() if sys.__stdout__ is not None else 1
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        events = poller.poll(0)
    except (OSError, ValueError, AttributeError):
        return False
    return any(mask & (select.POLLERR | select.POLLHUP) for _, mask in events)


def exit_if_reader_left(err: OSError) -> None:
    """End the command quietly (exit 141) if *err* is stdout's reader having gone away.

    A ``BrokenPipeError`` from another pipe (an agent's stdin) is a real error: it is left
    to the caller.
    """
    if isinstance(err, BrokenPipeError) and stdout_is_broken():
        broken_pipe()


def broken_pipe() -> NoReturn:
    """End the command because the reader of stdout went away: quietly, exit 141.

    stdout is pointed at ``/dev/null`` first, so the interpreter's last flush of what is
    still buffered can't raise a second ``BrokenPipeError`` at exit.
    """
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, sys.__stdout__.fileno() if sys.__stdout__ is not None else 1)
    except (OSError, ValueError):  # pragma: no cover -- stdout was not a real descriptor
        pass
    finally:
        os.close(null)
    sys.exit(EXIT_BROKEN_PIPE)


def console(**options: Any) -> Console:  # noqa: ANN401 -- rich's own keyword options
    """A rich console that, like the rest of the command, ends with exit 141 on a broken pipe.

    (rich's own reaction is exit 1, which a caller can't tell from a failure.) Narrower than
    40 columns (``COLUMNS=5``) it lays out for 80: a table squeezed to empty cells shows
    nothing, wrapped lines still show everything.
    """
    from rich.console import Console  # noqa: PLC0415 -- rich only where it is used

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            broken_pipe()

    made = _Console(**options)
    if made.width < _MIN_WIDTH:  # COLUMNS=5: tables squeezed to empty cells; wrap instead
        made.width = _FALLBACK_WIDTH
    return made


_MIN_WIDTH = 40
_FALLBACK_WIDTH = 80
