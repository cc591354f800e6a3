"""A round trip through an installed lance-ns, run by another interpreter's venv.

``python roundtrip.py WORKDIR``: a named configuration read from TOML (tomli on
3.10), a table written and read by pylance through the dir backend, the same
namespace served over REST and read back through the rest backend, and the
registered name resolved by lance_namespace.  Prints ``round trip ok`` and the
Python version.
"""

import os
import sys
from pathlib import Path

import lance
import lance_namespace
import pyarrow as pa

import lance_ns
from lance_ns.server import run_server_in_thread

work = Path(sys.argv[1])
config = work / "config.toml"
config.write_text(f'[namespaces.lake]\nimpl = "dir"\nroot = "{work / "lake"}"\n')
os.environ["LANCE_NS_CONFIG"] = str(config)

ns = lance_ns.load_namespace("lake")
ns.create_namespace({"id": ["sales"]})
rows = pa.table({"id": [1, 2, 3], "amount": [1.5, 2.5, 4.0]})
lance.write_dataset(rows, namespace_client=ns, table_id=["sales", "orders"], mode="create")
assert lance.dataset(namespace_client=ns, table_id=["sales", "orders"]).to_table().equals(rows)

with run_server_in_thread(ns, port=0) as server:
    rest = lance_ns.connect("rest", {"uri": server.url})
    assert rest.list_tables({"id": ["sales"]}).tables == ["orders"]
    ds = lance.dataset(namespace_client=rest, table_id=["sales", "orders"])
    assert ds.to_table().column("amount").to_pylist() == [1.5, 2.5, 4.0]

again = lance_namespace.connect("lance_ns.dir", {"root": str(work / "lake")})
assert again.list_namespaces({"id": []}).namespaces == ["sales"]
print("round trip ok", ".".join(map(str, sys.version_info[:2])), lance_ns.__file__)
