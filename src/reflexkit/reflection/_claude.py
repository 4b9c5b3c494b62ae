"""The LLM generator: Claude writes the reflection, inside one hard time budget.

The request and the reply are this module's; the client, the budget, the retries and the
reason codes are :mod:`reflexkit.llm`'s, shared with the judge and the analyst. Every failure
is a :class:`~reflexkit.exceptions.GenerationError` with a reason code; a
:class:`~reflexkit.reflection._fallback.FallbackGenerator` turns it into the heuristic
reflection with ``fallbackReason`` set.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

import attrs

from reflexkit._deadline import time_left
from reflexkit.exceptions import GenerationError
from reflexkit.llm import Asker, Claude, OutputMode, RequestOptions, check_stop, reply_text
from reflexkit.models import FailureContext, Reflection, ReflectionSource, utcnow
from reflexkit.reflection._prompts import (
    TOOL_NAME,
    LlmReply,
    Prompt,
    parse_reply,
    reflection_from_reply,
    reflection_request,
)

if TYPE_CHECKING:
    from anthropic.types import Message

__all__ = ["ClaudeGenerator", "Completion"]

log = logging.getLogger("reflexkit.reflection")

_MS_PER_S = 1_000


@attrs.frozen(kw_only=True)
class Completion:
    """One successful generation: the reflection and the validated reply behind it.

    Attributes:
        reflection: The reflection, ``source=llm``.
        reply: The model's validated answer (what a fixture records).
        key: The prompt key of the request (see :func:`~reflexkit.reflection._prompts.prompt_key`).
    """

    reflection: Reflection
    reply: LlmReply
    key: str


class ClaudeGenerator(Asker):
    """A :class:`~reflexkit.reflection._protocols.ReflectionGenerator` backed by Claude.

    Args:
        claude: The client (a fresh :class:`~reflexkit.llm.Claude` by default, which lets
            the SDK resolve a credential and an endpoint).
        options: The model, output mode, ``max_tokens``, thinking and effort of the requests.
        timeout_ms: The one overall budget of a generation: loading the SDK, every attempt
            and every wait. A run's deadline (:func:`~reflexkit._deadline.time_left`) that
            comes first shortens it.
        root: The project root, cut from paths in the prompt (see
            :func:`~reflexkit.reflection._prompts.reflection_request`); the current directory by
            default.
        clock: Returns the creation time of a reflection.
    """

    def __init__(
        self,
        claude: Claude | None = None,
        /,
        *,
        options: RequestOptions = RequestOptions(),  # noqa: B008 -- a frozen value
        timeout_ms: int = 30_000,
        root: str | os.PathLike[str] | None = None,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        if timeout_ms < 1:
            msg = f"timeout_ms must be >= 1, got {timeout_ms}"
            raise ValueError(msg)
        super().__init__(
            claude, model=options.model, timeout_ms=timeout_ms, max_tokens=options.max_tokens
        )
        self.options = options
        self._root = root
        self._clock = clock

    def __repr__(self) -> str:
        return f"ClaudeGenerator(options={self.options!r}, timeout_ms={self.timeout_ms})"

    def prompt(self, failure: FailureContext, /, *, previous: Sequence[Reflection] = ()) -> Prompt:
        """Return the request this generator sends for *failure* (and so its fixture key)."""
        return reflection_request(failure, options=self.options, previous=previous, root=self._root)

    def generate(
        self, failure: FailureContext, /, *, previous: Sequence[Reflection] = ()
    ) -> Reflection:
        """Ask Claude for a reflection on *failure*, within ``timeout_ms``.

        Args:
            failure: The (already redacted) failure.
            previous: The subtask's earlier reflections, oldest first.

        Returns:
            The reflection, ``source=llm``, with model, tokens and latency recorded.

        Raises:
            GenerationError: With a reason code from :data:`~reflexkit.llm.REASONS`.
        """
        return self.complete(failure, previous=previous).reflection

    def complete(
        self, failure: FailureContext, /, *, previous: Sequence[Reflection] = ()
    ) -> Completion:
        """Like :meth:`generate`, and also return the validated reply and the prompt key.

        Raises:
            GenerationError: With a reason code from :data:`~reflexkit.llm.REASONS`.
        """
        started = time.monotonic()
        budget_s, left = self.timeout_ms / _MS_PER_S, time_left()
        if left is not None and left < budget_s:  # the run's deadline comes first
            if left <= 0:
                raise GenerationError("run_budget_spent", "no time left in the run's budget")
            budget_s = left
        prompt = self.prompt(failure, previous=previous)
        message = self.claude.send(prompt.request, budget_s=budget_s, started=started)
        reply = self._reply_of(message)
        latency_ms = round((time.monotonic() - started) * _MS_PER_S)
        reflection = attrs.evolve(
            reflection_from_reply(
                reply,
                failure,
                failure_type=prompt.failure_type,
                source=ReflectionSource.LLM,
                clock=self._clock,
            ),
            model=message.model or self.options.model,
            input_tokens=message.usage.input_tokens,
            output_tokens=message.usage.output_tokens,
            latency_ms=latency_ms,
        )
        log.debug(
            "reflection from %s in %d ms, %d+%d tokens",
            reflection.model,
            latency_ms,
            message.usage.input_tokens,
            message.usage.output_tokens,
        )
        return Completion(reflection=reflection, reply=reply, key=prompt.key)

    def _reply_of(self, message: Message) -> LlmReply:
        """Validate a reply: a refusal, a cut-off reply or bad JSON is an error."""
        if self.options.mode is not OutputMode.TOOL:
            return parse_reply(reply_text(message, asked="write a reflection"))
        check_stop(message, asked="write a reflection")
        for block in message.content:
            if block.type == "tool_use" and block.name == TOOL_NAME:
                return parse_reply(block.input, source="tool input")
        raise GenerationError("llm_invalid_output", f"the reply has no {TOOL_NAME} call")
