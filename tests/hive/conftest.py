"""Fixtures of the Hive backend tests: the shared real metastore (started once
per test process, see tests/services/hms.py), a raw Thrift client to it, and a
fresh database name per test."""

from __future__ import annotations

import uuid

import pytest
from pymetastore.hive_metastore import ThriftHiveMetastore
from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

import lance_ns
from tests.services.hms import shared_metastore


@pytest.fixture(scope="session")
def metastore():
    return shared_metastore()


def raw_client(host: str, port: int):
    """A plain generated Thrift client: what lance-ns is measured against."""
    sock = TSocket.TSocket(host, port)
    sock.setTimeout(30000)
    transport = TTransport.TBufferedTransport(sock)
    transport.open()
    return ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(transport)), transport


@pytest.fixture
def raw(metastore):
    client, transport = raw_client(metastore.host, metastore.port)
    yield client
    transport.close()


@pytest.fixture
def db_name():
    return f"h{uuid.uuid4().hex[:10]}"


@pytest.fixture
def hive2(metastore, tmp_path):
    ns = lance_ns.connect("hive2", {"uri": metastore.uri, "root": str(tmp_path / "tables")})
    yield ns
    ns.close()


@pytest.fixture
def db(hive2, db_name):
    """A database made through the namespace, dropped (cascade) afterwards."""
    hive2.create_namespace({"id": [db_name]})
    yield db_name
    try:
        hive2.drop_namespace({"id": [db_name], "mode": "Skip", "behavior": "Cascade"})
    except Exception as e:  # a test may have left a foreign table behind on purpose
        print(f"cleanup of {db_name}: {e!r}")
