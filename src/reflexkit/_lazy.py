"""Lazy re-exports for package ``__init__`` modules (PEP 562).

A package lists its public names in ``__all__`` and where each lives; a name is imported on
first use. So ``import reflexkit.orchestrator._process`` (which runs the package's
``__init__``) does not pay for the loop, and ``from reflexkit.orchestrator import
Orchestrator`` still works.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, where: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Return a module ``__getattr__`` and ``__dir__`` for *package*.

    Args:
        package: The package's ``__name__``.
        where: Each public name and the submodule (relative to *package*) that defines it.
    """

    def __getattr__(name: str) -> Any:  # noqa: ANN401, N807 -- whatever the submodule holds
        module = where.get(name)
        if module is None:
            msg = f"module {package!r} has no attribute {name!r}"
            raise AttributeError(msg)
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        vars(importlib.import_module(package))[name] = value  # the next lookup is direct
        return value

    def __dir__() -> list[str]:  # noqa: N807
        return sorted({*vars(importlib.import_module(package)), *where})

    return __getattr__, __dir__
