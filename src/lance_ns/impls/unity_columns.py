"""Arrow schema -> Unity Catalog ``ColumnInfo`` list.

Unity describes columns the way Spark does: ``type_name`` (the
``ColumnTypeName`` enum), ``type_text`` (Spark's catalog string, e.g.
``array<float>``) and ``type_json`` (the JSON of the Spark ``StructField``,
e.g. ``{"name":"id","type":"long","nullable":false,"metadata":{}}``), so
engines reading the catalog see the same schema Lance stores.

Arrow types Spark lacks are widened to the nearest type that holds every
value: unsigned integers to the next wider signed type (uint64 to
``decimal(20,0)``), float16 to float, every string/binary width to
string/binary, fixed-size lists (vectors) to arrays, dictionaries to their
value type, durations to ``interval day to second``.  Time of day is
Spark 4's ``time(p)`` (precision at most 6), which Unity's ``ColumnTypeName``
lacks: its ``type_name`` is ``USER_DEFINED_TYPE``.  Types with no Spark
equivalent (unions) raise ``ValueError``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.types as pat

SPARK_MAX_DECIMAL_PRECISION = 38


@dataclass(frozen=True)
class SparkType:
    type_name: str  # Unity ColumnTypeName
    text: str  # Spark catalogString
    json: Any  # Spark DataType JSON value (str for simple types, dict otherwise)
    precision: int | None = None
    scale: int | None = None


def _simple(type_name: str, text: str, json_name: str | None = None) -> SparkType:
    return SparkType(type_name, text, json_name or text)


BOOLEAN = _simple("BOOLEAN", "boolean")
BYTE = _simple("BYTE", "tinyint", "byte")
SHORT = _simple("SHORT", "smallint", "short")
INT = _simple("INT", "int", "integer")
LONG = _simple("LONG", "bigint", "long")
FLOAT = _simple("FLOAT", "float")
DOUBLE = _simple("DOUBLE", "double")
STRING = _simple("STRING", "string")
BINARY = _simple("BINARY", "binary")
DATE = _simple("DATE", "date")
TIMESTAMP = _simple("TIMESTAMP", "timestamp")
TIMESTAMP_NTZ = _simple("TIMESTAMP_NTZ", "timestamp_ntz")
NULL = _simple("NULL", "void")
INTERVAL = _simple("INTERVAL", "interval day to second")

_INTS = {
    (8, True): BYTE,
    (16, True): SHORT,
    (32, True): INT,
    (64, True): LONG,
    (8, False): SHORT,
    (16, False): INT,
    (32, False): LONG,
}

_TIME_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}


def _decimal(precision: int, scale: int) -> SparkType:
    if precision > SPARK_MAX_DECIMAL_PRECISION:
        raise ValueError(f"decimal precision {precision} exceeds Unity's maximum of {SPARK_MAX_DECIMAL_PRECISION}")
    text = f"decimal({precision},{scale})"
    return SparkType("DECIMAL", text, text, precision, scale)


def spark_type(t: pa.DataType) -> SparkType:
    """The Unity/Spark type of one Arrow type."""
    if isinstance(t, pa.BaseExtensionType):  # e.g. Lance's bfloat16 or blob types: described by storage
        return spark_type(t.storage_type)
    if pat.is_boolean(t):
        return BOOLEAN
    if pat.is_integer(t):
        if t.bit_width == 64 and not pat.is_signed_integer(t):
            return _decimal(20, 0)  # every uint64 fits in 20 digits
        return _INTS[(t.bit_width, pat.is_signed_integer(t))]
    if pat.is_float16(t) or pat.is_float32(t):
        return FLOAT
    if pat.is_float64(t):
        return DOUBLE
    if pat.is_string(t) or pat.is_large_string(t) or pat.is_string_view(t):
        return STRING
    if pat.is_binary(t) or pat.is_large_binary(t) or pat.is_fixed_size_binary(t) or pat.is_binary_view(t):
        return BINARY
    if pat.is_date(t):
        return DATE
    if pat.is_timestamp(t):
        return TIMESTAMP if t.tz else TIMESTAMP_NTZ
    if pat.is_duration(t):
        return INTERVAL
    if pat.is_time(t):
        text = f"time({min(6, _TIME_DIGITS[t.unit])})"
        return SparkType("USER_DEFINED_TYPE", text, text)
    if pat.is_decimal(t):
        return _decimal(t.precision, t.scale)
    if pat.is_null(t):
        return NULL
    if pat.is_dictionary(t):
        return spark_type(t.value_type)
    if pat.is_map(t):  # before lists: a map is a list of entries in Arrow
        key, value = spark_type(t.key_type), spark_type(t.item_type)
        return SparkType(
            "MAP",
            f"map<{key.text},{value.text}>",
            {"type": "map", "keyType": key.json, "valueType": value.json, "valueContainsNull": t.item_field.nullable},
        )
    if pat.is_list(t) or pat.is_large_list(t) or pat.is_fixed_size_list(t) or pat.is_list_view(t) or pat.is_large_list_view(t):
        element = spark_type(t.value_type)
        return SparkType(
            "ARRAY",
            f"array<{element.text}>",
            {"type": "array", "elementType": element.json, "containsNull": t.value_field.nullable},
        )
    if pat.is_struct(t):
        fields = [t.field(i) for i in range(t.num_fields)]
        members = [(f, spark_type(f.type)) for f in fields]
        return SparkType(
            "STRUCT",
            "struct<" + ",".join(f"{_quote(f.name)}:{s.text}" for f, s in members) + ">",
            {"type": "struct", "fields": [_field_json(f.name, s, f.nullable) for f, s in members]},
        )
    raise ValueError(f"Arrow type {t} has no Unity Catalog column type")


def _quote(name: str) -> str:
    """Spark quotes struct member names that are not plain identifiers."""
    if name and (name[0].isalpha() or name[0] == "_") and all(c.isalnum() or c == "_" for c in name):
        return name
    return "`" + name.replace("`", "``") + "`"


def _field_json(name: str, t: SparkType, nullable: bool) -> dict:
    return {"name": name, "type": t.json, "nullable": nullable, "metadata": {}}


def column_info(field: pa.Field, position: int) -> dict:
    """One Arrow field -> a Unity ``ColumnInfo`` (JSON object)."""
    t = spark_type(field.type)
    info = {
        "name": field.name,
        "type_name": t.type_name,
        "type_text": t.text,
        "type_json": json.dumps(_field_json(field.name, t, field.nullable), separators=(",", ":")),
        "position": position,
        "nullable": field.nullable,
    }
    if t.precision is not None:
        info["type_precision"] = t.precision
        info["type_scale"] = t.scale
    if t.type_name == "INTERVAL":
        info["type_interval_type"] = "DAY TO SECOND"
    return info


def columns_from_arrow(schema: pa.Schema) -> list[dict]:
    """An Arrow schema -> Unity ``columns`` (positions from 0)."""
    return [column_info(field, i) for i, field in enumerate(schema)]
