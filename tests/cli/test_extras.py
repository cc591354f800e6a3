"""Every feature behind an extra answers, when the extra is not installed, with
one line naming the ``pip install`` to run, and a non-zero exit: simulated here
by hiding each package of each extra (the real plain install is
test_plain_install.py)."""

from __future__ import annotations

import importlib.metadata
import re
import sys

import pytest

#: extra -> command lines that need it (connection details never matter: the
#: import fails before anything is reached)
FEATURES = {
    "server": [["serve", "--impl", "memory"]],
    "rest": [["namespace", "list", "--impl", "rest", "--prop", "uri=http://127.0.0.1:9"],
             ["check", "--uri", "http://127.0.0.1:9"]],
    "hive": [["namespace", "list", "--impl", "hive", "--prop", "uri=thrift://127.0.0.1:9"],
             ["namespace", "list", "--impl", "hive3", "--prop", "uri=thrift://127.0.0.1:9"]],
    "glue": [["namespace", "list", "--impl", "glue", "--prop", "region=us-east-1"]],
    "unity": [["namespace", "list", "--impl", "unity", "--prop", "endpoint=http://127.0.0.1:9"]],
    "iceberg": [["namespace", "list", "--impl", "iceberg", "--prop", "endpoint=http://127.0.0.1:9"]],
    "vending": [["namespace", "list", "--impl", "memory", "--prop", "credential_vendor.enabled=true",
                 "--prop", "credential_vendor.aws_role_arn=arn:aws:iam::123456789012:role/r"]],
}
#: extras that are no command-line feature: spark is a library (lance_ns.spark), connect
#: its Spark Connect client (pyspark[connect]); cli is empty (kept for old install lines); docs builds the API reference;
#: all/test gather the others
NOT_CLI = {"spark", "connect", "cli", "docs", "all", "test"}
IMPORT_NAME = {"pyyaml": "yaml"}
#: (extra, package) the feature does not import at all: nothing to name when absent
UNUSED = {("iceberg", "httpx"): "lance_ns.impls.iceberg talks HTTP through pyiceberg, never imports httpx"}
# (the server extra's httptools and uvloop carry platform markers, so extra_packages does not list them:
# they are optional, uvicorn falling back to h11 + asyncio, tested in tests/server/test_command.py)


def extra_packages() -> dict[str, list[str]]:
    """extra -> the import names of its distributions, from the installed metadata."""
    found: dict[str, list[str]] = {}
    for req in importlib.metadata.requires("lance-ns") or []:
        m = re.match(r"([A-Za-z0-9_.-]+)[^;]*;\s*extra == \"(\w+)\"", req)
        if m and m.group(2) not in NOT_CLI:
            dist = m.group(1).lower()
            found.setdefault(m.group(2), []).append(IMPORT_NAME.get(dist, dist.replace("-", "_")))
    return found


def test_every_extra_has_a_feature_here():
    extras = set(importlib.metadata.metadata("lance-ns").get_all("Provides-Extra"))
    assert extras - NOT_CLI == set(FEATURES)


# (a package the feature never imports has no case: it could only skip; test_an_unused_package_is_not_imported)
CASES = [pytest.param(extra, module, argv)
         for extra, modules in extra_packages().items() for module in modules if (extra, module) not in UNUSED
         for argv in FEATURES[extra]]


@pytest.mark.parametrize("extra, module", sorted(UNUSED))
def test_an_unused_package_is_not_imported(extra, module):
    """What UNUSED says is true: no module of the feature imports the package."""
    import ast
    from pathlib import Path

    import lance_ns

    src = Path(lance_ns.__file__).parent
    imported = set()
    for path in src.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {(path, a.name.split(".")[0]) for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                imported.add((path, node.module.split(".")[0]))
    feature = {"iceberg": "impls/iceberg.py"}[extra]
    assert (src / feature, module) not in imported, UNUSED[extra, module]


@pytest.mark.parametrize("extra, module, argv", CASES, ids=lambda v: v if isinstance(v, str) else " ".join(v[:3]))
def test_a_missing_extra_is_one_line_naming_the_install(cli, monkeypatch, extra, module, argv):
    # "import module" (and of its submodules, even those already imported) now fails as if not installed
    for name in [n for n in sys.modules if n.startswith(module + ".")] + [module]:
        monkeypatch.setitem(sys.modules, name, None)
    for name in list(sys.modules):  # our modules that import it are imported afresh
        if name.startswith(("lance_ns.impls.", "lance_ns.server", "lance_ns.protocol")) and name != "lance_ns.impls.memory":
            monkeypatch.delitem(sys.modules, name)
    r = cli(*argv)
    assert r.rc != 0 and r.out == ""
    assert len(r.err.splitlines()) == 1, r.err
    assert f"pip install 'lance-ns[{extra}]'" in r.err and f"'{module}" in r.err
    assert "Traceback" not in r.err
