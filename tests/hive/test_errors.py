"""The Thrift/metastore exception -> spec error table of the Hive backend
(the primitives add context, e.g. NoSuchObject -> 1 or 4; this is the fallback)."""

from __future__ import annotations

import socket

import pytest
from pymetastore.hive_metastore import ttypes as hms
from thrift.Thrift import TApplicationException
from thrift.transport.TTransport import TTransportException

from lance_ns.impls.hive import translate_hms_error


@pytest.mark.parametrize(
    "exc,code",
    [
        (TTransportException(TTransportException.NOT_OPEN, "Could not connect"), 17),
        (TTransportException(TTransportException.TIMED_OUT, "read timeout"), 17),
        (ConnectionResetError(104, "reset"), 17),
        (socket.timeout("timed out"), 17),
        (EOFError(), 17),
        (hms.NoSuchObjectException(message="database hive.x does not exist"), 1),
        (hms.NoSuchObjectException(message="hive.db.t table not found"), 4),
        (hms.UnknownDBException(message="Could not find database x"), 1),
        (hms.UnknownTableException(message="t"), 4),
        (hms.AlreadyExistsException(message="Database x already exists"), 2),
        (hms.AlreadyExistsException(message="Table x already exists"), 5),
        (hms.InvalidOperationException(message="Database x is not empty. One or more tables exist."), 3),
        (hms.InvalidOperationException(message="something else"), 13),
        (hms.InvalidObjectException(message="x-y is not a valid database name"), 13),
        (hms.MetaException(message="Can not drop default database"), 13),
        (hms.MetaException(message="java.security.AccessControlException: Permission denied"), 15),
        (hms.MetaException(message="Could not connect to meta store using any of the URIs provided"), 17),
        (hms.MetaException(message="java.lang.NullPointerException"), 18),
        (TApplicationException(TApplicationException.UNKNOWN_METHOD, "Invalid method name: 'get_catalogs'"), 0),
        (TApplicationException(TApplicationException.INTERNAL_ERROR, "Internal error"), 18),
    ],
)
def test_translation(exc, code):
    err = translate_hms_error(exc)
    assert int(err.code) == code
    assert str(err)  # always a message


def test_unknown_exceptions_are_left_to_the_caller():
    assert translate_hms_error(ValueError("x")) is None  # CatalogNamespace turns it into Internal (18)
