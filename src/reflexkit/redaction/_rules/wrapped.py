"""Secrets inside another encoding or wrapper.

Base64, URL-encoding, escaped strings, masked values and tools' own dumps.

Each rule's examples and look-alikes beyond the first example are in
``wrapped.toml`` beside this module.
"""

from __future__ import annotations

import base64
import re

from reflexkit.redaction._checks import (
    _assignment_check,
    _bare_aws_secret_check,
    _encoded_private_key,
    _escaped_check,
    _literal_check,
    _mask_check,
    _secret,
    _terraform_check,
    _url_check,
    _urlencoded_check,
    _webhook_check,
)
from reflexkit.redaction._rules import assignments, urls
from reflexkit.redaction._rules._base import Rule, _fake, _rule
from reflexkit.redaction._rules._patterns import (
    _B,
    _B64_TAIL,
)
from reflexkit.redaction._shapes import (
    _TEMPLATED,
)


def _base64_url_credentials_check(match: re.Match[str]) -> bool:
    """Base64 of a URL with a password in it: a Kubernetes secret's ``DATABASE_URL``."""
    value = _secret(match)
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode()
    except ValueError:
        return False
    rule = next(r for r in urls.RULES if r.name == "url_password")
    return any(_url_check(m) for m in rule.pattern.finditer(decoded))


def _base64_json_check(match: re.Match[str]) -> bool:
    """Base64 of a JSON object that holds a secret (``{"client_secret": ...}``)."""
    value = _secret(match)
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode()
    except ValueError:
        return False
    if "\n" in decoded:
        decoded = decoded[:4096]
    rule = next(r for r in assignments.RULES if r.name == "secret_assignment")
    return any(_assignment_check(m) for m in rule.pattern.finditer(decoded))


def _base64_of(words: tuple[str, ...]) -> list[str]:
    """The base64 characters each of *words* always encodes to, at each of its 3 alignments."""
    found: set[str] = set()
    for word in words:
        data = word.encode()
        for pad in range(3):
            encoded = base64.b64encode(bytes(pad) + data + bytes(2)).decode()
            first, end = -(-8 * pad // 6), 8 * (pad + len(data)) // 6  # whole 6-bit groups
            found.add(encoded[first:end])
    return sorted(found, key=lambda text: (-len(text), text))


_ENCODED_NAMES = "|".join(
    _base64_of(("PASSWORD", "password", "Password", "SECRET", "secret", "TOKEN", "token"))
)
"""A secret's name, as base64 of any text holding it writes it (``UEFTU1dPUkQ`` ...)."""


def _base64_assignment_check(match: re.Match[str]) -> bool:
    """Base64 of text that sets a secret's name to a value: a ``.env`` file, ``env`` output."""
    value = "".join(_secret(match).split())
    value = value[: len(value) - len(value) % 4] if not value.endswith("=") else value
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8", "replace")[:8192]
    except ValueError:
        return False
    rule = next(r for r in assignments.RULES if r.name == "secret_assignment")
    return any(_assignment_check(m) for m in rule.pattern.finditer(decoded))


RULES: tuple[Rule, ...] = (
    _rule(
        "private_key_base64",
        _B + r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{20,}={0,2}"
        r"(?:[ \t]*\r?\n[ \t]*(?:[A-Za-z0-9+/]{16,}|" + _B64_TAIL + r")={0,2}"
        r"(?=[ \t]*(?:\r?\n|\Z)))*",
        r"LS0tLS1CRUdJTi",
        markers=("ls0tls1crudjti",),
        check=_encoded_private_key,
        example=_fake("client-key-data: ", "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCkZha2U="),
    ),
    _rule(
        "webhook_url",
        r"https://hooks\.zapier\.com/hooks/catch/\d+/[A-Za-z0-9]+/?"
        r"|https?://[A-Za-z0-9.-]+(?::\d+)?/hooks/[a-z0-9]{26}(?![A-Za-z0-9])"
        r"|https://maker\.ifttt\.com/(?:trigger/[^/\s]+/(?:json/)?with/)?key/[A-Za-z0-9_-]{16,}",
        r"hooks\.zapier\.com|/hooks/[a-z0-9]{26}|maker\.ifttt\.com",
        markers=("/hooks/", "ifttt"),
        check=_webhook_check,
        example=_fake("https://hooks.zapier.com/hooks/catch/", "123456/abcfake/"),
    ),
    _rule(
        "escaped_secret_assignment",
        r"(?P<name>\\[\"'][^\"'\\\n]{1,80}\\[\"'])[ \t]*(?P<sep>:|=)[ \t]*"
        r"\\(?P<quote>[\"'])(?P<secret>(?:[^\\\n]|\\(?![\"'])[^\n]){1,300}?)\\(?P=quote)",
        r"(?i:(?:pass|pwd|secret|token|key|auth|credential|cookie|sess|sid)[a-z0-9_.-]{0,40}"
        r"\\[\"'][ \t]*[:=])",
        ("\\",),
        _escaped_check,
        example=_fake('"{\\"password\\": \\"', "FakeEscapedPassw0rd", '\\"}"'),
    ),
    _rule(
        "urlencoded_secret",
        r"(?:(?<![\w.-])|(?<=%[0-9A-Fa-f]{2}))(?P<name>[A-Za-z_][\w.-]{0,80}?)(?:%22)?(?i:%3D|%3A)(?:%22)?"
        r"(?P<secret>(?:[A-Za-z0-9._~+-]|%(?!2[26Cc]|7[Dd])[0-9A-Fa-f]{2}){4,300})",
        r"(?i:(?:pass|pwd|secret|token|key|auth|credential|cookie|sig|sess|sid)"
        r"[a-z0-9_.-]{0,40}(?:%22)?%3[ad])",
        ("%3d", "%3a"),
        _urlencoded_check,
        example=_fake("next=%2Fhome%3Faccess_token%3D", "Fake0Encoded1Token2", "%26x%3D1"),
    ),
    _rule(
        "terraform_output_value",
        r"\"sensitive\":\s*true,\s*(?:\"type\":\s*\"[^\"\n]*\",\s*)?"
        r"\"value\":\s*(?P<secret>\"(?:[^\"\\\n]|\\.)+\")",
        r"\"sensitive\":[ \t]*true",
        ('"value"',),
        _terraform_check,
        context_lines=2,
        example=_fake('"sensitive": true, "type": "string", "value": "', "FakeTfPassw0rd", '"'),
    ),
    _rule(
        "auth_tuple",
        r"(?i:(?:(?<!o)auth|credentials?)[ \t]*(?:=[ \t]*)?[(\[][ \t]*)(?P<q>[\"'])[^\"'\n]*(?P=q)"
        r"[ \t]*,[ \t]*(?P<secret>\"[^\"\n]+\"|'[^'\n]+')",
        r"(?i:(?:auth|credentials?)[ \t]*=?[ \t]*[(\[][ \t]*[\"'])",
        ("auth", "credential"),
        _literal_check,
        example=_fake("requests.get(url, auth=('deploy', '", "FakeTuplePassw0rd", "'))"),
    ),
    _rule(
        "docker_config_base64",
        _B + r"eyJhdXRocyI6[A-Za-z0-9+/]{16,}={0,2}",
        r"eyJhdXRocyI6",
        ("eyjhdxrocyi6",),
        example=_fake(".dockerconfigjson: ", "eyJhdXRocyI6eyJmYWtlLmV4YW1wbGUiOnt9fX0="),
    ),
    _rule(
        "base64_url_credentials",
        r"(?<![A-Za-z0-9+/=])(?P<secret>[A-Za-z0-9+/]{16,}={0,2})(?![A-Za-z0-9+/=])",
        r"Oi8v|ovL|6Ly[89+/]",  # "://" in base64, at each of its three alignments
        ("oi8v", "ovl", "6ly"),
        _base64_url_credentials_check,
        example=_fake("DATABASE_URL: ", "cmVkaXM6Ly86RmFrZVB3QGNhY2hlOjYzNzk="),
    ),
    _rule(
        "base64_json_secret",
        r"(?<![A-Za-z0-9+/=_-])(?P<secret>eyJ[A-Za-z0-9+/]{16,}={0,2})(?![A-Za-z0-9+/=_.-])",
        r"eyJ[A-Za-z0-9+/]{16}",
        ("eyj",),
        _base64_json_check,
        example=_fake("oauth.json: ", "eyJjbGllbnRfc2VjcmV0IjoiRmFrZUI2NEpzb25TZWNyZXQwIn0="),
    ),
    _rule(
        "base64_assignment_secret",
        r"(?<![A-Za-z0-9+/=_-])(?P<secret>[A-Za-z0-9+/]{16,8192}={0,2})(?![A-Za-z0-9+/=_.-])",
        r"(?:" + _ENCODED_NAMES + r")",
        tuple(name.lower() for name in _ENCODED_NAMES.split("|")),
        _base64_assignment_check,
        gate=_ENCODED_NAMES,
        example=_fake(".env: ", "REJfUEFTU1dPUkQ9RmFrZTBCNjRFbnYxUHcK"),
    ),
    _rule(
        "github_actions_mask",
        r"::add-mask::(?P<secret>[^\s'\"]+(?:[ \t]+[^\s'\"]+)*)",
        r"::add-mask::",
        ("::add-mask::",),
        _mask_check,
        example=_fake("echo ::add-mask::", "FakeMaskedValue01"),
    ),
    _rule(
        "bare_aws_secret_key",
        r"(?m:^(?:(?P<prev>[^\n]*)\n)?[ \t]*(?P<secret>[A-Za-z0-9/+]{40})[ \t]*\r?$)",
        r"(?m:^(?:[^\n]*\n)?[ \t]*[A-Za-z0-9/+]{40}[ \t]*\r?$)",  # with the line above it
        check=_bare_aws_secret_check,
        example=_fake("/Fake0Bare1Access2Key3For4Docs5Only6AB", "+C"),
    ),
    _rule(
        "bundler_credentials",
        r"\bBUNDLE_(?!BUILD__|MIRROR__)[A-Z0-9_]{0,128}?[A-Z0-9]__[A-Z0-9_]{1,128}"
        r"[ \t]*[=:][ \t]*[\"']?(?P<secret>[^\s\"']+)",
        r"BUNDLE_[A-Z0-9_]*__",
        ("bundle_",),
        lambda m: (
            not _secret(m).startswith(("-", "[REDACTED", "$", "http"))
            and not _TEMPLATED.match(_secret(m))
        ),
        example=_fake("BUNDLE_GEMS__CONTRIBSYS__COM=", "deploy:FakeBundlerPw0"),
    ),
)
"""This family's rules, in the order they are applied."""
