"""The rule table: one :class:`Rule` per shape of secret, with what it must and must not redact.

The table is split by family, one module each, with each rule's further examples and its
look-alikes in the ``.toml`` file of the same name beside it:

* :mod:`~reflexkit.redaction._rules.vendors`: known token formats (cloud keys, API tokens);
* :mod:`~reflexkit.redaction._rules.wrapped`: secrets inside base64, URL-encoding, escapes;
* :mod:`~reflexkit.redaction._rules.headers`: HTTP headers and tokens named in prose;
* :mod:`~reflexkit.redaction._rules.urls`: URLs, connection strings, ``curl -u``;
* :mod:`~reflexkit.redaction._rules.commands`: command-line passwords;
* :mod:`~reflexkit.redaction._rules.files`: ``.netrc``, ``.pgpass``, key dumps, XML settings;
* :mod:`~reflexkit.redaction._rules.assignments`: a secret's name set to a value.
"""

from __future__ import annotations

from reflexkit.redaction._rules import (
    assignments,
    commands,
    files,
    headers,
    urls,
    vendors,
    wrapped,
)
from reflexkit.redaction._rules._base import Redacted, Rule, compiled

__all__ = ["RULES", "Redacted", "Rule", "compiled"]

RULES: tuple[Rule, ...] = (
    *vendors.RULES,
    *wrapped.RULES,
    *headers.RULES,
    *urls.RULES,
    *commands.RULES,
    *files.RULES,
    *assignments.RULES,
)
"""The rule table, applied in this order to every candidate line."""
