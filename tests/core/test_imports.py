"""The house's shape, read from the code: no import circle anywhere in ``src/``, and no
module importing one on a higher floor (FLOORS, lowest first).  Every import counts,
inside functions too (a late import is still a dependency); only ``TYPE_CHECKING``
blocks, which never run, do not."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

#: the floors of lance_ns, lowest first: a module may import its own floor and those below.
#: (prefix -> floor; the longest prefix of a module's dotted name decides)
FLOORS = {
    "lance_ns.errors": 0, "lance_ns.error_codes": 0, "lance_ns.invalid_input": 0, "lance_ns.deferred_client": 0,
    "lance_ns.identifiers": 1, "lance_ns.modes": 1, "lance_ns.paging": 1,
    "lance_ns.limits": 1, "lance_ns.gc_pause": 1, "lance_ns.redact": 1, "lance_ns.readable": 1, "lance_ns.retry": 1, "lance_ns.tls": 1,
    "lance_ns.storage": 2, "lance_ns.directory_stamp": 2, "lance_ns.vending": 2, "lance_ns.base": 3, "lance_ns.protocol": 4, "lance_ns.detail": 3,
    "lance_ns.ledger": 3, "lance_ns.walk": 3, "lance_ns.datasets": 4, "lance_ns.dataops": 5,
    "lance_ns.tableops": 6, "lance_ns.catalog": 7, "lance_ns.impls": 8, "lance_ns.config": 9,
    # mounts are configured namespaces side by side: the one backend that connects others (config)
    "lance_ns.impls.mounts": 10,
    # sync works on any two namespaces (the public operations and the placement questions)
    "lance_ns.conformance": 10, "lance_ns.sync": 10, "lance_ns.dataset_copy": 4, "lance_ns.cli": 12, "lance_ns.server": 11, "lance_ns.spark": 11,
    "lance_ns": 13, "pyspark_lance_ns": 13,
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in SRC.rglob("*.py")}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules ``name`` imports (anywhere but a TYPE_CHECKING block)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)  # ``from . import verify``
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text()))
    return {m for m in found if m in modules and m != name}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return found


def _floor(name: str) -> int:
    prefix = max((p for p in FLOORS if name == p or name.startswith(p + ".")), key=len)
    return FLOORS[prefix]


def _is_package_init_of(importer: str, imported: str) -> bool:
    # a module inside a package runs its package's __init__: no dependency of its own
    return importer.startswith(imported + ".")


def test_no_import_circle():
    import sys

    sys.setrecursionlimit(10000)
    graph = {m: {i for i in deps if not _is_package_init_of(m, i)} for m, deps in _graph().items()}
    assert _circles(graph) == []


def test_no_import_runs_up_a_floor():
    upward = [
        f"{m} (floor {_floor(m)}) imports {i} (floor {_floor(i)})"
        for m, deps in sorted(_graph().items())
        for i in sorted(deps)
        if not _is_package_init_of(m, i) and _floor(i) > _floor(m)
    ]
    assert upward == []


def test_the_walk_sees_the_imports():
    """The walk itself works: it finds known edges, late imports and ``from . import`` ones."""
    graph = _graph()
    assert "lance_ns.errors" in graph["lance_ns.base"]
    assert "lance_ns.conformance.verify" in graph["lance_ns.conformance.scenario"]
    assert "lance_ns.server.app" in graph["lance_ns.server.running"]


def test_every_name_imported_from_the_project_exists():
    """Late imports (inside functions) included: a name moved to another module fails here,
    not in the one test that happens to run that function."""
    import importlib

    modules, missing = _modules(), []
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                base = ".".join(anchor[: len(anchor) - (node.level - 1)] + ([base] if base else []))
            if base not in modules:
                continue
            module = importlib.import_module(base)
            for alias in node.names:
                if alias.name != "*" and not hasattr(module, alias.name) and f"{base}.{alias.name}" not in modules:
                    missing.append(f"{name}:{node.lineno} imports {alias.name} from {base}")
    assert not missing, missing
