"""Checks of the data operations: indices, queries, writes, versions, tags.

Every request option of these operations is sent by some check, and every
check judges the answer, not just the absence of an error: rows returned
(ids, columns, distances), rows written (read back), what an index records
about itself.  Where an option has no effect that can be observed through
the protocol, the check's expectation says what is judged instead.

Two small tables in the scenario's namespace carry them:

* ``ix`` (32 rows, :func:`indexed_rows`): vectors ``vec[i] = [i, 1, 0, 0]``
  and ``vec2[i] = [31 - i, 1, 0, 0]``, so the nearest rows to a query are
  known exactly; two text columns with words chosen so that each full-text
  option (lower case, stemming, stop words, folding, token length,
  positions, tokenizer) changes which rows a search finds; a category and a
  label list for the scalar indices.  32 rows are enough for every vector
  index type with ``num_bits=4`` (PQ trains 16 centroids).
* ``mi`` (id -> val): merge-insert, update, delete, insert, restore, tags and
  version paging, each read back with QueryTable.
"""

from __future__ import annotations

import json
from typing import Any

from .model import NS, Call, Check, Fn
from . import verify as V

N_ROWS = 32

_TEXTS = [
    "The Quick brown fox, jumps",  # lower_case, stem (jumps), tokenizer (the comma), positions ("brown fox")
    "a café on the corner",  # ascii_folding (cafe), stop words (the)
    "supercalifragilisticexpialidocious word",  # max_token_length (34 characters)
    "brown dogs jumping",  # stem (jumping)
] + [f"row {i}" for i in range(4, N_ROWS)]


def _ipc(columns: dict[str, Any]) -> bytes:
    import pyarrow as pa

    from ..datasets import table_to_ipc_stream

    return table_to_ipc_stream(pa.table(columns))


def _vectors(rows: list[list[float]]):
    import pyarrow as pa

    flat = pa.array([x for row in rows for x in row], pa.float32())
    return pa.FixedSizeListArray.from_arrays(flat, 4)


def indexed_rows() -> bytes:
    """The ``ix`` table: see the module docstring."""
    import pyarrow as pa

    ids = list(range(N_ROWS))
    return _ipc(
        {
            "id": pa.array(ids, pa.int64()),
            "vec": _vectors([[float(i), 1.0, 0.0, 0.0] for i in ids]),
            "vec2": _vectors([[float(N_ROWS - 1 - i), 1.0, 0.0, 0.0] for i in ids]),
            "text": _TEXTS,
            "text2": _TEXTS,
            "cat": [f"c{i % 4}" for i in ids],
            "labels": [[f"l{i % 3}"] for i in ids],
        }
    )


def _new_row() -> bytes:
    """One row for ``ix`` after its vector index is built: id 100, nearer to [0, 1, 0, 0] than row 1."""
    import pyarrow as pa

    return _ipc(
        {
            "id": pa.array([100], pa.int64()),
            "vec": _vectors([[0.5, 1.0, 0.0, 0.0]]),
            "vec2": _vectors([[50.0, 1.0, 0.0, 0.0]]),
            "text": ["new row"],
            "text2": ["new row"],
            "cat": ["c9"],
            "labels": [["l9"]],
        }
    )


def _kv(rows: dict[int, int]) -> bytes:
    import pyarrow as pa

    return _ipc({"id": pa.array(list(rows), pa.int64()), "val": pa.array(list(rows.values()), pa.int64())})


# -- reading answers ---------------------------------------------------------------------


def _result(resp: dict):
    """QueryTable's answer (Arrow IPC file or stream bytes) as a pyarrow table."""
    import pyarrow as pa

    data = resp.get("value")
    if isinstance(data, str):  # a client that decoded the body as text
        data = data.encode("latin-1")
    buf = pa.py_buffer(data or b"")
    opener = pa.ipc.open_file if buf.size >= 6 and buf[:6].to_pybytes() == b"ARROW1" else pa.ipc.open_stream
    return opener(buf).read_all()


def _ids(*want: int, ordered: bool = True):
    def verify(resp: dict, vars: dict) -> str | None:
        got = _result(resp).column("id").to_pylist()
        ok = got == list(want) if ordered else sorted(got) == sorted(want)
        return None if ok else f"rows {got!r}, expected {list(want)!r}"

    return verify


def _distances(*want: float):
    def verify(resp: dict, vars: dict) -> str | None:
        t = _result(resp)
        if "_distance" not in t.column_names:
            return f"no _distance column (columns {t.column_names!r})"
        got = t.column("_distance").to_pylist()
        ok = len(got) == len(want) and all(abs(g - w) < 1e-3 for g, w in zip(got, want))
        return None if ok else f"distances {got!r}, expected {list(want)!r}"

    return verify


def _num_rows(n: int):
    def verify(resp: dict, vars: dict) -> str | None:
        got = _result(resp).num_rows
        return None if got == n else f"{got} rows, expected {n}"

    return verify


def _columns(*want: str, also: tuple[str, ...] = ()):
    """Exactly ``want`` (plus any of ``also``, columns the query itself adds)."""

    def verify(resp: dict, vars: dict) -> str | None:
        got = _result(resp).column_names
        ok = set(want) <= set(got) <= set(want) | set(also)
        return None if ok else f"columns {got!r}, expected {list(want)!r}"

    return verify


def _values(rows: dict[int, int]):
    """The ``mi`` table holds exactly these id -> val rows."""

    def verify(resp: dict, vars: dict) -> str | None:
        t = _result(resp)
        got = dict(zip(t.column("id").to_pylist(), t.column("val").to_pylist()))
        return None if got == rows else f"rows {dict(sorted(got.items()))!r}, expected {rows!r}"

    return verify




def _kind(text: str | None) -> str:
    """``IVF_PQ``, ``BTree``, ``LabelList``... compared without case or underscores."""
    return (text or "").replace("_", "").lower()


def _alike(name: str, want: str):
    """A type or metric name, compared without case or underscores (IVF_PQ ~ IvfPq, l2 ~ L2)."""

    def verify(resp: dict, vars: dict) -> str | None:
        return None if _kind(resp.get(name)) == _kind(want) else f"{name} is {resp.get(name)!r}, expected {want}"

    return verify


def _unlisted(name: str):
    def verify(resp: dict, vars: dict) -> str | None:
        listed = any(i.get("index_name") == name for i in resp.get("indexes") or [])
        return f"index {name!r} is listed" if listed else None

    return verify


def _leaves(node: Any, key: str = ""):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, str(k))
    elif isinstance(node, list):
        for v in node:
            yield from _leaves(v, key)
    else:
        yield key, node


def _details_say(details: str | None, keys: tuple[str, ...], want: Any) -> bool:
    """Whether the index's JSON details record ``want`` under a key ending in one of ``keys``."""
    try:
        parsed = json.loads(details or "null")
    except ValueError:
        return False
    return any(k.lower().endswith(keys) and str(v).lower() == str(want).lower() for k, v in _leaves(parsed))


#: request option -> the keys Lance's index details record it under
_DETAIL_KEYS = {
    "distance_type": ("metric_type",),
    "num_sub_vectors": ("num_sub_vectors",),
    "num_bits": ("num_bits", "nbits"),
    "sample_rate": ("sample_rate",),
    "max_iterations": ("max_iters",),
    "target_partition_size": ("target_partition_size",),
    "m": ("max_connections", "m"),
    "ef_construction": ("construction_ef", "ef_construction"),
}


def _index(name: str, column: str, kind: str, **recorded: Any):
    """ListTableIndices lists ``name`` on ``column`` with type ``kind``, and its
    ``index_details`` (the spec: the index's parameters) record ``recorded``."""

    def verify(resp: dict, vars: dict) -> str | None:
        found = {i.get("index_name"): i for i in resp.get("indexes") or []}
        index = found.get(name)
        if index is None:
            return f"index {name!r} not listed (got {sorted(found)!r})"
        if index.get("columns") != [column]:
            return f"index {name!r} is on {index.get('columns')!r}, expected [{column!r}]"
        if _kind(index.get("index_type")) != _kind(kind):
            return f"index {name!r} has type {index.get('index_type')!r}, expected {kind}"
        missing = {
            option: value
            for option, value in recorded.items()
            if not _details_say(index.get("index_details"), _DETAIL_KEYS.get(option, (option,)), value)
        }
        return f"index_details {index.get('index_details')!r} do not record {missing!r}" if missing else None

    return verify


def _index_names(*names: str):
    def verify(resp: dict, vars: dict) -> str | None:
        got = sorted(i.get("index_name") for i in resp.get("indexes") or [])
        return None if got == sorted(names) else f"indices {got!r}, expected {sorted(names)!r}"

    return verify


def _names(value, key: str | None) -> list:
    """A listing's item names: a dict's keys, or each item's ``key``."""
    return list(value) if isinstance(value, dict) else [v.get(key) if key else v for v in value or []]


def _paged(op: str, table: str, field: str, key: str | None, limit: int) -> tuple[Call, ...]:
    """The whole listing, then a page of ``limit`` items with a page_token, the token
    giving the rest without one, both pages together exactly the whole listing."""
    whole, first = f"{op}_whole", f"{op}_first"

    def has_more(resp: dict, vars: dict) -> str | None:
        got = _names(resp.get(field), key)
        return None if len(got) > limit else f"{got!r}: not more than limit={limit} items to page through"

    def page(last: bool):
        def verify(resp: dict, vars: dict) -> str | None:
            got, listing = _names(resp.get(field), key), _names(vars.get(whole), key)
            n = len(listing) - limit if last else limit
            if len(got) != n or bool(resp.get("page_token")) == last:
                return f"page {got!r} with page_token {resp.get('page_token')!r}: expected {n} items, more={not last}"
            pages = sorted(_names(vars.get(first), key) + got) if last else None
            return None if not last or pages == sorted(listing) else f"pages {pages!r} are not the listing {listing!r}"

        return verify

    ident = {"id": _id(table)}
    return (
        Call(op, ident, save={whole: field}, verify=has_more),
        Call(op, {**ident, "limit": limit}, verify=page(False), save={f"{op}_token": "page_token", first: field}),
        Call(op, {**ident, "limit": 1000, "page_token": "{%s_token}" % op}, verify=page(True)),
    )


def _newer(var: str):
    def verify(resp: dict, vars: dict) -> str | None:
        latest = max((v.get("version", 0) for v in resp.get("versions") or []), default=0)
        return None if latest > (vars.get(var) or 0) else f"latest version {latest}, not above {vars.get(var)}"

    return verify



# -- requests ----------------------------------------------------------------------------


def _id(name: str) -> list[str]:
    return [NS, name]


def _query(table: str, vector: list[float] | None = None, k: int = 100, **options: Any) -> dict:
    """A QueryTable request; a vector search names its column (``vec`` unless given)."""
    if vector:
        options.setdefault("vector_column", "vec")
    return {"id": _id(table), "vector": {"single_vector": vector} if vector else {}, "k": k, **options}


def _fts(column: str, text: str) -> dict:
    return _query("ix", k=N_ROWS, full_text_query={"string_query": {"query": text, "columns": [column]}},
                  columns={"column_names": ["id"]})


def _phrase(column: str, terms: str) -> dict:
    return _query("ix", k=N_ROWS, columns={"column_names": ["id"]},
                  full_text_query={"structured_query": {"query": {"phrase": {"terms": terms, "column": column}}}})


def _rows_are(rows: dict[int, int]) -> Call:
    return Call("QueryTable", _query("mi", columns={"column_names": ["id", "val"]}), verify=_values(rows))


_Q = [0.0, 1.0, 0.0, 0.0]  # nearest: row 0 (distance 0), 1 (1), 2 (4): vec[i] = [i, 1, 0, 0], squared L2

#: every vector-index build option, refused by the scalar endpoint all together
_VECTOR_OPTIONS = {"distance_type": "l2", "num_partitions": 2, "num_sub_vectors": 2, "num_bits": 4,
                   "sample_rate": 8, "max_iterations": 4, "target_partition_size": 16, "m": 4,
                   "ef_construction": 16}
_FTS_ON = {"with_position": True, "base_tokenizer": "simple", "language": "English", "max_token_length": 20,
           "lower_case": True, "stem": True, "remove_stop_words": True, "ascii_folding": True}
_FTS_OFF = {"with_position": False, "base_tokenizer": "whitespace", "language": "English", "max_token_length": 40,
            "lower_case": False, "stem": False, "remove_stop_words": False, "ascii_folding": False}


def _data(name: str, operation: str, expectation: str, *steps, after: str | None = "data.create.indexed",
          setup: tuple = ()) -> Check:
    return Check(name, operation, expectation, tuple(steps), setup=setup, needs=frozenset({"data"}),
                 optional=True, after=after)


def _merge(name: str, expectation: str, options: dict, source: dict[int, int], counts: dict[str, int],
           rows: dict[int, int], after: str) -> Check:
    """MergeInsertIntoTable on ``mi`` by id: the counts it answers, then the rows read back."""
    merge = Call("MergeInsertIntoTable", {"id": _id("mi"), "on": ["id"], **options}, data=_kv(source),
                 verify=V.all_of(*(V.field(k, v) for k, v in counts.items())))
    return _data(name, "MergeInsertIntoTable", expectation, merge, _rows_are(rows), after=after)


def _update_properties(run) -> str | None:
    """UpdateTable with properties: stored (DescribeTable shows them) or refused whole (code 0, no row changed)."""
    from ..errors import LanceNamespaceError

    request = {"id": _id("mi"), "predicate": "id = 1", "updates": [["val", "val + 100"]], "properties": {"tier": "gold"}}
    try:
        run.call("UpdateTable", request)
    except LanceNamespaceError as e:
        if int(e.code) != 0:
            return f"UpdateTable with properties: code {int(e.code)} ({e}), expected success or code 0"
        rows = _result(run.call("QueryTable", _query("mi", filter="id = 1", columns={"column_names": ["id", "val"]})))
        return None if rows.column("val").to_pylist() == [11] else "a refused UpdateTable changed rows"
    run.call("UpdateTable", {"id": _id("mi"), "predicate": "id = 1", "updates": [["val", "val - 100"]]})
    props = run.call("DescribeTable", {"id": _id("mi")}).get("properties") or {}
    return None if props.get("tier") == "gold" else f"UpdateTable accepted properties but DescribeTable shows {props!r}"


def data_checks() -> list[Check]:
    """The data-operation checks, in order (later ones build on earlier ones' tables)."""
    return [
        # -- the indexed table
        _data(
            "data.create.indexed",
            "CreateTable",
            "creates a 32-row table with properties (described afterwards) and storage_options "
            "(passed to Lance for the write: no effect that can be seen on these stores; judged: accepted, "
            "the rows written)",
            Call("CreateTable", {"id": _id("ix"), "mode": "Create", "properties": {"suite": "data"},
                                 "storage_options": {"allow_http": "true"}}, data=indexed_rows(),
                 verify=V.field("version", 1)),
            Call("DescribeTable", {"id": _id("ix")}, verify=V.props_include({"suite": "data"})),
            Call("QueryTable", _query("ix", columns={"column_names": ["id"]}), verify=_num_rows(N_ROWS)),
            after="table.create",
        ),
        _data(
            "data.index.ivf_pq",
            "CreateTableIndex",
            "an IVF_PQ index is listed on its column with its type",
            Call("CreateTableIndex", {"id": _id("ix"), "column": "vec", "index_type": "IVF_PQ", "name": "vec_pq",
                                      "distance_type": "l2", "num_partitions": 2, "num_sub_vectors": 2,
                                      "num_bits": 4, "sample_rate": 8, "max_iterations": 4}),
            Call("ListTableIndices", {"id": _id("ix")}, verify=_index("vec_pq", "vec", "IVF_PQ")),
        ),
        _data(
            "data.index.ivf_pq.options",
            "CreateTableIndex",
            "the IVF_PQ index's index_details record distance_type, num_sub_vectors, num_bits, sample_rate and "
            "max_iterations as given (num_partitions: Lance's IVF_PQ details do not keep it, judged by acceptance)",
            Call("ListTableIndices", {"id": _id("ix")},
                 verify=_index("vec_pq", "vec", "IVF_PQ", distance_type="l2", num_sub_vectors=2, num_bits=4,
                               sample_rate=8, max_iterations=4)),
            after="data.index.ivf_pq",
        ),
        _data(
            "data.index.invalid",
            "CreateTableIndex",
            "num_sub_vectors not dividing the dimension, an unknown index type -> code 13; "
            "an existing name -> code 7 TableIndexAlreadyExists; nothing is created",
            Call("CreateTableIndex", {"id": _id("ix"), "column": "vec", "index_type": "IVF_PQ", "name": "bad_pq",
                                      "num_partitions": 2, "num_sub_vectors": 3}, expect=13),
            Call("CreateTableIndex", {"id": _id("ix"), "column": "vec", "index_type": "NO_SUCH_INDEX", "name": "bad"},
                 expect=13),
            Call("CreateTableIndex", {"id": _id("ix"), "column": "vec", "index_type": "IVF_FLAT", "name": "vec_pq",
                                      "num_partitions": 2}, expect=7),
            Call("ListTableIndices", {"id": _id("ix")}, verify=_index_names("vec_pq")),
            after="data.index.ivf_pq",
        ),
        _data(
            "data.index.hnsw",
            "CreateTableIndex",
            "IVF_HNSW_SQ with m and ef_construction: both recorded in index_details",
            Call("CreateTableIndex", {"id": _id("ix"), "column": "vec2", "index_type": "IVF_HNSW_SQ",
                                      "name": "vec2_hnsw", "distance_type": "l2", "num_partitions": 1, "m": 6,
                                      "ef_construction": 20}),
            Call("ListTableIndices", {"id": _id("ix")},
                 verify=_index("vec2_hnsw", "vec2", "IVF_HNSW_SQ", distance_type="l2", m=6, ef_construction=20)),
        ),
        _data(
            "data.index.drop",
            "DropTableIndex",
            "a query with ef on the HNSW index finds the nearest rows; DropTableIndex removes the index "
            "(no longer listed; dropping again -> code 6)",
            Call("QueryTable", _query("ix", _Q, k=2, vector_column="vec2", ef=8, columns={"column_names": ["id"]}),
                 verify=_ids(31, 30)),
            Call("DropTableIndex", {"id": _id("ix"), "index_name": "vec2_hnsw"}),
            Call("ListTableIndices", {"id": _id("ix")}, verify=_unlisted("vec2_hnsw")),
            Call("DropTableIndex", {"id": _id("ix"), "index_name": "vec2_hnsw"}, expect=6),
            after="data.index.ivf_pq",
        ),
        _data(
            "data.index.ivf_flat",
            "CreateTableIndex",
            "IVF_FLAT with target_partition_size and distance_type=cosine: both recorded in index_details; "
            "DescribeTableIndexStats gives distance type cosine",
            Call("CreateTableIndex", {"id": _id("ix"), "column": "vec2", "index_type": "IVF_FLAT",
                                      "name": "vec2_flat", "distance_type": "cosine", "target_partition_size": 8}),
            Call("ListTableIndices", {"id": _id("ix")},
                 verify=_index("vec2_flat", "vec2", "IVF_FLAT", distance_type="cosine", target_partition_size=8)),
            Call("DescribeTableIndexStats", {"id": _id("ix"), "index_name": "vec2_flat"},
                 verify=_alike("distance_type", "cosine")),
        ),
        _data(
            "data.index.scalar",
            "CreateTableScalarIndex",
            "BTREE, BITMAP and LABEL_LIST indices are listed on their columns with their types; "
            "a filter on the bitmap-indexed column finds its 8 rows",
            Call("CreateTableScalarIndex", {"id": _id("ix"), "column": "id", "index_type": "BTREE", "name": "id_btree"}),
            Call("CreateTableScalarIndex", {"id": _id("ix"), "column": "cat", "index_type": "BITMAP", "name": "cat_bitmap"}),
            Call("CreateTableScalarIndex", {"id": _id("ix"), "column": "labels", "index_type": "LABEL_LIST",
                                            "name": "labels_list"}),
            Call("ListTableIndices", {"id": _id("ix")},
                 verify=V.all_of(_index("id_btree", "id", "BTREE"), _index("cat_bitmap", "cat", "BITMAP"),
                             _index("labels_list", "labels", "LABEL_LIST"))),
            Call("QueryTable", _query("ix", filter="cat = 'c1'", columns={"column_names": ["id"]}),
                 verify=_ids(*range(1, N_ROWS, 4), ordered=False)),
        ),
        _data(
            "data.index.scalar.refuses_vector",
            "CreateTableScalarIndex",
            "a vector index type with every vector build option through the scalar endpoint -> code 13, "
            "nothing created",
            Call("CreateTableScalarIndex", {"id": _id("ix"), "column": "vec", "index_type": "IVF_PQ",
                                            "name": "vec_scalar", **_VECTOR_OPTIONS}, expect=13),
            Call("ListTableIndices", {"id": _id("ix")}, verify=_unlisted("vec_scalar")),
        ),
        _data(
            "data.index.fts",
            "CreateTableScalarIndex",
            "full-text indices with every option set (scalar endpoint) and every option unset "
            "(CreateTableIndex, FTS): index_details record each option",
            Call("CreateTableScalarIndex", {"id": _id("ix"), "column": "text", "index_type": "INVERTED",
                                            "name": "fts_on", **_FTS_ON}),
            Call("CreateTableIndex", {"id": _id("ix"), "column": "text2", "index_type": "FTS", "name": "fts_off",
                                      **_FTS_OFF}),
            Call("ListTableIndices", {"id": _id("ix")},
                 verify=V.all_of(_index("fts_on", "text", "INVERTED", **_FTS_ON),
                             _index("fts_off", "text2", "INVERTED", **_FTS_OFF))),
        ),
        _data(
            "data.query.fts.options",
            "QueryTable",
            "each full-text option set against Lance's default changes what a search finds: with_position "
            "(a structured phrase query; without positions -> code 13), max_token_length (a 34-letter word "
            "is dropped), remove_stop_words=false (the), lower_case=false (Quick), stem=false (jumps), "
            "ascii_folding=false (café), base_tokenizer=whitespace ('fox,' stays one token)",
            # each option where it differs from Lance's default: fts_on sets positions and a short
            # max_token_length, fts_off turns the rest off; "the" and the phrase find rows (the indices work)
            Call("QueryTable", _phrase("text", "brown fox"), verify=_ids(0)),
            Call("QueryTable", _phrase("text2", "brown fox"), expect=13),
            Call("QueryTable", _fts("text", "supercalifragilisticexpialidocious"), verify=_ids()),
            Call("QueryTable", _fts("text2", "the"), verify=_ids(1)),
            Call("QueryTable", _fts("text2", "quick"), verify=_ids()),
            Call("QueryTable", _fts("text2", "jump"), verify=_ids()),
            Call("QueryTable", _fts("text2", "cafe"), verify=_ids()),
            Call("QueryTable", _fts("text2", "fox"), verify=_ids()),
            after="data.index.fts",
        ),
        _data(
            "data.indices.list",
            "ListTableIndices",
            "limit=4 gives 4 indices and a page_token, the token the others and no token, together exactly "
            "the unpaged listing; version=1 (before any index) lists none",
            *_paged("ListTableIndices", "ix", "indexes", "index_name", 4),
            Call("ListTableIndices", {"id": _id("ix"), "version": 1}, verify=_index_names()),
            after="data.index.fts",
        ),
        _data(
            "data.index.stats",
            "DescribeTableIndexStats",
            "the IVF_PQ index's type, distance type and 32 indexed rows; the index at a version before it "
            "existed, or a missing index -> code 6 TableIndexNotFound",
            Call("DescribeTableIndexStats", {"id": _id("ix"), "index_name": "vec_pq"},
                 verify=V.all_of(_alike("index_type", "IVF_PQ"), _alike("distance_type", "l2"),
                             V.field("num_indexed_rows", N_ROWS))),
            Call("DescribeTableIndexStats", {"id": _id("ix"), "index_name": "vec_pq", "version": 1}, expect=6),
            Call("DescribeTableIndexStats", {"id": _id("ix"), "index_name": "no_such_index"}, expect=6),
            after="data.index.ivf_pq",
        ),
        # -- queries (the IVF_PQ index on vec is in place)
        _data(
            "data.query.vector",
            "QueryTable",
            "the k nearest rows with their distances: exact with bypass_vector_index; through the index "
            "with refine_factor and nprobes, or minimum/maximum_nprobes; minimum_nprobes > maximum_nprobes -> code 13",
            Call("QueryTable", _query("ix", _Q, k=3, bypass_vector_index=True),
                 verify=V.all_of(_ids(0, 1, 2), _distances(0.0, 1.0, 4.0))),
            Call("QueryTable", _query("ix", _Q, k=3, refine_factor=5, nprobes=2), verify=_ids(0, 1, 2)),
            Call("QueryTable", _query("ix", _Q, k=3, refine_factor=5, minimum_nprobes=1, maximum_nprobes=2),
                 verify=_ids(0, 1, 2)),
            Call("QueryTable", _query("ix", _Q, k=3, minimum_nprobes=2, maximum_nprobes=1), expect=13),
            after="data.index.ivf_pq",
        ),
        _data(
            "data.query.distance_type",
            "QueryTable",
            "distance_type changes the answer: nearest to [1,0,0,0] is row 1 under l2 and row 31 under cosine",
            Call("QueryTable", _query("ix", [1.0, 0.0, 0.0, 0.0], k=1, distance_type="l2", bypass_vector_index=True),
                 verify=_ids(1)),
            Call("QueryTable", _query("ix", [1.0, 0.0, 0.0, 0.0], k=1, distance_type="cosine"), verify=_ids(31)),
        ),
        _data(
            "data.query.filter",
            "QueryTable",
            "filter 'id >= 10': prefilter=True gives the 3 nearest matching rows, prefilter=False filters "
            "the 3 nearest rows (none match)",
            Call("QueryTable", _query("ix", _Q, k=3, filter="id >= 10", prefilter=True, bypass_vector_index=True),
                 verify=_ids(10, 11, 12)),
            Call("QueryTable", _query("ix", _Q, k=3, filter="id >= 10", prefilter=False, bypass_vector_index=True),
                 verify=_ids()),
        ),
        _data(
            "data.query.distance_range",
            "QueryTable",
            "lower_bound=1, upper_bound=5 keeps the rows at distance 1 and 4 (not 0, not 9)",
            Call("QueryTable", _query("ix", _Q, k=10, lower_bound=1, upper_bound=5, bypass_vector_index=True),
                 verify=_ids(1, 2)),
        ),
        _data(
            "data.query.vector_column",
            "QueryTable",
            "vector_column=vec2 searches that column (nearest row 31), not the first vector column (row 0)",
            Call("QueryTable", _query("ix", _Q, k=1, vector_column="vec2", bypass_vector_index=True), verify=_ids(31)),
        ),
        _data(
            "data.query.scan",
            "QueryTable",
            "without a vector: k rows after offset, the columns asked for (by name or alias), "
            "with_row_id adds the row id",
            Call("QueryTable", _query("ix", k=2, offset=3, columns={"column_names": ["id", "cat"]}),
                 verify=V.all_of(_ids(3, 4), _columns("id", "cat"))),
            Call("QueryTable", _query("ix", k=1, with_row_id=True, columns={"column_aliases": {"ident": "id"}}),
                 verify=_columns("ident", "_rowid")),
        ),
        _data(
            "data.insert.append",
            "InsertIntoTable",
            "mode=Append adds a row (num_inserted_rows 1); fast_search skips it (not indexed yet) while a "
            "normal search finds it; version=1 still has the 32 original rows",
            Call("InsertIntoTable", {"id": _id("ix"), "mode": "Append"}, data=_new_row(),
                 verify=V.field("num_inserted_rows", 1)),
            Call("QueryTable", _query("ix", _Q, k=2, refine_factor=5, nprobes=2, columns={"column_names": ["id"]}),
                 verify=_ids(0, 100)),
            Call("QueryTable", _query("ix", _Q, k=2, refine_factor=5, nprobes=2, fast_search=True,
                                      columns={"column_names": ["id"]}), verify=_ids(0, 1)),
            Call("QueryTable", _query("ix", version=1, columns={"column_names": ["id"]}), verify=_num_rows(N_ROWS)),
            after="data.index.ivf_pq",
        ),
        # -- writes on a small id -> val table, each read back
        _data(
            "data.create.kv",
            "CreateTable",
            "creates the id -> val table the write checks use",
            Call("CreateTable", {"id": _id("mi"), "mode": "Create"}, data=_kv({1: 10, 2: 20, 3: 30})),
            after="table.create",
        ),
        _merge(
            "data.merge.upsert",
            "on id, when_matched_update_all + when_not_matched_insert_all (timeout 30s, use_index false): "
            "1 updated, 1 inserted, the rows read back",
            {"when_matched_update_all": True, "when_not_matched_insert_all": True, "timeout": "30s", "use_index": False},
            {2: 21, 4: 40}, {"num_updated_rows": 1, "num_inserted_rows": 1}, {1: 10, 2: 21, 3: 30, 4: 40},
            after="data.create.kv",
        ),
        _merge(
            "data.merge.update_filter",
            "when_matched_update_all_filt 'target.id = 1' updates only that matched row; no insert without "
            "when_not_matched_insert_all",
            {"when_matched_update_all": True, "when_matched_update_all_filt": "target.id = 1"},
            {1: 11, 3: 31, 5: 50}, {"num_updated_rows": 1, "num_inserted_rows": 0}, {1: 11, 2: 21, 3: 30, 4: 40},
            after="data.merge.upsert",
        ),
        _merge(
            "data.merge.delete_unmatched",
            "when_not_matched_by_source_delete with filter 'id > 3' deletes only row 4 of the rows the "
            "source lacks",
            {"when_not_matched_by_source_delete": True, "when_not_matched_by_source_delete_filt": "id > 3"},
            {1: 11, 2: 21}, {"num_deleted_rows": 1}, {1: 11, 2: 21, 3: 30},
            after="data.merge.update_filter",
        ),
        _data(
            "data.update",
            "UpdateTable",
            "updates [val, val + 1] where 'id = 3': 1 row updated, read back",
            Call("UpdateTable", {"id": _id("mi"), "predicate": "id = 3", "updates": [["val", "val + 1"]]},
                 verify=V.field("updated_rows", 1)),
            _rows_are({1: 11, 2: 21, 3: 31}),
            after="data.merge.delete_unmatched",
        ),
        Check(
            "data.update.properties",
            "UpdateTable",
            "properties (stored on the table if the implementation supports it): DescribeTable shows them, "
            "or the whole request is refused with code 0 and no row changes",
            (Fn(_update_properties, exercises=("UpdateTable.properties",)),),
            needs=frozenset({"data"}),
            after="data.update",
        ),
        _data(
            "data.delete",
            "DeleteFromTable",
            "deletes the rows of predicate 'id = 2', read back",
            Call("DeleteFromTable", {"id": _id("mi"), "predicate": "id = 2"}),
            _rows_are({1: 11, 3: 31}),
            after="data.update",
        ),
        _data(
            "data.insert.overwrite",
            "InsertIntoTable",
            "mode=Overwrite replaces every row; mode=Append then adds one",
            Call("InsertIntoTable", {"id": _id("mi"), "mode": "Overwrite"}, data=_kv({7: 70}),
                 verify=V.field("num_inserted_rows", 1)),
            Call("InsertIntoTable", {"id": _id("mi"), "mode": "Append"}, data=_kv({8: 80})),
            _rows_are({7: 70, 8: 80}),
            after="data.create.kv",
        ),
        _data(
            "data.versions.paging",
            "ListTableVersions",
            "limit=3 gives 3 versions and a page_token; the token gives the rest, no token; together "
            "exactly the unpaged listing",
            *_paged("ListTableVersions", "mi", "versions", "version", 3),
            after="data.insert.overwrite",
        ),
        _data(
            "data.restore",
            "RestoreTable",
            "restoring version 1 brings back its rows, as a new version",
            Call("DescribeTable", {"id": _id("mi"), "load_detailed_metadata": True}, save={"before": "version"}),
            Call("RestoreTable", {"id": _id("mi"), "version": 1}),
            _rows_are({1: 10, 2: 20, 3: 30}),
            Call("ListTableVersions", {"id": _id("mi")}, verify=_newer("before")),
            after="data.insert.overwrite",
        ),
        _data(
            "data.tags.paging",
            "ListTableTags",
            "two tags, limit=1: 1 tag and a page_token, the token the other and no token, together "
            "exactly the unpaged listing",
            *_paged("ListTableTags", "mi", "tags", None, 1),
            setup=tuple(Call("CreateTableTag", {"id": _id("mi"), "tag": t, "version": 1}) for t in ("ta", "tb")),
            after="data.create.kv",
        ),
        _data(
            "data.merge.bad_timeout",
            "MergeInsertIntoTable",
            "a timeout that is no duration -> code 13, nothing written",
            Call("MergeInsertIntoTable", {"id": _id("mi"), "on": ["id"], "when_not_matched_insert_all": True,
                                          "timeout": "soon"}, data=_kv({9: 90}), expect=13),
            _rows_are({1: 10, 2: 20, 3: 30}),
            after="data.restore",
        ),
        # -- metadata options of table creation
        Check(
            "data.declare.location",
            "DeclareTable",
            "a table declared at a given location is described there",
            (
                Call("DeclareTable", {"id": _id("loc_b"), "location": "{loc_a}"}, verify=V.same_location("loc_a")),
                Call("DescribeTable", {"id": _id("loc_b")}, verify=V.same_location("loc_a")),
            ),
            setup=(Call("DeclareTable", {"id": _id("loc_a")}, save={"loc_a": "location"}),
                   Call("DropTable", {"id": _id("loc_a")})),
        ),
    ]
