"""The Erlang readers: rebar3's compile errors and EUnit's failures, under rebar3 and alone.

The outputs below are made up in rebar3's and EUnit's shapes; the live test compiles and runs
an EUnit test with this machine's ``erlc`` and ``erl`` when it has them.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ..conftest import read_as  # noqa: TID252 -- tests/ is no package; importlib mode resolves it


def _read(output: str, command: str = "rebar3 eunit") -> tuple[str, str, str]:
    return read_as(output, command)


_COMPILE = """===> Verifying dependencies...
===> Analyzing applications...
===> Compiling shop
===> Compiling src/cart.erl failed
src/cart.erl:40:12: function totl/1 undefined

src/cart.erl:12:1: Warning: function unused/0 is unused

"""
_TEST_COMPILE = _COMPILE.replace("src/cart.erl", "test/cart_tests.erl")
_REBAR3 = """....F..
Failures:

  1) cart_tests:total_test/0: totals the lines
     Failure/Error: ?assertEqual(90, cart:total(Lines))
       expected: 90
            got: 100
     %% eunit_proc.erl:570:in `eunit_proc:run_group/2`
     Output:
  2) cart_tests:-parse_test_/0-fun-1-/0:22: parses quantities
     Failure/Error: {error,badarg,
                        [{cart,parse_qty,1,
                             [{file,"/app/src/cart.erl"},{line,71}]},
                         {eunit_test,run_testfun,1,[{file,"eunit_test.erl"},{line,71}]}]}
     Output:

Finished in 0.21 seconds
7 tests, 2 failures
===> Error running tests
"""
_ALONE = """======================== EUnit ========================
cart: total_test (module 'cart')...*failed*
in function cart:total_test/0 (cart.erl, line 30)
in call from eunit_test:run_testfun/1 (eunit_test.erl, line 71)
**error:{assertEqual,[{module,cart},
              {line,30},
              {expression,"total ( Lines )"},
              {expected,90},
              {value,100}]}
  output:<<"">>

=======================================================
  Failed: 1.  Skipped: 0.  Passed: 4.
"""


@pytest.mark.parametrize(
    ("output", "reading", "facts"),
    [
        (_COMPILE, ("rebar3", "build_error"), ["src/cart.erl:40:12: function totl/1 undefined"]),
        (_TEST_COMPILE, ("rebar3", "test_failure"), ["test/cart_tests.erl:40:12: function"]),
        (
            _REBAR3,
            ("EUnit", "test_failure"),
            [
                "cart_tests:total_test/0: totals the lines",
                "expected: 90",
                "got: 100",
                "Failure/Error: {error,badarg,",
                "{cart,parse_qty,1,",
                "7 tests, 2 failures",
            ],
        ),
        (
            _ALONE,
            ("EUnit", "test_failure"),
            [
                "cart: total_test (module 'cart')",
                "in function cart:total_test/0 (cart.erl, line 30)",
                "{expected,90}, {value,100}",
                "Failed: 1.  Skipped: 0.  Passed: 4.",
            ],
        ),
    ],
    ids=["source-does-not-compile", "test-does-not-compile", "rebar3-eunit", "eunit-alone"],
)
def test_erlang_output_is_read(output: str, reading: tuple[str, str], facts: list[str]) -> None:
    """Each shape gets its reader and type, with its facts quoted verbatim."""
    tool, kind, text = _read(output)
    assert (tool, kind) == reading
    assert [fact for fact in facts if fact not in text] == []
    assert "Warning:" not in text


@pytest.mark.skipif(shutil.which("erlc") is None, reason="no erlang on this machine")
def test_live_eunit_run(tmp_path: Path) -> None:
    """Compile and run an EUnit test whose code is wrong, and read what EUnit prints."""
    (tmp_path / "calc.erl").write_text(
        '-module(calc).\n-export([add/2]).\n-include_lib("eunit/include/eunit.hrl").\n'
        "add(A, B) -> A - B.\nadd_test() -> ?assertEqual(5, add(2, 3)).\n",
        encoding="utf-8",
    )
    subprocess.run(["erlc", "calc.erl"], check=True, cwd=tmp_path, timeout=120)
    command = "erl -noshell -pa . -eval eunit:test(calc) -s init stop"
    run = subprocess.run(
        command.split(), check=False, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    tool, kind, text = _read(run.stdout + run.stderr, command)
    assert (tool, kind) == ("EUnit", "test_failure"), run.stdout + run.stderr
    assert "{expected,5}" in text
    assert "{value,-1}" in text


def test_exunits_numbered_failures_are_not_eunits() -> None:
    """ExUnit counts `N tests, M failures` and numbers its failures too, with no rebar3 lines."""
    exunit = (
        "  1) test totals (Shop.CartTest)\n     test/cart_test.exs:9\n"
        "     Assertion with == failed\n     left:  1\n     right: 2\n\n"
        "Finished in 0.04 seconds (0.00s async, 0.04s sync)\n3 tests, 1 failure\n"
    )
    assert _read(exunit, "mix test")[0] != "EUnit"
