"""Regular expressions compiled on first use, so importing a module full of them is cheap.

The readers and the redaction table hold some 400 module-level patterns; compiling them
all cost more than half of ``reflexkit reflect``'s start-up, though one reflection uses a
few dozen (#19). :func:`lazy_regex` is ``re.compile`` deferred: the object it returns
compiles its pattern the first time a method or attribute other than ``pattern`` is used,
then hands out the compiled pattern's own methods (kept on the object, so later calls cost
what a compiled pattern's do).

What it returns is not an ``re.Pattern`` instance: use its methods (``PATTERN.search(s)``),
never ``re.search(PATTERN, s)`` or ``isinstance(x, re.Pattern)``.
"""

from __future__ import annotations

import re
from typing import Any, cast

__all__ = ["lazy_regex"]


class _LazyPattern:
    """A pattern that compiles itself on first use (see the module documentation)."""

    def __init__(self, pattern: str, flags: int) -> None:
        self.pattern = pattern
        self._flags = flags

    def __getattr__(self, name: str) -> Any:  # noqa: ANN401 -- whatever the pattern has
        if name.startswith("__"):  # copy, pickle and friends ask for optional dunders
            raise AttributeError(name)
        compiled = self.__dict__.get("_compiled")
        if compiled is None:
            compiled = self.__dict__["_compiled"] = re.compile(self.pattern, self._flags)
        value = getattr(compiled, name)
        self.__dict__[name] = value  # the next use is a plain attribute lookup
        return value

    def __repr__(self) -> str:
        return f"lazy_regex({self.pattern!r}, {self._flags!r})"


def lazy_regex(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """Return *pattern* compiled with *flags* on first use: ``re.compile``, deferred.

    A pattern that doesn't compile raises ``re.error`` at its first use, not at import; the
    tests of each module use its patterns.
    """
    return cast("re.Pattern[str]", _LazyPattern(pattern, flags))
