"""The Nim reader: compile errors (the code's or a test file's) and a test program that ran.

The outputs below are made up in nim's shapes; the live test runs this machine's ``nim`` when
it has one.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ..conftest import read_as  # noqa: TID252 -- tests/ is no package; importlib mode resolves it


def _read(output: str, command: str = "nim c -r tests/test_cart.nim") -> tuple[str, str, str]:
    return read_as(output, command)


_HINTS = "Hint: used config file '/etc/nim/nim.cfg' [Conf]\n.....\n"
_BUILT = (
    "CC: cart.nim\nHint:  [Link]\n"
    "40211 lines; 3.1s; 61MiB peakmem; proj: /app/tests/test_cart.nim; out: /app/tests/test_cart "
    "[SuccessX]\nHint: /app/tests/test_cart  [Exec]\n"
)
_EXEC = "Error: execution of an external program failed: '/app/tests/test_cart '\n"

_RAISED = (
    _HINTS + _BUILT + "/app/tests/test_cart.nim(21) test_cart\n/app/src/cart.nim(88) total\n"
    "/usr/lib/nim/lib/system/fatal.nim(54) sysFatal\n"
    "Error: unhandled exception: index 3 not in 0 .. 2 [IndexDefect]\n" + _EXEC
)
_ASSERTED = (
    "/app/tests/test_cart.nim(9) test_cart\n"
    "/usr/lib/nim/lib/system/assertions.nim(38) failedAssertImpl\n"
    "Error: unhandled exception: /app/tests/test_cart.nim(9, 12) `total(c) == 90`  "
    "[AssertionDefect]\n" + _EXEC
)
_UNITTEST = (
    _BUILT + "\n[Suite] cart\n    /app/tests/test_cart.nim(14, 11): Check failed: total(c) == 90\n"
    "    total(c) was 100\n  [FAILED] applies a coupon\n" + _EXEC
)
_MISMATCH = (
    "/app/src/tally.nim(10, 18) Error: type mismatch: got <int>\nbut expected one of:\n"
    "proc toRatio(c: float): float\n  first type mismatch at position: 1\n"
    "  required type for c: float\n  but expression 'count' is of type: int\n"
)
_NO_PACKAGE = "/app/src/api.nim(2, 8) Error: cannot open file: karax\n"
_CODE_DOES_NOT_COMPILE = _HINTS + "/app/src/cart.nim(31, 9) Error: undeclared identifier: 'qty'\n"
_TEST_DOES_NOT_COMPILE = (
    _HINTS
    + "/app/tests/test_cart.nim(5, 20) Error: type mismatch: got <string> but expected 'int'\n"
)


@pytest.mark.parametrize(
    ("output", "kind", "facts"),
    [
        (
            _RAISED,
            "test_failure",
            [
                "Error: unhandled exception: index 3 not in 0 .. 2 [IndexDefect]",
                "/app/src/cart.nim(88) total",
                "/app/tests/test_cart.nim(21) test_cart",
            ],
        ),
        (
            _ASSERTED,
            "test_failure",
            ["/app/tests/test_cart.nim(9, 12) `total(c) == 90`", "/app/tests/test_cart.nim(9)"],
        ),
        (
            _UNITTEST,
            "test_failure",
            ["/app/tests/test_cart.nim(14, 11): Check failed: total(c) == 90", "total(c) was 100"],
        ),
        (_MISMATCH, "build_error", ["src/tally.nim(10, 18)", "but expression 'count' is of type"]),
        (_NO_PACKAGE, "dependency_error", ["cannot open file: karax", "nimble install"]),
        (
            _CODE_DOES_NOT_COMPILE,
            "build_error",
            ["/app/src/cart.nim(31, 9) Error: undeclared identifier: 'qty'"],
        ),
        (
            _TEST_DOES_NOT_COMPILE,
            "test_failure",
            ["/app/tests/test_cart.nim(5, 20) Error: type mismatch"],
        ),
    ],
    ids=[
        "raised",
        "doassert-without-hints",
        "unittest-check",
        "code-error",
        "test-file-error",
        "mismatch-details",
        "package-missing",
    ],
)
def test_nim_output_is_read(output: str, kind: str, facts: list[str]) -> None:
    """A program that ran is a test failure; a compile error is the test file's or the code's."""
    tool, failure_type, text = _read(output)
    assert (tool, failure_type) == ("nim", kind)
    assert [fact for fact in facts if fact not in text] == []


def test_a_program_that_is_no_test_is_a_runtime_error() -> None:
    """``nim c -r src/app.nim`` that dies: no test file in its frames or its name."""
    output = _RAISED.replace("/app/tests/test_cart.nim(21) test_cart\n", "").replace(
        "tests/test_cart", "src/app"
    )
    assert _read(output, "nim c -r src/app.nim")[1] == "runtime_error"


@pytest.mark.skipif(shutil.which("nim") is None, reason="no nim on this machine")
def test_live_nim_test_program(tmp_path: Path) -> None:
    """Build and run a test program whose code is wrong, and read what nim prints."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_add.nim").write_text(
        "proc add(a, b: int): int = a - b\n\ndoAssert add(2, 3) == 5\n", encoding="utf-8"
    )
    command = "nim c -r --hints:off tests/test_add.nim"
    run = subprocess.run(
        command.split(), check=False, cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    tool, kind, text = _read(run.stdout + run.stderr, command)
    assert (tool, kind) == ("nim", "test_failure"), run.stdout + run.stderr
    assert "`add(2, 3) == 5`" in text
