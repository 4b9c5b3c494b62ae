"""The minitest reader (Ruby): numbered Failure and Error blocks and the closing count.

The outputs below are made up in minitest's shape; the live test runs this machine's ruby
with minitest when it has both.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ..conftest import read_as  # noqa: TID252 -- tests/ is no package; importlib mode resolves it


def _read(output: str, command: str = "rake test") -> tuple[str, str, str]:
    return read_as(output, command)


_VALUES = """Run options: --seed 4242

# Running:

.F.

Finished in 0.002 seconds, 1500.0 runs/s.

  1) Failure:
CartTest#test_total [test/cart_test.rb:12]:
Expected: 1250
  Actual: 1205

3 runs, 3 assertions, 1 failures, 0 errors, 0 skips
"""

_DIFF = """
  1) Failure:
Renderer#test_0001_strips blank lines [test/render_test.rb:40]:
--- expected
+++ actual
@@ -1,3 +1,3 @@
 "a
-b
+ b
 c"


2 runs, 2 assertions, 1 failures, 0 errors, 0 skips
"""

_ERROR = """
  1) Error:
QtyTest#test_parse:
ArgumentError: invalid value for Integer(): "3x"
    /app/lib/qty.rb:4:in `Integer'
    /app/lib/qty.rb:4:in `parse'
    test/support/helpers.rb:9:in `parse_all'
    test/qty_test.rb:7:in `test_parse'

1 runs, 0 assertions, 0 failures, 1 errors, 0 skips
"""


@pytest.mark.parametrize(
    ("output", "facts"),
    [
        (
            _VALUES,
            [
                "CartTest#test_total [test/cart_test.rb:12]",
                "Expected: 1250",
                "Actual: 1205",
                "3 runs, 3 assertions, 1 failures, 0 errors, 0 skips",
            ],
        ),
        (_DIFF, ["[test/render_test.rb:40]", "-b", "+ b"]),
        (
            _ERROR,
            [
                "QtyTest#test_parse",
                'ArgumentError: invalid value for Integer(): "3x"',
                "/app/lib/qty.rb:4",
                "test/qty_test.rb:7",
            ],
        ),
    ],
    ids=["values", "diff", "error-with-the-tests-own-frame"],
)
def test_minitest_output_is_read(output: str, facts: list[str]) -> None:
    """Each block is quoted as printed (its bracketed place too) with its values or error."""
    tool, kind, text = _read(output)
    assert (tool, kind) == ("minitest", "test_failure")
    assert [fact for fact in facts if fact not in text] == []
    assert "minitest" not in text  # the output never says so: no tool is named


def _has_minitest() -> bool:
    if shutil.which("ruby") is None:
        return False
    probe = subprocess.run(
        ["ruby", "-e", "require 'minitest/autorun'"], check=False, capture_output=True, timeout=60
    )
    return probe.returncode == 0


@pytest.mark.skipif(not _has_minitest(), reason="no ruby with minitest on this machine")
def test_live_minitest_run(tmp_path: Path) -> None:
    """Run a minitest test whose code is wrong and read what it prints."""
    (tmp_path / "add_test.rb").write_text(
        "require 'minitest/autorun'\ndef add(a, b) = a - b\n"
        "class AddTest < Minitest::Test\n  def test_add\n    assert_equal 5, add(2, 3)\n"
        "  end\nend\n",
        encoding="utf-8",
    )
    command = "ruby add_test.rb"
    run = subprocess.run(
        command.split(), check=False, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    tool, kind, text = _read(run.stdout + run.stderr, command)
    assert (tool, kind) == ("minitest", "test_failure"), run.stdout + run.stderr
    assert "AddTest#test_add [add_test.rb:5]" in text
    assert "Expected: 5" in text
