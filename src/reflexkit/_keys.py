"""The key that signs what reflexkit writes where an agent can write too (lessons, verdicts).

A line or a file reflexkit writes inside a project carries an HMAC-SHA256 (``mac``) made
with a 32-byte key kept outside the project (``$REFLEXKIT_STATE_DIR/lessons.key``, else
``$XDG_STATE_HOME/reflexkit/lessons.key``, else ``~/.local/state/reflexkit/lessons.key``;
mode 0600, made on first use). What an agent wrote or edited has no valid ``mac`` and is
not trusted. A leaf: the hooks import it without the insights package.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

import orjson

from reflexkit.exceptions import StoreError

__all__ = ["lessons_key", "signed", "verified"]


_KEY_BYTES = 32


def _key_path() -> Path:
    """Where the lessons key lives: outside any project an agent works in.

    ``$REFLEXKIT_STATE_DIR``, else ``$XDG_STATE_HOME/reflexkit``, else
    ``~/.local/state/reflexkit``.
    """
    given = os.environ.get("REFLEXKIT_STATE_DIR")
    if given:
        return Path(given) / "lessons.key"
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "reflexkit" / "lessons.key"


def lessons_key(path: Path | None = None) -> bytes:
    """The key that signs lesson lines; made (32 random bytes, mode 0600) on first use.

    Raises:
        StoreError: The key can't be read or made.
    """
    path = path or _key_path()
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
    try:
        try:
            fd = os.open(path, flags)
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            key = secrets.token_bytes(_KEY_BYTES)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            except FileExistsError:  # another process made it first: read theirs
                return lessons_key(path)
            with os.fdopen(fd, "wb") as out:
                out.write(key)
            return key
        with os.fdopen(fd, "rb") as source:
            key = source.read(_KEY_BYTES + 1)
    except OSError as err:
        msg = f"{path}: cannot read or make the lessons key: {err.strerror or err}"
        raise StoreError(msg) from err
    if len(key) != _KEY_BYTES:
        msg = f"{path}: not a lessons key ({len(key)} bytes, expected {_KEY_BYTES})"
        raise StoreError(msg)
    return key


def _mac(key: bytes, data: dict[str, object]) -> str:
    body = orjson.dumps({k: v for k, v in data.items() if k != "mac"}, option=orjson.OPT_SORT_KEYS)
    return hmac.new(key, body, hashlib.sha256).hexdigest()


def signed(data: dict[str, object], key: bytes) -> dict[str, object]:
    """*data* with its signature (``mac``), as lesson lines and verdict files are written."""
    return {**data, "mac": _mac(key, data)}


def verified(data: object, key: bytes) -> bool:
    """*data* is a JSON object whose ``mac`` signs the rest of it with *key*."""
    if not isinstance(data, dict) or not isinstance(data.get("mac"), str):
        return False
    return hmac.compare_digest(data["mac"], _mac(key, data))
