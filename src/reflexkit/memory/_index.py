"""The per-subtask offset index beside a JSONL store: ``recent`` reads only what it returns.

Layout of ``<store>.index/``::

    state         magic, store generation, store inode, indexed-up-to offset, and the
                  32 bytes of the store before that offset (64 bytes)
    000.idx ...   4096 shards by subtask hash; each an array of 20-byte entries
                  (8-byte blake2b of the subtask id, line offset, line length) in file order

Appends don't touch the index: readers bring it up to date, under an exclusive ``flock`` on
``state``, by indexing the lines appended since the last reader did (so the cost is shared
out over the appends, never a whole-file scan per process), and search it under a shared one.
The index describes one version of the store, named by the store file's inode and the
generation a prune bumps; when either differs, or the store got shorter, or the state file is
missing or damaged, it is rebuilt from the store. Entries are written before the state that
covers them, so a crash can only leave entries the next catch-up writes again; readers skip
the duplicate offsets.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import struct
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from reflexkit.memory._codec import string_field

__all__ = ["ENTRY", "OffsetIndex", "subtask_key"]

_MAGIC = b"RKIDX001"
_STATE = struct.Struct("<8sQQQ32s")
_SAMPLE = 32
ENTRY = struct.Struct("<8sQI")
_SHARD_MASK = 0xFFF
_CHUNK = 4 << 20
_BLOCK = ENTRY.size * 4096
_FLUSH_ENTRIES = 200_000


def subtask_key(subtask_id: str) -> bytes:
    """Return the 8-byte key of a subtask id (stable across processes, unlike ``hash``)."""
    return hashlib.blake2b(subtask_id.encode(), digest_size=8).digest()


def _shard_name(key: bytes) -> str:
    return f"{int.from_bytes(key[:2], 'little') & _SHARD_MASK:03x}.idx"


class OffsetIndex:
    """The side index of one JSONL store (see the module docstring)."""

    def __init__(self, directory: Path) -> None:
        self._dir = directory

    @contextmanager
    def reading(self, data_fd: int, generation: int) -> Iterator[OffsetIndex]:
        """Hold the index up to date with *data_fd* and locked for reading.

        Brings the index up to the end of the store as *data_fd* sees it (rebuilding it when
        it describes another version of the store), then holds a shared lock while the caller
        searches it.
        """
        self._dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        state_fd = os.open(self._dir / "state", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            st = os.fstat(data_fd)
            want = (generation, st.st_ino)
            fcntl.flock(state_fd, fcntl.LOCK_SH)
            upto = self._covered(state_fd, data_fd, want)
            while upto is None or upto != st.st_size:
                fcntl.flock(state_fd, fcntl.LOCK_EX)
                self._catch_up(state_fd, data_fd, want, st.st_size)
                # Going back to shared is not atomic: check nobody rebuilt it in between.
                fcntl.flock(state_fd, fcntl.LOCK_SH)
                upto = self._covered(state_fd, data_fd, want)
                if upto is not None:
                    break
            yield self
        finally:
            os.close(state_fd)  # closing drops the lock

    def candidates(self, subtask_id: str) -> Iterator[tuple[int, int]]:
        """Yield ``(offset, length)`` of the lines indexed under a subtask, newest first.

        Hash collisions are possible: the caller checks the subtask id of what it reads.
        """
        key = subtask_key(subtask_id)
        try:
            fd = os.open(self._dir / _shard_name(key), os.O_RDONLY)
        except FileNotFoundError:
            return
        try:
            end = os.fstat(fd).st_size
            end -= end % ENTRY.size  # a catch-up may be writing the last entries
            seen: set[int] = set()
            while end > 0:
                start = max(0, end - _BLOCK)
                block = os.pread(fd, end - start, start)
                stop = len(block)
                while (pos := block.rfind(key, 0, stop)) >= 0:
                    if pos % ENTRY.size:  # the key's bytes inside another entry
                        stop = pos + len(key) - 1
                        continue
                    stop = pos
                    _, offset, length = ENTRY.unpack_from(block, pos)
                    if offset not in seen:
                        seen.add(offset)
                        yield offset, length
                end = start
        finally:
            os.close(fd)

    # --- keeping it up to date ------------------------------------------------------------

    def _covered(self, state_fd: int, data_fd: int, want: tuple[int, int]) -> int | None:
        """Return how far the index covers this version of the store, None if it doesn't."""
        raw = os.pread(state_fd, _STATE.size, 0)
        if len(raw) != _STATE.size:
            return None
        magic, generation, inode, upto, sample = _STATE.unpack(raw)
        if magic != _MAGIC or (generation, inode) != want:
            return None
        # The bytes before the covered end must still be there: catches a file rewritten in
        # place (same inode, no prune) that a check of the size alone would miss.
        if self._sample(data_fd, upto) != sample:
            return None
        return int(upto)

    def _sample(self, data_fd: int, upto: int) -> bytes:
        start = max(0, upto - _SAMPLE)
        return os.pread(data_fd, upto - start, start).ljust(_SAMPLE, b"\0")

    def _catch_up(self, state_fd: int, data_fd: int, want: tuple[int, int], size: int) -> None:
        upto = self._covered(state_fd, data_fd, want)  # again: another reader may have done it
        if upto is not None and upto > size:
            upto = None  # the store got shorter: someone rewrote it
        if upto is None:
            self._clear()
            upto = 0
        if upto >= size:
            return
        pending: defaultdict[str, list[bytes]] = defaultdict(list)
        count = 0
        pos = upto
        rest = b""
        while pos < size:
            chunk = os.pread(data_fd, min(_CHUNK, size - pos), pos)
            if not chunk:
                break
            buf = rest + chunk
            base = pos - len(rest)
            pos += len(chunk)
            start = 0
            while (nl := buf.find(b"\n", start)) >= 0:
                subtask = string_field(buf[start:nl], "subtaskId")
                if subtask is not None:
                    key = subtask_key(subtask)
                    pending[_shard_name(key)].append(ENTRY.pack(key, base + start, nl - start))
                    count += 1
                start = nl + 1
            rest = buf[start:]
            upto = base + start
            if count >= _FLUSH_ENTRIES:
                self._flush(pending)
                count = 0
        self._flush(pending)
        os.pwrite(state_fd, _STATE.pack(_MAGIC, *want, upto, self._sample(data_fd, upto)), 0)

    def _flush(self, pending: defaultdict[str, list[bytes]]) -> None:
        for name, entries in pending.items():
            fd = os.open(self._dir / name, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, b"".join(entries))
            finally:
                os.close(fd)
        pending.clear()

    def _clear(self) -> None:
        for shard in self._dir.glob("*.idx"):
            shard.unlink()
