"""The JUnit Platform console launcher's and Gradle's readers.

The outputs below are made up in each tool's shape (Gradle cannot reach its repositories
here, so there is no live run of it); the live test runs the console launcher Debian ships
when this machine has it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from reflexkit.models import FailureContext
from reflexkit.readers import analyse

from ..conftest import failure_of, quoted  # noqa: TID252 -- tests/ is no package; importlib mode resolves it

_CONSOLE_JAR = Path("/usr/share/java/junit-platform-console-standalone.jar")
_JUPITER = Path("/usr/share/java/junit-jupiter-api.jar")


def _read(output: str, command: str = "gradle test") -> tuple[str, str, str, str]:
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


_CONSOLE = """
╷
├─ JUnit Jupiter ✔
│  └─ PriceTest ✔
│     └─ roundsHalfUp() ✘ expected: <10.5> but was: <10.4>
└─ JUnit Vintage ✔

Failures (1):
  JUnit Jupiter:PriceTest:roundsHalfUp()
    MethodSource [className = 'shop.PriceTest', methodName = 'roundsHalfUp']
    => org.opentest4j.AssertionFailedError: expected: <10.5> but was: <10.4>
       org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:151)
       org.junit.jupiter.api.Assertions.assertEquals(Assertions.java:1142)
       shop.PriceTest.roundsHalfUp(PriceTest.java:21)
       java.base/java.lang.reflect.Method.invoke(Method.java:568)

Test run finished after 120 ms
[         3 tests found           ]
[         2 tests successful      ]
[         1 tests failed          ]
"""

_GRADLE_SHORT = """> Task :compileJava
> Task :test FAILED

PriceTest > roundsHalfUp() FAILED
    org.opentest4j.AssertionFailedError at PriceTest.java:21

3 tests completed, 1 failed

FAILURE: Build failed with an exception.

* What went wrong:
Execution failed for task ':test'.
> There were failing tests. See the report at: file:///app/build/reports/tests/test/index.html
"""

_GRADLE_FULL = """> Task :test FAILED

CartTest > totalsLines() FAILED
    org.opentest4j.AssertionFailedError: expected: <1250> but was: <1205>
        at app//org.junit.jupiter.api.Assertions.assertEquals(Assertions.java:1142)
        at app//shop.CartTest.totalsLines(CartTest.java:17)

2 tests completed, 1 failed
"""

_GRADLE_OFFLINE = """> Task :compileTestJava FAILED

FAILURE: Build failed with an exception.

* What went wrong:
Execution failed for task ':compileTestJava'.
> Could not resolve all files for configuration ':testCompileClasspath'.
   > Could not resolve org.junit.jupiter:junit-jupiter:5.10.0.
      > No cached version of org.junit.jupiter:junit-jupiter:5.10.0 available for offline mode.
"""

_GRADLE_KOTLIN = """> Task :compileKotlin FAILED
e: file:///app/src/main/kotlin/shop/Cart.kt:12:9 Unresolved reference: totl

FAILURE: Build failed with an exception.

* What went wrong:
Execution failed for task ':compileKotlin'.
> Compilation error. See log for more details
"""


@pytest.mark.parametrize(
    ("output", "reading", "facts"),
    [
        (
            _CONSOLE,
            ("JUnit", "test_failure", "root_cause"),
            [
                "PriceTest:roundsHalfUp()",
                "expected: <10.5> but was: <10.4>",
                "shop.PriceTest.roundsHalfUp(PriceTest.java:21)",
                "1 tests failed",
            ],
        ),
        (
            _GRADLE_SHORT,
            ("Gradle", "test_failure", "root_cause"),
            [
                "PriceTest > roundsHalfUp()",
                "org.opentest4j.AssertionFailedError at PriceTest.java:21",
                "3 tests completed, 1 failed",
                "gradle test --tests 'PriceTest'",
            ],
        ),
        (
            _GRADLE_FULL,
            ("Gradle", "test_failure", "root_cause"),
            [
                "CartTest > totalsLines()",
                "expected: <1250> but was: <1205>",
                "app//shop.CartTest.totalsLines(CartTest.java:17)",
            ],
        ),
        (
            _GRADLE_OFFLINE,
            ("Gradle", "dependency_error", "missing_context"),
            ["No cached version of org.junit.jupiter:junit-jupiter:5.10.0"],
        ),
        (
            _GRADLE_KOTLIN,
            ("Gradle", "build_error", "root_cause"),
            ["e: file:///app/src/main/kotlin/shop/Cart.kt:12:9 Unresolved reference: totl"],
        ),
    ],
    ids=["console-launcher", "gradle-short", "gradle-full", "gradle-offline", "gradle-kotlin"],
)
def test_jvm_runner_output_is_read(
    output: str, reading: tuple[str, str, str], facts: list[str]
) -> None:
    """Each shape gets its reader, type and category, with its facts quoted verbatim."""
    tool, kind, category, text = _read(output)
    assert (tool, kind, category) == reading
    assert [fact for fact in facts if fact not in text] == []


def test_an_arrow_line_alone_is_not_gradle() -> None:
    """``a > b FAILED`` without Gradle's task, count or report is no Gradle output."""
    assert _read("suite > case FAILED\n")[0] != "Gradle"


@pytest.mark.skipif(
    shutil.which("javac") is None or not _CONSOLE_JAR.exists() or not _JUPITER.exists(),
    reason="no javac or JUnit console launcher on this machine",
)
def test_live_console_launcher_run(tmp_path: Path) -> None:
    """Compile a JUnit 5 test whose code is wrong and run the console launcher on it."""
    (tmp_path / "AddTest.java").write_text(
        "import org.junit.jupiter.api.Test;\n"
        "import static org.junit.jupiter.api.Assertions.assertEquals;\n"
        "class AddTest {\n  static int add(int a, int b) { return a - b; }\n"
        "  @Test void adds() { assertEquals(5, add(2, 3)); }\n}\n",
        encoding="utf-8",
    )
    subprocess.run(
        ["javac", "-cp", str(_JUPITER), "-d", "out", "AddTest.java"],
        check=True,
        cwd=tmp_path,
        timeout=300,
    )
    command = f"java -jar {_CONSOLE_JAR} -cp out --select-class AddTest --disable-banner"
    run = subprocess.run(
        command.split(), check=False, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    tool, kind, _category, text = _read(run.stdout + run.stderr, command)
    assert (tool, kind) == ("JUnit", "test_failure"), run.stdout + run.stderr
    assert "adds()" in text
    assert "AddTest.java:5" in text


@pytest.mark.parametrize("task", [":test", ":app:integrationTest"])
def test_gradle_failing_tests_without_per_test_lines_are_a_test_failure(task: str) -> None:
    """With ``-q`` or test logging off Gradle names no test, yet tests failed: no build error."""
    output = (
        "\nFAILURE: Build failed with an exception.\n\n* What went wrong:\n"
        f"Execution failed for task '{task}'.\n"
        "> There were failing tests. See the report at: file:///w/build/reports/tests/index.html\n"
    )
    findings = analyse(failure_of("./gradlew -q check", output))
    assert (findings.tool, findings.failure_type.value) == ("Gradle", "test_failure")
