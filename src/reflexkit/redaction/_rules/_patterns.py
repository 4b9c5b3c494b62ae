"""Pattern fragments the rule families share, and the private key block's."""

from __future__ import annotations

from reflexkit._pattern import Pattern
from reflexkit.redaction._shapes import _QUOTED

_STDIN_READER = (
    r"(?:--password-stdin|--with-token|--token-stdin"
    r"|\bsudo[ \t](?:[^\n]{0,256}?[ \t])?-[A-Za-z]{0,16}S\b|\bchpasswd\b"
    r"|\bpasswd[ \t][^\n]{0,256}?--stdin\b"
    r"|\bsmbpasswd\b[^\n]{0,256}?[ \t]-[A-Za-z]{0,8}s\b|\bop[ \t]+signin\b|\brunas\b)"
)
"""A command that reads a password on its standard input: ``docker login --password-stdin``,
``sudo -S``, ``chpasswd``, ``passwd --stdin``, ``gh auth login --with-token``, ``smbpasswd -s``,
1Password's ``op signin``, Windows' ``runas``; ``set -x`` traces the ``echo`` beside it."""
_CELL = r"(?:(?:│|┃|\|)[ \t]*)"
"""A table's cell border: markdown's ``|``, box drawing's ``│`` (doppler, rich tables)."""
_KEY_TEXT_LINE = (
    r"(?:[ \t]+[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2})*:?"  # a hex line
    r"|[A-Za-z][A-Za-z0-9]*:(?:[ \t]+\d+[ \t]+\(0x[0-9A-Fa-f]+\))?)[ \t]*"  # a field name
)
_KEY_TEXT_LINES = f"(?:{_KEY_TEXT_LINE}(?:\\r?\\n|\\Z))+"
"""``openssl rsa|ec|pkey -text``: field names (``privateExponent:``, ``priv:``) and hex lines."""
_KEY_BODY = (
    r"(?:MII[A-Za-z0-9+/]{3}IBA(?:AK[BC]|DAN)"  # PKCS#1 RSA and DSA; PKCS#8 RSA
    r"|MII[A-Za-z0-9+/]{5}BgkqhkiG9w0BBQ"  # encrypted PKCS#8 (PBES2)
    r"|MIG[A-Za-z0-9+/]AgEAMBMGByqGSM49"  # PKCS#8 EC
    r"|M[CF][A-Za-z0-9+/]{2}AQ[AE]wBQYDK2V[wx]"  # PKCS#8 Ed25519, X25519
    r"|MHcCAQEEI|MIGkAgEBBDA|MIHcAgEBBEI"  # SEC1 EC: P-256, P-384, P-521
    r"|b3BlbnNzaC1rZXktdjE)"  # ``openssh-key-v1``
)
"""The first characters of a private key's base64 body, by its DER (or OpenSSH) header: a
key printed without its ``-----BEGIN`` line. Public keys and certificates start otherwise."""
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
    r"|`[^`\n]{1,256}`"  # a JavaScript template literal
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
    r"pasw|psw|pssw|connectionstring)[a-z0-9_.-]{0,40}(?:[\"']|\x1b\[[0-9;]*m)*[ \t]*"
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


# --- multi-line secrets ---------------------------------------------------------------------

_BLOCK = Pattern(
    r"-{4,5} ?(?P<kind>BEGIN|END) (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)? ?-{4,5}"
    r"|(?P<putty>Private-Lines: *\d+|Private-MAC: *[0-9A-Fa-f]*)"
)
_BLOCK_TRIGGER = r"(?i:private key|private-lines:|private-mac:)"
_BLOCK_RULE = "private_key"
