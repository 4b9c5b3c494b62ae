"""What the JSONL store adds to the contract: its file format, bad lines, side files."""

from __future__ import annotations

import logging
import os
import random
import shutil
import stat
import subprocess
import sys
import warnings
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import attrs
import orjson
import pytest
from hypothesis import given, strategies as st

from reflexkit import structure, unstructure
from reflexkit.exceptions import CorruptRecordWarning, StoreError
from reflexkit.memory import JsonlMemory
from reflexkit.memory._codec import encode_line
from reflexkit.memory._index import OffsetIndex
from reflexkit.models import FailureType, Reflection, ReflectionCategory, ReflectionSource
from reflexkit.testing.memory_contract import make_reflection

texts = st.text(max_size=30)
reflections = st.builds(
    Reflection,
    id=st.text(min_size=1, max_size=10).filter(str.strip),
    task_id=texts,
    subtask_id=st.text(min_size=1, max_size=10).filter(str.strip),
    attempt_number=st.integers(min_value=1, max_value=99),
    category=st.sampled_from(ReflectionCategory),
    failure_type=st.sampled_from(FailureType),
    analysis=texts,
    suggestion=texts,
    action_items=st.lists(texts, max_size=3).map(tuple),
    confidence=st.floats(min_value=0, max_value=1),
    source=st.sampled_from(ReflectionSource),
    created_at=st.datetimes(
        min_value=datetime(2000, 1, 1),  # noqa: DTZ001 -- hypothesis wants naive bounds
        max_value=datetime(2100, 1, 1),  # noqa: DTZ001
        timezones=st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30))]),
    ),
    model=st.none() | texts,
    input_tokens=st.none() | st.integers(min_value=0, max_value=10**6),
    redactions=st.dictionaries(texts, st.integers(min_value=0, max_value=9), max_size=2),
)


@given(reflections)
def test_a_line_is_the_converters_json(r: Reflection) -> None:
    """The fast line writer gives exactly the converter's JSON."""
    assert encode_line(r) == orjson.dumps(unstructure(r)) + b"\n"


@pytest.fixture
def path(tmp_path: Path) -> Path:
    """Where the store under test lives (its folder doesn't exist yet)."""
    return tmp_path / "memory" / "reflections.jsonl"


def test_the_file_is_one_camelcase_record_a_line(path: Path) -> None:
    """The file is camelCase JSON, one record a line, readable by the converter."""
    store = JsonlMemory(path)
    r = make_reflection()
    store.append(r)
    store.append(make_reflection("sub-2"))
    lines = path.read_bytes().splitlines()
    assert len(lines) == 2
    data = orjson.loads(lines[0])
    assert data["subtaskId"] == "sub-1"
    assert data["attemptNumber"] == 1
    assert data["createdAt"] == "2026-06-01T12:00:00Z"
    assert structure(data, Reflection) == r


def test_files_are_private(path: Path) -> None:
    """The store and its side files are created with mode 0600."""
    store = JsonlMemory(path)
    store.append(make_reflection())
    store.recent("sub-1", limit=1)
    store.prune(older_than=datetime(2026, 1, 1, tzinfo=UTC))  # creates the prune lock
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.with_name("reflections.jsonl.lock").stat().st_mode) == 0o600
    for side in path.with_name("reflections.jsonl.index").iterdir():
        assert stat.S_IMODE(side.stat().st_mode) == 0o600


def _write_bad_file(path: Path, good: list[Reflection]) -> None:
    lines = [
        encode_line(good[0]),
        b"this is not json\n",
        encode_line(good[1]),
        b'{"id": "x", "subtaskId": "sub-1", "confidence": 2}\n',  # JSON, not a reflection
        b"[1, 2]\n",
        b"\n",
        encode_line(good[2]),
        encode_line(good[3])[:57],  # torn: the process died mid-line
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(lines))


def test_bad_lines_cost_nothing_valid(path: Path) -> None:
    """Garbage, invalid records and a torn tail are skipped with a warning and counted."""
    good = [make_reflection(attempt=n) for n in range(1, 5)]
    _write_bad_file(path, good)
    store = JsonlMemory(path)
    with pytest.warns(CorruptRecordWarning) as caught:
        assert list(store) == good[:3]
    messages = [str(w.message) for w in caught]
    assert len(messages) == 4
    assert any("not JSON" in m for m in messages)
    assert any("torn" in m for m in messages)
    assert any("$.confidence" in m or "confidence" in m for m in messages)
    with pytest.warns(CorruptRecordWarning, match="skipped the record at byte"):
        assert store.recent("sub-1", limit=5) == good[:3]
    assert store.stats().corrupt == 4
    assert store.stats().records == 3


def test_the_append_after_a_torn_tail_starts_a_new_line(path: Path) -> None:
    """An append after a torn tail puts a newline first, so its record reads whole."""
    good = [make_reflection(attempt=n) for n in range(1, 5)]
    _write_bad_file(path, good)
    store = JsonlMemory(path)
    later = make_reflection(attempt=9)
    store.append(later)
    assert path.read_bytes().endswith(b"\n" + encode_line(later))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CorruptRecordWarning)
        assert list(store) == [*good[:3], later]
        assert store.recent("sub-1", limit=2) == [good[2], later]
        assert store.stats().corrupt == 4  # the healed torn line is now a bad middle line


def test_prune_keeps_lines_it_cannot_read(path: Path) -> None:
    """Prune removes old records but keeps unreadable lines for a human to look at."""
    good = [make_reflection(attempt=n) for n in range(1, 5)]
    _write_bad_file(path, good)
    store = JsonlMemory(path)
    assert store.prune(older_than=datetime(2026, 6, 2, tzinfo=UTC)) == 3
    assert path.read_bytes().count(b"this is not json") == 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CorruptRecordWarning)
        assert list(store) == []
        assert store.stats().corrupt == 4


def test_the_index_is_rebuilt_when_missing(path: Path) -> None:
    """A deleted or damaged index is rebuilt from the file."""
    store = JsonlMemory(path)
    records = [make_reflection(f"s{n % 3}", attempt=n + 1) for n in range(12)]
    for r in records:
        store.append(r)
    assert store.recent("s1", limit=2) == records[7::3]
    shutil.rmtree(path.with_name("reflections.jsonl.index"))
    assert store.recent("s1", limit=2) == records[7::3]
    (path.with_name("reflections.jsonl.index") / "state").write_bytes(b"garbage")
    assert store.recent("s2", limit=1) == records[11:]


def test_the_index_follows_a_file_replaced_by_hand(path: Path, tmp_path: Path) -> None:
    """A file replaced or rewritten by hand is re-indexed, not misread."""
    store = JsonlMemory(path)
    first = [make_reflection(attempt=n) for n in range(1, 4)]
    for r in first:
        store.append(r)
    assert store.recent("sub-1", limit=5) == first
    other = tmp_path / "other.jsonl"
    second = [make_reflection(attempt=n) for n in range(1, 3)]
    other.write_bytes(b"".join(encode_line(r) for r in second))
    other.replace(path)  # e.g. restored from a backup
    assert store.recent("sub-1", limit=5) == second
    path.write_bytes(encode_line(first[0]))  # shorter, in place
    assert store.recent("sub-1", limit=5) == first[:1]


def test_a_forked_child_appends_through_its_own_descriptor(path: Path) -> None:
    """After fork the child reopens the file instead of sharing the parent's lock."""
    store = JsonlMemory(path)
    store.append(make_reflection(attempt=1))
    pid = os.fork()
    if pid == 0:  # pragma: no cover -- the child
        try:
            store.append(make_reflection(attempt=2))
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    store.append(make_reflection(attempt=3))
    assert [r.attempt_number for r in store] == [1, 2, 3]


def test_an_unwritable_path_is_a_store_error(tmp_path: Path) -> None:
    """An append that can't be written is a StoreError naming the file."""
    (tmp_path / "dir.jsonl").mkdir()
    store = JsonlMemory(tmp_path / "dir.jsonl")
    with pytest.raises(StoreError, match=r"can't append to .*dir\.jsonl"):
        store.append(make_reflection())


def test_a_missing_file_reads_as_empty(path: Path) -> None:
    """Reading never creates the file; a missing file is an empty store."""
    store = JsonlMemory(path)
    assert store.recent("sub-1", limit=3) == []
    assert list(store) == []
    assert store.stats().size_bytes == 0
    assert not path.exists()


def test_without_an_index_recent_reads_backwards(
    path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Where no index can be kept beside the file, recent reads from the end instead."""
    store = JsonlMemory(path)
    records = [make_reflection(f"s{n % 3}", attempt=n + 1) for n in range(30)]
    for r in records:
        store.append(r)
    with path.open("ab") as f:
        f.write(b"torn tail")
    monkeypatch.setattr("reflexkit.memory._jsonl._CHUNK", 1000)  # many blocks, long lines
    reader = JsonlMemory(path)
    reader._index = OffsetIndex(path / "index")  # under a file: every index call fails
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CorruptRecordWarning)
        assert reader.recent("s1", limit=4) == records[1::3][-4:]
        assert reader.recent("s2", limit=100) == records[2::3]
    assert "reading from the end" in caplog.text


def _bytes_read() -> int:
    """Bytes this process has read through read/pread so far (Linux's /proc/self/io)."""
    try:
        text = Path("/proc/self/io").read_text()
    except OSError:
        pytest.skip("no /proc/self/io here to count the bytes a call reads")
    return int(next(line for line in text.splitlines() if line.startswith("rchar:")).split()[1])


def test_recent_of_a_task_reads_only_that_tasks_records(path: Path) -> None:
    """Another task floods the subtask id: recent(task_id=) still reads a few KB, not the flood."""
    store = JsonlMemory(path)
    mine = [make_reflection("docs", task_id="t-api", attempt=n) for n in range(1, 4)]
    for r in mine:
        store.append(r)
    flood = (make_reflection("docs", task_id="t-web", attempt=n) for n in range(1, 20_001))
    with path.open("ab") as f:
        f.write(b"".join(encode_line(r) for r in flood))
    assert store.recent("docs", limit=3, task_id="t-api") == mine  # indexes the flood once
    before = _bytes_read()
    assert store.recent("docs", limit=3, task_id="t-api") == mine
    read = _bytes_read() - before
    assert read < 64 * 1024, f"read {read} bytes; the flood is {path.stat().st_size}"


def test_a_prune_carries_the_index_over(path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """After a prune, recent answers from the carried-over index, without indexing again.

    The records are appended roughly in time order, with some out of order around the
    cut-off (kept lines before the long kept run), and under three tasks.
    """
    rnd = random.Random(13)  # noqa: S311 -- test data
    now = datetime(2026, 6, 1, tzinfo=UTC)
    store = JsonlMemory(path)
    records = []
    for i in range(600):
        age = timedelta(minutes=600 - i + rnd.randint(-40, 40))
        r = make_reflection(
            f"s{rnd.randrange(12)}", task_id=f"t{i % 3}", attempt=i + 1, created_at=now - age
        )
        records.append(r)
        store.append(r)
    assert store.recent("s1", limit=3) == [r for r in records if r.subtask_id == "s1"][-3:]
    caplog.set_level(logging.INFO, logger="reflexkit.memory")
    for cut in (now - timedelta(minutes=300), now - timedelta(minutes=100)):
        store.prune(older_than=cut)
        records = [r for r in records if r.created_at >= cut]
        store.append(later := make_reflection("s1", task_id="t1", attempt=9999, created_at=now))
        records.append(later)
        for reader in (store, JsonlMemory(path)):
            for sub in (f"s{n}" for n in range(12)):
                mine = [r for r in records if r.subtask_id == sub]
                assert reader.recent(sub, limit=3) == mine[-3:]
                for task in ("t0", "t1", "t2"):
                    theirs = [r for r in mine if r.task_id == task]
                    assert reader.recent(sub, limit=2, task_id=task) == theirs[-2:]
    assert "from the start" not in caplog.text


def test_prune_reads_lines_of_another_layout(path: Path) -> None:
    """An old record written by another tool (spaces, a zone offset) among new ones goes."""
    now = datetime(2026, 6, 1, tzinfo=UTC)
    new = [make_reflection(attempt=n, created_at=now) for n in range(1, 2001)]
    old = make_reflection(attempt=5000, created_at=now - timedelta(days=90))
    data = unstructure(old)
    data["createdAt"] = "2026-03-03T05:30:00+05:30"  # the same instant, not in UTC
    foreign = orjson.dumps(data, option=orjson.OPT_INDENT_2).replace(b"\n", b" ") + b"\n"
    path.parent.mkdir(parents=True)
    lines = [encode_line(r) for r in new]
    lines.insert(1000, foreign)
    path.write_bytes(b"".join(lines))
    store = JsonlMemory(path)
    assert store.prune(older_than=now - timedelta(days=30)) == 1
    assert list(store) == new


def test_prune_decides_every_line_of_a_block_it_skips(path: Path) -> None:
    """Whole blocks are dropped or copied only when every line in them would be.

    A block of old records (more than prune's 1 MiB block) holds a hand-written note with
    no timestamp, which must stay, and a foreign line whose nested object has a second old
    ``createdAt``, which must not make up for the note's missing one; a block of new records
    holds an old record appended late, which must go.
    """
    now = datetime(2026, 6, 1, tzinfo=UTC)
    cut = now - timedelta(days=30)
    old = [make_reflection(attempt=n, created_at=now - timedelta(days=90)) for n in range(1, 6001)]
    new = [make_reflection(attempt=n, created_at=now) for n in range(6001, 10001)]
    late = make_reflection(attempt=9999, created_at=now - timedelta(days=60))
    nested = unstructure(old[0])
    nested["origin"] = {"createdAt": "2026-01-01T00:00:00Z"}  # after the top-level one
    note = b'{"note":"kept by hand: the flaky test of 2026-02-02"}\n'
    lines = [encode_line(r) for r in old]
    lines[1500:1500] = [orjson.dumps(nested) + b"\n", note]
    kept = [encode_line(r) for r in new]
    kept.insert(2000, encode_line(late))
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(lines + kept))
    assert len(b"".join(lines)) > 2 << 20  # the old records fill whole blocks
    store = JsonlMemory(path)
    assert store.prune(older_than=cut) == len(old) + 2
    kept.remove(encode_line(late))
    assert path.read_bytes() == note + b"".join(kept)


def test_prune_copies_a_long_kept_run_exactly(path: Path) -> None:
    """Kept bytes go to the new file in pieces while the sieve reads on: all, in order."""
    now = datetime(2026, 6, 1, tzinfo=UTC)
    old = [make_reflection(attempt=n, created_at=now - timedelta(days=90)) for n in range(1, 3001)]
    new = [
        make_reflection(attempt=n, created_at=now, analysis=f"attempt {n} " + "z" * 400)
        for n in range(1, 30_001)
    ]
    kept = b"".join(encode_line(r) for r in new)
    assert len(kept) > 3 * (8 << 20)  # several pieces handed to the copier
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(encode_line(r) for r in old) + kept)
    store = JsonlMemory(path)
    assert store.prune(older_than=now - timedelta(days=30)) == len(old)
    assert path.read_bytes() == kept
    assert store.recent("sub-1", limit=2) == new[-2:]


def test_prune_copies_where_the_kernel_cannot(tmp_path: Path) -> None:
    """Between two file systems copy_file_range refuses (EXDEV): read and write instead."""
    from reflexkit.memory._sieve import _copy_range  # noqa: PLC0415 -- the fallback itself

    shm = Path("/dev/shm")  # noqa: S108 -- a tmpfs, another file system than tmp_path's
    if not shm.is_dir() or shm.stat().st_dev == tmp_path.stat().st_dev:
        pytest.skip("needs /dev/shm on a file system of its own")
    data = os.urandom(3 << 20)
    src_path = shm / f"reflexkit-test-{os.getpid()}"
    src_path.write_bytes(data)
    try:
        src = os.open(src_path, os.O_RDONLY)
        out = os.open(tmp_path / "out", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            _copy_range(src, out, 1000, len(data) - 7)
        finally:
            os.close(src)
            os.close(out)
    finally:
        src_path.unlink()
    assert (tmp_path / "out").read_bytes() == data[1000:-7]


def test_a_store_saved_with_a_byte_order_mark_reads_whole(path: Path) -> None:
    """A store opened and saved in a Windows editor starts with a BOM: its first record reads."""
    first, second = make_reflection("s1", attempt=1), make_reflection("s1", attempt=2)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\xef\xbb\xbf" + encode_line(first) + encode_line(second))
    store = JsonlMemory(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CorruptRecordWarning)
        assert list(store) == [first, second]
        assert store.recent("s1", limit=5) == [first, second]
        assert store.stats().corrupt == 0


def _from_a_newer_version(r: Reflection) -> bytes:
    """*r*'s line as a later reflexkit might write it: fields this version doesn't know."""
    record = orjson.loads(encode_line(r))
    record["reviewedBy"] = "judge"  # a scalar, an object and a list, at the end and inside
    return orjson.dumps({"schemaHint": {"v": 9}, **record, "tags": ["x"]}) + b"\n"


def test_records_of_a_newer_version_read_without_its_fields(path: Path) -> None:
    """Unknown keys are a newer reflexkit's fields, not damage: the record reads, whole.

    Hosts of one project upgrade one at a time; an older one skipping every record a newer
    one wrote (with a warning per record) would lose their lessons. Prune keeps the line as
    written, new fields included.
    """
    old = [make_reflection(attempt=n) for n in (1, 2)]
    new = make_reflection(attempt=3, created_at=datetime(2026, 6, 5, tzinfo=UTC))
    path.parent.mkdir(parents=True)
    path.write_bytes(encode_line(old[0]) + _from_a_newer_version(new) + encode_line(old[1]))
    store = JsonlMemory(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CorruptRecordWarning)
        assert list(store) == [old[0], new, old[1]]
        assert store.recent("sub-1", limit=3) == [old[0], new, old[1]]
        assert store.stats().corrupt == 0
        assert store.stats().records == 3
        store.prune(older_than=datetime(2026, 6, 2, tzinfo=UTC))
    assert _from_a_newer_version(new) in path.read_bytes()


def test_a_newer_versions_record_still_needs_valid_known_fields(path: Path) -> None:
    """Tolerance stops at unknown keys: a known field with a bad value is still damage."""
    r = make_reflection()
    record = orjson.loads(_from_a_newer_version(r))
    record["confidence"] = 7
    path.parent.mkdir(parents=True)
    path.write_bytes(orjson.dumps(record) + b"\n")
    with pytest.warns(CorruptRecordWarning, match="confidence"):
        assert list(JsonlMemory(path)) == []


_READ_A_FIFO = """
import sys
from pathlib import Path
from reflexkit.exceptions import StoreError
from reflexkit.memory import JsonlMemory
store = JsonlMemory(Path(sys.argv[1]))
for read in (lambda: store.recent("sub-1", limit=1), lambda: list(store), store.stats):
    try:
        read()
    except StoreError as err:
        print("refused:", err)
"""


def test_a_fifo_put_in_place_of_the_store_is_refused_not_waited_on(path: Path) -> None:
    """A FIFO swapped in after start-up (by an agent, by anyone) never holds a reader up."""
    with JsonlMemory(path) as store:
        store.append(make_reflection())
    path.unlink()
    os.mkfifo(path)
    done = subprocess.run(
        [sys.executable, "-c", _READ_A_FIFO, str(path)],
        capture_output=True,
        text=True,
        timeout=20,
        check=True,
    )
    lines = done.stdout.splitlines()
    assert len(lines) == 3, done
    assert all("not a regular file" in line for line in lines), lines


def test_text_that_is_not_valid_unicode_is_stored_not_refused(tmp_path: Path) -> None:
    """Lone surrogates (a file name decoded with ``surrogateescape``) are stored as U+FFFD.

    Such a reflection made ``append`` raise a TypeError: the lesson was lost. Its ids are
    cleaned the same way in ``recent`` and ``append_once``, so lookups still find it.
    """
    store = JsonlMemory(tmp_path / "m.jsonl")
    odd = attrs.evolve(
        make_reflection("sub-caf\udce9", analysis="tests/caf\udce9.py failed: \ud800"),
        action_items=("open caf\udce9.py",),
    )
    store.append(odd)
    (got,) = store.recent("sub-caf\udce9", limit=3)
    assert got.subtask_id == "sub-caf\ufffd"
    assert got.analysis == "tests/caf\ufffd.py failed: \ufffd"
    assert got.action_items == ("open caf\ufffd.py",)
    assert store.append_once(odd) is False  # the same record: found under its cleaned id
    assert [r.id for r in store] == [odd.id]
