"""A chain of generators: the first that works writes the reflection, and says why it had to.

The usual chain is Claude, then the heuristic: with no API key, a timeout, a refusal or a bug
in the first generator, the heuristic reflection comes back with ``fallbackReason`` naming
what went wrong first (``"no_api_key"``, ``"llm_timeout"`` ...).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import attrs

from reflexkit.exceptions import GenerationError
from reflexkit.models import FailureContext, Reflection
from reflexkit.reflection._protocols import ReflectionGenerator

__all__ = ["GENERATOR_ERROR", "FallbackGenerator", "reason_of"]

log = logging.getLogger("reflexkit.reflection")

GENERATOR_ERROR = "generator_error"
"""The reason recorded when a generator raised something other than a GenerationError."""


def reason_of(err: BaseException) -> str:
    """Return the reason code of a generator's exception (``generator_error`` for a bug)."""
    return err.reason if isinstance(err, GenerationError) else GENERATOR_ERROR


class FallbackGenerator:
    """A :class:`~reflexkit.reflection._protocols.ReflectionGenerator` that tries a chain in order.

    Args:
        primary: Tried first; its reflections come back as they are.
        *fallbacks: Tried in order when the ones before fail; a reflection they write gets
            ``fallback_reason``: the reason code of the first failure.

    Example:
        >>> FallbackGenerator(ClaudeGenerator(), HeuristicGenerator())  # doctest: +SKIP
    """

    def __init__(self, primary: ReflectionGenerator, /, *fallbacks: ReflectionGenerator) -> None:
        self.chain: tuple[ReflectionGenerator, ...] = (primary, *fallbacks)

    def __repr__(self) -> str:
        return "FallbackGenerator(" + ", ".join(repr(g) for g in self.chain) + ")"

    def close(self) -> None:
        """Close every generator of the chain that has a ``close()`` (a Claude client)."""
        for generator in self.chain:
            close = getattr(generator, "close", None)
            if callable(close):
                close()

    def generate(
        self, failure: FailureContext, /, *, previous: Sequence[Reflection] = ()
    ) -> Reflection:
        """Return the reflection of the first generator in the chain that writes one.

        Every exception is caught, not only :class:`~reflexkit.exceptions.GenerationError`:
        a bug in one generator must not break the run. Each failure is logged at warning
        with its reason code (and, for errors not our own, only the exception's class).

        Args:
            failure: The (already redacted) failure.
            previous: The subtask's earlier reflections, oldest first.

        Returns:
            The reflection; ``fallback_reason`` is set when the primary failed.

        Raises:
            GenerationError: Every generator failed; its reason is the first failure's.
        """
        first_reason: str | None = None
        for index, generator in enumerate(self.chain):
            try:
                reflection = generator.generate(failure, previous=previous)
            except Exception as err:  # any generator's failure falls back, a bug's too
                reason = reason_of(err)
                first_reason = first_reason or reason
                last = index == len(self.chain) - 1
                # Our own messages name no secret; another exception's might, so only
                # its class is logged at warning (the traceback goes to debug).
                detail = str(err) if isinstance(err, GenerationError) else type(err).__name__
                # No API key is a choice (the heuristic is the offline mode), not a fault.
                log.log(
                    logging.INFO if reason == "no_api_key" else logging.WARNING,
                    "reflection generator %s failed (%s)%s",
                    type(generator).__name__,
                    detail if detail.startswith(reason) else f"{reason}: {detail}",
                    "" if last else "; falling back",
                )
                if not isinstance(err, GenerationError):
                    log.debug("generator error", exc_info=err)
                continue
            if first_reason is None:
                return reflection
            return attrs.evolve(reflection, fallback_reason=first_reason)
        raise GenerationError(first_reason or GENERATOR_ERROR, "every generator failed")
