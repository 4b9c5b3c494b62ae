"""The Java readers: javac's diagnostics and JVM stack traces with ``Caused by:`` chains.

The outputs under tests/data/tool_outputs/java-*.json were produced with OpenJDK 17's javac and
java; the live test at the end compiles with the javac of this machine when it has one.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from reflexkit.models import FailureContext, FailureType, ReflectionCategory
from reflexkit.readers import analyse
from reflexkit.readers._java import parse_java_trace, parse_javac, parse_junit, parse_maven

from ..conftest import (  # noqa: TID252 -- tests/ is no package; importlib mode resolves it
    DATA,
    assert_read_as_labelled,
    read_item,
)

ITEMS = sorted((DATA / "tool_outputs").glob("java-*.json"))


@pytest.mark.parametrize("path", ITEMS, ids=lambda p: p.stem)
def test_each_captured_output_is_read(path: Path) -> None:
    """Every captured Java failure gets its labelled type, category and key facts."""
    assert_read_as_labelled(path)


class TestJavac:
    """javac's ``File.java:12: error: message`` format."""

    def test_detail_lines_are_kept_with_their_error(self) -> None:
        """``symbol:`` and the type lines under an error say what is wrong; they stay with it."""
        findings = read_item("java-javac-four-errors")
        assert findings.tool == "javac"
        assert findings.facts[3] == (
            "src/main/java/com/acme/orders/Report.java:13: error: cannot find symbol "
            "(symbol:   method totl(); location: variable o of type Order)"
        )
        assert findings.summary == "4 errors, 1 warning"

    def test_warnings_are_not_reported_as_errors(self) -> None:
        """The -Xlint warning is counted in the summary but is not a fact."""
        assert not any("rawtypes" in fact for fact in read_item("java-javac-four-errors").facts)

    def test_missing_library_packages_are_a_dependency_error(self) -> None:
        """``package com.google.gson does not exist`` outside the project: a missing jar."""
        findings = read_item("java-javac-missing-packages")
        assert findings.failure_type is FailureType.DEPENDENCY_ERROR
        assert findings.headline == (
            "javac cannot find the packages com.google.gson, org.apache.commons.lang3."
        )

    def test_a_missing_package_of_the_project_is_a_build_error(self) -> None:
        """A package under the project's own source tree is a typo, not a dependency."""
        output = (
            "src/main/java/com/acme/orders/Order.java:3: error: package com.acme.util does not "
            "exist\nimport com.acme.util.Money;\n                     ^\n1 error\n"
        )
        findings = parse_javac(output)
        assert findings is not None
        assert findings.failure_type is FailureType.BUILD_ERROR

    def test_other_output_is_not_javac(self) -> None:
        """A Python traceback or a gcc error is not read as javac's."""
        assert parse_javac("src/a.c:3:1: error: expected ';'\n") is None


class TestStackTraces:
    """Exceptions thrown by a Java program."""

    def test_root_cause_and_its_projects_frame(self) -> None:
        """The last ``Caused by:`` is the root cause; its first project frame is quoted."""
        findings = read_item("java-run-caused-by-parse")
        assert findings.facts == [
            (
                'Exception in thread "main" java.lang.IllegalArgumentException: bad order row: '
                "A2,sku-9,2.50,1"
            ),
            'Caused by: java.lang.NumberFormatException: For input string: "2.50"',
            "com.acme.orders.OrderLoader.parse(OrderLoader.java:27)",
        ]

    def test_jdk_frames_are_skipped(self) -> None:
        """java.base frames on top of the stack are not where the project must look."""
        findings = read_item("java-run-numberformat")
        assert findings.facts[-1] == "com.acme.orders.Order.weight(Order.java:37)"
        assert findings.steps[0] == "Open Order.java:37 and fix the statement there."

    def test_root_cause_in_the_jdk_falls_back_to_the_outer_exception(self) -> None:
        """``... 1 more`` frames: the project frame of the root cause is OrderLoader.load."""
        findings = read_item("java-run-nosuchfile")
        assert findings.category is ReflectionCategory.MISSING_CONTEXT
        assert findings.facts[-1] == "com.acme.orders.OrderLoader.load(OrderLoader.java:14)"

    def test_advice_fits_the_exception(self) -> None:
        """A NullPointerException is advised as a null value, a NumberFormatException as parsing."""
        assert "null" in read_item("java-run-npe").advice
        assert "BigDecimal" in read_item("java-run-caused-by-parse").advice

    def test_a_class_that_cannot_be_launched_is_tool_misuse(self) -> None:
        """``Could not find or load main class``: the command line is wrong."""
        findings = read_item("java-run-class-not-found")
        assert findings.category is ReflectionCategory.TOOL_MISUSE
        assert findings.failure_type is FailureType.RUNTIME_ERROR

    def test_a_node_stack_is_not_a_java_stack(self) -> None:
        """Node's ``TypeError: ...`` with ``at`` frames is left to the Node.js reader."""
        output = (
            "TypeError: Cannot read properties of undefined (reading 'x')\n"
            "    at main (/app/src/main.js:3:15)\n    at node:internal/main:1:1\n"
        )
        assert parse_java_trace(output) is None


@pytest.mark.skipif(shutil.which("javac") is None, reason="no javac on this machine")
def test_live_javac_run(tmp_path: Path) -> None:
    """Compile a broken file with the real javac and read what it prints."""
    source = tmp_path / "src" / "Greeter.java"
    source.parent.mkdir()
    source.write_text(
        "public class Greeter {\n    public static void main(String[] args) {\n"
        '        int n = "three";\n        System.out.println(greet(n));\n    }\n}\n',
        encoding="utf-8",
    )
    run = subprocess.run(
        ["javac", "-d", str(tmp_path / "out"), "src/Greeter.java"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    failure = FailureContext(
        task_id="t",
        subtask_id="s",
        attempt_number=1,
        command="javac -d out src/Greeter.java",
        exit_code=run.returncode,
        error_output=run.stdout + run.stderr,
    )
    findings = analyse(failure)
    assert findings.failure_type is FailureType.BUILD_ERROR, failure.error_output
    assert findings.facts[0].startswith("src/Greeter.java:3: error: incompatible types")
    assert any(
        f.startswith("src/Greeter.java:4: error: cannot find symbol") for f in findings.facts
    )
    assert findings.summary == "2 errors"


def test_access_denied_is_about_permissions_not_a_missing_file() -> None:
    """AccessDeniedException: the file is there and access is refused; don't create it."""
    found = parse_java_trace(
        'Exception in thread "main" java.nio.file.AccessDeniedException: /etc/app/secret.key\n'
        "\tat java.base/sun.nio.fs.UnixException.translateToIOException(UnixException.java:90)\n"
        "\tat com.acme.Keys.load(Keys.java:21)\n"
        "\tat com.acme.Main.main(Main.java:9)\n"
    )
    assert found is not None
    assert found.category is ReflectionCategory.MISSING_CONTEXT
    assert "Access was refused" in found.advice
    assert "not there" not in found.advice
    assert "com.acme.Keys.load(Keys.java:21)" in found.facts


_JUNITCORE = """JUnit version 4.13.2
..E.E.
Time: 0.21
There were 2 failures:
1) totalAppliesDiscount(com.acme.shop.CartTest)
java.lang.AssertionError: expected:<90> but was:<100>
\tat org.junit.Assert.fail(Assert.java:89)
\tat org.junit.Assert.assertEquals(Assert.java:633)
\tat com.acme.shop.CartTest.totalAppliesDiscount(CartTest.java:31)
\tat java.base/java.lang.reflect.Method.invoke(Method.java:569)
2) emptyCartHasNoTax(com.acme.shop.CartTest)
java.lang.Exception: Unexpected exception, expected<java.lang.IllegalStateException> but \
was<java.lang.ArithmeticException>
\tat org.junit.internal.runners.statements.ExpectException.evaluate(ExpectException.java:30)
\tat org.junit.runner.JUnitCore.main(JUnitCore.java:36)
Caused by: java.lang.ArithmeticException: / by zero
\tat com.acme.shop.Cart.tax(Cart.java:58)
\tat com.acme.shop.CartTest.emptyCartHasNoTax(CartTest.java:44)
\t... 26 more

FAILURES!!!
Tests run: 3,  Failures: 2

"""

_SUREFIRE_3 = """[INFO] Running com.acme.CalculatorTest
[ERROR] Tests run: 3, Failures: 1, Errors: 1, Skipped: 0, Time elapsed: 0.045 s <<< FAILURE! \
-- in com.acme.CalculatorTest
[ERROR] com.acme.CalculatorTest.addsNegatives -- Time elapsed: 0.010 s <<< FAILURE!
org.opentest4j.AssertionFailedError: expected: <-3> but was: <3>
\tat org.junit.jupiter.api.AssertEquals.assertEquals(AssertEquals.java:150)
\tat com.acme.CalculatorTest.addsNegatives(CalculatorTest.java:21)

[ERROR] com.acme.CalculatorTest.divides -- Time elapsed: 0.002 s <<< ERROR!
java.lang.ArithmeticException: / by zero
\tat com.acme.Calculator.divide(Calculator.java:12)
\tat com.acme.CalculatorTest.divides(CalculatorTest.java:27)

[INFO]
[INFO] Results:
[INFO]
[ERROR] Failures:
[ERROR]   CalculatorTest.addsNegatives:21 expected: <-3> but was: <3>
[ERROR] Errors:
[ERROR]   CalculatorTest.divides:27 » Arithmetic / by zero
[INFO]
[ERROR] Tests run: 3, Failures: 1, Errors: 1, Skipped: 0
[INFO]
[INFO] BUILD FAILURE
"""

_SUREFIRE_2 = """Running com.acme.ParserTest
Tests run: 2, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.05 sec <<< FAILURE! \
- in com.acme.ParserTest
parsesDates(com.acme.ParserTest)  Time elapsed: 0.01 sec  <<< FAILURE!
junit.framework.AssertionFailedError: expected:<2024> but was:<1970>
\tat com.acme.ParserTest.parsesDates(ParserTest.java:18)

Results :

Failed tests:
  ParserTest.parsesDates:18 expected:<2024> but was:<1970>

Tests run: 2, Failures: 1, Errors: 0, Skipped: 0

[INFO] BUILD FAILURE
"""


class TestJUnit:
    """JUnit's failing tests as its text runner and Maven Surefire print them."""

    def test_junitcore_tests_with_their_errors_and_frames(self) -> None:
        """Each ``N) test(Class)`` is quoted with its error, its frame and the code that threw."""
        found = parse_junit(_JUNITCORE)
        assert found is not None
        assert found.failure_type is FailureType.TEST_FAILURE
        assert found.tests == [
            "totalAppliesDiscount(com.acme.shop.CartTest)",
            "emptyCartHasNoTax(com.acme.shop.CartTest)",
        ]
        assert "expected:<90> but was:<100>" in found.facts[0]
        assert "CartTest.java:31" in " ".join(found.details)
        assert "com.acme.shop.Cart.tax(Cart.java:58)" in found.details
        assert "Caused by: java.lang.ArithmeticException: / by zero" in found.details
        assert found.summary == "Tests run: 3,  Failures: 2"

    def test_surefire_3_and_2_headers(self) -> None:
        """Surefire's ``Class.test -- Time elapsed`` and 2.x's ``test(Class)  Time elapsed``."""
        new = parse_junit(_SUREFIRE_3)
        old = parse_junit(_SUREFIRE_2)
        assert new is not None
        assert old is not None
        assert new.tests == [
            "com.acme.CalculatorTest.addsNegatives",
            "com.acme.CalculatorTest.divides",
        ]
        assert "com.acme.Calculator.divide(Calculator.java:12)" in new.details
        assert new.summary == "Tests run: 3, Failures: 1, Errors: 1, Skipped: 0"
        assert old.tests == ["parsesDates(com.acme.ParserTest)"]
        assert "expected:<2024> but was:<1970>" in old.facts[0]

    def test_a_junit_run_is_a_test_failure_not_a_crash(self) -> None:
        """The JVM trace reader does not take a JUnit report: its frames are per test."""
        failure = FailureContext(
            task_id="t",
            subtask_id="s",
            attempt_number=1,
            command="java -cp out:lib/* org.junit.runner.JUnitCore com.acme.shop.CartTest",
            exit_code=1,
            error_output=_JUNITCORE,
        )
        findings = analyse(failure)
        assert findings.tool == "junit"
        assert findings.failure_type is FailureType.TEST_FAILURE

    def test_other_output_is_not_junit(self) -> None:
        """A plain JVM exception, or a passing run, is not read as JUnit's failures."""
        trace = (
            'Exception in thread "main" java.lang.IllegalStateException: x\n\tat a.B.c(B.java:3)\n'
        )
        assert parse_junit(trace) is None
        assert parse_junit("JUnit version 4.13.2\n..\nTime: 0.1\n\nOK (2 tests)\n") is None


def test_maven_that_cannot_resolve_a_plugin_is_a_dependency_error() -> None:
    """Maven offline without the build's plugin: the artifact and the repository are quoted."""
    found = parse_maven(
        "[ERROR] [ERROR] Some problems were encountered while processing the POMs:\n"
        "[ERROR] Unresolveable build extension: Plugin org.example:fancy-plugin:1.2 or one of "
        "its dependencies could not be resolved: The following artifacts could not be resolved: "
        "org.example:fancy-plugin:jar:1.2: Cannot access central (https://repo.example/maven2) "
        "in offline mode and the artifact org.example:fancy-plugin:jar:1.2 has not been "
        "downloaded from it before. @ \n"
        "[ERROR] Unknown packaging: bundle @ line 7, column 16\n"
    )
    assert found is not None
    assert found.failure_type is FailureType.DEPENDENCY_ERROR
    assert found.facts == [
        "Plugin org.example:fancy-plugin:1.2 or one of its dependencies could not be resolved",
        "The following artifacts could not be resolved: org.example:fancy-plugin:jar:1.2",
        "Cannot access central (https://repo.example/maven2) in offline mode",
        "the artifact org.example:fancy-plugin:jar:1.2 has not been downloaded from it before",
        "Unknown packaging: bundle",
    ]
    assert parse_maven("[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 0\n") is None


def test_maven_names_every_dependency_it_could_not_resolve() -> None:
    """The list after ``The following artifacts could not be resolved:`` is quoted whole."""
    found = parse_maven(
        "[ERROR] Failed to execute goal on project shop: Could not resolve dependencies for "
        "project org.shop:shop:jar:0.3.1: The following artifacts could not be resolved: "
        "org.assertj:assertj-core:jar:3.4.0, com.h2database:h2:jar:1.4.200 (absent): Could not "
        "transfer artifact org.assertj:assertj-core:jar:3.4.0 from/to nexus (https://nexus.example/"
        "repo): Connection refused -> [Help 1]\n"
    )
    assert found is not None
    assert (
        "The following artifacts could not be resolved: org.assertj:assertj-core:jar:3.4.0, "
        "com.h2database:h2:jar:1.4.200" in found.facts
    )


def test_javac_errors_printed_by_maven_are_read_once_each() -> None:
    """``[ERROR] /p/Foo.java:[14,22] msg``: each error once (Maven repeats them), details kept."""
    found = parse_javac(
        "[ERROR] COMPILATION ERROR : \n"
        "[ERROR] /p/src/main/java/com/acme/Order.java:[14,22] cannot find symbol\n"
        "  symbol:   method totl()\n  location: class com.acme.Cart\n"
        "[INFO] 1 error\n[INFO] BUILD FAILURE\n"
        "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.11.0:"
        "compile (default-compile) on project shop: Compilation failure\n"
        "[ERROR] /p/src/main/java/com/acme/Order.java:[14,22] cannot find symbol\n"
        "[ERROR]   symbol:   method totl()\n[ERROR]   location: class com.acme.Cart\n"
    )
    assert found is not None
    assert found.failure_type is FailureType.BUILD_ERROR
    assert found.facts == [
        (
            "/p/src/main/java/com/acme/Order.java:[14,22] cannot find symbol "
            "(symbol:   method totl(); location: class com.acme.Cart)"
        )
    ]
