"""Secrets in files tools print: ``.netrc``, ``.pgpass``, ``openssl -text`` keys, XML settings.

XML settings: a secret element (``<password>``), and a name and value as attributes of one
element (.NET ``appSettings``, Spring ``<property>``, ``<param>``).

Each rule's examples and look-alikes beyond the first example are in ``files.toml`` beside
this module.
"""

from __future__ import annotations

from reflexkit.redaction._checks import (
    _HEX_OCTETS,
    _secret,
)
from reflexkit.redaction._rules._base import Rule, _fake, _rule
from reflexkit.redaction._rules._patterns import (
    _B,
    _B64_TAIL,
    _KEY_BODY,
    _KEY_TEXT_LINE,
)
from reflexkit.redaction._shapes import (
    _name_strength,
    value_is_secret,
)

RULES: tuple[Rule, ...] = (
    _rule(
        "private_key_body",
        _B + _KEY_BODY + r"[A-Za-z0-9+/]*={0,2}"
        r"(?:[ \t]*\r?\n[ \t]*(?:[A-Za-z0-9+/]{16,}|" + _B64_TAIL + r")={0,2}"
        r"(?=[ \t]*(?:\r?\n|\Z)))*",
        _KEY_BODY,
        markers=("mii", "mig", "mc", "mf", "mhc", "b3blbnnzac1rzxktdje"),
        example=_fake("MIIEpAIBAAKCAQEA", "0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MpdHFBtPtq4aSYkZ"),
    ),
    _rule(
        "private_key_text",
        r"Private-Key:(?:[ \t]*\([^)\n]*\))?[ \t]*\r?\n"
        r"(?P<secret>(?:" + _KEY_TEXT_LINE + r"\r?\n)*" + _KEY_TEXT_LINE + ")",
        r"Private-Key:",
        ("private-key:",),
        lambda m: ":" in _secret(m),
        example=_fake("Private-Key: (256 bit)\npriv:\n    ", "0f:ac:e0:fa:ce"),
    ),
    _rule(
        "netrc_password",
        r"(?:\bmachine[ \t]+\S+|(?m:^)[ \t]*default\b)(?:\s+(?:login|account|port|macdef)\s+\S+)*"
        r"\s+(?:password|passwd)\s+(?P<secret>\S+)",
        r"(?i:machine[ \t]+[^ \t\n]+[ \t]+(?:login|password|account|port)[ \t])"
        r"|(?im:^[ \t]*(?:machine[ \t]+[^ \t\n]+|default)[ \t]*$)"
        r"|(?im:^[ \t]*default[ \t]+(?:login|password)[ \t])",
        ("password", "passwd"),
        lambda m: not _secret(m).startswith("[REDACTED"),
        context_lines=4,
        example=_fake("machine api.example.com login deploy password ", "fake-netrc-pw"),
    ),
    _rule(
        "pgpass_password",
        r"(?m:^[ \t]*[^:\s]+:(?:[0-9]+|\*):[^:\s]+:[^:\s]+:)(?P<secret>[^\s]+)[ \t]*(?m:$)",
        r"(?m:^[ \t]*[^:\s]+:(?:[0-9]+|\*):[^:\s]+:[^:\s]+:[^\s])",
        (":",),
        lambda m: (
            not _secret(m).isdigit()
            and not _secret(m).startswith("[REDACTED")
            and _HEX_OCTETS.match(m.group(0)) is None  # a MAC address, an openssl hex dump
        ),
        example=_fake("db.internal:5432:orders:app:", "Fake-pgpass-pw"),
    ),
    _rule(
        "xml_secret",
        r"<(?P<tag>[\w:.-]*(?i:pass|pwd|secret|token|key|credential|auth)[\w:.-]*)>"
        r"(?P<secret>[^<\n]{1,300})</(?P=tag)>",
        r"(?i:(?:pass|pwd|secret|token|key|credential|auth)[\w:.-]{0,40}>[^<\n])",
        check=lambda m: (
            _name_strength(m.group("tag")) > 0
            and value_is_secret(_secret(m), _name_strength(m.group("tag")))
        ),
        markers=("pass", "pwd", "secret", "token", "key>", "credential", "auth"),
        example=_fake("<password>", "FakeXmlPassw0rd", "</password>"),
    ),
    _rule(
        "xml_attribute_pair",
        r"<[\w:.-]{1,64}[ \t][^<>\n]{0,256}?\b(?i:key|name)[ \t]*=[ \t]*(?P<q>[\"'])"
        r"(?P<name>[^\"'<>\n]{1,80})(?P=q)[^<>\n]{0,256}?\b(?i:value)[ \t]*=[ \t]*"
        r"(?P<v>[\"'])(?P<secret>[^\"'<>\n]{1,512})(?P=v)",
        r"(?i:(?:key|name)[ \t]*=[ \t]*[\"'][\w.:-]{0,40}"
        r"(?:pass|pwd|secret|token|key|credential|auth)[\w.:-]{0,40}[\"'])",
        ("value",),
        lambda m: (
            _name_strength(m.group("name")) > 0
            and value_is_secret(_secret(m), _name_strength(m.group("name")))
        ),
        example=_fake('<add key="ApiKey" value="', "Fake0Xml1Attr2Key3", '" />'),
    ),
)
"""This family's rules, in the order they are applied."""
