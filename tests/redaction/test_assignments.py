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
    '{n}:\n  "{v}"',  # the value on the next line (pprint, rich, a wrapped YAML flow)
    '{n}= \\\n  "{v}"',  # a shell line continuation between the name and the value
    "--{n} \\\n  '{v}'",
]


def _cases() -> list[str]:
    return [
        form.format(n=name, v=value)
        for name in NAMES
        for form in FORMS
        for value in VALUES
        if " " not in value or "'" in form or '"' in form
    ] + [  # an env dump or a .env file: the value is the rest of the line, spaces and all
        form.format(n=name, v=value)
        for name in NAMES
        for form in ("{n}={v}", "export {n}={v}", "+ {n}={v}", "  {n}={v}")
        for value in VALUES
        if "." not in name and "-" not in name
    ]


@pytest.mark.parametrize("text", _cases())
def test_a_secret_name_in_any_spelling_loses_its_value(text: str) -> None:
    """The value goes; the name and the form stay."""
    out = BARE.redact(text).text
    assert not [v for v in VALUES if v in out or v.rsplit(" ", 1)[-1] in out], out
    assert "[REDACTED:" in out, out


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ('Authorization:\n "Zq4vL9pR2mX7tK3w"', "Zq4vL9pR2mX7tK3w"),
        ("Authorization:\n  'Basic dXNlcjpacTR2TDlwUjJtWDd0SzN3'", "dXNlcjpacTR2TDlwUjJtWDd0SzN3"),
        ('"Authorization":\n    "Zq4vL9pR2mX7tK3w"', "Zq4vL9pR2mX7tK3w"),
        ('X-Api-Key:\n  "Zq4vL9pR2mX7tK3w"', "Zq4vL9pR2mX7tK3w"),
        ("sshpass -p \\\n  'Zq4vL9pR2mX7tK3w' ssh host", "Zq4vL9pR2mX7tK3w"),
        ('docker login -u ci --password \\\n  "Zq4vL9pR2mX7tK3w" ghcr.io', "Zq4vL9pR2mX7tK3w"),
        ("curl -u deploy:\\\nZq4vL9pR2mX7tK3w https://x", "Zq4vL9pR2mX7tK3w"),
    ],
)
def test_a_quoted_value_whose_name_is_on_the_line_before(text: str, secret: str) -> None:
    r"""The name ends one line and its quoted value starts the next (or a ``\`` joins them)."""
    out = BARE.redact(text).text
    assert secret not in out, out
    assert "[REDACTED:" in out, out


def test_a_placeholder_is_never_read_as_a_value_again() -> None:
    """A second pass of the rules reads ``[REDACTED:...]``: no rule takes its ``[`` for a value."""
    for text in ("Authorization: Zq4vL9pR2mX7tK3w", "authorization: Zq4vL9pR2mX7tK3w\n"):
        out = BARE.redact(text)
        assert out.text == text.replace("Zq4vL9pR2mX7tK3w", "[REDACTED:authorization_header]")
        assert out.counts == {"authorization_header": 1}
