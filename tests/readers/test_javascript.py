"""jest, node:test, eslint and node's own errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from reflexkit._serde import structure
from reflexkit.models import FailureContext, FailureType, ReflectionCategory
from reflexkit.readers import analyse
from reflexkit.reflection._heuristic import HeuristicGenerator

from ..conftest import (  # noqa: TID252 -- tests/ is no package; importlib mode resolves it
    DATA,
    captured_reflection,
    reflection_text,
    run_in_bash,
    write_files,
)

GEN = HeuristicGenerator()


_NODE_TESTS = {
    "test/slug.test.js": """
    const { describe, it, before } = require("node:test");
    const assert = require("node:assert");
    const slug = (s) => s.toLowerCase().replace(/ /g, "_");
    describe("slug", () => {
      it("joins words with dashes", () => {
        assert.strictEqual(slug("Hello World"), "hello-world");
      });
    });
    describe("store", () => {
      before(async () => { throw new Error("ENOENT: no such file, open 'slugs.json'"); });
      it("loads saved slugs", () => {});
    });
    """,
}


HOLDOUT = DATA / "holdout_like"


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on this machine")
def test_node_test_tap_quotes_its_line_and_the_failing_line(tmp_path: Path) -> None:
    """TAP: ``not ok N - name`` as printed, and the stack's line, not the test's declaration."""
    write_files(tmp_path, _NODE_TESTS)
    failure = run_in_bash("node --test --test-reporter=tap test/", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "not ok 1 - joins words with dashes" in text
    assert "test/slug.test.js:6:12" in text


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on this machine")
def test_node_test_spec_names_the_tests_a_failing_hook_cancelled(tmp_path: Path) -> None:
    """Spec: a ``before`` hook that throws cancels its tests; they and the count are quoted."""
    write_files(tmp_path, _NODE_TESTS)
    failure = run_in_bash("node --test --test-reporter=spec test/", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "loads saved slugs" in text
    assert "\u2139 cancelled 1" in text


def test_jest_quotes_snapshot_count_and_did_not_throw() -> None:
    """The snapshot count line and ``Received function did not throw`` are the failures.

    Output of ``npx jest --ci`` (jest 29) on a stale snapshot and a toThrow that did not throw.
    """
    reflection = captured_reflection("jest-tags-snapshot-tothrow")
    text = reflection_text(reflection)
    assert "1 snapshot failed." in text
    assert "Received function did not throw" in text
    assert "snapshot" in reflection.suggestion  # advised as a snapshot, not as a value


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on this machine")
def test_node_test_tap_quotes_a_one_line_error_as_printed(tmp_path: Path) -> None:
    """TAP's ``error: 'message'`` line is quoted as printed, not unquoted."""
    write_files(
        tmp_path,
        {
            "test/fetch.test.js": """
            const test = require("node:test");
            test("loads the feed", async () => {
              throw new Error("feed offline");
            });
            """,
        },
    )
    failure = run_in_bash("node --test --test-reporter=tap test/", tmp_path)
    assert "error: 'feed offline'" in reflection_text(GEN.generate(failure))


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on this machine")
def test_node_import_of_own_path_that_does_not_resolve_is_root_cause(tmp_path: Path) -> None:
    """An ESM import of ``./lib/util`` without its extension: the import is wrong."""
    write_files(
        tmp_path,
        {
            "main.mjs": 'import { twice } from "./lib/util";\nconsole.log(twice(2));\n',
            "lib/util.mjs": "export const twice = (n) => 2 * n;\n",
        },
    )
    reflection = GEN.generate(run_in_bash("node main.mjs", tmp_path))
    assert "ERR_MODULE_NOT_FOUND" in reflection_text(reflection)
    assert reflection.category == ReflectionCategory.ROOT_CAUSE


def test_eslint_names_the_warnings_rules_beside_the_errors() -> None:
    """Errors come first, but the warnings' rules are named too: they fail `--max-warnings`."""
    text = reflection_text(captured_reflection("eslint-errors-and-warnings-rules"))
    assert "eqeqeq" in text
    assert "no-else-return" in text
    assert "prefer-template" in text


def test_jest_ci_snapshot_not_written_is_quoted() -> None:
    """Under ``--ci`` a missing snapshot is not written: jest's sentence says so."""
    text = reflection_text(captured_reflection("jest-ci-snapshot-not-written"))
    assert "New snapshot was not written" in text
    assert "render \u203a two lines" in text  # jest joins describe and test with \u203a


def test_jest_suite_that_cannot_load_quotes_the_test_suites_line() -> None:
    """When only a suite failed to load, ``Tests:`` counts no failure: ``Test Suites:`` does."""
    reflection = captured_reflection("jest-suite-cannot-load-test-suites-line")
    text = reflection_text(reflection)
    assert "Test Suites: 1 failed, 1 passed, 2 total" in text
    assert "Cannot find module './tokens' from 'lib/lexer.js'" in text
    # './tokens' is the project's own path, as node's reader says: the import is wrong
    assert reflection.category is ReflectionCategory.ROOT_CAUSE


@pytest.mark.parametrize(
    ("item", "facts"),
    [
        (
            "eslint-dashboard-unix-format",
            ["src/widgets.js:4:7", "no-unused-vars", "eqeqeq", "no-fallthrough", "4 problems"],
        ),
        (
            "eslint-shop-json-format-react",
            ["src/Checkout.jsx: line 4, col 7", "no-cond-assign", "'totl' is not defined"],
        ),
    ],
)
def test_eslint_one_line_formats(item: str, facts: list[str]) -> None:
    """The eslint ``unix`` and ``compact`` formats: every rule and location, paths shortened."""
    data = json.loads((HOLDOUT / f"{item}.json").read_text(encoding="utf-8"))
    failure = structure(data["failureContext"], FailureContext)
    findings = analyse(failure)
    assert findings.tool == "eslint"
    assert findings.failure_type is FailureType.LINT_ERROR
    text = reflection_text(GEN.generate(failure))
    for fact in facts:
        assert fact in text
    assert not findings.facts[0].startswith("/")  # the shared directory is left out


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on this machine")
def test_node_missing_subpath_names_package_and_code(tmp_path: Path) -> None:
    """``require('pkg/sub')``: install ``pkg``, not ``pkg/sub``; the error's code is quoted."""
    write_files(tmp_path, {"export.js": 'require("csv-stringify/sync");\n'})
    failure = run_in_bash("node export.js", tmp_path)
    reflection = GEN.generate(failure)
    text = reflection_text(reflection)
    assert reflection.failure_type is FailureType.DEPENDENCY_ERROR
    assert "MODULE_NOT_FOUND" in text
    assert "`npm install csv-stringify`" in text


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on this machine")
def test_node_syntax_error_in_a_required_file_points_at_that_file(tmp_path: Path) -> None:
    """A required file that does not parse: its line, not the ``require`` call, is the fault."""
    write_files(
        tmp_path,
        {
            "index.js": 'const { price } = require("./pricing");\nconsole.log(price);\n',
            "pricing.js": "const TABLE = {\n  pro: 12\n  team: 30,\n};\nexports.price = TABLE;\n",
        },
    )
    failure = run_in_bash("node index.js", tmp_path)
    reflection = GEN.generate(failure)
    assert "pricing.js:3" in reflection.suggestion + "\n".join(reflection.action_items)
    assert "index.js:1" not in "\n".join(reflection.action_items)


_QUNIT_TAP = """TAP version 13
not ok 1 money > formats whole dollars with cents
  ---
  message: failed
  severity: failed
  actual  : $5
  expected: $5.00
  stack: |
        at Object.<anonymous> (/work/proj/test/money.test.js:4:12)
  ...
ok 2 money > formats cents
1..2
# pass 1
# skip 0
# todo 0
# fail 1
"""


def test_tap_of_another_runner_is_not_read_as_node_test() -> None:
    """QUnit's (or tape's) TAP has none of node's own lines: no node:test advice.

    Each failing test is quoted with its expected value and place (a real ``npx qunit`` run).
    """
    failure = FailureContext(
        task_id="t", subtask_id="s", attempt_number=1, command="npx qunit test/",
        exit_code=1, error_output=_QUNIT_TAP,
    )  # fmt: skip
    found = analyse(failure)
    assert found.tool != "node:test"
    text = "\n".join(found.facts)
    assert "not ok 1 money > formats whole dollars with cents" in text
    assert "expected: $5.00" in text
    assert "test/money.test.js:4:12" in text
    assert found.failure_type is FailureType.TEST_FAILURE
