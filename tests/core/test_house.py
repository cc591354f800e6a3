"""The shape of the code, held: classes a reader can hold in their head, shallow
inheritance, and a backend contract (lance_ns.catalog.store) equal to what the
backends really implement."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
from lance_namespace import LanceNamespace

from lance_ns.base import NamespaceBase
from lance_ns.catalog import CatalogNamespace
from lance_ns.catalog.store import CONTRACT, PRIMITIVES
from lance_ns.config import load_class
from lance_ns.impls import IMPLS

SRC = Path(__file__).resolve().parents[2] / "src"
MAX_CLASS_LINES = 500
MAX_BACKEND_LINES = 1200  # the backend class with the project classes it inherits from
MAX_PROJECT_BASES = 3


def _project_classes(cls: type) -> list[type]:
    return [c for c in cls.__mro__ if c.__module__.split(".")[0] == "lance_ns"]


def _backends() -> dict[str, type]:
    return {name: load_class(name) for name in sorted(IMPLS)}


def test_no_class_is_over_500_lines():
    big = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > MAX_CLASS_LINES:
                big.append(f"{path.relative_to(SRC)}:{node.name} ({node.end_lineno - node.lineno + 1} lines)")
    assert not big, big


@pytest.mark.parametrize("impl", sorted(IMPLS))
def test_a_backend_object_is_small_and_shallow(impl):
    cls = load_class(impl)
    project = _project_classes(cls)
    assert len(project) - 1 <= MAX_PROJECT_BASES, [c.__name__ for c in project]
    lines = sum(len(inspect.getsource(c).splitlines()) for c in project)
    assert lines <= MAX_BACKEND_LINES, f"{cls.__name__}: {lines} lines with {[c.__name__ for c in project[1:]]}"


def _overridden(cls: type) -> set[str]:
    """What a backend class (and its own project bases) defines over CatalogNamespace's names."""
    shared = set(dir(CatalogNamespace))
    names: set[str] = set()
    for c in cls.__mro__:
        if c in (CatalogNamespace, NamespaceBase, LanceNamespace) or c.__module__.split(".")[0] != "lance_ns":
            continue
        names |= {n for n in vars(c) if n in shared and not n.startswith("__") and n != "_abc_impl"}
    return names


def test_every_catalog_backend_keeps_to_the_contract():
    catalogs = {n: c for n, c in _backends().items() if issubclass(c, CatalogNamespace)}
    assert len(catalogs) >= 7
    used: set[str] = set()
    for name, cls in catalogs.items():
        missing = [p for p in PRIMITIVES if not callable(getattr(cls, p, None))]
        assert not missing, f"{name} lacks primitives {missing}"
        beyond = _overridden(cls) - set(CONTRACT) - set(PRIMITIVES)
        assert not beyond, f"{name} overrides {sorted(beyond)}, which lance_ns.catalog.store does not list"
        used |= _overridden(cls)
    unused = set(CONTRACT) - used
    assert not unused, f"the contract lists {sorted(unused)}, which no backend overrides"
    assert not set(PRIMITIVES) & set(vars(CatalogNamespace)), "primitives have no default"
