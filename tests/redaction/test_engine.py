"""Redaction: secrets in realistic tool output are removed, look-alikes survive."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given, strategies as st

from reflexkit.models import FailureContext
from reflexkit.redaction import (
    RULES,
    Redacted,
    Redactor,
    redact_failure,
    window,
)

from ..conftest import DATA, corpus_items  # noqa: TID252 -- tests/ is no package; importlib mode resolves it

SECRETS: list[dict[str, Any]] = json.loads((DATA / "secrets" / "secrets.json").read_text("utf-8"))
LOOKALIKES: list[str] = json.loads((DATA / "secrets" / "lookalikes.json").read_text("utf-8"))
OWN = DATA / "tool_outputs"

BARE = Redactor(environ={})


@pytest.mark.parametrize("item", SECRETS, ids=lambda item: item["id"])
def test_secret_is_removed(item: dict[str, Any]) -> None:
    """Every secret of the secrets corpus is gone from the redacted text and counted."""
    result = Redactor(environ=item.get("env", {})).redact(item["text"])
    survivors = [secret for secret in item["secrets"] if secret in result.text]
    assert not survivors
    assert sum(result.counts.values()) >= 1
    assert "[REDACTED:" in result.text


@pytest.mark.parametrize("text", LOOKALIKES)
def test_lookalike_survives(text: str) -> None:
    """Paths, test names, hashes, UUIDs and ordinary code stay exactly as they were."""
    assert BARE.redact(text) == Redacted(text, {})


@pytest.mark.skipif(not corpus_items(), reason="the dev corpus is not present")
@pytest.mark.parametrize("item", corpus_items(), ids=lambda item: item["id"])
def test_dev_corpus_output_is_untouched(item: dict[str, Any]) -> None:
    """Real tool output without secrets is not changed at all."""
    output = item["failureContext"]["errorOutput"]
    assert BARE.redact(output).text == output


@pytest.mark.parametrize("path", sorted(OWN.glob("*.json")), ids=lambda p: p.stem)
def test_own_tool_output_is_untouched(path: Any) -> None:
    """Output of the real tools run for these tests is not changed either."""
    output = json.loads(path.read_text("utf-8"))["failureContext"]["errorOutput"]
    assert BARE.redact(output).text == output


class TestRules:
    """What each part of a redaction looks like."""

    def test_only_the_secret_part_is_replaced(self) -> None:
        """The key name and the URL around a password stay readable."""
        result = BARE.redact("DATABASE_URL=postgres://app:Xk29dQpa71@db:5432/orders")
        assert result.text == "DATABASE_URL=postgres://app:[REDACTED:url_password]@db:5432/orders"
        assert result.counts == {"url_password": 1}

    def test_counts_per_rule(self) -> None:
        """Counts are per rule and count every occurrence."""
        text = "AKIAZ7Q3J5K2M4N6P8R1 and again AKIAZ7Q3J5K2M4N6P8R1, token ghp_" + "a1B2" * 9
        assert BARE.redact(text).counts == {"aws_access_key": 2, "github_token": 1}

    def test_quoted_assignment_keeps_quotes(self) -> None:
        """A quoted password value is replaced inside its quotes."""
        assert (
            BARE.redact('password: "s3cr3t-Horse"').text
            == 'password: "[REDACTED:secret_assignment]"'
        )

    def test_code_is_not_a_password(self) -> None:
        """Assignments of code (calls, attributes, lookups) are not secrets."""
        for text in (
            "token = self.get_token()",
            "password = form.cleaned_data['pw']",
            "secret: None",
        ):
            assert BARE.redact(text).text == text


class TestEnvironment:
    """Exact values of secret-looking environment variables."""

    def test_env_value_without_known_shape_is_removed(self) -> None:
        """A value of a *_TOKEN variable is removed wherever it appears, named by its variable."""
        redactor = Redactor(environ={"DEPLOY_TOKEN": "plainValue42xyz"})
        result = redactor.redact("curl -d plainValue42xyz https://deploy.internal")
        assert result.text == "curl -d [REDACTED:env:DEPLOY_TOKEN] https://deploy.internal"
        assert result.counts == {"env:DEPLOY_TOKEN": 1}

    def test_harmless_env_values_are_ignored(self) -> None:
        """Short values, paths, booleans and non-secret names are not redacted."""
        env = {
            "SSH_AUTH_SOCK": "/tmp/ssh-XXXX/agent.1",  # noqa: S108 -- a value, not a file
            "API_KEY_ENABLED": "true",
            "AUTH_MODE": "oauth",
            "HOME": "/home/dev/secretive-project",
            "PIN_TOKEN": "1234",
            "SESSION_ENGINE": "django.contrib.sessions.backends.db",
        }
        text = (
            "true oauth /home/dev/secretive-project /tmp/ssh-XXXX/agent.1 1234"
            " django.contrib.sessions.backends.db"
        )
        assert Redactor(environ=env).redact(text).text == text

    def test_letters_only_values_of_secret_names_are_removed(self) -> None:
        """A plain-word password in a *_PASSWORD variable is removed wherever it shows up."""
        redactor = Redactor(environ={"DB_PASSWORD": "correcthorsebatterystaple"})
        result = redactor.redact("auth failed for app using correcthorsebatterystaple")
        assert result.text == "auth failed for app using [REDACTED:env:DB_PASSWORD]"

    def test_default_reads_os_environ(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Without a mapping, the process environment is used."""
        monkeypatch.setenv("REFLEXKIT_TEST_SECRET", "zz9-plural-Z-alpha")
        assert "zz9-plural-Z-alpha" not in Redactor().redact("got zz9-plural-Z-alpha back").text


class TestFailure:
    """Redacting a whole FailureContext."""

    def test_output_command_and_description(self) -> None:
        """Output, command and description are redacted; counts are summed."""
        key = "sk-proj-" + "Q7w" * 12
        failure = FailureContext(
            task_id="t",
            subtask_id="s",
            attempt_number=1,
            error_output=f"openai.AuthenticationError: Incorrect API key provided: {key}",
            command=f"OPENAI_API_KEY={key} python app.py",
            description=f"Use the key {key} for the summariser",
        )
        clean, counts = Redactor(environ={}).redact_failure(failure)
        for value in (clean.error_output, clean.command, clean.description):
            assert key not in value
        assert counts == {"openai_api_key": 3}
        assert clean.task_id == "t"

    def test_clean_failure_is_returned_as_is(self) -> None:
        """A failure without secrets comes back unchanged, with no counts."""
        failure = FailureContext(task_id="t", subtask_id="s", attempt_number=1, error_output="ok")
        assert redact_failure(failure, redactor=BARE) == (failure, {})

    def test_redactor_is_callable_as_the_service_expects(self) -> None:
        """A Redactor instance is the ``redact`` callable the service takes."""
        failure = FailureContext(task_id="t", subtask_id="s", attempt_number=1, error_output="ok")
        assert BARE(failure) == (failure, {})


@given(st.text(max_size=300))
def test_redaction_is_idempotent(text: str) -> None:
    """Redacting twice changes nothing more, for any text."""
    once = BARE.redact(text).text
    assert BARE.redact(once).text == once


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.name)
def test_every_rule_removes_its_example(rule: Any) -> None:
    """The documented example of each rule is redacted, and counted under that rule."""
    result = BARE.redact(f"something failed:\n{rule.example}\nsee above")
    assert result.counts.get(rule.name, 0) >= 1, result
    assert f"[REDACTED:{rule.name}]" in result.text


def test_the_docs_list_every_rule_with_its_example() -> None:
    """docs/reflections.md names each rule and shows the example it removes."""
    docs = (Path(__file__).resolve().parents[2] / "docs" / "reflections.md").read_text("utf-8")
    missing = [r.name for r in RULES if f"| `{r.name}` |" not in docs or r.example not in docs]
    assert not missing


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("DB_PASSWORD=correcthorsebatterystaple", True),
        ("password: MySecretPassword", True),
        ("PASSWORD='correct horse battery staple'", True),
        ("db_pass=hunter2hunter2", True),
        ("pin_password=4711994", True),
        ("secret=/Kq9mX2vB7nP4sT1wZ8yL3fR6hJ0dG5cA+eU9iO2", True),
        ("password=None", False),
        ("password=", False),
        ("password=''", False),
        ("token: ${TOKEN}", False),
        ("password=<redacted>", False),
        ("password=[REDACTED]", False),
        ("password: ********", False),
        ("password: str", False),
        ("password: must be at least 12 characters", False),
        ("password=getpass.getpass()", False),
        ("token_count=5", False),
        ("password_hash = make_password(raw)", False),
        ("secret_file=/etc/app/secret.key", False),
        ("token=1234", False),
        ("auth: JWTAuthentication", False),
        ("auth: ZGVwbG95OnMzY3IzdC1wYXNzd29yZA==", True),
    ],
)
def test_values_of_secret_names(text: str, *, redacted: bool) -> None:
    """The value rule: a secret name's value is removed unless it is obviously not a secret.

    Letters-only values count (``correcthorsebatterystaple``); empty values, placeholders,
    variables, types, code, prose, paths and short numbers don't.
    """
    result = BARE.redact(text)
    assert (result.text != text) is redacted, result.text


class TestBoundaries:
    """Multi-line secrets cut by a window boundary are removed whole."""

    BODY: ClassVar[list[str]] = [
        f"MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC{i:02d}Fake+Body/Line"
        for i in range(40)
    ]

    def block(self, kind: str = "RSA PRIVATE KEY") -> str:
        """A fake 40-line key block."""
        return "\n".join([f"-----BEGIN {kind}-----", *self.BODY, f"-----END {kind}-----"])

    def test_a_key_straddling_a_cut_line_loses_every_body_line(self) -> None:
        """BEGIN in the head and END in the tail: both halves go, the cut line stays."""
        lines = self.block().split("\n")
        text = "\n".join(
            ["E   setup failed", *lines[:15], "[... 80000 characters cut ...]", *lines[29:], "ok"]
        )
        result = BARE.redact(text)
        assert not [line for line in self.BODY if line in result.text]
        assert result.text == (
            "E   setup failed\n[REDACTED:private_key]\n[... 80000 characters cut ...]\n"
            "[REDACTED:private_key]\nok"
        )
        assert result.counts == {"private_key": 2}

    def test_begin_without_end_is_removed_to_the_end_of_the_text(self) -> None:
        """A window ending inside a key keeps none of it."""
        text = "$ cat id_ed25519\n" + "\n".join(self.block("OPENSSH PRIVATE KEY").split("\n")[:9])
        assert BARE.redact(text).text == "$ cat id_ed25519\n[REDACTED:private_key]"

    def test_end_without_begin_is_removed_from_the_start(self) -> None:
        """A window starting inside a key keeps none of it, and the text after stays."""
        text = "\n".join(self.block("EC PRIVATE KEY").split("\n")[30:]) + "\nssl.SSLError: PEM lib"
        assert BARE.redact(text).text == "[REDACTED:private_key]\nssl.SSLError: PEM lib"

    def test_whole_blocks_and_json_escaped_blocks(self) -> None:
        """A whole block, and one escaped on one line, go; the text around them stays."""
        escaped = self.block("PRIVATE KEY").replace("\n", "\\n")
        text = f'before\n{self.block()}\nmiddle\n  "private_key": "{escaped}\\n",\nafter'
        result = BARE.redact(text)
        assert result.text == (
            "before\n[REDACTED:private_key]\nmiddle\n"
            '  "private_key": "[REDACTED:private_key]\\n",\nafter'
        )

    @pytest.mark.parametrize(
        ("head", "tail", "expected"),
        [
            (
                "E   password=hun",
                "ter2 and more",
                "E   password=[REDACTED:cut_fragment]\n{cut}\n[REDACTED:cut_fragment] and more",
            ),
            (
                "export DB_PASSWORD=",
                "correcthorse",
                "export DB_PASSWORD=\n{cut}\n[REDACTED:cut_fragment]",
            ),
            (
                "remote: https://ci:p4ss",
                "w0rd@git.example.com/x",
                (
                    "remote: https://ci:[REDACTED:cut_fragment]\n{cut}\n"
                    "[REDACTED:cut_fragment]@git.example.com/x"
                ),
            ),
            (
                "using ghp_abcdef12",
                "3456 for the push",
                "using [REDACTED:cut_fragment]\n{cut}\n[REDACTED:cut_fragment] for the push",
            ),
            (
                "-H 'Authorization: Bearer eyJhbGciOiJIUz",
                "I1NiJ9.e30.sig' https://api",
                (
                    "-H 'Authorization: Bearer [REDACTED:authorization_header]\n{cut}\n"
                    "[REDACTED:cut_fragment]' https://api"
                ),
            ),
            (
                "collected 12 items; running the",
                "slow tests now",
                "collected 12 items; running the\n{cut}\nslow tests now",
            ),
        ],
    )
    def test_half_a_secret_at_a_cut_line_goes(self, head: str, tail: str, expected: str) -> None:
        """A cut inside a line leaves halves of a secret on both sides; both go."""
        cut = "[... 1234 characters cut ...]"
        text = f"{head}\n{cut}\n{tail}"
        assert BARE.redact(text).text == expected.format(cut=cut)

    def test_a_cut_inside_the_redactor_never_splits_a_key(self) -> None:
        """redact_window never shows a key's body, wherever the cuts fall.

        Text more than twice the window is cut first (bounded work), so a key in the part
        cut away is not counted; a key in the part read is found whole and counted.
        """
        filler = [f"log line {i} of a very long build" for i in range(5000)]
        text = "\n".join([*filler[:2400], self.block(), *filler[2400:]])
        for keep in (2_000, 60_000, 100_000):
            result = Redactor(environ={}).redact_window(text, keep)
            assert not [line for line in self.BODY if line in result.text]
            assert len(result.text) < keep + 200
            read_whole = len(text) <= 2 * keep
            assert result.counts == ({"private_key": 1} if read_whole else {})
        assert "characters cut ..." in result.text

    def test_window_of_redacted_text_marks_its_cut(self) -> None:
        """window() keeps head and tail at line ends, and the redactor reads its mark."""
        text = "\n".join(f"line {i}" for i in range(10_000))
        cut = window(text, 1_000)
        assert cut.startswith("line 0\n")
        assert cut.endswith("line 9999")
        assert "characters cut ...]\n" in cut
        assert len(cut) < 1_100
        assert BARE.redact(cut).text == cut


class TestScale:
    """Long, non-ASCII and chunked text."""

    def test_positions_survive_non_ascii_text(self) -> None:
        """Secrets after emoji and accents are replaced exactly, nothing around them moves."""
        key = "ghp_" + "Ab1" * 12
        text = f"🚀 déploiement échoué — {key} — ✓ fin\n" * 3
        assert (
            BARE.redact(text).text
            == "🚀 déploiement échoué — [REDACTED:github_token] — ✓ fin\n" * 3
        )

    def test_secrets_near_chunk_ends_of_a_long_text(self) -> None:
        """A 3 MB output is scanned in chunks; secrets on every side of a chunk end are found."""
        key = "xoxb-123456789012-1234567890123-" + "Zz9" * 8
        lines = [f"ok {i} ✓ é" if i % 2 else f"ok {i}" for i in range(300_000)]
        for index in range(0, 300_000, 997):
            lines[index] = f"token {key}"
        text = "\n".join(lines)
        result = BARE.redact(text)
        assert key not in result.text
        assert result.counts == {"slack_token": len(range(0, 300_000, 997))}

    def test_one_huge_line_is_read_near_its_triggers(self) -> None:
        """Output without newlines (minified, binary-ish) is redacted around each trigger."""
        key = "sk_live_" + "Zz9" * 10
        block = "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANFake\\n-----END PRIVATE KEY-----"
        parts = [f"var a{i}=function(b){{return b+{i}}};" * 50 for i in range(400)]
        jwt = "eyJhbGciOiJIUzI1NiJ9.eyJ" + "a2V5" * 200 + ".c2ln"
        for index in range(0, 400, 40):
            parts[index] += f'stripe.setKey("{key}");auth("{block}");bearer("{jwt}");'
        text = "".join(parts)
        result = BARE.redact(text)
        assert key not in result.text
        assert "MIIEvQIBADANFake" not in result.text
        assert "a2V5a2V5" not in result.text
        assert result.counts == {"stripe_key": 10, "private_key": 10, "jwt": 10}
        assert result.text.startswith("var a0=function(b){return b+0};")

    def test_clean_text_is_returned_without_a_copy(self) -> None:
        """Text without a trigger comes back as the same object."""
        text = "1 failed, 3 passed in 0.12s\n" * 1000
        assert BARE.redact(text).text is text


PIECES = st.sampled_from(
    [
        *"abcXYZ019_-=:/@.\n \"'[]",
        "password=",
        "token: ",
        "ghp_",
        "Bearer ",
        "://u:",
        "[... 5 characters cut ...]\n",
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----END RSA PRIVATE KEY-----",
        "Private-Lines: 3",
        "AKIA",
        "sk-",
        "machine h login u password ",
        "x:5432:d:u:",
        "curl -u a:",
        "mysql -p",
        "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCkZha2U=",
        "access_token%3D",
        "%26",
        '\\"password\\": \\"',
        '\\"',
        '"sensitive": true, "value": "',
        "JSESSIONID=",
    ]
)


@given(st.lists(PIECES, max_size=60).map("".join))
def test_redaction_is_idempotent_on_secret_shaped_text(text: str) -> None:
    """Text made of secret-shaped pieces, key markers and cut lines is stable once redacted."""
    once = BARE.redact(text).text
    assert BARE.redact(once).text == once
    assert BARE.redact_window(text, 40).counts == BARE.redact(text).counts


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


_KEY_PEM = "-----BEGIN EC PRIVATE KEY-----\n" + "MHcCAQEEIFakeFakeFake0123456789abcdefghijkl\n" * 20
_KEY_PEM += "-----END EC PRIVATE KEY-----\n"
_CERT_PEM = "-----BEGIN CERTIFICATE-----\n" + "MIICFakeFakeFake0123456789abcdefghijklmnop\n" * 20
_CERT_PEM += "-----END CERTIFICATE-----\n"


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        (f"client-key-data: {_b64(_KEY_PEM)}", True),
        (f"client-certificate-data: {_b64(_CERT_PEM)}", False),
        ('"{\\"password\\": \\"hunter2hunter2\\"}"', True),
        ('"{\\"password\\": \\"\\"}"', False),
        ('"{\\"token\\": \\"${TOKEN}\\"}"', False),
        ('"{\\"password_hash\\": \\"pbkdf2_sha256$Fake0Hash\\"}"', False),
        ("GET /cb?next=%2F%3Faccess_token%3DFake0Encoded1Token2%26x%3D1", True),
        ("GET /cb?next=%2F%3Faccess_token%3D%7B%7Btoken%7D%7D%26x%3D1", False),
        ("GET /cb?next=%2F%3Ftoken_count%3D12%26x%3D1", False),
        ('{"sensitive": true, "type": "string", "value": "Fake0Tf1Value"}', True),
        ('{"sensitive": false, "type": "string", "value": "eu-west-1"}', False),
        ("cookie set: JSESSIONID=Fake0Session1Id2Abc3", True),
        ("ASP.NET_SessionId=fake0session1id2abc3def4", True),
        ("session_id=42", False),
        ("PHPSESSID=deleted", False),
        ("POST https://chat.example.org/hooks/f4k3w3bh00kt0k3nf0rd0cs0k1", True),
        ("see https://chat.example.org/hooks/abcdefghijklmnopqrstuvwxyz", False),
        ("id=550e8400-e29b-41d4-a716-446655440000", False),
        ("api-550e8400-e29b-41d4-a716-446655440000", True),
        ("requests.get(url, auth=('deploy', 'Tu9plePw3xQ'))", True),
        ("requests.get(url, auth=(user, password))", False),
        ('oauth_scopes=["read", "write"]', False),
        ("git clone https://Fake0Url1Token2For3Docs@github.com/acme/app.git", True),
        ("pip install git+https://github.com/acme/app.git@0123456789abcdef0123", False),
        ("BUNDLE_GEMS__CONTRIBSYS__COM=deploy:B7ndlPw9xQ", True),
        ("BUNDLE_BUILD__NOKOGIRI=--use-system-libraries", False),
        ('$env:API_TOKEN = "Ps7TokVal9xQ"', True),
        ("$env:API_TOKEN = $null", False),
        ("rootPassword: |\n  Bl0ckScalarPw9x", True),
        ("description: >\n  The token used for deploys", False),
        ('  ["password"]=>\n  string(10) "Php4rrPw9x"', True),
        ('  ["password_hash"]=>\n  string(24) "$2y$10$abcdefghijklmnopq"', False),
        ("CREATE ROLE reporting WITH LOGIN PASSWORD 'SqlCr8Pw9x';", True),
        ("ALTER USER 'a'@'%' IDENTIFIED BY PASSWORD '*2470C0C06DEE42FD1618BB99005ADCA2';", False),
        ('{\\"Authorization\\": \\"Basic ZGVwbG95OnB3ZDk=\\"}', True),
        ('{\\"Authorization\\": \\"Bearer ${TOKEN}\\"}', False),
    ],
)
def test_shapes_found_beyond_the_first_table(text: str, *, redacted: bool) -> None:
    """Encoded, escaped and base64 secrets go; their look-alikes stay exactly as they were."""
    result = BARE.redact(text)
    assert (result.text != text) is redacted, result.text


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("INFO worker session=21636369-8b52-4b4a-97b7-50923ceb3ffd done", False),
        ("{'Idempotency-Key': '8e7d6c5b-4a39-4281-9706-f5e4d3c2b1a0'}", False),
        ('"GPG_KEY=7169605F62C751356D054A26A821E680E5FA6305",', False),
        ("Cache restored from key: Linux-pip-6c3f5b0e7d2a1c9b8e4f3a2d1c0b9a8f7e6d5c4b", False),
        ("::notice::Cache hit for key: node-cache-Linux-x64-npm-4f0c2a7e9d3b1c8a6e5f4d3c", False),
        ("api_key=21636369-8b52-4b4a-97b7-50923ceb3ffd", True),
        ("auth=Fk7Qz2Lm9Wx4Rt6Yp1Nc", True),
        ("session=Fk7Qz2Lm9Wx4Rt6Yp1Nc", True),
        ("key: prod-Fk7Qz2Lm9Wx4Rt6Yp1Nc8Vb", True),
        ("JSESSIONID=9F8E7D6C5B4A39281706F5E4D3C2B1A0", True),
        ("        self.session_id = new_session_id", False),
        ('{"project_key": "proj", "session_id": "sess"}', False),
        ("signature=5f2b9c8d7a6b5c4d3e2f1a0b9c8d7e6f5f2b9c8d7a6b5c4d3e2f1a0b9c8d7e6f", True),
    ],
)
def test_identifiers_under_a_weak_name(text: str, *, redacted: bool) -> None:
    """Identifiers named ``key`` or ``session`` stay; generated values under those names go.

    A UUID, an upper-case hex fingerprint or a word-prefixed digest is an identifier (a
    request, a GPG key, a CI cache entry); any value under a strong name, a session cookie
    and a signature still go.
    """
    result = BARE.redact(text)
    assert (result.text != text) is redacted, result.text


_CERT_TAIL = "MIIDazCCAlOgAwIBAgIUFake0Cert1Body2For3The4Test5Only6Xq7Wz8Lm9Kp\n" * 3
_AC_SID = "AC" + "0f9e8d7c6b5a4f3e" * 2
_BARE_AWS = "q7Rt3Yb8Cd1Nq4Wm9Fz6Hj6Tz0Vq5Mn2Ks9Bw4Pe"
_CERT_LAST = "Fk7Qz2Lm9Wx4Rt6Yp1Nc8Vb3Hj5Dk0Ga2Se4Uo7A"


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("+ echo ::add-mask::Fk7Qz2Lm9Wx4", True),
        ('echo "::add-mask::$TOKEN"', False),
        ("echo ::add-mask::${{ steps.login.outputs.token }}", False),
        (f"secret_key  ****w4Pe  shared-credentials-file\n{_BARE_AWS}\n", True),
        (f"-----BEGIN CERTIFICATE-----\n{_CERT_TAIL}{_CERT_LAST}\n", False),
        ("commit 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b\n", False),
        ("Files:\n libs/gil/test/extension/io/targa/Jamfile\n", False),
        ("Changed:\nsrc/Components/Auth2/TokenRefresherViews\n", False),
        ("DATABASE_URL: " + _b64("postgres://app:Vq5Mn2Ks9Bw4@db:5432/app"), True),
        ("HOMEPAGE: " + _b64("https://example.com/docs/index.html"), False),
        ("REDIS_URL: " + _b64("redis://cache:6379/0"), False),
        (f"Client('{_AC_SID}', '9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f')", True),
        (f"account {_AC_SID}: 404 not found", False),
        ('[{"name": "DB_PASSWORD", "value": "Hq3Zt8Wm1Xv6"}]', True),
        ("- name: DB_PASSWORD\n  value: Hq3Zt8Wm1Xv6\n", True),
        ("Cookie(version=0, name='sessionid', value='Tk9Lm2Xp4Qz7Wv1Rb5Nc8', port=None)", True),
        ('[{"name": "LOG_LEVEL", "value": "debug"}, {"name": "token_count", "value": "1"}]', False),
        ("- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef: {name: db, key: password}\n", False),
        ('{"name": "SESSION_TIMEOUT", "value": "900"}', False),
        ("db_password     Hq3Zt8Wm1Xv6\nusername        app\n", True),
        ("secretstorage   3.3.3\nkeyring         24.3.0\n", False),
        ("test_token_refresh  PASSED\n", False),
        ("│ DB_PASSWORD │ Hq3Zt8Wm1Xv6 │\n", True),
        ("| api_token | Tk9Lm2Xp4Qz7Wv1Rb5Nc8 |\n", True),
        ("| token_count | 12 |\n| api_token | required |\n", False),
        ('DbConfig { password: Some("Hq3Zt8Wm1Xv6"), pool: 0 }', True),
        ('    password: Some(\n        "Hq3Zt8Wm1Xv6",\n    ),\n', True),
        ("    flags = SECRET_SEARCH_LOAD_SECRETS | SECRET_SEARCH_UNLOCK,\n", False),
        ("let cfg = Config { password: Some(read_password()), pool: 0 };", False),
        ("secret_key     ****************w4Pe shared-credentials-file\n", False),
        ("SECRET_SEARCH_LOAD_SECRETS | SECRET_SEARCH_UNLOCK\n", False),
    ],
)
def test_shapes_of_the_seventh_batch(text: str, *, redacted: bool) -> None:
    """Masked values, bare AWS secret lines, base64 URLs, Twilio pairs, name/value, tables."""
    result = BARE.redact(text)
    assert (result.text != text) is redacted, result.text


def test_a_wrapped_base64_key_goes_to_its_last_line() -> None:
    """``base64 key.pem`` wraps at 76 columns: every line of it goes, the next word stays."""
    lines = textwrap.wrap(_b64(_KEY_PEM), 76)
    text = "$ base64 deploy.pem\n" + "\n".join(lines) + "\ndone\n$ exit 1\n"
    result = BARE.redact(text)
    assert result.text == "$ base64 deploy.pem\n[REDACTED:private_key_base64]\ndone\n$ exit 1\n"
    assert result.counts == {"private_key_base64": 1}


@pytest.mark.parametrize(
    "text",
    [
        'token:"sensitive":true,"value":"0"sensitive":true,"value":"."',
        'password=..@\\"d\\":\\"-\\"password\\":\\"d": \\"',
        "password=hunter2hunter2 ref Fake0Key1Shaped2Value3For4The5Test6Abc+/",
    ],
)
def test_one_call_reaches_the_fixed_point(text: str) -> None:
    """One call leaves nothing a second call would find.

    Matches that share a quote are all found, and our own ``[REDACTED:secret_...]`` never
    lets a rule run on a secret-shaped word next to it.
    """
    once = BARE.redact(text)
    assert BARE.redact(once.text) == Redacted(once.text, {})


RE2_HEAVY = """
import base64, random
from reflexkit.redaction import Redactor
rnd = random.Random(1)
blocks = []
for _ in range(150):
    body = base64.b64encode(rnd.randbytes(1200)).decode()
    lines = "\\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    blocks.append(f"-----BEGIN CERTIFICATE-----\\n{lines}\\n-----END CERTIFICATE-----\\n")
print(len(Redactor(environ={}).redact("".join(blocks)).text))
"""


@pytest.mark.slow
def test_a_certificate_bundle_leaves_the_terminal_alone() -> None:
    """Long base64 lines outgrew RE2's default automaton: it printed "DFA out of memory"."""
    done = subprocess.run(
        [sys.executable, "-c", RE2_HEAVY], capture_output=True, text=True, check=True, timeout=60
    )
    assert int(done.stdout) > 200_000
    assert "DFA out of memory" not in done.stderr
    assert done.stderr == ""


# The assignment operators of the languages and formats a secret is set in, written the way
# tools echo them: doubled or spaced by mistake (`SECRET_KEY==v`, `= =`), compound (Make's
# `?=`, `+=`, `::=`; PHP's `.=`; shell's `+=`), R's `<-`, comparisons that quote the value
# (`password != "..."`), and the full-width and Unicode forms of `=` and `:`.
OPERATORS = [
    "==",
    "===",
    " == ",
    " = = ",
    "+=",
    " += ",
    "?=",
    " ?= ",
    ":=",
    "::=",
    " ::= ",
    ".=",
    " .= ",
    "|=",
    "~=",
    "!=",
    " != ",
    "*=",
    " <- ",
    "\uff1d",  # full-width =
    "\uff1a",  # full-width :
    " \u2254 ",  # :=, as one character
]
VALUE = "Xk9mQ2pL7vRzT4wBq8Nd"


@pytest.mark.parametrize("operator", OPERATORS, ids=repr)
@pytest.mark.parametrize("name", ["SECRET_KEY", "db_password", "API_TOKEN"])
@pytest.mark.parametrize("quote", ["", '"', "'"])
def test_any_assignment_operator_hides_the_value(name: str, operator: str, quote: str) -> None:
    """The value goes whatever the operator between a secret's name and it."""
    text = f"{name}{operator}{quote}{VALUE}{quote}\n"
    redacted = BARE.redact(text).text
    assert VALUE not in redacted, redacted
    assert redacted.startswith(name), redacted  # the name stays: it says what was there


@pytest.mark.parametrize(
    "text",
    [
        "assert key == expected_key",
        "if token != None:",
        "if password == confirm_password:",
        "while (api_key != default_key) {",
        "password == password_confirmation",
        "len(secret_key) >= 32",
        "session_id == session.id",
    ],
)
def test_comparisons_of_names_keep_their_names(text: str) -> None:
    """A comparison of two names (no literal value) is code: nothing to redact."""
    assert BARE.redact(text).text == text


@pytest.mark.parametrize(
    "unit",
    [
        "sudo -S ",
        "smbpasswd -a -s ",
        "passwd x --stdin ",
        "az -p ",
        "password=pw ",
        "password=password=x 'a\"b' sk-sk-sk- token: eyJhbGci. mysql -p'Pw1#' ..\n",
    ],
)
def test_a_line_of_triggers_is_withheld_whole(unit: str) -> None:
    """A line that is nothing but triggers (a region its reader widens included) is dense.

    A widened region once made a line of ``sudo -S`` one hit, read rule by rule (0.2 s per
    32 KiB instead of 20 ms), and a trigger reaching to the next colon swallowed the hits of
    the benchmark's mixed line (5 s per 64 KiB instead of 0.1 s); neither is output any
    tool prints.
    """
    result = Redactor(environ={}).redact(unit * 4000)
    assert result.counts == {"dense": 1}, result.counts
    assert result.text.strip() == "[REDACTED:dense]"
