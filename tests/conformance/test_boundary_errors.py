"""One error boundary: a backend client's error raised under any operation answers the
backend's own code for it, never 18 -- also under the data operations, which call the
catalog's primitives outside the catalog operations' own translation.  Injected per
backend, with its own client's exception type, under AlterTableAddColumns (where a
catalog that keeps a table's columns updates its entry: Unity's ``schema_changed``)."""

from __future__ import annotations

import io
import uuid

import pyarrow as pa
import pytest

from lance_ns.walk import drop_tree


def _client_errors() -> dict[str, tuple]:
    """Backend class name -> (a client exception, the code the backend answers it with)."""
    found: dict[str, tuple] = {}
    try:
        import botocore.exceptions

        found["GlueNamespace"] = (botocore.exceptions.ClientError(
            {"Error": {"Code": "AccessDeniedException", "Message": "injected"},
             "ResponseMetadata": {"HTTPStatusCode": 403}}, "UpdateTable"), 16)
    except ImportError:
        pass
    try:
        from lance_ns.impls.unity import UnityError

        found["UnityNamespace"] = (UnityError(403, "PERMISSION_DENIED", "injected", "table"), 15)
    except ImportError:
        pass
    try:
        import pyiceberg.exceptions as ice

        found["IcebergRestNamespace"] = (ice.ForbiddenError("injected"), 15)
    except ImportError:
        pass
    try:
        from pymetastore.hive_metastore import ttypes as hms

        for name in ("Hive2Namespace", "Hive3Namespace"):
            found[name] = (hms.NoSuchObjectException("injected"), None)
    except ImportError:
        pass
    return found


def _ipc() -> bytes:
    sink = io.BytesIO()
    table = pa.table({"x": [1, 2, 3]})
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue()


# on the catalog backends with a client of their own (memory has none; _client_errors has one per class)
@pytest.mark.needs("catalog", "data")
@pytest.mark.applies(lambda b: b.name != "memory", "the in-memory catalog has no client to inject an error of")
def test_a_client_error_under_a_data_operation_answers_its_own_code(backend):
    ns = backend.connect()
    errors = _client_errors()
    assert type(ns).__name__ in errors, f"no client error to inject for {type(ns).__name__}: add one to _client_errors"
    error, code = errors[type(ns).__name__]
    expected = ns.translate_error(error)
    assert expected is not None and (code is None or expected.code == code), expected
    nsid = list(backend.parent) + [f"b{uuid.uuid4().hex[:8]}"]
    ns.create_namespace({"id": nsid})
    try:
        ns.create_table({"id": nsid + ["t"]}, _ipc())

        def injected(*args, **kwargs):
            raise error

        ns.schema_changed = injected
        try:
            with pytest.raises(Exception) as raised:
                ns.alter_table_add_columns({"id": nsid + ["t"], "new_columns": [{"name": "y", "expression": "x * 2"}]})
        finally:
            del ns.schema_changed
        assert getattr(raised.value, "code", None) == expected.code, raised.value
    finally:
        drop_tree(ns, nsid)
