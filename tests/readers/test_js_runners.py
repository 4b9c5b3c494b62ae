"""The JavaScript test runner readers: vitest, mocha, and node:test's TAP, spec and dot reporters.

The outputs under tests/data/tool_outputs/ were produced with vitest 4, mocha 11 and Node.js 20;
those under tests/data/reader_outputs/ too (see test_a_runners_own_test_timeout_...).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from reflexkit._serde import structure
from reflexkit.models import FailureContext, FailureType, ReflectionCategory
from reflexkit.readers import analyse, clean_output
from reflexkit.readers._javascript import parse_node_test, parse_tsc
from reflexkit.readers._js_runners import parse_mocha, parse_vitest

from ..conftest import (  # noqa: TID252 -- tests/ is no package; importlib mode resolves it
    DATA,
    assert_read_as_labelled,
    load_item,
    quoted,
    read_item,
)

ITEMS = sorted(
    p
    for pattern in ("vitest-*.json", "mocha-*.json", "nodetest-*-slug.json")
    for p in (DATA / "tool_outputs").glob(pattern)
)
BROKEN = "/tmp/i12b/nt/test/broken.test.js"  # noqa: S108 -- a path in the captured output
HELD = sorted((DATA / "reader_outputs").glob("nodetest-*.json"))


@pytest.mark.parametrize("path", ITEMS, ids=lambda p: p.stem)
def test_each_captured_output_is_read(path: Path) -> None:
    """Every captured run gets its labelled type, category and key facts."""
    assert_read_as_labelled(path)


class TestVitest:
    """vitest's default reporter."""

    def test_colour_codes_do_not_hide_the_failures(self) -> None:
        """The coloured run is read like the plain one: test path, error, location."""
        findings = read_item("vitest-price-colour")
        assert findings.tool == "vitest"
        assert (
            "discount > takes ten percent off: AssertionError: expected +0 to be 180 "
            "(test/price.test.js:6:31)"
        ) in findings.facts
        assert findings.summary == "Test Files  3 failed (3); Tests  7 failed | 1 passed (8)"

    def test_a_file_that_fails_to_load_is_named(self) -> None:
        """``FAIL file [ file ]``: the import error is quoted, not counted as a test."""
        findings = read_item("vitest-cart-suite-failed")
        assert findings.facts[0] == (
            "test/tax.test.js (failed to load): Error: Cannot find module '../src/tax.js' "
            "(test/tax.test.js:2:1)"
        )
        assert findings.tests == ["total sums prices", "total of a cart loaded from JSON"]

    def test_an_error_in_the_code_points_at_the_code(self) -> None:
        """A TypeError thrown by src/cart.js is located there, not in the test."""
        fact = read_item("vitest-cart-suite-failed").facts[2]
        assert fact.endswith("(src/cart.js:4:60)")

    def test_only_load_errors_make_it_missing_context(self) -> None:
        """Failures that all come from an unresolved import: missing_context."""
        data = load_item(DATA / "tool_outputs" / "vitest-cart-suite-failed.json")
        text = clean_output(data["failureContext"]["errorOutput"])
        only_load = text.split("\u23af\u23af\u23af\u23af\u23af\u23af\u23af Failed Tests")[0]
        only_load += "\n Test Files  1 failed (1)\n      Tests  no tests\n"
        findings = parse_vitest(only_load + " Test Files  1 failed (1)\n")
        assert findings is not None
        assert findings.category is ReflectionCategory.MISSING_CONTEXT

    def test_jest_output_is_not_vitest(self) -> None:
        """Jest's ``FAIL file`` and ``Tests:`` lines are left to the jest reader."""
        assert read_item("jest-price-discount").tool == "jest"


class TestMocha:
    """mocha's spec and dot reporters."""

    def test_titles_spread_over_lines_are_joined(self) -> None:
        """``1) price`` then ``discount()`` then ``takes ten percent off:`` is one test."""
        findings = read_item("mocha-price-spec")
        assert findings.tool == "mocha"
        assert findings.tests[2] == "takes ten percent off"
        assert findings.facts[2].startswith(
            "price discount() takes ten percent off: AssertionError [ERR_ASSERTION]: "
            "Expected values to be strictly equal: 0 !== 180"
        )

    def test_the_projects_frame_is_the_location(self) -> None:
        """The first ``at`` frame outside node: internals and node_modules."""
        findings = read_item("mocha-price-spec")
        assert findings.facts[1].endswith("(file:///tmp/i12b/js/src/price.js:9:30)")

    def test_hook_failures_and_timeouts_are_named(self) -> None:
        """``"before all" hook for "loads"`` and ``Timeout of 500ms exceeded`` are quoted."""
        assert '"before all" hook for "loads"' in read_item("mocha-queue-dot").tests
        assert "call done()" in read_item("mocha-price-spec").advice

    def test_summary_is_passing_and_failing(self) -> None:
        """The summary is mocha's own counts."""
        assert read_item("mocha-queue-dot").summary == "0 passing (4ms), 3 failing"

    def test_a_file_that_fails_to_load_stops_the_run(self) -> None:
        """``Exception during run:``: no test ran; the import error is the fact."""
        findings = read_item("mocha-load-error")
        assert findings.category is ReflectionCategory.MISSING_CONTEXT
        assert findings.facts[0].startswith("Error [ERR_MODULE_NOT_FOUND]: Cannot find module")
        assert findings.tests == []

    def test_a_green_run_is_not_read(self) -> None:
        """No ``failing`` line, no findings."""
        assert parse_mocha("\n  price\n    \u2714 works\n\n  1 passing (3ms)\n") is None


class TestNodeTest:
    """node --test, in its three reporters."""

    @pytest.mark.parametrize("reporter", ["tap", "spec"])
    def test_a_test_file_that_fails_to_load_quotes_its_error(self, reporter: str) -> None:
        """node:test only says ``test failed`` for the file; the error printed above is quoted."""
        fact = read_item(f"nodetest-{reporter}-slug").facts[0]
        assert f"{BROKEN}" in fact
        assert "Error: Cannot find module '../lib/format'" in fact

    def test_dot_reporter_is_read(self) -> None:
        """The dot reporter has no summary counts, only ``Failed tests:``."""
        findings = read_item("nodetest-dot-slug")
        assert findings.tool == "node:test"
        assert findings.tests == [
            BROKEN,
            "collapses spaces",
            "trims",
            "rejects null",
        ]

    def test_tap_names_the_error_class_of_a_thrown_error(self) -> None:
        """A TypeError thrown by the code is named as such, not as an assertion."""
        facts = read_item("nodetest-tap-slug").facts
        assert any(f.startswith("not ok ") for f in facts)  # the TAP line as printed
        assert any("rejects null" in f and "TypeError: Cannot read properties" in f for f in facts)

    @pytest.mark.parametrize("path", HELD, ids=lambda p: p.stem)
    def test_a_test_timeout_is_one_failing_test_among_others(self, path: Path) -> None:
        """``test timed out after 100ms`` is quoted as that test's failure."""
        data = load_item(path)
        findings = parse_node_test(clean_output(data["failureContext"]["errorOutput"]))
        assert findings is not None
        assert "slow" in findings.facts[-1]
        assert "test timed out after 100ms" in findings.facts[-1]
        assert [f for f in data["expected"]["keyFacts"] if f not in quoted(findings)] == []

    @pytest.mark.parametrize("path", HELD, ids=lambda p: p.stem)
    def test_a_runners_own_test_timeout_is_a_test_failure(self, path: Path) -> None:
        """One timed-out test among failing tests is still a test_failure of the run."""
        data = load_item(path)
        findings = analyse(structure(data["failureContext"], FailureContext))
        assert findings.failure_type is FailureType.TEST_FAILURE


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on this machine")
@pytest.mark.parametrize("reporter", ["tap", "spec", "dot"])
def test_live_node_test_run(tmp_path: Path, reporter: str) -> None:
    """Run the real ``node --test`` and read what each reporter prints."""
    (tmp_path / "sum.test.js").write_text(
        "const test = require('node:test');\nconst assert = require('node:assert');\n"
        "test('adds', () => { assert.strictEqual(1 + 1, 3); });\n"
        "test('passes', () => {});\n",
        encoding="utf-8",
    )
    command = ["node", "--test", f"--test-reporter={reporter}", "sum.test.js"]
    run = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    failure = FailureContext(
        task_id="t",
        subtask_id="s",
        attempt_number=1,
        command=" ".join(command),
        exit_code=run.returncode,
        error_output=run.stdout + run.stderr,
    )
    findings = analyse(failure)
    assert findings.tool == "node:test", failure.error_output
    assert findings.tests == ["adds"]
    assert "2 !== 3" in findings.facts[0]


def test_one_missing_module_among_type_errors_leaves_them_the_root_cause() -> None:
    """The category of tsc's output follows what most errors say, not one missing module."""
    many = (
        "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\n"
        "src/b.ts(9,1): error TS2307: Cannot find module 'left-pad' or its type declarations.\n"
        "src/c.ts(4,12): error TS2345: Argument of type 'null' is not assignable to parameter "
        "of type 'Item'.\n"
        "Found 3 errors in 3 files.\n"
    )
    found = parse_tsc(many)
    assert found is not None
    assert found.category is ReflectionCategory.ROOT_CAUSE
    assert "can't find" in found.advice
    only = "src/b.ts(9,1): error TS2307: Cannot find module 'left-pad'.\nFound 1 error.\n"
    found = parse_tsc(only)
    assert found is not None
    assert found.category is ReflectionCategory.MISSING_CONTEXT
