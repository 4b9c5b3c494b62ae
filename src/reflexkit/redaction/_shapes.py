"""Telling secrets from look-alikes: names that say secret, values that look generated.

The questions every rule asks of a value it found: is its name a secret's (``password``,
``api_key``), is the value code, a path, a placeholder, a number, an identifier?
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import NamedTuple

from reflexkit._pattern import Pattern

_QUOTED = r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'"
"""A quoted string literal, either quote, escapes allowed."""

_STRONG_STEMS = (
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "credential",
    "apikey",
    "accesskey",
    "privatekey",
    "signingkey",
    "encryptionkey",
    "masterkey",
    "accountkey",
    "sessionkey",
    "authkey",
    "clientkey",
    "licensekey",
    "webhookkey",
    "connectionstring",
)
_STRONG_WORDS = frozenset({"pwd", "pass", "pw", "pword", "passwort", "dsn", "sig", "psk"})
_MISSPELT = Pattern(r"p[a@4]?s{1,3}w(?:[o0]?r?d|rd)|pass(?:code|wrd)")
"""Passwords as people mistype and abbreviate them: ``pasword``, ``paswd``, ``PASSWRD``,
``pswd``, ``passw0rd``, ``passcode``."""
_SECRET_EXTENSIONS = frozenset({"key", "pass", "pwd", "password", "passwd", "token", "secret"})
"""A dotted name ending in one of these (``gpr.key``, ``tls.key``) is a property that holds
the secret, not a file name such as ``token.py``."""
_SESSION_IDS = ("sessid", "sessionid")
_WEAK_WORDS = frozenset({"key", "auth", "cookie", "sid", "session", "bearer", "signature"})
_NOT_SECRET_WORDS = frozenset(
    {
        "hash",
        "hashed",
        "digest",
        "count",
        "counts",
        "num",
        "number",
        "length",
        "len",
        "size",
        "type",
        "types",
        "id",
        "ids",
        "url",
        "uri",
        "urls",
        "endpoint",
        "file",
        "files",
        "path",
        "paths",
        "dir",
        "folder",
        "name",
        "names",
        "field",
        "fields",
        "prompt",
        "policy",
        "expiry",
        "expires",
        "expiration",
        "exp",
        "ttl",
        "timeout",
        "lifetime",
        "reset",
        "min",
        "max",
        "limit",
        "usage",
        "use",  # ``token_use``: what a token is for
        "helper",  # ``credential.helper``: the program that stores them
        "helpers",
        "used",
        "regex",
        "pattern",
        "header",
        "scheme",
        "mode",
        "enabled",
        "disabled",
        "required",
        "format",
        "version",
        "validator",
        "validators",
        "validation",
        "env",
        "var",
        "source",
        "provider",
        "method",
        "kind",
        "label",
        "hint",
        "strength",
        "rotation",
        "store",
        "manager",
        "prefix",
        "suffix",
        "error",
        "errors",
        "exception",
        "class",
        "fn",
        "func",
        "function",
        "callback",
        "handler",
        "input",
        "widget",
        "form",
        "placeholder",
        "changed",
        "is",
        "has",
        "check",
        "checker",
        "test",
        "tests",
        "status",
        "state",
        "index",
        "idx",
        "position",
        "pos",
        "start",
        "end",
        "offset",
        "line",
        "col",
        "column",
        "location",
        "algorithm",
        "algo",
        "alg",
        "encoding",
        "rounds",
        "iterations",
        "cost",
        "host",
        "hostname",
        "port",
        "user",
        "username",
        "login",
        "email",
        "owner",
        "issuer",
        "audience",
        "scope",
        "scopes",
        "budget",
        "rate",
        "window",
        "cache",
        "public",
        "pub",
        "primary",
        "sort",
        "partition",
        "foreign",
        "idempotency",
        "tokens",
        "tokenizer",
        "tokenize",
        "type_",
        "fingerprint",
        "service",
        "backend",
        "builder",
        "factory",
        "generator",
        "loader",
        "parser",
        "client",
        "request",
        "response",
        "refresh_url",
        "py",
        "js",
        "ts",
        "go",
        "rs",
        "rb",
        "java",
        "json",
        "yaml",
        "yml",
        "toml",
        "txt",
        "md",
        "sh",
        "pem",
        "crt",
        "cfg",
        "ini",
        "lock",
        "tsx",
        "jsx",
        "kt",
        "php",
        "cs",
        "cpp",
        "h",
        "c",
        "description",
        "doc",
        "docs",
        "help",
        "message",
        "msg",
        "text",
        "title",
        "template",
        "example",
        "sample",
        "schema",
        "spec",
        "model",
        "models",
        "view",
        "views",
        "length_min",
        "storage",
        "vault",
        "ref",
        "reference",
        "arn",
        "region",
        "account",
        "key_id",
        "stdin",  # --password-stdin: the flag says where the secret comes from
        "fd",
    }
)
_NAME_WORDS = Pattern(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")

_SCHEMES = frozenset({"bearer", "basic", "token", "digest", "negotiate", "ntlm", "apikey"})
_KEYWORDS = frozenset(
    {
        "await",
        "new",
        "yield",
        "lambda",
        "function",
        "async",
        "typeof",
        "require",
        "import",
        "not",
        "self",
        "this",
        "return",
        "static",
        "const",
        "let",
        "var",
        "if",
        "else",
        "def",
        "fn",
        "func",
        "make",
        "getattr",
        "getenv",
        "input",
        "prompt",
        "read",
        "load",
        "open",
    }
)
_PLACEHOLDER = Pattern(
    r"(?i)^(?:none|null|nil|true|false|yes|no|on|off|undefined"
    r"|(?:[a-z]+[+_-])?(?:redacted|masked|hidden|filtered|removed|omitted)"  # DATA+OMITTED
    r"|todo|tbd|placeholder|deleted"  # PHPSESSID=deleted: PHP unsetting its cookie
    r"|string|str|bytes|int|bool|any|optional|secretstr|text|required|missing|invalid"
    r"|incorrect|wrong|expired|revoked|active|inactive|enabled|disabled|empty|not|unset|set"
    r"|provided|given|ok|valid|must|should"
    r"|mismatch|error|failed|too|for|the|and|is|are|was|of|in|to|with|from|default"
    r"|\*+|x{3,}(?:-x{3,})*|\.{2,}|-+|_+|#+|•+)$"  # XXXXX-XXXXX: actions/setup-node's
)
_TEMPLATED = Pattern(
    r"^(?:\$\{?[A-Za-z_]|\$\(|%\(|%[A-Za-z_]+%|\{\{|\{%|#\{|@\{|<[^>]*>$|\((?!\))"
    r"|\[REDACTED|\[[A-Za-z_ -]*\]$)"
)
_NUMBERS = Pattern(r"[\d.:,/+-]+")
_CODE = Pattern(r"[A-Za-z_][\w.]*[\[(]|.*\w\(|.*==\s*\S")
_DOTTED = Pattern(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_PATH = Pattern(r"(?:~|\.{1,2})?/[\w.@+~-]*(?:/[\w.@+~-]*)*|[A-Za-z]:\\[^\s]*")
_URL_VALUE = Pattern(r"[A-Za-z][A-Za-z0-9+.-]*://")
_RELATIVE_PATH = Pattern(r"[A-Za-z_.][\w.-]*(?:/[A-Za-z_.][\w.-]*){2,}/?")
_KEY_ID = Pattern(r"[0-9A-F]{16}|[0-9A-F]{40}")
"""A GPG key id or fingerprint: ``user.signingkey=3AA5C34371567BD2`` names a key, holds none."""
_SCREAMING = Pattern(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*")
_AWS_SECRET_SHAPE = Pattern(r"[A-Za-z0-9/+]{40}")
_WORDY = Pattern(r"(?:[A-Z]{2,}(?=[A-Z][a-z]|$|[_\-.])|[A-Z]?[a-z]{2,}|[_\-.])+")
_FILE_EXT = Pattern(r"\.(?:[a-z]{1,4})$")
_IDENTIFIER = Pattern(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"  # a UUID
    r"|[0-9A-F]{16}|[0-9A-F]{40}"  # a GPG key id or fingerprint (``GPG_KEY=7169605F...``)
    r"|(?:[A-Za-z][A-Za-z0-9]{0,15}-)+[0-9a-f]{24,}"  # a CI cache key: ``Linux-pip-<sha256>``
)
"""Identifiers a weak name (``key``, ``session``) may hold: a generated look, but no secret."""


@functools.lru_cache(maxsize=4096)
def _name_strength(name: str) -> int:
    """Return 2 when *name* says secret (``DB_PASSWORD``), 1 when it may (``auth``), else 0."""
    bare = name.strip("\"'-").rstrip()
    lower = bare.lower()
    if not bare or (_FILE_EXT.search(lower) and lower.rsplit(".", 1)[-1] not in _SECRET_EXTENSIONS):
        return 0
    words = [w.lower() for w in _NAME_WORDS.findall(bare)]
    if "".join(words).endswith(_SESSION_IDS):
        return 1  # JSESSIONID, PHPSESSID, ASP.NET_SessionId: a session cookie's value
    if _names_no_secret(words):
        return 0
    joined = "".join(words)
    if (
        any(stem in joined for stem in _STRONG_STEMS)
        or _STRONG_WORDS.intersection(words)
        or _MISSPELT.search(joined)
        or words[-1].endswith("pass")  # storepass, keypass, PGPASS
    ):
        return 2
    return 1 if _WEAK_WORDS.intersection(words) else 0


def _names_no_secret(words: list[str]) -> bool:
    """A name whose words say it holds something else: ``key_file``, ``public_key``."""
    return (
        not words
        or words[-1] in _NOT_SECRET_WORDS
        or "public" in words
        or "tokens" in words
        or "existing" in words  # Helm's ``auth.existingSecret``: the name of a Secret object
    )


def _randomish(value: str) -> bool:
    """Tell a generated token (``dXNlcjpwYXNz``, ``a8Kf2``) from words (``JWTAuthentication``)."""
    if len(value) < 12:  # noqa: PLR2004 -- shorter tokens are not told from words by shape
        return False
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    if has_digit and has_alpha:
        return not _DOTTED.fullmatch(value) or any(_randomish(part) for part in value.split("."))
    return has_alpha and _WORDY.fullmatch(value) is None


def _looks_path(value: str) -> bool:
    """A file path (``/etc/app/key.pem``, ``path/to/id_rsa``), not a token holding ``/``."""
    if _PATH.fullmatch(value) is not None:
        return not any(
            len(part) >= 16 and _randomish(part)  # noqa: PLR2004
            for part in value.split("/")
        )
    # A relative path of three or more words: each part a name, none generated-looking
    # (base64 holds ``/`` too, between parts that mix digits and letters).
    return _RELATIVE_PATH.fullmatch(value) is not None and all(
        sum(c.isdigit() for c in part) <= 2 and not _randomish(part)  # noqa: PLR2004
        for part in value.split("/")
    )


def _is_aws_secret(value: str) -> bool:
    return (
        _AWS_SECRET_SHAPE.fullmatch(value) is not None
        and any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() or c in "/+" for c in value)
    )


_SPECIALS = frozenset("!@#$%^&*()=+")
_SPECIALS_MIN = 4
_PUNCTUATED_MIN = 16


def _punctuated(value: str) -> bool:
    """A generated value drawn from letters, digits and punctuation (Django's ``SECRET_KEY``).

    Code has punctuation too, but not four kinds of it mixed with digits, without a space,
    in sixteen characters or more.
    """
    return (
        len(value) >= _PUNCTUATED_MIN
        and sum(c in _SPECIALS for c in value) >= _SPECIALS_MIN
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
        and not any(c.isspace() for c in value)
    )


_SAYS = 2
_PIN_DIGITS = 6
_SHORTEST = 4
_WORD = Pattern(r"[A-Za-z_-]+")
_PARTS = Pattern(r"[-_.:/]")
_parts = _PARTS.split


class _Found(NamedTuple):
    """A value a rule found, and how: what :data:`_VERDICTS` asks about."""

    value: str
    strength: int  # 2: its name says secret; 1: it may; 0: it doesn't
    prose_follows: bool
    quoted: bool


_VERDICTS: tuple[tuple[str, Callable[[_Found], object], bool], ...] = (
    # (what the value is, whether it is that, secret or not); the first that applies decides.
    ("nothing", lambda f: not f.value, False),
    ("already redacted", lambda f: f.value.startswith("[REDACTED"), False),
    ("under a name that says no secret", lambda f: f.strength == 0, False),
    ("an AWS secret key", lambda f: _is_aws_secret(f.value), True),
    ("punctuated, named secret", lambda f: f.strength == _SAYS and _punctuated(f.value), True),
    ("a placeholder", lambda f: _PLACEHOLDER.match(f.value), False),
    ("a template", lambda f: _TEMPLATED.match(f.value), False),
    ("a URL", lambda f: _URL_VALUE.match(f.value), False),
    ("a path", lambda f: _looks_path(f.value), False),
    # A number (digits alone are judged at the end).
    ("a number", lambda f: not f.value.isdigit() and _NUMBERS.fullmatch(f.value), False),
    ("a keyword", lambda f: f.value in _KEYWORDS, False),
    ("code, unquoted", lambda f: not f.quoted and _CODE.match(f.value), False),
    ("a dotted name", lambda f: _DOTTED.fullmatch(f.value) and not _randomish(f.value), False),
    ("a key id", lambda f: _KEY_ID.fullmatch(f.value), False),
    ("DOCKER_PASSWORD", lambda f: _SCREAMING.fullmatch(f.value) and _name_strength(f.value), False),
    # Under a name that may be a secret's (``key``, ``auth``): only what looks generated.
    ("an identifier", lambda f: f.strength == 1 and _IDENTIFIER.fullmatch(f.value), False),
    ("generated", lambda f: f.strength == 1 and any(map(_randomish, _parts(f.value))), True),
    ("anything else", lambda f: f.strength == 1, False),
    # Under a secret's name: PINs and passwords, not counts, ports or prose.
    ("six digits or more", lambda f: f.value.isdigit() and len(f.value) >= _PIN_DIGITS, True),
    ("fewer digits", lambda f: f.value.isdigit(), False),
    ("shorter than four", lambda f: len(f.value) < _SHORTEST, False),
    ("a word before more words", lambda f: f.prose_follows and _WORD.fullmatch(f.value), False),
)
"""How :func:`value_is_secret` decides, as data: rules in order, the first that applies wins,
and a value none applies to is a secret."""


def value_is_secret(
    value: str, strength: int, *, prose_follows: bool = False, quoted: bool = False
) -> bool:
    """Tell a credential value from code, words, paths, numbers, types and placeholders.

    Args:
        value: The value, quotes stripped.
        strength: 2 when its name says secret (``password``), 1 when it may (``auth``).
        prose_follows: More words follow an unquoted value (``password: must be set``).
        quoted: The value was in quotes: a string, never a call (Django's keys hold ``(``).
    """
    found = _Found(value, strength, prose_follows, quoted)
    return next((secret for _, applies, secret in _VERDICTS if applies(found)), True)


# --- the rule table -------------------------------------------------------------------------


_SPREAD_MIN = 8
_SPREAD_SWITCHES = 4


def _generated_looking(value: str) -> bool:
    """Digits and letters alternate often (``Gz7Vq2Lm9Xp4``), unlike identifiers and words.

    ``PKCS12PrivateKeyTypes``, ``GoogleCredentials`` or ``utf8String`` may be taken for a
    value by a rule reading source code; spread everywhere, they would damage the code.
    """
    switches = sum(
        1
        for a, b in itertools.pairwise(value)
        if a.isalnum() and b.isalnum() and a.isdigit() != b.isdigit()
    )
    return switches >= _SPREAD_SWITCHES
