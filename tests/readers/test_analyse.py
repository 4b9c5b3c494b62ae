"""Reading any output: cleaning, captured outputs, the reader chosen."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from reflexkit._serde import structure
from reflexkit.models import FailureContext, FailureType
from reflexkit.readers import (
    Findings,
    Reader,
    analyse,
    clean_output,
    register_reader,
    unregister_reader,
)
from reflexkit.reflection._heuristic import HeuristicGenerator

from ..conftest import (  # noqa: TID252 -- tests/ is no package; importlib mode resolves it
    DATA,
    failure_of,
    reflection_text,
    run_in_bash,
    write_files,
)

GEN = HeuristicGenerator()


HOLDOUT = DATA / "holdout_like"


def test_a_run_of_blank_lines_reads_as_two_and_long_blanks_are_cut() -> None:
    """Blank runs carry no fact; read whole, they made line-start patterns take seconds."""
    text = "collected 2 items\n" + "   \n" * 400 + "\t\n\nE   KeyError: 'sku'\n"
    assert clean_output(text) == "collected 2 items\n\n\nE   KeyError: 'sku'\n"
    assert clean_output("a\n\nb\n") == "a\n\nb\n"  # two blank lines are kept as printed
    wide = clean_output("[" + " " * 5000 + "100%]\n")
    assert wide == "[" + " " * 160 + "100%]\n"


def test_a_failure_with_thousands_of_blank_lines_is_still_read(tmp_path: Path) -> None:
    """A program that printed 3,000 blank lines before its traceback: the error is quoted."""
    write_files(
        tmp_path,
        {"report.py": "print('  \\n' * 3000)\nrows = {}\nprint(rows['total'])\n"},
    )
    failure = run_in_bash(f"{sys.executable} report.py 2>&1", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "KeyError: 'total'" in text
    assert 'report.py", line 3' in text


@pytest.mark.parametrize(
    ("item", "facts"),
    [
        ("git-pull-divergent", ["git config pull.rebase false", "divergent branches"]),
        ("eslint-warnings-max-zero", ["ESLint found too many warnings (maximum: 0)."]),
    ],
)
def test_captured_outputs_quote_the_tools_verdict(item: str, facts: list[str]) -> None:
    """The hint commands git lists and eslint's ``--max-warnings`` verdict, from real runs."""
    data = json.loads((HOLDOUT / f"{item}.json").read_text(encoding="utf-8"))
    text = reflection_text(GEN.generate(structure(data["failureContext"], FailureContext)))
    for fact in facts:
        assert fact in text


def test_the_part_of_a_compound_command_the_output_shows_failed() -> None:
    """``gfortran ... && ./smooth`` that prints a runtime error failed in ``./smooth``."""
    from reflexkit.models import FailureType  # noqa: PLC0415
    from reflexkit.readers import analyse  # noqa: PLC0415

    output = (
        "At line 7 of file smooth.f90\nFortran runtime error: Index '11' of dimension 1 of "
        "array 'signal' above upper bound of 10\n\nError termination. Backtrace:\n"
        "#3  0x564c99f8f2f6 in smooth\n\tat /work/proj/smooth.f90:7\n"
    )
    failure = FailureContext(
        task_id="t", subtask_id="s", attempt_number=1, exit_code=2, error_output=output,
        command="gfortran -g -fcheck=bounds -o smooth smooth.f90 && ./smooth",
    )  # fmt: skip
    assert analyse(failure).failure_type is FailureType.RUNTIME_ERROR


def test_a_checker_that_throws_its_verdict_on_the_input_reports_a_finding() -> None:
    """Jsonlint throws on a bad file: that is its finding, not a broken tool."""
    from reflexkit.models import FailureType, ReflectionCategory  # noqa: PLC0415
    from reflexkit.readers import analyse  # noqa: PLC0415

    output = (
        'Error: Parse error on line 4:\n..., "retries": 3,}\n---------------------^\n'
        "Expecting 'STRING', got '}'\n"
        "    at Object.parseError (/p/node_modules/jsonlint/lib/jsonlint.js:55:11)\n"
        "    at main (/p/node_modules/jsonlint/lib/cli.js:135:14)\n"
    )
    failure = FailureContext(
        task_id="t", subtask_id="s", attempt_number=1, exit_code=1, error_output=output,
        command="npx jsonlint -q config/settings.json",
    )  # fmt: skip
    found = analyse(failure)
    assert found.failure_type is FailureType.LINT_ERROR
    assert found.category is ReflectionCategory.ROOT_CAUSE  # the file does not parse


def _analysed(command: str, output: str) -> Findings:
    from reflexkit.readers import analyse  # noqa: PLC0415

    return analyse(
        FailureContext(
            task_id="t", subtask_id="s", attempt_number=1, exit_code=1, error_output=output,
            command=command,
        )
    )  # fmt: skip


def test_a_build_drivers_failing_target_is_quoted_beside_the_error() -> None:
    """Ninja's ``FAILED: obj/a.o`` and scons's ``scons: *** [bin/x] Error 1``."""
    ninja = _analysed(
        "ninja",
        "[1/3] CC obj/parse.o\nFAILED: obj/parse.o \ncc -c src/parse.c -o obj/parse.o\n"
        "src/parse.c:7:1: error: control reaches end of non-void function\n"
        "ninja: build stopped: subcommand failed.\n",
    )
    assert "FAILED: obj/parse.o" in " ".join(ninja.details)
    scons = _analysed(
        "scons -Q",
        "gcc -o bin/stats src/main.o\n/bin/ld: main.c:(.text+0x42): undefined reference to "
        "`variance'\ncollect2: error: ld returned 1 exit status\nscons: *** [bin/stats] Error 1\n",
    )
    assert "scons: *** [bin/stats] Error 1" in " ".join(scons.details)


def test_the_script_npm_ran_types_the_failure() -> None:
    """``npm run check:cycles`` ran ``madge``: the banner names the checker."""
    from reflexkit.models import FailureType  # noqa: PLC0415

    found = _analysed(
        "npm run check:cycles",
        "\n> shop@1.0.0 check:cycles\n> madge --circular src/\n\n"
        "\u2716 Found 1 circular dependency!\n\n1) cart.js > pricing.js > cart.js\n",
    )
    assert found.failure_type is FailureType.LINT_ERROR


def test_a_files_extension_names_no_program() -> None:
    """``find -name '*.php' | xargs php -l``: ``.php`` is no run of php; the checker failed.

    A syntax error the checker reports is the code's root cause.
    """
    from reflexkit.models import FailureType, ReflectionCategory  # noqa: PLC0415

    found = _analysed(
        "find src -name '*.php' -print0 | xargs -0 -n1 php -l",
        'PHP Parse error:  syntax error, unexpected token "}" in src/Invoice.php on line 13\n'
        "Errors parsing src/Invoice.php\nxargs: php: exited with status 255; aborting\n",
    )
    assert found.failure_type is FailureType.LINT_ERROR
    assert found.category is ReflectionCategory.ROOT_CAUSE
    versioned = _analysed("lua5.4 main.lua", "lua5.4: main.lua:3: attempt to add a nil value\n")
    assert versioned.failure_type is FailureType.RUNTIME_ERROR


def test_an_interpreters_syntax_check_is_a_checker() -> None:
    """``node --check``, ``ruby -c``, ``python3 -m json.tool``: a check of a file, not a run.

    Its syntax error is the code's root cause.
    """
    from reflexkit.models import FailureType, ReflectionCategory  # noqa: PLC0415

    node = _analysed(
        "node --check src/cart.js",
        "/p/src/cart.js:2\n  return items.reduce((s, i) => s + i.price, 0;\n"
        "                                             ^\n\n"
        "SyntaxError: missing ) after argument list\n"
        "    at wrapSafe (node:internal/modules/cjs/loader:1464:18)\n"
        "    at checkSyntax (node:internal/main/check_syntax:78:3)\n",
    )
    assert node.failure_type is FailureType.LINT_ERROR
    assert node.category is ReflectionCategory.ROOT_CAUSE
    ruby = _analysed("ruby -c lib/slug.rb", "lib/slug.rb:8: syntax error, unexpected `end'\n")
    assert ruby.failure_type is FailureType.LINT_ERROR
    json_tool = _analysed(
        "python3 -m json.tool config/app.json", "Expecting ',' delimiter: line 4 column 3\n"
    )
    assert json_tool.failure_type is FailureType.LINT_ERROR


def test_a_second_reading_of_the_same_failure_is_a_copy_of_the_first() -> None:
    """Classify, then write: the second reading is the first's copy, changed by no caller."""
    failure = failure_of("./ci", "src/a.c:3:1: error: expected ';' before '}' token\n")
    first = analyse(failure)
    first.facts.append("changed by a caller")
    first.failure_type = FailureType.UNKNOWN
    second = analyse(failure)
    assert "changed by a caller" not in second.facts
    assert second.failure_type is FailureType.BUILD_ERROR


def _qqq(_text: str, _failure: FailureContext) -> Findings:
    return Findings(tool="qqq", failure_type=FailureType.LINT_ERROR)


def test_a_reader_registered_after_a_reading_reads_the_same_failure() -> None:
    """The readings kept belong to the readers registered: a new reader is not hidden."""
    failure = failure_of("./ci", "QQQ-FORMAT 1 broken\n")
    assert analyse(failure).tool == "command"
    register_reader(Reader(name="qqq", read=_qqq, markers=("QQQ-FORMAT",), priority=5000))
    try:
        assert analyse(failure).tool == "qqq"
    finally:
        unregister_reader("qqq")
    assert analyse(failure).tool == "command"


@pytest.mark.parametrize(
    ("command", "output", "unseen"),
    [
        (
            "zuban check src",
            (
                'src/a.py:3: error: Incompatible return value type (got "int", expected "str")'
                "  [return-value]\nFound 1 error in 1 file (checked 2 source files)\n"
            ),
            "mypy",
        ),
        (
            "staticcheck ./...",
            "cache.go:30:5: should use strings.EqualFold instead (SA6005)\n",
            "go vet",
        ),
    ],
)
def test_a_reader_names_its_tool_only_when_the_run_shows_it(
    command: str, output: str, unseen: str
) -> None:
    """Another checker printing a known tool's format is not that tool: the command is named."""
    text = reflection_text(HeuristicGenerator().generate(failure_of(command, output)))
    assert unseen not in text
    assert f"`{command}`" in text


_GRADLE_TEST = """
> Task :test FAILED

AppTest > addsNumbers() FAILED
    org.opentest4j.AssertionFailedError: expected: <4> but was: <5>
        at app.AppTest.addsNumbers(AppTest.java:12)

1 test completed, 1 failed
"""


@pytest.mark.parametrize(
    ("output", "reader_tool"),
    [
        (_GRADLE_TEST, "Gradle"),
        ("\n* What went wrong:\nExecution failed for task ':compileJava'.\n> boom\n", "Gradle"),
    ],
)
def test_an_unseen_tool_is_renamed_in_prose_only(output: str, reader_tool: str) -> None:
    """Under ``make test`` the reader's tool is unseen: prose says "the check", code stays.

    A step whose command would name the unseen tool is dropped, never rewritten to the whole
    command (``make test`` is no targeted re-run), and no article is doubled.
    """
    found = analyse(failure_of("make test", output))
    text = " ".join([found.headline, found.advice, *found.steps])
    assert reader_tool.lower() not in text.lower()
    assert "the the" not in text.lower()
    assert not any("`make test`" in step for step in found.steps)


def test_code_in_backticks_is_never_renamed() -> None:
    """A reader naming an unseen tool leaves quoted code (``(clojure.test/run ...)``) whole."""

    def quoting(text: str, _failure: FailureContext) -> Findings | None:
        if "QQQ-QUOTE" not in text:
            return None
        return Findings(
            tool="qqqtool",
            failure_type=FailureType.TEST_FAILURE,
            headline="The qqqtool run failed.",
            steps=["Evaluate `(qqqtool/run [#'a])` in a REPL.", "Let qqqtool re-run `./ci a`."],
        )

    register_reader(Reader(name="qqqtool", read=quoting, markers=("QQQ-QUOTE",), priority=5000))
    try:
        found = analyse(failure_of("./ci", "QQQ-QUOTE 1 failed\n"))
    finally:
        unregister_reader("qqqtool")
    assert found.headline == "The check run failed."
    # The first step's code names the unseen tool: it cannot run as written, so it goes.
    assert found.steps == ["Let the check re-run `./ci a`."]
