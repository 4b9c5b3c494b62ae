"""make around other tools: the failing targets and what they ran."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from reflexkit.models import FailureContext, FailureType, ReflectionCategory
from reflexkit.reflection._heuristic import HeuristicGenerator

from ..conftest import (  # noqa: TID252 -- tests/ is no package; importlib mode resolves it
    reflection_text,
    run_in_bash,
    write_files,
)

GEN = HeuristicGenerator()


@pytest.mark.skipif(
    shutil.which("make") is None or shutil.which("gcc") is None, reason="no make or gcc"
)
def test_make_keep_going_names_the_goal_not_remade(tmp_path: Path) -> None:
    """``make -k``: both failing recipes and make's verdict on the goal are quoted."""
    write_files(
        tmp_path,
        {
            "Makefile": "all: a.o b.o\n%.o: %.c\n\tgcc -c $< -o $@\n",
            "a.c": "int a(void) { return 1 }\n",
            "b.c": "int b(void) { return q; }\n",
        },
    )
    failure = run_in_bash("make -k", tmp_path, env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"})
    text = reflection_text(GEN.generate(failure))
    assert "make: *** [Makefile:3: a.o] Error 1" in text
    assert "make: *** [Makefile:3: b.o] Error 1" in text
    assert "make: Target 'all' not remade because of errors." in text


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")
def test_make_recipe_program_not_installed_is_missing_context(tmp_path: Path) -> None:
    """Error 127 from a recipe: the program it runs is not installed."""
    (tmp_path / "Makefile").write_text("check:\n\treflexkit-no-such-linter src\n")
    reflection = GEN.generate(run_in_bash("make check", tmp_path))
    assert "Error 127" in reflection_text(reflection)
    assert reflection.category == ReflectionCategory.MISSING_CONTEXT


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")
def test_make_missing_prerequisite_is_missing_context(tmp_path: Path) -> None:
    """``No rule to make target 'x.o', needed by 'app'``: a source file is missing."""
    (tmp_path / "Makefile").write_text("app: main.o net.o\n\tcc -o app main.o net.o\n")
    (tmp_path / "main.c").write_text("int main(void) { return 0; }\n")
    reflection = GEN.generate(run_in_bash("make", tmp_path))
    assert "No rule to make target 'net.o', needed by 'app'" in reflection_text(reflection)
    assert reflection.category == ReflectionCategory.MISSING_CONTEXT


@pytest.mark.skipif(
    shutil.which("make") is None or shutil.which("gcc") is None, reason="no make or gcc"
)
def test_recursive_make_quotes_the_innermost_and_outermost_target(tmp_path: Path) -> None:
    """A sub-make's compiler error: the error, the sub-make's target and the top target."""
    write_files(
        tmp_path,
        {
            "Makefile": "all: lib\nlib:\n\t$(MAKE) -C lib\n.PHONY: all lib\n",
            "lib/Makefile": "vec.o: vec.c\n\tgcc -c -o $@ $<\n",
            "lib/vec.c": "int dot(int a, int b) {\n    return a * b\n}\n",
        },
    )
    failure = run_in_bash("make", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "vec.c:2:17: error" in text
    assert "make[1]: *** [Makefile:2: vec.o] Error 1" in text
    assert "make: *** [Makefile:3: lib] Error 2" in text


@pytest.mark.slow
def test_make_around_a_test_runner_names_the_target(tmp_path: Path) -> None:
    """`make test` running pytest: pytest's facts, and which make target failed."""
    if shutil.which("make") is None:
        pytest.skip("no make on this machine")
    write_files(
        tmp_path,
        {
            "Makefile": f"test:\n\t{sys.executable} -m pytest -q -p no:cacheprovider test_x.py\n",
            "test_x.py": "def test_half():\n    assert 7 // 2 == 3.5\n",
        },
    )
    failure = run_in_bash("make test", tmp_path)
    reflection = GEN.generate(failure)
    assert reflection.failure_type is FailureType.TEST_FAILURE
    text = reflection_text(reflection)
    assert "test_x.py::test_half" in text
    assert "make: *** [Makefile:2: test] Error 1" in text


@pytest.mark.skipif(
    shutil.which("make") is None or shutil.which("gcc") is None, reason="no make or gcc"
)
def test_make_names_the_program_that_crashed(tmp_path: Path) -> None:
    """``make: *** [Makefile:N: test] Segmentation fault``: the program it ran is named."""
    write_files(
        tmp_path,
        {
            "Makefile": "test: check\n\t./check --all\ncheck: check.c\n\tgcc -o check check.c\n",
            "check.c": "#include <stdio.h>\nint main(void) {\n"
            '    printf("[pass] one\\n[pass] tw");\n'
            "    fflush(stdout);\n    volatile int *p = 0;\n    return *p;\n}\n",
        },
    )
    failure = run_in_bash("make test", tmp_path, env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"})
    assert "Segmentation fault" in failure.error_output
    reflection = GEN.generate(failure)
    assert reflection.failure_type is FailureType.RUNTIME_ERROR
    assert "crashed running ./check --all" in reflection_text(reflection)


_CHECKS_C = """#include <stdio.h>
static int failed, passed;
static void check(int ok, const char *what, int line) {
    if (ok) { passed++; return; }
    failed++;
    printf("%s - FAILED (line %d)\\n", what, line);
}
int main(void) {
    int status = 2;
    check(1 + 1 == 2, "sum", __LINE__);
    if (status != -2) printf("status is %d, not -2\\n", status);
    check(status == -2, "unbalanced input is rejected", __LINE__);
    printf("\\nPASSED: %d\\nFAILED: %d\\n", passed, failed);
    /* end */
    return failed ? 1 : 0;
}
"""


@pytest.mark.skipif(
    shutil.which("make") is None or shutil.which("gcc") is None, reason="no make or gcc"
)
def test_a_test_program_under_make_is_a_test_failure_with_its_checks(tmp_path: Path) -> None:
    """``make test`` ran a C test binary: its own failing checks are quoted, typed a test."""
    write_files(
        tmp_path,
        {
            "Makefile": "test: checks\n\t./checks\nchecks: checks.c\n\tgcc -o checks checks.c\n",
            "checks.c": _CHECKS_C,
        },
    )
    failure = run_in_bash("make test", tmp_path, env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"})
    reflection = GEN.generate(failure)
    text = reflection_text(reflection)
    assert reflection.failure_type is FailureType.TEST_FAILURE, failure.error_output
    assert "unbalanced input is rejected - FAILED (line 12)" in text
    assert "status is 2, not -2" in text
    assert "make: *** [Makefile:2: test] Error 1" in text


@pytest.mark.skipif(
    shutil.which("make") is None or shutil.which("gcc") is None, reason="no make or gcc"
)
def test_checks_that_failed_before_a_crash_are_quoted(tmp_path: Path) -> None:
    """A test binary that crashed after failing checks: a crash, with the checks it failed."""
    crash = "fflush(stdout); volatile int *p = 0; return *p;"
    write_files(
        tmp_path,
        {
            "Makefile": "test: checks\n\t./checks\nchecks: checks.c\n\tgcc -o checks checks.c\n",
            "checks.c": _CHECKS_C.replace("/* end */", crash),
        },
    )
    failure = run_in_bash("make test", tmp_path, env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"})
    reflection = GEN.generate(failure)
    assert reflection.failure_type is FailureType.RUNTIME_ERROR, failure.error_output
    assert "unbalanced input is rejected - FAILED (line 12)" in reflection_text(reflection)


def test_a_build_error_under_make_is_not_a_test_failure() -> None:
    """Compiler errors, a tool's lower-case 'failure' and make's lines are no test's checks."""
    from reflexkit.readers._cxx import program_test_failures  # noqa: PLC0415

    text = (
        "gcc -c a.c\na.c:3:1: error: expected ';' before '}' token\n"
        "make: *** [Makefile:3: a.o] Error 1\nmake: Target 'all' not remade because of errors.\n"
        "tar: CHANGES.md: Cannot stat: No such file or directory\n"
        "tar: Exiting with failure status due to previous errors\n"
    )
    assert program_test_failures(text, len(text)) == ([], "")


def test_checks_named_with_their_expression_and_a_bare_count() -> None:
    """``name: FAILED (expr(with) parens)`` lines are checks; ``2 failed`` is their count."""
    from reflexkit.readers._cxx import program_test_failures  # noqa: PLC0415

    text = (
        "./test_parse\ntest_parse_plain: ok\n"
        'test_parse_rejects_letters: FAILED (parse_port("80a") == -1)\n'
        "2 failed\nmake: *** [Makefile:3: test] Error 1\n"
    )
    fails, count = program_test_failures(text, text.index("make: ***"))
    assert fails == ['test_parse_rejects_letters: FAILED (parse_port("80a") == -1)']
    assert count == "2 failed"


def test_automakes_harness_names_the_failing_test_and_its_log() -> None:
    """``make check``: automake's ``FAIL: x`` lines are the checks; its log is named."""
    failure = FailureContext(
        task_id="t",
        subtask_id="s",
        attempt_number=1,
        command="make check",
        exit_code=2,
        error_output=(
            "PASS: test_parse\nFAIL: test_escape\n"
            "============================================================================\n"
            "# TOTAL: 2\n# PASS:  1\n# FAIL:  1\n# ERROR: 0\n"
            "============================================================================\n"
            "See tests/test-suite.log\n"
            "make[2]: *** [Makefile:1093: test-suite.log] Error 1\n"
            "make[1]: *** [Makefile:1201: check-TESTS] Error 2\n"
            "make: *** [Makefile:1402: check-am] Error 2\n"
        ),
    )
    reflection = GEN.generate(failure)
    text = reflection_text(reflection)
    assert reflection.failure_type is FailureType.TEST_FAILURE
    assert "FAIL: test_escape" in text
    assert "See tests/test-suite.log" in text


@pytest.mark.skipif(
    shutil.which("make") is None
    or shutil.which("pkg-config") is None
    or not Path("/usr/include/check.h").exists(),
    reason="no make, pkg-config or Check on this machine",
)
def test_a_check_suite_under_make_is_a_test_failure(tmp_path: Path) -> None:
    """Check's ``t.c:4:F:Core:test_add:0: Assertion ... failed`` lines are the checks."""
    write_files(
        tmp_path,
        {
            "Makefile": "test: t\n\t./t\nt: t.c\n"
            "\tgcc -o t t.c $$(pkg-config --cflags --libs check)\n",
            "t.c": """
            #include <check.h>
            #include <stdlib.h>
            static int add(int a, int b) { return a - b; }
            START_TEST(test_add) { ck_assert_int_eq(add(2, 3), 5); }
            END_TEST
            int main(void) {
                Suite *s = suite_create("Calc");
                TCase *tc = tcase_create("Core");
                tcase_add_test(tc, test_add);
                suite_add_tcase(s, tc);
                SRunner *sr = srunner_create(s);
                srunner_run_all(sr, CK_NORMAL);
                int failed = srunner_ntests_failed(sr);
                srunner_free(sr);
                return failed ? EXIT_FAILURE : EXIT_SUCCESS;
            }
            """,
        },
    )
    failure = run_in_bash("make test", tmp_path, env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"})
    reflection = GEN.generate(failure)
    assert reflection.failure_type is FailureType.TEST_FAILURE, failure.error_output
    assert "t.c:4:F:Core:test_add:0: Assertion 'add(2, 3) == 5' failed" in reflection_text(
        reflection
    )
    direct = GEN.generate(run_in_bash("./t", tmp_path))  # the suite run by hand: the same
    assert direct.failure_type is FailureType.TEST_FAILURE, direct.analysis
    assert "33%" not in reflection_text(direct)
    assert "0%: Checks: 1, Failures: 1, Errors: 0" in reflection_text(direct)


def test_unitys_checks_and_count_each_on_its_own_line() -> None:
    """Unity's ``file:line:test:FAIL: msg`` is a check; its closing ``FAIL`` and count are not."""
    from reflexkit.readers._cxx import program_test_failures  # noqa: PLC0415

    text = (
        "./test_calc\ntest_calc.c:12:test_add:FAIL: Expected 5 Was -1\n"
        "test_calc.c:20:test_sub:PASS\n\n-----------------------\n"
        "2 Tests 1 Failures 0 Ignored \nFAIL\nmake: *** [Makefile:4: test] Error 1\n"
    )
    fails, count = program_test_failures(text, text.index("make: ***"))
    assert fails == ["test_calc.c:12:test_add:FAIL: Expected 5 Was -1"]
    assert count == "2 Tests 1 Failures 0 Ignored"


def test_a_unity_program_run_by_hand_is_read_as_its_tests() -> None:
    """A Unity program run directly: its failing tests and ``N Tests N Failures N Ignored``."""
    from reflexkit.readers._cxx import parse_unity  # noqa: PLC0415

    found = parse_unity(
        "test/test_calc.c:12:test_add:FAIL: Expected 5 Was -1\ntest/test_calc.c:20:test_sub:PASS\n"
        "\n-----------------------\n2 Tests 1 Failures 0 Ignored \nFAIL\n"
    )
    assert found is not None
    assert found.failure_type is FailureType.TEST_FAILURE
    assert found.tests == ["test_add"]
    assert found.facts == ["test/test_calc.c:12:test_add:FAIL: Expected 5 Was -1"]
    assert found.summary == "2 Tests 1 Failures 0 Ignored"
    assert parse_unity("2 Tests 0 Failures 0 Ignored \nOK\n") is None


_CASCADE_C = """#include <stdio.h>
#define CHECK(x) if (!(x)) printf("%-4d %-40s - FAILED\\n", __LINE__, #x)
static void test_config(const int *cfg) {
    CHECK(cfg != 0);
    CHECK(cfg && cfg[0] == 1);
    CHECK(cfg && cfg[1] == 2);
    CHECK(cfg && cfg[2] == 3);
    CHECK(cfg && cfg[3] == 4);
    CHECK(cfg && cfg[4] == 5);
    CHECK(cfg && cfg[5] == 6);
    CHECK(cfg && cfg[6] == 7);
    CHECK(cfg && cfg[7] == 8);
    CHECK(cfg && cfg[8] == 9);
}
/* a second test, far below: its own failure is another lesson */
























static void test_trailing_comma(int parsed) {
    CHECK(parsed == 1);
}
int main(void) {
    test_config(0);
    test_trailing_comma(0);
    fflush(stdout);
    volatile int *p = 0;
    return *p;
}
"""


@pytest.mark.skipif(
    shutil.which("make") is None or shutil.which("gcc") is None, reason="no make or gcc"
)
def test_the_first_check_of_each_test_is_quoted_before_a_cascade(tmp_path: Path) -> None:
    """Ten checks of one test fail from one cause: another test's failure is quoted too."""
    write_files(
        tmp_path,
        {
            "Makefile": "test: checks\n\t./checks\nchecks: checks.c\n\tgcc -o checks checks.c\n",
            "checks.c": _CASCADE_C,
        },
    )
    failure = run_in_bash("make test", tmp_path, env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"})
    text = reflection_text(GEN.generate(failure))
    assert "4 cfg != 0 - FAILED" in text, failure.error_output
    assert "41 parsed == 1 - FAILED" in text
