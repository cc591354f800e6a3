"""Arrow <-> Spark schemas for the ``lance`` source.

Spark checks that every batch a Python source yields has exactly the Arrow
schema it derives from the Spark schema (``string``, not ``large_string``;
``timestamp[us, tz=UTC]``; same nullability), so reads cast to
:func:`arrow_target`.  Lance types Spark has no Arrow mapping for are
normalised first (large and fixed-size variants to the plain ones).
"""

from __future__ import annotations

import inspect
from typing import Mapping

import pyarrow as pa
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.types import StructType

from .errors import error


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


#: the table property that makes an ARRAY<FLOAT|DOUBLE> column a vector (lance-spark's name)
VECTOR_SIZE = ".arrow.fixed-size-list.size"


def vector_columns(schema: pa.Schema, properties: Mapping[str, str]) -> pa.Schema:
    """``schema`` with each column a ``'<column>.arrow.fixed-size-list.size' = 'n'`` property
    names made a fixed-size list of n (a vector, which vector indexes take)."""
    fields = list(schema)
    names = [f.name for f in fields]
    for key, value in properties.items():
        if not key.endswith(VECTOR_SIZE):
            continue
        column = key[: -len(VECTOR_SIZE)]
        if column not in names:
            raise error("InvalidInputError", f"table property {key!r} names no column (columns: {', '.join(names)})")
        field = fields[names.index(column)]
        item = field.type.value_type if pa.types.is_list(field.type) else None
        if item is None or not (pa.types.is_float32(item) or pa.types.is_float64(item) or pa.types.is_float16(item)):
            raise error("InvalidInputError", f"table property {key!r}: column {column!r} is {field.type}, not an "
                                             "ARRAY<FLOAT> or ARRAY<DOUBLE>")
        try:
            size = int(value)
        except ValueError:
            size = 0
        if size < 1:
            raise error("InvalidInputError", f"table property {key!r} must be a positive integer, got {value!r}")
        fields[names.index(column)] = pa.field(column, pa.list_(field.type.value_field, size), field.nullable)
    return pa.schema(fields, metadata=schema.metadata)
