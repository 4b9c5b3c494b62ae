"""Prune's copy: the lines of a store not older than a cut-off, copied to a new file.

The sieve reads the old file in blocks and hands the byte ranges it keeps to a copier
thread (``copy_file_range``, in the kernel), while :meth:`JsonlMemory.prune
<reflexkit.memory._jsonl.JsonlMemory.prune>` takes care of the locks, the swap and the index.
Imported only by a prune, not by ``recent``'s start-up.
"""

from __future__ import annotations

import errno
import os
import re
import threading
from datetime import UTC, datetime

from reflexkit.memory._codec import MAX_LINE, string_field, top_level_key

__all__ = ["Sieve"]

_CHUNK = 4 << 20

_CREATED_AT = b'"createdAt":"'
_STAMP = len("2026-01-31T12:00:00")
# The top-level "createdAt" of each line in reflexkit's compact layout: after "{" or ",",
# with no "{" before it on the line (a key nested in another field always has one), and its
# stamp. Any 19 characters: twice as fast to find as a digit pattern; _in_layout checks them
# after. A line it doesn't match, or one naming "createdAt" twice, is sieved on its own.
_STAMPS = re.compile(rb'(?m)^\{[^{\n]*,"createdAt":"([^"\n]{19})[.Z]')
_DIGITS = b"0123456789"


def _in_layout(stamps: list[bytes]) -> bool:
    """Whether the stamps are all ``YYYY-MM-DDTHH:MM:SS`` (digits and separators, in bulk)."""
    return b"".join(stamps).translate(None, _DIGITS) == b"--T::" * len(stamps)


_BLOCK = 1 << 20
# copy_file_range can't copy between these two files (another file system, an old kernel,
# a file system or file kind it does not support): read and write instead.
_SYNC_EVERY = 64 << 20
_HAND_OVER = 8 << 20
_NO_COPY_RANGE = frozenset({errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP})


class Sieve:
    """Copies the lines of a store that are not older than a cut-off to *out*.

    The file is read in blocks with ``pread`` (never mapped: a file cut short under a mapping
    is a SIGBUS). A line's age is read where reflexkit writes it
    (``"createdAt":"2026-01-31T12:00:00``, UTC with ``Z``), compared as text to the second;
    only a tie, or a line written some other way, goes through a real parser. ``runs`` records
    what was kept, as ``(old start, old end, new start)``, so the index can be carried over.
    """

    def __init__(self, older_than: datetime, out: int) -> None:
        self.removed = 0
        self.runs: list[tuple[int, int, int]] = []
        self._written = 0
        self._out = out
        self._src = -1
        self._pending = (0, 0)  # the range of the old file still to hand to the copier
        import queue  # noqa: PLC0415 -- only a prune needs it, not recent's start-up (#19)

        self._copies: queue.SimpleQueue[tuple[int, int, int] | None] = queue.SimpleQueue()
        self._failed: OSError | None = None
        self._stopping = False
        self._copier = threading.Thread(target=self._copy_all, name="reflexkit-prune-copy")
        self._copier.start()
        self._cutoff = older_than
        utc = older_than.astimezone(UTC)
        self._prefix = utc.strftime("%Y-%m-%dT%H:%M:%S").encode()

    def run(self, fd: int, start: int, end: int, *, final: bool = False) -> int:
        """Sieve the lines in ``[start, end)``; return where the last whole line ended.

        With *final*, a last line without a newline (a torn tail) is copied as it is.
        """
        pos = start
        self._src = fd
        # One buffer, read into again and again: a fresh 4 MiB bytes object per chunk costs a
        # page fault per 4 KiB, as much as the sieving.
        buf = bytearray(_CHUNK)
        while pos < end:
            with memoryview(buf) as whole, whole[: min(len(buf), end - pos)] as into:
                got = os.preadv(fd, [into], pos)
            if not got:
                break
            last = buf.rfind(b"\n", 0, got)
            if last < 0:
                if pos + got >= end:
                    break  # a torn tail
                if len(buf) >= MAX_LINE:  # damage, not a record: kept whole, never held whole
                    nl = _next_newline(fd, pos + got, end)
                    if nl < 0:
                        break  # a torn tail
                    self._keep(pos, nl + 1)
                    pos = nl + 1
                    continue
                buf = bytearray(len(buf) * 2)  # one line longer than the buffer
                continue
            with memoryview(buf) as view:
                self._sieve(buf, view, pos, last + 1)
            pos += last + 1
        if final and pos < end:
            self._keep(pos, end)
            pos = end
        self._copy()
        if self._failed is not None:  # stop reading early: the copy can't go on anyway
            raise self._failed
        return pos

    def finish(self) -> None:
        """Wait for the copier to write everything handed to it; raise what it ran into."""
        self._copies.put(None)
        self._copier.join()
        if self._failed is not None:
            raise self._failed

    def stop(self) -> None:
        """Stop the copier (dropping what it has not copied) and wait for it."""
        if self._copier.is_alive():
            self._stopping = True
            self._copies.put(None)
            self._copier.join()

    def _keep(self, old: int, end: int) -> None:
        """Keep bytes ``[old, end)`` of the old file for the new one."""
        if self._pending[1] != old:
            self._copy()
            self._pending = (old, old)
        self._pending = (self._pending[0], end)
        if end - self._pending[0] >= _HAND_OVER:
            self._copy()  # the copier starts while the sieve reads on
        if self.runs and self.runs[-1][1] == old:
            first, _, new = self.runs[-1]
            self.runs[-1] = (first, end, new)
        else:
            self.runs.append((old, end, self._written))
        self._written += end - old

    def _copy(self) -> None:
        """Hand the pending range of the old file to the copier thread."""
        lo, hi = self._pending
        self._pending = (hi, hi)
        if lo < hi:
            self._copies.put((self._src, lo, hi))

    def _copy_all(self) -> None:
        """The copier thread: copy the ranges handed to it, in order, beside the sieving.

        ``copy_file_range`` moves the bytes from page cache to page cache in the kernel (or
        shares the blocks, on file systems that can), without the GIL, so it runs on another
        core while the sieve reads on; writing them from the sieve's buffer cost twice the
        copy of the baseline. Once records were dropped (the new file will be kept), what
        was copied is synced every 64 MiB, so the final ``fsync`` has little left to do.
        """
        unsynced = 0
        while (item := self._copies.get()) is not None:
            if self._failed is not None or self._stopping:
                continue
            src, lo, hi = item
            try:
                _copy_range(src, self._out, lo, hi)
                unsynced += hi - lo
                if self.removed and unsynced >= _SYNC_EVERY:
                    os.fdatasync(self._out)
                    unsynced = 0
            except OSError as err:
                self._failed = err

    def _sieve(self, buf: bytearray, view: memoryview, base: int, stop: int) -> None:
        """Sieve whole lines in ``buf[:stop]`` (at *base* in the file), a block at a time.

        Most blocks are wholly older or wholly newer than the cut-off (records are appended
        in about the order they are created): one regular-expression pass over the block
        finds the top-level timestamp of every line, and when every line has one (and only
        one ``createdAt``), all in reflexkit's layout and on one side of the cut-off, the
        block is copied or dropped whole.
        Blocks that straddle the cut-off, or hold a line of another layout, are sieved a line
        at a time, so the result is exactly what the line-at-a-time sieve would give.
        """
        start = 0
        while start < stop:
            end = buf.find(b"\n", min(start + _BLOCK, stop) - 1, stop) + 1 or stop
            stamps = _STAMPS.findall(view[start:end])
            lines = buf.count(b"\n", start, end)
            if (
                len(stamps) == lines
                and stamps
                and buf.count(_CREATED_AT[:-2], start, end) == lines
                and _in_layout(stamps)
            ):
                if min(stamps) > self._prefix:
                    self._keep(base + start, base + end)
                    start = end
                    continue
                if max(stamps) < self._prefix:
                    self.removed += len(stamps)
                    start = end
                    continue
            self._lines(buf, base, start, end)
            start = end

    def _lines(self, buf: bytearray, base: int, start: int, stop: int) -> None:
        keep_from = start
        find = buf.find
        key, prefix, width = _CREATED_AT, self._prefix, _STAMP
        while start < stop:
            end = find(b"\n", start, stop)
            at = top_level_key(buf, key, start, end)
            if at >= 0:
                stamp = bytes(buf[at : at + width])
                tail = bytes(buf[at + width : at + width + 1])
                if stamp[10:11] == b"T" and tail in {b"Z", b"."}:
                    old = stamp < prefix or (stamp == prefix and self._is_old(buf[start:end]))
                else:
                    old = self._is_old(buf[start:end])
            else:
                old = self._is_old(buf[start:end])
            if old:
                if keep_from < start:
                    self._keep(base + keep_from, base + start)
                self.removed += 1
                keep_from = end + 1
            start = end + 1
        if keep_from < stop:
            self._keep(base + keep_from, base + stop)

    def _is_old(self, line: bytearray) -> bool:
        text = string_field(bytes(line), "createdAt")
        if text is None:
            return False
        try:
            created = datetime.fromisoformat(text)
        except ValueError:
            return False
        if created.tzinfo is None:  # the converter reads a time without a zone as UTC
            created = created.replace(tzinfo=UTC)
        return created < self._cutoff


def _next_newline(fd: int, at: int, end: int) -> int:
    """Return the offset of the first newline at or after *at* (before *end*), or -1."""
    while at < end:
        block = os.pread(fd, min(_CHUNK, end - at), at)
        if not block:
            break
        nl = block.find(b"\n")
        if nl >= 0:
            return at + nl
        at += len(block)
    return -1


def _copy_range(src: int, out: int, lo: int, hi: int) -> None:
    """Append bytes ``[lo, hi)`` of *src* to *out* (at its position), in the kernel if it can."""
    while lo < hi:
        try:
            done = os.copy_file_range(src, out, hi - lo, lo)
        except OSError as err:
            if err.errno not in _NO_COPY_RANGE:
                raise
            done = 0
        if not done:  # not supported here (or the file got shorter: then pread says so)
            data = os.pread(src, min(_CHUNK, hi - lo), lo)
            if not data:
                raise OSError(errno.EIO, f"the store ends before byte {hi}")
            _write_all(out, data)
            done = len(data)
        lo += done


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
