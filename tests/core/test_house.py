"""The shape of the code, held: shallow inheritance, and a backend contract
(lance_ns.catalog.store) equal to what the backends really implement.

(No cap on a class's lines: a long class that reads well beats a short one that
reaches into its neighbour, and a cap only taught the code to pack statements.)"""

from __future__ import annotations


import pytest
from lance_namespace import LanceNamespace

from lance_ns.base import NamespaceBase
from lance_ns.catalog import CatalogNamespace
from lance_ns.catalog.store import CONTRACT, PRIMITIVES
from lance_ns.config import load_class
from lance_ns.impls import IMPLS

MAX_PROJECT_BASES = 3


def _project_classes(cls: type) -> list[type]:
    return [c for c in cls.__mro__ if c.__module__.split(".")[0] == "lance_ns"]


def _backends() -> dict[str, type]:
    return {name: load_class(name) for name in sorted(IMPLS)}


@pytest.mark.parametrize("impl", sorted(IMPLS))
def test_a_backend_object_is_shallow(impl):
    cls = load_class(impl)
    project = _project_classes(cls)
    assert len(project) - 1 <= MAX_PROJECT_BASES, [c.__name__ for c in project]


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
