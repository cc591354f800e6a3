"""Spark filter objects -> Lance SQL filter strings.

A filter is pushed only when its translation has exactly Spark's semantics
(three-valued logic included); anything else is left for Spark to evaluate.
"""

from __future__ import annotations

import datetime
import math
from typing import Any

from pyspark.sql.datasource import (
    EqualNullSafe,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    StringContains,
    StringEndsWith,
    StringStartsWith,
)

_COMPARE = {EqualTo: "=", GreaterThan: ">", GreaterThanOrEqual: ">=", LessThan: "<", LessThanOrEqual: "<="}
_STRING_FUNCS = {StringStartsWith: "starts_with", StringEndsWith: "ends_with", StringContains: "contains"}


class Untranslatable(Exception):
    pass


def column(path: tuple[str, ...]) -> str:
    if not path or any("`" in part for part in path):
        raise Untranslatable(path)
    return ".".join(f"`{part}`" for part in path)


def literal(value: Any) -> str:
    # bool before int: bool is an int subclass.
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise Untranslatable(value)
        return repr(value)
    if isinstance(value, str):
        # (as datasets.sql_string: a Spark worker imports this module and must not import lance_namespace)
        return "'" + value.replace("'", "''") + "'"
    # datetime is a date subclass; timestamps are left to Spark (time zones).
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return f"date '{value.isoformat()}'"
    raise Untranslatable(value)


def to_sql(f: Filter) -> str:
    """The Lance SQL for one filter; raises Untranslatable."""
    kind = type(f)
    if kind in _COMPARE:
        if f.value is None:
            raise Untranslatable(f)
        return f"{column(f.attribute)} {_COMPARE[kind]} {literal(f.value)}"
    if kind is EqualNullSafe:
        col = column(f.attribute)
        if f.value is None:
            return f"{col} IS NULL"
        # two-valued, as <=> is: false (not null) when the column is null
        return f"({col} IS NOT NULL AND {col} = {literal(f.value)})"
    if kind is In:
        if not f.value or any(v is None for v in f.value):
            raise Untranslatable(f)
        return f"{column(f.attribute)} IN ({', '.join(literal(v) for v in f.value)})"
    if kind is IsNull:
        return f"{column(f.attribute)} IS NULL"
    if kind is IsNotNull:
        return f"{column(f.attribute)} IS NOT NULL"
    if kind is Not:
        return f"NOT ({to_sql(f.child)})"
    if kind in _STRING_FUNCS:
        return f"{_STRING_FUNCS[kind]}({column(f.attribute)}, {literal(f.value)})"
    raise Untranslatable(f)


def split(filters) -> tuple[list[str], list[Filter]]:
    """(Lance SQL of the pushed filters, filters Spark must still apply)."""
    pushed, rest = [], []
    for f in filters:
        try:
            pushed.append(to_sql(f))
        except Untranslatable:
            rest.append(f)
    return pushed, rest


def conjunction(parts: list[str]) -> str | None:
    return " AND ".join(f"({p})" for p in parts) if parts else None
