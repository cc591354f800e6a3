"""Arrow -> Unity ColumnInfo: every Arrow type Lance stores, checked three ways:
the expected Unity type, the contract's ColumnInfo schema, and Spark's own
parser for ``type_json`` (pyspark's pure-Python types, no JVM)."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from pyspark.sql import types as T

from lance_ns.impls.unity_columns import columns_from_arrow, spark_type
from tests.services.unity import component_validator

STRUCT = pa.struct([pa.field("a", pa.int32(), nullable=False), ("b", pa.string()), ("odd name", pa.float64())])

# arrow type -> (type_name, type_text)
CASES = [
    (pa.bool_(), "BOOLEAN", "boolean"),
    (pa.int8(), "BYTE", "tinyint"),
    (pa.int16(), "SHORT", "smallint"),
    (pa.int32(), "INT", "int"),
    (pa.int64(), "LONG", "bigint"),
    (pa.uint8(), "SHORT", "smallint"),
    (pa.uint16(), "INT", "int"),
    (pa.uint32(), "LONG", "bigint"),
    (pa.uint64(), "DECIMAL", "decimal(20,0)"),
    (pa.float16(), "FLOAT", "float"),
    (pa.float32(), "FLOAT", "float"),
    (pa.float64(), "DOUBLE", "double"),
    (pa.string(), "STRING", "string"),
    (pa.large_string(), "STRING", "string"),
    (pa.string_view(), "STRING", "string"),
    (pa.binary(), "BINARY", "binary"),
    (pa.large_binary(), "BINARY", "binary"),
    (pa.binary(16), "BINARY", "binary"),
    (pa.date32(), "DATE", "date"),
    (pa.date64(), "DATE", "date"),
    (pa.timestamp("us"), "TIMESTAMP_NTZ", "timestamp_ntz"),
    (pa.timestamp("ns"), "TIMESTAMP_NTZ", "timestamp_ntz"),
    (pa.timestamp("ms", tz="UTC"), "TIMESTAMP", "timestamp"),
    (pa.timestamp("us", tz="Europe/Paris"), "TIMESTAMP", "timestamp"),
    (pa.time32("ms"), "USER_DEFINED_TYPE", "time(3)"),
    (pa.time64("ns"), "USER_DEFINED_TYPE", "time(6)"),
    (pa.duration("us"), "INTERVAL", "interval day to second"),
    (pa.decimal128(10, 2), "DECIMAL", "decimal(10,2)"),
    (pa.decimal256(38, 4), "DECIMAL", "decimal(38,4)"),
    (pa.null(), "NULL", "void"),
    (pa.dictionary(pa.int32(), pa.string()), "STRING", "string"),
    (pa.list_(pa.int32()), "ARRAY", "array<int>"),
    (pa.large_list(pa.string()), "ARRAY", "array<string>"),
    (pa.list_(pa.float32(), 128), "ARRAY", "array<float>"),  # a vector column
    (pa.list_(pa.field("item", pa.float16(), nullable=False), 8), "ARRAY", "array<float>"),
    (pa.list_(pa.list_(pa.int64())), "ARRAY", "array<array<bigint>>"),
    (STRUCT, "STRUCT", "struct<a:int,b:string,`odd name`:double>"),
    (pa.map_(pa.string(), pa.int64()), "MAP", "map<string,bigint>"),
    (pa.map_(pa.int32(), STRUCT), "MAP", "map<int,struct<a:int,b:string,`odd name`:double>>"),
    (pa.list_(STRUCT), "ARRAY", "array<struct<a:int,b:string,`odd name`:double>>"),
]


PARAMS = [
    pytest.param(arrow, name, text, nullable, id=f"{arrow}-{'null' if nullable else 'notnull'}")
    for arrow, name, text in CASES
    for nullable in (True, False)
    if nullable or arrow != pa.null()  # Arrow has no non-nullable null column
]


@pytest.mark.parametrize("arrow,type_name,type_text,nullable", PARAMS)
def test_column_for_each_arrow_type(arrow, type_name, type_text, nullable):
    schema = pa.schema([pa.field("first", pa.int64()), pa.field("col", arrow, nullable=nullable)])
    first, col = columns_from_arrow(schema)
    assert list(component_validator("ColumnInfo").iter_errors(col)) == []
    assert (first["position"], col["position"]) == (0, 1)
    assert col["name"] == "col" and col["nullable"] is nullable
    assert (col["type_name"], col["type_text"]) == (type_name, type_text)
    # type_json is a Spark StructField: Spark parses it back to the same type
    parsed = T.StructField.fromJson(json.loads(col["type_json"]))
    assert parsed.name == "col" and parsed.nullable is nullable
    assert parsed.dataType.simpleString() == type_text.replace("`", "")  # Spark's simpleString never quotes
    assert json.loads(parsed.json()) == json.loads(col["type_json"])
    if type_name == "DECIMAL":
        assert (col["type_precision"], col["type_scale"]) == (parsed.dataType.precision, parsed.dataType.scale)
    else:
        assert "type_precision" not in col


def test_nested_nullability_reaches_spark():
    t = pa.map_(pa.string(), pa.field("v", pa.list_(pa.field("x", pa.int32(), nullable=False)), nullable=False))
    parsed = T.StructField.fromJson(json.loads(columns_from_arrow(pa.schema([("m", t)]))[0]["type_json"]))
    assert parsed.dataType.valueContainsNull is False
    assert parsed.dataType.valueType.containsNull is False
    struct = T.StructField.fromJson(json.loads(columns_from_arrow(pa.schema([("s", STRUCT)]))[0]["type_json"])).dataType
    assert [(f.name, f.nullable) for f in struct.fields] == [("a", False), ("b", True), ("odd name", True)]


def test_extension_types_are_described_by_their_storage():
    class Uuid(pa.ExtensionType):
        def __init__(self):
            super().__init__(pa.binary(16), "test.uuid")

        def __arrow_ext_serialize__(self):
            return b""

        @classmethod
        def __arrow_ext_deserialize__(cls, storage_type, serialized):
            return cls()

    assert spark_type(Uuid()).text == "binary"


@pytest.mark.parametrize(
    "arrow",
    [pa.decimal256(60, 2), pa.dense_union([pa.field("a", pa.int32())])],
    ids=["decimal-too-wide", "union"],
)
def test_types_unity_cannot_hold_are_refused(arrow):
    with pytest.raises(ValueError, match="Unity"):
        columns_from_arrow(pa.schema([("x", arrow)]))


def test_empty_schema_has_no_columns():
    assert columns_from_arrow(pa.schema([])) == []
