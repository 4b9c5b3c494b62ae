"""The rules' checks: given a match, tell a real secret from a look-alike."""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import re
from importlib import resources
from urllib.parse import unquote

from reflexkit._pattern import Pattern
from reflexkit.redaction._shapes import (
    _PLACEHOLDER,
    _QUOTED,
    _SCHEMES,
    _TEMPLATED,
    _generated_looking,
    _is_aws_secret,
    _name_strength,
    _punctuated,
    _randomish,
    value_is_secret,
)

_QUOTED_RE = Pattern(_QUOTED)


def _after(match: re.Match[str]) -> str:
    """The few characters after a match's value: enough for an operator or a word.

    Never the whole rest of the text: a check runs once per match, and a line of a
    thousand matches would copy it a thousand times.
    """
    end = match.end("secret")
    return match.string[end : end + 64]


def _secret(match: re.Match[str]) -> str:
    return match.group("secret")


def _generated(match: re.Match[str]) -> bool:
    """The whole match mixes digits and letters (``fw_9aK...``, not ``fw_updatecontroller``)."""
    value = match.group(0)
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


_VERDICTS = frozenset({"PASS", "XPASS", "PASSED", "XPASSED"})
"""Test runners' verdicts (``--- PASS: TestX``, automake's ``PASS: t/x.sh``), not a password."""


def _separator(match: re.Match[str]) -> str:
    """The match's operator as one of ``=``, ``:``, ``:=``, ``=>``, ``->`` and ``is``.

    Every operator that sets a value (``==``, ``+=``, ``?=``, ``<-``, the full-width equals
    sign ...) counts as ``=``; a full-width colon as ``:``.
    """
    sep = match.group("sep")
    if sep in {":=", "=>", "->", "is", ":"}:
        return sep
    return ":" if sep == "\uff1a" else "="


_COMPARISONS = frozenset({"==", "===", "!=", "<=", ">="})


def _compares_names(match: re.Match[str], value: str, *, quoted: bool) -> bool:
    """``password == password_confirmation``, ``token != None``: code comparing two names.

    A spaced comparison with a value that is neither quoted nor generated-looking; unspaced
    (``SECRET_KEY==...``) it is an assignment typed twice, and judged as one.
    """
    raw = match.group("sep")
    spaced = raw != raw.strip() or match.string[match.end("sep") : match.end("sep") + 1] == " "
    operand = value.rstrip(":)")  # `if password == confirm_password:`
    return raw.strip() in _COMPARISONS and spaced and not quoted and not _randomish(operand)


def _assignment_check(match: re.Match[str]) -> bool:
    name = match.group("name")
    sep = _separator(match)
    if name.strip() in _VERDICTS and sep != "=":
        return False
    strength = _name_strength(name)
    if strength == 0:
        return False
    value, quoted = _assigned_value(match.group("secret"))
    if _is_code(match, name, value, quoted=quoted):
        return False
    rest = _after(match)
    prose = not quoted and sep != "=" and re.match(r"[ \t]+\w", rest)
    return value_is_secret(value, strength, prose_follows=bool(prose), quoted=quoted)


_PLAIN_WORD = Pattern(r"[^\s\-/=$&|;<>`'\"\\#{}\[\]][^\s/=$&|;<>`'\"\\{}\[\]]{0,255}")
"""A word of a phrase: no flag, path, assignment, expansion, operator, quote or comment."""


_PROSE_VALUE = frozenset(
    [
        "not",
        "must",
        "is",
        "are",
        "was",
        "should",
        "missing",
        "required",
        "unset",
        "empty",
        "undefined",
        "none",
        "null",
        "invalid",
        "expired",
        "needed",
        "cannot",
        "will",
        "has",
    ]
)
"""A value's first word that starts a sentence (``JWT_SECRET=not set in environment``)."""
_PROGRAMS = frozenset(
    [
        "python",
        "python3",
        "pytest",
        "npm",
        "npx",
        "yarn",
        "pnpm",
        "node",
        "bun",
        "deno",
        "make",
        "go",
        "cargo",
        "bundle",
        "rails",
        "rake",
        "ruby",
        "java",
        "mvn",
        "gradle",
        "docker",
        "kubectl",
        "helm",
        "terraform",
        "bash",
        "sh",
        "git",
        "pip",
        "uv",
        "poetry",
        "tox",
        "nox",
        "dotnet",
        "php",
        "composer",
        "jest",
        "vitest",
        "mocha",
        "curl",
        "wget",
        "aws",
        "psql",
        "mysql",
        "ansible",
        "ansible-playbook",
        "gcloud",
        "az",
        "flask",
        "django-admin",
    ]
)
"""Programs an env prefix (``TOKEN=x npm publish``) runs: the words after it are no value."""
_SCRIPT = re.compile(r"\w\.(?:py|js|mjs|cjs|ts|sh|rb|pl|php|jar|ya?ml|json|toml)\Z")
"""A script or config file an env prefix's command names (``manage.py``, ``deploy.sh``)."""


def _runs_a_command(words: list[str]) -> bool:
    """The words after the first are a command (``npm publish``, ``manage.py test``)."""
    return words[1] in _PROGRAMS or any(_SCRIPT.search(word) for word in words[1:])


def _spaced_check(match: re.Match[str]) -> bool:
    """``NAME=several plain words`` filling its line: a passphrase, not a value and a command.

    An env dump or a ``.env`` file sets the whole rest of the line
    (``JWT_SECRET=correct horse battery staple``); a command after the value has a flag, a
    path or an operator among its words (``PGPASSWORD=x psql -h db``), or a program's name
    first (``SECRET_KEY=foo make deploy``) or a script (``manage.py``); then only the
    first word is the value and the assignment rule takes it. A sentence
    (``not set``, ``must be provided``, ``is required``) is no value.
    """
    words = match.group("secret").split()
    return (
        len(words) > 1
        and _name_strength(match.group("name")) == 2  # noqa: PLR2004
        and all(_PLAIN_WORD.fullmatch(word) for word in words)
        and not words[0].isdigit()  # ``TOKEN_TTL=3600 seconds``: a quantity
        and words[0].lower() not in _PROSE_VALUE
        and not _runs_a_command(words)
        and value_is_secret(" ".join(words), 2)
    )


def _assigned_value(raw: str) -> tuple[str, bool]:
    r"""The value an assignment sets, its quotes taken off, and whether it was quoted.

    ``"v"``, ``\"v\"`` (quoted inside a quoted string), ``{v}``, and joined literals
    (``'a' + 'b'``, ``'ab' * 6``) read as the one value they make.
    """
    if raw[:3] in {'"""', "'''"} and raw[-3:] == raw[:3] and len(raw) > 6:  # noqa: PLR2004
        return raw[3:-3].strip(), True  # TOML's and Python's strings of several lines
    quoted = raw[:1] in {'"', "'"} and raw[-1:] == raw[:1] and len(raw) > 1
    value = raw[1:-1] if quoted else raw.strip("{}") if raw.startswith("{") else raw
    if raw[:2] in {'\\"', "\\'"} and raw[-2:] == raw[:2] and len(raw) > 3:  # noqa: PLR2004
        value = raw[2:-2]
    if raw[:1] in {'"', "'"}:
        pieces = _QUOTED_RE.findall(raw)
        if pieces and pieces != [raw]:  # joined literals: one value
            value, quoted = "".join(piece[1:-1] for piece in pieces), True
    return value, quoted


def _is_code(match: re.Match[str], name: str, value: str, *, quoted: bool) -> bool:
    """Whether the assignment is code handling a secret, not a secret written out."""
    if not quoted and _YAML_TAG.fullmatch(value):
        return True  # ``password: !!binary |``: a tag; the block below is the value
    if _compares_names(match, value, quoted=quoted):
        return True
    if _separator(match) == "->" and name[:1] in {'"', "'"}:
        return True  # Scala's ``Map(k -> v)`` names keys bare; a quoted one is code
    if value.lower() in {name.strip("\"'").lower(), name.strip("\"'").lower().rsplit("_", 1)[-1]}:
        return True  # password=password: code handing a variable on
    # ``password = prefix + suffix``; ``auth: method=password``
    computed = _EXPRESSION.match(_after(match)) or _INNER_PAIR.match(value)
    return not quoted and bool(computed) and not _punctuated(value)


_YAML_TAG = Pattern(r"!{1,2}[\w/:.-]*")
"""A YAML tag (``!!binary``, ``!vault``, ``!Ref``): it says how to read the value, it is none."""
_EXPRESSION = Pattern(r"[ \t]+[-+*/%][ \t]+[\w\"'(]")
"""An operator after an unquoted value: code computing it (``prefix + suffix``)."""
_INNER_PAIR = Pattern(r"[A-Za-z_][\w.-]*=[^=\s]")
"""A value that is itself ``name=value`` (``auth: method=password``): the inner pair is judged."""


def _flag_check(match: re.Match[str]) -> bool:
    """``--db-password VALUE``, not ``--secret dbPassword`` (a flag naming the secret next).

    A flag that may name a secret (``--auth``, ``--key``) needs a value that looks generated.
    """
    raw = match.group("secret")
    if raw.isidentifier() and _names_a_secret(raw):
        return False
    rest = _after(match)
    prose = raw[:1] not in {'"', "'"} and _PROSE_AFTER.match(rest) is not None
    strength = _name_strength(match.group("name"))
    if strength == 1:
        return not prose and _generated_secret(raw)
    return strength == 2 and value_is_secret(raw.strip("\"'"), 2, prose_follows=prose)  # noqa: PLR2004


def _names_a_secret(word: str) -> bool:
    """*word* is a secret's name (``dbPassword``), not a value: it says secret and has no digit."""
    return _name_strength(word) == 2 and not any(c.isdigit() for c in word)  # noqa: PLR2004


_PROSE_AFTER = Pattern(r"[ \t]+[A-Za-z]+(?:[ \t,]|$)")
"""More words after a flag's word: a help text (``-twopass   Separate MAC, ...``)."""


_JOINED_VARIABLE = Pattern(r"[\"'`\\]*[ \t]*\+[ \t]*[A-Za-z_$][\w.$()]*")
"""``" + token``: a variable joined to a header's scheme, not a credential."""


def _header_check(match: re.Match[str]) -> bool:
    value = _secret(match)
    if value.lower() in _SCHEMES or _JOINED_VARIABLE.fullmatch(value):
        return False  # "Bearer " + token: the scheme alone, the token is a variable
    return (
        not value.startswith("[REDACTED")
        and not _TEMPLATED.match(value)
        and value.lower() not in {"null", "none", "nil", "undefined", "true", "false"}
        and len(value) >= 6  # noqa: PLR2004
    )


def _url_check(match: re.Match[str]) -> bool:
    return _url_check_value(_secret(match))


def _url_check_value(value: str) -> bool:
    """A URL's password, not a placeholder, a template or a port and path."""
    return (
        bool(value)
        and not value.startswith("[REDACTED")
        and not _TEMPLATED.match(value)
        and not _PLACEHOLDER.match(value)  # ``amqp://u:**@`` (kombu), ``:***@`` (SQLAlchemy)
        and re.fullmatch(r"\d{1,5}(?:/.*)?", value) is None  # host:port/path, not a password
    )


def _jwt_check(match: re.Match[str]) -> bool:
    """A JWS (``header.payload.signature``), or a JWE: five parts, its header naming ``enc``."""
    parts = "".join(match.group(0).split()).split(".")
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


_B64_LINE = Pattern(r"[A-Za-z0-9+/]{41,}={0,2}")


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


_PROMPT_ANSWERS = frozenset(
    {
        "required",
        "optional",
        "none",
        "null",
        "set",
        "unset",
        "changed",
        "updated",
        "ok",
        "yes",
        "no",
        "true",
        "false",
        "empty",
        "hidden",
        "missing",
        "invalid",
        "incorrect",
        "expired",
    }
)
"""Words a status line puts after ``Password:`` (``Password: required``): no secret."""


def _prompt_check(match: re.Match[str]) -> bool:
    """What was typed after a password prompt, unless it is a status word or a mask."""
    value = _secret(match)
    return value.lower().strip(".!") not in _PROMPT_ANSWERS and value_is_secret(value, 2)


_LITERALS = Pattern(r"\"((?:[^\"\\\n]|\\.)*)\"|'((?:[^'\\\n]|\\.)*)'")


def _sequence_check(match: re.Match[str]) -> bool:
    """Literals a name that says secret is set to: ``password = ("user", "s3cr3t")``."""
    if _name_strength(match.group("name")) != 2:  # noqa: PLR2004
        return False
    values = [a or b for a, b in _LITERALS.findall(_secret(match))]
    return any(
        value_is_secret(value, 2, quoted=True) and not _field_name(value) for value in values
    )


def _field_name(value: str) -> bool:
    """A word that is a field's name, not its value: ``"password2"``, ``"new_password"``."""
    return (
        re.fullmatch(r"[A-Za-z_-]+\d{0,2}", value) is not None and _name_strength(value) == 2  # noqa: PLR2004
    )


_PAIR_NOT_PASSWORD = Pattern(
    r"[-$%{<@]"  # a flag, a variable, a template, an address
    r"|.*[/\\\s]"  # a path, words
    r"|[A-Za-z_][\w-]*\.[A-Za-z]{1,5}$"  # a file name: ``passwords.txt``
    r"|[a-z]+(?:_[a-z0-9]+)+$"  # a snake_case identifier: ``test_login_2``
    r"|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-|[0-9a-fA-F]{32,}$"  # a UUID, a digest
)


def _pair_check(match: re.Match[str]) -> bool:
    """The second of a ``("user", "pass")`` pair on a line that speaks of passwords.

    It holds a letter and a digit or a punctuation mark, 6 to 128 characters, and is no
    flag, path, file name, identifier, UUID or digest: ``("username", "password")`` and
    ``("-p", "--password")`` stay.
    """
    value = _secret(match)[1:-1]
    return (
        6 <= len(value) <= 128  # noqa: PLR2004
        and any(c.isalpha() for c in value)
        and any(not c.isalpha() for c in value)
        and _PAIR_NOT_PASSWORD.match(value) is None
        and not _field_name(value)
        and value_is_secret(value, 2, quoted=True)
    )


_HEX_OCTETS = Pattern(r"[ \t]*(?:[0-9A-Fa-f]{2}:){4}")
_SQL_OWNER = Pattern(r"(?i)\b(?:with|role|user|login)\b")


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
    value = _secret(match)
    quoted = value[:1] in {"'", '"'}
    return value_is_secret(value[1:-1] if quoted else value, 2, quoted=quoted)


_NOT_A_TOKEN = Pattern(
    r"\*?[0-9a-f]+|\*?[0-9A-F]+|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"|[^:@./\\]*[:@./\\][^\n]*"  # a host, an address, a path, a version: ``:``, ``@``, ``/``
)
"""What a generated-looking word may be besides a secret: a digest (MySQL's ``*`` + hex), a
commit, a UUID, a host or a file name."""


def _jwt_header(value: str) -> bool:
    """*value* is a JWT's header alone (``eyJhbGciOi...``, no dots): public JSON, no secret."""
    if not value.startswith("eyJ") or "." in value or len(value) > _JWT_HEADER_MAX:
        return False
    try:
        decoded = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
        header = json.loads(decoded)
    except (ValueError, TypeError):
        return False
    return isinstance(header, dict) and ("alg" in header or "typ" in header)


_JWT_HEADER_MAX = 512


def _generated_secret(value: str) -> bool:
    """*value* looks generated and nothing else: a password or a token, with no name to say so.

    For values no secret name vouches for (a short flag of any tool, the word after
    ``login``): letters and digits that alternate often (``Xq7vL2pR9mZ4``), at least 12, not
    a digest, a commit id, a UUID, a path, a host, an address, a JWT's header alone or words
    (a generated value has no space in it: ``-t "parses Xq7vL2pR9mZ4"`` names a test).
    """
    value = value.strip("\"'")
    return (
        not any(c.isspace() for c in value)
        and "=" not in value.rstrip("=")  # ``name=value``: an assignment, judged by its name
        and not _jwt_header(value)
        and _randomish(value)
        and _generated_looking(value)
        and _NOT_A_TOKEN.fullmatch(value) is None
        and value_is_secret(value, 2)
    )


def _generated_check(match: re.Match[str]) -> bool:
    """The match's secret looks generated (see :func:`_generated_secret`)."""
    return _generated_secret(_secret(match))


_TEST_RUNNER = Pattern(
    r"(?<![\w.-])(?:jest|vitest|pytest|py\.test|playwright|cypress|bun[ \t]+test|deno[ \t]+test"
    r"|(?:npm|yarn|pnpm)(?:[ \t]+run)?[ \t]+test(?::[\w:-]{1,40})?|tox|nox|hatch[ \t]+test)"
    r"(?![\w.-])"
)
"""A test runner whose ``-t``/``-k``/``-g`` takes the name of a test, not a password."""
_FILTER_FLAGS = frozenset({"t", "k", "g"})


def _short_flag_check(match: re.Match[str]) -> bool:
    """A generated-looking value after a short flag, unless it is a test runner's filter.

    ``npx jest -t "..."`` and ``pytest -k ...`` name the test to run: the "run it alone"
    command keeps its test's name, whatever that name holds.
    """
    flag = match.group()[1:].split("=", 1)[0].split(None, 1)[0]
    if flag in _FILTER_FLAGS:
        text = match.string
        line_start = max(text.rfind("\n", 0, match.start()) + 1, match.start() - 512)
        if _TEST_RUNNER.search(text, line_start, match.start()) is not None:
            return False
    return _generated_secret(_secret(match))


def _named_value_check(match: re.Match[str]) -> bool:
    """A name that says secret (``aws_secret_access_key``), then a generated-looking value."""
    return _name_strength(match.group("name")) == 2 and _generated_secret(_secret(match))  # noqa: PLR2004


_SEED_WORDS = 12
"""The fewest words of a BIP-39 phrase (128 bits); 15 to 24 words are longer phrases."""
_SEED_LENGTHS = frozenset({12, 15, 18, 21, 24})
_SEED_CONTEXT = re.compile(r"(?i)mnemonic|seed|recovery[ _-]?phrase|wallet|bip[ _-]?39")
"""Words that say a run of listed words is a wallet's phrase, checksum or not."""
_TEST_ID = re.compile(r"[\u203a\u2713\u2714\u2715\u2717\u25cf\u00d7]|::")
"""A test's id on the line (jest's ``Suite \u203a name``, a tick or a dot, pytest's ``::``)."""


@functools.cache
def _bip39_words() -> dict[str, int]:
    """The BIP-39 English word list (2,048 words; ``bip39_english.txt`` beside the rules)."""
    listed = resources.files("reflexkit.redaction._rules").joinpath("bip39_english.txt")
    return {word: index for index, word in enumerate(listed.read_text("utf-8").split())}


def _valid_mnemonic(indices: list[int]) -> bool:
    """The words' 11 bits each are entropy then its SHA-256 checksum (bits / 33 of them)."""
    number = 0
    for index in indices:
        number = number << 11 | index
    checksum_bits = len(indices) * 11 // 33
    entropy = (number >> checksum_bits).to_bytes(checksum_bits * 4, "big")
    digest = hashlib.sha256(entropy).digest()[0] >> (8 - checksum_bits)
    return number & ((1 << checksum_bits) - 1) == digest


def _seed_runs(value: str) -> list[list[int]]:
    """The maximal runs of listed words in *value*, as word indices (case folded)."""
    listed = _bip39_words()
    runs: list[list[int]] = [[]]
    for word in value.lower().split():
        index = listed.get(word)
        if index is None:
            runs.append([])
        else:
            runs[-1].append(index)
    return [run for run in runs if len(run) >= _SEED_WORDS]


def _near_line(match: re.Match[str]) -> str:
    """The match's line up to the match, and the line before it (at most 512 characters)."""
    text, start = match.string, match.start()
    line = text.rfind("\n", 0, start)
    before = text.rfind("\n", 0, max(line, 0))
    return text[max(before + 1, start - 512, 0) : start]


_WORD_BEFORE = re.compile(r"([A-Za-z]{3,8})[ \t]+\Z")


def _continues_a_run(match: re.Match[str]) -> bool:
    """A listed word just before the match: a later piece of a run already judged whole."""
    start = match.start()
    before = _WORD_BEFORE.search(match.string, max(start - 16, 0), start)
    return before is not None and before.group(1).lower() in _bip39_words()


def _seed_phrase_check(match: re.Match[str]) -> bool:
    """A valid BIP-39 mnemonic, or twelve listed words in a row beside a context word.

    The list holds everyday words (``test``, ``file``, ``you``, ``again``), so a run of them
    alone is not enough: its length must be a phrase's (12 to 24, by threes) and its last
    bits the checksum of the rest; or ``mnemonic``, ``seed``, ``wallet``, ``recovery phrase``
    or ``BIP39`` is on the line or the line before. Never inside a test's id.
    """
    runs = _seed_runs(_secret(match))
    if not runs or _continues_a_run(match):
        return False
    near = _near_line(match)
    line = near[near.rfind("\n") + 1 :]
    if _TEST_ID.search(line) or _TEST_RUNNER.search(line):
        return False
    if any(len(run) in _SEED_LENGTHS and _valid_mnemonic(run) for run in runs):
        return True
    return _SEED_CONTEXT.search(f"{near} {_after(match)}") is not None
