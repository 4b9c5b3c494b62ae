"""Regular expressions compiled on first use and typed as what they are.

The readers, the text helpers and the redaction engine hold some 370 module-level
patterns; compiling them all at import costs more than a command uses (a reflection needs
a few dozen, a text without a secret's trigger none of the engine's). A leaf: it imports
nothing of ours. :class:`Pattern` is
``re.compile`` deferred to the first search: its methods are ``re.Pattern``'s, with the
same signatures, so mypy checks every use, and nothing pretends to be an ``re.Pattern``
it is not (pass :attr:`Pattern.compiled` where one is needed).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["Pattern"]

_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "split")


class Pattern:
    """A pattern compiled the first time it is used.

    Args:
        pattern: The regular expression.
        flags: ``re`` flags.
    """

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern (compiled now, on first use)."""
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self.pattern, self.flags)
            # later calls go straight to the compiled pattern's methods: an instance
            # attribute hides the method of the class, so they cost what re's do
            for name in _METHODS:
                setattr(self, name, getattr(compiled, name))
        return compiled

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        """``re.Pattern.search``."""
        return self.compiled.search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        """``re.Pattern.match``."""
        return self.compiled.match(string, pos, endpos)

    def fullmatch(
        self, string: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> re.Match[str] | None:
        """``re.Pattern.fullmatch``."""
        return self.compiled.fullmatch(string, pos, endpos)

    def finditer(
        self, string: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> Iterator[re.Match[str]]:
        """``re.Pattern.finditer``."""
        return self.compiled.finditer(string, pos, endpos)

    def findall(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        """``re.Pattern.findall``."""
        return self.compiled.findall(string, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        """``re.Pattern.sub``."""
        return self.compiled.sub(repl, string, count)

    def split(self, string: str, maxsplit: int = 0) -> list[str | Any]:
        """``re.Pattern.split``."""
        return self.compiled.split(string, maxsplit)

    def __repr__(self) -> str:
        return f"Pattern({self.pattern!r}, {self.flags!r})"
