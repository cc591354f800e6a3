"""Fault test against the REAL metastore: it goes away mid-run and comes back.

Calls made while it is down fail with ServiceUnavailable (code 17) within the
configured timeouts; after it restarts (same port, same Derby database) the
SAME client works again (its pooled connections to the dead process are
noticed and replaced) and no table is lost.
"""

from __future__ import annotations

import time

import lance
import pyarrow as pa
import pytest
from lance_namespace import LanceNamespaceError

import lance_ns
from tests.services.hms import HiveMetastore


def test_metastore_outage_is_17_and_recovery_loses_nothing(metastore, db_name, tmp_path):
    if not isinstance(metastore, HiveMetastore):
        pytest.skip("LANCE_NS_TEST_HMS_URI points at an external metastore this test cannot restart")
    timeout_ms = 3000  # a stopped metastore refuses connections: the connect timeout bounds each call
    ns = lance_ns.connect(
        "hive2",
        {
            "uri": metastore.uri,
            "root": str(tmp_path),
            "client.pool-size": "2",
            "client.connect-timeout-ms": str(timeout_ms),
            # a freshly restarted metastore on a busy CI machine can be slow; the
            # read timeout of a hung metastore has its own test in test_hms.py
            "client.socket-timeout-ms": "60000",
        },
    )
    ns.create_namespace({"id": [db_name]})
    tables = [f"t{i}" for i in range(3)]
    for i, name in enumerate(tables):
        lance.write_dataset(pa.table({"v": list(range(i + 1))}), namespace_client=ns, table_id=[db_name, name], mode="create")

    metastore.stop()
    try:
        for call, req in [
            (ns.list_tables, {"id": [db_name]}),
            (ns.describe_table, {"id": [db_name, "t0"]}),
            (ns.declare_table, {"id": [db_name, "new"]}),
            (ns.drop_table, {"id": [db_name, "t1"]}),
            (ns.list_namespaces, {"id": []}),
        ]:
            t0 = time.monotonic()
            with pytest.raises(LanceNamespaceError) as info:
                call(req)
            assert info.value.code == 17, (call.__name__, info.value)
            assert time.monotonic() - t0 < timeout_ms / 1000 + 1.0
    finally:
        metastore.start()  # same port, same Derby database

    try:
        assert ns.list_tables({"id": [db_name]}).tables == tables  # nothing lost, nothing half-done
        for i, name in enumerate(tables):
            assert lance.dataset(namespace_client=ns, table_id=[db_name, name]).count_rows() == i + 1
        ns.declare_table({"id": [db_name, "new"]})
        assert "new" in ns.list_tables({"id": [db_name]}).tables
    finally:
        ns.drop_namespace({"id": [db_name], "behavior": "Cascade"})
        ns.close()
