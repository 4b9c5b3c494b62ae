"""HTTP headers and tokens named in prose.

``Authorization:``, ``Cookie:``, ``invalid API key ...``.

Each rule's examples and look-alikes beyond the first example are in
``headers.toml`` beside this module.
"""

from __future__ import annotations

from reflexkit.redaction._checks import (
    _header_check,
    _prompt_check,
    _secret,
)
from reflexkit.redaction._rules._base import Rule, _fake, _rule
from reflexkit.redaction._rules._patterns import (
    _B,
    _E,
)
from reflexkit.redaction._shapes import (
    _looks_path,
    _randomish,
)

_IN_QUOTES = r"(?(oesc)(?:(?!\\(?P=oq))[^\n]){0,2048}|(?:\\.|(?!(?P=oq))[^\n\\]){0,2048})"
"""A value up to its closing quote: ``\"`` when it opened with ``\"``, else the quote itself."""
_QUOTED_TAIL = (
    _IN_QUOTES + r"(?:\\?(?P=oq)[ \t]*\+[ \t]*(?:\\?(?P=oq)" + _IN_QUOTES + r"|[\w.$()]{1,200}))?"
)
"""A quoted header value, and a literal or a variable joined to it (``"Bearer " + "..."``)."""

RULES: tuple[Rule, ...] = (
    _rule(
        "authorization_header",
        # The credential is the whole value after the scheme, whatever the scheme (``Token
        # token="..."``, Digest's and Hawk's parameters, ``SharedKey acct:sig``): to the quote
        # that closes it, to the quote around the whole header (``-H "Authorization: ..."``),
        # or to the end of the line; ``"Bearer " + "..."`` with the literal joined on.
        r"(?P<pre>[\"'`])?(?i:(?:proxy-)?authorization)(?P<closed>\\?(?P=pre))?\\?[\"']?"
        r"[ \t]*(?::|=>|=|,)(?:[ \t]*\r?\n(?=[ \t]*[\"'`]))?"  # pprint: the value on the next line
        r"[ \t]*\[?[ \t]*(?P<oesc>\\)?(?P<oq>[\"'`])?"
        r"(?:[A-Za-z][\w.-]{0,30}[ \t]+(?=[^\s]))?"
        r"(?P<secret>(?(oq)" + _QUOTED_TAIL + r"|(?(closed)[^\s,;}\]]+"
        r"|(?(pre)(?:\\.|(?!(?P=pre))[^\n\\]){1,2048}|[^\r\n&]{0,2047}[^\s&]))))",
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
        r"\\?[\"']?\s*[:=]\s*\\?)(?P<q>[\"'])?"
        r"(?P<secret>(?(q)(?:(?!(?P=q))[^\n\\]){6,1024}(?=(?P=q))|[^\s\"',;\\]{6,1024}))",
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
        "password_prompt",
        # A prompt for a password and what was typed after it, echoed by expect, a pty log or
        # a tool reading it without a terminal: ``Password for 'https://...': value``.
        r"(?im:^[ \t]*(?:\[sudo\][ \t]+)?(?:enter[ \t]+)?(?:(?:new|current|old|retype)[ \t]+)?"
        r"(?:password|passphrase|pass[ \t]phrase|passcode)"
        r"(?:[ \t]+(?:for|again|of)\b(?:'[^'\n]{0,160}'|\"[^\"\n]{0,160}\"|[^:\n'\"]){0,160}"
        r"|[ \t]*\(again\))?:)[ \t]*"
        r"(?P<secret>[^\s\"'`][^\s]*)[ \t]*\r?$",  # quoted: an assignment's (its own rule)
        # Short: a trigger that reached along the line to a colon swallowed the other hits
        # of a line (``password=... token:``), so a line of them was never dense.
        r"(?i:(?:password|passphrase|passcode)(?:[ \t]+for[ \t]|[ \t]*\(again\)|:))",
        ("password", "passphrase", "pass phrase", "passcode"),
        _prompt_check,
        example=_fake("Password for 'https://ci@github.com': ", "FakePromptPassw0rd"),
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
)
"""This family's rules, in the order they are applied."""
