"""Fingerprints: the same failure across attempts gets the same short id, different ones don't.

A fingerprint hashes the failure type and the failure's *signature*: the facts the tool
parser extracted (failing test ids, error codes and messages, the summary), or the last
lines of the output when no parser recognised it, after removing what changes from run to
run without changing the failure: timestamps, durations, hex addresses, UUIDs, build hashes,
temporary directories, and free-standing numbers (line numbers, counts, process ids, ports).
Numbers inside identifiers (``E0308``, ``TS2322``, ``F401``, ``test_v2``) are kept.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Protocol

from reflexkit.models import FailureContext, FailureType
from reflexkit.readers import Findings, analyse, clean_output

__all__ = ["fingerprint", "fingerprint_findings", "normalise"]


class _Digest(Protocol):
    def update(self, data: bytes, /) -> None: ...
    def hexdigest(self) -> str: ...


def _load_sha256() -> Callable[[], _Digest]:
    """CPython's own SHA-256, without the OpenSSL set-up of importing hashlib (#19)."""
    for name in ("_sha2", "_sha256"):  # Python 3.12+, 3.11
        try:
            found: Callable[[], _Digest] = importlib.import_module(name).sha256
        except (ImportError, AttributeError):
            continue
        return found
    import hashlib  # noqa: PLC0415 -- an interpreter built without them  # pragma: no cover

    return hashlib.sha256  # pragma: no cover


_sha256 = _load_sha256()

_UNPARSED_TAIL = 4_000
"""How much of the end of an unrecognised output makes its signature."""

_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(
            r"\b\d{4}-\d{2}-\d{2}"
            r"(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
            r"|\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"
        ),
        "<time>",
    ),
    (
        re.compile(
            r"(?:/private)?/(?:tmp|var/tmp|var/folders/[^/\s]+/[^/\s]+/T)/"
            r"(?:pytest-of-[^/\s]+/pytest-\d+/(?:popen-gw\d+/)?)?[^/\s'\"]*"
            r"|[A-Za-z]:\\Users\\[^\\\s]+\\AppData\\Local\\Temp\\[^\\\s'\"]*"
        ),
        "<tmp>",
    ),
    (re.compile(r"\b[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}\b"), "<uuid>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<addr>"),
    (re.compile(r"(?<=-)[0-9a-f]{16}\b|\b[0-9a-f]{32,64}\b"), "<hash>"),
    (re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?(?:ms|s|sec|secs|seconds|min|us|µs|ns)\b"), "<dur>"),
    (re.compile(r"(?<![\w.])\d+(?:\.\d+)*(?!\w)"), "<n>"),
    (re.compile(r"\s+"), " "),
)


def normalise(text: str) -> str:
    """Return *text* with run-to-run noise replaced by placeholders (see the module doc)."""
    for pattern, placeholder in _RULES:
        text = pattern.sub(placeholder, text)
    return text.strip()


def fingerprint_findings(failure_type: FailureType, findings: Findings, output: str) -> str:
    """Return the fingerprint of a failure whose output was already analysed.

    Args:
        failure_type: The failure's type.
        findings: What the tool parser extracted from the output.
        output: The failure's error output (used when the parser found no facts).

    Returns:
        16 hex digits of a SHA-256.
    """
    if findings.facts:
        parts = [*findings.tests, *findings.facts, *findings.details, findings.summary]
        signature = "\n".join(parts)
    else:
        signature = clean_output(output.strip()[-_UNPARSED_TAIL:])
    digest = _sha256()
    digest.update(failure_type.value.encode())
    digest.update(b"\0")
    digest.update(normalise(signature).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:16]


def fingerprint(failure: FailureContext) -> str:
    """Return the fingerprint of a failure: 16 hex digits of a SHA-256.

    Args:
        failure: The failure; when its type is missing or unknown it is classified first, so
            a failure gets the same fingerprint before and after classification.

    Returns:
        The same value for the same failure across attempts (timings, addresses, temporary
        folders and line numbers may differ), a different one for a different failure.
    """
    findings = analyse(failure)
    failure_type = failure.failure_type
    if failure_type is None or failure_type is FailureType.UNKNOWN:
        failure_type = findings.failure_type
    return fingerprint_findings(failure_type, findings, failure.error_output)
