"""The shape of the code, held: shallow inheritance, a backend contract
(lance_ns.catalog.store) of public names equal to what the backends really
implement, and objects that keep to their own private attributes.

(No cap on a class's lines: a long class that reads well beats a short one that
reaches into its neighbour, and a cap only taught the code to pack statements.)"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from lance_namespace import LanceNamespace

from lance_ns.base import NamespaceBase
from lance_ns.catalog import CatalogNamespace
from lance_ns.catalog.store import CONTRACT, PRIMITIVES, CatalogStore
from lance_ns.config import load_class
from lance_ns.impls import IMPLS

MAX_PROJECT_BASES = 3
SRC = Path(__file__).resolve().parents[2] / "src"


def _is_project(cls: type) -> bool:
    return cls.__module__.split(".")[0] == "lance_ns"


def _depth(cls: type) -> int:
    """Levels of project classes above ``cls`` on its longest line of bases."""
    return max((1 + _depth(b) for b in cls.__bases__ if _is_project(b)), default=0)


def _backends() -> dict[str, type]:
    return {name: load_class(name) for name in sorted(IMPLS)}


@pytest.mark.parametrize("impl", sorted(IMPLS))
def test_a_backend_object_is_shallow(impl):
    cls = load_class(impl)
    assert _depth(cls) <= MAX_PROJECT_BASES, [c.__name__ for c in cls.__mro__ if _is_project(c)]


def _overridden(cls: type) -> set[str]:
    """What a backend class (and its own project bases) defines over CatalogNamespace's names."""
    shared = set(dir(CatalogNamespace))
    names: set[str] = set()
    for c in cls.__mro__:
        if c in (CatalogNamespace, CatalogStore, NamespaceBase, LanceNamespace) or not _is_project(c):
            continue
        names |= {n for n in vars(c) if n in shared and not n.startswith("__") and n != "_abc_impl"}
    return names


def test_every_catalog_backend_keeps_to_the_contract():
    catalogs = {n: c for n, c in _backends().items() if issubclass(c, CatalogNamespace)}
    assert len(catalogs) >= 7
    used: set[str] = set()
    for name, cls in catalogs.items():
        assert issubclass(cls, CatalogStore)
        assert not cls.__abstractmethods__, f"{name} lacks primitives {sorted(cls.__abstractmethods__)}"
        beyond = _overridden(cls) - set(CONTRACT) - set(PRIMITIVES)
        assert not beyond, f"{name} overrides {sorted(beyond)}, which lance_ns.catalog.store does not list"
        used |= _overridden(cls)
    unused = set(CONTRACT) - used
    assert not unused, f"the contract lists {sorted(unused)}, which no backend overrides"
    assert not set(PRIMITIVES) & set(vars(CatalogNamespace)), "primitives have no default"
    assert all(not p.startswith("_") for p in (*PRIMITIVES, *CONTRACT)), "the contract is public names"


@pytest.mark.parametrize("impl", sorted(IMPLS))
def test_no_backend_overrides_a_private_method_of_a_project_class(impl):
    cls = load_class(impl)
    private = []
    for c in cls.__mro__:
        if not _is_project(c):
            continue
        for n in vars(c):
            if n.startswith("_") and not n.startswith("__") and n != "_abc_impl":
                above = [b.__name__ for b in c.__mro__[1:] if _is_project(b) and n in vars(b)]
                if above:
                    private.append(f"{c.__name__}.{n} over {above[0]}.{n}")
    assert not private, private


#: the private attributes of other projects' objects that src/ must touch: (module, name) -> why
THIRD_PARTY_PRIVATES = {
    ("base.py", "_DummyThread"): "threading: a thread Python did not start (a pool of pylance's) is one of these",
    ("impls/glue.py", "_credentials"): "botocore: an assumed role's credentials, refreshed ahead of expiry",
    ("impls/glue.py", "_advisory_refresh_timeout"): "botocore: when refreshable credentials renew (no public setting)",
    ("impls/glue.py", "_mandatory_refresh_timeout"): "botocore: the same, the hard limit",
    ("impls/hive/namespace.py", "_VALUES_TO_NAMES"): "Thrift's generated enums: their only table of names",
    ("impls/iceberg.py", "_supported_endpoints"): "pyiceberg's RestCatalog: the endpoints the server's config announced",
    ("spark/datasource.py", "_jvm"): "py4j: a SparkSession's JVM view (pyspark's own code reads it the same way)",
}


def _private_reach_ins() -> list[str]:
    """Every ``x._name`` in src/ where ``x`` is not ``self``, ``cls`` or ``super()``."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")):
                continue
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                continue
            if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super":
                continue
            module = path.relative_to(SRC / "lance_ns").as_posix()
            if (module, node.attr) in THIRD_PARTY_PRIVATES:
                continue
            found.append(f"{module}:{node.lineno} {ast.unparse(owner)}.{node.attr}")
    return found


def test_no_object_reads_or_writes_another_objects_privates():
    found = _private_reach_ins()
    assert not found, f"{len(found)} reach-ins:\n" + "\n".join(found)


def test_collaborators_call_no_public_operation_of_the_namespace():
    """Inside an operation the rule layer's collaborators call each other's functions and
    the namespace's rules (``ns.describe``, ``ns.declare``...), never its public, wrapped
    operations: a request is checked once and meets one boundary."""
    from lance_ns.base import OPERATIONS

    operations = {op.method for op in OPERATIONS.values()}
    found = []
    for path in [SRC / "lance_ns" / "dataops.py", SRC / "lance_ns" / "tableops.py",
                 *sorted((SRC / "lance_ns" / "catalog").glob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in operations
                    and ast.unparse(node.func.value) in ("self.ns", "ns", "self.namespace")):
                found.append(f"{path.relative_to(SRC)}:{node.lineno} {ast.unparse(node.func)}")
    assert not found, found
