"""Register reflexkit's hooks in Claude Code's settings, idempotently.

:func:`install_hooks` merges our entries into the file's ``hooks`` object, keeping everything
else and replacing an entry of ours; a file meant to be committed names no path of this
machine (:func:`portable`). docs/hooks.md describes the files.
"""

from __future__ import annotations

import json
import re
import secrets
import shlex
import sys
from pathlib import Path
from typing import Any

from reflexkit._files import atomic_write, read_regular
from reflexkit.exceptions import ConfigError

__all__ = ["HOOK_EVENTS", "PORTABLE", "hook_command", "install_hooks", "merge_hooks", "portable"]

HOOK_EVENTS: tuple[tuple[str, str | None, str, int], ...] = (
    ("SessionStart", None, "session-start", 30),
    ("PostToolUse", "Bash", "post-tool-use", 60),
    ("PostToolUseFailure", "Bash", "post-tool-use", 60),
    ("Stop", None, "stop", 120),
)
"""Per Claude Code event: the matcher (``None`` for events without tools), our hook, timeout."""

_OURS = re.compile(r"(?:^| -m )reflexkit(?:\.hooks | hook )")  # python -m ..., or the CLI's

PORTABLE = "reflexkit"
"""What a shared settings file runs: the ``reflexkit`` command on each machine's ``PATH``."""


def portable(path: Path) -> bool:
    """Whether the settings file at *path* is meant to be shared (committed with a project).

    Only a ``*.local.json`` file (Claude Code's own per-machine settings) and the user's
    ``~/.claude/settings.json`` belong to one machine.
    """
    if path.name.endswith(".local.json"):
        return False
    home = Path.home() / ".claude"
    return path.absolute().parent != home


def hook_command(hook: str, *, python: str | None = None) -> str:
    """Return the command line Claude Code runs for one of our hooks.

    By default the interpreter is named by its absolute path, so the hook runs with the
    reflexkit that installed it whatever ``PATH`` Claude Code has; ``-m reflexkit.hooks``
    starts faster than the full command line, which matters for a hook run on every Bash
    call. With *python* :data:`PORTABLE` the command is ``reflexkit hook NAME``: no path of
    this machine, for a settings file that is committed.
    """
    if python == PORTABLE:
        return f"{PORTABLE} hook {hook}"
    return f"{shlex.quote(python or sys.executable)} -m reflexkit.hooks {hook}"


def _ours(entry: object) -> bool:
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("command"), str)
        and _OURS.search(entry["command"]) is not None
    )


def merge_hooks(settings: dict[str, Any], *, python: str | None = None) -> dict[str, Any]:
    """Return *settings* with reflexkit's hooks registered; pure, the input is not changed.

    Raises:
        ConfigError: ``hooks`` or one of its events is not the shape Claude Code reads.
    """
    merged = dict(settings)
    hooks = merged.get("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError(["settings.json: $.hooks: expected an object"])
    hooks = dict(hooks)
    for event, matcher, hook, timeout in HOOK_EVENTS:
        groups = hooks.get(event, [])
        if not isinstance(groups, list):
            raise ConfigError([f"settings.json: $.hooks.{event}: expected a list"])
        kept = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                rest = [h for h in group["hooks"] if not _ours(h)]
                if not rest:
                    continue
                group = {**group, "hooks": rest}  # noqa: PLW2901 -- a copy, not the input
            kept.append(group)
        ours: dict[str, Any] = {
            "hooks": [
                {
                    "type": "command",
                    "command": hook_command(hook, python=python),
                    "timeout": timeout,
                }
            ]
        }
        if matcher is not None:
            ours = {"matcher": matcher, **ours}
        hooks[event] = [*kept, ours]
    merged["hooks"] = hooks
    return merged


_MAX_SETTINGS = 4 << 20  # a settings file is a few KiB; more is not one


class _Number:
    """A JSON number as it was written: ``1e400`` and 2**70 come back as they were."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _Number):
            return other.text == self.text
        if isinstance(other, int) and not isinstance(other, bool):
            return self.text.lstrip("-").isdigit() and int(self.text) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return self.text


def _refuse_constant(name: str) -> Any:  # noqa: ANN401 -- json's parse_constant hook
    msg = f"{name} is not JSON"
    raise ValueError(msg)


def load_settings(raw: bytes) -> Any:  # noqa: ANN401 -- any JSON value
    """Parse a settings file, keeping every number as written.

    Raises:
        ValueError: *raw* is not JSON (``NaN`` and ``Infinity`` are not either).
    """
    return json.loads(raw, parse_int=_Number, parse_float=_Number, parse_constant=_refuse_constant)


def dump_settings(settings: object) -> bytes:
    """Write settings back (two-space indent), each number as it was read."""
    nonce = secrets.token_hex(8)
    numbers: list[str] = []

    def swap(value: object) -> object:
        if isinstance(value, _Number):
            numbers.append(value.text)
            return f"\0{nonce}:{len(numbers) - 1}"
        if isinstance(value, dict):
            return {key: swap(item) for key, item in value.items()}
        if isinstance(value, list):
            return [swap(item) for item in value]
        return value

    text = json.dumps(swap(settings), indent=2, ensure_ascii=False)
    marker = re.compile(r'"\\u0000' + nonce + r':(\d+)"')
    return (marker.sub(lambda m: numbers[int(m[1])], text) + "\n").encode()


def install_hooks(path: Path, *, python: str | None = None) -> bool:
    """Merge reflexkit's hooks into the settings file at *path*, creating it if needed.

    The file is read by the safe reader (a regular file, no link, bounded) and written back
    whole, every other key and every number exactly as it was. A file meant to be shared
    (:func:`portable`) gets the portable commands, whatever *python* says.

    Returns:
        ``True`` when the file changed, ``False`` when everything was already registered.

    Raises:
        ConfigError: The file is not a JSON object, its ``hooks`` is malformed, or it is
            not a regular file of a sane size (a FIFO, a link, a device); it is left
            untouched.
    """
    try:
        raw = read_regular(path, limit=_MAX_SETTINGS)
    except FileNotFoundError:
        raw = b""
    except OSError as err:
        raise ConfigError([f"{path}: {err.strerror or err}; not changed"]) from None
    settings: Any = {}
    if raw.strip():
        try:
            settings = load_settings(raw)
        except ValueError as err:
            raise ConfigError([f"{path}: invalid JSON ({err}); not changed"]) from None
    if not isinstance(settings, dict):
        raise ConfigError([f"{path}: $: expected an object; not changed"])
    merged = merge_hooks(settings, python=PORTABLE if portable(path) else python)
    if merged == settings:
        return False
    atomic_write(path, dump_settings(merged))
    return True
