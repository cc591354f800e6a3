"""DescribeTable's detailed metadata, read from the Lance table with pylance.

Shared by every backend: the catalog stores only a location, the table
itself knows its versions, schema and statistics.
"""

from __future__ import annotations

import re

import pyarrow as pa
from lance_namespace_urllib3_client.models import (
    JsonArrowDataType,
    JsonArrowField,
    JsonArrowSchema,
    TableBasicStats,
)

from .storage import is_unreachable, unreachable_error
from .errors import (
    InvalidTableStateError,
    TableBranchNotFoundError,
    TableNotFoundError,
    TableTagNotFoundError,
    TableVersionNotFoundError,
)

_SIMPLE = {
    pa.null(): "null",
    pa.bool_(): "bool",
    pa.int8(): "int8",
    pa.int16(): "int16",
    pa.int32(): "int32",
    pa.int64(): "int64",
    pa.uint8(): "uint8",
    pa.uint16(): "uint16",
    pa.uint32(): "uint32",
    pa.uint64(): "uint64",
    pa.float16(): "float16",
    pa.float32(): "float32",
    pa.float64(): "float64",
    pa.string(): "utf8",
    pa.large_string(): "large_utf8",
    pa.binary(): "binary",
    pa.large_binary(): "large_binary",
    pa.date32(): "date32",
    pa.date64(): "date64",
}


def arrow_type_to_json(t: pa.DataType) -> JsonArrowDataType:
    if t in _SIMPLE:
        return JsonArrowDataType(type=_SIMPLE[t])
    if pa.types.is_fixed_size_list(t):
        return JsonArrowDataType(type="fixed_size_list", length=t.list_size, fields=[field_to_json(t.value_field)])
    if pa.types.is_large_list(t):
        return JsonArrowDataType(type="large_list", fields=[field_to_json(t.value_field)])
    if pa.types.is_list(t):
        return JsonArrowDataType(type="list", fields=[field_to_json(t.value_field)])
    if pa.types.is_struct(t):
        return JsonArrowDataType(type="struct", fields=[field_to_json(t.field(i)) for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return JsonArrowDataType(type="map", fields=[field_to_json(t.key_field), field_to_json(t.item_field)])
    if pa.types.is_fixed_size_binary(t):
        return JsonArrowDataType(type="fixed_size_binary", length=t.byte_width)
    if pa.types.is_dictionary(t):
        return arrow_type_to_json(t.value_type)
    # timestamps, decimals, durations...: arrow's own type string keeps unit/precision/zone
    return JsonArrowDataType(type=str(t))


_SIMPLE_BY_NAME = {name: t for t, name in _SIMPLE.items()}


#: arrow's own type strings (what arrow_type_to_json writes for parametric types) -> constructor
_PARAMETRIC = (
    (re.compile(r"timestamp\[(s|ms|us|ns)(?:, tz=(.+))?\]"), lambda unit, tz: pa.timestamp(unit, tz)),
    (re.compile(r"decimal128\((\d+), (-?\d+)\)"), lambda p, s: pa.decimal128(int(p), int(s))),
    (re.compile(r"decimal256\((\d+), (-?\d+)\)"), lambda p, s: pa.decimal256(int(p), int(s))),
    (re.compile(r"duration\[(s|ms|us|ns)\]"), pa.duration),
    (re.compile(r"time32\[(s|ms)\]"), pa.time32),
    (re.compile(r"time64\[(us|ns)\]"), pa.time64),
)


def _parametric_type(text: str) -> pa.DataType:
    for pattern, make in _PARAMETRIC:
        match = pattern.fullmatch(text)
        if match:
            return make(*match.groups())
    return pa.type_for_alias(text)


def json_to_arrow_type(value) -> pa.DataType:
    """A JSON Arrow data type (the form :func:`arrow_type_to_json` writes, as a
    dict or model) -> the Arrow type; code 13 for one it cannot read."""
    from .errors import InvalidInputError

    t = value if isinstance(value, JsonArrowDataType) else None
    try:
        if t is None:
            t = JsonArrowDataType.model_validate(value)
        name = t.type.lower()
        if name in _SIMPLE_BY_NAME:
            return _SIMPLE_BY_NAME[name]
        children = [pa.field(f.name, json_to_arrow_type(f.type), f.nullable) for f in (t.fields or [])]
        if name == "fixed_size_list" and len(children) == 1 and t.length:
            return pa.list_(children[0], t.length)
        if name in ("list", "large_list") and len(children) == 1:
            return (pa.list_ if name == "list" else pa.large_list)(children[0])
        if name == "struct":
            return pa.struct(children)
        if name == "fixed_size_binary" and t.length:
            return pa.binary(t.length)
        return _parametric_type(t.type)
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        raise InvalidInputError(f"data_type {value!r} is no Arrow type: {e}") from None


def field_to_json(f: pa.Field) -> JsonArrowField:
    meta = {k.decode(): v.decode() for k, v in (f.metadata or {}).items()} or None
    return JsonArrowField(name=f.name, nullable=f.nullable, type=arrow_type_to_json(f.type), metadata=meta)


def schema_to_json(schema: pa.Schema) -> JsonArrowSchema:
    meta = {k.decode(): v.decode() for k, v in (schema.metadata or {}).items()} or None
    return JsonArrowSchema(fields=[field_to_json(f) for f in schema], metadata=meta)


def open_dataset(location, storage_options=None, version=None, tag=None, branch=None):
    """The Lance table at ``location``, optionally on ``branch`` and at ``version`` or ``tag``.

    No table there is code 4, an unknown tag 8, an unknown version 11, an unknown branch 22.
    """
    import lance

    try:
        ds = lance.dataset(location, storage_options=storage_options or None)
    except Exception as e:  # lance reports a missing dataset with its own error types
        if is_unreachable(e):  # not "no table": the storage could not be asked
            raise unreachable_error(e, location) from None
        raise TableNotFoundError(f"no Lance table at {location!r}: {e}") from None
    return checkout(ds, location, version, tag, branch)


def checkout(ds, location, version=None, tag=None, branch=None):
    """``ds`` at ``version`` or ``tag`` (unchanged when neither is given); a
    ``version`` counts on ``branch`` when one is given (a tag names its own branch)."""
    if branch and tag is None:
        if branch not in ds.branches.list():
            raise TableBranchNotFoundError(f"branch {branch!r} of {location!r} does not exist")
        try:
            return ds.checkout_version((branch, version))
        except Exception as e:
            raise TableVersionNotFoundError(f"version {version} of branch {branch!r} of {location!r}: {e}") from None
    if tag is not None:
        try:
            return ds.checkout_version(ds.tags.get_version(tag))
        except Exception as e:
            raise TableTagNotFoundError(f"tag {tag!r} of {location!r}: {e}") from None
    if version is not None and version != ds.version:
        try:
            return ds.checkout_version(version)
        except Exception as e:
            raise TableVersionNotFoundError(f"version {version} of {location!r}: {e}") from None
    return ds


def fill_detail(resp, location, storage_options, request) -> None:
    """Fill version/schema/stats (and is_only_declared) of a DescribeTableResponse."""
    try:
        latest = open_dataset(location, storage_options)  # opened once, checked out below
    except TableNotFoundError:
        latest = None
    if request.check_declared or request.load_detailed_metadata:
        resp.is_only_declared = latest is None
    if not (request.load_detailed_metadata or request.version is not None or request.tag
            or getattr(request, "branch", None)):
        return
    if latest is None:
        raise InvalidTableStateError(f"table at {location!r} is declared but has no data yet")
    ds = checkout(latest, location, request.version, request.tag, getattr(request, "branch", None))
    resp.version = ds.version
    resp.var_schema = schema_to_json(ds.schema)
    stats = ds.stats.dataset_stats()
    resp.stats = TableBasicStats(num_deleted_rows=int(stats["num_deleted_rows"]), num_fragments=int(stats["num_fragments"]))
    resp.metadata = {k: str(v) for k, v in stats.items()}
    resp.table_uri = location
