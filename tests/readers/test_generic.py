"""The generic reader: error lines, locations, codes and pairs found by their shape."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reflexkit.models import FailureContext, FailureType, ReflectionCategory
from reflexkit.readers import Findings, analyse
from reflexkit.readers._generic import find_locations, is_library_path, parse_generic

from ..conftest import DATA, failure_of  # noqa: TID252 -- tests/ is no package


def _read(
    output: str, *, command: str = "./tool", exit_code: int | None = 1, files: tuple[str, ...] = ()
) -> Findings:
    return analyse(
        FailureContext(
            task_id="t",
            subtask_id="s",
            attempt_number=1,
            command=command,
            exit_code=exit_code,
            error_output=output,
            files_modified=files,
        )
    )


def test_empty_output_says_so_plainly() -> None:
    """No output: no guessed lines, and a headline that says nothing was printed."""
    found = _read("", exit_code=5)
    assert found.facts == []
    assert "printed nothing" in found.headline
    assert "no format" not in found.headline


def test_no_error_line_quotes_the_last_lines() -> None:
    """Only output without any error-shaped line is called unknown; its last lines are quoted."""
    found = _read("step 1\nstep 2\nstep 3 done\n")
    assert "no error line" in found.headline
    assert found.facts == ["step 2", "step 3 done"]


def test_error_lines_of_an_unknown_tool_are_quoted_verbatim() -> None:
    """Error shapes of many languages are found and quoted as printed, not the noise around."""
    output = (
        "compiling 12 units\n"
        "unit 3 ok\n"
        "src/billing/tax.zig:41:17: error: expected type 'u32', found 'i64'\n"
        "    const rate: u32 = lookup(region);\n"
        "                ^~~~~~~~~~~~~~~~\n"
        "note: called from here\n"
        "1 error, 0 warnings\n"
    )
    found = _read(output, command="zigc build")
    assert found.facts[0] == "src/billing/tax.zig:41:17: error: expected type 'u32', found 'i64'"
    assert "unit 3 ok" not in found.facts
    assert found.summary == "1 error, 0 warnings"
    assert "no reader knows" in found.headline


def test_project_files_rank_above_library_and_system_paths() -> None:
    """Of two error lines, the one in the project's own file is quoted first."""
    output = (
        "FAIL /usr/lib/ruby/gems/3.1.0/gems/money-6.16/lib/money.rb:210 undefined method\n"
        "FAIL lib/report/render.rb:88 cannot convert String into Integer\n"
    )
    found = _read(output)
    assert found.facts[0] == "FAIL lib/report/render.rb:88 cannot convert String into Integer"


def test_files_the_attempt_changed_rank_first() -> None:
    """A line naming a file the attempt modified beats other project lines."""
    output = "FAIL a/one.kt:3 unresolved reference: foo\nFAIL b/two.kt:9 type mismatch\n"
    found = _read(output, files=("b/two.kt",))
    assert found.facts[0] == "FAIL b/two.kt:9 type mismatch"


def test_locations_in_every_printed_form() -> None:
    """path:line:col, File "x", line N, at f (file:line:col), --> file:line:col, file(l,c)."""
    text = (
        'File "app/main.py", line 3\n'
        "    at handler (/srv/app/routes.js:12:5)\n"
        "  --> src/lib.rs:7:9\n"
        "src/a.ts(4,2): error TS2322\n"
        "died at script.pl line 6.\n"
    )
    assert find_locations(text) == [
        'File "app/main.py", line 3',
        "/srv/app/routes.js:12:5",
        "src/lib.rs:7:9",
        "src/a.ts(4,2)",
        "script.pl line 6",
    ]


def test_library_paths() -> None:
    """Paths of installed packages, the interpreter and system headers are not the project's."""
    assert is_library_path("/usr/lib/python3.11/json/decoder.py")
    assert is_library_path("/app/.venv/lib/python3.12/site-packages/requests/api.py")
    assert is_library_path("/app/node_modules/express/lib/router.js")
    assert is_library_path("<frozen runpy>")
    assert is_library_path("/usr/include/c++/12/bits/stl_vector.h")
    assert not is_library_path("src/app/service.py")
    assert not is_library_path("/home/dev/shop/src/main.cpp")


def test_codes_and_expected_actual_pairs() -> None:
    """Codes not in the quoted lines and expected/actual lines are added as details."""
    output = (
        "check failed for invoice.total\n"
        "  expected: 120.00\n"
        "  actual:   119.99\n"
        "FAILED rule INV-204 in rules/invoice.yaml:14\n"
    )
    found = _read(output)
    assert "FAILED rule INV-204 in rules/invoice.yaml:14" in found.facts
    assert "expected: 120.00" in " ".join(found.facts + found.details)
    assert "actual:   119.99" in " ".join(found.facts + found.details)


def test_shape_decides_the_type_when_the_command_says_nothing() -> None:
    """Test-runner, compiler and runtime shapes give a type; the command still wins."""
    assert (
        _read("not ok 2 - totals add up\n# failed 1 of 3\n").failure_type
        is FailureType.TEST_FAILURE
    )
    assert _read("error[E17]: unknown type Foo\n").failure_type is FailureType.BUILD_ERROR
    tests = _read("Error: widget count mismatch\n", command="bats tests/")
    assert tests.failure_type is FailureType.TEST_FAILURE


def test_advice_fits_the_error_kind() -> None:
    """A refused connection in unknown output is advised as a service that is not running."""
    found = _read("fetch: connect ECONNREFUSED 127.0.0.1:5432\n")
    assert found.category is ReflectionCategory.MISSING_CONTEXT
    assert "not reachable" in found.advice


def test_linter_diagnostics_without_the_word_error() -> None:
    """Lines that start with a location or a rule code are findings, even with no 'error'."""
    output = (
        "README.md:3: recieve ==> receive\n"
        "docs/api.md:10: seperate ==> separate\n"
        "SC2086 Double quote to prevent globbing\n"
    )
    found = _read(output, command="./spellcheck")
    assert found.facts[:2] == [
        "README.md:3: recieve ==> receive",
        "docs/api.md:10: seperate ==> separate",
    ]
    assert "SC2086 Double quote to prevent globbing" in found.facts


def test_a_linter_by_command_is_a_verification_lint_error() -> None:
    """Whatever the linter, its findings are lint_error and the lesson is to satisfy the check."""
    found = _read("a.yaml:3:1: too many blank lines\n", command="yamllint a.yaml")
    assert found.failure_type is FailureType.LINT_ERROR
    assert found.category is ReflectionCategory.VERIFICATION


def test_stylish_rows_name_their_file_and_warnings_rank_below_errors() -> None:
    """A file header with indented line:col rows: errors first, the file named."""
    output = (
        "config/app.yml\n"
        "  1:1   warning  missing document start\n"
        "  4:9   error    trailing spaces  (trailing-spaces)\n"
    )
    found = _read(output)
    assert found.facts[0] == "4:9   error    trailing spaces  (trailing-spaces)"
    assert "in config/app.yml" in found.details


def test_a_header_is_quoted_with_the_message_under_it() -> None:
    """An error line ending in ':' is quoted with the indented line that explains it."""
    output = 'Build Error at deploy/plan.hcl:12 (resource):\n  unknown attribute "instanc_type"\n'
    found = _read(output)
    assert found.facts[0] == (
        'Build Error at deploy/plan.hcl:12 (resource): unknown attribute "instanc_type"'
    )


def test_the_tools_own_hint_and_quoted_command() -> None:
    """hint:/help: lines are kept as hints, a quoted command in them first."""
    hint = 'hint: resolve the conflicts, then run "vcs pick --continue"'
    output = f"fatal: could not apply 1a2b3c\n{hint}\n"
    found = _read(output)
    assert found.hints[0] == "vcs pick --continue"


def test_one_test_is_named_once() -> None:
    """The same long test id in a progress line and a verdict line is quoted once."""
    output = (
        "tests.test_account.AccountTests.test_overdraft_is_refused ... FAIL\n"
        "FAIL: tests.test_account.AccountTests.test_overdraft_is_refused\n"
        "AssertionError: InsufficientFunds not raised\n"
    )
    found = _read(output)
    assert sum("test_overdraft_is_refused" in fact for fact in found.facts) == 1
    assert any("AssertionError: InsufficientFunds not raised" in fact for fact in found.facts)


def test_a_compound_command_is_typed_by_the_part_that_failed() -> None:
    """`javac X && java X` printing a Java stack trace failed at run time, on a null value."""
    output = (
        'Exception in thread "main" java.lang.NullPointerException: Cannot invoke '
        '"java.lang.Integer.intValue()" because the return value of '
        '"java.util.Map.get(Object)" is null\n'
        "\tat Cart.total(Cart.java:8)\n"
        "\tat Cart.main(Cart.java:14)\n"
    )
    found = _read(output, command="javac Cart.java && java Cart")
    assert found.failure_type is FailureType.RUNTIME_ERROR
    assert "null" in found.advice
    assert "assert" not in found.advice.lower()  # a null value is not an assertion to loosen
    assert any("Cart.java:8" in line for line in [*found.facts, *found.details])


SHAPES: list[dict[str, Any]] = json.loads(
    (DATA / "reader_cases" / "generic.json").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("case", SHAPES, ids=[c["why"] for c in SHAPES])
def test_the_error_line_is_quoted_by_its_shape(case: dict[str, Any]) -> None:
    """Errors above stacks, strict-mode warnings, caret findings: quoted as printed."""
    found = analyse(failure_of(case["command"], case["output"]))
    said = "\n".join([*found.facts, *found.details, found.summary])
    for quoted in case["quoted"]:
        assert quoted in said


def test_a_line_of_any_length_costs_its_window_and_keeps_the_error() -> None:
    """A 200,000-character line is cut to the window's line length; the error after it is read."""
    output = "progress " + "." * 200_000 + "\nerror: widget.c:12: cannot frobnicate the widget\n"
    found = parse_generic(output, 1, command="./build.sh")
    assert any("widget.c:12: cannot frobnicate the widget" in fact for fact in found.facts)
    assert all(len(fact) <= 300 for fact in found.facts)


@pytest.mark.parametrize(
    ("line", "location"),
    [
        ("    at run (file:///app/src/job.ts:5:3)", "file:///app/src/job.ts:5:3"),
        ("   at A.B() in /src/Tests/ATests.cs:line 21", "/src/Tests/ATests.cs:line 21"),
        ("  test/a_test.dart 9:7         main.<fn>", "test/a_test.dart 9:7"),
        (
            'File "bin/main.ml", line 5, characters 2-9:',
            'File "bin/main.ml", line 5, characters 2-9',
        ),
    ],
    ids=["file URL (Deno, ESM)", ".NET :line", "Dart path line:col", "OCaml characters"],
)
def test_locations_in_more_shapes(line: str, location: str) -> None:
    """Stack frames and headers of more ecosystems name their place as printed."""
    assert find_locations(line) == [location]


def test_a_caret_label_and_the_place_below_join_their_error() -> None:
    """A renderer's error, its place on the next line and the label under the carets: one fact."""
    output = (
        "error: invalid config\n"
        "  \u250c\u2500 settings.toml:4:9\n"
        "  \u2502\n"
        '4 \u2502 port = "80\n'
        "  \u2502         ^ unterminated string\n"
    )
    found = parse_generic(output, 1, command="./check")
    assert "error: invalid config (unterminated string) at settings.toml:4:9" in found.facts


@pytest.mark.parametrize(
    ("output", "failure_type"),
    [
        ('a.pas(16,10) Error: Incompatible types: got "Real"\n', FailureType.BUILD_ERROR),
        ("/p/a.nim(10, 18) Error: type mismatch: got <int>\n", FailureType.BUILD_ERROR),
        ("src/c.vala:11.5-11.11: error: Access to private member\n", FailureType.BUILD_ERROR),
        (
            ("src/m.f90:6:8:\n\n    6 |   avg = mean(values)\n      |        1\n"
            "Error: Type mismatch in argument\n"),
            FailureType.BUILD_ERROR,
        ),
        (
            "DeclarationError: Undeclared identifier.\n  --> c/T.sol:10:25:\n",
            FailureType.BUILD_ERROR,
        ),
        ('orders.proto:8:3: "Money" is not defined.\n', FailureType.BUILD_ERROR),
        ("Exception: Not_found.\n", FailureType.RUNTIME_ERROR),
        ("raised CONSTRAINT_ERROR : p.adb:6 range check failed\n", FailureType.RUNTIME_ERROR),
        ("Unhandled TYPE-ERROR in thread #<main>:\n  bad\n", FailureType.RUNTIME_ERROR),
        (
            "Backtrace:\n  4 (primitive-load)\nERROR: In procedure x:\nUnbound variable: fold\n",
            FailureType.RUNTIME_ERROR,
        ),
        ("Error: (car) bad argument type: ()\n\tCall history:\n\t<eval> (f)\n",
         FailureType.RUNTIME_ERROR),
        ("Execution error (ClassCastException) at user/total (report.clj:1).\nclass x\n",
         FailureType.RUNTIME_ERROR),
        ("Syntax error reading source at (src/report.clj:4:1).\nEOF while reading\n",
         FailureType.RUNTIME_ERROR),
    ],
)  # fmt: skip
def test_compiler_and_runtime_shapes_of_more_languages(
    output: str, failure_type: FailureType
) -> None:
    """The shape gives the type: a place in parentheses or with ranges, then the error.

    Also a place then ``Error:``, an uncaught exception in any language's words, a program's
    dying stack (outputs of the unseen_tools_3 batch's real runs).
    """
    assert _read(output).failure_type is failure_type


def test_an_error_header_is_no_test_unless_it_names_one() -> None:
    """``ERROR: In procedure`` and ``ERROR TS2322:`` are errors, not failing tests."""
    found = _read("ERROR TS2322: Type 'f64' is not assignable\n    at a.ts(16,10)\n")
    assert found.failure_type is not FailureType.TEST_FAILURE
    test = _read("ERROR: test_parse (tests.test_cli.CliTest)\nValueError: bad\n")
    assert test.failure_type is FailureType.TEST_FAILURE


def test_a_count_behind_a_cross_is_a_summary_not_a_test() -> None:
    """``✖ 4 problems (...)`` closes a stylish report: the rows are quoted, no test named."""
    output = (
        "/p/index.html\n   7:4   error  <img> is missing required alt  wcag/h37\n"
        "  10:12  error  Duplicate ID main  no-dup-id\n\n\u2716 2 problems (2 errors, 0 warnings)\n"
    )
    found = _read(output, command="npx html-validate public/")
    assert found.failure_type is FailureType.LINT_ERROR
    assert not found.tests
    assert "wcag/h37" in " ".join(found.facts)


def test_a_list_is_quoted_with_the_line_that_announces_it() -> None:
    """A line that announces a list is quoted with its first item; a sentence keeps its ``!``.

    ``Unused files (1)`` (knip), ``Found 1 circular dependency!`` (madge).
    """
    found = _read("Unused files (1)\nsrc/old-helpers.js\nUnused exports (1)\nsub  src/m.js:2:14\n")
    assert "Unused files (1) src/old-helpers.js" in found.facts
    cycle = _read("- Finding files\n\u2716 Found 1 circular dependency!\n\n1) a.js > b.js > a.js\n")
    assert "Found 1 circular dependency! 1) a.js > b.js > a.js" in " ".join(cycle.facts)


def test_an_error_is_quoted_with_its_indented_field() -> None:
    """Racket's ``collection not found`` names the missing collection on the next line."""
    found = _read("server.rkt:2:32: collection not found\n  for module path: json-pointer\n")
    assert "json-pointer" in " ".join(found.facts)


def test_rule_ids_of_every_shape_are_listed() -> None:
    """Dotted ids in brackets (clang-tidy) and ids that open a finding (ansible-lint)."""
    output = (
        "/p/a.c:6:3: error: " + "x" * 220 + " [clang-analyzer-security.insecureAPI.strcpy,"
        "-warnings-as-errors]\nname[play]: All plays should be named.\nsite.yml:1:3\n\n"
        "package-latest: Package installs should not use latest.\nsite.yml:4\n\n"
        "risky-octal: `mode: 644` should have a string value.\nsite.yml:7\n"
    )
    found = _read(output, command="./check")
    text = " ".join(found.facts + found.details)
    for rule in ("clang-analyzer-security.insecureAPI.strcpy", "package-latest", "risky-octal"):
        assert rule in text


def test_a_formatters_diff_names_its_files() -> None:
    """A unified diff with no error line: the files it would change are the facts."""
    found = _read("--- scripts/deploy.sh.orig\n+++ scripts/deploy.sh\n@@ -1 +1 @@\n-a\n+b\n")
    assert found.failure_type is FailureType.LINT_ERROR
    assert found.facts == ["+++ scripts/deploy.sh"]


def test_the_tools_hints_logs_and_closing_counts() -> None:
    """``Did you remember to run `x`?``, where the log is, a count of offenses."""
    found = _read(
        "Error: can't find file 'kemal'\n\nIf you're trying to require a shard:\n"
        "- Did you remember to run `shards install`?\n"
    )
    assert "shards install" in found.hints
    lint = _read(
        "lib/a.rb:6:13: C: Style/OptionalBooleanParameter: Prefer keyword arguments.\n\n"
        "1 file inspected, 10 offenses detected, 8 offenses autocorrectable\n",
        command="rubocop lib",
    )
    assert "10 offenses detected" in lint.summary


def test_a_runners_closing_list_of_failing_files_and_broken_counts() -> None:
    """``Files with failing tests: x`` is kept; ``Contracts: 0 kept, 1 broken.`` summarises."""
    found = _read(
        "==== s-1.1 push FAILED\n---- Result was:\na\n---- Result should have been (exact "
        "matching):\nb\n==== s-1.1 FAILED\n\nall.tcl:\tTotal\t2\tPassed\t1\tSkipped\t0\tFailed"
        "\t1\nFiles with failing tests: stack.test\n",
        command="tclsh tests/all.tcl",
    )
    assert "Files with failing tests: stack.test" in found.details
    contracts = _read(
        "Layers BROKEN\n\nContracts: 0 kept, 1 broken.\n\nlayered.store is not allowed to "
        "import layered.api:\n\n- layered.store -> layered.api (l.1)\n",
        command="lint-imports",
    )
    assert contracts.summary == "Contracts: 0 kept, 1 broken."


def test_a_finding_headed_by_its_rule_id_is_quoted_with_its_place() -> None:
    """``rule-id: Message`` with its place below (ansible-lint), a rule id alone (semgrep)."""
    found = _read(
        "WARNING  Listing 2 violation(s) that are fatal\n"
        "package-latest: Package installs should not use latest.\nsite.yml:4 Task: nginx\n\n"
        "risky-octal: `mode: 644` should have a string value.\nsite.yml:7 Task: copy\n",
        command="./check",
    )
    text = " ".join(found.facts)
    assert "package-latest: Package installs should not use latest. at site.yml:4" in text
    assert "risky-octal" in text
    alone = _read(
        "  deploy/run.py\n    \u276f\u2771 no-yaml-load\n          yaml.load without a Loader\n"
        " \u2022 Findings: 1 (1 blocking)\n",
        command="./scan",
    )
    assert "\u276f\u2771 no-yaml-load" in alone.facts


def test_the_same_finding_at_other_places_fills_the_room_left() -> None:
    """Jshint's three ``Missing semicolon.`` at three places: each place is quoted."""
    found = _read(
        "src/app.js: line 2, col 14, Missing semicolon.\n"
        "src/app.js: line 4, col 26, Missing semicolon.\n"
        "src/app.js: line 7, col 13, Missing semicolon.\n\n3 errors\n",
        command="npx jshint src/",
    )
    text = " ".join(found.facts)
    for place in ("line 2, col 14", "line 4, col 26", "line 7, col 13"):
        assert place in text
    assert "src/app.js: line 4" in find_locations("src/app.js: line 4, col 26, Missing")


def test_headings_with_bulleted_items_and_error_tags_behind_a_cross() -> None:
    """Headings with bulleted items, error tags behind a cross, a project's own missing path.

    depcheck's ``Unused dependencies`` then ``* moment``; esbuild's ``✘ [ERROR] x`` is an
    error, not a failing test; webpack's own missing path is no missing package.
    """
    found = _read(
        "Unused dependencies\n* moment\nMissing dependencies\n* dayjs: ./index.js\n",
        command="npx depcheck",
    )
    assert "Unused dependencies * moment" in found.facts
    esbuild = _read(
        '\u2718 [ERROR] Could not resolve "lodash-es"\n\n    src/index.js:2:25:\n\n1 error\n',
        command="npx esbuild src/index.js --bundle",
    )
    assert esbuild.failure_type is FailureType.BUILD_ERROR
    webpack = _read(
        "ERROR in ./src/index.js 1:0-38\nModule not found: Error: Can't resolve './charts/line' "
        "in '/p/src'\n",
        command="npx webpack",
    )
    assert webpack.failure_type is FailureType.BUILD_ERROR
    fixer = _read("Rewriting app/models.py\n", command="./fix")
    assert fixer.failure_type is FailureType.LINT_ERROR


@pytest.mark.parametrize(
    ("command", "output", "failure_type", "quoted"),
    [
        ("./ci", ("[error] /p/src/main/scala/Main.scala:3:15: type mismatch;\n[error]  found   : "
         "String\n[error]  required: Int\n[error] one error found\n"), FailureType.BUILD_ERROR,
         "Main.scala:3:15: type mismatch;"),
        ("./ci", ("[INFO] Compiling 2 source files\n[ERROR] /p/src/main/java/App.java:[12,5] "
         "cannot find symbol\n"), FailureType.BUILD_ERROR, "App.java:[12,5] cannot find symbol"),
        ("./ci", "e: file:///p/src/Main.kt:3:5 Unresolved reference 'foo'.\n",
         FailureType.BUILD_ERROR, "Unresolved reference 'foo'."),
        ("./ci", ("-- TYPE MISMATCH ------------------------------------------- src/Main.elm\n\n"
         "The 1st argument to `text` is not what I expect:\n"), FailureType.BUILD_ERROR,
         "TYPE MISMATCH"),
        ("./ci", "/p/main.odin(3:5) Error: Undeclared name: foo\n", FailureType.BUILD_ERROR,
         "main.odin(3:5) Error: Undeclared name: foo"),
        ("./ci", ('#8 ERROR: process "/bin/sh -c npm ci" did not complete successfully: exit '
         'code: 1\nERROR: failed to solve: process "/bin/sh -c npm ci" did not complete '
         "successfully: exit code: 1\n"), FailureType.BUILD_ERROR, "failed to solve"),
        ("./ci", ("ERROR: LoadError: UndefVarError: `x` not defined\nStacktrace:\n [1] top-level "
         "scope\n   @ /p/main.jl:3\n"), FailureType.RUNTIME_ERROR, "UndefVarError"),
    ],
)  # fmt: skip
def test_more_ecosystems_error_shapes_by_their_documented_formats(
    command: str, output: str, failure_type: FailureType, quoted: str
) -> None:
    """More ecosystems' error shapes, written from their documented formats.

    sbt's and Maven's tagged errors, kotlinc's ``e:``, Elm's headers, Odin's ``f(3:5)``,
    docker's ``failed to solve``, Julia's ``ERROR: LoadError:``.
    """
    found = _read(output, command=command)
    assert found.failure_type is failure_type
    assert quoted in " ".join([*found.facts, found.summary])


@pytest.mark.parametrize(
    ("output", "failure_type"),
    [
        ("** (FunctionClauseError) no function clause matching in Report.label/1\n",
         FailureType.RUNTIME_ERROR),
        ("bin/greet.rb:4:in `<main>': undefined method `[]' for nil:NilClass (NoMethodError)\n",
         FailureType.RUNTIME_ERROR),
        ("PHP Fatal error:  Uncaught TypeError: average(): Argument #1 must be of type array\n",
         FailureType.RUNTIME_ERROR),
        ("Error in summarise(scores) : object 'avgg' not found\nExecution halted\n",
         FailureType.RUNTIME_ERROR),
        (("lua5.4: ./stats.lua:10: attempt to perform arithmetic on a nil value\n"
         "stack traceback:\n\t[C]: in ?\n"), FailureType.RUNTIME_ERROR),
        ("cannot open data/sales.csv: No such file or directory at bin/report.pl line 6.\n",
         FailureType.RUNTIME_ERROR),
        ("Dockerfile:2 DL3008 warning: Pin versions in apt get install.\n", FailureType.LINT_ERROR),
        ("CMakeLists.txt:03,04: [C0103] Invalid directory variable name\n", FailureType.LINT_ERROR),
        ("lib/g.rb:1:1: C: Style/Documentation: Missing top-level documentation comment.\n",
         FailureType.LINT_ERROR),
    ],
)  # fmt: skip
def test_interpreters_and_checkers_known_by_their_own_words(
    output: str, failure_type: FailureType
) -> None:
    """With a command line that says nothing (``./ci``), the output's words give the type."""
    assert _read(output, command="./ci").failure_type is failure_type


def test_a_suggestion_wrapped_at_the_line_width_is_quoted_as_printed() -> None:
    """``Did you`` ends one line and ``mean "logs"?`` opens the next: one hint, as printed."""
    output = (
        '\nError: Reference to undeclared resource\n\n  on app.tf line 3, in output "id":\n'
        "   3:   value = aws_s3_bucket.logz.id\n\n"
        'A managed resource "aws_s3_bucket" "logz" has not been declared. Did you\n'
        'mean "logs"?\n'
    )
    found = _read(output)
    assert 'Did you\nmean "logs"?' in found.hints


def test_a_gates_rows_under_its_minimum_are_named() -> None:
    """A gate's table: the rows under the minimum its verdict names, not the total."""
    output = (
        "| Name        | Total | Miss | Cover% |\n"
        "|-------------|-------|------|--------|\n"
        "| api.py      |     4 |    0 |   100% |\n"
        "| store.py    |    10 |    8 |    20% |\n"
        "| TOTAL       |    14 |    8 |  42.9% |\n"
        "---------- RESULT: FAILED (minimum: 75.0%, actual: 42.9%) ----------\n"
    )
    found = _read(output)
    assert "below the minimum: store.py (20%)" in found.details


def test_findings_led_by_their_place_are_quoted_though_they_say_no_error() -> None:
    """A checker's findings with no severity word: the first ones, not the last lines."""
    output = "".join(
        f'api/v1/a.proto:{n}:3:Field name "x{n}" should be lower_snake_case.\n' for n in range(3, 9)
    )
    found = parse_generic(output, 100)
    assert found.facts[0] == 'api/v1/a.proto:3:3:Field name "x3" should be lower_snake_case.'
    assert len(found.facts) == 4
