"""The C/C++ readers: gcc and clang errors traced back to the project's lines, the linker, CMake.

The outputs under tests/data/tool_outputs/cxx-*.json and cmake-*.json were produced with g++ 12,
clang 14, GNU ld and CMake 3.25; the live tests compile with this machine's compilers.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from reflexkit.models import FailureContext, FailureType, ReflectionCategory
from reflexkit.readers import Findings, analyse
from reflexkit.readers._cxx import parse_catch2, parse_cmake, parse_ctest, parse_gtest
from reflexkit.readers._native import parse_gcc, parse_make

from ..conftest import (  # noqa: TID252 -- tests/ is no package; importlib mode resolves it
    DATA,
    assert_read_as_labelled,
    failure_of,
    read_item,
    run_in_bash,
    write_files,
)

ITEMS = sorted(
    p for pattern in ("cxx-*.json", "cmake-*.json") for p in (DATA / "tool_outputs").glob(pattern)
)


@pytest.mark.parametrize("path", ITEMS, ids=lambda p: p.stem)
def test_each_captured_output_is_read(path: Path) -> None:
    """Every captured failure gets its labelled type, category and key facts."""
    assert_read_as_labelled(path)


class TestTemplateErrors:
    """Errors inside libstdc++ headers are reported at the project's line."""

    def test_gcc_required_from_here_names_the_projects_line(self) -> None:
        """The chain gcc prints ends in ``src/shapes.cpp:16:14:   required from here``."""
        facts = read_item("cxx-gxx-template-errors").facts
        assert facts[2].startswith(
            "src/shapes.cpp:16:14: error: no match for \u2018operator<\u2019 (operand types are "
            "\u2018geo::Point\u2019 and \u2018geo::Point\u2019) [in bits/predefined_ops.h:45:23]"
        )
        assert facts[2].endswith("(+2 more)")
        assert not any(f.startswith("/usr/") for f in facts)

    def test_clang_requested_here_names_the_projects_line(self) -> None:
        """The notes clang prints after the error end at the project's ``requested here``."""
        facts = read_item("cxx-clang-template-colour").facts
        assert facts[1].startswith(
            "src/shapes.cpp:16:10: error: invalid operands to binary expression "
            "('geo::Point' and 'geo::Point') [in bits/predefined_ops.h:45:23]"
        )
        assert not any(f.startswith("/usr/") for f in facts)

    def test_errors_in_the_projects_files_come_first_as_printed(self) -> None:
        """The first error is the project's own, and the step says to fix it first."""
        findings = read_item("cxx-gxx-template-errors")
        assert findings.facts[0].startswith("src/shapes.cpp:26:35: error: conversion from")
        assert (
            findings.steps[0]
            == "Fix src/shapes.cpp:26:35 first; later errors often follow from it."
        )

    def test_system_header_error_without_a_chain_uses_the_include_stack(self) -> None:
        """A macro clash in a system header is reported where the project included it."""
        output = (
            "In file included from /usr/include/stdio.h:27,\n"
            "                 from src/main.c:2:\n"
            "/usr/include/features.h:12:2: error: #error unsupported mode\n"
        )
        findings = parse_gcc(output)
        assert findings is not None
        assert findings.facts == [
            "src/main.c:2: error: #error unsupported mode [in include/features.h:12:2]"
        ]


class TestLinker:
    """GNU ld's errors through gcc and clang."""

    def test_each_undefined_symbol_once_with_its_object(self) -> None:
        """Temporary object names are left out; the source name from debug info stays."""
        findings = read_item("cxx-clang-undefined-reference")
        assert findings.facts == [
            "undefined reference to `ring_pop' (in main.c)",
            "undefined reference to `ring_clear' (in main.c)",
        ]
        assert findings.category is ReflectionCategory.MISSING_CONTEXT

    def test_the_implicit_declaration_warning_explains_it(self) -> None:
        """The warning that the function was never declared is kept as a detail."""
        details = read_item("cxx-clang-undefined-reference").details
        assert details[0].startswith(
            "main.c:11:5: warning: implicit declaration of function 'ring_clear'"
        )

    def test_multiple_definition_is_quoted_without_temporary_objects(self) -> None:
        """``/tmp/ccAL8VE9.o:(.bss+0x0): multiple definition of`` changes every run."""
        facts = read_item("cxx-gxx-link-multiple-definition").facts
        assert "multiple definition of `stats::counter'" in facts
        assert not any(".o:(" in f for f in facts)


class TestCMake:
    """CMake's configure errors."""

    def test_a_package_cmake_cannot_find_is_a_dependency_error(self) -> None:
        """find_package(fmt REQUIRED) without fmt installed."""
        findings = read_item("cmake-find-package-fmt")
        assert findings.failure_type is FailureType.DEPENDENCY_ERROR
        assert findings.headline == "CMake cannot find fmt."
        assert findings.hints[0].startswith('Add the installation prefix of "fmt"')

    def test_an_error_inside_a_find_module_is_located_in_cmakelists(self) -> None:
        """The call stack's project line, not FindPackageHandleStandardArgs.cmake."""
        facts = read_item("cmake-could-not-find-curl").facts
        assert facts == [
            (
                "CMake Error at CMakeLists.txt:3 (find_package): Could NOT find CURL (missing: "
                "CURL_LIBRARY CURL_INCLUDE_DIR)"
            )
        ]

    def test_a_missing_source_file_is_a_build_error(self) -> None:
        """A target listing a file that does not exist."""
        findings = read_item("cmake-missing-source")
        assert findings.failure_type is FailureType.BUILD_ERROR
        assert findings.facts[0] == (
            "CMake Error at CMakeLists.txt:4 (add_executable): Cannot find source file: "
            "src/median.cpp"
        )

    def test_a_cmake_build_is_read_as_the_compilers_errors(self) -> None:
        """``cmake --build`` runs gmake: the compiler error, gmake's failed and top targets."""
        findings = read_item("cmake-build-gxx-error")
        assert findings.tool == "gcc"
        assert findings.details == [
            (
                "gmake[2]: *** [CMakeFiles/stats.dir/build.make:90: CMakeFiles/stats.dir/src/"
                "stats.cpp.o] Error 1"
            ),
            "gmake: *** [Makefile:91: all] Error 2",
        ]

    def test_other_output_is_not_cmake(self) -> None:
        """No ``CMake Error``, no findings."""
        assert parse_cmake("-- Configuring done\n-- Generating done\n") is None


def test_gmake_stop_lines_are_make_errors() -> None:
    """GNU make installed as gmake (BSD, macOS, CMake's generator) prints ``gmake: ***``."""
    findings = parse_make("gmake: *** No rule to make target 'lib.o', needed by 'app'.  Stop.\n")
    assert findings is not None
    assert findings.facts == ["gmake: *** No rule to make target 'lib.o', needed by 'app'.  Stop."]


def _compile(tmp_path: Path, compiler: str, source: str, name: str) -> Findings:
    """Compile *source* with the real *compiler* and analyse what it printed."""
    (tmp_path / name).write_text(source, encoding="utf-8")
    command = [compiler, "-std=c++17", "-c", name, "-o", "out.o"]
    run = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False
    )
    return analyse(
        FailureContext(
            task_id="t",
            subtask_id="s",
            attempt_number=1,
            command=" ".join(command),
            exit_code=run.returncode,
            error_output=run.stdout + run.stderr,
        )
    )


_SORT_WITHOUT_LESS = (
    "#include <algorithm>\n#include <vector>\nstruct P { int x; };\n"
    "void f(std::vector<P>& v) {\n    std::sort(v.begin(), v.end());\n}\n"
)


@pytest.mark.parametrize("compiler", ["g++", "clang++"])
def test_live_template_error_points_at_the_call(tmp_path: Path, compiler: str) -> None:
    """The real compiler's std::sort error is reported at the project's line 5."""
    if shutil.which(compiler) is None:
        pytest.skip(f"no {compiler} on this machine")
    findings = _compile(tmp_path, compiler, _SORT_WITHOUT_LESS, "sort.cpp")
    assert findings.failure_type is FailureType.BUILD_ERROR
    assert findings.facts[0].startswith("sort.cpp:5:"), findings.facts


_CTEST_PROJECT = {
    "CMakeLists.txt": """
        cmake_minimum_required(VERSION 3.13)
        project(live C)
        enable_testing()
        add_executable(check_sum check_sum.c)
        add_test(NAME sums COMMAND check_sum)
        add_executable(check_ok check_ok.c)
        add_test(NAME fine COMMAND check_ok)
    """,
    "check_ok.c": "int main(void) { return 0; }\n",
}
_CTEST = (
    "cmake -S . -B build >/dev/null && cmake --build build >/dev/null && "
    "ctest --test-dir build --output-on-failure"
)
_NEEDS_CTEST = pytest.mark.skipif(
    shutil.which("cmake") is None or shutil.which("ctest") is None or shutil.which("cc") is None,
    reason="no cmake, ctest or C compiler on this machine",
)


def _ctest(tmp_path: Path, check_sum: str) -> Findings:
    """Build a two-test CMake project whose test ``sums`` runs *check_sum*; read ctest's run."""
    write_files(tmp_path, {**_CTEST_PROJECT, "check_sum.c": check_sum})
    failure = run_in_bash(_CTEST, tmp_path)
    assert "tests failed out of 2" in failure.error_output, failure.error_output
    return analyse(failure)


@_NEEDS_CTEST
def test_live_ctest_failure_quotes_the_tests_own_failing_line(tmp_path: Path) -> None:
    """``--output-on-failure``: the failing test's own FAIL line, not the lines that passed."""
    findings = _ctest(
        tmp_path,
        """
        #include <stdio.h>
        int main(void) {
            puts("sum_of_empty:PASS");
            puts("check_sum.c:4:sum_of_two:FAIL: Expected 5 Was 4");
            puts("2 Tests 1 Failures 0 Ignored");
            puts("FAIL");
            return 1;
        }
        """,
    )
    assert findings.tool == "ctest"
    assert findings.failure_type is FailureType.TEST_FAILURE
    assert findings.tests == ["sums"]
    assert findings.facts[:2] == [
        "1 - sums (Failed)",
        "check_sum.c:4:sum_of_two:FAIL: Expected 5 Was 4",
    ]
    assert findings.summary == "50% tests passed, 1 tests failed out of 2"
    assert "ctest -R '^sums$'" in findings.steps[0]


@_NEEDS_CTEST
def test_live_ctest_segfault_is_a_runtime_error(tmp_path: Path) -> None:
    """A test program that segfaults is a crash, not a failed assertion."""
    findings = _ctest(
        tmp_path,
        "int main(void) { volatile int *p = 0; return *p; }\n",
    )
    assert findings.failure_type is FailureType.RUNTIME_ERROR
    assert findings.facts[0] == "1 - sums (SEGFAULT)"
    assert any("***Exception: SegFault" in d for d in findings.details)


@_NEEDS_CTEST
def test_live_ctest_assertion_abort_stays_a_test_failure(tmp_path: Path) -> None:
    """``assert()`` aborts the program: the assertion is the test's verdict."""
    findings = _ctest(
        tmp_path,
        "#include <assert.h>\nint main(void) { int total = 4; assert(total == 5); return 0; }\n",
    )
    assert findings.failure_type is FailureType.TEST_FAILURE
    assert "Assertion `total == 5' failed." in findings.facts[1]


@_NEEDS_CTEST
def test_live_ctest_timeout_names_the_test_that_hung(tmp_path: Path) -> None:
    """A test past ``--timeout`` is named with ctest's Timeout verdict."""
    write_files(tmp_path, {**_CTEST_PROJECT, "check_sum.c": "int main(void) { for (;;) {} }\n"})
    findings = analyse(run_in_bash(_CTEST + " --timeout 2", tmp_path))
    assert findings.failure_type is FailureType.TEST_FAILURE
    assert findings.facts[0] == "1 - sums (Timeout)"
    assert "loops or waits forever" in findings.advice


def test_ctest_with_no_tests_is_a_misuse() -> None:
    """A ctest run outside the build directory finds nothing to run."""
    findings = parse_ctest("Test project /src/app\nNo tests were found!!!\n")
    assert findings is not None
    assert findings.category is ReflectionCategory.TOOL_MISUSE


def test_other_output_is_not_ctest() -> None:
    """Only ctest's summary line claims the output."""
    assert parse_ctest("1 - sums (Failed)\nsome other runner\n") is None


@_NEEDS_CTEST
def test_live_ctest_before_building_is_a_misuse(tmp_path: Path) -> None:
    """A ctest run on a configured but unbuilt tree: ``***Not Run``, build first."""
    write_files(tmp_path, {**_CTEST_PROJECT, "check_sum.c": "int main(void) { return 0; }\n"})
    failure = run_in_bash(
        "cmake -S . -B build >/dev/null && ctest --test-dir build --output-on-failure", tmp_path
    )
    findings = analyse(failure)
    assert findings.facts[0] == "1 - sums (Not Run)"
    assert findings.category is ReflectionCategory.TOOL_MISUSE
    assert "Build first" in findings.advice


_RULE = "-" * 79
_CATCH2 = f"""
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
ledger_tests is a Catch2 v3.4.0 host application.
Run with -? for options

{_RULE}
Balances
  after a refund
{_RULE}
tests/ledger.cpp:40
...............................................................................

tests/ledger.cpp:47: FAILED:
  REQUIRE( ledger.balance() == 120 )
with expansion:
  100 == 120

{_RULE}
Parsing
{_RULE}
tests/ledger.cpp:60
...............................................................................

tests/ledger.cpp:60: FAILED:
due to unexpected exception with message:
  stoi: no conversion

tests/ledger.cpp:66: FAILED:
  CHECK_THROWS_AS( parse("-"), ParseError )
because no exception was thrown where one was expected:

===============================================================================
test cases:  5 |  3 passed | 2 failed
assertions: 14 | 11 passed | 3 failed

"""


class TestCatch2:
    """Catch2's console report: failed assertions with their values, case by case."""

    def test_each_failed_assertion_with_its_values_or_exception(self) -> None:
        """Location, macro and what Catch2 said of it are quoted per assertion."""
        found = parse_catch2(_CATCH2)
        assert found is not None
        assert found.failure_type is FailureType.TEST_FAILURE
        assert found.tests == ["Balances / after a refund", "Parsing"]
        assert found.facts == [
            (
                "tests/ledger.cpp:47: FAILED: REQUIRE( ledger.balance() == 120 ) "
                "(with expansion: 100 == 120)"
            ),
            (
                "tests/ledger.cpp:60: FAILED: (due to unexpected exception with message: "
                "stoi: no conversion)"
            ),
            (
                'tests/ledger.cpp:66: FAILED: CHECK_THROWS_AS( parse("-"), ParseError ) '
                "(because no exception was thrown where one was expected:)"
            ),
        ]
        assert found.summary == "test cases:  5 |  3 passed | 2 failed"

    def test_under_ctest_a_tests_catch2_assertions_are_its_lines(self) -> None:
        """Under ``ctest --output-on-failure`` a Catch2 program's assertions are quoted."""
        text = (
            "    Start 1: ledger\n1/1 Test #1: ledger ...........***Failed    0.02 sec\n"
            + _CATCH2
            + "\n0% tests passed, 1 tests failed out of 1\n\nThe following tests FAILED:\n"
            "\t  1 - ledger (Failed)\nErrors while running CTest\n"
        )
        found = parse_ctest(text)
        assert found is not None
        assert "1 - ledger (Failed)" in found.facts
        assert any("with expansion: 100 == 120" in fact for fact in found.facts)

    def test_a_passing_run_or_other_output_is_not_catch2(self) -> None:
        """All cases passed, or a ``FAILED:`` line without Catch2's count: not read."""
        assert parse_catch2("All tests passed (14 assertions in 5 test cases)\n") is None
        assert parse_catch2("tests/a.cpp:3: FAILED:\n  CHECK( x )\n") is None


@pytest.mark.skipif(
    shutil.which("g++") is None or not Path("/usr/include/gtest/gtest.h").exists(),
    reason="no g++ or GoogleTest on this machine",
)
def test_live_googletest_failures_with_the_values_compared(tmp_path: Path) -> None:
    """Each ``[  FAILED  ]`` test is quoted with its ``file:line: Failure`` and values."""
    write_files(
        tmp_path,
        {
            "cart_test.cc": """
            #include <gtest/gtest.h>
            #include <string>
            static std::string label(int n) { return n == 1 ? "item" : "items"; }
            TEST(Cart, LabelsOne) { EXPECT_EQ(label(1), "item"); }
            TEST(Cart, LabelsMany) { EXPECT_EQ(label(2), "itemz"); }
            TEST(Cart, Positive) { EXPECT_GT(label(0).size(), 9u) << "empty label"; }
            """,
        },
    )
    failure = run_in_bash(
        "g++ -o cart_test cart_test.cc -lgtest -lgtest_main -pthread && ./cart_test", tmp_path
    )
    findings = parse_gtest(failure.error_output)
    assert findings is not None, failure.error_output
    assert findings.tests == ["Cart.LabelsMany", "Cart.Positive"]
    assert findings.facts[0].startswith("Cart.LabelsMany: cart_test.cc:")
    assert 'Which is: "items"' in findings.facts[0]
    assert "empty label" in findings.facts[1]
    assert findings.summary == "[  FAILED  ] 2 tests, listed below:"


@pytest.mark.skipif(
    shutil.which("gcc") is None or not Path("/usr/include/cmocka.h").exists(),
    reason="no gcc or cmocka on this machine",
)
def test_live_cmocka_failures_with_what_failed_and_where(tmp_path: Path) -> None:
    """A cmocka run: GoogleTest's frame, with ``[  ERROR   ]`` before ``[   LINE   ]``."""
    write_files(
        tmp_path,
        {
            "t.c": """
            #include <stdarg.h>
            #include <stddef.h>
            #include <stdint.h>
            #include <setjmp.h>
            #include <cmocka.h>
            static int add(int a, int b) { return a - b; }
            static void test_add(void **s) { (void)s; assert_int_equal(add(2, 3), 5); }
            static void test_ok(void **s) { (void)s; assert_true(1); }
            int main(void) {
                const struct CMUnitTest tests[] = {
                    cmocka_unit_test(test_add), cmocka_unit_test(test_ok)};
                return cmocka_run_group_tests(tests, NULL, NULL);
            }
            """,
        },
    )
    failure = run_in_bash("gcc -o t t.c -lcmocka && ./t 2>&1", tmp_path)
    findings = parse_gtest(failure.error_output)
    assert findings is not None, failure.error_output
    assert findings.tests == ["test_add"]
    assert findings.facts[0].startswith("test_add: t.c:7: ")
    assert "!= 0x5" in findings.facts[0]
    assert "--gtest_filter" not in " ".join(findings.steps)


def test_other_output_is_not_googletest() -> None:
    """A ``[  FAILED  ]`` line with no ``[ RUN      ]`` of its test is not read."""
    assert parse_gtest("[  FAILED  ] 1 test, listed below:\n[  FAILED  ] A.B\n") is None


def test_doctest_cpp_failed_checks_are_quoted_in_their_test_case() -> None:
    """doctest: ``TEST CASE:`` names the case; each ``ERROR: CHECK(...)`` with its values."""
    output = (
        '[doctest] doctest version is "2.4.11"\n'
        '[doctest] run with "--help" for options\n' + "=" * 79 + "\n"
        "tests/ring.cpp:14:\nTEST CASE:  ring buffer drops the oldest item when full\n\n"
        "tests/ring.cpp:19: ERROR: CHECK_EQ( r.front(), 2 ) is NOT correct!\n"
        "  values: CHECK_EQ( 1, 2 )\n\n" + "=" * 79 + "\n"
        "[doctest] test cases: 4 | 3 passed | 1 failed | 0 skipped\n"
        "[doctest] assertions: 9 | 8 passed | 1 failed |\n[doctest] Status: FAILURE!\n"
    )
    found = analyse(failure_of("./ring_tests", output, 1))
    assert found.failure_type is FailureType.TEST_FAILURE
    assert found.tests == ["ring buffer drops the oldest item when full"]
    assert found.facts == [
        (
            "ring buffer drops the oldest item when full: tests/ring.cpp:19: ERROR: "
            "CHECK_EQ( r.front(), 2 ) is NOT correct! (values: CHECK_EQ( 1, 2 ))"
        )
    ]


def test_criterion_failed_tests_are_quoted_with_their_assertion_message() -> None:
    """Criterion: ``[----] file:line: Assertion Failed``, its message, then ``[FAIL] s::t``."""
    output = (
        "[----] tests/queue.c:22: Assertion Failed\n[----]   \n"
        "[----]   pop on an empty queue should return -1\n[----]   \n"
        "[FAIL] queue::pop_empty: (0.00s)\n"
        "[----] tests/queue.c:31: Unexpected signal caught below this line!\n"
        "[FAIL] queue::push_full: CRASH!\n"
        "[====] Synthesis: Tested: 6 | Passing: 4 | Failing: 2 | Crashing: 1 \n"
    )
    found = analyse(failure_of("./test_queue", output, 1))
    assert found.failure_type is FailureType.TEST_FAILURE
    assert found.tests == ["queue::pop_empty", "queue::push_full"]
    assert found.facts[0] == (
        "queue::pop_empty: tests/queue.c:22: Assertion Failed "
        "(pop on an empty queue should return -1)"
    )
    assert "tests/queue.c:31: Unexpected signal caught below this line!" in found.facts[1]


def test_meson_test_names_each_failing_test_with_what_it_printed() -> None:
    """``meson test --print-errorlogs``: the row's verdict, the test's own lines, the log."""
    cut = "―" * 30 + " ✀  " + "―" * 30
    output = (
        "ninja: Entering directory `/src/ring/build'\nninja: no work to do.\n"
        " 1/3 ring_basic           OK              0.01s\n"
        " 2/3 ring_wrap            FAIL            0.02s   killed by signal 6 SIGABRT\n"
        ">>> MALLOC_PERTURB_=77 /src/ring/build/tests/ring_wrap\n"
        f"{cut}\nring_wrap: tests/wrap.c:18: main: Assertion `ring_len(r) == 3' failed.\n"
        + "―"
        * 62
        + "\n\n 3/3 ring_stress          OK              0.40s\n\nSummary of Failures:\n\n"
        " 2/3 ring_wrap            FAIL            0.02s   killed by signal 6 SIGABRT\n\n"
        "Ok:                 2   \nExpected Fail:      0   \nFail:               1   \n"
        "Unexpected Pass:    0   \nSkipped:            0   \nTimeout:            0   \n\n"
        "Full log written to /src/ring/build/meson-logs/testlog.txt\n"
    )
    found = analyse(failure_of("meson test -C build --print-errorlogs", output, 1))
    assert found.failure_type is FailureType.TEST_FAILURE
    assert found.tests == ["ring_wrap"]
    assert found.facts == [
        (
            "ring_wrap FAIL (killed by signal 6 SIGABRT): ring_wrap: tests/wrap.c:18: main: "
            "Assertion `ring_len(r) == 3' failed."
        )
    ]
    assert found.summary == "Fail: 1"
    assert found.hints == ["Full log written to /src/ring/build/meson-logs/testlog.txt"]
