"""Failure blocks by their shape: each test's own facts, whatever the runner.

The cases are data (``tests/data/reader_cases/blocks.json``): one per header shape, written
after real runs of PHPUnit, RSpec, minitest, ExUnit, bats, busted, prove and C test binaries.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from reflexkit.models import FailureType
from reflexkit.readers import analyse
from reflexkit.readers._blocks import read_blocks

from ..conftest import DATA, failure_of  # noqa: TID252 -- tests/ is no package

CASES: list[dict[str, Any]] = json.loads(
    (DATA / "reader_cases" / "blocks.json").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("case", CASES, ids=[c["shape"] for c in CASES])
def test_a_block_keeps_its_own_facts(case: dict[str, Any]) -> None:
    """The block's id is the test's as printed; its message, pair and location are its own."""
    blocks = read_blocks(case["text"])
    assert [b.test for b in blocks] == [case["test"]]
    fact = blocks[0].fact()
    for quoted in case["quoted"]:
        assert quoted in fact


def test_facts_stay_with_the_block_they_were_printed_in() -> None:
    """Two parametrised tests: each assertion is quoted beside its own id, never the other's."""
    text = (
        "  1) test area with r=1 (GeoTest)\n"
        "     Assertion with == failed\n     left:  3.14\n     right: 3.15\n\n"
        "  2) test area with r=2 (GeoTest)\n"
        "     Assertion with == failed\n     left:  12.57\n     right: 12.56\n\n"
        "2 tests, 2 failures\n"
    )
    first, second = read_blocks(text)
    assert "left:  3.14" in first.fact()
    assert "12.57" not in first.fact()
    assert "left:  12.57" in second.fact()
    assert "3.14" not in second.fact()


def test_an_unknown_runner_is_read_as_tests_and_names_no_tool() -> None:
    """A runner no reader knows: its failing tests are quoted; no other tool is named."""
    case = CASES[0]
    failure = failure_of("vendor/bin/runner tests", case["text"])
    found = analyse(failure)
    assert found.failure_type is FailureType.TEST_FAILURE
    assert found.tests == ["CartTest::testTotal"]
    assert "jest" not in found.headline.lower()
    assert found.evidence == "Tests: 2, Assertions: 2, Failures: 1."


def test_a_table_row_or_a_count_behind_a_cross_is_no_test() -> None:
    """``✖ | 2  1 | tax [0.3s]`` (a progress table) and ``✖ Found 1 cycle`` name no test."""
    text = (
        "\u2716 | 2       1 | tax [0.3s]\n\u2716 Found 1 circular dependency!\n\u2716 3 problems\n"
    )
    assert read_blocks(text) == []


def test_verdicts_printed_after_their_details_keep_them() -> None:
    """Nim's unittest prints a test's failed checks, then ``[FAILED] name``.

    Each test keeps the checks above its verdict, never the one below it (a real ``nim c
    -r`` run).
    """
    text = (
        "[Suite] cart\n  [OK] empty cart costs nothing\n"
        "    /p/tests/tcart.nim(9, 23): Check failed: total(items) == 11\n"
        "    total(items) was 8\n  [FAILED] total multiplies quantity\n"
        "    /p/tests/tcart.nim(12, 9): Check failed: total(@[]) == 0\n"
        "  [FAILED] empty total\n"
        "Error: execution of an external program failed: '/p/tests/tcart '\n"
    )
    first, second = read_blocks(text)
    assert first.test == "total multiplies quantity"
    assert "total(items) == 11" in first.fact()
    assert "total(@[]) == 0" in second.fact()
    assert "total(items)" not in second.fact()
    found = analyse(failure_of("nim c -r tests/tcart.nim", text))
    assert found.failure_type is FailureType.TEST_FAILURE


def test_details_below_a_bracket_verdict_stay_below() -> None:
    """``[FAIL] a`` with its details under it: the next test does not take them."""
    text = "[FAIL] a\n    expected 1 got 2\n[FAIL] b\n    expected 3 got 4\n"
    first, second = read_blocks(text)
    assert "expected 1 got 2" in first.fact()
    assert "expected 3 got 4" in second.fact()


def test_a_block_whose_last_line_heads_a_value_is_read() -> None:
    """A body ending in a line that heads a value never printed is read, not a crash."""
    output = (
        "[ RUN      ] test_pop_empty\n"
        "[  ERROR   ] --- 0 != 1\n"
        "[  FAILED  ] test_pop_empty\n"
        "[  FAILED  ] 1 test(s), listed below:\n"
        "[  FAILED  ] test_pop_empty\n"
    )
    blocks = read_blocks(output)
    assert [b.test for b in blocks] == ["test_pop_empty"]


def test_an_errors_stack_names_the_test_line_beside_where_it_raised() -> None:
    """Innermost frame first (Ruby, Elixir): the outermost frame in a test file is the test's."""
    text = (
        "Run options: --seed 4242\n\n# Running:\n\nE.\n\n"
        "Finished in 0.01s, 200 runs/s, 300 assertions/s.\n\n"
        "  1) Error:\n"
        "InvoiceTest#test_total_with_discount:\n"
        "ZeroDivisionError: divided by 0\n"
        "    lib/invoice/money.rb:14:in `/'\n"
        "    test/support/assertions.rb:8:in `assert_money'\n"
        "    test/invoice_test.rb:23:in `test_total_with_discount'\n\n"
        "2 runs, 3 assertions, 0 failures, 1 errors, 0 skips\n"
    )
    [block] = read_blocks(text)
    assert block.test == "InvoiceTest#test_total_with_discount"
    assert "lib/invoice/money.rb:14, in the test at test/invoice_test.rb:23" in block.fact()
