"""Filter translation, checked by running each translation on a real Lance
table and comparing with the filter's own semantics evaluated in Python."""

from __future__ import annotations

import datetime

import lance
import pyarrow as pa
import pytest
from pyspark.sql.datasource import (
    EqualNullSafe,
    EqualTo,
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

from lance_ns.spark import filters

ROWS = [
    {"a": 1, "s": "ab%c", "x y": 1.5, "d": datetime.date(2024, 1, 1), "b": True},
    {"a": 2, "s": "x_y", "x y": -2.0, "d": datetime.date(2024, 2, 1), "b": False},
    {"a": None, "s": None, "x y": None, "d": None, "b": None},
    {"a": 3, "s": "it's", "x y": 0.0, "d": datetime.date(2023, 12, 31), "b": True},
]


def _get(row, attr):
    return row[attr[0]]


def _cmp(op):
    return lambda f, r: None if _get(r, f.attribute) is None else op(_get(r, f.attribute), f.value)


def spark_eval(f, row):
    """Spark's three-valued semantics of a pushed filter (None = unknown)."""
    t = type(f)
    simple = {
        EqualTo: _cmp(lambda a, b: a == b),
        GreaterThan: _cmp(lambda a, b: a > b),
        GreaterThanOrEqual: _cmp(lambda a, b: a >= b),
        LessThan: _cmp(lambda a, b: a < b),
        LessThanOrEqual: _cmp(lambda a, b: a <= b),
        StringStartsWith: _cmp(lambda a, b: a.startswith(b)),
        StringEndsWith: _cmp(lambda a, b: a.endswith(b)),
        StringContains: _cmp(lambda a, b: b in a),
        In: _cmp(lambda a, b: a in b),
    }
    if t in simple:
        return simple[t](f, row)
    if t is EqualNullSafe:
        return _get(row, f.attribute) == f.value
    if t is IsNull:
        return _get(row, f.attribute) is None
    if t is IsNotNull:
        return _get(row, f.attribute) is not None
    if t is Not:
        inner = spark_eval(f.child, row)
        return None if inner is None else not inner
    raise AssertionError(t)


CASES = [
    EqualTo(("a",), 2),
    EqualTo(("s",), "it's"),
    EqualTo(("b",), True),
    Not(EqualTo(("a",), 2)),
    GreaterThan(("x y",), 0.0),
    GreaterThanOrEqual(("a",), 2),
    LessThan(("d",), datetime.date(2024, 1, 15)),
    LessThanOrEqual(("a",), -1),
    In(("a",), (1, 3)),
    Not(In(("s",), ("x_y",))),
    IsNull(("a",)),
    IsNotNull(("s",)),
    EqualNullSafe(("a",), 1),
    Not(EqualNullSafe(("a",), 1)),
    EqualNullSafe(("a",), None),
    StringStartsWith(("s",), "ab%"),
    StringEndsWith(("s",), "_y"),
    StringContains(("s",), "'"),
    Not(StringContains(("s",), "%")),
]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    table = pa.Table.from_pylist(ROWS)
    return lance.write_dataset(table, str(tmp_path_factory.mktemp("f") / "t.lance"))


@pytest.mark.parametrize("f", CASES, ids=repr)
def test_translation_matches_spark_semantics(dataset, f):
    sql = filters.to_sql(f)
    got = dataset.to_table(filter=sql, columns=["a", "s"]).to_pylist()
    want = [{"a": r["a"], "s": r["s"]} for r in ROWS if spark_eval(f, r) is True]
    assert got == want, sql


@pytest.mark.parametrize(
    "f",
    [
        EqualTo(("a",), None),
        In(("a",), (1, None)),
        GreaterThan(("x y",), float("nan")),
        EqualTo(("t",), datetime.datetime(2024, 1, 1)),
        EqualTo(("a`b",), 1),
        Not(EqualTo(("a",), [1, 2])),
    ],
    ids=repr,
)
def test_untranslatable_filters_stay_with_spark(f):
    pushed, rest = filters.split([EqualTo(("a",), 1), f])
    assert pushed == ["`a` = 1"]
    assert rest == [f]


def test_conjunction():
    assert filters.conjunction([]) is None
    assert filters.conjunction(["a", "b OR c"]) == "(a) AND (b OR c)"
