"""Import laziness: lazy re-exports, and skipping integrations our own processes never use.

A package lists its public names and where each lives, once; a name is imported on first
use. So ``import reflexkit.orchestrator._process`` (which runs the package's
``__init__``) does not pay for the loop, and ``from reflexkit.orchestrator import
Orchestrator`` still works.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from types import ModuleType
from typing import Any

__all__ = ["lazy_exports", "own_process", "without_integrations"]


def _exported_order(name: str) -> tuple[int, str]:
    """``__all__``'s order: constants, then classes, then the rest (ruff's RUF022)."""
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


def lazy_exports(
    package: str, where: Mapping[str, Iterable[str]], *, loaded: Iterable[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """Return a module ``__getattr__``, ``__dir__`` and ``__all__`` for *package*.

    The table is the one list of a package's public names: ``__all__`` comes from it, and
    the package's ``TYPE_CHECKING`` imports (``import X as X``, a re-export for type
    checkers and IDEs) name the same, from the same modules (``tests/test_lazy.py`` checks).

    Args:
        package: The package's ``__name__``.
        where: Each submodule (relative to *package*) and the public names it defines.
        loaded: Public names the package imports itself (``__version__``).
    """
    owner = {name: module for module, names in where.items() for name in names}

    def __getattr__(name: str) -> Any:  # noqa: ANN401, N807 -- whatever the submodule holds
        module = owner.get(name)
        if module is None:
            msg = f"module {package!r} has no attribute {name!r}"
            raise AttributeError(msg)
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        vars(importlib.import_module(package))[name] = value  # the next lookup is direct
        return value

    def __dir__() -> list[str]:  # noqa: N807
        return sorted({*vars(importlib.import_module(package)), *owner})

    return __getattr__, __dir__, sorted({*owner, *loaded}, key=_exported_order)


_own_process = False


def own_process() -> None:
    """Say that this process is reflexkit's own command (``reflexkit``, the hooks entry point).

    Only then does :func:`without_integrations` skip anything: a program that imports
    reflexkit as a library keeps every integration of the libraries it shares with us.
    """
    global _own_process  # noqa: PLW0603 -- one switch per process, set by the entry points
    _own_process = True


class _Absent:
    """A ``sys.meta_path`` finder that reports the top-level packages *names* as absent.

    Only to the thread that installed it: another thread (the SDK's import started in the
    background, :func:`reflexkit.llm._client.preload`) imports them as installed.
    """

    def __init__(self, names: frozenset[str]) -> None:
        self.names = names
        self.thread = threading.get_ident()

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,  # noqa: ARG002 -- the finder protocol's
        target: ModuleType | None = None,  # noqa: ARG002
    ) -> None:
        if fullname.partition(".")[0] in self.names and threading.get_ident() == self.thread:
            msg = f"{fullname} is skipped"
            raise ModuleNotFoundError(msg, name=fullname)


@contextlib.contextmanager
def without_integrations(*names: str) -> Iterator[None]:
    """In reflexkit's own process, import as if the packages *names* were not installed.

    dependency-injector probes at import for pydantic and for web frameworks (starlette,
    FastAPI, Flask) to support them in wiring; the ``anthropic`` and ``mcp`` dependencies
    install some of them, and importing them cost the command more than the rest of its
    start-up. The containers use none of it. Packages imported already stay as they are, and
    outside :func:`own_process` this does nothing.
    """
    skipped = frozenset(n for n in names if n not in sys.modules)
    if not _own_process or not skipped:
        yield
        return
    finder = _Absent(skipped)
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
