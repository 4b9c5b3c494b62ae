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


@pytest.mark.parametrize(
    "text",
    [
        'password = """\nZq4vL9pR2mX7tK3w\nHq3Zt8Lm2Xp7KdQw\n"""\nnext = 1',  # TOML, Python
        "api_key = '''Zq4vL9pR2mX7tK3w'''",
        'client_secret = """Zq4vL9pR2mX7tK3w\nHq3Zt8Lm2Xp7KdQw"""',
        "db:\n  password: |\n    Zq4vL9pR2mX7tK3w\n    Hq3Zt8Lm2Xp7KdQw\n  user: app",  # YAML
        "token: >-\n  Zq4vL9pR2mX7tK3w\n  Hq3Zt8Lm2Xp7KdQw\n",
    ],
)
def test_a_value_of_several_lines_goes_whole(text: str) -> None:
    """TOML's multi-line strings and YAML's block scalars: every line of the value goes."""
    out = BARE.redact(text).text
    assert "Zq4vL9pR2mX7tK3w" not in out, out
    assert "Hq3Zt8Lm2Xp7KdQw" not in out, out
    assert "[REDACTED:" in out, out


def test_text_of_several_lines_under_other_names_stays() -> None:
    """A docstring, a YAML description: not secrets."""
    for text in ('doc = """Return the token.\nRaises on a bad one."""', "description: |\n  a b\n"):
        assert BARE.redact(text).text == text


@pytest.mark.parametrize(
    "text",
    [
        '"Env": ["PATH=/usr/bin", "JWT_SECRET=correct horse battery staple", "HOME=/root"]',
        "environment:\n  - JWT_SECRET=correct horse battery staple\n  - DEBUG=1",
        "PATH=/usr/bin\x00JWT_SECRET=correct horse battery staple\x00HOME=/root\x00",
        "--build-arg JWT_SECRET=correct\\ horse\\ battery\\ staple",
    ],
)
def test_a_phrase_fills_its_entry_wherever_the_entry_ends(text: str) -> None:
    """An env entry ends at its line, its JSON string's quote, its NUL or a shell word's end.

    ``docker inspect`` prints ``"Env"`` as JSON strings, compose lists ``- NAME=...``,
    ``/proc/PID/environ`` separates entries with NUL, a shell escapes a space in a word.
    """
    out = BARE.redact(text).text
    for word in ("correct", "horse", "battery", "staple"):
        assert word not in out, out


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("+ NPM_TOKEN=dummy npm publish", " npm publish"),
        ("+ API_TOKEN=Xq7vL2pR9mZ4tK8w npm publish", " npm publish"),
        ("SECRET_KEY=foo python manage.py test", " python manage.py test"),
        ("SECRET_KEY=Xq7vL2pR9mZ4tK8w pytest tests", " pytest tests"),
        ("DEPLOY_TOKEN=Xq7vL2pR9mZ4tK8w make deploy", " make deploy"),
        ("export API_SECRET=Xq7vL2pR9mZ4tK8w docker push app", " docker push app"),
        ("JWT_SECRET=not set in environment", "not set in environment"),
        ("api_key=must be provided", "must be provided"),
        ("API_TOKEN=is required", "is required"),
        ("DB_PASSWORD=missing from the vault", "missing from the vault"),
    ],
)
def test_a_spaced_assignment_leaves_the_command_and_the_prose(text: str, kept: str) -> None:
    """An env prefix sets one word; the command after it, or a sentence, is no value.

    A program's name or a script after the first word starts a command.
    """
    out = BARE.redact(text).text
    assert out.endswith(kept), out
    assert "Xq7vL2pR9mZ4tK8w" not in out, out


@pytest.mark.parametrize(
    "text",
    [
        "JWT_SECRET=correct horse battery staple",
        "WALLET_PASSPHRASE=tortoise ladder omit velvet",
        "  API_SECRET=open sesame 42  ",
    ],
)
def test_a_passphrase_filling_its_env_line_still_goes(text: str) -> None:
    """A multi-word unquoted value alone on its line (an env dump, a ``.env``) is the value."""
    out = BARE.redact(text).text
    assert "[REDACTED:spaced_assignment]" in out, out
    assert text.split("=", 1)[1].rsplit(maxsplit=1)[-1] not in out, out
