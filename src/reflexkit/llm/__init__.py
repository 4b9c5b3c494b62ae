"""One Claude client: the SDK client, the budgeted send, the reason codes, the request options.

The generator, the completion judge and the insights analyst all take a :class:`Claude`
(all three are :class:`Asker` s).
Names load on first use, so the configuration can read :class:`RequestOptions`' enums
without loading the client. The protocol (budgets, retries, reason codes) is in docs/llm.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reflexkit._lazy import lazy_exports

if TYPE_CHECKING:
    from reflexkit.llm._client import (
        NO_WAIT as NO_WAIT,
        REASONS as REASONS,
        Asker as Asker,
        Claude as Claude,
        RetryPolicy as RetryPolicy,
        TransientError as TransientError,
        check_stop as check_stop,
        reply_text as reply_text,
    )
    from reflexkit.llm._options import (
        DEFAULT_MODEL as DEFAULT_MODEL,
        Effort as Effort,
        OutputMode as OutputMode,
        RequestOptions as RequestOptions,
        Thinking as Thinking,
    )

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "_client": (
            "NO_WAIT",
            "REASONS",
            "Asker",
            "Claude",
            "RetryPolicy",
            "TransientError",
            "check_stop",
            "reply_text",
        ),
        "_options": ("DEFAULT_MODEL", "Effort", "OutputMode", "RequestOptions", "Thinking"),
    },
)
