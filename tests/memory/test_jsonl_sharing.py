"""One JsonlMemory shared by threads, and a store edited by hand: nothing lost or misread."""

from __future__ import annotations

import threading
import warnings
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson

from reflexkit.exceptions import CorruptRecordWarning
from reflexkit.memory import JsonlMemory
from reflexkit.memory._codec import encode_line, string_field
from reflexkit.models import Reflection
from reflexkit.testing.memory_contract import make_reflection

_NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def test_threads_sharing_one_store_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    """8 threads x 1,000 appends, with prune and recent running: each record is there once."""
    store = JsonlMemory(tmp_path / "m.jsonl")
    acked: list[list[str]] = [[] for _ in range(8)]
    errors: list[BaseException] = []
    done = threading.Event()

    def writer(n: int) -> None:
        try:
            for i in range(1000):
                r = make_reflection(f"s{i % 5}", task_id=f"t{n}", created_at=_NOW)
                store.append(r)
                acked[n].append(r.id)
        except BaseException as err:  # noqa: BLE001 -- reported by the main thread
            errors.append(err)

    def churn() -> None:
        try:
            while not done.is_set():
                store.prune(older_than=_NOW - timedelta(days=1))  # removes nothing
                store.recent("s1", limit=3)
                store.close()  # reopened by the next append: the race the mutex must survive
        except BaseException as err:  # noqa: BLE001
            errors.append(err)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    side = [threading.Thread(target=churn) for _ in range(2)]
    for t in threads + side:
        t.start()
    for t in threads:
        t.join()
    done.set()
    for t in side:
        t.join()
    assert errors == []
    ids = [r.id for r in JsonlMemory(tmp_path / "m.jsonl")]
    want = [i for ids_of in acked for i in ids_of]
    assert len(want) == 8000
    assert sorted(ids) == sorted(want)


def _line_with(record: dict[str, object]) -> bytes:
    return orjson.dumps(record) + b"\n"


def test_prune_decides_by_the_top_level_stamp(tmp_path: Path) -> None:
    """A current record with an old stamp nested in an unknown field is kept."""
    path = tmp_path / "m.jsonl"
    current = orjson.loads(encode_line(make_reflection("s1", created_at=_NOW)))
    nested = {"id": current["id"], "origin": {"createdAt": "2001-01-01T00:00:00Z"}}
    nested.update({k: v for k, v in current.items() if k != "id"})
    old = orjson.loads(encode_line(make_reflection("s2", created_at=_NOW - timedelta(days=90))))
    # and an old record whose unknown field holds a new stamp first, and a key that only
    # looks like createdAt (a quote escaped inside another key)
    old_nested = {"id": old["id"], "meta": {"createdAt": "2099-01-01T00:00:00Z"}}
    old_nested.update({k: v for k, v in old.items() if k != "id"})
    fake = {"id": "f", 'x"createdAt': "1999-01-01T00:00:00Z"}
    fake.update({k: v for k, v in current.items() if k != "id"})
    path.write_bytes(_line_with(nested) + _line_with(old_nested) + _line_with(fake))
    store = JsonlMemory(path)
    assert store.prune(older_than=_NOW - timedelta(days=30)) == 1
    kept = [r.id for r in store]
    assert kept == [current["id"], "f"]


def test_string_field_reads_only_the_top_level_key() -> None:
    """A nested key of the same name, first in the line, is not the record's field."""
    line = b'{"id":"1","x":{"subtaskId":"wrong"},"subtaskId":"right"}'
    assert string_field(line, "subtaskId") == "right"
    assert string_field(b'{"id":"1","x":{"subtaskId":"only-nested"}}', "subtaskId") is None


def test_a_record_edited_to_another_subtask_is_found_under_it(tmp_path: Path) -> None:
    """An in-place edit of a record's subtask (same inode, same length) reaches the index."""
    path = tmp_path / "m.jsonl"
    store = JsonlMemory(path)
    records = [make_reflection("aaa", created_at=_NOW) for _ in range(5)]
    for r in records:
        store.append(r)
    assert len(store.recent("aaa", limit=10)) == 5
    assert store.recent("bbb", limit=10) == []  # the index is built and current
    data = path.read_bytes()
    first = data.index(b'"subtaskId":"aaa"')
    with path.open("r+b") as f:  # the same file: no rename, no new inode
        f.seek(first)
        f.write(b'"subtaskId":"bbb"')
    assert [r.id for r in store.recent("bbb", limit=10)] == [records[0].id]
    assert len(store.recent("aaa", limit=10)) == 4


def test_an_edit_found_through_one_subtask_repairs_the_others(tmp_path: Path) -> None:
    """A changed line found while reading one subtask re-indexes the subtask it now has."""
    path = tmp_path / "m.jsonl"
    store = JsonlMemory(path)
    records = [make_reflection("aaa", created_at=_NOW) for _ in range(3)]
    for r in records:
        store.append(r)
    store.recent("aaa", limit=10)
    data = path.read_bytes()
    first = data.index(b'"subtaskId":"aaa"')
    with path.open("r+b") as f:
        f.seek(first)
        f.write(b'"subtaskId":"ccc"')
    store.append(make_reflection("zzz", created_at=_NOW))  # the file grows after the edit
    with warnings.catch_warnings():
        warnings.simplefilter("error", CorruptRecordWarning)
        assert len(store.recent("aaa", limit=10)) == 2
    assert [r.id for r in store.recent("ccc", limit=10)] == [records[0].id]


def test_a_record_copied_by_hand_is_returned_once(tmp_path: Path) -> None:
    """Lines pasted twice (``cat backup >> store``): ``recent`` gives each id once, the newest.

    The copies are skipped and reported, so a prompt never carries one lesson twice.
    """
    path = tmp_path / "m.jsonl"
    first, second = (make_reflection("s1", attempt=n, created_at=_NOW) for n in (1, 2))
    lines = [encode_line(first), encode_line(second)]
    path.write_bytes(b"".join(lines * 3))
    store = JsonlMemory(path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CorruptRecordWarning)
        assert store.recent("s1", limit=5) == [first, second]
        assert store.recent("s1", limit=2, task_id=first.task_id) == [first, second]
    assert any("a copy of record" in str(w.message) for w in caught)


def test_a_record_whose_keys_are_escaped_is_indexed_and_pruned_by_its_fields(
    tmp_path: Path,
) -> None:
    r"""``"s\u0075btaskId"`` is ``subtaskId`` to any JSON reader: so it is to the index and prune.

    A JSON tool may escape any character of a key; the record reads back the same, so
    ``recent`` must find it under its subtask and prune must see its stamp.
    """
    path = tmp_path / "m.jsonl"
    kept = make_reflection("s1", attempt=1, created_at=_NOW)
    old = make_reflection("s1", attempt=2, created_at=_NOW - timedelta(days=90))

    def escaped(r: Reflection) -> bytes:
        line = encode_line(r)
        for key in (b"subtaskId", b"taskId", b"createdAt"):
            line = line.replace(b'"%s"' % key, b'"%s\\u%04x%s"' % (key[:1], key[1], key[2:]))
        return line

    path.write_bytes(escaped(kept) + escaped(old))
    store = JsonlMemory(path)
    assert [r.id for r in store] == [kept.id, old.id]
    assert store.recent("s1", limit=5) == [kept, old]
    assert store.recent("s1", limit=5, task_id=kept.task_id) == [kept, old]
    assert store.prune(older_than=_NOW - timedelta(days=30)) == 1
    assert store.recent("s1", limit=5) == [kept]
