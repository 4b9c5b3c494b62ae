"""A secret's name in any spelling, set to a value in any of the usual forms (#29, round 3).

camelCase, kebab-case, UPPER_CASE and dotted names; ``=``, ``:``, JSON, Python, YAML, XML,
TOML and flags; values generated, short, punctuated or spaced. Before this round 39 of the
combinations leaked: XML elements whose tag was not on a fixed list, and dotted flags.
"""

from __future__ import annotations

import pytest

from reflexkit.redaction import Redactor

BARE = Redactor(environ={})
VALUES = ["Xq7vL2pR9mZ4tK8w", "hunter2hunter2", "p@ss#w0rd!(x)", "correct horse battery staple"]
NAMES = [
    *("password", "Password", "PASSWORD", "dbPassword", "db-password", "DB_PASSWORD"),
    *("db.password", "apiKey", "api-key", "API_KEY", "ApiKey", "x-api-key", "accessToken"),
    *("access-token", "ACCESS_TOKEN", "clientSecret", "client-secret", "CLIENT_SECRET"),
    *("privateKey", "private-key", "authToken", "auth-token", "secretKey", "secret-key"),
    *("SecretAccessKey", "sessionToken", "refresh-token", "bearerToken", "webhookSecret"),
    *("signingSecret", "encryptionKey", "masterKey", "adminPassword", "rootPassword"),
    *("passphrase", "Passwd", "pwd", "PWD", "token", "Token", "TOKEN", "secret", "SECRET"),
]
FORMS = [
    "{n}={v}",
    "{n}: {v}",
    '"{n}": "{v}"',
    "'{n}': '{v}'",
    '{n} = "{v}"',
    '  {n}: "{v}"',
    "<{n}>{v}</{n}>",
    '{n}="{v}"',
    "--{n}={v}",
    "--{n} '{v}'",
]


def _cases() -> list[str]:
    return [
        form.format(n=name, v=value)
        for name in NAMES
        for form in FORMS
        for value in VALUES
        if " " not in value or "'" in form or '"' in form
    ]


@pytest.mark.parametrize("text", _cases())
def test_a_secret_name_in_any_spelling_loses_its_value(text: str) -> None:
    """The value goes; the name and the form stay."""
    out = BARE.redact(text).text
    assert not [v for v in VALUES if v in out], out
    assert "[REDACTED:" in out, out
