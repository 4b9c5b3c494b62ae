"""Failure classification: which kind of check failed, read from the command, exit code and output.

The output's format decides first (pytest's summary, tsc's ``error TS2322``, rustc's
``error[E0308]`` ...), because a command line such as ``make test`` or ``npm test`` hides the
tool it runs; the command line is the fallback when the output is in no known format.
Labelling conventions: a collection or import error reported by a test runner is a
``test_failure``; a TypeScript syntax error from tsc is a ``typecheck_error``; a segfault is a
``runtime_error``; a script failing on CRLF line endings and a merge or cherry-pick conflict
are ``tool_error``; a command killed by ``timeout`` (exit code 124) is a ``timeout``.
"""

from __future__ import annotations

from reflexkit.models import FailureContext, FailureType
from reflexkit.readers import analyse

__all__ = ["classify"]


def classify(failure: FailureContext) -> FailureType:
    """Return the failure type of *failure*.

    A type already set on the failure (other than ``unknown``) is returned as is; otherwise it
    is read from the output's format, then from the command line.

    Args:
        failure: The failed attempt.

    Returns:
        The failure type; ``FailureType.UNKNOWN`` when neither the output nor the command
        says what failed.
    """
    if failure.failure_type not in {None, FailureType.UNKNOWN}:
        assert failure.failure_type is not None  # noqa: S101 -- narrowed for mypy
        return failure.failure_type
    return analyse(failure).failure_type
