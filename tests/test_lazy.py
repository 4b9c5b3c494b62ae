"""The lazy exports: each package lists its public names once, and type checkers see the same.

A package's table (``lazy_exports``) is where its names live at run time and its ``__all__``;
its ``TYPE_CHECKING`` block re-exports the same names from the same modules (``X as X``) for
mypy and IDEs. A name added to one and not the other fails here. Skipped integrations are
absent only to the thread that skips them.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import reflexkit

SRC = Path(reflexkit.__file__).parent
PACKAGES = sorted(
    ".".join(("reflexkit", *path.parent.relative_to(SRC).parts))
    for path in SRC.rglob("__init__.py")
    if "lazy_exports(" in path.read_text("utf-8")
)


def _source(package: str) -> ast.Module:
    return ast.parse(Path(str(importlib.import_module(package).__file__)).read_text("utf-8"))


def _table(package: str) -> dict[str, str]:
    """Each name of the package's ``lazy_exports`` table, and the module it names."""
    call = next(
        node
        for node in ast.walk(_source(package))
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "lazy_exports"
    )
    where = ast.literal_eval(call.args[1])
    return {name: f"{package}.{module}" for module, names in where.items() for name in names}


def _type_checking_imports(package: str) -> dict[str, str]:
    """Each name the package's ``TYPE_CHECKING`` block imports, and the module it names."""
    tree = _source(package)
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for imported in node.body:
                assert isinstance(imported, ast.ImportFrom), ast.unparse(imported)
                for alias in imported.names:
                    assert alias.asname == alias.name, f"{alias.name}: import it as itself"
                    found[alias.name] = str(imported.module)
    return found


def test_every_lazy_package_is_found() -> None:
    """The scan sees the packages that export lazily (the root among them)."""
    assert {"reflexkit", "reflexkit.orchestrator", "reflexkit.tasks"} <= set(PACKAGES)


@pytest.mark.parametrize("package", PACKAGES)
def test_type_checkers_see_the_lazy_names(package: str) -> None:
    """The ``TYPE_CHECKING`` imports are the table: the same names from the same modules."""
    assert _type_checking_imports(package) == _table(package)


@pytest.mark.parametrize("package", PACKAGES)
def test_all_is_the_table_and_every_name_resolves(package: str) -> None:
    """``__all__`` holds the table's names once each, every one resolves, ``dir()`` lists them."""
    module = importlib.import_module(package)
    assert len(set(module.__all__)) == len(module.__all__)
    assert set(_table(package)) <= set(module.__all__)
    for name in module.__all__:
        assert getattr(module, name) is not None
    assert set(module.__all__) <= set(dir(module))


_CODE = """
import threading
from reflexkit import _lazy

_lazy.own_process()
seen = {}

def other_thread():
    import csv  # the SDK's import runs like this, beside the containers' (llm.preload)
    seen["other"] = csv.__name__

with _lazy.without_integrations("csv"):
    try:
        import csv
    except ModuleNotFoundError:
        seen["own"] = "absent"
    worker = threading.Thread(target=other_thread)
    worker.start()
    worker.join()
print(seen["own"], seen.get("other"))
"""


def test_a_skipped_package_is_absent_only_to_the_thread_that_skips_it() -> None:
    """Another thread importing the same package meanwhile gets it, not an ImportError."""
    done = subprocess.run(
        [sys.executable, "-c", _CODE], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split() == ["absent", "csv"]
