"""The run's deadline, for the calls that wait on the network inside a run.

A leaf module. The retry loop sets the time left in ``orchestrator.runTimeoutS`` around each
reflection (:func:`deadline_in`); the Claude generator reads it (:func:`time_left`) and takes
the smaller of that and its own ``generationTimeoutMs``, so a reflection asked for just before
the budget runs out can't overrun the run. A context variable, not an argument: the service
and generator protocols stay as they are, and a call in another thread sees no deadline.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = ["deadline_in", "time_left"]

_DEADLINE: ContextVar[float | None] = ContextVar("reflexkit_run_deadline", default=None)


@contextlib.contextmanager
def deadline_in(seconds: float | None) -> Iterator[None]:
    """Within the block, calls that honour it end within *seconds* (``None``: no deadline)."""
    token = _DEADLINE.set(None if seconds is None else time.monotonic() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def time_left() -> float | None:
    """Seconds left before the deadline of the enclosing :func:`deadline_in`; ``None``: none."""
    at = _DEADLINE.get()
    return None if at is None else at - time.monotonic()
