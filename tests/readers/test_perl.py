"""The prove reader: Test::More's failed tests with their values, prove's summary, a file that dies.

The outputs below are made up in prove's and Test::More's shapes; the live test runs this
machine's ``prove`` when it has one.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from reflexkit.models import FailureContext, FailureType
from reflexkit.readers import analyse

from ..conftest import quoted, read_as  # noqa: TID252 -- tests/ is no package; importlib mode resolves it


def _read(output: str, command: str = "prove -l t") -> tuple[str, str, str]:
    return read_as(output, command)


_NAMED = """t/00_load.t ..... ok

#   Failed test 'rounds to cents'
#   at t/10_money.t line 21.
#          got: '10.4'
#     expected: '10.5'
# Looks like you failed 1 test of 8.
t/10_money.t ....
Dubious, test returned 1 (wstat 256, 0x100)
Failed 1/8 subtests

Test Summary Report
-------------------
t/10_money.t (Wstat: 256 (exited 1) Tests: 8 Failed: 1)
  Failed tests:  5
  Non-zero exit status: 1
Files=2, Tests=9,  0 wallclock secs ( 0.01 usr  0.00 sys +  0.05 cusr  0.01 csys =  0.07 CPU)
Result: FAIL
"""

_UNNAMED_DEEP = """
#   Failed test at t/20_tree.t line 33.
#     Structures begin differing at:
#          $got->{kids}[1] = Does not exist
#     $expected->{kids}[1] = 'leaf'
# Looks like you failed 1 test of 3.
t/20_tree.t ..
Dubious, test returned 1 (wstat 256, 0x100)
Failed 1/3 subtests

Test Summary Report
-------------------
t/20_tree.t (Wstat: 256 (exited 1) Tests: 3 Failed: 1)
  Failed tests:  2
Files=1, Tests=3,  1 wallclock secs ( 0.01 usr +  0.05 cusr =  0.06 CPU)
Result: FAIL
"""

_DIES = """Global symbol "$total" requires explicit package name at lib/Shop/Cart.pm line 40.
lib/Shop/Cart.pm has too many errors.
Compilation failed in require at t/30_cart.t line 4.
BEGIN failed--compilation aborted at t/30_cart.t line 4.
# Looks like your test exited with 255 before it could output anything.
t/30_cart.t ..
Dubious, test returned 255 (wstat 65280, 0xff00)
Failed 6/6 subtests

Test Summary Report
-------------------
t/30_cart.t (Wstat: 65280 (exited 255) Tests: 0 Failed: 0)
  Non-zero exit status: 255
  Parse errors: Bad plan.  You planned 6 tests but ran 0.
Files=1, Tests=0,  0 wallclock secs ( 0.02 usr +  0.10 cusr =  0.12 CPU)
Result: FAIL
"""


@pytest.mark.parametrize(
    ("output", "facts"),
    [
        (
            _NAMED,
            [
                "Failed test 'rounds to cents'",
                "at t/10_money.t line 21.",
                "got: '10.4'",
                "expected: '10.5'",
                "Failed tests:  5",
                "Files=2, Tests=9",
                "perl -Ilib t/10_money.t",
            ],
        ),
        (
            _UNNAMED_DEEP,
            [
                "Failed test at t/20_tree.t line 33.",
                "$got->{kids}[1] = Does not exist",
                "$expected->{kids}[1] = 'leaf'",
            ],
        ),
        (
            _DIES,
            [
                'Global symbol "$total" requires explicit package name at lib/Shop/Cart.pm',
                "Compilation failed in require at t/30_cart.t line 4.",
                "Parse errors: Bad plan.",
            ],
        ),
    ],
    ids=["named", "unnamed-structures", "dies-compiling"],
)
def test_prove_output_is_read(output: str, facts: list[str]) -> None:
    """Each shape is prove's test failure with its facts quoted verbatim."""
    tool, kind, text = _read(output)
    assert (tool, kind) == ("prove", "test_failure")
    assert [fact for fact in facts if fact not in text] == []


def test_a_test_file_run_by_perl_alone_is_read() -> None:
    """``perl t/x.t`` prints Test::More's lines and its count, without prove's summary."""
    output = _NAMED.split("t/10_money.t ....", maxsplit=1)[0].removeprefix("t/00_load.t ..... ok\n")
    tool, kind, text = _read(output, command="perl -Ilib t/10_money.t")
    assert (tool, kind) == ("prove", "test_failure")
    assert "at t/10_money.t line 21." in text
    assert "# Looks like you failed 1 test of 8." in text


@pytest.mark.skipif(shutil.which("prove") is None, reason="no prove on this machine")
def test_live_prove_run(tmp_path: Path) -> None:
    """Run the real prove on a Test::More file whose code is wrong and read what it prints."""
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "add.t").write_text(
        "use strict; use warnings; use Test::More tests => 2;\n"
        "sub add { $_[0] - $_[1] }\n"
        "is(add(1, 1), 0, 'zero');\n"
        "is(add(2, 3), 5, 'adds two numbers');\n",
        encoding="utf-8",
    )
    run = subprocess.run(
        ["prove", "t"], check=False, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    findings = analyse(
        FailureContext(
            task_id="t",
            subtask_id="s",
            attempt_number=1,
            command="prove t",
            exit_code=run.returncode,
            error_output=run.stdout + run.stderr,
        )
    )
    assert findings.failure_type is FailureType.TEST_FAILURE
    text = quoted(findings)
    assert "Failed test 'adds two numbers'" in text
    assert "at t/add.t line 4." in text
    assert "expected: '5'" in text
