"""Disguised secrets: escaped separators, invisible characters and look-alike letters in a name.

Each disguise is planted around several names and values; the value must not survive the
redactor nor the terminal gate (which removes or shows the invisible characters, so what is
left on the screen reads ``password=...``). Text with the same disguises and no secret, and
the parts of a line around a secret, keep their own form.
"""

from __future__ import annotations

import json
import pprint
import subprocess
import sys

import pytest

from reflexkit.redaction import Redactor, outbound

BARE = Redactor(environ={})

VALUE = "Hq3Zt8" + "Lm2Xp7Kd"
DISGUISES = {
    "json \\u003d": "password\\u003d{v}",
    "json \\u003D and escaped quotes": '"DB_PASSWORD\\u003D\\u0022{v}\\u0022"',
    "json \\u003a": '{{"msg": "token\\u003a {v}"}}',
    "python \\x3d": "b'api_key\\x3d{v}'",
    "octal \\075": "$'secret\\075{v}'",
    "html &#61;": "<td>password&#61;{v}</td>",
    "html &#x3D;": "<td>client_secret&#x3D;{v}</td>",
    "html &equals;": "password&equals;{v}",
    "html &quot; around the value": "password=&quot;{v}&quot;",
    "zero-width space": "pass\u200bword={v}",
    "zero-width joiner": "pass\u200dword: {v}",
    "zero-width non-joiner": "to\u200cken={v}",
    "word joiner": "api\u2060_key={v}",
    "soft hyphen": "pass\u00adword={v}",
    "byte order mark": "secret\ufeff={v}",
    "bidi override": "pass\u202eword={v}",
    "tag character": "pass\U000e0041word={v}",
    "combining mark": "pas\u0301sword={v}",
    "Cyrillic a": "p\u0430ssword={v}",
    "Cyrillic o and e": "t\u043ek\u0435n={v}",
    "Greek omicron": "t\u03bfken={v}",
    "full-width": "\uff30\uff21\uff33\uff33\uff37\uff2f\uff32\uff24={v}",
    "full-width equals": "password\uff1d{v}",
    "small equals": "password\ufe66{v}",
    "mathematical bold": "".join(chr(0x1D41A + ord(c) - ord("a")) for c in "password") + "={v}",
    "small capitals": "\u1d18\u1d00\ua731\ua731\u1d21\u1d0f\u0280\u1d05={v}",
    "superscript letters": "api_\u1d4f\u1d49\u02b8={v}",
    "Kelvin sign": "API_\u212aEY={v}",
    "colour inside the name": "pass\x1b[0mword={v}",
    "OSC 8 link around the name": "\x1b]8;;https://x\x1b\\password\x1b]8;;\x1b\\={v}",
    "NUL inside the name": "pass\x00word={v}",
    "DEL inside the name": "pass\x7fword={v}",
}


@pytest.mark.parametrize("template", DISGUISES.values(), ids=list(DISGUISES))
@pytest.mark.parametrize("sink", ["record", "terminal"])
def test_a_disguised_name_or_separator_hides_no_secret(template: str, sink: str) -> None:
    """The value goes, whatever escapes or hides the name and its ``=`` around it."""
    text = f"E   RuntimeError: login failed: {template.format(v=VALUE)} (retrying)"
    out = BARE.redact(text).text if sink == "record" else outbound(text, "terminal")
    assert VALUE not in out, out
    assert "[REDACTED:" in out


def test_the_rest_of_the_line_keeps_its_own_form() -> None:
    """Only the secret is replaced: bidi controls, colours and escapes around it stay."""
    text = "rename \u202egnp.exe\u202c \x1b[31mred\x1b[0m a\\u0022b pass\u200bword=" + VALUE
    out = BARE.redact(text).text
    assert out == text.replace(VALUE, "[REDACTED:secret_assignment]")


LOOKALIKES = [
    '{"msg": "a\\u003db", "path": "C:\\\\Users\\\\x3d"}',
    "<p>&quot;hello&quot; &amp; goodbye &#61; fine</p>",
    "Привет мир, пароль: ok",
    "\uff28\uff45\uff4c\uff4c\uff4f world",
    "HOME=/root\x00PATH=/usr/bin\x00LANG=C.UTF-8\x00",
    "\x1b[32mPASSED\x1b[0m tests/test_login.py::test_password_reset",
    "caf\u0065\u0301 na\u00efve \u200bzero-width in prose",
    "\x1b]8;;https://example.com/token-docs\x1b\\docs\x1b]8;;\x1b\\",
]


@pytest.mark.parametrize("text", LOOKALIKES)
def test_disguises_without_a_secret_are_left_alone(text: str) -> None:
    """Escapes, other scripts, NUL-separated environments and links with no secret stay."""
    result = BARE.redact(text)
    assert result.text == text
    assert result.counts == {}


def test_a_nul_between_two_values_separates_them() -> None:
    """``/proc/PID/environ``: each NUL-separated value is judged alone, and both go."""
    first, second = "st_Rq7vT2mXw9LpK4sN8bYc", "Dq5Wz2Lm8Vx3"
    out = BARE.redact(f"SECRET_TOKEN={first}\x00DB_PASS={second}\x00HOME=/root\n").text
    assert first not in out
    assert second not in out
    assert "HOME=/root" in out


_ARGVS = [
    ["mysql", "-u", "root", f"-p{VALUE}", "app"],
    ["sshpass", "-p", VALUE, "ssh", "deploy@host"],
    ["docker", "login", "-u", "ci", "--password", VALUE, "ghcr.io"],
    ["redis-cli", "-a", VALUE, "ping"],
    ["deploy", "--api-token", VALUE],
]


@pytest.mark.parametrize("argv", _ARGVS, ids=lambda argv: argv[0])
def test_a_commands_argv_printed_as_a_list_is_read_as_its_command_line(argv: list[str]) -> None:
    """Argv printed as a list of quoted words reads as the command line it was.

    ``CalledProcessError`` (of a real failing process), pprint, JSON, strace and Go's ``%q``.
    """
    script = "import sys; sys.exit(3)"
    with pytest.raises(subprocess.CalledProcessError) as raised:
        subprocess.run([sys.executable, "-c", script, *argv], check=True)
    printed = [
        str(raised.value),
        f"Command '{argv!r}' returned non-zero exit status 3.",
        pprint.pformat(argv, width=20),
        json.dumps({"args": argv}),
        f'execve("/usr/bin/{argv[0]}", {json.dumps(argv)}, 0x7ffd /* 20 vars */) = 0',
        "exec: [" + " ".join(json.dumps(word) for word in argv) + "]",  # Go's %q
    ]
    for text in printed:
        out = BARE.redact(text).text
        assert VALUE not in out, out
        assert out.count("[REDACTED:") == 1, out
        assert argv[0] in out, out


def test_a_list_of_words_without_a_flag_keeps_its_pairs() -> None:
    """Only a list holding a flag is a command: ``("deploy", "...")`` stays a pair of literals."""
    assert BARE.redact(f'smtp.login("ci@example.com", "{VALUE}")').text.count(VALUE) == 0
    for kept in ("['-v', 'tests/test_x.py', '-k', 'test_login']", "['ls', '-la', '/tmp']"):
        assert BARE.redact(kept).text == kept
