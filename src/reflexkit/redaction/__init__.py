"""Redaction: secrets out of every text that leaves reflexkit.

The engine (:class:`Redactor`) applies the rule table (:data:`RULES`, one :class:`Rule` per
shape of secret, each with the examples it must redact and the look-alikes it must not),
the values of secret-looking environment variables and private key blocks.
"""

from __future__ import annotations

from reflexkit.redaction.engine import Redactor, cut_lines, redact_failure, redact_text
from reflexkit.redaction.rules import RULES, Redacted, Rule
from reflexkit.redaction.windows import CUT_LINE, MAX_OUTPUT_CHARS, window

__all__ = [
    "CUT_LINE",
    "MAX_OUTPUT_CHARS",
    "RULES",
    "Redacted",
    "Redactor",
    "Rule",
    "cut_lines",
    "redact_failure",
    "redact_text",
    "window",
]
