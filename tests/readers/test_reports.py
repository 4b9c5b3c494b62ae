"""Standard reports read as data: SARIF, JUnit XML, CTRF, cargo's JSON (#26).

A report printed as the output is read as its format's data; report files a failure names
in ``reports`` are read through the safe file layer (no links, no FIFOs, bounded) and
redacted before a fact is quoted from them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers import analyse
from reflexkit.readers._reports import read_report_files, report_as_text
from reflexkit.reflection._heuristic import HeuristicGenerator

from ..conftest import failure_of, no_plugins, reflection_text, write_files  # noqa: TID252

SARIF = {
    "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
    "version": "2.1.0",
    "runs": [
        {
            "tool": {"driver": {"name": "semgrep"}},
            "results": [
                {
                    "ruleId": "python.lang.security.eval-detected",
                    "level": "error",
                    "message": {"text": "Detected the use of eval()."},
                    "locations": [
                        {
                            "physicalLocation": {
                                "artifactLocation": {"uri": "app/run.py"},
                                "region": {"startLine": 12, "startColumn": 5},
                            }
                        }
                    ],
                }
            ],
        }
    ],
}

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="unit" tests="3" failures="1" errors="1">
<testcase classname="billing.InvoiceTest" name="testRounding" file="tests/InvoiceTest.php" line="14">
<failure message="Failed asserting that 10.0 matches expected 10.5.">InvoiceTest.php:14</failure>
</testcase>
<testcase classname="billing.InvoiceTest" name="testVat"><error message="Undefined array key &quot;CH&quot;"/></testcase>
<testcase classname="billing.InvoiceTest" name="testTotal"/>
</testsuite></testsuites>
"""  # noqa: E501


def test_sarif_printed_as_the_output_is_read_as_findings() -> None:
    """Each SARIF result is a linter's line: location, rule id and message, quoted."""
    found = analyse(failure_of("semgrep --sarif app", json.dumps(SARIF, indent=2)))
    text = " ".join([*found.facts, *found.details, found.summary])
    assert "app/run.py:12:5" in text
    assert "python.lang.security.eval-detected" in text
    assert "Detected the use of eval()." in text


def test_junit_report_file_named_by_the_failure_is_quoted(tmp_path: Path) -> None:
    """The failing cases of a JUnit report the check wrote, each with its own message."""
    (tmp_path / "junit.xml").write_text(JUNIT, encoding="utf-8")
    failure = failure_of("vendor/bin/phpunit --log-junit junit.xml", "FAILURES!\n")
    failure = attrs.evolve(failure, reports=(str(tmp_path / "junit.xml"),))
    reflection = HeuristicGenerator(root=tmp_path).generate(failure)
    text = reflection_text(reflection)
    assert reflection.failure_type is FailureType.TEST_FAILURE
    assert "testRounding (billing.InvoiceTest)" in text
    assert "Failed asserting that 10.0 matches expected 10.5." in text
    assert 'Undefined array key "CH"' in text


@pytest.mark.slow
def test_a_real_pytest_junit_report(tmp_path: Path) -> None:
    """Pytest's own --junitxml, read as data: the parametrised id with its own assertion."""
    write_files(
        tmp_path,
        {
            "test_area.py": """
            import pytest

            @pytest.mark.parametrize(("r", "want"), [(1, 1), (2, 5)])
            def test_square(r, want):
                assert r * r == want
            """
        },
    )
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml=j.xml"],
        cwd=tmp_path,
        env=no_plugins(),
        capture_output=True,
        check=False,
    )
    text = read_report_files(["j.xml"], root=tmp_path)
    assert "FAIL: test_square[2-5] (test_area)" in text
    assert "assert (2 * 2) == 5" in text
    assert "2 tests, 1 failures" in text


def test_an_entity_bomb_is_refused_not_expanded(tmp_path: Path) -> None:
    """A report declaring entities is no report: skipped and said so, never expanded."""
    bomb = (
        '<?xml version="1.0"?><!DOCTYPE t [<!ENTITY a "aaaaaaaaaa">'
        '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
        '<testsuite><testcase name="x"><failure message="&b;"/></testcase></testsuite>'
    )
    (tmp_path / "bomb.xml").write_text(bomb, encoding="utf-8")
    assert read_report_files(["bomb.xml"], root=tmp_path) == (
        "report bomb.xml: not a report reflexkit reads"
    )


def test_links_fifos_and_missing_reports_are_skipped(tmp_path: Path) -> None:
    """A link, a FIFO (no writer: reading would block) and a missing file are named, skipped."""
    (tmp_path / "real.xml").write_text(JUNIT, encoding="utf-8")
    (tmp_path / "link.xml").symlink_to(tmp_path / "real.xml")
    os.mkfifo(tmp_path / "fifo.xml")
    text = read_report_files(["link.xml", "fifo.xml", "gone.xml"], root=tmp_path)
    assert text.count("not read") == 3
    assert "testRounding" not in text


def test_secrets_in_a_report_are_redacted(tmp_path: Path) -> None:
    """A report is read from disk as it is: it passes the redaction before it is quoted."""
    key = "AKIA" + "Z7QWERTY12345678"
    leaky = JUNIT.replace("Failed asserting", f"with key {key}: Failed asserting")
    (tmp_path / "junit.xml").write_text(leaky, encoding="utf-8")
    failure = attrs.evolve(
        failure_of("phpunit", "FAILURES!\n"), reports=(str(tmp_path / "junit.xml"),)
    )
    text = reflection_text(HeuristicGenerator(root=tmp_path).generate(failure))
    assert "testRounding" in text
    assert key not in text


def test_ctrf_report_reads_as_failing_tests() -> None:
    """CTRF's failed tests become blocks, its summary the runner's count."""
    ctrf = {
        "results": {
            "tool": {"name": "playwright"},
            "summary": {"tests": 2, "passed": 1, "failed": 1},
            "tests": [
                {"name": "logs in", "status": "passed"},
                {
                    "name": "shows the cart badge",
                    "status": "failed",
                    "message": "expect(locator).toHaveText(expected) Expected: '2' Received: '1'",
                    "filePath": "e2e/cart.spec.ts",
                    "line": 18,
                },
            ],
        }
    }
    text = report_as_text(json.dumps(ctrf))
    assert text is not None
    found = analyse(failure_of("npx playwright test", text))
    assert found.failure_type is FailureType.TEST_FAILURE
    assert found.tests == ["shows the cart badge"]
    assert "e2e/cart.spec.ts:18" in found.facts[0]


@pytest.mark.parametrize("data", ["", "{}", "[1, 2]", "<html></html>", '{"runs": 3}'])
def test_what_is_no_report_is_left_alone(data: str) -> None:
    """JSON or XML of another shape is no report: ``None``, read as text."""
    assert report_as_text(data) is None


def test_a_check_that_names_no_report_is_unchanged() -> None:
    """Without ``reports`` the output alone is read (and no file is touched)."""
    failure = failure_of("phpunit", "FAILURES!\nTests: 2, Assertions: 2, Failures: 1.\n")
    assert analyse(failure).category is ReflectionCategory.ROOT_CAUSE


def test_a_check_names_the_report_it_wrote_and_not_a_stale_one(tmp_path: Path) -> None:
    """`verification.reports`: the JUnit file the failing check wrote is read; an old one is not."""
    from reflexkit.orchestrator._verify import (  # noqa: PLC0415
        AttemptId,
        Verifier,
        failure_context,
    )

    write_files(
        tmp_path,
        {"test_total.py": "def test_total():\n    assert sum([1, 2]) == 4, 'total is off'\n"},
    )
    (tmp_path / "old.xml").write_text(JUNIT, encoding="utf-8")
    os.utime(tmp_path / "old.xml", (1_000_000_000, 1_000_000_000))
    check = f"{sys.executable} -m pytest -q -p no:cacheprovider --junitxml=build/j.xml"
    verifier = Verifier([check], reports=["build/j.xml", "old.xml", "missing.xml"])
    result = verifier.run(tmp_path)
    assert result.reports == (str(tmp_path / "build" / "j.xml"),)
    failure = failure_context(result, AttemptId(task="t", subtask="s", attempt=1))
    text = reflection_text(HeuristicGenerator().generate(failure))
    assert "total is off" in text
    assert "testRounding" not in text


@pytest.mark.parametrize(
    "output",
    [
        "[" * 100_000,
        '{"a":' * 50_000,
        '{"Action":"run","Test":"TestX"}\n' + "{" * 100_000 + "\n",
        '{"reason":"compiler-message"}\n' + "[" * 100_000 + "\n",
        '{"version":"2.1.0","runs":' + "[" * 100_000,
    ],
    ids=["array", "object", "go-json-line", "cargo-json-line", "sarif"],
)
def test_json_nested_past_the_parser_is_read_as_text(output: str) -> None:
    """Output nested deeper than the JSON parser recurses is text, never a crash."""
    reflection = HeuristicGenerator().generate(failure_of("go test -json ./...", output))
    assert reflection.analysis


def _outside_report(tmp_path: Path) -> tuple[Path, Path]:
    """A project folder, and beside it (outside) a JUnit report holding a marker."""
    project = tmp_path / "project"
    project.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "junit.xml").write_text(JUNIT.replace("testRounding", "OUTSIDE_MARKER"))
    return project, outside


def test_reports_outside_the_project_are_not_read(tmp_path: Path) -> None:
    """An absolute path, a `..` path, a link out and a folder linked out: named, never read."""
    project, outside = _outside_report(tmp_path)
    (project / "link.xml").symlink_to(outside / "junit.xml")
    (project / "linked").symlink_to(outside)
    names = [
        str(outside / "junit.xml"),
        "../outside/junit.xml",
        "link.xml",
        "linked/junit.xml",
    ]
    text = read_report_files(names, root=project)
    assert "OUTSIDE_MARKER" not in text
    assert text.count("not read") == len(names), text
    assert "outside the project" in text, text
    environ = read_report_files(["/proc/self/environ"], root=project)
    assert "outside the project" in environ, environ


def test_a_report_inside_the_project_by_absolute_path_is_read(tmp_path: Path) -> None:
    """Confinement keeps what is inside: the verifier names reports by absolute path."""
    project, _ = _outside_report(tmp_path)
    (project / "out").mkdir()
    (project / "out" / "junit.xml").write_text(JUNIT)
    text = read_report_files([str(project / "out" / "junit.xml")], root=project)
    assert "testRounding" in text


def test_reflect_reads_no_report_outside_the_project(tmp_path: Path) -> None:
    """`reflexkit reflect` with a failure naming a report out of the project: not quoted."""
    project, outside = _outside_report(tmp_path)
    (project / ".reflexkit").mkdir()
    (project / ".reflexkit" / "project.json").write_text('{"reflexion": {"backend": "heuristic"}}')
    failure = {
        "taskId": "t",
        "subtaskId": "s",
        "attemptNumber": 1,
        "command": "phpunit --log-junit ../outside/junit.xml",
        "exitCode": 1,
        "errorOutput": "FAILURES!\n",
        "reports": ["../outside/junit.xml", str(outside / "junit.xml")],
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith("REFLEXKIT")}
    done = subprocess.run(
        [sys.executable, "-m", "reflexkit", "reflect", "--json", "--no-save"],
        input=json.dumps(failure).encode(),
        cwd=project,
        capture_output=True,
        check=False,
        timeout=60,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert b"OUTSIDE_MARKER" not in done.stdout + done.stderr


# --- TAP ---------------------------------------------------------------------------------------

GEN = HeuristicGenerator()

_TAPE_STREAM = (
    "TAP version 13\n# totals\n"
    + "".join(f"ok {n} sums the ledger's row number {n}\n" for n in range(1, 400))
    + "# rounding\nnot ok 400 rounds half to even\n  ---\n    operator: equal\n"
    "    expected: '2.68'\n    actual:   '2.67'\n"
    "    at: Test.<anonymous> (/src/ledger/test/round.js:41:7)\n    stack: |-\n"
    "      Error: rounds half to even\n"
    "          at Test.assert (/src/ledger/node_modules/tape/lib/test.js:548:48)\n"
    "          at Test.<anonymous> (/src/ledger/test/round.js:41:7)\n  ...\n"
    "# currency\n"
    + "".join(f"ok {n} formats the currency code {n}\n" for n in range(401, 800))
    + "\n1..799\n# tests 799\n# pass  798\n# fail  1\n"
)


def test_a_long_tap_stream_keeps_its_failure_from_the_middle() -> None:
    """Hundreds of passing lines around one failure: the failure and its values are quoted."""
    assert len(_TAPE_STREAM) > 20_000
    reflection = GEN.generate(failure_of("node test/round.js", _TAPE_STREAM, 1))
    text = reflection_text(reflection)
    assert reflection.failure_type is FailureType.TEST_FAILURE
    assert "not ok 400 rounds half to even" in text
    assert "expected: '2.68'" in text
    assert "actual:   '2.67'" in text
    assert "/src/ledger/test/round.js:41:7" in text
    assert "# fail 1" in text


def test_tap_values_and_places_in_a_nested_yaml_block() -> None:
    """node-tap's ``found``/``wanted`` and its ``at:`` map; an error printed after the stream."""
    stream = (
        "TAP version 14\n# Subtest: parse\n    not ok 1 - should be equal\n      ---\n"
        "      found: 3\n      wanted: 4\n      at:\n        fileName: x\n"
        "        file: test/parse.test.js\n        line: 12\n      stack: |\n"
        "        Test.<anonymous> (src/parse.js:30:11)\n      ...\n    1..1\n"
        "not ok 1 - parse # time=12ms\n1..1\n# failed 1 test\n"
        "TypeError: Cannot read properties of undefined (reading 'id')\n"
        "    at render (/src/app/src/view.js:9:14)\n"
    )
    reflection = GEN.generate(failure_of("npx tap", stream, 1))
    text = reflection_text(reflection)
    assert "not ok 1 - should be equal" in text
    assert "found: 3" in text
    assert "wanted: 4" in text
    assert "TypeError: Cannot read properties of undefined (reading 'id')" in text
    assert "/src/app/src/view.js:9:14" in text


def test_tap_diagnostics_in_comments_are_the_tests_own() -> None:
    """The ``#`` lines prove and busted print under ``not ok``: ``got:``, ``expected:``."""
    stream = (
        "1..3\nok 1 - parses a date\nnot ok 2 - parses a leap day\n"
        "#   Failed test 'parses a leap day'\n#   at t/date.t line 14.\n"
        "#          got: '2024-03-01'\n#     expected: '2024-02-29'\nok 3 - parses a year\n"
        "# Looks like you failed 1 test of 3.\n"
    )
    reflection = GEN.generate(failure_of("prove -v t/date.t", stream, 1))
    text = reflection_text(reflection)
    assert reflection.failure_type is FailureType.TEST_FAILURE
    assert "not ok 2 - parses a leap day" in text
    assert "got: '2024-03-01'" in text
    assert "expected: '2024-02-29'" in text
    assert report_as_text("ok 1 - a\n1..1\n") is None  # a stream that passed is left alone


def test_tap_yaml_diff_and_stack_are_quoted_as_printed() -> None:
    """node-tap's diff block gives its first changes; its stack, the project's frame as printed.

    Not the diff's ``--- expected`` header; the frame with its function, not the place alone.
    """
    stream = (
        "TAP version 13\n# Subtest: test/totals.js\n"
        "    not ok 1 - must match snapshot\n      ---\n"
        "      stack: |\n        Object.total (lib/cart.js:40:11)\n"
        "        Test.<anonymous> (test/totals.js:12:5)\n"
        "      diff: |\n        --- expected\n        +++ actual\n        @@ -1,3 +1,3 @@\n"
        '         {\n        -  "sum": 1250,\n        +  "sum": 1205,\n         }\n'
        "      ...\n    1..1\nnot ok 1 - test/totals.js\n1..1\n# failed 1 test\n"
    )
    text = reflection_text(GEN.generate(failure_of("npx tap", stream, 1)))
    assert '-  "sum": 1250,' in text
    assert '+  "sum": 1205,' in text
    assert "--- expected" not in text
    assert "Object.total (lib/cart.js:40:11)" in text
