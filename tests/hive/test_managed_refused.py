"""Why implementation-managed tables are refused on the Hive Metastore (code 0).

HMS 2.3's ``alter_table`` has no compare-and-swap; its lock API would serialise
commits, but the metastore as run here (schema by DataNucleus ``autoCreateAll``)
answers ``lock`` with an internal error: the transaction tables it needs
(``NEXT_LOCK_ID``, ``HIVE_LOCKS``...) come only with schematool's transaction
schema.  This test is the tripwire: when the metastore grants locks, the refusal
in lance_ns.impls.hive (``managed_refusal``) is what to revisit.
"""

from __future__ import annotations

import socket

import pytest
from lance_namespace import LanceNamespaceError
from pymetastore.hive_metastore import ttypes as hms
from thrift.Thrift import TApplicationException


def test_the_metastore_here_grants_no_locks(raw, db_name):
    request = hms.LockRequest(
        component=[hms.LockComponent(type=hms.LockType.EXCLUSIVE, level=hms.LockLevel.TABLE, dbname=db_name,
                                     tablename="t")],
        user="lance-ns", hostname=socket.gethostname())
    with pytest.raises(TApplicationException, match="Internal error processing lock"):
        raw.lock(request)


def test_a_managed_table_is_refused_with_the_reason(hive2, db):
    with pytest.raises(LanceNamespaceError) as e:
        hive2.declare_table({"id": [db, "t"], "properties": {"managed_versioning": "true"}})
    assert int(e.value.code) == 0 and "compare-and-swap" in str(e.value)
    assert hive2.list_tables({"id": [db]}).tables == []
