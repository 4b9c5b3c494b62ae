"""Credentials in URLs and connection strings, and ``curl -u user:password``.

Each rule's examples and look-alikes beyond the first example are in ``urls.toml`` beside
this module.
"""

from __future__ import annotations

import re

from reflexkit.redaction._checks import (
    _secret,
    _url_check,
    _url_check_value,
)
from reflexkit.redaction._rules._base import Rule, _fake, _rule
from reflexkit.redaction._shapes import (
    _TEMPLATED,
    _randomish,
)


def _wrapped_url_check(match: re.Match[str]) -> bool:
    """A URL's ``user:password`` that a wrap (``fold``, a terminal) cut across lines."""
    _, colon, password = _secret(match).partition(":")
    password = "".join(password.split())
    return bool(colon) and bool(password) and _url_check_value(password)


RULES: tuple[Rule, ...] = (
    _rule(
        "url_password",
        r"(?i:\b[a-z][a-z0-9+.-]*://|\b[a-z][a-z0-9+.-]{2,}//|\bnetloc=[\"'])(?P<user>[^\s:/@\"'<>`[]*):(?P<secret>[^\s\"'<>`]*)"
        r"@(?=(?:[A-Za-z0-9._~-]*|\[[0-9A-Fa-f:.]+\])(?::\d*)?(?:[/?#\s\"'<>`,;)\]}]|$))",
        r"://[^ \t\n@]*@|[A-Za-z0-9]//[^ \t\n@]*@|netloc=[\"'][^ \t\n@]*@",
        ("//", "netloc="),  # ``postgresql+psycopg2//u:p@h``: SQLAlchemy echoes a bad URL
        _url_check,
        gate=r"//[^\s@]{0,256}@|netloc=",
        example=_fake("redis://:", "fake/pa@ss+word", "@cache:6379/0"),
    ),
    _rule(
        "url_password_wrapped",
        r"(?i:\b[a-z][a-z0-9+.-]*://)"
        r"(?P<secret>[^\s@/\\\"'<>`]{0,256}(?:\r?\n[^\s@/\\\"'<>`]{0,256}){1,2})"
        r"@(?=[A-Za-z0-9\[])",
        r"://[^ \t\n@/]{0,256}(?:\n[^ \t\n@/]{0,256}){1,2}@",
        ("://",),
        _wrapped_url_check,
        example=_fake(
            "DATABASE_URL=postgres://app:", "Fake0Wrapped1", "\n", "Url2Pw", "@db:5432/app"
        ),
    ),
    _rule(
        "go_mysql_dsn",
        r"(?<![\w.:/-])(?P<user>[^\s:@\"'`/(]*):(?P<secret>[^\s\"'`]+)@(?:tcp6?|udp|unix)\(",
        r"@(?:tcp6?|udp|unix)\(",
        ("@tcp", "@udp", "@unix"),
        lambda m: not _secret(m).startswith("[REDACTED") and not _TEMPLATED.match(_secret(m)),
        example=_fake("root:", "FakeGoDsnPassw0rd", "@tcp(db:3306)/app?parseTime=true"),
    ),
    _rule(
        "url_token",
        r"(?i:\b[a-z][a-z0-9+.-]*://)(?P<secret>[A-Za-z0-9._~%-]{16,})"
        r"(?=(?::[^\s\"'<>`@/]*)?@(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::\d*)?(?:[/?#\s\"'<>`,;)\]}]|$))",
        r"://[^ \t\n@]*@",
        ("://",),
        lambda m: _randomish(_secret(m)),
        example=_fake("git clone https://", "Fake0Url1Token2For3Docs", "@github.com/acme/app.git"),
    ),
    _rule(
        "curl_user",
        r"(?:^|[\s\"'])(?:-u|--user|--proxy-user|-U)(?:[ \t]+|=)?[\"']?(?P<user>[^\s:\"']*):"
        r"(?P<secret>[^\s\"']+)",
        r"(?:^|[ \t\"'])(?:-u|--user|--proxy-user|-U)[ \t=]*[\"']?[^ \t\n:\"']*:[^ \t\n]",
        ("-u", "--user", "--proxy-user"),
        lambda m: (
            not _secret(m).startswith(("[REDACTED", "$"))
            and _secret(m) not in {"-", "*"}
            and not m.group("user").startswith("<")  # ``--user <user:password>``: help text
        ),
        example=_fake("curl -u deploy:", "fake-Passw0rd", " https://example.com"),
    ),
)
"""This family's rules, in the order they are applied."""
