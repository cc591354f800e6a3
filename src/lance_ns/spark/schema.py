"""Arrow <-> Spark schemas for the ``lance`` source.

Spark checks that every batch a Python source yields has exactly the Arrow
schema it derives from the Spark schema (``string``, not ``large_string``;
``timestamp[us, tz=UTC]``; same nullability), so reads cast to
:func:`arrow_target`.  Lance types Spark has no Arrow mapping for are
normalised first (large and fixed-size variants to the plain ones).
"""

from __future__ import annotations

import inspect

import pyarrow as pa
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.types import StructType


def _plain(t: pa.DataType) -> pa.DataType:
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_large_binary(t) or pa.types.is_binary_view(t) or pa.types.is_fixed_size_binary(t):
        return pa.binary()
    if pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or pa.types.is_list_view(t):
        return pa.list_(_plain_field(t.value_field))
    if pa.types.is_list(t):
        return pa.list_(_plain_field(t.value_field))
    if pa.types.is_struct(t):
        return pa.struct([_plain_field(t.field(i)) for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(_plain(t.key_type), _plain_field(t.item_field))
    return t


def _plain_field(f: pa.Field) -> pa.Field:
    return pa.field(f.name, _plain(f.type), f.nullable)


def spark_schema(schema: pa.Schema) -> StructType:
    """The Spark schema of a Lance table's Arrow schema."""
    return from_arrow_schema(pa.schema([_plain_field(f) for f in schema]))


#: how this pyspark asks for timestamps in UTC: ``timezone="UTC"`` (4.2 on), ``timestamp_utc=True`` (4.1)
_UTC = ({"timezone": "UTC"} if "timezone" in inspect.signature(to_arrow_schema).parameters
        else {"timestamp_utc": True})


def arrow_target(schema: StructType) -> pa.Schema:
    """The Arrow schema Spark expects for ``schema`` (its Python sources use UTC)."""
    return to_arrow_schema(schema, **_UTC)
