"""Redaction of secrets as real tools print them (tests/data/secrets/README.md)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reflexkit.redaction import Redacted, Redactor

from ..conftest import DATA  # noqa: TID252 -- tests/ is no package; importlib mode resolves it

REAL: list[dict[str, Any]] = json.loads((DATA / "secrets" / "real_tools.json").read_text("utf-8"))
REAL_LOOKALIKES: list[dict[str, Any]] = json.loads(
    (DATA / "secrets" / "real_tools_lookalikes.json").read_text("utf-8")
)

BARE = Redactor(environ={})

FAILURE_CORPORA = sorted((DATA / "tool_outputs").glob("*.json")) + sorted(
    (DATA / "holdout_like").glob("*.json")
)


@pytest.mark.parametrize("item", REAL, ids=lambda item: item["id"])
def test_real_tool_secret_is_removed(item: dict[str, Any]) -> None:
    """Every secret a real tool printed is gone, but for the few the README says are left."""
    text = BARE.redact(item["text"]).text
    survivors = [secret for secret in item["secrets"] if secret in text]
    assert survivors == item.get("knownLeft", [])


@pytest.mark.parametrize("item", REAL_LOOKALIKES, ids=lambda item: item["id"])
def test_real_tool_lookalike_survives(item: dict[str, Any]) -> None:
    """Real output without a secret (shas, UUIDs, digests, ``token_count``) is not changed."""
    assert BARE.redact(item["text"]) == Redacted(item["text"], {})


@pytest.mark.slow
def test_failure_corpora_come_through_unchanged() -> None:
    """The failure output of every tool-output and holdout-like item has no secret to remove.

    Their key facts are quoted verbatim by reflections: a test id, a path, a hash or an
    error message changed by redaction would be a lost fact.
    """
    changed = {}
    for path in FAILURE_CORPORA:
        output = json.loads(path.read_text("utf-8"))["failureContext"]["errorOutput"]
        result = BARE.redact(output)
        if result.counts:
            changed[path.name] = result.counts
    assert len(FAILURE_CORPORA) > 200
    assert changed == {}


class TestColour:
    """Terminal colour codes around a name, its separator or its value."""

    def test_rich_locals_line(self) -> None:
        """Rich's show_locals colours the name, the ``=`` and the value apart."""
        line = "\x1b[3;33mpassword\x1b[0m\x1b[31m =\x1b[0m \x1b[32m'Mv3nT8qYz1Kp'\x1b[0m"
        result = BARE.redact(line)
        assert "Mv3nT8qYz1Kp" not in result.text
        assert result.counts == {"secret_assignment": 1}

    def test_token_right_after_a_colour_code(self) -> None:
        r"""A token prefix glued to ``\x1b[33m`` still starts a token."""
        key = "sk-ant-api03-" + "Xc7Vb2Nm4Lk9" * 4
        result = BARE.redact(f'api_key = \x1b[33m"\x1b[0m\x1b[33m{key}\x1b[0m')
        assert key not in result.text

    def test_quoted_name_in_colour(self) -> None:
        """Rich colours the quotes of a dict key apart from the key."""
        line = (
            '{\x1b[33m"\x1b[0m\x1b[33msmtp_password\x1b[0m\x1b[33m"\x1b[0m:'
            ' \x1b[33m"Fq4 Wn8 Tz2 Lm6"'
        )
        assert "Fq4 Wn8" not in BARE.redact(line).text

    def test_coloured_line_without_a_secret_keeps_its_colours(self) -> None:
        """A coloured line with nothing secret on it is returned exactly as it was."""
        line = "\x1b[3;33mtoken_count\x1b[0m\x1b[31m =\x1b[0m \x1b[1;36m4096\x1b[0m"
        assert BARE.redact(line) == Redacted(line, {})


class TestWrapped:
    """Values pprint and rich wrap onto the following lines."""

    def test_value_on_the_line_after_its_name(self) -> None:
        """Rich prints a long value on the line after ``'api_token':``."""
        token = "tok_" + "Lm2Xp9Kz4Tw8" * 5
        text = f"{{\n    'api_token': \n'{token}'\n}}"
        result = BARE.redact(text)
        assert token not in result.text
        assert result.counts == {"secret_assignment": 1}

    def test_adjacent_literals_are_one_value(self) -> None:
        """Pprint splits a long string at spaces into literals on consecutive lines."""
        text = (
            " 'smtp': {'password': 'tidal Mosaic 47 Orbit lantern '\n"
            "                      'Quartz 93 harbor',\n"
            "          'user': 'alerts@acme.io'}}"
        )
        result = BARE.redact(text).text
        assert "tidal Mosaic" not in result
        assert "Quartz 93" not in result
        assert "'user': 'alerts@acme.io'" in result

    def test_next_key_is_not_a_continuation(self) -> None:
        """A quoted key on the next line is the next entry, not more of the value."""
        text = "{'password': 'Hq4Lm9Vz2Xt7'\n 'user': 'deploy'}"
        assert (
            BARE.redact(text).text
            == "{'password': '[REDACTED:secret_assignment]'\n 'user': 'deploy'}"
        )

    def test_yaml_list_after_a_name_is_untouched(self) -> None:
        """A name that ends its line followed by unquoted lines is not given their text."""
        text = "token:\n  - name: refresh\n    ttl: 3600"
        assert BARE.redact(text) == Redacted(text, {})


class TestSpread:
    """A value found once is removed wherever else the same output prints it."""

    def test_go_verbs(self) -> None:
        """Go's ``%v`` prints the fields without names; ``%+v`` beside it named them."""
        text = (
            "loaded config: {Endpoint:https://api.internal Token:tok_Lm2Xp9Kz4Tw8Rn3Yb6Cd1Fh5"
            " Password:Gz7Vq2Lm9Xp4 Retries:3}\n"
            "panic: auth failed for {https://api.internal tok_Lm2Xp9Kz4Tw8Rn3Yb6Cd1Fh5"
            " Gz7Vq2Lm9Xp4 3}\n"
        )
        result = BARE.redact(text)
        assert "tok_Lm2Xp9" not in result.text
        assert "Gz7Vq2Lm9Xp4" not in result.text
        assert result.counts == {"secret_assignment": 4}

    def test_positional_argument_in_a_source_line(self) -> None:
        """Pytest shows the call with positional arguments and the repr that names them."""
        secret = "nB4vLz9Qe2Rt7Yx1Kp3Mw8Jd5Fs0Hg6Ua2Ci4Oe"  # noqa: S105 -- a fake, planted
        text = (
            f">       c = Client('ci-bot', '{secret}')\n"
            f"c          = Client(key='ci-bot', secret='{secret}')\n"
        )
        assert secret not in BARE.redact(text).text

    def test_words_and_short_values_do_not_spread(self) -> None:
        """A plain word found as a password is not removed from the rest of the text."""
        text = "password=postgres\nconnecting to postgres at db:5432"
        result = BARE.redact(text).text
        assert result == "password=[REDACTED:secret_assignment]\nconnecting to postgres at db:5432"

    def test_part_of_a_longer_word_is_kept(self) -> None:
        """A found value inside a longer token is not cut out of it."""
        text = "token=Zr7Vq2Lm9Xp4Kw8T\nid Zr7Vq2Lm9Xp4Kw8Tx9 done"
        assert BARE.redact(text).text.endswith("id Zr7Vq2Lm9Xp4Kw8Tx9 done")


class TestEscaped:
    """Values quoted inside a quoted string."""

    def test_rust_debug_in_an_unwrap_message(self) -> None:
        """Rust's ``{:#?}`` inside ``unwrap()``'s message escapes the value's quotes."""
        text = (
            'called `Result::unwrap()` on an `Err` value: "login rejected: Config {\\n'
            '        api_token: \\"rt_Tz8Rw3Yb6Nc1Hd5Fg0Jk2Lm\\",\\n'
            '        username: \\"ci\\",\\n}"'
        )
        result = BARE.redact(text).text
        assert 'api_token: \\"[REDACTED:secret_assignment]\\"' in result
        assert 'username: \\"ci\\"' in result


def test_a_tools_own_mask_is_not_a_secret() -> None:
    """``kubectl config view`` prints ``DATA+OMITTED`` where the key data was."""
    text = "    client-key-data: DATA+OMITTED\n    token: REDACTED"
    assert BARE.redact(text) == Redacted(text, {})


def test_bytes_literal_value() -> None:
    """A header dict of bytes (``{'X-Amz-Security-Token': b'...'}``) has its values removed."""
    token = "FwoGZXIvYXdzEBYaDLm2Xp9Kz4Tw8Rn3Yb6Cd1Fh5Gj0Ks2Ae7Vq3Zt8Pw1"  # noqa: S105 -- a fake
    text = f"headers={{'X-Amz-Date': b'20250101T000000Z', 'X-Amz-Security-Token': b'{token}'}}>"
    result = BARE.redact(text).text
    assert result == (
        "headers={'X-Amz-Date': b'20250101T000000Z',"
        " 'X-Amz-Security-Token': b'[REDACTED:secret_assignment]'}>"
    )


class TestPasswordStdin:
    """``echo "$PW" | docker login --password-stdin`` traced by ``set -x``."""

    def test_echo_after_the_login_line(self) -> None:
        """Bash traces the pipeline's ``echo`` with the password expanded, beside the login."""
        text = (
            "+ docker login --username ci --password-stdin registry.internal:5000\n"
            "+ echo Dp3Lm8Vz2Xq7Tk9W\n"
            "Error response from daemon: Get https://registry.internal:5000/v2/: unauthorized\n"
        )
        result = BARE.redact(text)
        assert "Dp3Lm8Vz2Xq7Tk9W" not in result.text
        assert result.counts == {"stdin_password": 1}

    def test_echo_before_the_login_line(self) -> None:
        """The trace may print the ``echo`` first."""
        text = "+ echo 'Hq4Lm9Vz2Xt7'\n+ helm registry login ghcr.io -u ci --password-stdin\n"
        assert "Hq4Lm9Vz2Xt7" not in BARE.redact(text).text

    def test_an_echo_elsewhere_is_kept(self) -> None:
        """Without ``--password-stdin`` beside it, a traced ``echo`` is just output."""
        text = "+ echo Building4Release2\n+ make all\n"
        assert BARE.redact(text) == Redacted(text, {})


def test_password_stdin_flag_takes_no_value() -> None:
    """``--password-stdin`` says where the password comes from; the registry after it stays."""
    text = "+ docker login --username ci --password-stdin registry.internal:5000"
    assert BARE.redact(text) == Redacted(text, {})


def test_password_piped_on_the_same_line() -> None:
    """A recipe ``echo PW | docker login --password-stdin`` is echoed with the value expanded."""
    text = "echo Dp3Lm8Vz2Xq7Tk9W | docker login -u ci --password-stdin registry.internal:5000"
    assert BARE.redact(text).text == (
        "echo [REDACTED:stdin_password] | docker login -u ci --password-stdin"
        " registry.internal:5000"
    )


def test_identifiers_taken_for_values_do_not_spread() -> None:
    """A type name a rule took for a value stays everywhere else in the source it came from."""
    text = (
        "    private_key: PKCS12PrivateKeyTypes,\n"
        "PKCS12PrivateKeyTypes = typing.Union[\n"
        '    "PKCS12PrivateKeyTypes",\n'
    )
    assert BARE.redact(text).text.count("PKCS12PrivateKeyTypes") >= 2


def test_django_secret_key_with_punctuation() -> None:
    """A quoted value holding ``(`` is a string, not a call: Django's generated keys do."""
    key = "django-insecure-7q#x!m2v$z8@l4t^w9k&r3n*b6y(c1h)f5g0j"
    result = BARE.redact(f"{{'DJANGO_SECRET_KEY': '{key}', 'DEBUG': False}}").text
    assert result == "{'DJANGO_SECRET_KEY': '[REDACTED:secret_assignment]', 'DEBUG': False}"


def test_a_docstring_after_a_constant_is_not_a_continuation() -> None:
    """A quoted line that goes on after its closing quote is code, not a wrapped piece."""
    text = 'META_TOKEN = "Zr7Vq2Lm9Xp4Kw8T"\n"""The key of every frame; see `listen`."""\n'
    assert BARE.redact(text).text == (
        'META_TOKEN = "[REDACTED:secret_assignment]"\n"""The key of every frame; see `listen`."""\n'
    )


def test_a_raw_string_is_not_a_value() -> None:
    """Source shows raw strings (``r"..."``); reprs never do, so ``r`` opens no value."""
    text = 'token = r"[-!#$%&*+.^_|~0-9a-zA-Z]+"'
    assert BARE.redact(text) == Redacted(text, {})


class TestOpensslText:
    """``openssl rsa|ec|pkey -text`` prints a private key as colon-separated hex."""

    def test_the_dump_after_private_key_goes(self) -> None:
        """The fields after ``Private-Key:`` go whole; the line after the dump stays."""
        text = (
            "Private-Key: (2048 bit, 2 primes)\nmodulus:\n    00:b7:67:9b:9d\n"
            "publicExponent: 65537 (0x10001)\nprivateExponent:\n    00:a3:86:eb:c7:77\n"
            "prime1:\n    00:e8:84:4d\nwriting RSA key\n"
        )
        result = BARE.redact(text)
        assert result.text == (
            "Private-Key: (2048 bit, 2 primes)\n[REDACTED:private_key_text]\nwriting RSA key\n"
        )
        assert result.counts == {"private_key_text": 1}

    def test_mac_addresses_are_not_pgpass_lines(self) -> None:
        """Colon-separated hex octets are no ``host:port:db:user:password`` line."""
        text = "    link/ether 00:11:22:33:44:55 brd ff:ff:ff:ff:ff:ff\n    00:11:22:33:44:55:66"
        assert BARE.redact(text) == Redacted(text, {})


def test_urlsplit_netloc_password() -> None:
    """Pytest's locals show ``SplitResult(netloc='user:password@host')`` with no scheme."""
    text = (
        "parts = SplitResult(scheme='https', netloc='deploy:Sp4Lm9Vz2Xq7Tk3W@artifacts.internal')"
    )
    assert BARE.redact(text).text == (
        "parts = SplitResult(scheme='https',"
        " netloc='deploy:[REDACTED:url_password]@artifacts.internal')"
    )


def test_terraform_quotes_a_variable_value() -> None:
    """Terraform's errors say ``var.db_password is "..."``; prose after ``is`` stays."""
    text = '    │ var.db_password is "Tf8Vq2Lm9Xp4Kw3R"\nerror: password is "required"'
    assert BARE.redact(text).text == (
        '    │ var.db_password is "[REDACTED:secret_assignment]"\nerror: password is "required"'
    )


def test_a_cookie_value_printed_alone_goes_too() -> None:
    """The debug output of wget stores the cookie it got, without the ``Set-Cookie`` name."""
    text = (
        "Set-Cookie: csrftoken=Wq8Zp3Lm7Tx2Vn9Rk4Yb6Hc1Fd5Gj0Ks; Path=/\n"
        "Stored cookie 127.0.0.1 18766 / <session> [expiry none] csrftoken"
        " Wq8Zp3Lm7Tx2Vn9Rk4Yb6Hc1Fd5Gj0Ks\n"
    )
    assert "Wq8Zp3Lm7Tx2Vn9Rk4Yb6Hc1Fd5Gj0Ks" not in BARE.redact(text).text


def test_go_mysql_driver_dsn() -> None:
    """go-sql-driver's DSN has no scheme: ``user:password@tcp(host:port)/db``."""
    text = 'db, err := sql.Open("mysql", "root:My7Vq2Lm9Xp4@tcp(db:3306)/app")'
    assert BARE.redact(text).text == (
        'db, err := sql.Open("mysql", "root:[REDACTED:go_mysql_dsn]@tcp(db:3306)/app")'
    )
