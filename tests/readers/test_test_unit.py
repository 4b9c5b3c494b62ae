"""The test-unit reader (Ruby): failure and error blocks between rules, the closing count.

The outputs below are made up in test-unit's shape; the live test runs this machine's ruby
with test-unit when it has both.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ..conftest import read_as  # noqa: TID252 -- tests/ is no package; importlib mode resolves it

_RULE = "=" * 79


def _read(output: str, command: str = "ruby test/run.rb") -> tuple[str, str, str]:
    return read_as(output, command)


_FAILURE = f"""Loaded suite test/run
Started
..F
{_RULE}
Failure: test_total(TestCart)
/app/test/test_cart.rb:12:in `test_total'
      9:   def test_total
     10:     cart = Cart.new([5, 5])
     11:
  => 12:     assert_equal(10, cart.total)
     13:   end
<10> expected but was
<55>

diff:
- 10
+ 55
{_RULE}
Finished in 0.01 seconds.
3 tests, 3 assertions, 1 failures, 0 errors, 0 pendings, 0 omissions, 0 notifications
66.6667% passed
"""

_ERROR = f"""Started
E
{_RULE}
Error: test_parse(TestQty): ArgumentError: invalid value for Integer(): "3x"
/app/lib/qty.rb:4:in `Integer'
/app/lib/qty.rb:4:in `parse'
/app/test/test_qty.rb:7:in `test_parse'
{_RULE}
1 tests, 0 assertions, 0 failures, 1 errors, 0 pendings, 0 omissions, 0 notifications
"""


@pytest.mark.parametrize(
    ("output", "facts"),
    [
        (
            _FAILURE,
            [
                "test_total(TestCart)",
                "<10> expected but was",
                "<55>",
                "/app/test/test_cart.rb:12",
                "3 tests, 3 assertions, 1 failures, 0 errors",
            ],
        ),
        (
            _ERROR,
            [
                "test_parse(TestQty)",
                'ArgumentError: invalid value for Integer(): "3x"',
                "/app/lib/qty.rb:4",
            ],
        ),
        (
            _ERROR.replace(
                'Error: test_parse(TestQty): ArgumentError: invalid value for Integer(): "3x"',
                'Error: test_parse(TestQty):\n  ArgumentError: invalid value for Integer(): "3x"',
            ),
            ['test_parse(TestQty): ArgumentError: invalid value for Integer(): "3x"'],
        ),
    ],
    ids=["failure-with-actual-below", "error", "error-message-below"],
)
def test_test_unit_output_is_read(output: str, facts: list[str]) -> None:
    """Each block is quoted with its message (both values of a failure) and its place."""
    tool, kind, text = _read(output)
    assert (tool, kind) == ("test-unit", "test_failure")
    assert [fact for fact in facts if fact not in text] == []


def test_a_passing_count_is_not_claimed() -> None:
    """A run with no failure and no error is no failure of test-unit's."""
    passing = (
        "2 tests, 2 assertions, 0 failures, 0 errors, 0 pendings, 0 omissions, 0 notifications\n"
    )
    assert _read(passing)[0] != "test-unit"


def _has_test_unit() -> bool:
    if shutil.which("ruby") is None:
        return False
    probe = subprocess.run(
        ["ruby", "-e", "require 'test-unit'"], check=False, capture_output=True, timeout=60
    )
    return probe.returncode == 0


@pytest.mark.skipif(not _has_test_unit(), reason="no ruby with test-unit on this machine")
def test_live_test_unit_run(tmp_path: Path) -> None:
    """Run a test-unit test whose code is wrong and read what it prints."""
    (tmp_path / "test_add.rb").write_text(
        "require 'test-unit'\ndef add(a, b) = a - b\n"
        "class TestAdd < Test::Unit::TestCase\n  def test_add\n"
        "    assert_equal(5, add(2, 3))\n  end\nend\n",
        encoding="utf-8",
    )
    command = "ruby test_add.rb --no-use-color"
    run = subprocess.run(
        command.split(), check=False, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    tool, kind, text = _read(run.stdout + run.stderr, command)
    assert (tool, kind) == ("test-unit", "test_failure"), run.stdout + run.stderr
    assert "<5> expected but was" in text
    assert "<-1>" in text
