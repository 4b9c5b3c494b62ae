"""The offset index beside a JSONL store: ``recent`` reads only what it returns.

Layout of ``<store>.index/``::

    state         a header (magic, the store's device and inode, the indexed-up-to offset,
                  where the last indexed line starts and its CRC-32, the shift of entry
                  offsets, a serial number, the header's own CRC-32), then one slot per
                  shard (entry count, CRC-32 of those entries, serial of the write)
    000.idx ...   4096 shards; each an array of 28-byte entries in file order:
                  8-byte key, line offset, line length, CRC-32 of the line, CRC-32 of the
                  entry's first 24 bytes

Each line has two entries: one under the key of its subtask id, one under the key of its
``(task id, subtask id)`` pair, each in the shard its key names. So ``recent(subtask,
task_id=T)`` finds that task's records without reading another task's records of the same
subtask id.

Appends don't touch the index: readers bring it up to date, under an exclusive ``flock`` on
``state``, by indexing the lines appended since the last reader did, and search it under a
shared one.

Nothing in the index is trusted (see docs/memory.md):

* the header names the version of the store it describes by the file's device and inode *and*
  by the CRC of the last line it covers (a file emptied and refilled in place, or replaced by
  one that happens to reuse the inode, has another line there): when it doesn't match, the
  index is rebuilt; a header torn or damaged fails its own CRC;
* the header also keeps the store's mtime when it was indexed: a store no longer than the index
  covers whose mtime moved was edited in place (a record changed to another subtask would
  otherwise be missing from its new subtask's entries for good), and the index is rebuilt;
  a line found changed under an entry also rebuilds the whole index, not only the shard
  (its new subtask may live in any shard). An edit followed by appends before any read is
  noticed only when a read meets the changed line;
* a shard's slot gives its entry count and their CRC; a shard shorter than that (deleted,
  truncated) or with other bytes (scribbled on) is rebuilt (a process checks a shard whole
  the first time it reads it, then only the entries added since); bytes past it (a
  catch-up killed half-way, stray bytes) are ignored and written over by the next catch-up,
  which writes at ``count * 28``, so a short write never misaligns later entries; a slot
  newer than the header (a catch-up killed between them) means the shard is rebuilt;
* every entry used is checked against its own CRC, and the line it points at against the
  line's CRC (and must end in a newline): any mismatch is :class:`IndexDoubtError`, and the
  caller rebuilds that shard and asks again.

A reader whose view of the file is shorter than the index (another reader indexed lines
appended after this one looked) uses the index as it is: the lines are in the file.

A prune carries the index over to the pruned file instead of leaving it to be rebuilt: see
:meth:`_Swap.carry_over`. Entry offsets are stored plus the state's ``shift``, so the entries
of the kept lines stay valid as they are.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import struct
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple, NoReturn

import attrs

from reflexkit._log import get_logger
from reflexkit.exceptions import StoreError
from reflexkit.memory._codec import MAX_LINE, read_lines, string_field
from reflexkit.memory._writer import lock_within

try:  # hashlib's own blake2b, without the OpenSSL set-up of importing hashlib (#19)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover -- an interpreter built without the module
    from hashlib import blake2b

__all__ = ["ENTRY", "IndexDoubtError", "OffsetIndex", "pair_key", "subtask_key"]

log = get_logger("reflexkit.memory")

_MAGIC = b"RKIDX003"
# magic, dev, ino, upto, last start, shift, mtime of the store when indexed, last crc, serial, crc
_HEAD = struct.Struct("<8sQQQQQQIII")
_SHARDS = 4096
_SLOT = struct.Struct("<III")  # entry count, CRC-32 of those entries, serial
_SLOTS_AT = 128
ENTRY = struct.Struct("<8sQIII")  # key, offset, length, line crc, entry crc
_ENTRY_BODY = 24
_OFFSET = struct.Struct("<Q")
_BLOCK = ENTRY.size * 4096
_FLUSH_ENTRIES = 200_000
_MAX_SERIAL = 0xFFFF_FFFE
_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC
_KEYS_CACHED = 65_536
_IDENTITY = 64 << 10  # the most of the last indexed line whose CRC names the file


class IndexDoubtError(Exception):
    """An entry of the index does not match the file: rebuild the shard and ask again."""

    def __init__(self, shard: int, why: str, *, line_changed: bool = False) -> None:
        super().__init__(f"index shard {shard:03x}: {why}")
        self.shard = shard
        # A line of the store is not what was indexed (edited in place): its new subtask may
        # be under any shard, so the whole index is rebuilt, not this shard alone.
        self.line_changed = line_changed


class _Head(NamedTuple):
    upto: int
    serial: int
    shift: int  # an entry's offset minus this is the line's offset in the file


def subtask_key(subtask_id: str) -> bytes:
    """Return the 8-byte key of a subtask id (stable across processes, unlike ``hash``)."""
    return blake2b(subtask_id.encode(), digest_size=8, person=b"subtask").digest()


def pair_key(task_id: str, subtask_id: str) -> bytes:
    """Return the 8-byte key of a ``(task id, subtask id)`` pair."""
    data = b"%d:%s%s" % (len(task_id), task_id.encode(), subtask_id.encode())
    return blake2b(data, digest_size=8, person=b"pair").digest()


def _shard_of(key: bytes) -> int:
    return int.from_bytes(key[:2], "little") & (_SHARDS - 1)


def _shard_name(shard: int) -> str:
    return f"{shard:03x}.idx"


def _entry(key: bytes, offset: int, line: bytes) -> bytes:
    body = struct.pack("<8sQII", key, offset, len(line), zlib.crc32(line))
    return body + struct.pack("<I", zlib.crc32(body))


def _refuse_link(path: Path, err: OSError) -> StoreError:
    return StoreError(f"{path} is a symlink (or under one); reflexkit does not follow it: {err}")


class OffsetIndex:
    """The side index of one JSONL store (see the module docstring)."""

    def __init__(self, directory: Path) -> None:
        self._dir = directory
        self._keys: dict[tuple[str, str], tuple[bytes, bytes]] = {}
        self._verified: dict[int, tuple[int, int]] = {}  # shard -> bytes checked, their CRC

    # --- opening --------------------------------------------------------------------------

    def _open_dir(self) -> int:
        """Open (creating) the index folder; a symlink there is a StoreError."""
        try:
            st = os.lstat(self._dir)
        except FileNotFoundError:
            self._dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        else:
            if stat.S_ISLNK(st.st_mode):
                raise _refuse_link(self._dir, OSError(errno.ELOOP, "a symlink"))
        try:
            return os.open(self._dir, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW)
        except OSError as err:
            if err.errno == errno.ELOOP:
                raise _refuse_link(self._dir, err) from err
            raise

    def _open_in(self, dir_fd: int, name: str, flags: int) -> int:
        try:
            return os.open(name, flags | _NOFOLLOW, 0o600, dir_fd=dir_fd)
        except OSError as err:
            if err.errno == errno.ELOOP:
                raise _refuse_link(self._dir / name, err) from err
            raise

    @contextmanager
    def reading(self, data_fd: int) -> Iterator[_Reader]:
        """Hold the index up to date with *data_fd* and locked for reading.

        Brings the index up to the end of the store as *data_fd* sees it (rebuilding it when
        it describes another version of the store), then holds a shared lock while the caller
        searches it.

        Raises:
            StoreError: The folder, ``state`` or a shard is a symlink.
            OSError: The index can't be read or written (the caller reads without it).
        """
        with self._state() as (dir_fd, state_fd):
            st = os.fstat(data_fd)
            lock_within(state_fd, fcntl.LOCK_SH)
            head = self._head(state_fd, data_fd, st)
            tries = 0
            # An index ahead of our view of the file is fine: those lines are in the file.
            while head is None or head.upto < st.st_size:
                tries += 1
                if tries > 3:  # noqa: PLR2004 -- state can't be written: read without it
                    raise OSError(errno.EIO, "the index state does not stay written")
                before = -1 if head is None else head.upto
                lock_within(state_fd, fcntl.LOCK_EX)
                self._catch_up(dir_fd, state_fd, data_fd, st.st_size)
                # Going back to shared is not atomic: read the state again.
                lock_within(state_fd, fcntl.LOCK_SH)
                st = os.fstat(data_fd)
                head = self._head(state_fd, data_fd, st)
                if head is not None and head.upto == before:
                    break  # no newline after it: a torn tail (or a line being written)
            yield _Reader(self, dir_fd, state_fd, data_fd, head)

    @contextmanager
    def _state(self) -> Iterator[tuple[int, int]]:
        dir_fd = self._open_dir()
        try:
            state_fd = self._open_in(dir_fd, "state", os.O_RDWR | os.O_CREAT)
            try:
                yield dir_fd, state_fd
            finally:
                os.close(state_fd)  # closing drops the lock
        finally:
            os.close(dir_fd)

    def repair(self, data_fd: int, shard: int | None) -> None:
        """Rebuild one shard from the store (all of the index when *shard* is None)."""
        with self._state() as (dir_fd, state_fd):
            st = os.fstat(data_fd)
            lock_within(state_fd, fcntl.LOCK_EX)
            head = self._head(state_fd, data_fd, st)
            slots = None if head is None else self._slots(state_fd, head)
            if head is None or slots is None or shard is None:
                os.ftruncate(state_fd, 0)  # the next catch-up rebuilds everything
                return
            slots.reset(shard)
            pending = _Pending(self, dir_fd, slots, {shard}, head.shift)
            _scan(data_fd, 0, head.upto, pending, self._keys_of)
            pending.flush()
            self._write_state(state_fd, data_fd, st, head, slots)

    @contextmanager
    def swapping(self, old_fd: int, runs: list[tuple[int, int, int]]) -> Iterator[_Swap]:
        """Hold the index locked while a prune swaps the store; then carry it over.

        *runs* are the kept parts of the old file, ``(old start, old end, new start)``.
        Readers wait meanwhile (they would have to rebuild the index otherwise). When the
        prune dies before :meth:`_Swap.carry_over` writes the new state, the state still names
        the old file, so the next reader rebuilds the index instead of trusting it.
        """
        try:
            state = self._state()
            dir_fd, state_fd = state.__enter__()
        except OSError as err:  # no index to carry over (a read-only folder): readers manage
            log.warning("%s: can't carry the index over a prune: %s", self._dir, err)
            yield _Swap(self, -1, -1, None, None, runs)
            return
        try:
            try:
                lock_within(state_fd, fcntl.LOCK_EX)
            except OSError as err:  # held by a stopped process: the next reader rebuilds
                log.warning("%s: can't carry the index over a prune: %s", self._dir, err)
                yield _Swap(self, -1, -1, None, None, runs)
                return
            head = self._head(state_fd, old_fd, os.fstat(old_fd))
            slots = None if head is None else self._slots(state_fd, head)
            yield _Swap(self, dir_fd, state_fd, head, slots, runs)
        finally:
            state.__exit__(None, None, None)

    def _verify(self, fd: int, shard: int, end: int, crc: int) -> None:
        """Check a shard's first *end* bytes against its CRC (only new bytes, once seen)."""
        done, done_crc = self._verified.get(shard, (0, 0))
        if (done, done_crc) == (end, crc):
            return
        if os.fstat(fd).st_size < end:  # before a read of *end* bytes: a forged count
            raise IndexDoubtError(shard, "the shard is shorter than its count")
        if 0 < done < end:
            tail = os.pread(fd, end - done, done)
            if len(tail) == end - done and zlib.crc32(tail, done_crc) == crc:
                self._verified[shard] = (end, crc)
                return
        whole = os.pread(fd, end, 0)
        if len(whole) != end:
            raise IndexDoubtError(shard, "the shard is shorter than its count")
        if zlib.crc32(whole) != crc:
            raise IndexDoubtError(shard, "the shard does not hold what the state says")
        self._verified[shard] = (end, crc)

    # --- the state ------------------------------------------------------------------------

    def _head(self, state_fd: int, data_fd: int, st: os.stat_result) -> _Head | None:
        """Return the state's header when it describes this version of the store, or None.

        *st* is the store's fstat now. A store exactly as long as what the index covers whose
        mtime moved since was changed in place (an edit, not an append): another version.
        """
        raw = os.pread(state_fd, _HEAD.size, 0)
        if len(raw) != _HEAD.size:
            return None
        magic, dev, ino, upto, last_start, shift, mtime, last_crc, serial, crc = _HEAD.unpack(raw)
        if magic != _MAGIC or crc != zlib.crc32(raw[:-4]) or (dev, ino) != (st.st_dev, st.st_ino):
            return None
        if st.st_size == upto and st.st_mtime_ns != mtime and _changed_in_place(data_fd, upto):
            return None
        if upto and not _ends_with(data_fd, upto, last_start, last_crc):
            return None
        return _Head(upto, serial, shift)

    def _slots(self, state_fd: int, head: _Head) -> _Slots | None:
        raw = os.pread(state_fd, _SLOT.size * _SHARDS, _SLOTS_AT)
        if len(raw) != _SLOT.size * _SHARDS:
            return None
        values = struct.unpack(f"<{3 * _SHARDS}I", raw)
        if max(values[2::3]) > head.serial:
            return None  # a catch-up died between its slots and its header
        return _Slots(list(values[0::3]), list(values[1::3]))

    def _slot(self, state_fd: int, head: _Head, shard: int) -> tuple[int, int]:
        raw = os.pread(state_fd, _SLOT.size, _SLOTS_AT + shard * _SLOT.size)
        if len(raw) != _SLOT.size:
            raise IndexDoubtError(shard, "the state has no slot for it")
        count, crc, serial = _SLOT.unpack(raw)
        if serial > head.serial:
            raise IndexDoubtError(shard, "its slot is newer than the state")
        return count, crc

    def _write_state(
        self, state_fd: int, data_fd: int, st: os.stat_result, head: _Head, slots: _Slots
    ) -> None:
        """Write the slots that changed, then the header that covers them."""
        upto, serial = head.upto, head.serial + 1
        if slots.touched is None:
            values = [
                v for n, c in zip(slots.counts, slots.crcs, strict=True) for v in (n, c, serial)
            ]
            data = struct.pack(f"<{3 * _SHARDS}I", *values)
            if os.pwrite(state_fd, data, _SLOTS_AT) != len(data):
                raise OSError(errno.ENOSPC, "short write of the index state")
        else:
            for shard in sorted(slots.touched):
                one = _SLOT.pack(slots.counts[shard], slots.crcs[shard], serial)
                if os.pwrite(state_fd, one, _SLOTS_AT + shard * _SLOT.size) != len(one):
                    raise OSError(errno.ENOSPC, "short write of the index state")
        last_start = _line_start(data_fd, upto)
        last = os.pread(data_fd, upto - last_start, last_start)
        body = _HEAD.pack(
            _MAGIC,
            st.st_dev,
            st.st_ino,
            upto,
            last_start,
            head.shift,
            st.st_mtime_ns,
            zlib.crc32(last),
            serial,
            0,
        )[:-4]
        header = body + struct.pack("<I", zlib.crc32(body))
        if os.pwrite(state_fd, header, 0) != len(header):
            raise OSError(errno.ENOSPC, "short write of the index state")

    # --- keeping it up to date ------------------------------------------------------------

    def _keys_of(self, task_id: str, subtask_id: str) -> tuple[bytes, bytes]:
        keys = self._keys.get((task_id, subtask_id))
        if keys is None:
            if len(self._keys) >= _KEYS_CACHED:
                self._keys.clear()
            keys = subtask_key(subtask_id), pair_key(task_id, subtask_id)
            self._keys[task_id, subtask_id] = keys
        return keys

    def _catch_up(self, dir_fd: int, state_fd: int, data_fd: int, size: int) -> None:
        # The mtime is taken before the lines are read: a write moves it before the size, so
        # the state never names an mtime older than what it covers.
        st = os.fstat(data_fd)
        head = self._head(state_fd, data_fd, st)  # again: another reader may have done it
        slots = None if head is None else self._slots(state_fd, head)
        if head is None or slots is None or head.serial >= _MAX_SERIAL:
            self._clear(dir_fd)
            head = _Head(0, 0, 0)
            slots = _Slots([0] * _SHARDS, [0] * _SHARDS)
            slots.touched = None
        size = max(size, st.st_size)
        if head.upto >= size:
            return
        if head.upto == 0 and size:
            log.info("%s: indexing the store from the start", self._dir)
        pending = _Pending(self, dir_fd, slots, None, head.shift)
        upto = _scan(data_fd, head.upto, size, pending, self._keys_of)
        if upto == head.upto and slots.touched is not None:
            return  # no whole line since (a torn tail): the state stays as it is
        pending.flush()
        if pending.damaged:
            # A shard was shorter than its count: index it again from the start.
            for shard in pending.damaged:
                slots.reset(shard)
            again = _Pending(self, dir_fd, slots, pending.damaged, head.shift)
            _scan(data_fd, 0, upto, again, self._keys_of)
            again.flush()
        self._write_state(state_fd, data_fd, st, head._replace(upto=upto), slots)

    def _clear(self, dir_fd: int) -> None:
        for name in os.listdir(dir_fd):
            if name.endswith(".idx"):
                os.unlink(name, dir_fd=dir_fd)


class _Slots:
    """Per shard: how many entries the state covers, and the CRC-32 of their bytes."""

    def __init__(self, counts: list[int], crcs: list[int]) -> None:
        self.counts = counts
        self.crcs = crcs
        self.touched: set[int] | None = set()  # None: all of them

    def reset(self, shard: int) -> None:
        self.counts[shard] = 0
        self.crcs[shard] = 0
        self.touch(shard)

    def touch(self, shard: int) -> None:
        if self.touched is not None:
            self.touched.add(shard)


@attrs.define
class _Swap:
    """Carries the index of a store over to its pruned copy, without reading the copy."""

    _index: OffsetIndex
    _dir_fd: int
    _state_fd: int
    _head: _Head | None
    _slots: _Slots | None
    _runs: list[tuple[int, int, int]]

    def carry_over(self, path: Path) -> None:
        """Rewrite the index for the file now at *path* (the pruned copy).

        Records are appended in about the order they are created, so the kept lines are one
        long run at the end of the old file and at most a few lines before it. The entries of
        that run stay as they are: only the state's ``shift`` changes, so an entry's offset
        minus the shift is the line's offset in the new file. Each shard keeps its entries from
        that run on (found by bisection) behind fresh entries for the few lines before it. When
        the index didn't cover the run, or a shard is damaged, the state is left naming the
        old file, and the next reader rebuilds the index.
        """
        head, slots, index = self._head, self._slots, self._index
        if head is None or slots is None or not self._runs:
            return
        first, last, new_start = self._runs[-1]
        if not first <= head.upto <= last:
            return
        try:
            new_fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW)  # never a FIFO's wait
        except OSError:
            return  # gone or replaced already: the next reader indexes what is there
        try:
            st = os.fstat(new_fd)
            shift = head.shift + first - new_start
            cut = first + head.shift  # the first kept entry's offset, as entries hold it
            before = _Pending(None, self._dir_fd, slots, None, shift)
            _scan(new_fd, 0, new_start, before, index._keys_of)  # noqa: SLF001
            slots.touched = None
            for shard in range(_SHARDS):
                fresh = before.entries.get(shard, [])
                if slots.counts[shard] or fresh:
                    self._rewrite(shard, slots, cut, fresh)
            index._write_state(  # noqa: SLF001
                self._state_fd,
                new_fd,
                st,
                _Head(head.upto - first + new_start, head.serial, shift),
                slots,
            )
        except (OSError, _DamagedError) as err:
            # The state still names the old file: the next reader rebuilds the index.
            log.warning("%s: the index is rebuilt after the prune: %r", index._dir, err)  # noqa: SLF001
        finally:
            os.close(new_fd)

    def _rewrite(self, shard: int, slots: _Slots, cut: int, fresh: list[bytes]) -> None:
        fd = self._index._open_in(  # noqa: SLF001
            self._dir_fd, _shard_name(shard), os.O_RDWR | os.O_CREAT
        )
        try:
            size = slots.counts[shard] * ENTRY.size
            if os.fstat(fd).st_size < size:  # a forged count: never read that much
                raise _DamagedError
            old = os.pread(fd, size, 0)
            if len(old) != size or zlib.crc32(old) != slots.crcs[shard]:
                raise _DamagedError
            lo, hi = 0, len(old) // ENTRY.size
            while lo < hi:  # the first entry at or after the cut
                mid = (lo + hi) // 2
                if _OFFSET.unpack_from(old, mid * ENTRY.size + 8)[0] < cut:
                    lo = mid + 1
                else:
                    hi = mid
            data = b"".join(fresh) + old[lo * ENTRY.size :]
            if os.pwrite(fd, data, 0) != len(data):
                raise OSError(errno.ENOSPC, f"short write to index shard {shard:03x}")
            # The bytes past the new count stay (readers ignore them; the next catch-up
            # writes over them): cutting 4096 files short costs more than the whole copy.
            slots.counts[shard] = len(data) // ENTRY.size
            slots.crcs[shard] = zlib.crc32(data)
        finally:
            os.close(fd)


class _DamagedError(Exception):
    """A shard does not hold what its slot says."""


class _Pending:
    """Entries waiting to be written, per shard; written at ``count * ENTRY.size``."""

    def __init__(
        self,
        index: OffsetIndex | None,
        dir_fd: int,
        slots: _Slots,
        only: set[int] | None,
        shift: int,
    ) -> None:
        self._index = index
        self._shift = shift
        self._dir_fd = dir_fd
        self._slots = slots
        self.only = only
        self.entries: dict[int, list[bytes]] = {}
        self.size = 0
        self.damaged: set[int] = set()

    def add(self, key: bytes, offset: int, line: bytes) -> None:
        shard = _shard_of(key)
        if self.only is not None and shard not in self.only:
            return
        self.entries.setdefault(shard, []).append(_entry(key, offset + self._shift, line))
        self.size += 1
        if self.size >= _FLUSH_ENTRIES and self._index is not None:
            self.flush()

    def flush(self) -> None:
        assert self._index is not None  # noqa: S101 -- only a catch-up's entries are flushed
        for shard, entries in self.entries.items():
            if shard not in self.damaged:
                self._write(shard, b"".join(entries))
        self.entries.clear()
        self.size = 0

    def _write(self, shard: int, data: bytes) -> None:
        assert self._index is not None  # noqa: S101
        slots = self._slots
        fd = self._index._open_in(  # noqa: SLF001 -- the index's own helper
            self._dir_fd, _shard_name(shard), os.O_RDWR | os.O_CREAT
        )
        try:
            at = slots.counts[shard] * ENTRY.size
            have = os.fstat(fd).st_size
            if have < at:
                self.damaged.add(shard)
                return
            # Bytes past the count (a killed catch-up's, stray ones, a prune's leftovers) are
            # written over: readers never look past the count.
            written = os.pwrite(fd, data, at)
            if written != len(data):
                _no_space(f"index shard {shard:03x}", written, len(data))
            slots.counts[shard] += len(data) // ENTRY.size
            slots.crcs[shard] = zlib.crc32(data, slots.crcs[shard])
            slots.touch(shard)
        except OSError:
            # Cut the shard back to what the state covers before giving up.
            os.ftruncate(fd, slots.counts[shard] * ENTRY.size)
            raise
        finally:
            os.close(fd)


def _no_space(what: str, written: int, size: int) -> NoReturn:
    msg = f"{os.strerror(errno.ENOSPC)} (wrote {written} of {size} bytes of {what})"
    raise OSError(errno.ENOSPC, msg)


def _scan(
    data_fd: int,
    start: int,
    end: int,
    pending: _Pending,
    keys: Callable[[str, str], tuple[bytes, bytes]],
) -> int:
    """Index the whole lines in ``[start, end)``; return where the last one ended."""
    upto = start
    add = pending.add
    for offset, upto, line in read_lines(data_fd, start, end):  # noqa: B007 -- upto: the last
        if line is None:
            continue  # too long to be a record: not indexed
        subtask = string_field(line, "subtaskId")
        if subtask is not None:
            task = string_field(line, "taskId") or ""
            by_subtask, by_pair = keys(task, subtask)
            add(by_subtask, offset, line)
            add(by_pair, offset, line)
    return upto


def _ends_with(data_fd: int, upto: int, last_start: int, last_crc: int) -> bool:
    """Whether the store's line ``[last_start, upto)`` is the one the index last covered.

    The identity of the file is its last indexed line (unique ids and times): a file
    rewritten in place, or another file on a reused inode, has another one there. A span
    longer than the index ever names is never read (nor allocated): a forged or damaged
    state.
    """
    if upto < last_start or upto - last_start > _IDENTITY + 1:
        return False
    last = os.pread(data_fd, upto - last_start, last_start)
    return len(last) == upto - last_start and zlib.crc32(last) == last_crc and last.endswith(b"\n")


def _changed_in_place(data_fd: int, upto: int) -> bool:
    """Whether a store whose mtime moved, no longer than the index covers, was edited.

    Looked at again now: a write moves the mtime before the size, so an append in progress
    (or one since the caller's look) shows as a longer file, not as an edit. A shorter view
    than the index is another reader's catch-up being ahead, never an edit either.
    """
    return os.fstat(data_fd).st_size == upto


def _line_start(data_fd: int, upto: int) -> int:
    """Return where the line that ends at *upto* (newline included) starts.

    At most :data:`_IDENTITY` bytes back: the identity of the file is the CRC of its last
    indexed line, or of that line's last 64 KiB when it is longer (a damaged one).
    """
    lo = max(0, upto - 1 - _IDENTITY)
    nl = os.pread(data_fd, upto - 1 - lo, lo).rfind(b"\n") if upto > 1 else -1
    return lo + nl + 1 if nl >= 0 else lo


def _read_entry(  # noqa: PLR0913, PLR0917 -- one step of _Reader.lines, its state passed in
    block: bytes, pos: int, start: int, shard: int, shift: int, data_fd: int, seen: set[int]
) -> tuple[int, bytes | None]:
    """Check the entry at *pos* of *block* and read its line: ``(offset, line)``.

    *line* is None for an offset already yielded (*seen*).

    Raises:
        IndexDoubtError: The entry is damaged, names more than a record can be (never read
            nor allocated), or its line is not what was indexed.
    """
    _, offset, length, line_crc, entry_crc = ENTRY.unpack_from(block, pos)
    if zlib.crc32(block[pos : pos + _ENTRY_BODY]) != entry_crc:
        raise IndexDoubtError(shard, f"a damaged entry at {start + pos}")
    if length > MAX_LINE:
        raise IndexDoubtError(shard, f"an entry of {length:,} bytes")
    offset -= shift
    if offset in seen:
        return offset, None
    seen.add(offset)
    line = os.pread(data_fd, length + 1, offset)
    if line[-1:] != b"\n" or zlib.crc32(line[:-1]) != line_crc:
        raise IndexDoubtError(shard, f"no such line at byte {offset}", line_changed=True)
    return offset, line[:-1]


class _Reader:
    """The index of one store, locked and current: looks lines up by key."""

    def __init__(
        self, index: OffsetIndex, dir_fd: int, state_fd: int, data_fd: int, head: _Head
    ) -> None:
        self._index = index
        self._dir_fd = dir_fd
        self._state_fd = state_fd
        self._data_fd = data_fd
        self._head = head

    def lines(self, key: bytes) -> Iterator[tuple[int, bytes]]:
        """Yield ``(offset, line)`` of the lines indexed under *key*, newest first, checked.

        Hash collisions are possible: the caller checks the fields of what it reads.

        Raises:
            IndexDoubtError: An entry, or the line it points at, is not what was indexed.
        """
        shard = _shard_of(key)
        count, crc = self._index._slot(self._state_fd, self._head, shard)  # noqa: SLF001
        if count == 0:
            return
        try:
            fd = self._index._open_in(  # noqa: SLF001
                self._dir_fd, _shard_name(shard), os.O_RDONLY
            )
        except FileNotFoundError:
            raise IndexDoubtError(shard, "the shard is missing") from None
        try:
            end = count * ENTRY.size
            self._index._verify(fd, shard, end, crc)  # noqa: SLF001
            seen: set[int] = set()
            data_fd = self._data_fd
            shift = self._head.shift
            while end > 0:
                start = max(0, end - _BLOCK)
                block = os.pread(fd, end - start, start)
                if len(block) != end - start:
                    raise IndexDoubtError(shard, "the shard got shorter while read")
                stop = len(block)
                while (pos := block.rfind(key, 0, stop)) >= 0:
                    if pos % ENTRY.size:  # the key's bytes inside another entry
                        stop = pos + len(key) - 1
                        continue
                    stop = pos
                    offset, line = _read_entry(block, pos, start, shard, shift, data_fd, seen)
                    if line is not None:
                        yield offset, line
                end = start
        finally:
            os.close(fd)
