"""Redaction of the shapes batch 9 of real tool output found (tests/data/secrets/README.md).

Each line below is cut from what a real tool printed here with fake credentials (the whole
outputs are in ``real_tools.json`` and ``real_tools_lookalikes.json``); each test names the
format the rule reads, not the value.
"""

from __future__ import annotations

import hashlib
import random

import pytest

from reflexkit.redaction import Redacted, Redactor

BARE = Redactor(environ={})


def _gone(text: str, *secrets: str) -> None:
    result = BARE.redact(text).text
    assert [s for s in secrets if s in result] == []


def _kept(text: str) -> None:
    assert BARE.redact(text) == Redacted(text, {})


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ("+ mongosh mongodb://db:27017/admin -u admin -p Mo7Kq2Lz9Xw4Tm8 --eval 'x'", "Mo7Kq2"),
        ("+ sqlcmd -S db.internal -U sa -P 'Sq3Zt8Lq2Xw9Km4!' -Q 'SELECT 1'", "Sq3Zt8"),
        ("+ htpasswd -b -c .htpasswd admin Ht6Lq9Zx2Wm7Kv3", "Ht6Lq9"),
        ("+ zip -P Zp4Kz8Lq3Xw7Tm2 backup.zip dump.sql", "Zp4Kz8"),
        ("+ smbclient //files/share -U svc-backup%Sb9Wq3Lz7Xm2Kt8 -c ls", "Sb9Wq3"),
        ("+ twine upload -u deploy -p Tw5Lq9Xw2Km7Tv3R 'dist/*'", "Tw5Lq9"),
        ("+ poetry config http-basic.private deploy Pc8Kq3Lz9Xw2Tm7", "Pc8Kq3"),
        ("+ gh secret set SLACK_TOKEN --body Gh4Zt9Lq2Xw7Km3R --repo acme/app", "Gh4Zt9"),
        (
            "+ az login --service-principal -u 0f1e2d3c -p Az7Kq2~Lz9Xw4Tm8Rp3.Vb --tenant t",
            "Az7Kq2",
        ),
        ("+ rabbitmqctl add_user svc-orders Rb3Kz8Lq2Xw9Tm4", "Rb3Kz8"),
        ("+ rabbitmqctl change_password svc-orders 'Rb3Kz8 Lq2Xw9'", "Rb3Kz8"),
        ("net use \\\\files\\share /user:ACME\\svc Nu7Kq2Lz9Xw4 /persistent:no", "Nu7Kq2"),
        ("#1 PDO->__construct('mysql:host=db;dbname=app', 'app', 'Lx7Kq2Lz9Xw4', Array)", "Lx7Kq2"),
        ("#0 mysqli->__construct('db', 'app', 'Mq7Kq2Lz9Xw4', 'shop')", "Mq7Kq2"),
    ],
)
def test_tools_whose_password_is_a_short_flag_or_an_argument(line: str, secret: str) -> None:
    """A tool's documented password flag or position (``sqlcmd -P``, ``htpasswd -b f u PW``)."""
    _gone(line, secret)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("+ echo Su7Kq2Lz9Xw4\n+ sudo -S apt-get install -y jq", "Su7Kq2"),
        ("echo 'deploy:Ch7Kq2Lz9Xw4' | chpasswd", "Ch7Kq2"),
        ("+ passwd --stdin deploy\n+ echo Pw7Kq2Lz9Xw4", "Pw7Kq2"),
    ],
)
def test_other_commands_reading_a_password_on_stdin(text: str, secret: str) -> None:
    """``sudo -S``, ``chpasswd`` and ``passwd --stdin`` read what the traced ``echo`` printed."""
    _gone(text, secret)


def test_such_tools_without_a_password_stay() -> None:
    """The same tools given no password, or a variable, keep their command line."""
    _kept("+ mongosh mongodb://db:27017/admin -u admin -p --eval 'db.stats()'")
    _kept('+ sqlcmd -S db -U sa -P "$SA_PASSWORD" -Q "SELECT 1"')
    _kept("+ zip -r backup.zip dump.sql\n+ gh secret set SLACK_TOKEN < token.txt")
    _kept("+ htpasswd -c .htpasswd admin")
    _kept("+ sudo apt-get install -y jq\n+ echo done")


class TestPydantic:
    """Validation errors that echo the input under the field's name."""

    def test_input_value_under_the_field_line(self) -> None:
        """Pydantic v2 prints the field on its own line and ``input_value=`` on the next."""
        text = (
            "4 validation errors for Settings\n"
            "api_token\n"
            "  String should match pattern '^[A-Za-z0-9]+$' [type=string_pattern_mismatch,"
            " input_value='Rk4Wq9Lz2Xm7 Tp3Vn8', input_type=str]\n"
            "db.password\n"
            "  String should have at least 24 characters [type=string_too_short,"
            " input_value='Gx8Lq3Zw7Km2', input_type=str]\n"
            "db.port\n"
            "  Input should be a valid integer [type=int_parsing, input_value='x',"
            " input_type=str]\n"
        )
        result = BARE.redact(text)
        assert "Rk4Wq9" not in result.text
        assert "Gx8Lq3" not in result.text
        assert "input_value='x'" in result.text

    def test_input_of_a_field_that_says_nothing_stays(self) -> None:
        """An ordinary field keeps its echoed input: it is the fact the error is about."""
        _kept(
            "db.port\n  Input should be a valid integer, unable to parse string as an integer"
            " [type=int_parsing, input_value='54x2', input_type=str]"
        )

    def test_fastapi_loc_and_input(self) -> None:
        """FastAPI's 422 body: ``"loc": [..., "password"]`` names the ``"input"`` after it."""
        text = (
            '{"detail":[{"type":"string_too_short","loc":["body","password"],'
            '"msg":"String should have at least 16 characters","input":"Wz8Kq3Lm9Xt2Rv",'
            '"ctx":{"min_length":16}},{"type":"int_parsing","loc":["body","otp"],'
            '"msg":"bad","input":"12ab"}]}'
        )
        result = BARE.redact(text).text
        assert "Wz8Kq3" not in result
        assert '"input":"12ab"' in result

    def test_errors_list_repr(self) -> None:
        """``ValidationError.errors()`` as a Python repr: ``'loc': ('password',)``."""
        text = (
            "[{'type': 'string_too_short', 'loc': ('password',), 'msg': 'too short',"
            " 'input': 'Hn5Tz9Lq2Xw', 'ctx': {'min_length': 24}}]"
        )
        _gone(text, "Hn5Tz9")

    def test_secret_str_holding_a_clear_value(self) -> None:
        """``SecretStr('...')`` built in code holds its value; pydantic's own repr masks it."""
        _gone("expected SecretStr('Xw3Lq9Zt2Km7Rv') got **********", "Xw3Lq9")
        _kept("db_password=SecretStr('**********') signing_key=SecretBytes(b'**********')")


class TestLiterals:
    """Secrets a source line builds from several literals."""

    def test_concatenation(self) -> None:
        """``'cs_' + 'Zq4...' * 6`` and ``"sec_" + "..."``: the pieces are one value."""
        _gone('        api_secret = "sec_" + "Pc7Kq2Lz9Xw4Tm8Rv3"\n', "Pc7Kq2")
        _gone(
            "config = {'client_secret': 'cs_' + 'Zq4Wm9Tp2Lr8Vn6Ky3Bd' * 6, 'name': 'x' * 300}",
            "Zq4Wm9",
        )

    def test_adjacent_literals_in_parentheses(self) -> None:
        """Python joins ``("Pa4..." "Xw9...")`` into one string."""
        _gone('        db_password = ("Pa4Zt8Lq2" "Xw9Km4Rv7")', "Pa4Zt8Lq2", "Xw9Km4Rv7")

    def test_concatenation_with_a_variable_keeps_the_code(self) -> None:
        """``"Bearer " + token`` names no value: the literal is a scheme."""
        _kept('auth_header = "Bearer " + token\npassword = prefix + suffix')

    def test_scala_map_arrow(self) -> None:
        """Scala prints ``Map(user -> app, password -> ...)``."""
        _gone("conf = Map(user -> app, password -> Ps6Lq9Zx2Wm7Kv3R)", "Ps6Lq9")
        _kept("Map(token_count -> 3, mode -> strict)")


class TestPairs:
    """A value named by the element beside it."""

    def test_name_value_tuples(self) -> None:
        """Rust's ``[("STRIPE_SECRET", "...")]``, Python's ``environ.items()`` reprs."""
        _gone('[("STRIPE_SECRET", "Rv8Lq3Zx9Wm2Kt7Rp4"), ("PORT", "80")]', "Rv8Lq3")
        _gone("dict_items([('DB_PASSWORD', 'Dq7Lm2Xz9'), ('HOME', '/root')])", "Dq7Lm2Xz9")
        _kept("[('token_count', '3'), ('PORT', '80')]")

    def test_keyword_and_atom_pairs(self) -> None:
        """EDN and Lisp's ``:password "..."``, Erlang's ``{password,<<"...">>}``."""
        _gone('{:db_password "Cl7Kq2Lz9Xw4", :port 5432}', "Cl7Kq2")
        _gone('(:password "Li7Kq2Lz9Xw4" :user "app")', "Li7Kq2")
        _gone('[{password,<<"Er7Kq2Lz9Xw4">>},{port,5432}]', "Er7Kq2")
        _kept('{:token_count 3, :password_hint "see vault"}\n{passwords,"two words"}')

    def test_credentials_tuple_struct(self) -> None:
        """Rust's ``Credentials("app", "...")``: a user and a password, positionally."""
        _gone('Conn { creds: Credentials("app", "Rc5Zt9Lq2Xw7Km3Rv") }', "Rc5Zt9")

    def test_xml_name_then_value(self) -> None:
        """Maven's ``<name>Private-Token</name>`` then ``<value>...</value>``."""
        text = (
            "          <property>\n            <name>Private-Token</name>\n"
            "            <value>Gp4Zt9Lq2Xw7Km3Rv8Nb</value>\n          </property>\n"
        )
        _gone(text, "Gp4Zt9")
        _kept("<property>\n  <name>Accept</name>\n  <value>application/json</value>\n</property>")

    def test_honeycomb_header(self) -> None:
        """``X-Honeycomb-Team`` carries an API key though its name says nothing of it."""
        _gone("curl -sf -H 'X-Honeycomb-Team: Mh6Lq9Zx2Wm7Kv3Rp4' http://h/1/markers", "Mh6Lq9")


def test_base64_of_json_with_a_secret() -> None:
    """``kubectl create secret --from-literal=oauth.json='{...}' -o json`` base64s the JSON."""
    text = '        "oauth.json": "eyJjbGllbnRfc2VjcmV0IjoiS28zWnQ4THEyWHc5S200UnYifQ==",\n'
    _gone(text, "eyJjbGllbnRfc2VjcmV0IjoiS28zWnQ4THEyWHc5S200UnYifQ==")
    _kept('"payload": "eyJldmVudCI6ICJwdXNoIiwgInJlZiI6ICJyZWZzL2hlYWRzL21haW4ifQ=="')


def test_jwe_compact_form() -> None:
    """A JWE has five parts and its second is no JSON; its header names ``enc``."""
    jwe = (
        "eyJhbGciOiAiQTI1NktXIiwgImVuYyI6ICJBMjU2R0NNIn0.D740B66xbi3bN_Tfimfl5dYEZ7BZD6AHNniHx0Cx"
        "lW3DdXaLIRdwEA.p9UkPIkBKd6JrDN2.5I12_JNCRB08SktJlLBNCQpFstMS.JtIe4RjIS-akVZKjQUzNJg"
    )
    _gone(f"ERROR rejected JWE {jwe}", "D740B66xbi3bN", "5I12_JNCRB08")
    _kept("version eyJhbGciOiAiSFMyNTYifQ.a.b.c.d of the docs")


def test_scheme_at_the_end_of_a_wrapped_line() -> None:
    """Textwrap may leave ``Bearer`` ending one line and the token starting the next."""
    text = "upstream rejected request: Authorization=Bearer\nWt7Kq2Lz9Xw4Tm8Rv3Pb6Hd1Nc5 (expired?)"
    _gone(text, "Wt7Kq2")
    _kept("Authentication scheme: Bearer\nRetrying the request with a fresh session")


class TestWrappedInsideQuotes:
    """Rich's log wraps a long quoted value mid-word, padding both lines with its columns."""

    def test_the_tail_on_the_next_line_goes_with_the_head(self) -> None:
        """The head is a known token; the tail up to the closing quote goes with it."""
        pad = "\x1b[2;36m           \x1b[0m"
        text = (
            f"{pad}    \x1b[32m'refresh_token'\x1b[0m:                 \x1b[2m     \x1b[0m\n"
            f"{pad}\x1b[32m'1//0gLm2Xp9Kz4Tw8Rn3Yb6Cd1Fh5Gj0Ks2Ae7Vq3Zt8Pw1L\x1b[0m"
            " \x1b[2m \x1b[0m\n"
            f"{pad}\x1b[32mm2Xp9Kz4Tw8Rn3Yb6Cd1Fh5Gj0Ks'\x1b[0m      \x1b[2m     \x1b[0m\n"
        )
        _gone(text, "1//0gLm2", "m2Xp9Kz4Tw8Rn3Yb6Cd1Fh5Gj0Ks")

    def test_a_closed_quote_takes_nothing_from_the_next_line(self) -> None:
        """A value closed on its own line leaves the next line's word alone."""
        result = BARE.redact("token = 'Zr7Vq2Lm9Xp4Kw8T'\n    finished'").text
        assert "Zr7Vq2" not in result
        assert result.endswith("'\n    finished'")


def test_url_missing_the_colon_of_its_scheme() -> None:
    """SQLAlchemy echoes ``postgresql+psycopg2//user:password@host``, a URL it can't parse."""
    _gone(
        'sa.create_engine("postgresql+psycopg2//reporting:Lk8Wz3Qm9Xr2Tv7Pn4@db.internal/x")',
        "Lk8Wz3",
    )


@pytest.mark.parametrize(
    "text",
    [
        "broker_url: 'amqp://jobs:********@rabbit:5672/jobs'",  # celery, censored
        "postgresql+psycopg2://app:***@db.internal:5432/orders",  # SQLAlchemy's repr
        "consumer: Cannot connect to amqp://worker:**@mq.internal:5672/prod",  # kombu
        "user.signingkey=3AA5C34371567BD2\ncredential.helper=cache --timeout=3600",
        " -u, --user <user:password> Server user and password",  # curl --help
        "  kubectl create secret docker-registry s --docker-password=DOCKER_PASSWORD",
        " -twopass            Separate MAC, encryption passwords",  # openssl pkcs12 -help
        "NODE_AUTH_TOKEN=XXXXX-XXXXX-XXXXX-XXXXX",  # actions/setup-node's placeholder
        "ERROR auth: Invalid token: expected 3 segments, got 1",
        "INFO auth: api_key_id=key_01HF3Z8K2M4N6P8R0T2V4X6Z8B rotated; previous key disabled",
        "INFO auth: auth: method=password result=failure reason=bad_credentials",
        "test_ids.py::test_login[token:revoked] PASSED",
        "+ true vault kv get -field=token secret/data/ci/deploy",
        "+ helm upgrade api ./chart --set auth.existingSecret=api-auth",
        '    "token_use": "access"',
        (
            "send: b'POST /v1/orders HTTP/1.1\\r\\nIdempotency-Key: 9b2f6c1e-4a7d-4f3b-8e5a-"
            "2c9d0b1f7a36\\r\\nX-Request-Id: req_7f9c2ba4e88f4d1a\\r\\n'"
        ),
        "  kubectl create secret generic s --from-file=ssh-privatekey=path/to/id_rsa",
    ],
)
def test_lookalikes_of_batch_nine(text: str) -> None:
    """Masks, placeholders, key ids, help text and references stay as printed."""
    _kept(text)


@pytest.mark.parametrize(
    "line",
    [
        'Run it alone: `npx jest src/jwt.test.ts -t "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"`.',
        'npx jest src/jwt.test.ts -t "jwt parseHeader eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"',
        "npx jest -t eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
        'Run it alone: `npx vitest run src/a.test.ts -t "decodes Xq7vL2pR9mZ4tK8w"`.',
        "yarn test -t 'rotates Xq7vL2pR9mZ4tK8w'",
        "pytest -k test_get_key_Ab12Cd34Ef56 -p no:cacheprovider",
        "python -m pytest tests/test_keys.py -k 'Ab12Cd34Ef56Gh78 and not slow'",
        "npx playwright test -g 'logs in as Xq7vL2pR9mZ4tK8w'",
        "anytool -p 'parses eyJhbGciOiJIUzI1NiJ9 as a header'",
        "decoder -t eyJhbGciOiJSUzI1NiIsImtpZCI6IjEyMyJ9",
    ],
)
def test_a_test_runners_filter_and_a_bare_jwt_header_stay(line: str) -> None:
    """A test's name after ``jest -t``/``pytest -k`` is no password, nor a JWT's header alone.

    The "run it alone" command names the test: redacted, it names a test that does not
    exist. A JWT header (``{"alg":"HS256","typ":"JWT"}`` in base64) holds no secret; the
    payload and signature after its dots do.
    """
    _kept(line)


def test_a_short_flags_generated_value_still_goes_beside_a_test_runner() -> None:
    """Outside a test runner's command, ``-t`` or ``-k`` with a token goes as before."""
    _gone("uploader -t Xq7vL2pR9mZ4tK8wQ3 && npx jest", "Xq7vL2pR9mZ4tK8wQ3")
    _gone("jest-uploader --user ci -p Xq7vL2pR9mZ4tK8wQ3", "Xq7vL2pR9mZ4tK8wQ3")


def _phrase(words: int, seed: int) -> str:
    """A made-up, valid seed phrase: *words* words of the BIP-39 list, its checksum right."""
    from importlib import resources  # noqa: PLC0415

    listed = resources.files("reflexkit.redaction._rules").joinpath("bip39_english.txt")
    wordlist = listed.read_text("utf-8").split()
    rng = random.Random(seed)  # noqa: S311 -- a fixed, made-up phrase for the test
    entropy = bytes(rng.randrange(256) for _ in range(words * 4 // 3))
    bits = len(entropy) * 8
    digest = int.from_bytes(hashlib.sha256(entropy).digest(), "big") >> (256 - bits // 32)
    number = int.from_bytes(entropy, "big") << (bits // 32) | digest
    return " ".join(wordlist[number >> (11 * i) & 2047] for i in reversed(range(words)))


@pytest.mark.parametrize("words", [12, 15, 18, 21, 24])
@pytest.mark.parametrize(
    "form",
    [
        "{p}",
        "mnemonic: {p}",
        "Your seed phrase is: {p}",
        'WALLET_MNEMONIC="{p}"',
        '{{"mnemonic": "{p}", "path": "m/44\'/60\'/0\'/0/0"}}',
        "E   AssertionError: wallet.restore('{p}') failed",
        "export SEED_PHRASE={p}",
    ],
)
def test_a_seed_phrase_goes_whole(words: int, form: str) -> None:
    """A BIP-39 recovery phrase (12 to 24 words of its list) is a wallet's private key."""
    phrase = _phrase(words, words)
    out = BARE.redact(form.format(p=phrase)).text
    left = [w for w in phrase.split() if f" {w} " in f" {out} "]
    assert len(left) < 3, out  # a listed word may be part of the form itself
    assert "[REDACTED:" in out, out


@pytest.mark.parametrize(
    "text",
    [
        "the quick brown fox jumps over the lazy dog and then runs away from the angry farmer",
        "assert all items were added before the test began and each one was checked",
        "abandon ability able about above absent",  # six listed words: not a phrase
        "TODO: move these helper functions into their own module once the refactor lands",
        "error: could not find any matching version for this package in the current index",
        # Everyday words of the list, twelve in a row: no checksum, no wallet near.
        "you have this test file open again when you save this code",
        "  \u2713 Cart \u203a check total again when you add item then remove that item twice",
        "npx jest -t 'Cart \u203a check total again when you add item then remove that item twice'",
    ],
)
def test_prose_is_not_a_seed_phrase(text: str) -> None:
    """Prose is mostly words the list lacks (``the``, ``of``, ``is``); six listed words are few."""
    _kept(text)


@pytest.mark.parametrize("words", [12, 24])
@pytest.mark.parametrize(
    "form",
    [
        "{p}",
        "{title}",
        "Seed words:\n{p}",
        "my wallet: {lower}",
        "BIP39: {lower}",
    ],
)
def test_a_seed_phrase_goes_with_its_checksum_or_a_context_word(words: int, form: str) -> None:
    """A valid phrase goes anywhere, in any case; listed words only beside a context word.

    Without a checksum, ``mnemonic``, ``seed``, ``wallet``, ``recovery phrase`` or ``BIP39``
    on the line or the line before makes twelve listed words a phrase.
    """
    phrase = _phrase(words, words + 1)
    lower = "you have this test file open again when you save this code"
    text = form.format(p=phrase, title=phrase.title(), lower=lower)
    out = BARE.redact(text).text
    assert "[REDACTED:seed_phrase]" in out, out
    assert "save this code" not in out, out
    assert phrase.split()[-1] not in out.lower(), out
