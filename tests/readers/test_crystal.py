"""The Crystal reader: the compiler's last frame and error, the code's or a spec file's.

``crystal spec``'s failures are RSpec's shape (tests/readers/test_rspec.py). The outputs below
are made up in the compiler's shape.
"""

from __future__ import annotations

import pytest

from reflexkit.models import FailureContext
from reflexkit.readers import analyse

from ..conftest import failure_of, quoted  # noqa: TID252 -- tests/ is no package; importlib mode resolves it

_ERROR = """Showing last frame. Use --error-trace for full trace.

In {file}:12:20

 12 | total = items.sum &.pricee
                          ^-----
Error: undefined method 'pricee' for Item
"""


@pytest.mark.parametrize(
    ("file", "kind"),
    [("src/shop/cart.cr", "build_error"), ("spec/cart_spec.cr", "test_failure")],
    ids=["code", "spec-file"],
)
def test_crystal_compile_error_is_read(file: str, kind: str) -> None:
    """The code's error is a build error, a spec file's the runner's collection error."""
    findings = analyse(
        FailureContext(
            task_id="t",
            subtask_id="s",
            attempt_number=1,
            command="crystal spec",
            exit_code=1,
            error_output=_ERROR.format(file=file),
        )
    )
    assert (findings.tool, findings.failure_type.value) == ("crystal", kind)
    text = quoted(findings)
    assert f"{file}:12:20" in text
    assert "Error: undefined method 'pricee' for Item" in text


def test_a_shard_that_is_not_installed_is_a_dependency_error() -> None:
    """``can't find file 'x'`` with the compiler's ``shards install`` question: set-up."""
    output = (
        'In src/web.cr:1:1\n\n 1 | require "lucky"\n     ^\n'
        "Error: can't find file 'lucky'\n\nIf you're trying to require a shard:\n"
        "- Did you remember to run `shards install`?\n"
    )
    findings = analyse(
        FailureContext(
            task_id="t",
            subtask_id="s",
            attempt_number=1,
            command="crystal build src/web.cr",
            exit_code=1,
            error_output=output,
        )
    )
    assert findings.failure_type.value == "dependency_error"
    assert "Did you remember to run `shards install`?" in quoted(findings)


_SPEC = """F

Failures:

  1) Cart totals its items
     Failure/Error: cart.total.should eq 30

       Expected: 30
            got: 20

     # spec/cart_spec.cr:9

Finished in 210 microseconds
{count}
"""


@pytest.mark.parametrize(
    "count",
    ["1 examples, 1 failures, 0 errors, 0 pending", "3 examples, 1 failures, 1 errors"],
    ids=["count-line", "cr-frame"],
)
def test_crystal_spec_without_its_rerun_list_is_crystal(count: str) -> None:
    """With its re-run list cut, Crystal's count line or its ``.cr`` frames name the runner."""
    findings = analyse(failure_of("make test", _SPEC.format(count=count)))
    assert findings.tool == "crystal spec"
    assert "RSpec" not in findings.headline


def test_rspec_counting_errors_outside_examples_stays_rspec() -> None:
    """RSpec's ``N errors occurred outside of examples`` is no Crystal count."""
    output = _SPEC.replace("spec/cart_spec.cr", "./spec/cart_spec.rb").format(
        count="1 example, 1 failure, 1 error occurred outside of examples"
    )
    assert analyse(failure_of("make test", output)).tool == "RSpec"
