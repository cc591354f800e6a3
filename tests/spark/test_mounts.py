"""Our Spark SQL catalog over a mounts namespace served by ``lance-ns serve``: a table
written into one mount (CTAS, INSERT) and one read from another, the mounted services'
own clients seeing what Spark wrote.  The server mounts a local directory as ``local``
and pylance's own REST server (``RestAdapter``) as ``py``; the catalog is ``impl=rest``
on our server, as a Spark cluster would have it."""

from __future__ import annotations

import uuid

import lance
import lance.namespace
import pyarrow as pa
import pytest

import lance_ns
from tests.server.conftest import lance_ns_serve

pytestmark = pytest.mark.slow


def test_spark_writes_into_one_mount_and_reads_another(spark, tmp_path):
    from lance_ns.spark.session import catalog_conf

    adapter = lance.namespace.RestAdapter("dir", {"root": str(tmp_path / "py")}, host="127.0.0.1", port=0)
    adapter.start()
    try:
        py = lance.namespace.RestNamespace(uri=f"http://127.0.0.1:{adapter.port}")
        py.create_namespace(lance.namespace.CreateNamespaceRequest(id=["db"]))
        lance.write_dataset(pa.table({"k": [1, 2, 3]}), namespace_client=py, table_id=["db", "theirs"], mode="create")
        args = ["--impl", "mounts", "--no-ui", "--prop", "local.impl=dir", "--prop", f"local.root={tmp_path / 'local'}",
                "--prop", "py.impl=rest", "--prop", f"py.uri=http://127.0.0.1:{adapter.port}"]
        with lance_ns_serve(args) as served:
            name = f"lake{uuid.uuid4().hex[:6]}"
            for key, value in catalog_conf({name: {"impl": "rest", "uri": served.url}}).items():
                spark.conf.set(key, value)
            assert {r[0] for r in spark.sql(f"SHOW NAMESPACES IN {name}").collect()} == {"local", "py"}
            spark.sql(f"CREATE NAMESPACE {name}.local.sales")
            spark.sql(f"CREATE TABLE {name}.local.sales.doubled AS SELECT k * 2 AS v FROM {name}.py.db.theirs")
            spark.sql(f"INSERT INTO {name}.local.sales.doubled SELECT 100")
            native = lance_ns.connect("dir", {"root": str(tmp_path / "local")})  # the mount's own client
            seen = lance.dataset(namespace_client=native, table_id=["sales", "doubled"]).to_table()
            assert sorted(seen.column("v").to_pylist()) == [2, 4, 6, 100]
            spark.sql(f"INSERT INTO {name}.py.db.theirs VALUES (4)")
            assert sorted(lance.dataset(namespace_client=py, table_id=["db", "theirs"]).to_table()
                          .column("k").to_pylist()) == [1, 2, 3, 4]
            assert sorted(r[0] for r in spark.sql(f"SELECT v FROM {name}.local.sales.doubled").collect()) == [2, 4, 6, 100]
    finally:
        adapter.stop()
