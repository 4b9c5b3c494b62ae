"""The Clojure readers: clojure.test's FAIL and ERROR reports, a program's ``Execution error``.

The outputs below are made up in clojure.test's and Clojure's shapes; the live test runs
Debian's ``clojure.jar`` when this machine has it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from reflexkit.models import FailureContext
from reflexkit.readers import analyse

from ..conftest import failure_of, quoted  # noqa: TID252 -- tests/ is no package; importlib mode resolves it

_JAR = Path("/usr/share/java/clojure.jar")


def _read(output: str, command: str = "clojure -M:test") -> tuple[str, str, str, str]:
    findings = analyse(
        FailureContext(
            task_id="t",
            subtask_id="s",
            attempt_number=1,
            command=command,
            exit_code=1,
            error_output=output,
        )
    )
    return findings.tool, findings.failure_type.value, findings.category.value, quoted(findings)


_FAIL = """
Testing shop.cart-test

FAIL in (test-total) (cart_test.clj:18)
with a coupon
expected: (= 90 (total cart))
  actual: (not (= 90 100))

Ran 7 tests containing 21 assertions.
1 failures, 0 errors.
"""

_ERROR = """
Testing shop.cart-test

ERROR in (test-parse) (Numbers.java:190)
expected: (= 3 (parse-qty "3x"))
  actual: java.lang.NumberFormatException: For input string: "3x"
 at java.lang.Long.parseLong (Long.java:692)
    clojure.core$parse_long.invokeStatic (core.clj:8047)
    shop.cart$parse_qty.invokeStatic (cart.clj:31)
    shop.cart_test$fn__210.invokeStatic (cart_test.clj:40)
    clojure.test$test_var$fn__9856.invoke (test.clj:717)

ERROR in (test-parse) (Numbers.java:190)
expected: (= 4 (parse-qty "4x"))
  actual: java.lang.NumberFormatException: For input string: "3x"
 at java.lang.Long.parseLong (Long.java:692)

Ran 7 tests containing 21 assertions.
0 failures, 2 errors.
"""

_NO_TEST_NS = """Execution error (FileNotFoundException) at user/eval1 (REPL:1).
Could not locate shop/cart_test__init.class, shop/cart_test.clj or shop/cart_test.cljc on classpath.

Full report at:
/tmp/clojure-1234.edn
"""

_PROGRAM = """Execution error (ArithmeticException) at shop.core/ratio (core.clj:12).
Divide by zero

Full report at:
/tmp/clojure-99.edn
"""


@pytest.mark.parametrize(
    ("output", "reading", "facts"),
    [
        (
            _FAIL,
            ("clojure.test", "test_failure", "root_cause"),
            [
                "FAIL in (test-total) (cart_test.clj:18)",
                "expected: (= 90 (total cart))",
                "actual: (not (= 90 100))",
                "1 failures, 0 errors.",
            ],
        ),
        (
            _ERROR,
            ("clojure.test", "test_failure", "root_cause"),
            [
                "ERROR in (test-parse) (Numbers.java:190)",
                'java.lang.NumberFormatException: For input string: "3x"',
                "shop.cart$parse_qty.invokeStatic (cart.clj:31)",
                "0 failures, 2 errors.",
            ],
        ),
        (
            _NO_TEST_NS,
            ("clojure", "test_failure", "tool_misuse"),
            ["Could not locate shop/cart_test__init.class"],
        ),
        (
            _PROGRAM,
            ("clojure", "runtime_error", "root_cause"),
            ["Execution error (ArithmeticException) at shop.core/ratio (core.clj:12).", "Divide"],
        ),
    ],
    ids=["fail", "error-with-project-frame", "test-namespace-off-the-path", "program-error"],
)
def test_clojure_output_is_read(
    output: str, reading: tuple[str, str, str], facts: list[str]
) -> None:
    """Each shape gets its reader, type and category, with its facts quoted verbatim."""
    tool, kind, category, text = _read(output)
    assert (tool, kind, category) == reading
    assert [fact for fact in facts if fact not in text] == []


def test_a_repeated_error_is_named_once() -> None:
    """The second report of the same exception is named, not quoted again."""
    text = _read(_ERROR)[3]
    assert text.count("For input string") == 1
    assert "(the same error)" in text


@pytest.mark.skipif(
    shutil.which("java") is None or not _JAR.exists(), reason="no clojure.jar on this machine"
)
def test_live_clojure_test_run(tmp_path: Path) -> None:
    """Run clojure.test on a namespace whose code is wrong and read what it prints."""
    (tmp_path / "calc_test.clj").write_text(
        "(ns calc-test (:require [clojure.test :refer [deftest is run-tests]]))\n"
        "(defn add [a b] (- a b))\n(deftest test-add (is (= 5 (add 2 3))))\n"
        "(let [r (run-tests 'calc-test)] (System/exit (if (zero? (:fail r)) 0 1)))\n",
        encoding="utf-8",
    )
    command = f"java -cp {_JAR} clojure.main calc_test.clj"
    run = subprocess.run(
        command.split(), check=False, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    tool, kind, _category, text = _read(run.stdout + run.stderr, command)
    assert (tool, kind) == ("clojure.test", "test_failure"), run.stdout + run.stderr
    assert "FAIL in (test-add) (calc_test.clj:3)" in text
    assert "expected: (= 5 (add 2 3))" in text


@pytest.mark.parametrize(
    "output",
    [
        "Syntax error at line 3: unexpected '}'\n  in config.hcl\n",
        "Execution error at step 'deploy':\n  exit status 2 from ./deploy.sh\n",
        'ERROR:  Syntax error at or near "SELEC"\nLINE 1: SELEC 1;\n',
    ],
    ids=["config-parser", "pipeline-step", "sql"],
)
def test_another_tools_error_line_is_not_clojure(output: str) -> None:
    """Only a line ending at its source, ``(core.clj:12).``, is Clojure's error line."""
    found = analyse(failure_of("./run", output))
    assert found.tool != "clojure"


@pytest.mark.parametrize(
    "line",
    [
        "Execution error (ArithmeticException) at foo.core/bar (core.clj:12).",
        "Syntax error compiling at (foo/core.clj:3:1).",
        "Syntax error reading source at (REPL:1:5).",
    ],
)
def test_clojure_error_lines_ending_at_their_source_are_read(line: str) -> None:
    """Clojure's own error lines still name the tool."""
    found = analyse(failure_of("./run", f"{line}\nboom\n"))
    assert found.tool == "clojure"
