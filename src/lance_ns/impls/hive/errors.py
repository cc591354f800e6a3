"""Metastore failures -> the spec's error table (:mod:`lance_ns.errors`).

The metastore's exceptions are typed, and the call that raised one says what
it is about: a ``NoSuchObjectException`` from ``get_table`` is a missing table
(code 4), from ``get_database`` a missing namespace (code 1), from
``create_table`` the missing database the table would go in (code 1).  So the
mapping is by exception type and call, never by the words of the message.
The one exception is ``MetaException``, the metastore's untyped catch-all: it
carries only a message, which is read for the few failures it can stand for.
"""

from __future__ import annotations

from pymetastore.hive_metastore import ttypes as hms
from thrift.Thrift import TApplicationException, TException
from thrift.transport import TTransport

from ...errors import (
    ConcurrentModificationError,
    InternalError,
    InvalidInputError,
    LanceNamespaceError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NamespaceNotFoundError,
    PermissionDeniedError,
    ServiceUnavailableError,
    TableAlreadyExistsError,
    TableNotFoundError,
    UnsupportedOperationError,
)

#: failures of the connection itself (not of the request): ServiceUnavailable
TRANSPORT_ERRORS = (TTransport.TTransportException, OSError, EOFError)

#: metastore calls acting on one table; every other call acts on a database
#: or catalog (listing a database's tables acts on the database)
TABLE_CALLS = frozenset(
    {
        "get_table",
        "get_table_req",
        "create_table",
        "create_table_with_environment_context",
        "drop_table",
        "drop_table_with_environment_context",
        "alter_table",
        "alter_table_with_environment_context",
        "alter_table_with_cascade",
    }
)
#: metastore calls dropping a database or catalog: their InvalidOperation is "not empty"
NAMESPACE_DROP_CALLS = frozenset({"drop_database", "drop_catalog"})


def _creates(call: str) -> bool:
    return call.startswith("create_")


def translate_hms_error(exc: BaseException, call: str) -> LanceNamespaceError | None:
    """The spec's error for ``exc``, raised by the metastore call ``call``
    (None: not a metastore failure; the caller reports it as Internal)."""
    msg = _message(exc)
    if isinstance(exc, TRANSPORT_ERRORS):  # socket.timeout is an OSError
        return ServiceUnavailableError(f"Hive metastore unreachable: {msg}")
    on_table = call in TABLE_CALLS
    if isinstance(exc, hms.NoSuchLockException | hms.TxnAbortedException | hms.NoSuchTxnException):
        # a lock the metastore no longer has (expired without heartbeat, hive.txn.timeout)
        return ConcurrentModificationError(f"the metastore lock was lost in {call}: {msg}; retry")
    if isinstance(exc, hms.UnknownDBException):
        return NamespaceNotFoundError(msg)
    if isinstance(exc, hms.UnknownTableException):
        return TableNotFoundError(msg)
    if isinstance(exc, hms.NoSuchObjectException):
        # what a create cannot find is the parent: the database or catalog it would go in
        return TableNotFoundError(msg) if on_table and not _creates(call) else NamespaceNotFoundError(msg)
    if isinstance(exc, hms.AlreadyExistsException):
        return TableAlreadyExistsError(msg) if on_table else NamespaceAlreadyExistsError(msg)
    if isinstance(exc, hms.InvalidOperationException):
        return NamespaceNotEmptyError(msg) if call in NAMESPACE_DROP_CALLS else InvalidInputError(msg)
    if isinstance(exc, hms.InvalidObjectException | hms.InvalidInputException):
        return InvalidInputError(msg)
    if isinstance(exc, TApplicationException):
        if exc.type == TApplicationException.UNKNOWN_METHOD:
            return UnsupportedOperationError(f"the metastore does not implement {call}: {msg}")
        return InternalError(f"metastore error in {call}: {msg}")
    if isinstance(exc, hms.MetaException):
        return _meta_error(msg, call)
    if isinstance(exc, TException):
        return InternalError(f"metastore error in {call}: {type(exc).__name__}: {msg}")
    return None


def _meta_error(msg: str, call: str) -> LanceNamespaceError:
    low = msg.lower()
    if "can not drop" in low or "cannot drop" in low:  # the default database or catalog
        return InvalidInputError(msg)
    if "permission denied" in low or "accesscontrolexception" in low or "not authorized" in low:
        return PermissionDeniedError(msg)
    if "could not connect" in low or "timed out" in low or "communications link failure" in low:
        return ServiceUnavailableError(f"Hive metastore backend unavailable: {msg}")
    return InternalError(f"metastore error in {call}: {msg}")


def _message(exc: BaseException) -> str:
    return str(getattr(exc, "message", None) or exc or type(exc).__name__)


__all__ = ["TRANSPORT_ERRORS", "translate_hms_error"]
