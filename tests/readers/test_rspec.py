"""The RSpec reader: numbered failures, values, errors, places, load errors, a cut long run.

The outputs below are made up in RSpec's shapes (not copied from a corpus item); the live test
runs the ``rspec`` of this machine when it has one.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from reflexkit.models import FailureContext, FailureType, ReflectionCategory
from reflexkit.readers import analyse

from ..conftest import quoted  # noqa: TID252 -- tests/ is no package; importlib mode resolves it


def _read(output: str, command: str = "bundle exec rspec") -> tuple[str, str, str, str]:
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


_VALUES = """
Cart
  totals the lines (FAILED - 1)
  applies a coupon

Pending: (Failures listed here are expected and do not affect your suite's status)

  1) Cart rounds half cents
     # Not yet implemented
     # ./spec/cart_spec.rb:30

Failures:

  1) Cart totals the lines
     Failure/Error: expect(cart.total).to eq(1250)

       expected: 1250
            got: 1205

       (compared using ==)
     # ./spec/cart_spec.rb:12:in `block (2 levels) in <top (required)>'

Finished in 0.01 seconds (files took 0.1 seconds to load)
3 examples, 1 failure, 1 pending

Failed examples:

rspec ./spec/cart_spec.rb:10 # Cart totals the lines
"""

_ERROR = """
Failures:

  1) Ledger#post books the entry
     Failure/Error: Money.new(amount)

     NoMethodError:
       undefined method `cents' for nil:NilClass
     # ./lib/ledger/money.rb:44:in `initialize'
     # ./spec/ledger_spec.rb:9:in `block (3 levels) in <top (required)>'

  2) Ledger#post keeps the balance
     Failure/Error: Money.new(amount)

     NoMethodError:
       undefined method `cents' for nil:NilClass
     # ./lib/ledger/money.rb:44:in `initialize'

Finished in 0.02 seconds (files took 0.2 seconds to load)
2 examples, 2 failures
"""

_MISSING_GEM = """
An error occurred while loading spec_helper. - Did you mean?
                    rspec ./spec/spec_helper.rb

Failure/Error: require "webmock/rspec"

LoadError:
  cannot load such file -- webmock/rspec
# ./spec/support/http.rb:3:in `<top (required)>'
No examples found.

Finished in 0.00005 seconds (files took 0.3 seconds to load)
0 examples, 0 failures, 1 error occurred outside of examples
"""

_SYNTAX = """
An error occurred while loading ./spec/parser_spec.rb.
Failure/Error: require_relative "../lib/parser"

SyntaxError:
  /app/lib/parser.rb:18: syntax error, unexpected end-of-input, expecting `end'
# ./spec/parser_spec.rb:1:in `<top (required)>'
No examples found.

Finished in 0.00004 seconds (files took 0.1 seconds to load)
0 examples, 0 failures, 1 error occurred outside of examples
"""

_CRYSTAL_SPEC = """
Failures:

  1) Cart totals the lines
     Failure/Error: cart.total.should eq(1250)

       Expected: 1250
            got: 1205

     # spec/cart_spec.cr:12

  2) Markdown renders emphasis
*a*

       Expected: "<p><em>a</em></p>"
            got: "<p>*a*</p>"

     # fixtures/spec.txt:40

Finished in 2.1 milliseconds
9 examples, 2 failures, 0 errors, 0 pending

Failed examples:

crystal spec spec/cart_spec.cr:10 # Cart totals the lines
crystal spec fixtures/spec.txt:40 # Markdown renders emphasis
"""

_CUT_TAIL = """
rspec ./spec/units_spec.rb[1:1:7] # Units converts feet => metres
rspec ./spec/units_spec.rb[1:1:8] # Units converts miles => km

Randomized with seed 4242
"""


@pytest.mark.parametrize(
    ("output", "kind", "category", "facts"),
    [
        (
            _VALUES,
            "test_failure",
            "root_cause",
            [
                "Cart totals the lines",
                "expected: 1250",
                "got: 1205",
                "./spec/cart_spec.rb:12",
                "3 examples, 1 failure, 1 pending",
                "rspec ./spec/cart_spec.rb:10",
            ],
        ),
        (
            _ERROR,
            "test_failure",
            "root_cause",
            [
                "Ledger#post books the entry",
                "NoMethodError: undefined method `cents' for nil",
                "./lib/ledger/money.rb:44",
                "Ledger#post keeps the balance (the same error)",
            ],
        ),
        (
            _MISSING_GEM,
            "dependency_error",
            "missing_context",
            [
                "An error occurred while loading spec_helper.",
                "cannot load such file -- webmock",
                "./spec/support/http.rb:3",
                "bundle install",
            ],
        ),
        (
            _SYNTAX,
            "test_failure",
            "root_cause",
            [
                "An error occurred while loading ./spec/parser_spec.rb.",
                "/app/lib/parser.rb:18: syntax error",
            ],
        ),
        (_CUT_TAIL, "test_failure", "root_cause", ["Units converts feet => metres"]),
        (
            _CRYSTAL_SPEC,
            "test_failure",
            "root_cause",
            [
                "Cart totals the lines",
                "Expected: 1250",
                "got: 1205",
                "# spec/cart_spec.cr:12",
                "Markdown renders emphasis",
                'got: "<p>*a*</p>"',
                "# fixtures/spec.txt:40",
                "9 examples, 2 failures, 0 errors, 0 pending",
                "crystal spec spec/cart_spec.cr:10",
            ],
        ),
    ],
    ids=["values", "error", "missing-gem", "syntax-error", "cut-to-its-list", "crystal-spec"],
)
def test_rspec_output_is_read(output: str, kind: str, category: str, facts: list[str]) -> None:
    """Each shape gets its type, its category and its facts quoted verbatim."""
    tool, failure_type, category_read, text = _read(output)
    assert tool == ("crystal spec" if "crystal spec" in output else "RSpec")
    assert (failure_type, category_read) == (kind, category)
    assert [fact for fact in facts if fact not in text] == []


def test_pending_examples_are_not_failures() -> None:
    """``Pending:`` numbers its examples too; only the one under ``Failures:`` is quoted."""
    _tool, _kind, _category, text = _read(_VALUES)
    assert "rounds half cents" not in text


def test_another_runners_count_is_not_claimed() -> None:
    """Hspec prints `N examples, M failures` and numbered failures too, without RSpec's lines."""
    hspec = (
        "Failures:\n\n  test/CartSpec.hs:12:5: \n  1) Cart.total adds the lines\n"
        '       expected: 7.0\n        but got: 8.0\n\n  To rerun use: --match "/Cart/"\n\n'
        "3 examples, 1 failure\n"
    )
    assert _read(hspec, "cabal test")[0] != "RSpec"


def test_a_count_without_failures_is_not_claimed() -> None:
    """A passing run's count is no failure of RSpec's."""
    assert _read("4 examples, 0 failures\n")[0] != "RSpec"


@pytest.mark.skipif(shutil.which("rspec") is None, reason="no rspec on this machine")
def test_live_rspec_run(tmp_path: Path) -> None:
    """Run the real ``rspec`` on a spec whose code is wrong and read what it prints."""
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "calc_spec.rb").write_text(
        "def add(a, b) = a - b\n\n"
        "RSpec.describe 'add' do\n  it 'adds' do\n    expect(add(2, 3)).to eq(5)\n  end\nend\n",
        encoding="utf-8",
    )
    run = subprocess.run(
        ["rspec", "--no-color"],
        check=False,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    findings = analyse(
        FailureContext(
            task_id="t",
            subtask_id="s",
            attempt_number=1,
            command="rspec",
            exit_code=run.returncode,
            error_output=run.stdout + run.stderr,
        )
    )
    assert findings.failure_type is FailureType.TEST_FAILURE, run.stdout
    assert findings.category is ReflectionCategory.ROOT_CAUSE
    text = quoted(findings)
    assert "add adds" in text
    assert "expected: 5" in text
    assert "./spec/calc_spec.rb:5" in text
