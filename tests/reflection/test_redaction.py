"""Redaction: secrets in realistic tool output are removed, look-alikes survive."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reflexkit.models import FailureContext
from reflexkit.reflection.redaction import Redacted, Redactor, redact_failure

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
            == 'password: "[REDACTED:password_assignment]"'
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
        }
        text = "true oauth /home/dev/secretive-project /tmp/ssh-XXXX/agent.1 1234"
        assert Redactor(environ=env).redact(text).text == text

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
