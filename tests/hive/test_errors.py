"""The Thrift/metastore exception -> spec error table of the Hive backend: by
exception type and by the call that raised it (NoSuchObject from get_table is
a missing table, 4; from get_database a missing namespace, 1)."""

from __future__ import annotations

import socket

import pytest
from pymetastore.hive_metastore import ttypes as hms
from thrift.Thrift import TApplicationException
from thrift.transport.TTransport import TTransportException

from lance_ns.impls.hive import translate_hms_error


@pytest.mark.parametrize(
    "exc,call,code",
    [
        (TTransportException(TTransportException.NOT_OPEN, "Could not connect"), "get_table", 17),
        (TTransportException(TTransportException.TIMED_OUT, "read timeout"), "get_database", 17),
        (ConnectionResetError(104, "reset"), "get_all_tables", 17),
        (socket.timeout("timed out"), "get_table", 17),
        (EOFError(), "drop_table", 17),
        # the call, not the message, says what is missing or exists (the messages lie on purpose)
        (hms.NoSuchObjectException(message="table t not found"), "get_database", 1),
        (hms.NoSuchObjectException(message="database x does not exist"), "get_table", 4),
        (hms.NoSuchObjectException(message="table t not found"), "drop_table", 4),
        (hms.NoSuchObjectException(message="table t"), "create_table", 1),  # its database is missing
        (hms.NoSuchObjectException(message="No catalog c"), "get_catalog", 1),
        (hms.UnknownDBException(message="Could not find table x"), "get_table_objects_by_name", 1),
        (hms.UnknownTableException(message="database t"), "get_database", 4),
        (hms.AlreadyExistsException(message="Table x already exists"), "create_database", 2),
        (hms.AlreadyExistsException(message="Catalog x already exists"), "create_catalog", 2),
        (hms.AlreadyExistsException(message="Database x already exists"), "create_table", 5),
        (hms.InvalidOperationException(message="something"), "drop_database", 3),
        (hms.InvalidOperationException(message="Attempt to drop non-empty catalog"), "drop_catalog", 3),
        (hms.InvalidOperationException(message="Database x is not empty"), "alter_table", 13),
        (hms.InvalidObjectException(message="x-y is not a valid database name"), "create_database", 13),
        # MetaException is the metastore's untyped catch-all: only its message can tell
        (hms.MetaException(message="Can not drop default database"), "drop_database", 13),
        (hms.MetaException(message="java.security.AccessControlException: Permission denied"), "create_table", 15),
        (hms.MetaException(message="Could not connect to meta store using any of the URIs provided"), "get_table", 17),
        (hms.MetaException(message="java.lang.NullPointerException"), "get_table", 18),
        (TApplicationException(TApplicationException.UNKNOWN_METHOD, "Invalid method name: 'get_catalogs'"), "get_catalogs", 0),
        (TApplicationException(TApplicationException.INTERNAL_ERROR, "Internal error"), "get_table", 18),
    ],
)
def test_translation(exc, call, code):
    err = translate_hms_error(exc, call)
    assert int(err.code) == code
    assert str(err)  # always a message


def test_unknown_exceptions_are_left_to_the_caller():
    assert translate_hms_error(ValueError("x"), "get_table") is None  # CatalogNamespace turns it into Internal (18)
