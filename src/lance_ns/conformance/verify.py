"""The verifiers the conformance checks share: small named predicates over a response
(``verify(resp, vars) -> problem or None``), for :class:`~.model.Call`'s ``verify``."""

from __future__ import annotations

from typing import Any


def exactly(field_name: str, *values: str):
    def verify(resp: dict, vars: dict) -> str | None:
        got = resp.get(field_name) or []
        return None if sorted(got) == sorted(values) else f"{field_name} is {got!r}, expected {sorted(values)!r}"

    return verify


def includes(name: str, expected: dict):
    """The response's map ``name`` holds every entry of ``expected``."""

    def verify(resp: dict, vars: dict) -> str | None:
        got = resp.get(name) or {}
        wrong = {k: got.get(k) for k, v in expected.items() if got.get(k) != v}
        return f"{name} lack {expected!r} (got {wrong!r})" if wrong else None

    return verify


def props_include(expected: dict[str, str]):
    return includes("properties", expected)


def props_exclude(key: str):
    def verify(resp: dict, vars: dict) -> str | None:
        got = resp.get("properties") or {}
        return f"property {key!r} survived an Overwrite" if key in got else None

    return verify


def has_location(resp: dict, vars: dict) -> str | None:
    return None if resp.get("location") else "no location in the response"


def same_location(var: str):
    def verify(resp: dict, vars: dict) -> str | None:
        want, got = vars.get(var), resp.get("location")
        norm = lambda s: (s or "").removeprefix("file://").rstrip("/")  # noqa: E731
        return None if norm(got) == norm(want) else f"location {got!r}, expected {want!r}"

    return verify


def page(field_name: str, n: int, more: bool, complete: tuple[str, ...] = ()):
    """A page of ``n`` items; with ``complete``, this page and "page1" are exactly those."""

    def verify(resp: dict, vars: dict) -> str | None:
        items = resp.get(field_name) or []
        token = resp.get("page_token")
        if len(items) != n:
            return f"limit gave {len(items)} items {items!r}, expected {n}"
        if more and not token:
            return "no page_token although items remain"
        if not more and token:
            return f"page_token {token!r} on the last page"
        if complete and sorted((vars.get("page1") or []) + items) != sorted(complete):
            return f"pages {vars.get('page1')!r} + {items!r} are not exactly {sorted(complete)!r}"
        return None

    return verify


def detail(version: int):
    def verify(resp: dict, vars: dict) -> str | None:
        if resp.get("version") != version:
            return f"version {resp.get('version')!r}, expected {version}"
        return None if resp.get("schema") else "no schema with load_detailed_metadata=True"

    return verify


def lists(*names: str):
    def verify(resp: dict, vars: dict) -> str | None:
        missing = [n for n in names if n not in (resp.get("tables") or [])]
        return f"{missing!r} not listed (got {resp.get('tables')!r})" if missing else None

    return verify


def lists_not(present: str, absent: str):
    def verify(resp: dict, vars: dict) -> str | None:
        got = resp.get("tables") or []
        if present not in got:
            return f"{present!r} not listed (got {got!r})"
        return f"{absent!r} listed although declared only" if absent in got else None

    return verify


def field(name: str, want: Any):
    def verify(resp: dict, vars: dict) -> str | None:
        return None if resp.get(name) == want else f"{name} is {resp.get(name)!r}, expected {want!r}"

    return verify


def has_key(name: str, key: str):
    def verify(resp: dict, vars: dict) -> str | None:
        return None if key in (resp.get(name) or {}) else f"{key!r} not in {name} {resp.get(name)!r}"

    return verify


def at_most(name: str, n: int):
    def verify(resp: dict, vars: dict) -> str | None:
        got = resp.get(name) or []
        return None if len(got) <= n else f"{len(got)} {name} although limit={n}"

    return verify


def present(name: str):
    def verify(resp: dict, vars: dict) -> str | None:
        return None if resp.get(name) else f"no {name} in the response"

    return verify


def all_of(*verifiers):
    def verify(resp: dict, vars: dict) -> str | None:
        return next((p for p in (v(resp, vars) for v in verifiers) if p), None)

    return verify


def versions_listed(resp: dict, vars: dict) -> str | None:
    versions = resp.get("versions") or []
    return None if versions else "no versions listed for a table with data"
