"""lance-spark's full-text predicates, ``lance_match(column, query [, 'options'])`` and
``lance_match_phrase(column, query [, slop])`` (``bridge/LanceMatch.java``): the query a scan
answers with the table's full-text index, every matching row (a ``WHERE`` filter, not a
top-k search: SEARCH(...) ranks)."""

from __future__ import annotations

from typing import Any

from .errors import error

#: lance_match's options (``'fuzziness=1,operator=AND'``) and how each is read
MATCH_OPTIONS = {"fuzziness": int, "operator": str, "boost": float, "prefix_length": int, "max_expansions": int}


def _options(text: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in (text or "").split(","))):
        key, eq, value = item.partition("=")
        key = key.strip().lower()
        if not eq or key not in MATCH_OPTIONS:
            raise error("InvalidInputError", f"lance_match option {item!r}: the options are "
                                             f"{', '.join(MATCH_OPTIONS)} as 'key=value,...'")
        try:
            out[key] = MATCH_OPTIONS[key](value.strip())
        except ValueError:
            raise error("InvalidInputError", f"lance_match option {key} takes a number, got {value!r}") from None
    return out


def query(spec: dict):
    """The pylance full-text query of a pushed predicate."""
    from lance.query import FullTextOperator, MatchQuery, PhraseQuery

    if spec["kind"] == "phrase":
        slop = spec.get("options")
        return PhraseQuery(spec["query"], spec["column"], slop=int(slop) if slop not in (None, "") else 0)
    options = _options(spec.get("options"))
    if "operator" in options:
        try:
            options["operator"] = FullTextOperator(options["operator"].upper())
        except ValueError:
            raise error("InvalidInputError", "lance_match's operator is AND or OR") from None
    return MatchQuery(spec["query"], spec["column"], **options)


def indexed_columns(ds) -> set[str]:
    """The columns a full-text index of the table covers."""
    return {name for i in ds.list_indices() if str(i.get("type", "")).lower() in ("inverted", "fts")
            for name in i.get("fields", [])}


def check(ds, spec: dict) -> None:
    """Code 13 before any task runs: a column the table lacks, or one no full-text index covers."""
    if spec["column"] not in ds.schema.names:
        raise error("InvalidInputError", f"lance_match: the table has no column {spec['column']!r}")
    if spec["column"] not in indexed_columns(ds):
        raise error("InvalidInputError", f"lance_match: no full-text index covers column {spec['column']!r} "
                                         "(ALTER TABLE ... CREATE INDEX name USING fts (column))")
    query(spec)  # its options


def count(ds, spec: dict, filter_sql: str | None) -> int:
    return ds.scanner(columns=[spec["column"]], filter=filter_sql, full_text_query=query(spec)).count_rows()
