"""Everything reflexkit raises or warns.

* ReflexkitError          the base: catch this to catch everything below
  +-- ConfigError         bad project.json, task file or CLI input; ``.errors``: "path: msg" lines
  +-- StoreError          episodic memory can't be read or written
  +-- GenerationError     a generator failed (internal: the service falls back)
  +-- SetupError          the run can't work as set up (agent missing, credentials, outage)
* RunInterrupted          (a BaseException) a signal stopped the run: SIGINT or SIGTERM
* CorruptRecordWarning    a stored record was skipped on read
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "ConfigError",
    "CorruptRecordWarning",
    "GenerationError",
    "ReflexkitError",
    "RunInterrupted",
    "SetupError",
    "StoreError",
]


class ReflexkitError(Exception):
    """The base of every error reflexkit raises on purpose."""


class ConfigError(ReflexkitError):
    """Input did not validate: project.json, a task file, a FailureContext or a CLI argument.

    Attributes:
        errors: One line per problem, each ``"<where>: <what was expected>"``, for example
            ``"project.json: $.reflexion.backend: expected one of llm, heuristic, fixture, got
            "gpt""``. All problems found are reported at once.
    """

    def __init__(self, errors: Iterable[str]) -> None:
        self.errors: tuple[str, ...] = tuple(errors)
        super().__init__("; ".join(self.errors))


class StoreError(ReflexkitError):
    """Episodic memory can't be read or written (I/O error, bad path, lost database)."""


class GenerationError(ReflexkitError):
    """A reflection generator failed.

    Internal: the reflection service catches it and falls back to the next generator.

    Attributes:
        reason: A stable reason code such as ``"llm_timeout"`` or ``"no_api_key"``; the
            fallback records it on the reflection as ``fallbackReason``.
    """

    def __init__(self, reason: str, message: str = "") -> None:
        self.reason = reason
        super().__init__(f"{reason}: {message}" if message else reason)


class SetupError(ReflexkitError):
    """The run can't work as it is set up, whatever the agent does.

    An agent command that is not installed or can't be parsed, a missing optional extra, no
    credentials, an API that can't be reached. Raised by a subagent (from ``run`` or before
    the first attempt); the loop stops the subtask at once, stores no reflection (it is no
    lesson about the code) and the CLI exits 2 with the message.
    """


class RunInterrupted(BaseException):
    """A signal (SIGINT, SIGTERM) stopped the run; raised by the ``reflexkit`` command's handler.

    A ``BaseException``, like ``KeyboardInterrupt``, so that no ``except Exception`` guard of
    the loop swallows it: the loop kills what runs, writes ``run_interrupted`` and lets it go
    on; the command exits ``128 + signum`` (130, 143).

    Attributes:
        signum: The signal's number.
    """

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"interrupted by signal {signum}")


class CorruptRecordWarning(UserWarning):
    """A stored record was skipped: a torn line, invalid JSON or a record that fails validation."""
