"""What an error means, across languages, and what a signal exit code means."""

from __future__ import annotations

import pytest

from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers._kinds import error_kind, killed, signal_exit


@pytest.mark.parametrize(
    "message",
    [
        "AttributeError: 'NoneType' object has no attribute 'qty'",
        "TypeError: 'NoneType' object is not subscriptable",
        "TypeError: Cannot read properties of undefined (reading 'id')",
        'Exception in thread "main" java.lang.NullPointerException: Cannot invoke "s.length()"',
        "panic: runtime error: invalid memory address or nil pointer dereference",
    ],
)
def test_null_values_are_not_assertions(message: str) -> None:
    """An AttributeError on None (and its kin) is a null value, never an assertion."""
    kind = error_kind(message)
    assert kind is not None
    assert kind.name == "null value"


def test_permission_is_not_a_missing_file() -> None:
    """A PermissionError on a credentials file is about access, not existence."""
    kind = error_kind("PermissionError: [Errno 13] Permission denied: '/home/u/.aws/credentials'")
    assert kind is not None
    assert kind.name == "permission"
    assert "does not exist" not in kind.advice


def test_missing_file_and_module() -> None:
    """A missing file and a missing module are told apart; the module is a dependency error."""
    missing_file = error_kind("FileNotFoundError: [Errno 2] No such file or directory: 'a.csv'")
    module = error_kind("ModuleNotFoundError: No module named 'yaml'")
    assert missing_file is not None
    assert missing_file.name == "missing file"
    assert module is not None
    assert module.failure_type is FailureType.DEPENDENCY_ERROR
    assert module.category is ReflectionCategory.MISSING_CONTEXT


def test_unknown_messages_have_no_kind() -> None:
    """A message of no known kind gets the reader's own advice."""
    assert error_kind("ValueError: invalid literal for int() with base 10: 'x'") is None


@pytest.mark.parametrize(
    ("code", "words"),
    [(137, "SIGKILL"), (-9, "SIGKILL"), (139, "SIGSEGV"), (-11, "SIGSEGV"), (134, "SIGABRT")],
)
def test_signal_exit_codes(code: int, words: str) -> None:
    """128 + N from a shell and -N from subprocess both name the signal."""
    said = signal_exit(code)
    assert said is not None
    assert words in said


def test_ordinary_exit_codes_are_no_signal() -> None:
    """Exit codes 0-128 and None say nothing about signals."""
    assert signal_exit(1) is None
    assert signal_exit(None) is None
    assert killed(137)
    assert not killed(139)


@pytest.mark.parametrize(
    ("message", "name"),
    [
        ("CONFLICT (content): Merge conflict in CHANGELOG.md", "conflict"),
        ("bash: line 1: frobnicate: command not found", "missing command"),
        ("deploy.sh: line 4: DEPLOY_HOST: unbound variable", "unset variable"),
        ("curl: (7) Failed to connect to 127.0.0.1 port 5432", "connection"),
        ("RecursionError: maximum recursion depth exceeded", "recursion"),
    ],
)
def test_more_kinds(message: str, name: str) -> None:
    """Conflicts, missing commands, unset variables, connections and recursion are named."""
    kind = error_kind(message)
    assert kind is not None
    assert kind.name == name
