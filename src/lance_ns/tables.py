"""Lance dataset helpers shared by every backend's data operations.

A namespace only knows a table's location; these helpers open it (at a
version or tag), move Arrow data in and out as IPC bytes, delete a table
directory, and translate pylance's exceptions into spec error codes.
DescribeTable's detailed metadata lives in :mod:`lance_ns.detail` and
location handling in :mod:`lance_ns.storage`; they are re-exported here so
data code has one import.
"""

from __future__ import annotations

import contextlib
import io

import pyarrow as pa

from .detail import fill_detail, open_dataset, schema_to_json  # noqa: F401 - re-exported
from .errors import (
    ConcurrentModificationError,
    InternalError,
    InvalidInputError,
    LanceNamespaceError,
    TableColumnNotFoundError,
    TableAlreadyExistsError,
    TableNotFoundError,
    TableSchemaValidationError,
    TableTagNotFoundError,
    TableVersionNotFoundError,
)
from .storage import delete_location  # noqa: F401 - re-exported


def translate(exc: BaseException, location: str = "") -> LanceNamespaceError:
    """A pylance / pyarrow exception -> the spec error with the closest code.

    pylance raises plain ValueError/OSError/RuntimeError with Rust messages,
    so the message is all there is to go on.
    """
    if isinstance(exc, LanceNamespaceError):
        return exc
    text = str(exc)
    low = text.lower()
    where = f" ({location})" if location else ""
    if "dataset already exists" in low:  # a create that lost to another writer
        return TableAlreadyExistsError(f"table already exists{where}: {text}")
    if low.startswith("dataset at path") and "not found" in low:  # names "_versions": check first
        return TableNotFoundError(f"no Lance table{where}: {text}")
    if "tag" in low and ("not found" in low or "does not exist" in low):
        return TableTagNotFoundError(text)
    if "version" in low and ("not found" in low or "does not exist" in low):
        return TableVersionNotFoundError(text)
    if "dataset" in low and ("not found" in low or "does not exist" in low):
        return TableNotFoundError(f"no Lance table{where}: {text}")
    if "no field named" in low or ("column" in low and ("not found" in low or "does not exist" in low)):
        return TableColumnNotFoundError(text)
    if "schema" in low and ("match" in low or "compatib" in low or "differ" in low):
        return TableSchemaValidationError(text)
    if "conflict" in low or "retryable" in low:
        return ConcurrentModificationError(text)
    if isinstance(exc, (ValueError, TypeError, pa.ArrowInvalid, pa.ArrowTypeError, KeyError)):
        return InvalidInputError(text)
    return InternalError(f"{type(exc).__name__}: {text}")


@contextlib.contextmanager
def translated(location: str = ""):
    """Run pylance calls, re-raising their errors with spec codes."""
    try:
        yield
    except LanceNamespaceError:
        raise
    except Exception as e:  # noqa: BLE001 - translated, never swallowed
        raise translate(e, location) from e


def ipc_to_table(data: bytes | bytearray | memoryview | None) -> pa.Table:
    """Arrow IPC stream bytes (file format accepted too) -> table; bad bytes are invalid input."""
    if not data:
        raise InvalidInputError("request body must be Arrow IPC stream data")
    buf = pa.py_buffer(bytes(data))
    try:
        return pa.ipc.open_stream(buf).read_all()
    except pa.ArrowInvalid:
        try:
            return pa.ipc.open_file(buf).read_all()
        except pa.ArrowInvalid as e:
            raise InvalidInputError(f"request body is not Arrow IPC data: {e}") from None


def table_to_ipc_stream(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def table_to_ipc_file(table: pa.Table) -> bytes:
    """Results -> Arrow IPC *file* bytes (what QueryTable returns)."""
    sink = io.BytesIO()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()
