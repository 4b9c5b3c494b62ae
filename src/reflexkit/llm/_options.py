"""The options of a Claude request, as one value from project.json to ``messages.create``.

``reflexion.mode``, ``thinking``, ``effort``, ``maxTokens`` and ``model`` are read into a
:class:`RequestOptions`; the generator and its fixtures take that value whole and
:meth:`RequestOptions.apply` writes it into a request. What each option sends is described
once, in docs/llm.md.
"""

from __future__ import annotations

import enum
import re
from typing import Any, TypeVar

import attrs

__all__ = ["DEFAULT_MODEL", "Effort", "OutputMode", "RequestOptions", "Thinking"]

DEFAULT_MODEL = "claude-haiku-5-5"
"""The model asked unless configured otherwise."""


class OutputMode(enum.StrEnum):
    """How the reply is constrained."""

    STRUCTURED = "structured"
    """Structured outputs: ``output_config.format`` with the reply's JSON schema."""
    TOOL = "tool"
    """A forced tool call, for models or gateways without structured outputs."""


class Thinking(enum.StrEnum):
    """The ``thinking`` setting of a request."""

    AUTO = "auto"
    """What suits a short structured reply on the model (see docs/llm.md)."""
    ADAPTIVE = "adaptive"
    """``{"type": "adaptive"}``: the model decides how much to think, guided by ``effort``."""
    DISABLED = "disabled"
    """``{"type": "disabled"}``: no thinking (models that always think reject it)."""


class Effort(enum.StrEnum):
    """The ``output_config.effort`` levels of the Messages API."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    XHIGH = "xhigh"
    MAX = "max"


_E = TypeVar("_E", bound=enum.StrEnum)

_EXTENDED_THINKING_ONLY = re.compile(
    r"^claude-(?:[23][-.]|instant|(?:opus|sonnet|haiku)-4-(?:[015]\b|2025))"
)
"""Models that take neither adaptive thinking nor effort (Claude 4.5 and earlier)."""


def _choice(kind: type[_E], value: object) -> _E:
    """*value* as a member of *kind*, or a ValueError that names the choices."""
    try:
        return kind(value)  # type: ignore[arg-type]  # a ValueError says what is wrong
    except ValueError:
        choices = ", ".join(repr(member.value) for member in kind)
        msg = f"{kind.__name__} must be one of {choices}, got {value!r}"
        raise ValueError(msg) from None


def _mode(value: object) -> OutputMode:
    return _choice(OutputMode, value)


def _thinking(value: object) -> Thinking:
    return _choice(Thinking, value)


def _effort(value: object) -> Effort | None:
    return None if value is None else _choice(Effort, value)


def _positive(_inst: object, attribute: attrs.Attribute[int], value: int) -> None:
    if value < 1:
        msg = f"{attribute.name} must be >= 1, got {value!r}"
        raise ValueError(msg)


@attrs.frozen(kw_only=True)
class RequestOptions:
    """What a request asks of the model, besides its messages.

    Attributes:
        model: The model to ask.
        mode: ``structured`` constrains the reply with ``output_config`` (the default);
            ``tool`` forces a tool call instead (the newest models reject forced tool choice).
        max_tokens: The most tokens a reply may take, thinking included.
        thinking: ``auto`` sends what suits a short structured reply on the model;
            ``adaptive`` and ``disabled`` are sent as given.
        effort: The ``output_config.effort`` level; ``None`` sends none.
    """

    model: str = DEFAULT_MODEL
    mode: OutputMode = attrs.field(default=OutputMode.STRUCTURED, converter=_mode)
    max_tokens: int = attrs.field(default=4_096, validator=_positive)
    thinking: Thinking = attrs.field(default=Thinking.AUTO, converter=_thinking)
    effort: Effort | None = attrs.field(default=Effort.LOW, converter=_effort)

    def thinking_request(self) -> dict[str, Any]:
        """Return the ``thinking`` object and the effort level the request carries, if any.

        ``auto`` sends adaptive thinking at the effort in ``structured`` mode, thinking
        disabled in ``tool`` mode (a forced tool call does not go with thinking), and nothing
        on Claude 4.5 and earlier, which take neither adaptive thinking nor effort.

        Returns:
            ``{"thinking": {...}, "effort": ...}``, either key absent when not sent.
        """
        legacy = _EXTENDED_THINKING_ONLY.match(self.model) is not None
        thinking = self.thinking
        if thinking is Thinking.AUTO:
            if legacy:
                return {}
            thinking = Thinking.DISABLED if self.mode is OutputMode.TOOL else Thinking.ADAPTIVE
        settings: dict[str, Any] = {"thinking": {"type": str(thinking)}}
        if self.effort is not None and not legacy:
            settings["effort"] = str(self.effort)
        return settings

    def apply(self, request: dict[str, Any]) -> dict[str, Any]:
        """Write the model, ``max_tokens``, thinking and effort into *request*; return it."""
        request["model"] = self.model
        request["max_tokens"] = self.max_tokens
        settings = self.thinking_request()
        if "thinking" in settings:
            request["thinking"] = settings["thinking"]
        if "effort" in settings:
            request.setdefault("output_config", {})["effort"] = settings["effort"]
        return request
