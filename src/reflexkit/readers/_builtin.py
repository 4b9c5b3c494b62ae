"""The built-in readers, one registration each (see ``registry.Reader`` for the bands).

Adding a reader is one new module with its read function plus one ``Reader(...)`` line here,
in the band of its kind of tool.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from reflexkit._pattern import Pattern
from reflexkit.models import FailureContext
from reflexkit.readers._agent import parse_agent
from reflexkit.readers._coverage import parse_coverage_gate
from reflexkit.readers._cxx import (
    parse_catch2,
    parse_check_suite,
    parse_cmake,
    parse_criterion,
    parse_ctest,
    parse_doctest_cpp,
    parse_gtest,
    parse_meson_test,
    parse_unity,
)
from reflexkit.readers._findings import Findings
from reflexkit.readers._go import (
    parse_go_command,
    parse_go_diagnostics,
    parse_go_panic,
    parse_go_test,
)
from reflexkit.readers._java import parse_java_trace, parse_javac, parse_junit, parse_maven
from reflexkit.readers._javascript import (
    parse_eslint,
    parse_jest,
    parse_node,
    parse_node_test,
    parse_tsc,
)
from reflexkit.readers._js_runners import parse_mocha, parse_vitest
from reflexkit.readers._native import (
    parse_cargo_test,
    parse_crash,
    parse_gcc,
    parse_make,
    parse_rust_panic,
    parse_rustc,
)
from reflexkit.readers._pip import parse_dependency_setup, parse_pip
from reflexkit.readers._python_checkers import parse_mypy, parse_pyflakes_style, parse_pyright
from reflexkit.readers._python_doctest import parse_doctest
from reflexkit.readers._python_faulthandler import parse_faulthandler
from reflexkit.readers._python_pytest import parse_pytest
from reflexkit.readers._python_traceback import parse_traceback
from reflexkit.readers._python_unittest import parse_unittest
from reflexkit.readers._registry import Reader, ReadFunction
from reflexkit.readers._reports import parse_tap
from reflexkit.readers._shell import parse_diff_check, parse_git, parse_shell

__all__ = ["BUILTIN_READERS"]


def _later(module: str, name: str) -> ReadFunction:
    """A reader whose module is imported the first time an output carries one of its markers.

    The readers of runners most projects never use cost no start-up time (``reflect`` and the
    hooks import every built-in reader's registration).
    """

    def read(text: str, _failure: FailureContext) -> Findings | None:
        parse: Callable[[str], Findings | None] = getattr(
            importlib.import_module(f"reflexkit.readers.{module}"), name
        )
        return parse(text)

    return read


_CR_SCRIPT = Pattern(r"\\r['\u2019:]|\$'\\r'|\r(?=['\u2019:])")

BUILTIN_READERS: tuple[Reader, ...] = (
    # 1000: the coding agent's own failure (its log is no tool's output)
    Reader("agent", parse_agent, (), 1000),
    # 900: wrappers whose output holds other formats
    Reader(
        "git",
        lambda t, f: parse_git(t, f.command),
        (
            "CONFLICT (",
            "error: ",
            "fatal: ",
            "[rejected]",
            " added to commit",
            "nothing to commit",
            "You are not currently on a branch.",
            "There is no tracking information",
        ),
        950,
    ),
    Reader(
        "shell-crlf",
        lambda t, _f: parse_shell(t, None) if _CR_SCRIPT.search(t) else None,
        ("\\r", "\r"),
        940,
    ),
    # 800: test runners (their output holds tracebacks and compiler errors); a run whose
    # tests all passed but whose coverage gate failed first
    Reader(
        "coverage-gate",
        lambda t, _f: parse_coverage_gate(t),
        ("coverage threshold", "Required test coverage", "Coverage failure", "Coverage for "),
        870,
    ),
    Reader(
        "unittest", lambda t, f: parse_unittest(t, command=f.command), ("\nRan ", "FAILED ("), 860
    ),
    Reader(
        "pytest",
        lambda t, f: parse_pytest(t, f.command),
        (
            "::",
            "while loading conftest",
            "pytest",
            "short test summary",
            " passed",
            " failed",
            " error",
            "ERROR: ",
            "no tests",
        ),
        850,
    ),
    Reader("doctest", lambda t, _f: parse_doctest(t), ("Failed example:",), 845),
    Reader("jest", lambda t, _f: parse_jest(t), ("Tests:", "● "), 840),
    Reader("vitest", lambda t, _f: parse_vitest(t), (" FAIL  ",), 836),
    Reader("mocha", lambda t, _f: parse_mocha(t), (" failing", "Exception during run: "), 834),
    Reader(
        "node-test",
        lambda t, _f: parse_node_test(t),
        ("# fail ", "\u2139 fail ", "\nFailed tests:\n"),
        830,
    ),
    Reader(
        "rspec",
        _later("_rspec", "parse_rspec"),
        (" examples, ", " example, ", "\nrspec ", "\ncrystal spec "),
        828,
    ),
    Reader("minitest", _later("_minitest", "parse_minitest"), (" runs, ",), 827),
    Reader("test-unit", _later("_test_unit", "parse_test_unit"), (" assertions, ",), 827),
    Reader("prove", _later("_perl", "parse_prove"), ("Result: FAIL", "# Looks like "), 827),
    Reader("clojure-test", _later("_clojure", "parse_clojure_test"), (" failures, ",), 826),
    Reader("nim", _later("_nim", "parse_nim"), (".nim(",), 829),
    Reader("rebar3", _later("_erlang", "parse_rebar3_compile"), ("===> Compiling ",), 831),
    Reader(
        "elixir-compile",
        _later("_elixir", "parse_elixir_compile"),
        ("== Compilation error in file ",),
        832,
    ),
    Reader("eunit", _later("_erlang", "parse_eunit"), (" failure", "*failed*"), 824),
    # any TAP producer (tape, node-tap, busted, prove, bats) after node:test's own reader
    Reader("tap", lambda t, _f: parse_tap(t), ("not ok ",), 825),
    Reader("cargo-test", lambda t, _f: parse_cargo_test(t), ("test result: ", "... FAILED"), 820),
    Reader(
        "go-test",
        lambda t, f: parse_go_test(t, f.command),
        ("--- FAIL: ", "FAIL\t", "panic: test timed out", "=== FAIL: "),
        815,
    ),
    Reader(
        "ctest",
        lambda t, _f: parse_ctest(t),
        ("tests failed out of", "No tests were found"),
        812,
    ),
    Reader("catch2", lambda t, _f: parse_catch2(t), ("test cases:",), 811),
    Reader("meson-test", lambda t, _f: parse_meson_test(t), ("Fail: ", "Timeout: "), 811),
    Reader("doctest-cpp", lambda t, _f: parse_doctest_cpp(t), ("[doctest] test cases:",), 811),
    Reader("criterion", lambda t, _f: parse_criterion(t), ("[====] Synthesis:",), 811),
    Reader("check", lambda t, _f: parse_check_suite(t), ("%: Checks: ",), 806),
    Reader("unity", lambda t, _f: parse_unity(t), (" Ignored",), 806),
    Reader("googletest", lambda t, _f: parse_gtest(t), ("[  FAILED  ]",), 811),
    Reader("junit", lambda t, _f: parse_junit(t), ("FAILURES!!!", "<<< ", "Tests run: "), 810),
    Reader(
        "junit-console", _later("_jvm_runners", "parse_junit_console"), (" tests failed ",), 809
    ),
    Reader(
        "gradle",
        _later("_jvm_runners", "parse_gradle"),
        ("> Task :", "* What went wrong:", " tests completed, "),
        808,
    ),
    # 700: type checkers
    Reader("mypy", lambda t, _f: parse_mypy(t), (": error: ",), 760),
    Reader("pyright", lambda t, _f: parse_pyright(t), (" - error: ",), 750),
    Reader("tsc", lambda t, _f: parse_tsc(t), ("error TS",), 740),
    # 600: linters and formatters
    Reader(
        "ruff",
        lambda t, f: parse_pyflakes_style(t, f.command),
        ("-->", ".py:", "eformat"),
        660,
    ),
    Reader(
        "eslint",
        lambda t, _f: parse_eslint(t),
        ("  error  ", "  warning  ", "[Error/", "[Warning/", ", Error - ", ", Warning - "),
        650,
    ),
    # 500: compilers and linkers
    Reader("cmake", lambda t, _f: parse_cmake(t), ("CMake Error",), 570),
    Reader("crystal", _later("_crystal", "parse_crystal"), (".cr:",), 565),
    Reader("rustc", lambda t, f: parse_rustc(t, f.command), ("error[", "error: "), 560),
    Reader(
        "gcc",
        lambda t, _f: parse_gcc(t),
        (
            ": error: ",
            ": fatal error: ",
            "undefined reference",
            "cannot find -l",
            "multiple definition",
        ),
        550,
    ),
    # go vet prints the compiler's format: one reader for both, the messages tell them apart
    Reader("go", lambda t, f: parse_go_diagnostics(t, f.command), (".go:",), 545),
    Reader(
        "go-command",
        lambda t, f: parse_go_command(t, f.command),
        ("pattern ", "directory not found", "no Go files", "go.mod file not found", "main module"),
        544,
    ),
    Reader("javac", lambda t, _f: parse_javac(t), (".java:", "error: "), 540),
    # 400: installers
    Reader("maven", lambda t, _f: parse_maven(t), ("[ERROR] ",), 455),
    Reader("pip", lambda t, f: parse_pip(t, f.command), ("ERROR: ", "pip", "error: "), 450),
    Reader(
        "dependencies",
        lambda t, f: parse_dependency_setup(t, f.command),
        (
            "Hex",
            "dependenc",
            "vendor/autoload",
            "gem",
            "PHPUnit\\",
            "resolve",
            "getaddrinfo",
            "Name or service",
            "unreachable",
        ),
        445,
    ),
    # 300: runtime errors and stack traces
    Reader(
        "python",
        lambda t, _f: parse_traceback(t),
        (
            "Traceback (most recent call last)",
            "SyntaxError: ",
            "IndentationError: ",
            "TabError: ",
        ),
        360,
    ),
    Reader(
        "python-faulthandler",
        lambda t, _f: parse_faulthandler(t),
        ("Fatal Python error: ",),
        370,
    ),
    Reader("node", lambda t, _f: parse_node(t), ("    at ",), 350),
    Reader(
        "java",
        lambda t, _f: parse_java_trace(t),
        (
            "\tat ",
            "    at ",
            "Error: Could not find or load",
            "Error: Unable to access",
            "Error: Main",
        ),
        355,
    ),
    Reader(
        "clojure",
        _later("_clojure", "parse_clojure_error"),
        ("Execution error", "Syntax error"),
        356,
    ),
    Reader("go-panic", lambda t, _f: parse_go_panic(t), ("goroutine ",), 345),
    Reader("rust-panic", lambda t, _f: parse_rust_panic(t), ("panicked at",), 340),
    # 200: build tools; a check comparing files (git diff --exit-code) after them
    Reader("make", lambda t, _f: parse_make(t), ("*** ",), 250),
    Reader("diff-check", lambda t, f: parse_diff_check(t, f.command), ("+++ ",), 240),
    # 100: exit codes alone
    Reader("crash", lambda t, f: parse_crash(t, f.exit_code), (), 150),
    Reader("shell", lambda t, f: parse_shell(t, f.exit_code), (), 100),
)
