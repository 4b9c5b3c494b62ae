"""Credentials in URLs and connection strings, and ``curl -u user:password``.

Each rule's examples and look-alikes beyond the first example are in ``urls.toml`` beside
this module.
"""

from __future__ import annotations

from reflexkit.redaction._checks import (
    _secret,
    _url_check,
)
from reflexkit.redaction._rules._base import Rule, _fake, _rule
from reflexkit.redaction._shapes import (
    _TEMPLATED,
    _randomish,
)

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
