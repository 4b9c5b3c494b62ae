"""Redaction: secrets out of failure output before it is stored, printed or sent anywhere.

Three layers, each replacing a secret by ``[REDACTED:<rule>]``:

1. **Multi-line secrets**: PEM, OpenSSH, SSH2 and PGP private key blocks and PuTTY key
   bodies are removed whole, from the line of their ``BEGIN`` to the line of their ``END``.
   Output may reach us already windowed (head and tail kept, a ``[... N characters cut ...]``
   line between them): a block whose ``BEGIN`` has no ``END`` before the next window
   boundary (a cut line or the end of the text) is removed up to that boundary, and an
   ``END`` with no ``BEGIN`` after the previous boundary is removed from it.
2. **Environment values**: the exact values of the running process's secret-looking
   environment variables (``DB_PASSWORD``, ``DEPLOY_TOKEN`` ...), captured once when the
   :class:`Redactor` is built, so a leaked value is caught even when it has no known shape.
3. **Rules** (:data:`RULES`), each written from a token format's public description:
   prefixes, lengths and alphabets of cloud and API keys, auth headers, URL credentials,
   command-line passwords and ``name=value`` pairs whose name says secret.

Cost is bounded by a prefilter: one pass of a combined trigger pattern finds the few lines
where a secret could be (a token prefix, a secret-looking name followed by ``=`` or ``:``,
``://...@`` ...); the rules run on those lines alone. Text without a trigger is returned
as is, without a copy.

The counts per rule (never the values) are returned, so they can go on the reflection
record. Paths, test names, git hashes, UUIDs, digests and ordinary words stay untouched.
"""

from __future__ import annotations

import base64
import bisect
import functools
import importlib
import itertools
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Protocol
from urllib.parse import quote, unquote

import attrs

from reflexkit._regex import lazy_regex
from reflexkit.models import FailureContext

__all__ = [
    "CUT_LINE",
    "MAX_OUTPUT_CHARS",
    "RULES",
    "Redacted",
    "Redactor",
    "Rule",
    "cut_lines",
    "redact_failure",
    "redact_text",
    "window",
]

MAX_OUTPUT_CHARS = 200_000
"""How much redacted failure output :meth:`Redactor.redact_failure` keeps (head and tail)."""

_HEAD_SHARE = 0.3

CUT_LINE = lazy_regex(r"^[ \t]*\[(?:\.\.\.|…)[^\n\]]{0,200}?(?:\.\.\.|…)\][ \t]*$", re.MULTILINE)
"""A window boundary: a line such as ``[... 1234 characters cut ...]`` left by a head+tail cut."""


@attrs.frozen
class Redacted:
    """Text with its secrets replaced.

    Attributes:
        text: The redacted text.
        counts: How many secrets each rule replaced (only rules that fired).
    """

    text: str
    counts: dict[str, int]


@attrs.frozen
class Rule:
    """One shape of secret.

    Attributes:
        name: The name in ``[REDACTED:<name>]`` and in the counts.
        pattern: Run on the lines the prefilter selected; only its ``secret`` group (or the
            whole match) is replaced.
        trigger: A regular expression (in the common subset of ``re`` and RE2, no look-around)
            whose match somewhere on a line makes the line a candidate.
        markers: Lower-case strings one of which must be on a candidate line for this rule to
            run there (a cheap second filter); empty: run on every candidate line.
        check: Tells a real secret from a look-alike, given the match; ``None``: always.
        context_lines: Lines after the trigger line that belong to the same secret (the
            ``password`` line of a multi-line ``.netrc`` entry).
        example: An obviously fake example of what the rule removes (docs and tests).
        gate: Where markers are weak (``sk``, ``:``), a cheap pattern that must also be found
            on the line before the rule runs there.
    """

    name: str
    pattern: re.Pattern[str]
    trigger: str
    markers: tuple[str, ...] = ()
    check: Callable[[re.Match[str]], bool] | None = None
    context_lines: int = 0
    example: str = ""
    gate: re.Pattern[str] | None = None


# --- telling secrets from look-alikes -------------------------------------------------------

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
_NAME_WORDS = lazy_regex(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")

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
_PLACEHOLDER = lazy_regex(
    r"(?i)^(?:none|null|nil|true|false|yes|no|on|off|undefined"
    r"|(?:[a-z]+[+_-])?(?:redacted|masked|hidden|filtered|removed|omitted)"  # DATA+OMITTED
    r"|todo|tbd|placeholder|deleted"  # PHPSESSID=deleted: PHP unsetting its cookie
    r"|string|str|bytes|int|bool|any|optional|secretstr|text|required|missing|invalid"
    r"|incorrect|wrong|expired|revoked|active|inactive|enabled|disabled|empty|not|unset|set"
    r"|provided|given|ok|valid|must|should"
    r"|mismatch|error|failed|too|for|the|and|is|are|was|of|in|to|with|from|default"
    r"|\*+|x{3,}(?:-x{3,})*|\.{2,}|-+|_+|#+|•+)$"  # XXXXX-XXXXX: actions/setup-node's
)
_TEMPLATED = lazy_regex(
    r"^(?:\$\{?[A-Za-z_]|\$\(|%\(|%[A-Za-z_]+%|\{\{|\{%|#\{|@\{|<[^>]*>$|\((?!\))"
    r"|\[REDACTED|\[[A-Za-z_ -]*\]$)"
)
_NUMBERS = lazy_regex(r"[\d.:,/+-]+")
_CODE = lazy_regex(r"[A-Za-z_][\w.]*[\[(]|.*\w\(|.*==\s*\S")
_DOTTED = lazy_regex(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_PATH = lazy_regex(r"(?:~|\.{1,2})?/[\w.@+~-]*(?:/[\w.@+~-]*)*|[A-Za-z]:\\[^\s]*")
_URL_VALUE = lazy_regex(r"[A-Za-z][A-Za-z0-9+.-]*://")
_RELATIVE_PATH = lazy_regex(r"[A-Za-z_.][\w.-]*(?:/[A-Za-z_.][\w.-]*){2,}/?")
_KEY_ID = lazy_regex(r"[0-9A-F]{16}|[0-9A-F]{40}")
"""A GPG key id or fingerprint: ``user.signingkey=3AA5C34371567BD2`` names a key, holds none."""
_SCREAMING = lazy_regex(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*")
_AWS_SECRET_SHAPE = lazy_regex(r"[A-Za-z0-9/+]{40}")
_WORDY = lazy_regex(r"(?:[A-Z]{2,}(?=[A-Z][a-z]|$|[_\-.])|[A-Z]?[a-z]{2,}|[_\-.])+")
_FILE_EXT = lazy_regex(r"\.(?:[a-z]{1,4})$")
_IDENTIFIER = lazy_regex(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"  # a UUID
    r"|[0-9A-F]{16}|[0-9A-F]{40}"  # a GPG key id or fingerprint (``GPG_KEY=7169605F...``)
    r"|(?:[A-Za-z][A-Za-z0-9]{0,15}-)+[0-9a-f]{24,}"  # a CI cache key: ``Linux-pip-<sha256>``
)
"""Identifiers a weak name (``key``, ``session``) may hold: a generated look, but no secret."""


@functools.lru_cache(maxsize=4096)
def _name_strength(name: str) -> int:
    """Return 2 when *name* says secret (``DB_PASSWORD``), 1 when it may (``auth``), else 0."""
    bare = name.strip("\"'-").rstrip()
    if not bare or (_FILE_EXT.search(bare.lower()) and "." in bare):
        return 0
    words = [w.lower() for w in _NAME_WORDS.findall(bare)]
    if "".join(words).endswith(_SESSION_IDS):
        return 1  # JSESSIONID, PHPSESSID, ASP.NET_SessionId: a session cookie's value
    if (
        not words
        or words[-1] in _NOT_SECRET_WORDS
        or "public" in words
        or "tokens" in words
        or "existing" in words  # Helm's ``auth.existingSecret``: the name of a Secret object
    ):
        return 0
    joined = "".join(words)
    if (
        any(stem in joined for stem in _STRONG_STEMS)
        or _STRONG_WORDS.intersection(words)
        or words[-1].endswith("pass")  # storepass, keypass, PGPASS
    ):
        return 2
    return 1 if _WEAK_WORDS.intersection(words) else 0


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


def value_is_secret(  # noqa: PLR0911 -- one question per look-alike
    value: str, strength: int, *, prose_follows: bool = False, quoted: bool = False
) -> bool:
    """Tell a credential value from code, words, paths, numbers, types and placeholders.

    Args:
        value: The value, quotes stripped.
        strength: 2 when its name says secret (``password``), 1 when it may (``auth``).
        prose_follows: More words follow an unquoted value (``password: must be set``).
        quoted: The value was in quotes: a string, never a call (Django's keys hold ``(``).
    """
    if not value or value.startswith("[REDACTED") or strength == 0:
        return False
    if _is_aws_secret(value):
        return True
    if (
        _PLACEHOLDER.match(value)
        or _TEMPLATED.match(value)
        or _URL_VALUE.match(value)
        or _looks_path(value)
        or (_NUMBERS.fullmatch(value) and not value.isdigit())
    ):
        return False
    if (
        value in _KEYWORDS
        or (not quoted and _CODE.match(value))
        or (_DOTTED.fullmatch(value) and not _randomish(value))
        or _KEY_ID.fullmatch(value)
        or (_SCREAMING.fullmatch(value) and _name_strength(value) > 0)  # DOCKER_PASSWORD
    ):
        return False
    if strength == 1:  # ``key``, ``auth``: only a value that looks generated
        if _IDENTIFIER.fullmatch(value):
            return False
        return any(_randomish(part) for part in re.split(r"[-_.:/]", value))
    if value.isdigit():
        return len(value) >= 6  # noqa: PLR2004 -- PINs and passwords, not counts or ports
    if len(value) < 4:  # noqa: PLR2004
        return False
    if re.fullmatch(r"[A-Za-z_-]+", value):
        return not prose_follows
    return True


# --- the rule table -------------------------------------------------------------------------


def _secret(match: re.Match[str]) -> str:
    return match.group("secret")


def _generated(match: re.Match[str]) -> bool:
    """The whole match mixes digits and letters (``fw_9aK...``, not ``fw_updatecontroller``)."""
    value = match.group(0)
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


_VERDICTS = frozenset({"PASS", "XPASS", "PASSED", "XPASSED"})
"""Test runners' verdicts (``--- PASS: TestX``, automake's ``PASS: t/x.sh``), not a password."""


def _assignment_check(match: re.Match[str]) -> bool:
    name = match.group("name")
    if name.strip() in _VERDICTS and match.group("sep") != "=":
        return False
    strength = _name_strength(name)
    if strength == 0:
        return False
    raw = match.group("secret")
    quoted = raw[:1] in {'"', "'"} and raw[-1:] == raw[:1] and len(raw) > 1
    value = raw[1:-1] if quoted else raw.strip("{}") if raw.startswith("{") else raw
    if raw[:2] in {'\\"', "\\'"} and raw[-2:] == raw[:2] and len(raw) > 3:  # noqa: PLR2004
        value = raw[2:-2]
    if raw[:1] in {'"', "'"}:
        pieces = _QUOTED_RE.findall(raw)
        if pieces and pieces != [raw]:  # joined literals (``'a' + 'b'``, ``'ab' * 6``): one value
            value, quoted = "".join(piece[1:-1] for piece in pieces), True
    if match.group("sep") == "->" and name[:1] in {'"', "'"}:
        return False  # Scala's ``Map(k -> v)`` names keys bare; a quoted one is code
    if value.lower() in {name.strip("\"'").lower(), name.strip("\"'").lower().rsplit("_", 1)[-1]}:
        return False  # password=password: code handing a variable on
    rest = match.string[match.end("secret") :]
    if not quoted and (_EXPRESSION.match(rest) or _INNER_PAIR.match(value)):
        return False  # ``password = prefix + suffix``; ``auth: method=password``
    prose = not quoted and match.group("sep") != "=" and re.match(r"[ \t]+\w", rest)
    return value_is_secret(value, strength, prose_follows=bool(prose), quoted=quoted)


_EXPRESSION = lazy_regex(r"[ \t]+[-+*/%][ \t]+[\w\"'(]")
"""An operator after an unquoted value: code computing it (``prefix + suffix``)."""
_INNER_PAIR = lazy_regex(r"[A-Za-z_][\w.-]*=[^=\s]")
"""A value that is itself ``name=value`` (``auth: method=password``): the inner pair is judged."""


def _flag_check(match: re.Match[str]) -> bool:
    raw = match.group("secret")
    rest = match.string[match.end("secret") :]
    prose = raw[:1] not in {'"', "'"} and _PROSE_AFTER.match(rest) is not None
    return _name_strength(match.group("name")) == 2 and value_is_secret(  # noqa: PLR2004
        raw.strip("\"'"), 2, prose_follows=prose
    )


_PROSE_AFTER = lazy_regex(r"[ \t]+[A-Za-z]+(?:[ \t,]|$)")
"""More words after a flag's word: a help text (``-twopass   Separate MAC, ...``)."""


def _header_check(match: re.Match[str]) -> bool:
    value = _secret(match)
    if value.lower() in _SCHEMES:
        return False  # "Bearer " + token: the scheme alone, the token is a variable
    return not value.startswith("[REDACTED") and not _TEMPLATED.match(value) and len(value) >= 6  # noqa: PLR2004


def _url_check(match: re.Match[str]) -> bool:
    value = _secret(match)
    return (
        bool(value)
        and not value.startswith("[REDACTED")
        and not _TEMPLATED.match(value)
        and not _PLACEHOLDER.match(value)  # ``amqp://u:**@`` (kombu), ``:***@`` (SQLAlchemy)
        and re.fullmatch(r"\d{1,5}(?:/.*)?", value) is None  # host:port/path, not a password
    )


def _jwt_check(match: re.Match[str]) -> bool:
    """A JWS (``header.payload.signature``), or a JWE: five parts, its header naming ``enc``."""
    parts = match.group(0).split(".")
    if len(parts) != 5:  # noqa: PLR2004 -- a JWE's compact form has five parts
        return True
    header = parts[0]
    try:
        decoded = base64.urlsafe_b64decode(header + "=" * (-len(header) % 4))
    except ValueError:
        return False
    return b'"enc"' in decoded


def _telegram_check(match: re.Match[str]) -> bool:
    tail = match.group(0).split(":", 1)[1]
    return any(c.isupper() for c in tail) and any(c.islower() for c in tail)


def _aws_context_check(match: re.Match[str]) -> bool:
    return _is_aws_secret(_secret(match))


def _encoded_private_key(match: re.Match[str]) -> bool:
    """Base64 of a PEM private key block (``client-key-data``), not of a certificate."""
    head = "".join(match.group(0)[:200].split())[:120]  # wrapped lines joined
    head = head[: len(head) - len(head) % 4]
    try:
        decoded = base64.b64decode(head, validate=True)
    except ValueError:
        return False
    return b"PRIVATE KEY" in decoded


def _webhook_check(match: re.Match[str]) -> bool:
    """The path of a webhook URL is its credential when it looks generated."""
    return _generated(match) and not match.group(0).startswith("[REDACTED")


def _escaped_check(match: re.Match[str]) -> bool:
    r"""``\"password\": \"value\"``: JSON inside a JSON string, quotes escaped."""
    name = match.group("name").replace("\\", "").strip("\"'")
    value = match.group("secret")
    return value.lower() != name.lower() and value_is_secret(value, _name_strength(name))


def _urlencoded_check(match: re.Match[str]) -> bool:
    """``access_token%3D...``, ``%22password%22%3A%22...``: a URL-encoded pair in a URL."""
    name = match.group("name")
    value = unquote(match.group("secret"))
    return value_is_secret(value, _name_strength(name))


def _terraform_check(match: re.Match[str]) -> bool:
    """``terraform output -json``: the value of an output Terraform itself marks sensitive."""
    raw = match.group("secret")[1:-1]
    return not _TEMPLATED.match(raw) and not _PLACEHOLDER.match(raw)


_B64_LINE = lazy_regex(r"[A-Za-z0-9+/]{41,}={0,2}")


def _bare_aws_secret_check(match: re.Match[str]) -> bool:
    """A line that is an AWS secret key alone (``aws configure get``), not a base64 block's tail."""
    value = _secret(match)
    previous = (match.group("prev") or "").strip()
    return (
        _is_aws_secret(value)
        and any(c.isdigit() for c in value)
        and any(_randomish(part) for part in value.split("/"))  # not a path of 40 characters
        and not _B64_LINE.fullmatch(previous)
    )


def _base64_url_credentials_check(match: re.Match[str]) -> bool:
    """Base64 of a URL with a password in it: a Kubernetes secret's ``DATABASE_URL``."""
    value = _secret(match)
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode()
    except ValueError:
        return False
    rule = next(r for r in RULES if r.name == "url_password")
    return any(_url_check(m) for m in rule.pattern.finditer(decoded))


def _mask_check(match: re.Match[str]) -> bool:
    """``::add-mask::<value>``: GitHub Actions is told the value is a secret."""
    value = _secret(match)
    return not value.startswith(("$", "[REDACTED")) and not _TEMPLATED.match(value)


def _name_value_check(match: re.Match[str]) -> bool:
    """``name: DB_PASSWORD`` then ``value: ...``: a secret named by a neighbouring field."""
    strength = _name_strength(match.group("name"))
    raw = _secret(match)
    quoted = raw[:1] in {'"', "'"} and raw[-1:] == raw[:1] and len(raw) > 1
    value = raw[1:-1] if quoted else raw
    return value_is_secret(value, strength, quoted=quoted)


def _table_check(match: re.Match[str]) -> bool:
    """``db_password     Hq3Zt8...``: a two-column table row, the value generated-looking."""
    value = _secret(match)
    strong = _name_strength(match.group("name")) == 2  # noqa: PLR2004
    return (
        strong
        and any(c.isdigit() for c in value)  # digits and letters: not C's ``A | B_C,``
        and any(c.isalpha() for c in value)
        and value[-1] not in ",;({"
        and _randomish(value)
        and value_is_secret(value, 2)
    )


def _tool_password_check(match: re.Match[str]) -> bool:
    """A password a tool takes by flag or position, not a variable, a flag or a mask."""
    value = _secret(match).strip("\"'")
    return bool(value) and not (
        value.startswith(("-", "$", "[REDACTED", "<"))
        or _TEMPLATED.match(value)
        or _PLACEHOLDER.match(value)
    )


def _field_input_check(match: re.Match[str]) -> bool:
    """A validation error's echoed input, judged by the name of its field (``db.password``)."""
    raw = _secret(match)
    quoted = raw[:1] in {'"', "'"} and raw[-1:] == raw[:1] and len(raw) > 1
    if not quoted and raw[:1] in {"{", "["}:
        return False  # a dict or list: its own pairs are judged by the assignment rule
    name = match.group("name").rsplit(".", 1)[-1]
    return value_is_secret(raw[1:-1] if quoted else raw, _name_strength(name), quoted=quoted)


def _loc_input_check(match: re.Match[str]) -> bool:
    """FastAPI's 422 body: the ``"input"`` of an error whose ``"loc"`` ends in a secret name."""
    raw = _secret(match)
    if raw[:1] not in {'"', "'"}:
        return False
    return value_is_secret(raw[1:-1], _name_strength(match.group("loc")), quoted=True)


def _named_check(match: re.Match[str]) -> bool:
    """A generated-looking value beside a name in a pair: ``("STRIPE_SECRET", "Rv8Lq3...")``.

    Lists of names (``["access_token", "expires_in"]``) and of words are pairs too, so the
    value must look generated.
    """
    value = _secret(match)[1:-1]
    name = match.group("name") or match.group("atom") or match.group("keyword")
    return (
        _generated_looking(value)
        and not any(c.isspace() for c in value)
        and value_is_secret(value, _name_strength(name.lstrip(":")), quoted=True)
    )


def _literal_check(match: re.Match[str]) -> bool:
    """A literal handed to a secret type or an auth call, unless it names itself or is code."""
    value = _secret(match)[1:-1]
    if re.fullmatch(r"[A-Za-z_-]+", value) and _name_strength(value) == 2:  # noqa: PLR2004
        return False  # ``SecretStr('password')``: a word that says secret, as in docs
    if value.startswith("{") and value.endswith("}"):
        return False  # an f-string's field: ``f"SecretStr('{self}')"``
    return value_is_secret(value, 2, quoted=True)


def _base64_json_check(match: re.Match[str]) -> bool:
    """Base64 of a JSON object that holds a secret (``{"client_secret": ...}``)."""
    value = _secret(match)
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode()
    except ValueError:
        return False
    if "\n" in decoded:
        decoded = decoded[:4096]
    rule = next(r for r in RULES if r.name == "secret_assignment")
    return any(_assignment_check(m) for m in rule.pattern.finditer(decoded))


_HEX_OCTETS = lazy_regex(r"[ \t]*(?:[0-9A-Fa-f]{2}:){4}")
_SQL_OWNER = lazy_regex(r"(?i)\b(?:with|role|user|login)\b")


def _sql_check(match: re.Match[str]) -> bool:
    """A password SQL sets: after ``WITH``, ``ROLE x``, ``USER x`` ... in the same statement."""
    if match.group("bare") is not None:
        text = match.string
        line = text[
            max(text.rfind("\n", 0, match.start()) + 1, match.start() - 120) : match.start()
        ]
        statement = re.split(r"[;'\"]", line)[-1]
        if _SQL_OWNER.search(statement) is None:
            return False
    return value_is_secret(_secret(match)[1:-1], 2)


_STDIN_READER = (
    r"(?:--password-stdin|\bsudo[ \t](?:[^\n]*?[ \t])?-[A-Za-z]*S\b|\bchpasswd\b"
    r"|\bpasswd[ \t][^\n]*?--stdin\b)"
)
"""A command that reads a password on its standard input: ``docker login --password-stdin``,
``sudo -S``, ``chpasswd``, ``passwd --stdin``; ``set -x`` traces the ``echo`` beside it."""
_CELL = r"(?:(?:│|┃|\|)[ \t]*)"
"""A table's cell border: markdown's ``|``, box drawing's ``│`` (doppler, rich tables)."""
_KEY_TEXT_LINE = (
    r"(?:[ \t]+[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2})*:?"  # a hex line
    r"|[A-Za-z][A-Za-z0-9]*:(?:[ \t]+\d+[ \t]+\(0x[0-9A-Fa-f]+\))?)[ \t]*"  # a field name
)
_KEY_TEXT_LINES = f"(?:{_KEY_TEXT_LINE}(?:\\r?\\n|\\Z))+"
"""``openssl rsa|ec|pkey -text``: field names (``privateExponent:``, ``priv:``) and hex lines."""
_B64_TAIL = r"(?=[^\s]*[0-9+/=])(?=[^\s]*[a-z])(?=[^\s]*[A-Z])[A-Za-z0-9+/]{2,15}"
"""The short last line of wrapped base64 (``S0VZLS0tLS0K``), not a word (``done``)."""
_B = r"(?<![A-Za-z0-9_])"  # starts at a token boundary
_E = r"(?![A-Za-z0-9_])"  # ends at one
_ESCAPED_QUOTED = r"\\\"(?:[^\"\\\n]|\\[^\"\n])*\\\"|\\'(?:[^'\\\n]|\\[^'\n])*\\'"
r"""A value quoted inside a quoted string: Rust's ``{:#?}`` in an ``unwrap`` message (``\"v\"``)."""
_QUOTED = r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'"
_FULL_QUOTED = r"\"(?:[^\"\\\n]|\\.)+\"|'(?:[^'\\\n]|\\.)+'"
"""A quoted literal with something in it (so ``\"\"\"`` opens no run of literals)."""
_JOIN = r"(?:[ \t]*\+[ \t]*|[ \t]+)"
_LITERAL_TAIL = (
    r"(?:[ \t]*\*[ \t]*\d+)?"  # ``'ab' * 6``
    r"(?:" + _JOIN + r"(?:" + _FULL_QUOTED + r")(?:[ \t]*\*[ \t]*\d+)?)*"
)
"""More literals joined to a quoted value: ``'cs_' + 'Zq4...' * 6``, ``("Pa4..." "Xw9...")``."""
_WRAPPER = (
    r"(?:(?:(?:Some|Ok|Just|Secret|SecretString|SecretBox|SecretStr|SecretBytes|Sensitive)"
    r"\((?:\r?\n[ \t]*)?){1,2}(?=\\?[\"'])"
    r"|\((?=[ \t]*(?:" + _FULL_QUOTED + r")" + _LITERAL_TAIL + r"[ \t]*\)))?"
)
"""Rust's ``Some("...")``, newtypes (``Secret("...")``) and pydantic's ``SecretStr('...')``
around a quoted value, over lines; parentheses around literals alone (``("Pa4" "Xw9")``)."""
_VALUE = (
    _WRAPPER
    + r"(?:\r?\n[ \t]*(?=[\"']))?"  # rich and pprint put a long quoted value on the next line
    r"(?:[bB](?=[\"']))?"  # a Python bytes literal: b'...' in a headers repr
    r"(?=(?P<secret>"
    + _ESCAPED_QUOTED
    + r"|(?:"
    + _QUOTED
    + r")"
    + _LITERAL_TAIL
    + r"(?:[ \t]*\r?\n[ \t]*(?:"
    + _QUOTED
    + r")(?=[ \t]*[,)\]}]*[ \t]*(?:\r?\n|\Z)))*"  # pprint's pieces
    r"|\{[^}\n\"':]*\}|(?:[^\s\"'`,;&)\]}<>\\]+|\\(?![rnt]))+))"  # ``\r\n`` ends it
)
_QUOTED_RE = lazy_regex(_QUOTED)
_ANSI_TRIGGER = r"(?:\x1b\[[0-9;]*m)*"
"""Colour codes a terminal-minded tool (rich, pytest ``--color=yes``) puts around a name."""
_NAME_TRIGGER = (
    r"(?i:(?:pass|pwd|secret|token|key|auth|credential|cookie|sig|dsn|pw|psk|sess|sid|"
    r"connectionstring)[a-z0-9_.-]{0,40}(?:[\"']|\x1b\[[0-9;]*m)*[ \t]*"
    + _ANSI_TRIGGER
    + r"(?:=|:|=>|is[ \t]+[\"']|->[ \t]))"  # `var.x is "..."`: Terraform; `k -> v`: Scala
)


def _rule(  # noqa: PLR0913, PLR0917 -- the table below reads best positionally
    name: str,
    pattern: str,
    trigger: str,
    markers: Iterable[str] = (),
    check: Callable[[re.Match[str]], bool] | None = None,
    example: str = "",
    context_lines: int = 0,
    gate: str | None = None,
) -> Rule:
    return Rule(
        name=name,
        pattern=lazy_regex(pattern),  # compiled when a line first triggers the rule
        trigger=trigger,
        markers=tuple(markers),
        check=check,
        context_lines=context_lines,
        example=example,
        gate=lazy_regex(gate) if gate is not None else None,
    )


def _fake(*parts: str) -> str:
    """Join *parts*: examples are assembled so no scanner mistakes this file for a leak."""
    return "".join(parts)


RULES: tuple[Rule, ...] = (
    _rule(
        "jwt",
        r"eyJ[A-Za-z0-9_-]{5,}\.(?:ey[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"
        r"|[A-Za-z0-9_-]*\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{8,})",
        r"eyJ[A-Za-z0-9_-]{5,}\.(?:ey|[A-Za-z0-9_-]*\.[A-Za-z0-9_-]{8})",
        ("eyj",),
        _jwt_check,
        example=_fake("eyJhbGciOiJIUzI1NiJ9", ".eyJzdWIiOiJmYWtlIn0", ".c2lnbmF0dXJlLWZha2U"),
    ),
    _rule(
        "anthropic_api_key",
        _B + r"sk-ant-[a-z]{2,8}\d{2}-[A-Za-z0-9_-]{20,}",
        r"sk-ant-",
        ("sk-ant-",),
        example=_fake("sk-ant-api03-", "FAKEfake" * 10, "AA"),
    ),
    _rule(
        "openai_api_key",
        _B + r"sk-(?:proj|svcacct|admin|None|or-v1)-[A-Za-z0-9_-]{20,}"
        r"|"
        + _B
        + r"sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}"
        + _E
        + r"|"
        + _B
        + r"sk-[A-Za-z0-9][A-Za-z0-9_-]{30,}",
        r"sk-[A-Za-z0-9]",
        ("sk-",),
        example=_fake("sk-proj-", "Fake0Key1Only2For3Docs4Not5Real6"),
    ),
    _rule(
        "aws_access_key",
        r"(?<![A-Za-z0-9])(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)"
        r"[A-Z0-9]{16}(?![A-Za-z0-9])",
        r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}",
        markers=(
            "akia",
            "asia",
            "abia",
            "acca",
            "agpa",
            "aida",
            "aroa",
            "aipa",
            "anpa",
            "anva",
            "apka",
            "a3t",
        ),
        example=_fake("AKIA", "FAKEEXAMPLE12345"),
    ),
    _rule(
        "aws_secret_key",
        r"(?<![A-Za-z0-9/+])(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
        r"(?i:aws|secret)",
        ("aws", "secret"),
        _aws_context_check,
        gate=r"[A-Za-z0-9/+]{40}",
        example=_fake("aws_secret=", "/Fake0Secret1Access2Key3For4Docs5Only6+A"),
    ),
    _rule(
        "gcp_api_key",
        _B + r"AIza[0-9A-Za-z_-]{35}" + r"(?![0-9A-Za-z_-])",
        r"AIza[0-9A-Za-z_-]{35}",
        markers=("aiza",),
        example=_fake("AIza", "FakeFakeFakeFakeFakeFakeFakeFake123"),
    ),
    _rule(
        "gcp_oauth_token",
        _B + r"ya29\.[0-9A-Za-z_-]{20,}",
        r"ya29\.",
        markers=("ya29.",),
        example=_fake("ya29.", "Fake-oauth-token-for-docs"),
    ),
    _rule(
        "google_oauth_client_secret",
        _B + r"GOCSPX-[A-Za-z0-9_-]{20,}",
        r"GOCSPX-",
        markers=("gocspx-",),
        example=_fake("GOCSPX-", "FakeClientSecretForDocs12"),
    ),
    _rule(
        "azure_storage_key",
        r"(?i:AccountKey|SharedAccessKey|PrimaryKey|SecondaryKey)=(?P<secret>[A-Za-z0-9+/]{20,}={0,2})",
        r"(?i:AccountKey|SharedAccessKey|PrimaryKey|SecondaryKey)=",
        ("key=",),
        example=_fake("AccountKey=", "RmFrZUF6dXJlU3RvcmFnZUtleUZvckRvY3M=", ";"),
    ),
    _rule(
        "azure_sas_signature",
        r"(?i:[?&;]sig=)(?P<secret>[A-Za-z0-9%+/=_-]{20,})",
        r"(?i:sig=)",
        ("sig=",),
        example=_fake("?sv=2022-11-02&sig=", "RmFrZVNhc1NpZ25hdHVyZQ%3D%3D"),
    ),
    _rule(
        "azure_client_secret",
        r"(?<![\w~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![\w~.-])",
        r"\dQ~",
        ("q~",),
        example=_fake("abc8Q~", "Fake.Client~Secret_For-Docs1234567"),
    ),
    _rule(
        "azure_devops_pat",
        _B + r"[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4}" + _E,
        r"AZDO",
        ("azdo",),
        example=_fake("Fake" * 19, "AZDO", "Fake"),
    ),
    _rule(
        "github_token",
        _B + r"(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{40,255})" + _E,
        r"gh[pousr]_|github_pat_",
        ("gh", "github_pat_"),
        example=_fake("ghp_", "FakeTokenForDocsOnly0123456789abcdef"),
    ),
    _rule(
        "gitlab_token",
        _B + r"(?:gl(?:pat|dt|rt|rtr|ptt|cbt|imt|agent|soat|ffct|ft|oas|wt|sa)-"
        r"[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9_-]{2,}){0,2}|GR1348941[A-Za-z0-9_-]{20,})",
        r"gl(?:pat|dt|rt|rtr|ptt|cbt|imt|agent|soat|ffct|ft|oas|wt|sa)-|GR1348941",
        ("gl", "gr1348941"),
        example=_fake("glpat-", "FakeGitLabTokenForDocs", ".01.0w0fakedoc"),
    ),
    _rule(
        "slack_token",
        _B + r"(?:xox[abposrecd]-[A-Za-z0-9%-]{10,}|xoxe\.xox[bp]-[A-Za-z0-9-]{10,}"
        r"|xapp-\d-[A-Za-z0-9-]{10,})",
        r"xox[a-z.]|xapp-",
        ("xox", "xapp-"),
        example=_fake("xoxb-", "0000-fake-slack-token"),
    ),
    _rule(
        "slack_webhook",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{20,}",
        r"hooks\.slack\.com",
        markers=("hooks.slack.com",),
        example=_fake("https://hooks.slack.com/services/", "TFAKE/BFAKE/fakeFakeFake"),
    ),
    _rule(
        "discord_webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{20,}",
        r"discord(?:app)?\.com/api/webhooks",
        markers=("discord",),
        example=_fake("https://discord.com/api/webhooks/", "123/Fake-webhook-token-docs"),
    ),
    _rule(
        "stripe_key",
        _B
        + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}"
        + _E
        + "|"
        + _B
        + r"whsec_[A-Za-z0-9]{20,}"
        + _E,
        r"[sr]k_(?:live|test)_|whsec_",
        ("k_live_", "k_test_", "whsec_"),
        example=_fake("sk_live_", "FakeStripeKeyForDocs"),
    ),
    _rule(
        "twilio_auth_token",
        r"(?<![A-Za-z0-9])(?:SK|AC)[0-9a-f]{32}[\"']?[ \t]*[,:][ \t]*[bu]?[\"']?"
        r"(?P<secret>[0-9a-fA-F]{32})(?![A-Za-z0-9])",
        r"(?:SK|AC)[0-9a-f]{32}",
        markers=("sk", "ac"),
        gate=r"(?:SK|AC)[0-9a-f]{32}",
        example=_fake("Client('AC", "0123456789abcdef" * 2, "', '", "fedcba9876543210" * 2, "')"),
    ),
    _rule(
        "twilio_api_key",
        r"(?<![A-Za-z0-9])SK[0-9a-fA-F]{32}(?![A-Za-z0-9])",
        r"SK[0-9a-fA-F]{32}",
        markers=("sk",),
        gate=r"SK[0-9a-fA-F]{32}",
        example=_fake("SK", "0123456789abcdef" * 2),
    ),
    _rule(
        "heroku_api_key",
        _B + r"HRKU-[A-Za-z0-9_-]{20,}",
        r"HRKU-",
        markers=("hrku-",),
        example=_fake("HRKU-", "Fake-heroku-key-for-docs-0123"),
    ),
    _rule(
        "digitalocean_token",
        _B + r"do[opr]_v1_[a-f0-9]{64}" + _E,
        r"do[opr]_v1_",
        markers=("_v1_",),
        example=_fake("dop_v1_", "0123456789abcdef" * 4),
    ),
    _rule(
        "databricks_token",
        _B + r"dapi[a-f0-9]{32}(?:-\d+)?" + _E,
        r"dapi[a-f0-9]{32}",
        markers=("dapi",),
        example=_fake("dapi", "0123456789abcdef" * 2),
    ),
    _rule(
        "shopify_token",
        _B + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _E,
        r"shp(?:at|ca|pa|ss)_",
        markers=("shp",),
        example=_fake("shpat_", "0123456789abcdef" * 2),
    ),
    _rule(
        "age_secret_key",
        r"AGE-(?:SECRET-KEY|PLUGIN-[A-Z0-9]+)-1[0-9A-Z]{40,}",
        r"AGE-(?:SECRET-KEY|PLUGIN-)",
        markers=("age-",),
        example=_fake("AGE-SECRET-KEY-1", "QQQQFAKEQQQQ" * 5),
    ),
    _rule(
        "telegram_bot_token",
        r"(?:(?<=bot)|(?<![A-Za-z0-9_:]))\d{8,10}:[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])",
        r"[0-9]{8}:[A-Za-z0-9_-]{35}",
        check=_telegram_check,
        markers=(":",),
        gate=r"\d{8}:",
        example=_fake("123456789:", "AAFakeTelegramBotTokenForDocs_01234"),
    ),
    _rule(
        "npm_token",
        _B + r"npm_[A-Za-z0-9]{36}" + _E,
        r"npm_",
        markers=("npm_",),
        example=_fake("npm_", "FakeNpmTokenForDocs0123456789abcdefg"),
    ),
    _rule(
        "pypi_token",
        _B + r"pypi-AgE[A-Za-z0-9_-]{50,}",
        r"pypi-AgE",
        markers=("pypi-",),
        example=_fake("pypi-AgEIcHlwaS5vcmc", "Fake" * 12),
    ),
    _rule(
        "huggingface_token",
        _B + r"(?:hf_[A-Za-z0-9]{30,}|api_org_[A-Za-z0-9]{30,})" + _E,
        r"hf_|api_org_",
        markers=("hf_", "api_org_"),
        example=_fake("hf_", "FakeHuggingFaceTokenForDocs012345"),
    ),
    _rule(
        "sendgrid_key",
        _B + r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,50}" + _E,
        r"SG\.",
        markers=("sg.",),
        example=_fake(
            "SG.", "FakeSendGridKeyId0123", ".", "FakeSendGridSecretPartForDocs0123456789abcd"
        ),
    ),
    _rule(
        "docker_hub_token",
        _B + r"dckr_(?:pat|oat)_[A-Za-z0-9_-]{20,}",
        r"dckr_",
        markers=("dckr_",),
        example=_fake("dckr_pat_", "FakeDockerHubToken0123"),
    ),
    _rule(
        "grafana_token",
        _B + r"(?:glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2}"
        r"|eyJrIjoi[A-Za-z0-9+/]{40,400}={0,2})",
        r"gl(?:sa|c)_|eyJrIjoi",
        markers=("glsa_", "glc_", "eyjrijoi"),
        example=_fake("glsa_", "FakeGrafanaServiceAccountToken01", "_0a1b2c3d"),
    ),
    _rule(
        "vault_token",
        _B + r"hv[sbr]\.[A-Za-z0-9_-]{24,}",
        r"hv[sbr]\.",
        markers=("hvs.", "hvb.", "hvr."),
        example=_fake("hvs.", "FakeVaultTokenForDocs012345"),
    ),
    _rule(
        "other_api_token",
        _B + r"(?:lin_api_[A-Za-z0-9]{30,}|gsk_[A-Za-z0-9]{40,}|xai-[A-Za-z0-9]{40,}"
        r"|r8_[A-Za-z0-9]{30,}|pplx-[A-Za-z0-9]{30,}|sbp_[a-f0-9]{40}|NRAK-[A-Z0-9]{27}"
        r"|PMAK-[a-f0-9]{24}-[a-f0-9]{34}|dp\.(?:st|ct|sa|scim|audit)\.[A-Za-z0-9_-]{30,}"
        r"|tskey-[a-z]+-[A-Za-z0-9]+-[A-Za-z0-9]+|ATATT3[A-Za-z0-9_=-]{50,}"
        r"|ATBB[A-Za-z0-9_=.-]{28,}|sntry[su]_[A-Za-z0-9+/=_-]{30,}|bkua_[a-f0-9]{40}"
        r"|pul-[a-f0-9]{40}|sgp_[A-Za-z0-9_]{30,}|rnd_[A-Za-z0-9]{20,}|fo1_[A-Za-z0-9_-]{30,}"
        r"|ops_eyJ[A-Za-z0-9_-]{20,}|ntn_[A-Za-z0-9]{30,}|secret_[A-Za-z0-9]{43}"
        r"|[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_-]{40,}|sk\.eyJ[A-Za-z0-9_.-]{20,}"
        r"|key-[0-9a-f]{32}|sq0(?:atp|csp)-[A-Za-z0-9_-]{20,}|EAAA[A-Za-z0-9_-]{40,}"
        r"|[0-9a-f]{32}-us[0-9]{1,2}|AAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{60,}"
        r"|nfp_[A-Za-z0-9]{30,}|pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{30,}"
        r"|fm[12][ar]?_[A-Za-z0-9+/=_-]{30,}|re_[A-Za-z0-9]{8}_[A-Za-z0-9]{20,}"
        r"|access_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}|p8e-[A-Za-z0-9-]{30,}"
        r"|CFPAT-[A-Za-z0-9_-]{40,}|fio-u-[A-Za-z0-9_=-]{60,}|pnu_[A-Za-z0-9]{36}"
        r"|tk-us-[A-Za-z0-9_-]{40,}|lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}|fw_[A-Za-z0-9]{20,}"
        r"|sk_[a-f0-9]{48}|LTAI[A-Za-z0-9]{20}|sq[uap]_[a-f0-9]{40}|rubygems_[a-f0-9]{48}"
        r"|oy2[a-z0-9]{43}|AKCp[A-Za-z0-9]{69}|cmVmdGtu[A-Za-z0-9]{56}|CLOJARS_[a-z0-9]{60}"
        r"|dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}|x(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}"
        r"|API-[A-Z0-9]{26}|shippo_(?:live|test)_[a-f0-9]{40}|ico-[A-Za-z0-9]{32}"
        r"|rdme_[a-z0-9]{70}|tfp_[A-Za-z0-9_.=-]{59}|AQVN[A-Za-z0-9_-]{35,38}"
        r"|t1\.[A-Za-z0-9_-]+={0,2}\.[A-Za-z0-9_-]{86}={0,2}"
        r"|(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}"
        r"|sha256~[A-Za-z0-9_-]{43}|sl\.(?:u\.)?[A-Za-z0-9_-]{130,}|EZ[AT]K[A-Za-z0-9]{54}"
        r"|FLWSECK(?:_TEST)?-[a-fA-F0-9]{32}-X|v1\.0-[a-f0-9]{24}-[a-f0-9]{146}"
        r"|EAA[A-Za-z0-9]{90,}|NRII-[A-Za-z0-9_-]{32}|aio_[A-Za-z0-9]{28}"
        r"|dnkey-[A-Za-z0-9=_-]{26}-[A-Za-z0-9=_-]{52}|duffel_(?:test|live)_[A-Za-z0-9_=-]{43}"
        r"|s-s4t2(?:ud|af)-[a-f0-9]{64}|(?:live|test)_[a-f0-9]{35}"
        r"|[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk|sm_(?:pat|aat|sat)_[A-Za-z0-9]{16}"
        r"|1//0[A-Za-z0-9_-]{30,})" + _E,
        r"lin_api_|gsk_|xai-|r8_|pplx-|sbp_|NRAK-|PMAK-|dp\.|tskey-|ATATT3|ATBB|sntry|bkua_|pul-"
        r"|sgp_|rnd_|fo1_|ops_eyJ|ntn_|secret_|atlasv1|sk\.eyJ|key-[0-9a-f]|sq0|EAAA"
        r"|[0-9a-f]{32}-us[0-9]|APA91b|nfp_|pscale_|fm[12][ar]?_|re_[A-Za-z0-9]{8}_"
        r"|access_token\$|p8e-|CFPAT-|fio-u-|pnu_|tk-us-|lsv2_|fw_|sk_[a-f0-9]{48}"
        r"|LTAI[A-Za-z0-9]{20}|sq[uap]_|rubygems_|oy2[a-z0-9]{43}|AKCp|cmVmdGtu|CLOJARS_"
        r"|dt0c01\.|keysib-|smtpsib-|API-[A-Z0-9]{26}|shippo_|ico-|rdme_|tfp_|AQVN"
        r"|t1\.[A-Za-z0-9_-]+={0,2}\.[A-Za-z0-9_-]{86}|[ps]at\.[A-Za-z0-9_-]{22}\.|sha256~"
        r"|sl\.[A-Za-z0-9_-]{130}|EZ[AT]K|FLWSECK|v1\.0-[a-f0-9]{24}-|EAA[A-Za-z0-9]{90}"
        r"|NRII-|aio_|dnkey-|duffel_|s-s4t2"
        r"|(?:live|test)_[a-f0-9]{35}|_mmk|sm_[ps]at_|sm_aat_|1//0",
        markers=(
            "lin_api_",
            "gsk_",
            "xai-",
            "r8_",
            "pplx-",
            "sbp_",
            "nrak-",
            "pmak-",
            "dp.",
            "tskey-",
            "atatt3",
            "atbb",
            "sntry",
            "bkua_",
            "pul-",
            "sgp_",
            "rnd_",
            "fo1_",
            "ops_eyj",
            "ntn_",
            "secret_",
            "atlasv1",
            "sk.eyj",
            "key-",
            "sq0",
            "eaaa",
            "-us",
            "apa91b",
            "nfp_",
            "pscale_",
            "fm1",
            "fm2",
            "re_",
            "access_token$",
            "p8e-",
            "cfpat-",
            "fio-u-",
            "pnu_",
            "tk-us-",
            "lsv2_",
            "fw_",
            "sk_",
            "ltai",
            "squ_",
            "sqp_",
            "sqa_",
            "rubygems_",
            "oy2",
            "akcp",
            "cmvmdgtu",
            "clojars_",
            "dt0c01.",
            "sib-",
            "api-",
            "shippo_",
            "ico-",
            "rdme_",
            "tfp_",
            "aqvn",
            "t1.",
            "pat.",
            "sat.",
            "sha256~",
            "sl.",
            "ezak",
            "eztk",
            "flwseck",
            "v1.0-",
            "eaa",
            "nrii-",
            "aio_",
            "dnkey-",
            "duffel_",
            "s-s4t2",
            "live_",
            "test_",
            "_mmk",
            "sm_",
            "1//0",
        ),
        check=_generated,
        example=_fake("lin_api_", "FakeLinearApiKeyForDocs0123456789abcdefgh"),
    ),
    _rule(
        "shaped_api_token",
        _B + r"(?:[a-f0-9]{32}-[a-f0-9]{8}-[a-f0-9]{8}"
        r"|(?:api|sdk)-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}"
        r"|pat[A-Za-z0-9]{14}\.[a-f0-9]{64})" + _E,
        r"[a-f0-9]{32}-[a-f0-9]{8}-[a-f0-9]{8}|(?:api|sdk)-[a-f0-9]{8}-[a-f0-9]{4}-"
        r"|pat[A-Za-z0-9]{14}\.[a-f0-9]{64}",
        gate=r"[a-f0-9]{8}-[a-f0-9]{4}-|[a-f0-9]{32}-[a-f0-9]{8}-|\.[a-f0-9]{64}",
        example=_fake("key-like ", "0123456789abcdef" * 2, "-0a1b2c3d-4e5f6a7b"),
    ),
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
        r"\bBUNDLE_(?!BUILD__|MIRROR__)[A-Z0-9_]*?[A-Z0-9]__[A-Z0-9_]+[ \t]*[=:][ \t]*[\"']?"
        r"(?P<secret>[^\s\"']+)",
        r"BUNDLE_[A-Z0-9_]*__",
        ("bundle_",),
        lambda m: (
            not _secret(m).startswith(("-", "[REDACTED", "$", "http"))
            and not _TEMPLATED.match(_secret(m))
        ),
        example=_fake("BUNDLE_GEMS__CONTRIBSYS__COM=", "deploy:FakeBundlerPw0"),
    ),
    _rule(
        "authorization_header",
        r"(?i:(?:proxy-)?authorization\\?[\"']?\s*[:=]\s*\\?[\"']?"
        r"(?:(?:bearer|basic|token|digest|bot|apikey|sso-key|negotiate|ntlm|ssws|aws4-hmac-sha256)\s+)?)"
        r"(?P<secret>[^\s\"',;\\]{6,}(?:[ \t]*,[ \t]*[A-Za-z]+=[^\s\"',;\\]+)*)",
        r"(?i:authorization)",
        ("authorization",),
        _header_check,
        example=_fake("Authorization: Basic ", "ZmFrZTpmYWtl"),
    ),
    _rule(
        "api_key_header",
        r"(?i:(?:x-api-key|x-auth-token|api-key|x-goog-api-key|x-access-token|private-token"
        r"|x-vault-token|x-gitlab-token|x-figma-token|ocp-apim-subscription-key|x-functions-key"
        r"|x-honeycomb-team)"
        r"\\?[\"']?\s*[:=]\s*\\?[\"']?)(?P<secret>[^\s\"',;\\]{6,})",
        r"(?i:api-key|auth-token|access-token|private-token|vault-token|gitlab-token"
        r"|figma-token|subscription-key|functions-key|honeycomb-team)",
        check=_header_check,
        markers=(
            "api-key",
            "auth-token",
            "access-token",
            "private-token",
            "vault-token",
            "gitlab-token",
            "figma-token",
            "subscription-key",
            "functions-key",
            "honeycomb-team",
        ),
        example=_fake("X-Api-Key: ", "fake-header-key-0123"),
    ),
    _rule(
        "cookie_header",
        r"(?i:(?<![\w-])(?:set-)?cookie[\"']?[ \t]*:[ \t]*)(?P<secret>[^\n]{6,})",
        r"(?i:cookie)",
        ("cookie",),
        _header_check,
        example=_fake("Cookie: ", "session=FakeSessionCookie0123"),
    ),
    _rule(
        "named_token",
        r"(?i:\b(?:api[ _-]?key|access[ _-]?key|secret[ _-]?key|client[ _-]?secret|secret"
        r"|password|passphrase|token)(?:[ \t]+(?:is|was|provided|given|used|value|of))?"
        r"[ \t]*[:=]?[ \t]+[\"'`]?)(?P<secret>[A-Za-z0-9_\-+/.~]{16,}={0,2})"
        r"(?![^\s\"'`,;)\]}>])",  # the whole value, never the head of a longer one
        r"(?i:api.?key|access.?key|secret|password|passphrase|token)[ \t]",
        ("key", "secret", "password", "passphrase", "token"),
        lambda m: _randomish(_secret(m)) and not _looks_path(_secret(m)),
        example=_fake("invalid API key ", "Fake0Prose1Key2For3Docs4"),
    ),
    _rule(
        "discord_bot_token",
        _B + r"[MNO][A-Za-z0-9]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}" + _E,
        r"[MNO][A-Za-z0-9]{23}[A-Za-z0-9]{0,4}\.[A-Za-z0-9_-]{6}\.",
        markers=("m", "n", "o"),
        gate=r"[A-Za-z0-9]{23}\.[A-Za-z0-9_-]{6}\.",
        example=_fake(
            "MTAxFakeDiscordBotId0123456", ".", "GaBcDe", ".", "FakeDiscordBotTokenHmacPart0123"
        ),
    ),
    _rule(
        "teams_webhook",
        r"https://[A-Za-z0-9.-]+\.webhook\.office\.com/webhookb2/[^\s\"'<>]+",
        r"webhook\.office\.com",
        markers=("webhook.office.com",),
        example=_fake(
            "https://acme.webhook.office.com/webhookb2/", "fake-id@fake/IncomingWebhook/x/y"
        ),
    ),
    _rule(
        "bearer_token",
        r"(?i:\b(?:bearer|token)\s+)(?P<secret>[A-Za-z0-9\-._~+/]{16,}=*)",
        r"(?i:bearer|token)[ \t]|(?i:bearer)[ \t]*\r?\n",  # wrapped: the token on the next line
        ("bearer", "token"),
        lambda m: _randomish(_secret(m)) and not _looks_path(_secret(m)),
        example=_fake("Bearer ", "FakeBearerToken0123456789"),
    ),
    _rule(
        "url_password",
        r"(?i:\b[a-z][a-z0-9+.-]*://|\b[a-z][a-z0-9+.-]{2,}//|\bnetloc=[\"'])(?P<user>[^\s:/@\"'<>`[]*):(?P<secret>[^\s\"'<>`]*)"
        r"@(?=(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::\d*)?(?:[/?#\s\"'<>`,;)\]}]|$))",
        r"://[^ \t\n@]*@|[A-Za-z0-9]//[^ \t\n@]*@|netloc=[\"'][^ \t\n@]*@",
        ("//", "netloc="),  # ``postgresql+psycopg2//u:p@h``: SQLAlchemy echoes a bad URL
        _url_check,
        gate=r"//[^\s@]*@|netloc=",
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
            not _secret(m).startswith("[REDACTED")
            and _secret(m) not in {"-", "*"}
            and not m.group("user").startswith("<")  # ``--user <user:password>``: help text
        ),
        example=_fake("curl -u deploy:", "fake-Passw0rd", " https://example.com"),
    ),
    _rule(
        "cli_password",
        r"(?:\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump|mysqlimport|mysqlsh)\b[^\n]*?"
        r"[ \t]-p|\bsshpass\b[^\n]*?[ \t]-p[ \t]*|\bredis-cli\b[^\n]*?[ \t]-a[ \t]+"
        r"|\b(?:docker|podman|nerdctl|buildah|skopeo|helm)\b[^\n]*?\blogin\b[^\n]*?[ \t]-p[ \t]+"
        r"|\bldap\w*\b[^\n]*?[ \t]-w[ \t]+|[ \t]-pass(?:in|out)?[ \t]+pass:"
        r"|\b(?:sqlplus|exp|imp|expdp|impdp|rman)[ \t]+[\w$#.-]+/"
        r"|(?i:jdbc:oracle:)[a-z]+:[\w$#.-]+/)(?P<secret>[^\s\"'@/]+)",
        r"mysql|mariadb|sshpass|redis-cli|sqlplus|expdp|impdp|rman|login|ldap|pass:"
        r"|(?i:jdbc:oracle:)",
        (
            "mysql",
            "mariadb",
            "sshpass",
            "redis-cli",
            "sqlplus",
            "expdp",
            "impdp",
            "rman",
            "login",
            "ldap",
            "pass:",
            "jdbc:oracle:",
        ),
        lambda m: not _secret(m).startswith(("[REDACTED", "$")),
        example=_fake("mysql -u root -p", "FakePassw0rd", " orders"),
    ),
    _rule(
        "tool_password",
        r"(?:\b(?:mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|mongostat|mongotop"
        r"|twine)\b[^\n]*?[ \t](?:-p|--password)[ \t]+"
        r"|\b(?:sqlcmd|bcp|osql|isql|zip|zipcloak|unzip)\b[^\n]*?[ \t]-P[ \t]*"
        r"|\b7z[az]?\b[^\n]*?[ \t]-p"
        r"|\bhtpasswd\b(?=[^\n]*[ \t]-[A-Za-z]*b)[^\n]*[ \t](?=[^\s]+[ \t]*(?:\r?\n|$))"
        r"|\b(?:smbclient|rpcclient|smbmap|smbcacls)\b[^\n]*?[ \t](?:-U|--user)[ \t=]*"
        r"[\"']?[^\s%\"']+%"
        r"|\bpoetry[ \t]+config[ \t]+(?:http-basic\.[^\s]+[ \t]+[^\s]+|pypi-token\.[^\s]+)[ \t]+"
        r"|\bgh[ \t]+secret[ \t]+set\b[^\n]*?[ \t](?:-b|--body)(?:[ \t]+|=)"
        r"|\baz\b[^\n]*?\blogin\b[^\n]*?[ \t](?:-p|--password)[ \t]+"
        r"|\brabbitmqctl\b[^\n]*?\b(?:add_user|change_password)[ \t]+[^\s]+[ \t]+"
        r"|\bnet[ \t]+use\b[^\n]*?[ \t]/user:[^\s]+[ \t]+"
        r"|(?:\bPDO|\bmysqli)(?:->|::)__construct\([ \t]*(?:" + _QUOTED + r")[ \t]*,[ \t]*"
        r"(?:" + _QUOTED + r")[ \t]*,[ \t]*)"  # PHP's stack traces print the arguments
        r"(?P<secret>'[^'\n]+'|\"[^\"\n]+\"|[^\s'\"]+)",
        r"(?:mongo[a-z]*|twine|az)[ \t](?:[^\n]*[ \t])?-(?:p|-password)[ \t]"
        r"|(?:sqlcmd|bcp|osql|isql|zip|zipcloak|unzip)[ \t](?:[^\n]*[ \t])?-P"
        r"|7z[az]?[ \t](?:[^\n]*[ \t])?-p|htpasswd[ \t]|smbclient|rpcclient|smbmap|smbcacls"
        r"|poetry[ \t]+config|gh[ \t]+secret[ \t]+set|rabbitmqctl|net[ \t]+use[ \t]"
        r"|(?:PDO|mysqli)(?:->|::)__construct\(",
        (
            " -p",
            "htpasswd",
            "smb",
            "rpcclient",
            "poetry",
            "secret set",
            "rabbitmqctl",
            "net use",
            "__construct(",
        ),
        _tool_password_check,
        example=_fake("sqlcmd -S db -U sa -P '", "FakeSqlcmdPassw0rd", "' -Q 'SELECT 1'"),
    ),
    _rule(
        "stdin_password",
        r"(?m:(?:(?:^[ \t]*\++[ \t]+|(?<![\w-]))"
        r"(?:echo(?:[ \t]+-[neE]+)?|printf(?:[ \t]+[\"']?%s(?:\\n)?[\"']?)?)[ \t]+"
        r"|--password-stdin[^\n]*?<<<[ \t]*)"
        r"(?P<secret>\"[^\"\n]+\"|'[^'\n]+'|[^\s|;&<>]+)[ \t]*(?:$|(?=\|[^\n]*"
        + _STDIN_READER
        + r")))",
        _STDIN_READER,
        ("password-stdin", "sudo", "chpasswd", "--stdin"),
        lambda m: value_is_secret(_secret(m).strip("\"'"), 2),
        example=_fake("docker login -u ci --password-stdin ghcr.io <<< ", "FakeStdinPassw0rd"),
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
        r"<(?P<tag>[\w:.-]*(?i:password|passwd|secret|token|apikey|api_key|credentials?)"
        r"[\w:.-]*)>(?P<secret>[^<\n]{1,300})</(?P=tag)>",
        r"(?i:password>|passwd>|secret>|token>|apikey>|api_key>|credential>|credentials>)",
        check=lambda m: value_is_secret(_secret(m), _name_strength(m.group("tag"))),
        markers=("password>", "passwd>", "secret>", "token>", "apikey>", "api_key>", "credential"),
        example=_fake("<password>", "FakeXmlPassw0rd", "</password>"),
    ),
    _rule(
        "secret_flag",
        r"(?<![\w-])--?(?P<name>[A-Za-z][\w-]*)[ \t]+"
        r"(?P<secret>\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'-][^\s\"']*)",
        r"(?i:--?[a-z-]*(?:pass|pwd|secret|token|key|credential|auth)[a-z_-]*[ \t])",
        ("pass", "pwd", "secret", "token", "key", "credential", "auth"),
        _flag_check,
        example=_fake("deploy --db-password ", "Fl4g-fake-pw"),
    ),
    _rule(
        "powershell_env",
        r"(?i:\$env:)(?P<name>[A-Za-z_]\w{0,80})[ \t]*(?P<sep>=)[ \t]*" + _VALUE,
        r"(?i:\$env:[a-z_0-9]*(?:pass|pwd|secret|token|key|auth|credential))",
        ("$env:",),
        _assignment_check,
        example=_fake('$env:API_TOKEN = "', "FakePowerShellTok3n", '"'),
    ),
    _rule(
        "yaml_block_secret",
        r"(?P<name>(?<![\w.])[A-Za-z_][\w.-]{0,80})[ \t]*:[ \t]*[|>][+-]?[ \t]*\r?\n"
        r"[ \t]+(?P<secret>[^\s][^\n]*?)[ \t]*(?=\r?\n|\Z)",
        r"(?i:(?:pass|pwd|secret|token|key|auth|credential)[a-z0-9_.-]{0,40}[ \t]*:[ \t]*[|>])",
        (": |", ": >", ":|", ":>"),
        lambda m: value_is_secret(_secret(m), _name_strength(m.group("name"))),
        example=_fake("password: |\n  ", "FakeYamlBlockPassw0rd"),
    ),
    _rule(
        "php_dump_secret",
        r"\[[\"'](?P<name>[^\"'\n]{1,80})[\"']\]=>\s*string\(\d+\)[ \t]*\"(?P<secret>[^\"\n]*)\"",
        r"(?i:(?:pass|pwd|secret|token|key|auth|credential)[a-z0-9_.-]{0,40}[\"']\]=>)",
        ("]=>",),
        lambda m: value_is_secret(_secret(m), _name_strength(m.group("name"))),
        example=_fake('["password"]=> string(16) "', "FakePhpDumpPassw0", '"'),
    ),
    _rule(
        "sql_parameters",
        r"\[SQL: (?i:insert|replace)[ \t]+(?i:into)[ \t]+[^\n(]*\((?P<columns>[^)\n]*)\)"
        r"[^\n]*\][ \t]*\r?\n\[parameters: (?P<secret>\([^\n]*\))\]",
        r"\[SQL: (?i:insert|replace)[^\n]*(?i:pass|pwd|secret|token|key|credential)[^\n]*\r?\n"
        r"\[parameters: \(",
        ("[parameters:",),
        lambda m: any(
            _name_strength(column.strip().strip('"`[]')) == 2  # noqa: PLR2004
            for column in m.group("columns").split(",")
        ),
        example=_fake(
            "[SQL: INSERT INTO users (name, password) VALUES (?, ?)]\n[parameters: ('ci', '",
            "FakeSqlParamPw0",
            "')]",
        ),
    ),
    _rule(
        "sql_password",
        r"(?i:(?:(?<=[ \t])(?P<bare>password)|identified[ \t]+by"
        r"|set[ \t]+password[ \t]+for[ \t]+[^\n=]{1,80}=)[ \t]*=?[ \t]*)"
        r"(?P<secret>'(?:[^'\n]|'')+'|\"[^\"\n]+\")",
        r"(?i:password[ \t]*=?[ \t]*'|identified[ \t]+by|set[ \t]+password)",
        ("password", "identified"),
        _sql_check,
        example=_fake("CREATE USER app WITH PASSWORD '", "FakeSqlPassw0rd", "';"),
    ),
    _rule(
        "field_input",
        r"(?:(?m:^)(?P<name>[A-Za-z_][\w.\[\]-]{0,120})[ \t]*\r?\n[ \t]+[^\n]*?"
        r"\[type=[\w.]+,[ \t]*input_value="
        r"|[\"']loc[\"']:[ \t]*[\[(](?:[^\])\n]*?,[ \t]*)?"
        r"[\"'](?P<loc>[^\"'\n]{1,80})[\"'],?[ \t]*[\])]"
        r"[ \t]*,[ \t]*[\"']msg[\"']:[ \t]*(?:" + _QUOTED + r")[ \t]*,[ \t]*[\"']input[\"']:[ \t]*)"
        r"(?P<secret>" + _QUOTED + r"|[^,\]\n]+)",
        r"(?m:^[A-Za-z_][\w.\[\]-]{0,120}[ \t]*\r?\n[ \t]+[^\n]*\[type=[\w.]+,[ \t]*input_value=)"
        r"|[\"']loc[\"']:[ \t]*[\[(]",
        ("input_value=", '"loc"', "'loc'"),
        lambda m: _field_input_check(m) if m.group("name") else _loc_input_check(m),
        example=_fake(
            "db.password\n  String should have at least 24 characters [type=string_too_short,",
            " input_value='FakePydanticPw0', input_type=str]",
        ),
    ),
    _rule(
        "secret_wrapper",
        r"\b(?:SecretStr|SecretBytes|SecretString|SecretBox|Secret|Sensitive|Password)"
        r"\([ \t]*[bB]?(?P<secret>" + _QUOTED + r")[ \t]*\)",
        r"(?:Secret[A-Za-z]*|Sensitive|Password)\([ \t]*[bB]?[\"']",
        (
            "secret(",
            "secretstr(",
            "secretbytes(",
            "secretstring(",
            "secretbox(",
            "sensitive(",
            "password(",
        ),
        _literal_check,
        example=_fake("expected SecretStr('", "FakeSecretStrValue0", "')"),
    ),
    _rule(
        "name_value_tuple",
        r"(?:[(\[][ \t]*(?P<q>[\"'])(?P<name>[A-Za-z_][\w.-]{0,80})(?P=q)[ \t]*,[ \t]*"
        r"|\{[ \t]*(?P<atom>[a-z][\w]{0,80})[ \t]*,[ \t]*(?:<<)?"  # Erlang: {password,<<"..">>}
        r"|(?<![\w:])(?P<keyword>:[A-Za-z_][\w.-]{0,80})[ \t]+)"  # EDN, Lisp: :password "..."
        r"(?P<secret>" + _QUOTED + r")(?=[ \t]*(?:>>)?[ \t]*[)\]},:])",
        r"[(\[][ \t]*[\"'][\w.-]{0,40}(?i:pass|pwd|secret|token|key|auth|credential|dsn)"
        r"[\w.-]{0,40}[\"'][ \t]*,"
        r"|[{:][a-z_]{0,40}(?i:pass|pwd|secret|token|key|auth|credential|dsn)[\w.-]{0,40}[ \t,]",
        ("',", '",', ",<<", ' "', " '"),
        _named_check,
        example=_fake('[("STRIPE_SECRET", "', "Fake0Tuple1Pair2Secret3", '")]'),
    ),
    _rule(
        "xml_name_value",
        r"<name>(?P<name>[^<\n]{1,80})</name>\s*<value>(?P<secret>[^<\n]{1,300})</value>",
        r"<name>[^<\n]{0,40}(?i:pass|pwd|secret|token|key|auth|credential)",
        ("<name>",),
        lambda m: value_is_secret(_secret(m), _name_strength(m.group("name"))),
        context_lines=1,
        example=_fake("<name>Private-Token</name><value>", "FakeXmlPairToken0", "</value>"),
    ),
    _rule(
        "name_value_pair",
        r"(?i:\bname)[\"']?[ \t]*[:=][ \t]*[\"']?(?P<name>[A-Za-z_][\w.-]{0,80})[\"']?"
        r"(?:[^\n{}\[\]]{0,80}?|[ \t]*\r?\n[ \t]*)"
        r"(?i:\bvalue)[\"']?[ \t]*[:=][ \t]*(?P<secret>" + _QUOTED + r"|[^\s\"',;)\]}]+)",
        r"(?i:\bname[\"']?[ \t]*[:=][ \t]*[\"']?[\w.-]{0,40}"
        r"(?:pass|pwd|secret|token|key|auth|credential|sess|sid|dsn))",
        ("name",),
        _name_value_check,
        context_lines=1,
        example=_fake('{"name": "DB_PASSWORD", "value": "', "FakeEcsPassw0rd", '"}'),
    ),
    _rule(
        "table_secret",
        r"(?m:^[ \t]*" + _CELL + r"?(?P<name>[A-Za-z_][\w.-]{0,80})"
        r"(?:[ \t]{2,}|\t[ \t]*|[ \t]*" + _CELL + r")"
        r"(?P<secret>(?:(?!│|┃)[^\s|]){8,})[ \t]*" + _CELL + r"?\r?$)",
        r"(?m:^[ \t]*" + _CELL + r"?[\w.-]{0,40}(?i:pass|pwd|secret|token|credential|key)"
        r"[\w.-]{0,40}(?:[ \t]{2,}|\t|[ \t]*" + _CELL + r")[^\s|]{8,}[ \t]*" + _CELL + r"?\r?$)",
        ("pass", "pwd", "secret", "token", "credential", "key"),
        _table_check,
        example=_fake("db_password     ", "Fake0Table1Passw0rd"),
    ),
    _rule(
        "secret_assignment",
        r"(?P<name>(?<![\w.])(?<!\w:)(?<!\$\{)[A-Za-z_][\w.-]{0,80}|\"[^\"\n]{1,80}\"|'[^'\n]{1,80}')"
        r"[ \t]*(?P<sep>:=|=>|=(?!=)|:(?![:/\\])|(?<=[ \t])(?:is(?=[ \t]+[\"'])|->(?=[ \t])))"
        r"[ \t]*" + _VALUE,
        _NAME_TRIGGER,
        (
            "pass",
            "pwd",
            "secret",
            "token",
            "key",
            "auth",
            "credential",
            "cookie",
            "sig",
            "dsn",
            "pw",
            "psk",
            "sess",
            "sid",
            "connectionstring",
        ),
        _assignment_check,
        example=_fake("DB_PASSWORD=", "correcthorsebatterystaple"),
    ),
)
"""The rule table, applied in this order to every candidate line."""


# --- multi-line secrets ---------------------------------------------------------------------

_BLOCK = lazy_regex(
    r"-{4,5} ?(?P<kind>BEGIN|END) (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)? ?-{4,5}"
    r"|(?P<putty>Private-Lines: *\d+|Private-MAC: *[0-9A-Fa-f]*)"
)
_BLOCK_TRIGGER = r"(?i:private key|private-lines:|private-mac:)"
_BLOCK_RULE = "private_key"


# --- environment ----------------------------------------------------------------------------

_NOT_SECRET_ENV = lazy_regex(
    r"^(?:SSH_AUTH_SOCK|XAUTHORITY|GPG_AGENT_INFO|KEYTIMEOUT|GIT_ASKPASS|SSH_ASKPASS|SUDO_ASKPASS)$"
)
_ENV_MIN, _ENV_MAX = 8, 8192


def _env_secrets(env: Mapping[str, str]) -> dict[str, str]:
    """Return ``{value: name}`` of the secret-looking variables worth searching for."""
    values: dict[str, str] = {}
    for name, value in env.items():
        bare = value.strip()
        strength = _name_strength(name.replace("-", "_"))
        if (
            _NOT_SECRET_ENV.match(name)
            or strength == 0
            or (strength == 1 and not _randomish(bare))  # SESSION_ENGINE=django.contrib...
            or not _ENV_MIN <= len(bare) <= _ENV_MAX
            or "\n" in bare
        ):
            continue
        if not _is_aws_secret(bare) and (
            _looks_path(bare)
            or _PLACEHOLDER.match(bare)
            or _TEMPLATED.match(bare)
            or _URL_VALUE.match(bare)
            or _NUMBERS.fullmatch(bare)
        ):
            continue
        values.setdefault(bare, name)
        encoded = quote(bare, safe="")
        if encoded != bare:
            values.setdefault(encoded, name)
    return values


# --- the engine -----------------------------------------------------------------------------

_Edit = tuple[int, int, str]


class Redactor:
    """Replaces secrets in text; see the module documentation for what counts as one.

    Args:
        environ: Where secret-looking variables are read from, once, at construction;
            ``os.environ`` by default. Pass ``{}`` to use the rule table alone.
        rules: The rule table (the default is :data:`RULES`).
        max_output_chars: How much of a failure's redacted output
            :meth:`redact_failure` keeps, head and tail (``None``: all of it).
    """

    def __init__(
        self,
        *,
        environ: Mapping[str, str] | None = None,
        rules: tuple[Rule, ...] = RULES,
        max_output_chars: int | None = MAX_OUTPUT_CHARS,
    ) -> None:
        env = os.environ if environ is None else environ
        values = _env_secrets(env)
        ordered = sorted(values, key=lambda v: (-len(v), v))
        self._env_names = values
        self._env_pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        self._rules = rules
        by_marker: dict[str, set[int]] = {}
        for index, rule in enumerate(rules):
            for marker in rule.markers:
                by_marker.setdefault(marker, set()).add(index)
        self._markers = [(marker, frozenset(ids)) for marker, ids in by_marker.items()]
        self._unmarked = frozenset(i for i, rule in enumerate(rules) if not rule.markers)
        self.max_output_chars = max_output_chars
        triggers = [_BLOCK_TRIGGER, _CUT_TRIGGER, *(f"(?:{r.trigger})" for r in rules)]
        if ordered:
            triggers.append("|".join(map(re.escape, ordered)))
        self._trigger = _Trigger("|".join(triggers))
        self._context = max((r.context_lines for r in rules), default=0)

    # --- public -----------------------------------------------------------------------------

    def redact(self, text: str) -> Redacted:
        """Return *text* with every secret replaced by ``[REDACTED:<rule>]``.

        Args:
            text: Any text: tool output, a command line, a description.

        Returns:
            The redacted text and the per-rule counts.
        """
        counts: dict[str, int] = {}
        edits = self._edits(text, counts)
        if not edits:
            return Redacted(text, counts)
        return Redacted(_apply(text, edits, 0, len(text)), counts)

    def redact_window(self, text: str, max_chars: int) -> Redacted:
        """Redact all of *text*, then keep the head and the tail of the result.

        The secrets are found in the whole text first, so a secret that straddles the cut is
        removed whole and counted; only the kept part of the redacted text is ever built.

        Args:
            text: Any text.
            max_chars: About how many characters to keep; the cut falls at line ends and
                is marked by a ``[... N characters cut ...]`` line.
        """
        counts: dict[str, int] = {}
        edits = self._edits(text, counts)
        size = len(text) + sum(len(new) - (end - start) for start, end, new in edits)
        if size <= max_chars:
            return Redacted(_apply(text, edits, 0, len(text)) if edits else text, counts)
        head_end, tail_start = _cut_points(text, edits, max_chars)
        head = _apply(text, edits, 0, head_end)
        tail = _apply(text, edits, tail_start, len(text))
        cut = size - len(head) - len(tail)
        separator = "" if head.endswith("\n") or not head else "\n"
        return Redacted(f"{head}{separator}[... {cut} characters cut ...]\n{tail}", counts)

    def redact_failure(self, failure: FailureContext) -> tuple[FailureContext, dict[str, int]]:
        """Redact a failure's error output, command and description.

        The output is redacted whole, then cut to :attr:`max_output_chars` (head and tail).

        Returns:
            The redacted failure and the per-rule counts summed over the three fields.
        """
        total: dict[str, int] = {}
        limit = self.max_output_chars
        output = (
            self.redact_window(failure.error_output, limit)
            if limit is not None
            else self.redact(failure.error_output)
        )
        command, description = self.redact(failure.command), self.redact(failure.description)
        for result in (output, command, description):
            for rule, count in result.counts.items():
                total[rule] = total.get(rule, 0) + count
        if (
            output.text is failure.error_output
            and command.text is failure.command
            and description.text is failure.description
        ):
            return failure, total
        clean = attrs.evolve(
            failure,
            error_output=output.text,
            command=command.text,
            description=description.text,
        )
        return clean, total

    __call__ = redact_failure

    # --- finding --------------------------------------------------------------------------

    def _edits(self, text: str, counts: dict[str, int]) -> list[_Edit]:
        """Return the replacements for *text* as sorted, disjoint ``(start, end, new)``."""
        found = self._candidates(text)
        edits = self._block_edits(text, found.blocks, counts) if found.blocks else []
        regions = found.regions
        if self._context:
            regions = _with_context(text, regions, self._context)
        changed: list[_Edit] = []
        found_values: dict[str, str] = {}  # each secret value a rule found -> the rule
        carried: set[int] = set()  # starts of lines after a cut whose first word must go
        for start, end in _outside(sorted(regions), edits):
            old = text[start:end]
            new = self._redact_region(old, counts, found_values)
            if end in found.before_cut or start in found.after_cut:
                new, carry = _redact_fragments(
                    new,
                    counts,
                    tail=end in found.before_cut,
                    head=start in found.after_cut,
                    carried=start in carried,
                )
                if carry:
                    carried.add(_line_end(text, end))
            if new != old:
                changed.append((start, end, new))
        merged = sorted(edits + changed)
        return _spread(text, merged, found_values, counts) if found_values else merged

    def _candidates(self, text: str) -> _Candidates:
        """Scan *text* once: key block markers, cut lines, and the lines to run rules on."""
        found = _Candidates()
        regions = found.regions
        for start, end in self._trigger.spans(text):
            if _BLOCK_TRIGGER_RE.fullmatch(text, start, end):
                found.blocks.append(start)
                continue
            line_start = _line_start_near(text, start)
            line_end = _line_end_near(text, end)
            if not text.startswith(("[...", "[…"), start):
                line_start, line_end = _extend(text, start, end, line_start, line_end)
                while regions and regions[-1][1] >= line_start:  # overlaps: one region
                    line_start = min(line_start, regions[-1][0])
                    line_end = max(line_end, regions.pop()[1])
                _add_region(regions, line_start, line_end)
            elif CUT_LINE.match(text, line_start, line_end) is not None:
                if line_start > 0:  # the line before the cut may end in half a secret
                    found.before_cut.add(line_start)
                    _add_region(regions, _line_start_near(text, line_start - 1), line_start)
                if line_end < len(text):  # and the line after may start with the rest
                    found.after_cut.add(line_end)
                    _add_region(regions, line_end, _line_end_near(text, line_end))
        return found

    def _redact_region(self, text: str, counts: dict[str, int], found: dict[str, str]) -> str:
        """Apply the environment values and the rules to a few lines of text.

        Terminal escape sequences (colour codes around a name, its ``=`` and its value) are
        removed before the rules run; lines where nothing was found keep them.
        """
        if "\x1b" in text:
            plain = _ANSI.sub("", text)
            redacted = self._redact_plain(plain, counts, found)
            return text if redacted is plain else redacted
        return self._redact_plain(text, counts, found)

    def _redact_plain(self, text: str, counts: dict[str, int], found: dict[str, str]) -> str:
        """:meth:`_redact_region` on text without escape sequences; *text* itself if clean."""
        original = text
        if self._env_pattern is not None:
            names = self._env_names

            def env_sub(match: re.Match[str]) -> str:
                rule = f"env:{names[match.group(0)]}"
                counts[rule] = counts.get(rule, 0) + 1
                return f"[REDACTED:{rule}]"

            text = self._env_pattern.sub(env_sub, text)
        for _ in range(_PASSES):  # a redaction may expose a shape a rule before it rejected
            before = text
            lowered = (_PLACEHOLDERS.sub("", text) if "[REDACTED:" in text else text).lower()
            selected = {i for marker, rules in self._markers if marker in lowered for i in rules}
            for index in sorted(selected | self._unmarked):
                rule = self._rules[index]
                if rule.gate is None or rule.gate.search(text) is not None:
                    text = _apply_rule(rule, text, counts, found)
            if text == before:
                break
        if "[REDACTED:" in text and "\n" in text:
            text = _WRAPPED_TAIL.sub(lambda m: _redact_tail(m, counts), text)
        return original if text == original else text

    def _block_edits(self, text: str, hits: list[int], counts: dict[str, int]) -> list[_Edit]:
        """Remove private key blocks whole, and their parts cut off by a window boundary."""
        found_tokens: set[tuple[int, int, bool]] = set()  # (start, end, is_begin)
        for hit in hits:  # a marker starts at most a few dozen characters before its hit
            for found in _BLOCK.finditer(text, max(hit - 80, 0), min(hit + 80, len(text))):
                putty = found.group("putty")
                is_begin = found.group("kind") == "BEGIN" if putty is None else "Lines" in putty
                found_tokens.add((found.start(), found.end(), is_begin))
        tokens = sorted(found_tokens)
        edits: list[_Edit] = []
        window_start = 0
        index = 0
        marker = f"[REDACTED:{_BLOCK_RULE}]"
        while index < len(tokens):
            start, end, is_begin = tokens[index]
            index += 1
            if start < window_start:
                continue
            if is_begin:
                closing = next((t for t in tokens[index:] if not t[2] and t[0] >= end), None)
                stop = closing[0] if closing is not None else len(text)
                boundary = _next_boundary(text, end, stop)
                if closing is not None and boundary is None:
                    span = (start, closing[1], marker)
                else:  # cut off by a boundary: remove up to it, keep the cut line's own line
                    span_end = boundary if boundary is not None else len(text)
                    newline = "\n" if text[span_end - 1 : span_end] == "\n" else ""
                    span = (start, span_end, marker + newline)
            else:  # an END with no BEGIN since the window began: remove from the boundary
                boundary = _previous_boundary(text, window_start, start)
                span = (boundary if boundary is not None else window_start, end, marker)
            counts[_BLOCK_RULE] = counts.get(_BLOCK_RULE, 0) + 1
            edits.append(span)
            window_start = span[1]
        return edits


def _redact_tail(match: re.Match[str], counts: dict[str, int]) -> str:
    """Replace the tail of a wrapped quoted value whose head a rule removed."""
    tail = match.group("tail")
    if not (any(c.isdigit() for c in tail) and any(c.isalpha() for c in tail)):
        return match.group()  # a word: the next line's own text, not half a token
    rule = match.group("rule")
    counts[rule] = counts.get(rule, 0) + 1
    start = match.start("tail") - match.start()
    return f"{match.group()[:start]}[REDACTED:{rule}]{match.group('quote')}"


_PASSES = 3
"""How often the rules run over a region that changed: to a fixed point, so redacting twice
changes nothing more, with a bound for the pathological."""

_PLACEHOLDERS = lazy_regex(r"\[REDACTED:[\w:.-]+\]")
"""Our own replacements: never the context (``secret``, ``token``) that lets a rule run."""

_ANSI = lazy_regex(
    r"\x1b\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]"  # CSI: colours, cursor moves
    r"|\x1b[\]PX^_][^\x07\x1b\n]*(?:\x07|\x1b\\)?"  # OSC and other strings: hyperlinks
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]"  # any other escape
)
"""Terminal escape sequences: removed from a candidate line before the rules run on it."""

_BLOCK_TRIGGER_RE = lazy_regex(_BLOCK_TRIGGER)
_STDIN_READER_RE = lazy_regex(_STDIN_READER)
_KEY_TEXT_RE = lazy_regex(_KEY_TEXT_LINES)
_BASE64_PEM = "LS0tLS1CRUdJTi"
"""``-----BEGIN`` in base64: a PEM block encoded whole (``client-key-data``, ``base64 key.pem``)."""
_BASE64_LINES = lazy_regex(
    r"(?:[ \t]*(?:[A-Za-z0-9+/]{16,}|" + _B64_TAIL + r")={0,2}[ \t]*(?:\r?\n|\Z))*"
)


@attrs.define
class _Candidates:
    """What one scan of the triggers found."""

    blocks: list[int] = attrs.field(factory=list)  # positions of key block markers
    regions: list[tuple[int, int]] = attrs.field(factory=list)  # lines to run the rules on
    before_cut: set[int] = attrs.field(factory=set)  # ends of lines followed by a cut line
    after_cut: set[int] = attrs.field(factory=set)  # starts of lines following one


def _extend(text: str, start: int, end: int, line_start: int, line_end: int) -> tuple[int, int]:
    """Widen a candidate line over the lines its secret goes on to (or comes from)."""
    if text.startswith("Private-Key:", start):  # openssl -text: the dump below
        dump = _KEY_TEXT_RE.match(text, line_end)
        line_end = dump.end() if dump is not None else line_end
    if text.startswith(_BASE64_PEM, start):  # `base64 key.pem`: wrapped lines
        wrapped = _BASE64_LINES.match(text, line_end)
        line_end = wrapped.end() if wrapped is not None else line_end
    line_end = _continued(text, end, line_end)
    if _STDIN_READER_RE.match(text, start):  # `+ echo PW` is the line before or after
        line_start = _line_start_near(text, max(line_start - 1, 0))
        line_end = _line_end_near(text, line_end) if line_end < len(text) else line_end
    return line_start, line_end


_CONTINUATIONS = 8
"""How many following lines a wrapped quoted value (pprint, rich) may take."""
_LINE_TAIL = lazy_regex(r"(?:[ \t]|\x1b\[[0-9;]*m)*(?:[\"'](?:[ \t]|\x1b\[[0-9;]*m)*)?\r?\n")
_QUOTE_NEXT = lazy_regex(r"(?:[ \t]|\x1b\[[0-9;]*m)*[\"']")


def _continued(text: str, trigger_end: int, line_end: int) -> int:
    """Extend a candidate line over the lines a wrapped quoted value goes on to.

    pprint and rich put a long value on the line after its name (``'token':`` at the end of
    one line, ``'abc...'`` on the next) and split a long string into adjacent literals, one
    per line. A line that ends at the separator or in a quote, followed by a line that
    starts with a quote, goes on.
    """
    position = max(trigger_end, text.rfind("\n", 0, line_end - 1) + 1)
    for _ in range(_CONTINUATIONS):
        if (
            line_end >= len(text)
            or text[line_end - 1] != "\n"
            or _LINE_TAIL.fullmatch(text, _tail_start(text, position, line_end), line_end) is None
            or _QUOTE_NEXT.match(text, line_end) is None
        ):
            break
        position = line_end
        line_end = _line_end_near(text, line_end)
    if _breaks_a_quote(text, line_end) and _CLOSING_NEXT.match(text, line_end) is not None:
        line_end = _line_end_near(text, line_end)  # rich wrapped the value inside its quotes
    return line_end


_CLOSING_NEXT = lazy_regex(r"(?:[ \t]|\x1b\[[0-9;]*m)*[^\s'\"\x1b]+(?:\x1b\[[0-9;]*m)*['\"]")
"""A line that starts with the rest of a quoted word and its closing quote."""
_OPEN_TOKEN = lazy_regex(r"(?:\x1b\[[0-9;]*m)*[^\s'\"\x1b]{8,}(?:[ \t]|\x1b\[[0-9;]*m)*\r?\n")
_WRAPPED_TAIL = lazy_regex(
    r"(?P<quote>['\"])[^'\"\n]*\[REDACTED:(?P<rule>[\w:.-]+)\][ \t]*\r?\n[ \t]*"
    r"(?P<tail>[A-Za-z0-9_+/=.~-]+)(?P=quote)(?![^\s,)\]}:;])"
)
"""A quoted value whose redacted head ends its line and whose tail starts the next one."""


def _breaks_a_quote(text: str, line_end: int) -> bool:
    """The line before *line_end* ends inside a quoted word: ``'1//0gLm2...Pw1L``."""
    if line_end >= len(text) or text[line_end - 1] != "\n":
        return False
    line_start = text.rfind("\n", 0, line_end - 1) + 1
    quote = max(text.rfind("'", line_start, line_end), text.rfind('"', line_start, line_end))
    return quote != -1 and _OPEN_TOKEN.fullmatch(text, quote + 1, line_end) is not None


def _tail_start(text: str, position: int, line_end: int) -> int:
    """Where the quote that may end a line starts: just after the line's last quoted word."""
    last_quote = max(text.rfind('"', position, line_end), text.rfind("'", position, line_end))
    if last_quote == -1:
        return position
    return last_quote if _LINE_TAIL.fullmatch(text, last_quote, line_end) else position


def _add_region(regions: list[tuple[int, int]], start: int, end: int) -> None:
    """Append the lines ``start:end``, merged into the last region when they touch it."""
    if regions and regions[-1][0] <= start <= regions[-1][1]:
        regions[-1] = (regions[-1][0], max(regions[-1][1], end))
    else:
        regions.append((start, end))


_CUT_TRIGGER = r"\[(?:\.\.\.|…)"

_FRAGMENT_TAIL = lazy_regex(r"[^\s\"'`,;()\[\]{}<>=:@]+={0,2}\Z")
_FRAGMENT_HEAD = lazy_regex(r"[^\s\"'`,;()\[\]{}<>@]+")
_REDACTED_END = lazy_regex(r"\[REDACTED:(?!private_key\])[\w:.-]+\]\Z")
_TOKEN_START = lazy_regex(
    r"(?:gh[pousr]_|github_pat_|gl(?:pat|dt|rt|ptt|cbt|soat|ft|oas)-|xox[a-z]-|xapp-|sk-|"
    r"[sr]k_(?:live|test)_|whsec_|A(?:KIA|SIA|ROA|IDA)|AIza|ya29\.|eyJ|npm_|pypi-|hf_|SG\.|"
    r"do[opr]_v1_|dapi|shp(?:at|ca|pa|ss)_|HRKU-|AGE-SECRET-KEY-|hv[sbr]\.|dckr_|glsa_|GOCSPX-)"
)
_SECRET_BEFORE = lazy_regex(
    r"(?i:(?:pass|pwd|secret|token|key|auth|credential|sig|cookie)[\w.-]*[\"']?[ \t]*"
    r"(?:=|:|=>)[ \t]*[\"']?|(?:bearer|basic|token)[ \t]+|://[^\s:/@]*:)\Z"
)


def _redact_fragments(
    text: str, counts: dict[str, int], *, tail: bool, head: bool, carried: bool
) -> tuple[str, bool]:
    """Redact half a secret at a cut: the end of the line before it, the start of the next.

    A head+tail cut may fall inside a line, leaving ``password=hun`` before the cut line and
    ``ter2`` after it, or the first half of a token. The word touching the cut goes when the
    text before it says secret (``password=``, ``Bearer ``, ``://user:``), when it starts like
    a known token, or when it looks generated; the word after the cut goes too when the one
    before it went (*carried*), or when it looks generated itself.

    Returns:
        The text, and whether the word after the cut must go as well.
    """
    carry = False
    if tail:
        line = text.rstrip("\n")
        found = None if _SECRET_BEFORE.search(line) else _FRAGMENT_TAIL.search(line)
        if found is None:
            ends_redacted = line.endswith("]") and _REDACTED_END.search(line) is not None
            carry = ends_redacted or _SECRET_BEFORE.search(line) is not None
        elif _fragment_is_secret(found.group(), line[: found.start()]):
            text = f"{line[: found.start()]}[REDACTED:cut_fragment]{text[len(line) :]}"
            counts["cut_fragment"] = counts.get("cut_fragment", 0) + 1
            carry = True
    if head:
        found = _FRAGMENT_HEAD.match(text)
        if found is not None and (carried or _fragment_is_secret(found.group(), "")):
            text = f"[REDACTED:cut_fragment]{text[found.end() :]}"
            counts["cut_fragment"] = counts.get("cut_fragment", 0) + 1
    return text, carry


def _fragment_is_secret(fragment: str, before: str) -> bool:
    """Tell half a secret from the end or the start of an ordinary line."""
    if (
        not fragment
        or "[REDACTED" in fragment
        or _PLACEHOLDER.match(fragment)
        or _TEMPLATED.match(fragment)
    ):
        return False
    if _SECRET_BEFORE.search(before) or _TOKEN_START.match(fragment):
        return True
    return len(fragment) >= 16 and not _looks_path(fragment) and _randomish(fragment)  # noqa: PLR2004


_CHUNK = 1 << 20
_CONTINUATION = bytes(range(0x80, 0xC0))


class _Match(Protocol):
    def start(self) -> int: ...
    def end(self) -> int: ...


class _Pattern(Protocol):
    def finditer(self, data: bytes, /) -> Iterator[_Match]: ...


def _load_re2() -> Any:  # noqa: ANN401 -- google-re2 ships no type information
    """Return the ``re2`` module of google-re2, or ``None`` where it is not installed."""
    try:
        return importlib.import_module("re2")
    except ImportError:  # pragma: no cover -- a dependency; the stdlib fallback is slower
        return None


_RE2 = _load_re2()


def _re2_options() -> Any:  # noqa: ANN401 -- google-re2 ships no type information
    """RE2's options for the prefilter: room for its automaton, and no logging of its own.

    On some inputs (a bundle of certificates: long base64 lines) the automaton outgrows
    RE2's default 8 MiB and RE2 falls back to a slower matcher, printing "DFA out of memory"
    to the terminal of whatever command was reflecting. 32 MiB keeps it fast there; when
    even that is not enough the fallback is still correct, and quiet.
    """
    options = _RE2.Options()
    options.max_mem = 32 << 20
    options.log_errors = False
    return options


class _Trigger:
    """The prefilter: one combined pattern scanned once over the text.

    RE2 (google-re2, a dependency) runs the whole alternation as one automaton, about
    0.3 GB/s; Python's ``re`` tries each alternative at each position, about 1 MB/s for
    this table. The text is scanned in chunks of about 1 MB cut at line ends (no trigger
    spans a line), encoded to UTF-8, so the extra memory stays small whatever its size.
    """

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._compiled: _Pattern = (
            _RE2.compile(pattern, options=_re2_options())
            if _RE2 is not None
            else re.compile(pattern.encode())
        )

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        """Yield the ``(start, end)`` of every trigger match in *text*, in order."""
        position = 0
        size = len(text)
        while position < size:
            stop = text.find("\n", position + _CHUNK) if size - position > _CHUNK else -1
            stop = size if stop == -1 else stop + 1
            chunk = text if position == 0 and stop == size else text[position:stop]
            if chunk.isascii():
                for match in self._compiled.finditer(chunk.encode("ascii")):
                    yield position + match.start(), position + match.end()
            else:
                yield from self._unicode_spans(chunk, position)
            position = stop

    def _unicode_spans(self, chunk: str, offset: int) -> Iterator[tuple[int, int]]:
        """Map byte positions in the UTF-8 of *chunk* back to character positions."""
        data = chunk.encode("utf-8", "surrogatepass")
        last_byte = last_char = 0
        for match in self._compiled.finditer(data):
            start, end = match.start(), match.end()
            last_char += len(data[last_byte:start].translate(None, _CONTINUATION))
            last_byte = start
            width = len(data[start:end].translate(None, _CONTINUATION))
            yield offset + last_char, offset + last_char + width


_LONG_LINE = 4096
"""Past this, a line is read near its trigger only (a minified file, output without newlines)."""
_NEAR = 300
"""How far around a trigger a long line is read: a name, its separator and a long value."""
_DELIMITER = lazy_regex(r"[\s\"'<>,;]")


def _line_start_near(text: str, position: int) -> int:
    """The start of the line holding *position*; on a very long line, a word start near it."""
    low = max(position - _LONG_LINE, 0)
    newline = text.rfind("\n", low, position)
    if newline != -1 or low == 0:
        return newline + 1
    near = max(position - _NEAR, 0)
    space = text.find(" ", near, position)
    return space + 1 if space != -1 else near


def _line_end_near(text: str, position: int) -> int:
    """Just past the line holding *position*; on a very long line, a word end near it."""
    high = min(position + _LONG_LINE, len(text))
    newline = text.find("\n", position, high)
    if newline != -1:
        return newline + 1
    if high == len(text):
        return high
    near = min(position + _NEAR, len(text))
    space = text.rfind(" ", position, near)
    if space != -1:
        return space
    stop = _DELIMITER.search(text, near, high)  # a long token: read it to its end
    return stop.start() if stop is not None else high


def _line_end(text: str, position: int) -> int:
    """The index just past the line holding *position*, its newline included."""
    newline = text.find("\n", position)
    return len(text) if newline == -1 else newline + 1


def _boundaries(text: str, start: int, stop: int) -> Iterator[re.Match[str]]:
    """The cut lines between *start* and *stop* (found by their literal start first)."""
    for opener in ("[...", "[…"):
        position = text.find(opener, start, stop)
        while position != -1:
            line_start = _line_start_near(text, position)
            found = CUT_LINE.match(text, line_start, _line_end_near(text, position))
            if found is not None and found.start() >= start:
                yield found
            position = text.find(opener, position + 1, stop)


def _next_boundary(text: str, start: int, stop: int) -> int | None:
    """The start of the first cut line after *start*, before *stop*."""
    found = [m.start() for m in _boundaries(text, start, stop)]
    return min(found) if found else None


def _previous_boundary(text: str, start: int, stop: int) -> int | None:
    """Just past the last cut line between *start* and *stop*."""
    found = [m.end() for m in _boundaries(text, start, stop)]
    if not found:
        return None
    last = max(found)
    return last + 1 if text[last : last + 1] == "\n" else last


def cut_lines(text: str) -> list[tuple[int, int]]:
    """Return the ``(start, end)`` of every window boundary line in *text*."""
    return sorted((m.start(), m.end()) for m in _boundaries(text, 0, len(text)))


_CONTEXT_MARKERS = (
    "machine",
    "default",
    '"sensitive"',
    ": |",
    ": >",
    ":|",
    ":>",
    "]=>",
    "name:",  # a Kubernetes env entry: ``- name: DB_PASSWORD`` then ``value: ...``
    ": some(",  # Rust's {:#?}: ``password: Some(`` then the value on the next line
    "name =",
    "<name>",  # Maven's ``<name>Private-Token</name>`` then ``<value>...</value>``
)
"""Lines holding these start a secret spread over the next lines (``.netrc``, Terraform JSON)."""


def _with_context(text: str, regions: list[tuple[int, int]], lines: int) -> list[tuple[int, int]]:
    """Extend each region over the next *lines* lines (multi-line ``.netrc`` entries)."""
    out: list[tuple[int, int]] = []
    for start, end in regions:
        stop = end
        lowered = text[start:end].lower()
        if any(marker in lowered for marker in _CONTEXT_MARKERS):
            for _ in range(lines):
                if stop >= len(text):
                    break
                stop = _line_end_near(text, stop)
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], stop))
        else:
            out.append((start, stop))
    return out


def _outside(regions: list[tuple[int, int]], edits: list[_Edit]) -> Iterator[tuple[int, int]]:
    """The parts of *regions* that no block edit covers (both are whole lines)."""
    if not edits:
        yield from regions
        return
    for start, end in regions:
        position = start
        for e_start, e_end, _ in edits:
            if e_end <= position or e_start >= end:
                continue
            if e_start > position:
                yield position, e_start
            position = max(position, e_end)
        if position < end:
            yield position, end


def _apply(text: str, edits: list[_Edit], start: int, stop: int) -> str:
    """Return ``text[start:stop]`` with the edits inside it applied."""
    pieces: list[str] = []
    position = start
    for e_start, e_end, new in edits:
        if e_end <= start or e_start >= stop:
            continue
        pieces.append(text[position:e_start])
        pieces.append(new)
        position = e_end
    pieces.append(text[position:stop])
    return "".join(pieces)


def _cut_points(text: str, edits: list[_Edit], max_chars: int) -> tuple[int, int]:
    """Choose where the head ends and the tail starts, in *text*'s own positions.

    Both fall at line ends where there is one near, and never inside an edit.
    """
    head_room = int(max_chars * _HEAD_SHARE)
    tail_room = max_chars - head_room
    head_end = _position_after(text, edits, head_room, forward=True)
    tail_start = _position_after(text, edits, tail_room, forward=False)
    newline = text.rfind("\n", 0, head_end)
    if newline > head_end - head_room // 2:
        head_end = newline + 1
    newline = text.find("\n", tail_start)
    if newline != -1 and newline < tail_start + tail_room // 2:
        tail_start = newline + 1
    for e_start, e_end, _ in edits:
        if e_start < head_end < e_end:
            head_end = e_start
        if e_start < tail_start < e_end:
            tail_start = e_end
    return head_end, max(tail_start, head_end)


def _position_after(text: str, edits: list[_Edit], room: int, *, forward: bool) -> int:
    """The position in *text* where *room* characters of redacted text end (or begin)."""
    if forward:
        position, left = 0, room
        for e_start, e_end, new in edits:
            if e_start - position >= left:
                break
            left -= e_start - position + len(new)
            position = e_end
            if left <= 0:
                return position
        return min(position + left, len(text))
    position, left = len(text), room
    for e_start, e_end, new in reversed(edits):
        if position - e_end >= left:
            break
        left -= position - e_end + len(new)
        position = e_start
        if left <= 0:
            return position
    return max(position - left, 0)


_PAIR_VALUE = lazy_regex(r"=([^\s;,&\"']{8,})")
_SPREAD_MAX = 64
"""At most this many found values are searched for in the rest of the text (longest first)."""


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


def _spreading(found: Mapping[str, str]) -> list[tuple[str, str]]:
    """The found values worth searching for elsewhere: long and generated-looking."""
    values = [
        (value, rule)
        for value, rule in found.items()
        if len(value) >= _SPREAD_MIN and "[REDACTED:" not in value and _generated_looking(value)
    ]
    values.sort(key=lambda pair: (-len(pair[0]), pair[0]))
    return values[:_SPREAD_MAX]


def _occurrences(
    text: str,
    start: int,
    stop: int,
    values: list[tuple[str, str]],
    cuts: list[tuple[int, int, str]],
) -> list[tuple[int, int, str]]:
    """Where the *values* stand alone in ``text[start:stop]``: ``(start, end, rule)``.

    *cuts* are the cut copies (:func:`_cut_copies`) of the whole of *text*, sorted.
    """
    found: list[tuple[int, int, str]] = []
    for value, rule in values:
        at = text.find(value, start, stop)
        while at != -1:
            found.append((at, at + len(value), rule))
            at = text.find(value, at + len(value), stop)
    starts = {a for a, _, _ in found}
    ends = {b for _, b, _ in found}
    size = len(text)
    hits = [
        (a, b, rule)
        for a, b, rule in found  # alone, or glued to another found value (``pw1 + pw2``)
        if (a == 0 or not text[a - 1].isalnum() or a in ends)
        and (b >= size or not text[b].isalnum() or b in starts)
    ]
    low = bisect.bisect_left(cuts, (start, -1, ""))
    hits += itertools.takewhile(lambda hit: hit[1] <= stop, cuts[low:])
    hits.sort()
    kept: list[tuple[int, int, str]] = []
    for hit in hits:
        if not kept or hit[0] >= kept[-1][1]:
            kept.append(hit)
    return kept


_CUT_WORD = lazy_regex(r"[A-Za-z0-9_+/=-]+")
_CUT_MIN = 6


def _cut_copies(
    text: str, start: int, stop: int, values: list[tuple[str, str]]
) -> list[tuple[int, int, str]]:
    """Where a tool kept the head or the tail of a found value around ``...``.

    Pytest cuts a long string in an assertion to ``'sec_Pc7K...Xw9Km4Rv7'``: the head of one
    value and the tail of the same or another one.
    """
    hits: list[tuple[int, int, str]] = []
    at = text.find("...", start, stop)
    while at != -1:
        after = at + 3
        while after < stop and text[after] == ".":  # pytest's progress dots: one run
            after += 1
        if after - at == 3:  # noqa: PLR2004 -- a cut is three dots exactly
            for low, high, wanted in _cut_pieces(text, at, after, start, stop):
                piece = text[low:high]
                if len(piece) < _CUT_MIN:
                    continue
                rule = next((r for v, r in values if wanted(v, piece)), None)
                if rule is not None and _generated_looking(piece):
                    hits.append((low, high, rule))
        at = text.find("...", after, stop)
    return hits


def _cut_pieces(
    text: str, at: int, after: int, start: int, stop: int
) -> Iterator[tuple[int, int, Callable[[str, str], bool]]]:
    """The word that ends at ``...`` (a head: ``startswith``) and the one after it (a tail)."""
    low = max(at - _NEAR, start)
    head = _CUT_WORD.match(text[low:at][::-1])  # read backwards from the dots
    if head is not None:
        yield at - head.end(), at, str.startswith
    tail = _CUT_WORD.match(text, after, min(after + _NEAR, stop))
    if tail is not None:
        yield after, tail.end(), str.endswith


def _spread(
    text: str, edits: list[_Edit], found: Mapping[str, str], counts: dict[str, int]
) -> list[_Edit]:
    """Replace every other standalone copy of a value a rule found, anywhere in *text*.

    A tool prints one value several ways: Go's ``%+v`` beside ``%v`` (no names), a call's
    positional argument beside the repr of the object it built, a traceback's source line
    beside its locals. Once one printing names it a secret, the others go too, counted
    under the rule that found it.
    """
    values = _spreading(found)
    if not values:
        return edits

    def edit(hits: list[tuple[int, int, str]]) -> list[_Edit]:
        for _, _, rule in hits:
            counts[rule] = counts.get(rule, 0) + 1
        return [(a, b, f"[REDACTED:{rule}]") for a, b, rule in hits]

    def cut(piece: str) -> list[tuple[int, int, str]]:
        return sorted(_cut_copies(piece, 0, len(piece), values)) if "..." in piece else []

    cuts = cut(text)
    out: list[_Edit] = []
    position = 0
    for start, end, new in edits:
        out += edit(_occurrences(text, position, start, values, cuts))
        inner = edit(_occurrences(new, 0, len(new), values, cut(new)))
        out.append((start, end, _apply(new, inner, 0, len(new)) if inner else new))
        position = end
    out += edit(_occurrences(text, position, len(text), values, cuts))
    return out


def _apply_rule(rule: Rule, text: str, counts: dict[str, int], found: dict[str, str]) -> str:
    """Replace what *rule* finds in *text*, counting it and noting each value in *found*.

    Matches are collected first, so a rule whose pattern only looks ahead at the value (the
    assignment rule) still finds ``password=`` inside the value of a rejected match.
    """
    group = "secret" if "secret" in rule.pattern.groupindex else 0
    pieces: list[str] = []
    position = 0
    for match in rule.pattern.finditer(text):
        start, end = match.span(group)
        secret = match.group(group)
        if (
            not secret
            or start < position
            or "[REDACTED:" in secret  # already handled by an earlier rule
            or (rule.check is not None and not rule.check(match))
        ):
            continue
        quoted = len(secret) > 1 and secret[0] in {'"', "'"} and secret[-1] == secret[0]
        if quoted:
            start, end = start + 1, end - 1
        elif secret[:2] in {'\\"', "\\'"} and secret[-2:] == secret[:2] and len(secret) > 3:  # noqa: PLR2004
            start, end = start + 2, end - 2
        pieces += (text[position:start], f"[REDACTED:{rule.name}]")
        value = text[start:end]
        found.setdefault(value, rule.name)
        if "=" in value:  # a Cookie header, a connection string: each value may be printed alone
            for pair in _PAIR_VALUE.finditer(value):
                found.setdefault(pair.group(1), rule.name)
        position = end
        counts[rule.name] = counts.get(rule.name, 0) + 1
    if not pieces:
        return text
    pieces.append(text[position:])
    return "".join(pieces)


def redact_failure(
    failure: FailureContext, *, redactor: Redactor | None = None
) -> tuple[FailureContext, dict[str, int]]:
    """Redact a failure with *redactor* (a fresh one reading ``os.environ`` by default).

    Returns:
        The redacted failure and the per-rule counts.
    """
    return (redactor or Redactor()).redact_failure(failure)


def redact_text(text: str, *, redactor: Redactor | None = None) -> str:
    """Return *text* redacted by *redactor* (a fresh one reading ``os.environ`` by default)."""
    return (redactor or Redactor()).redact(text).text


def window(text: str, max_chars: int) -> str:
    """Keep the head and the tail of already redacted *text*, cut at line ends.

    The cut is marked by a ``[... N characters cut ...]`` line, which :class:`Redactor`
    reads as a window boundary.
    """
    if len(text) <= max_chars:
        return text
    head_end, tail_start = _cut_points(text, [], max_chars)
    head, tail = text[:head_end], text[tail_start:]
    separator = "" if head.endswith("\n") or not head else "\n"
    cut = len(text) - len(head) - len(tail)
    return f"{head}{separator}[... {cut} characters cut ...]\n{tail}"
