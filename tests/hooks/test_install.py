"""`reflexkit hook install`: merged into Claude Code's settings, idempotent, never clobbering.

By default into .claude/settings.local.json (this machine's); --shared into the committed
.claude/settings.json, which never gets a path of this machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reflexkit.exceptions import ConfigError
from reflexkit.hooks._settings import PORTABLE, hook_command, merge_hooks

from ..conftest import invoke_cli  # noqa: TID252 -- tests/ is no package; importlib mode resolves it

EXISTING = {
    "permissions": {"allow": ["Bash(npm run lint)"]},
    "hooks": {
        "PostToolUse": [
            {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "prettier -w"}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
}


def install(cwd: Path, *args: str, process: bool = False) -> subprocess.CompletedProcess[str]:
    """`reflexkit hook install` in *cwd*: in this process, or with *process* a real one.

    A real process for a settings file that could hang or fill memory (the time limit
    ends it); what the command writes and prints is the same in this process, quicker.
    """
    if process:
        return subprocess.run(
            [sys.executable, "-m", "reflexkit", "hook", "install", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    done = invoke_cli(cwd, "hook", "install", *args)
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


def commands(settings: dict[str, object], event: str) -> list[str]:
    """Every command registered for one event."""
    groups = settings["hooks"][event]  # type: ignore[index]
    return [h["command"] for g in groups for h in g["hooks"]]  # type: ignore[union-attr]


def test_install_merges_and_is_idempotent(tmp_path: Path) -> None:
    """Other settings and hooks are kept; a second install changes nothing."""
    path = tmp_path / ".claude" / "settings.local.json"
    path.parent.mkdir()
    path.write_text(json.dumps(EXISTING))
    first = install(tmp_path)
    assert first.returncode == 0, first.stderr
    assert "registered the hooks" in first.stdout
    settings = json.loads(path.read_text())
    assert settings["permissions"] == EXISTING["permissions"]
    assert commands(settings, "PostToolUse") == ["prettier -w", hook_command("post-tool-use")]
    assert commands(settings, "Stop") == ["notify-send done", hook_command("stop")]
    assert commands(settings, "SessionStart") == [hook_command("session-start")]
    assert commands(settings, "PostToolUseFailure") == [hook_command("post-tool-use")]
    bash = [g for g in settings["hooks"]["PostToolUse"] if g.get("matcher") == "Bash"]
    assert bash[0]["hooks"][0]["timeout"] == 60
    text = path.read_text()
    second = install(tmp_path)
    assert second.returncode == 0
    assert "already registered" in second.stdout
    assert path.read_text() == text


def test_install_creates_the_local_file_and_offers_the_shared_one(tmp_path: Path) -> None:
    """With no settings file, the local one is made with the four hooks; nothing is shared."""
    done = install(tmp_path)
    assert done.returncode == 0, done.stderr
    settings = json.loads((tmp_path / ".claude" / "settings.local.json").read_text())
    assert set(settings["hooks"]) == {"SessionStart", "PostToolUse", "PostToolUseFailure", "Stop"}
    assert not (tmp_path / ".claude" / "settings.json").exists()
    assert "reflexkit hook install --shared" in done.stdout


@pytest.mark.parametrize("how", [["--shared"], ["--settings", ".claude/settings.json"]])
def test_a_committed_settings_file_gets_no_path_of_this_machine(
    tmp_path: Path, how: list[str]
) -> None:
    """The shared file runs `reflexkit hook ...`: no interpreter path, no home folder."""
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(EXISTING))
    done = install(tmp_path, *how)
    assert done.returncode == 0, done.stderr
    text = path.read_text()
    assert sys.executable not in text
    assert str(Path.home()) not in text
    assert sys.prefix not in text
    settings = json.loads(text)
    assert commands(settings, "Stop") == ["notify-send done", "reflexkit hook stop"]
    assert commands(settings, "SessionStart") == [hook_command("session-start", python=PORTABLE)]
    assert "PATH" in done.stdout
    again = install(tmp_path, *how)
    assert "already registered" in again.stdout
    assert path.read_text() == text


def test_shared_replaces_a_machine_path_written_before(tmp_path: Path) -> None:
    """A settings.json that an older install filled with this machine's path is fixed."""
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(merge_hooks({}, python="/home/me/.venv/bin/python")))
    assert install(tmp_path, "--shared").returncode == 0
    assert "/home/me" not in path.read_text()
    assert install(tmp_path, "--shared", "--settings", str(path)).returncode == 2


@pytest.mark.parametrize("text", ["{not json", "[]", '{"hooks": []}', '{"hooks": {"Stop": {}}}'])
def test_bad_settings_are_left_untouched(tmp_path: Path, text: str) -> None:
    """A settings file we can't read as Claude Code does is reported and not rewritten."""
    path = tmp_path / "settings.json"
    path.write_text(text)
    done = install(tmp_path, "--settings", str(path))
    assert done.returncode == 2
    assert done.stderr.startswith("reflexkit: ")
    assert path.read_text() == text


def test_merge_replaces_an_older_reflexkit_entry() -> None:
    """An entry from another interpreter path is replaced, not duplicated."""
    old = merge_hooks({}, python="/old/venv/bin/python")
    new = merge_hooks(old, python="/new/venv/bin/python")
    assert commands(new, "Stop") == [hook_command("stop", python="/new/venv/bin/python")]


def test_merge_replaces_an_entry_of_the_full_cli() -> None:
    """An entry written as `python -m reflexkit hook stop` is ours too, and replaced."""
    old = {
        "hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "py -m reflexkit hook stop"}]}]
        }
    }
    assert commands(merge_hooks(old), "Stop") == [hook_command("stop")]


def test_merge_rejects_a_bad_shape() -> None:
    """The hooks key must be an object of lists."""
    with pytest.raises(ConfigError, match=r"\$\.hooks"):
        merge_hooks({"hooks": "yes"})


def test_install_keeps_every_number_as_written(tmp_path: Path) -> None:
    """Integers beyond 64 bits, exponents and 1.0 come back byte for byte, not as floats."""
    settings = tmp_path / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(
        '{"big": 123456789012345678901234567890, "exp": 1e400, "one": 1.0, "neg": -0,'
        ' "nested": {"x": [1E5, 18446744073709551617]}}'
    )
    done = install(tmp_path)
    assert done.returncode == 0, done.stderr
    text = settings.read_text()
    for number in ("123456789012345678901234567890", "1e400", "1.0", "-0", "1E5"):
        assert f": {number}" in text or f"{number}," in text or f"{number}\n" in text
    assert "18446744073709551617" in text
    assert "inf" not in text.lower()
    assert install(tmp_path).returncode == 0
    assert settings.read_text() == text  # a second install changes nothing


@pytest.mark.parametrize("planted", ["fifo", "dev-zero-link", "folder"])
def test_install_refuses_settings_that_are_no_file(tmp_path: Path, planted: str) -> None:
    """A FIFO, a committed link to /dev/zero or a folder: a clear error at once, untouched."""
    settings = tmp_path / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    if planted == "fifo":
        os.mkfifo(settings)
    elif planted == "folder":
        settings.mkdir()
    else:
        settings.symlink_to("/dev/zero")
    done = install(tmp_path, process=True)  # 60 s limit: a FIFO hangs, /dev/zero fills memory
    assert done.returncode != 0
    assert "settings.local.json" in done.stderr
    assert "Traceback" not in done.stderr
    assert settings.is_symlink() == (planted == "dev-zero-link")
