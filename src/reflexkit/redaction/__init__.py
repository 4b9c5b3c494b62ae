"""Redaction: secrets out of every text that leaves reflexkit.

The engine (:class:`Redactor`) applies the rule table (:data:`RULES`, one :class:`Rule` per
shape of secret, each with the examples it must redact and the look-alikes it must not),
the values of secret-looking environment variables and private key blocks. Every text that
leaves reflexkit passes the outbound gate (:func:`outbound`, :func:`outbound_data`) on its
way to one of the registered :data:`SINKS`.
"""

from __future__ import annotations

from reflexkit.redaction._engine import Redactor, redact_failure, redact_text
from reflexkit.redaction._gate import SINKS, Sink, outbound, outbound_data
from reflexkit.redaction._rules import RULES, Redacted, Rule
from reflexkit.redaction._spans import cut_lines
from reflexkit.redaction._windows import CUT_LINE, MAX_OUTPUT_CHARS, window

__all__ = [
    "CUT_LINE",
    "MAX_OUTPUT_CHARS",
    "RULES",
    "SINKS",
    "Redacted",
    "Redactor",
    "Rule",
    "Sink",
    "cut_lines",
    "outbound",
    "outbound_data",
    "redact_failure",
    "redact_text",
    "window",
]
