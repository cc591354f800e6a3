"""The table operations over pylance (lance_ns.tableops) where the shared
scenario (checks_table_ops) does not reach: field paths, JSON data types,
nested fields, the fragment summary, and that a refused request writes nothing."""

from __future__ import annotations

import pyarrow as pa
import pytest

from lance_ns.detail import arrow_type_to_json, json_to_arrow_type
from lance_ns.errors import InvalidInputError
from lance_ns.tableops import _summary, split_field_path

from .conftest import code, ipc


def test_field_paths_split_on_dots_outside_backticks():
    assert split_field_path("a.b.c") == ["a", "b", "c"]
    assert split_field_path("`a.b`.c") == ["a.b", "c"]
    assert split_field_path("`x``y`") == ["x`y"]
    for bad in ("a..b", "`open", ".a", ""):
        with pytest.raises(InvalidInputError):
            split_field_path(bad)


@pytest.mark.parametrize("t", [pa.int32(), pa.large_string(), pa.list_(pa.float32(), 4), pa.list_(pa.int64()),
                               pa.struct([("x", pa.int8())]), pa.timestamp("us", tz="UTC"), pa.decimal128(10, 2)])
def test_json_data_types_read_back(t):
    assert json_to_arrow_type(arrow_type_to_json(t).model_dump(exclude_none=True)) == t


def test_an_unknown_json_type_is_invalid_input():
    with pytest.raises(InvalidInputError):
        json_to_arrow_type({"type": "no_such_type"})


def test_fragment_summary_uses_nearest_rank_percentiles():
    s = _summary([10, 1, 5, 7])
    assert (s.min, s.max, s.mean, s.p25, s.p50, s.p75, s.p99) == (1, 10, 5, 1, 5, 7, 10)
    assert _summary([]).max == 0


def test_nested_fields_by_path_and_refusals_write_nothing(ns):
    data = pa.table({"id": [1, 2], "s": pa.array([{"a.b": 1, "c": 2}, {"a.b": 3, "c": 4}])})
    ns.create_table({"id": ["t"]}, ipc(data))
    out = ns.update_field_metadata({"id": ["t"], "updates": [{"path": "s.`a.b`", "metadata": {"unit": "m"}}]})
    assert out.fields == {"s.`a.b`": {"unit": "m"}}
    version = ns.describe_table({"id": ["t"], "load_detailed_metadata": True}).version
    refused = [
        (ns.alter_table_add_columns, {"new_columns": [{"name": "x", "expression": "1"}, {"name": "y", "computed": "2"}]}),
        (ns.alter_table_add_columns, {"new_columns": [{"name": "x", "expression": "nope + 1"}]}),
        (ns.alter_table_alter_columns, {"alterations": [{"path": "id", "rename": "a.b"}]}),
        (ns.alter_table_alter_columns, {"alterations": [{"path": "s.c", "data_type": {"type": "utf8"}}]}),
        (ns.alter_table_drop_columns, {"columns": ["s.nope"]}),
        (ns.update_field_metadata, {"updates": [{"path": "s.a", "metadata": {"k": "v"}}]}),
        (ns.update_table_schema_metadata, {}),
        (ns.create_table_branch, {"name": "bad/name"}),
        (ns.describe_transaction, {}),
    ]
    for op, request in refused:
        assert code(op, {"id": ["t"], **request}) == 13, (op.__name__, request)
    assert ns.describe_table({"id": ["t"], "load_detailed_metadata": True}).version == version
    ns.alter_table_drop_columns({"id": ["t"], "columns": ["s.c"]})
    schema = ns.describe_table({"id": ["t"], "load_detailed_metadata": True}).var_schema
    assert [f.name for f in schema.fields[1].type.fields] == ["a.b"]
