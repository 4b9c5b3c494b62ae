"""The rule table: one :class:`Rule` per shape of secret, with what it must and must not redact."""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Callable, Iterable
from pathlib import Path

import attrs

from reflexkit.redaction._checks import (
    _HEX_OCTETS,
    _assignment_check,
    _aws_context_check,
    _bare_aws_secret_check,
    _encoded_private_key,
    _escaped_check,
    _field_input_check,
    _flag_check,
    _generated,
    _header_check,
    _jwt_check,
    _literal_check,
    _loc_input_check,
    _mask_check,
    _name_value_check,
    _named_check,
    _secret,
    _sql_check,
    _table_check,
    _telegram_check,
    _terraform_check,
    _tool_password_check,
    _url_check,
    _urlencoded_check,
    _webhook_check,
)
from reflexkit.redaction._shapes import (
    _QUOTED,
    _TEMPLATED,
    _looks_path,
    _name_strength,
    _randomish,
    value_is_secret,
)


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
        name: The rule's id: the name in ``[REDACTED:<name>]`` and in the counts.
        source: The pattern (:attr:`pattern` compiled), run on the lines the prefilter
            selected; only its ``secret`` group (or the whole match) is replaced. Its
            repetitions are bounded where a match may end early (a value read ahead), so
            a line of a thousand matches costs a thousand short reads.
        trigger: A regular expression (in the common subset of ``re`` and RE2, no look-around)
            whose match somewhere on a line makes the line a candidate. Its unbounded
            repetitions are bounded when the prefilter is built (:func:`bounded`).
        keywords: Lower-case strings one of which must be on a candidate line for this rule
            to run there (a cheap second filter); empty: run on every candidate line.
        check: Tells a real secret from a look-alike, given the match; ``None``: always.
        context_lines: Lines after the trigger line that belong to the same secret (the
            ``password`` line of a multi-line ``.netrc`` entry).
        example: An obviously fake example of what the rule must remove (the docs show it);
            :attr:`examples` adds more, and :attr:`lookalikes` the texts like them that the
            whole redactor must leave alone, from ``cases.toml`` beside this module (read
            when a test asks, not at import). A test checks both, with the rule's id in the
            replacement.
        gate_source: Where keywords are weak (``sk``, ``:``), a cheap pattern that must also
            be found on the line before the rule runs there.
    """

    name: str
    source: str
    trigger: str
    keywords: tuple[str, ...] = ()
    check: Callable[[re.Match[str]], bool] | None = None
    context_lines: int = 0
    example: str = ""
    gate_source: str | None = None

    @property
    def id(self) -> str:
        """The rule's id: :attr:`name`, as gitleaks calls it."""
        return self.name

    @property
    def pattern(self) -> re.Pattern[str]:
        """:attr:`source` compiled, on first use (a rule runs only where its line triggers)."""
        return compiled(self.source)

    @property
    def gate(self) -> re.Pattern[str] | None:
        """:attr:`gate_source` compiled, on first use."""
        return None if self.gate_source is None else compiled(self.gate_source)

    @property
    def examples(self) -> tuple[str, ...]:
        """What the rule must remove: :attr:`example` and the rule's own in ``cases.toml``."""
        return (self.example, *_cases().get(self.name, {}).get("examples", ()))

    @property
    def lookalikes(self) -> tuple[str, ...]:
        """Texts like :attr:`examples` that the whole redactor must leave alone."""
        return tuple(_cases().get(self.name, {}).get("lookalikes", ()))


@functools.cache
def compiled(source: str) -> re.Pattern[str]:
    """``re.compile(source)``, once: the table's patterns compile when first needed."""
    return re.compile(source)


_STDIN_READER = (
    r"(?:--password-stdin|\bsudo[ \t](?:[^\n]{0,256}?[ \t])?-[A-Za-z]{0,16}S\b|\bchpasswd\b"
    r"|\bpasswd[ \t][^\n]{0,256}?--stdin\b)"
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
_B64_TAIL = r"(?=[^\s]{0,16}[0-9+/=])(?=[^\s]{0,16}[a-z])(?=[^\s]{0,16}[A-Z])[A-Za-z0-9+/]{2,15}"
"""The short last line of wrapped base64 (``S0VZLS0tLS0K``), not a word (``done``)."""
_B = r"(?<![A-Za-z0-9_])"  # starts at a token boundary
_E = r"(?![A-Za-z0-9_])"  # ends at one
_ESCAPED_QUOTED = r"\\\"(?:[^\"\\\n]|\\[^\"\n])*\\\"|\\'(?:[^'\\\n]|\\[^'\n])*\\'"
r"""A value quoted inside a quoted string: Rust's ``{:#?}`` in an ``unwrap`` message (``\"v\"``)."""
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
    r"|\{[^}\n\"':]{0,512}\}"
    r"|[&()]{0,4}[^\s\"'`,;&()\[\]{}<>\\]{1,256}"
    r"(?:[&()]{1,4}[^\s\"'`,;&()\[\]{}<>\\]{1,256}){1,16}[&()]{0,4}"
    r"(?=[\s\"'`,;]|\Z)"  # Django's keys: ``&``, ``(`` and ``)`` anywhere
    r"|(?:[^\s\"'`,;&)\]}<>\\]{1,1024}|\\(?![rnt])){1,4}))"  # ``\r\n`` ends
)
_ANSI_TRIGGER = r"(?:\x1b\[[0-9;]*m)*"
"""Colour codes a terminal-minded tool (rich, pytest ``--color=yes``) puts around a name."""
_NAME_TRIGGER = (
    r"(?i:(?:pass|pwd|secret|token|key|auth|credential|cookie|sig|dsn|pw|psk|sess|sid|"
    r"connectionstring)[a-z0-9_.-]{0,40}(?:[\"']|\x1b\[[0-9;]*m)*[ \t]*"
    + _ANSI_TRIGGER
    + r"(?:[-+?.~|&*/%^!:<>]{0,2}[=:]|=>|is[ \t]+[\"']|[-<]-[ \t]|"
    + "\uff1d|\uff1a|\u2254))"  # the characters themselves: RE2 reads no \u escapes
)
"""A secret's name and any assignment operator after it (see :data:`ASSIGN`)."""
ASSIGN = (
    r":=|=>"
    r"|[-+?.~|&*/%^!:<>]{0,2}=(?:[ \t]*=){0,2}(?![=>])"  # ==, = =, +=, ?=, ::=, .=, !=
    r"|:(?![:/\\=])"
    "|\uff1d|\uff1a|\u2254"  # full-width `=` and `:`, and `:=` as one character
    r"|(?<=[ \t])(?:is(?=[ \t]+[\"'])|->(?=[ \t])|<-(?=[ \t]))"  # Terraform, Scala, R
)
"""Every operator that sets a name to a value, as tools echo them: doubled or spaced by
mistake, compound (Make, PHP, shell), R's ``<-``, a comparison quoting the value, and the
full-width forms. `k -> v` is Scala; `var.x is "..."` Terraform's message."""


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
        source=_within_lines(pattern),
        trigger=trigger,
        keywords=tuple(markers),
        check=check,
        context_lines=context_lines,
        example=example,
        gate_source=gate,
    )


_LINE_READ = 512
"""How far along its line a rule reads between a tool's name and its flag (``mysql ... -p``)."""


def _within_lines(pattern: str) -> str:
    """Bound "the rest of the line" in a rule's pattern to :data:`_LINE_READ` characters.

    Unbounded, a line holding a tool's name a thousand times is read to its end a thousand
    times; bounded, each match reads a fixed distance, and the cost is linear in the line.
    """
    bound = f"[^\\n]{{0,{_LINE_READ}}}"
    return pattern.replace("[^\\n]*?", bound + "?").replace("[^\\n]*", bound)


@functools.cache
def _cases() -> dict[str, dict[str, list[str]]]:
    """Each rule's extra examples and its look-alikes, from ``cases.toml``."""
    import tomllib  # noqa: PLC0415 -- only the tests read the cases

    return tomllib.loads(Path(__file__).with_name("cases.toml").read_text("utf-8"))


def _fake(*parts: str) -> str:
    """Join *parts*: examples are assembled so no scanner mistakes this file for a leak."""
    return "".join(parts)


def _base64_url_credentials_check(match: re.Match[str]) -> bool:
    """Base64 of a URL with a password in it: a Kubernetes secret's ``DATABASE_URL``."""
    value = _secret(match)
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode()
    except ValueError:
        return False
    rule = next(r for r in RULES if r.name == "url_password")
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
    rule = next(r for r in RULES if r.name == "secret_assignment")
    return any(_assignment_check(m) for m in rule.pattern.finditer(decoded))


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
    _rule(
        "cli_password",
        r"(?:\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump|mysqlimport|mysqlsh)\b[^\n]*?"
        r"[ \t]-p|\bsshpass\b[^\n]*?[ \t]-p[ \t]*|\bredis-cli\b[^\n]*?[ \t]-a[ \t]+"
        r"|\b(?:docker|podman|nerdctl|buildah|skopeo|helm)\b[^\n]*?\blogin\b[^\n]*?[ \t]-p[ \t]+"
        r"|\bldap\w*\b[^\n]*?[ \t]-w[ \t]+|[ \t]-pass(?:in|out)?[ \t]+pass:"
        r"|\b(?:sqlplus|exp|imp|expdp|impdp|rman)[ \t]+[\"']?[\w$#.-]+/"
        r"|(?i:jdbc:oracle:)[a-z]+:[\w$#.-]+/"
        r"|\b(?:ipmitool|mosquitto_(?:pub|sub|rr))\b[^\n]*?[ \t]-P[ \t]+"
        r"|\bssh-keygen\b[^\n]*?[ \t]-[NP][ \t]+|\bx?freerdp3?\b[^\n]*?[ \t][/+]p:"
        r"|\b(?:rdesktop|unrar)\b[^\n]*?[ \t]-p[ \t]*|\bsnmp\w+\b[^\n]*?[ \t]-[AX][ \t]+"
        r"|\blftp\b[^\n]*?[ \t]-u[ \t]+[^\s,]+,)"
        r"(?P<secret>'[^'\n]{1,256}'|\"(?:[^\"\\\n]|\\.){1,256}\"|[^\s\"'@/]+)",
        r"mysql|mariadb|sshpass|redis-cli|sqlplus|expdp|impdp|rman|login|ldap|pass:"
        r"|(?i:jdbc:oracle:)|ipmitool|mosquitto_|ssh-keygen|freerdp|rdesktop|unrar|snmp|lftp",
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
            "ipmitool",
            "mosquitto_",
            "ssh-keygen",
            "freerdp",
            "rdesktop",
            "unrar",
            "snmp",
            "lftp",
        ),
        _tool_password_check,
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
        r"|--password-stdin[^\n]{0,256}?<<<[ \t]*)"
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
        r"[ \t]*(?P<sep>" + ASSIGN + r")"
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

_BLOCK = re.compile(
    r"-{4,5} ?(?P<kind>BEGIN|END) (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)? ?-{4,5}"
    r"|(?P<putty>Private-Lines: *\d+|Private-MAC: *[0-9A-Fa-f]*)"
)
_BLOCK_TRIGGER = r"(?i:private key|private-lines:|private-mac:)"
_BLOCK_RULE = "private_key"
