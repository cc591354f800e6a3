"""The memory catalog's default root goes with the process that made it; a root given stays."""

from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = """
import sys, lance, pyarrow as pa, lance_ns
props = {"root": sys.argv[1]} if len(sys.argv) > 1 else {}
ns = lance_ns.connect("memory", props)
ns.create_namespace({"id": ["n"]})
lance.write_dataset(pa.table({"x": [1, 2]}), namespace_client=ns, table_id=["n", "t"], mode="create")
print(ns.properties["root"])
"""


def _run(*args: str) -> str:
    done = subprocess.run([sys.executable, "-c", SCRIPT, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_a_default_root_is_removed_when_the_process_exits():
    root = _run()
    assert os.path.basename(root).startswith("lance-ns-memory-")
    assert not os.path.exists(root), f"{root} outlived the process whose catalog alone knew it"


def test_a_given_root_is_kept(tmp_path):
    root = _run(str(tmp_path / "kept"))
    assert root == str(tmp_path / "kept")
    assert any((tmp_path / "kept").iterdir()), "the table written under a given root was removed"
