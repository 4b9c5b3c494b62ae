"""Redaction: secrets out of failure output before it is stored or sent anywhere.

Two layers, applied in this order:

1. The exact values of secret-looking environment variables of the running process (names
   containing KEY, TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL, AUTH ...), captured once when
   the :class:`Redactor` is built. A leaked value is caught even when it has no known shape.
2. A table of rules for well-known shapes: cloud keys (AWS, GCP, Azure), API tokens
   (Anthropic, OpenAI, GitHub, GitLab, Slack, Stripe, npm, PyPI, Hugging Face ...), bearer
   tokens, private key blocks, JWTs, passwords in URLs, ``password=...``-style assignments
   and Authorization headers.

A secret is replaced by ``[REDACTED:<rule>]``; the counts per rule (never the values) are
returned so they can go on the reflection record. The rules are written so paths, test
names, git hashes, UUIDs and ordinary words stay untouched.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping

import attrs

from reflexkit.models import FailureContext

__all__ = ["Redacted", "Redactor", "redact_failure"]

_SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|AUTH|PRIVATE|COOKIE|SESSION|DSN|"
    r"CONNECTION_STRING|SIGNATURE|SALT|WEBHOOK",
    re.IGNORECASE,
)
_NOT_SECRET_NAME = re.compile(
    r"^(?:SSH_AUTH_SOCK|XAUTHORITY|GPG_AGENT_INFO|KEYTIMEOUT)$|_PATH$|_DIR$|_FILE$|_URL_TEMPLATE$"
)
_ENV_MIN, _ENV_MAX = 8, 8192
_DULL_VALUE = re.compile(r"^(?:true|false|yes|no|on|off|none|null|\d+|[a-z]+)$", re.IGNORECASE)


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
class _Rule:
    """One shape of secret. Only the ``secret`` group (or the whole match) is replaced."""

    name: str
    pattern: re.Pattern[str]
    check: Callable[[str], bool] | None = None


_CODE = re.compile(r"[A-Za-z_][\w.]*[\[(]")
_WORDS = re.compile(r"[a-z_]+|(?:[A-Z]+[a-z]*)+|[a-z]+(?:[A-Z][a-z]*)+")


_MIN_SECRET = 6
_NOT_A_START = ("[REDACTED", "$", "%(", "{{", "<", "/", "./", "~/", "(", "[", "{")
_PLACEHOLDERS = frozenset(
    {"none", "null", "true", "false", "undefined", "changeme", "redacted", "xxxxxx", "******"}
)
_NUMBERS = re.compile(r"[\d.:,-]+")  # numbers, line:col
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(.*)?")  # settings.SECRET_KEY
_CALL = re.compile(r"\w\(")  # get_token(...)


def _looks_secret(value: str) -> bool:
    """Tell a credential value from code, words, paths, numbers and placeholders."""
    bare = value.strip("\"'")
    not_secret = (
        len(bare) < _MIN_SECRET
        or bare.startswith(_NOT_A_START)
        or _NUMBERS.fullmatch(bare) is not None
        or _DOTTED.fullmatch(bare) is not None
        or _CODE.match(bare) is not None
        or _WORDS.fullmatch(bare) is not None
        or bare.lower() in _PLACEHOLDERS
        or set(bare) <= {"*", "x", "X", "."}
        or _CALL.search(bare) is not None
    )
    return not not_secret


_ASSIGN_NAME = (
    r"(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey|"
    r"access[_-]?key|private[_-]?key|client[_-]?secret|auth(?!or)[_-]?(?:key|token)?|credentials?)"
    r"[A-Za-z0-9_\-]*"
)

RULES: tuple[_Rule, ...] = (
    _Rule(
        "private_key",
        re.compile(
            r"-----BEGIN[A-Z ]*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[\s\S]*?-----END[A-Z ]*PRIVATE KEY(?: BLOCK)?-----"
            r"|[A-Za-z0-9+/=\s\\]*)"
        ),
    ),
    _Rule("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    _Rule("anthropic_api_key", re.compile(r"\bsk-ant-(?:api|admin|sid)\d{2}-[A-Za-z0-9_\-]{20,}")),
    _Rule(
        "openai_api_key",
        re.compile(r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}(?<!-)"),
    ),
    _Rule(
        "aws_access_key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b")
    ),
    _Rule(
        "aws_secret_key",
        re.compile(
            r"(?i:aws_?secret_?(?:access_?)?key|secret_?access_?key)[\"']?\s*[:=]\s*[\"']?"
            r"(?P<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
    ),
    _Rule("gcp_api_key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])")),
    _Rule("gcp_oauth_token", re.compile(r"\bya29\.[0-9A-Za-z_\-]{20,}")),
    _Rule(
        "azure_storage_key",
        re.compile(r"(?i:AccountKey|SharedAccessKey)=(?P<secret>[A-Za-z0-9+/]{20,}={0,2})"),
    ),
    _Rule("azure_sas_signature", re.compile(r"[?&]sig=(?P<secret>[A-Za-z0-9%+/=]{30,})")),
    _Rule(
        "azure_client_secret",
        re.compile(r"(?<![\w~.-])[A-Za-z0-9_~.\-]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![\w~.-])"),
    ),
    _Rule(
        "github_token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b"),
    ),
    _Rule(
        "gitlab_token",
        re.compile(r"\bgl(?:pat|dt|rt|ptt|cbt|oas|soat|ft|imt|agent)-[A-Za-z0-9_\-]{20,}"),
    ),
    _Rule("slack_token", re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}")),
    _Rule(
        "slack_webhook",
        re.compile(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9_/]{20,}"),
    ),
    _Rule(
        "stripe_key",
        re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b|\bwhsec_[A-Za-z0-9]{24,}\b"),
    ),
    _Rule("npm_token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    _Rule("pypi_token", re.compile(r"\bpypi-AgE[A-Za-z0-9_\-]{50,}")),
    _Rule("huggingface_token", re.compile(r"\bhf_[A-Za-z0-9]{34,}\b")),
    _Rule("sendgrid_key", re.compile(r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}\b")),
    _Rule(
        "authorization_header",
        re.compile(
            r"(?i:\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|digest|bot|apikey)?\s*)"
            r"(?P<secret>[^\s\"',;]{6,})"
        ),
        _looks_secret,
    ),
    _Rule(
        "api_key_header",
        re.compile(
            r"(?i:\b(?:x-api-key|x-auth-token|api-key|x-goog-api-key)[\"']?\s*:\s*[\"']?)(?P<secret>[^\s\"',;]{8,})"
        ),
        _looks_secret,
    ),
    _Rule("bearer_token", re.compile(r"(?i:\bbearer\s+)(?P<secret>[A-Za-z0-9\-._~+/]{16,}=*)")),
    _Rule(
        "url_password",
        re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@]+:(?P<secret>[^\s@/]{3,})@"),
        lambda v: not v.startswith(("[REDACTED", "$")),
    ),
    _Rule(
        "password_assignment",
        re.compile(
            r"(?i:" + _ASSIGN_NAME + r")[\"']?"
            r"(?:\s*(?<![=!<>])=(?!=)\s*|\s*:(?!:)\s*|\s+=>\s+)"
            r"(?P<secret>\"[^\"\n]{6,}\"|'[^'\n]{6,}'|[^\s\"'`,;)\]}]{6,})"
        ),
        _looks_secret,
    ),
)


_MARKERS: dict[str, tuple[str, ...]] = {
    "private_key": ("private key",),
    "jwt": ("eyj",),
    "anthropic_api_key": ("sk-ant-",),
    "openai_api_key": ("sk-",),
    "aws_access_key": ("akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "anpa"),
    "aws_secret_key": ("secret",),
    "gcp_api_key": ("aiza",),
    "gcp_oauth_token": ("ya29.",),
    "azure_storage_key": ("accountkey=", "sharedaccesskey="),
    "azure_sas_signature": ("sig=",),
    "azure_client_secret": ("q~",),
    "github_token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "gitlab_token": ("gl",),
    "slack_token": ("xox",),
    "slack_webhook": ("hooks.slack.com",),
    "stripe_key": ("_live_", "_test_", "whsec_"),
    "npm_token": ("npm_",),
    "pypi_token": ("pypi-",),
    "huggingface_token": ("hf_",),
    "sendgrid_key": ("sg.",),
    "authorization_header": ("authorization",),
    "api_key_header": ("api-key", "auth-token"),
    "bearer_token": ("bearer",),
    "url_password": ("://",),
    "password_assignment": (
        "pass",
        "secret",
        "token",
        "key",
        "auth",
        "credential",
    ),
}
"""Lower-case strings one of which must be in the text for a rule to run (a cheap pre-test)."""


class Redactor:
    """Replaces secrets in text; see the module documentation for what counts as one.

    Args:
        environ: Where secret-looking variables are read from, once, at construction;
            ``os.environ`` by default. Pass ``{}`` to use the rule table alone.
        rules: The rule table (the default is :data:`RULES`).
    """

    def __init__(
        self, *, environ: Mapping[str, str] | None = None, rules: tuple[_Rule, ...] = RULES
    ) -> None:
        env = os.environ if environ is None else environ
        values: dict[str, str] = {}
        for name, value in env.items():
            if (
                _SECRET_NAME.search(name)
                and not _NOT_SECRET_NAME.search(name)
                and _ENV_MIN <= len(value) <= _ENV_MAX
                and not _DULL_VALUE.match(value)
                and not value.startswith(("/", "~", "./"))
                and " " not in value.strip()
            ):
                values.setdefault(value, name)
        self._env_values = sorted(values.items(), key=lambda item: -len(item[0]))
        self._env_pattern = (
            re.compile("|".join(re.escape(v) for v, _ in self._env_values)) if values else None
        )
        self._rules = rules

    def redact(self, text: str) -> Redacted:
        """Return *text* with every secret replaced by ``[REDACTED:<rule>]``.

        Args:
            text: Any text: tool output, a command line, a description.

        Returns:
            The redacted text and the per-rule counts.
        """
        counts: dict[str, int] = {}
        if self._env_pattern is not None:
            names = dict(self._env_values)

            def env_sub(match: re.Match[str]) -> str:
                rule = f"env:{names[match.group(0)]}"
                counts[rule] = counts.get(rule, 0) + 1
                return f"[REDACTED:{rule}]"

            text = self._env_pattern.sub(env_sub, text)
        lowered = text.lower()
        for rule in self._rules:
            markers = _MARKERS.get(rule.name, ())
            if markers and not any(marker in lowered for marker in markers):
                continue
            text = rule.pattern.sub(_replacer(rule, counts), text)
        return Redacted(text, counts)

    def redact_failure(self, failure: FailureContext) -> tuple[FailureContext, dict[str, int]]:
        """Redact a failure's error output, command and description.

        Returns:
            The redacted failure and the per-rule counts summed over the three fields.
        """
        total: dict[str, int] = {}
        output, command, description = (
            self.redact(failure.error_output),
            self.redact(failure.command),
            self.redact(failure.description),
        )
        for result in (output, command, description):
            for rule, count in result.counts.items():
                total[rule] = total.get(rule, 0) + count
        if not total:
            return failure, total
        clean = attrs.evolve(
            failure,
            error_output=output.text,
            command=command.text,
            description=description.text,
        )
        return clean, total

    __call__ = redact_failure


def _replacer(rule: _Rule, counts: dict[str, int]) -> Callable[[re.Match[str]], str]:
    """Build the substitution function of one rule, counting what it replaces."""
    has_group = "secret" in rule.pattern.groupindex

    def sub(match: re.Match[str]) -> str:
        secret = match.group("secret") if has_group else match.group(0)
        if secret is None or (rule.check is not None and not rule.check(secret)):
            return match.group(0)
        counts[rule.name] = counts.get(rule.name, 0) + 1
        replacement = f"[REDACTED:{rule.name}]"
        if not has_group:
            return replacement
        start, end = match.span("secret")
        whole = match.group(0)
        offset = match.start()
        quote = secret[0] if secret[:1] in {'"', "'"} and secret[-1:] == secret[:1] else ""
        return whole[: start - offset] + quote + replacement + quote + whole[end - offset :]

    return sub


def redact_failure(
    failure: FailureContext, *, redactor: Redactor | None = None
) -> tuple[FailureContext, dict[str, int]]:
    """Redact a failure with *redactor* (a fresh one reading ``os.environ`` by default).

    Returns:
        The redacted failure and the per-rule counts.
    """
    return (redactor or Redactor()).redact_failure(failure)
