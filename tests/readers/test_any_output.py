"""Any output at all, however odd, gives findings and a bounded reflection: never an exception."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from reflexkit.models import FailureContext
from reflexkit.readers import analyse
from reflexkit.reflection._heuristic import MAX_CHARS, HeuristicGenerator

GEN = HeuristicGenerator()

# Fragments of real formats, so that the examples reach the readers, not only the generic one.
_FRAGMENTS = [
    "Traceback (most recent call last):\n",
    '  File "app/x.py", line 3, in f\n',
    "ValueError: bad\n",
    "FAILED tests/test_a.py::test_b - assert 1 == 2\n",
    "___ ERROR at teardown of test_b ___\n",
    "E   assert 1 == 2\n",
    "src/a.c:1:2: error: x\n",
    "error[E0308]: mismatched types\n  --> src/lib.rs:3:5\n",
    "Fatal Python error: Segmentation fault\n",
    "Thread 0x01 (most recent call first):\n",
    "  + Exception Group Traceback (most recent call last):\n  | ValueError: x\n",
    "Failed example:\n    f(1)\nExpected:\n    2\nGot:\n    3\n",
    "Timeout (0:00:01)!\n",
    "[timed out after 3 s and was killed]\n",
    "not ok 1 - a\n# fail 1\n",
    "    at f (/srv/a.js:1:2)\n",
    "\x1b[31mred\x1b[0m\r\n",
    "\x00\ufffd\u202e",
    "a" * 3000,
    "x.py:1: error: y  [z]\n",
]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=200)), max_size=12),
    st.one_of(st.none(), st.integers(min_value=-15, max_value=255)),
    st.sampled_from(["", "pytest -q", "python x.py", "./run.sh", "mypy .", "timeout 5 make"]),
)
def test_any_output_is_read_without_error(
    parts: list[str], exit_code: int | None, command: str
) -> None:
    """Mixed fragments of real formats and random text: findings, and a short reflection."""
    failure = FailureContext(
        task_id="t",
        subtask_id="s",
        attempt_number=1,
        command=command,
        exit_code=exit_code,
        error_output="".join(parts),
    )
    found = analyse(failure)
    assert found.headline
    reflection = GEN.generate(failure)
    size = len(reflection.analysis) + len(reflection.suggestion)
    assert size + sum(len(item) for item in reflection.action_items) <= MAX_CHARS
