"""Secrets a wrap carried onto the next lines: ``fold``, ``base64 -w 76``, JWTs broken at dots.

The sweep folds lines holding several kinds of secret at every width from 25 to 80 columns
(as ``fold -w N`` does) and checks that no part of the secret of 8 characters or more is
left on any line. Lines after a secret that are not its rest (a hash, a UUID, a version, a
path, a word, an assignment of their own) stay.
"""

from __future__ import annotations

import base64
import json

import pytest

from reflexkit.redaction import Redactor

BARE = Redactor(environ={})

SECRETS = {
    "stripe": ("export STRIPE_KEY=", "sk_live_" + "51Hq3Zt8Lm2Xp7KdQw9Er4Ty6Ui1Op0As5Df", ""),
    "github": ("GITHUB_TOKEN=", "ghp_" + "Zq4Xw9Pa4Lm2Kd8Hq3Zt8Lm2Xp7KdQw9Er4T", ""),
    "aws": ("aws_secret_access_key = ", "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYzq4Xw9Pa4L", ""),
    "jwt": (
        "Authorization: Bearer ",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6Ikpv"
        "aG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ." + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5",
        "",
    ),
    "password": ("DB_PASSWORD=", "Hq3Zt8Lm2Xp7" + "KdQw9Er4Ty6Ui1Op0", ""),
    "url": ("DATABASE_URL=postgres://app:", "Hq3Zt8Lm2Xp7" + "KdQw9Er4Ty", "@db:5432/app"),
    "anthropic": (
        "key: ",
        "sk-ant-api03-" + "Zq4Xw9Pa4Lm2Kd8Hq3Zt8Lm2Xp7KdQw9Er4Ty6Ui1Op0As5DfGh7Jk2Lm3Nb4Vc5Xz6"
        "Qw7Er8Ty9Ui0Op1As2Df3Gh4JkAA",
        "",
    ),
}


def _fold(text: str, width: int) -> str:
    return "\n".join(text[i : i + width] for i in range(0, len(text), width))


def _pieces(line: str, start: int, end: int, width: int) -> list[str]:
    """The parts of ``line[start:end]`` as they lie on each folded line, 8 characters or more."""
    found = []
    for row in range(0, len(line), width):
        a, b = max(row, start), min(row + width, end)
        if b - a >= 8:
            found.append(line[a:b])
    return found


@pytest.mark.parametrize("name", SECRETS)
def test_no_part_of_a_folded_secret_survives(name: str) -> None:
    """``fold -w N`` at every width from 14 to 80: every part of 8 or more characters goes.

    Under 30 columns the wrap cuts the secret's name too (``DB_PASS`` / ``WORD=...``,
    ``aws_secret_access_key`` / ``= ...``, ``postgres:`` / ``//app:...``).
    """
    before, secret, after = SECRETS[name]
    line = f"{before}{secret}{after} and the rest of the line"
    leaks = {}
    for width in range(14, 81):
        out = BARE.redact(_fold(line, width) + "\n").text
        left = [p for p in _pieces(line, len(before), len(before) + len(secret), width) if p in out]
        if left:
            leaks[width] = left
    assert not leaks


def test_base64_wrapped_at_76_columns_goes_whole() -> None:
    """``base64 -w 76`` of a JSON file holding secrets: every line of the block goes."""
    document = json.dumps(
        {
            "client_id": "app",
            "client_secret": "Zq4Xw9Pa4Lm2Kd8Hq3Zt8Lm2Xp7KdQw9Er4T",
            "refresh_token": "1//0gLm2Xp7KdQw9Er4Ty6Ui1Op0As5DfGh7Jk2Lm3",
        }
    )
    encoded = base64.b64encode(document.encode()).decode()
    lines = [encoded[i : i + 76] for i in range(0, len(encoded), 76)]
    out = BARE.redact("$ base64 -w 76 creds.json\n" + "\n".join(lines) + "\n$ echo done\n").text
    assert not [line for line in lines if line[:16] in out], out
    assert out.endswith("$ echo done\n")


JWT = SECRETS["jwt"][1]
HEADER, PAYLOAD, SIGNATURE = JWT.split(".")


@pytest.mark.parametrize(
    "text",
    [
        f"Authorization: Bearer {HEADER}\n.{PAYLOAD}\n.{SIGNATURE}\n",
        f"token: {HEADER}.\n{PAYLOAD}.\n{SIGNATURE}\n",
        f"{HEADER}\n.{PAYLOAD}.{SIGNATURE}\n",
        f'"id_token": "{HEADER}.{PAYLOAD}\n.{SIGNATURE}"',
        f"{HEADER}.\n{PAYLOAD}.\n{SIGNATURE}",
    ],
)
def test_a_jwt_broken_before_or_after_its_dots_goes_whole(text: str) -> None:
    """Each part of a JWT goes, wherever the lines break."""
    out = BARE.redact(text).text
    assert not [part for part in (HEADER, PAYLOAD, SIGNATURE) if part[-12:] in out], out


@pytest.mark.parametrize(
    "after",
    [
        "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b fix the login test",
        "550e8400-e29b-41d4-a716-446655440000 created",
        "v1.24.3-rc1 released",
        "2026-11-28T12:00:00Z INFO started",
        "Traceback (most recent call last):",
        "NEXT_TOKEN=placeholder",
        "tests/test_login.py F.",
        "/usr/lib/python3.11/site-packages/app.py",
        "payload_b64 = 'aGVsbG8gd29ybGQ='",
        "  indented Zq4Xw9Pa4Lm2Kd8Hq3Zt8 stays: not at the start of its line",
    ],
)
def test_the_line_after_a_secret_stays_when_it_is_not_its_rest(after: str) -> None:
    """A hash, a UUID, a version, a date, a word, an assignment, a path: its own line."""
    out = BARE.redact(f"DB_PASSWORD=Hq3Zt8Lm2Xp7KdQw9\n{after}\n").text
    assert out == f"DB_PASSWORD=[REDACTED:secret_assignment]\n{after}\n"


def test_a_certificate_body_is_no_secret_head() -> None:
    """Base64 lines of a certificate, before a line that happens to look generated, stay."""
    body = "MIIDazCCAlOgAwIBAgIUFake0Cert1Body2For3The4Test5Only6Xq7Wz8Lm9Kp"
    text = f"-----BEGIN CERTIFICATE-----\n{body}\n{body}\nFk7Qz2Lm9Wx4Rt6Yp1Nc8Vb3Hj5\n"
    assert BARE.redact(text).text == text


def test_a_wrapped_test_id_keeps_its_parameters() -> None:
    """A test's id a terminal wrapped inside its parameters names a test: nothing goes."""
    text = (
        "FAILED tests/test_api.py::test_a_long_parametrised_name_that_wraps_at_eighty[key=Ab12\n"
        "Cd34Ef56Gh78Ij90Kl12] - assert 401 == 200\n"
    )
    assert BARE.redact(text).text == text


def test_an_env_dump_in_base64_wrapped_at_76_columns_goes_whole() -> None:
    """``env | base64``: the secrets' lines are found encoded, and the block goes whole."""
    env = (
        "HOME=/root\nLANG=C.UTF-8\nDB_PASSWORD=Hq3Zt8Lm2Xp7KdQw9Er4Ty6Ui\n"
        "GITHUB_TOKEN=ghp_Zq4Xw9Pa4Lm2Kd8Hq3Zt8Lm2Xp7KdQw9Er4T\nPATH=/usr/bin:/bin\n"
    )
    encoded = base64.b64encode(env.encode()).decode()
    lines = [encoded[i : i + 76] for i in range(0, len(encoded), 76)]
    out = BARE.redact("$ env | base64\n" + "\n".join(lines) + "\n$ done\n").text
    assert not [line for line in lines if line in out], out


@pytest.mark.parametrize(
    "text",
    [
        "DB_PASS\nWORD=Hq3Zt8Lm2Xp7KdQw9Er4",
        "export GITHUB_TO\nKEN=ghp_Zq4Xw9Pa4Lm2Kd8Hq3Zt8Lm2Xp7KdQw9Er4T",
        "client_sec\nret: Hq3Zt8Lm2Xp7KdQw9Er4",
        "Authorization: Bea\nrer Hq3Zt8Lm2Xp7KdQw9Er4",
        "DATABASE_URL=postgres:\n//app:Hq3Zt8Lm2Xp7KdQw9Er4@db/app",
    ],
)
def test_a_name_cut_by_a_wrap_still_names_its_secret(text: str) -> None:
    """A terminal or ``fold`` cut the name itself: the two parts read as one word."""
    out = BARE.redact(text).text
    assert "Hq3Zt8Lm2Xp7" not in out, out
    assert "Zq4Xw9Pa4Lm2" not in out, out
    assert out.count("\n") == text.count("\n"), out  # the lines stay where they were


def test_words_cut_by_a_wrap_that_name_nothing_stay() -> None:
    """Prose wrapped mid-word, and a YAML mapping under a secret's name, keep their form."""
    for text in (
        "the pass\nword policy requires 12 characters",
        "password:\n  file: /run/secrets/db\n  mode: 0400",
        "tok\nenizer loaded in 3.2s",
    ):
        assert BARE.redact(text).text == text
