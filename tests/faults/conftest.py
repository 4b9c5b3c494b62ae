"""Fixtures of the fault tests: small file systems of our own, filled up or made read-only."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


class Disks:
    """Small tmpfs mounts of one test: mount one at a folder, fill it, make it read-only."""

    def __init__(self) -> None:
        self.mounted: list[Path] = []

    def mount(self, where: Path, *, size: str = "64k") -> Path:
        """Mount a tmpfs of *size* at *where* (created); skip the test without root."""
        where.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(where)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            pytest.skip(f"can't mount a tmpfs here (needs root): {done.stderr.strip()}")
        self.mounted.append(where)
        return where

    @staticmethod
    def fill(where: Path, *, leave: int = 0) -> None:
        """Fill the file system of *where* up to *leave* free bytes."""
        st = os.statvfs(where)
        with (where / ".filler").open("ab") as stream:
            stream.write(b"\0" * max(0, st.f_bavail * st.f_frsize - leave))

    @staticmethod
    def read_only(where: Path) -> None:
        """Remount the tmpfs at *where* read-only: writes fail with EROFS, even for root."""
        subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True, capture_output=True)


@pytest.fixture
def disks() -> Iterator[Disks]:
    """Mounts for the test, unmounted after it."""
    made = Disks()
    yield made
    for where in reversed(made.mounted):
        subprocess.run(["umount", "-l", str(where)], check=False)
