"""Retries inside one time budget, with tenacity hidden behind an attrs policy.

A :class:`RetryPolicy` runs a call until it succeeds, fails for good, or the budget runs out.
It knows nothing of HTTP or the SDK: the call signals a failure worth retrying by raising
:class:`TransientError` (a :class:`~reflexkit.exceptions.GenerationError` with a reason code
and, when the server asked for one, a ``Retry-After`` delay). Every other exception goes
straight through.

The budget is one wall-clock deadline for everything: each attempt is told how much time is
left (the caller uses it as the attempt's timeout), back-off waits are shortened to leave an
attempt time to run, and a ``Retry-After`` that does not fit in what is left stops the
retries at once instead of sleeping past the deadline.
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections.abc import Callable
from typing import TypeVar

import attrs
import tenacity

from reflexkit.exceptions import GenerationError

__all__ = ["NO_WAIT", "RetryPolicy", "TransientError"]

T = TypeVar("T")

log = logging.getLogger("reflexkit.reflection")


class TransientError(GenerationError):
    """A failure that another attempt may not have (a timeout, a 429, a 5xx, a lost connection).

    Attributes:
        reason: The reason code, as on :class:`~reflexkit.exceptions.GenerationError`.
        retry_after_s: How long the server asked the client to wait, in seconds, if it did.
    """

    def __init__(
        self, reason: str, message: str = "", *, retry_after_s: float | None = None
    ) -> None:
        super().__init__(reason, message)
        finite = retry_after_s is not None and math.isfinite(retry_after_s)
        self.retry_after_s = max(retry_after_s, 0.0) if finite else None  # type: ignore[type-var]


def _positive(_inst: object, attribute: attrs.Attribute[float], value: float) -> None:
    if value <= 0:
        msg = f"{attribute.name} must be > 0, got {value!r}"
        raise ValueError(msg)


def _not_negative(_inst: object, attribute: attrs.Attribute[float], value: float) -> None:
    if value < 0:
        msg = f"{attribute.name} must be >= 0, got {value!r}"
        raise ValueError(msg)


def _fraction(_inst: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not 0.0 <= value <= 1.0:
        msg = f"{attribute.name} must be between 0 and 1, got {value!r}"
        raise ValueError(msg)


def _at_least_one(_inst: object, attribute: attrs.Attribute[int], value: int) -> None:
    if value < 1:
        msg = f"{attribute.name} must be >= 1, got {value!r}"
        raise ValueError(msg)


@attrs.frozen(kw_only=True)
class RetryPolicy:
    """How often and how patiently to retry, inside one overall time budget.

    Attributes:
        attempts: The most attempts, the first one included.
        budget_s: The whole time allowed, attempts and waits together, in seconds.
            :class:`~reflexkit.reflection.claude.ClaudeGenerator` replaces it with its
            ``timeout_ms``.
        backoff_base_s: The wait after the first failure; it doubles after each further one.
        backoff_max_s: The longest back-off wait.
        jitter: The fraction of each back-off wait that is random (0 for none): a wait of
            ``w`` becomes a random value between ``w * (1 - jitter)`` and ``w``, so many
            clients that failed together do not retry together.
        min_attempt_s: An attempt is not started with less time than this left; a wait
            that would leave less is shortened (back-off) or ends the retries
            (``Retry-After``).
        sleep: How to wait (tests may pass a recorder; :data:`NO_WAIT` still waits for
            ``Retry-After``).
    """

    attempts: int = attrs.field(default=4, validator=_at_least_one)
    budget_s: float = attrs.field(default=30.0, validator=_positive)
    backoff_base_s: float = attrs.field(default=0.5, validator=_not_negative)
    backoff_max_s: float = attrs.field(default=8.0, validator=_not_negative)
    jitter: float = attrs.field(default=0.25, validator=_fraction)
    min_attempt_s: float = attrs.field(default=0.05, validator=_not_negative)
    sleep: Callable[[float], None] = attrs.field(default=time.sleep, eq=False, repr=False)

    @classmethod
    def no_wait(cls, *, attempts: int = 4, budget_s: float = 30.0) -> RetryPolicy:
        """Return a policy with no back-off, for tests (``Retry-After`` is still honoured).

        Args:
            attempts: The most attempts.
            budget_s: The overall budget in seconds.
        """
        return cls(attempts=attempts, budget_s=budget_s, backoff_base_s=0.0, jitter=0.0)

    def with_budget(self, budget_s: float) -> RetryPolicy:
        """Return a copy of this policy with another overall budget, in seconds."""
        return attrs.evolve(self, budget_s=budget_s)

    def backoff_s(self, failures: int) -> float:
        """Return the back-off wait after *failures* failed attempts, jitter applied."""
        wait = min(self.backoff_base_s * 2.0 ** max(failures - 1, 0), self.backoff_max_s)
        return wait * (1.0 - self.jitter * random.random())  # noqa: S311 -- jitter, not crypto

    def call(self, fn: Callable[[float], T], *, started: float | None = None) -> T:
        """Run ``fn(remaining_s)`` until it returns, fails for good, or the budget runs out.

        Args:
            fn: One attempt; it receives the seconds left in the budget, to use as its
                timeout. It raises :class:`TransientError` for a failure worth retrying.
            started: When the budget started, as a :func:`time.monotonic` value; now by
                default. A caller that did work before the first attempt passes its start
                so that work counts too.

        Returns:
            What *fn* returned.

        Raises:
            TransientError: The last transient failure, when the attempts or the budget ran
                out; its message says why the retries stopped.
            Exception: Whatever else *fn* raised, at once, without a retry.
        """
        deadline = (time.monotonic() if started is None else started) + self.budget_s
        why_stopped: list[str] = []

        def wait(state: tenacity.RetryCallState) -> float:
            err = _transient(state)
            if err.retry_after_s is not None:
                return max(err.retry_after_s, 0.0)
            left = deadline - time.monotonic() - self.min_attempt_s
            return max(min(self.backoff_s(state.attempt_number), left), 0.0)

        def stop(state: tenacity.RetryCallState) -> bool:
            err = _transient(state)
            left = deadline - time.monotonic()
            if state.attempt_number >= self.attempts:
                why_stopped.append(f"{self.attempts} attempts made")
                return True
            if err.retry_after_s is not None and err.retry_after_s + self.min_attempt_s > left:
                why_stopped.append(
                    f"the server asked to wait {err.retry_after_s:.3g} s, "
                    f"more than the {max(left, 0.0):.3g} s left in the budget"
                )
                return True
            if left - state.upcoming_sleep < self.min_attempt_s:
                why_stopped.append(f"the {self.budget_s:.3g} s budget ran out")
                return True
            return False

        def give_up(state: tenacity.RetryCallState) -> T:
            err = _transient(state)
            attempts = state.attempt_number
            detail = f"{err} (gave up after {attempts} attempt{'s' * (attempts > 1)}: "
            detail += (why_stopped[-1] if why_stopped else "no attempts left") + ")"
            raise TransientError(err.reason, detail.removeprefix(f"{err.reason}: "))

        def before_sleep(state: tenacity.RetryCallState) -> None:
            log.info(
                "attempt %d failed (%s); retrying in %.3f s",
                state.attempt_number,
                _transient(state).reason,
                state.upcoming_sleep,
            )

        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception_type(TransientError),
            wait=wait,
            stop=stop,
            sleep=self.sleep,
            before_sleep=before_sleep,
            retry_error_callback=give_up,
        )
        result: T = retrying(lambda: fn(max(deadline - time.monotonic(), 0.0)))
        return result


def _transient(state: tenacity.RetryCallState) -> TransientError:
    """Return the TransientError of the attempt that just failed."""
    assert state.outcome is not None  # noqa: S101 -- tenacity asks only after an attempt
    err = state.outcome.exception()
    assert isinstance(err, TransientError)  # noqa: S101 -- only these are retried
    return err


NO_WAIT = RetryPolicy.no_wait()
"""A policy with no back-off (``Retry-After`` still honoured), for tests."""
