import pytest
from hypothesis import given
from hypothesis import strategies as st
from lance_namespace.errors import InvalidInputError

from types import SimpleNamespace

from lance_ns import paging
from lance_ns.paging import (ContinuationListings, page_across, page_by_loading, page_by_service, page_of_sorted,
                             paginate)


def enumerate_all(items, limit):
    out, token = [], None
    for _ in range(len(items) + 2):
        page, token = paginate(items, limit, token)
        assert len(page) <= limit
        out += page
        if not token:
            return out
    raise AssertionError("paging did not terminate")


@given(st.sets(st.text(min_size=1, max_size=5)), st.integers(min_value=1, max_value=10))
def test_pages_cover_everything_once_in_order(names, limit):
    items = sorted(names)
    assert enumerate_all(items, limit) == items


def test_unlimited_and_zero_limit_return_everything():
    assert paginate(["a", "b"], None) == (["a", "b"], None)
    assert paginate(["a", "b"], 0) == (["a", "b"], None)


def test_exact_fit_has_no_token():
    assert paginate(["a", "b"], 2) == (["a", "b"], None)
    assert paginate(["a", "b", "c"], 2) == (["a", "b"], "b")
    assert paginate(["a", "b", "c"], 2, "b") == (["c"], None)


def test_token_between_items_and_past_the_end():
    assert paginate(["a", "c", "e"], 10, "b") == (["c", "e"], None)
    assert paginate(["a"], 10, "z") == ([], None)


@pytest.mark.parametrize("bad", [-1, "3", 1.5, True])
def test_bad_limits_are_invalid(bad):
    with pytest.raises(InvalidInputError):
        paginate(["a"], bad)


def test_page_of_sorted_dedupes():
    assert page_of_sorted(["b", "a", "b"]) == (["a", "b"], None)


def _enumerate(page, limit):
    """Every page of a paging function, following its tokens."""
    out, token = [], None
    for _ in range(1000):
        names, token = page(limit, token)
        assert limit is None or len(names) <= limit
        out += names
        if not token:
            return out
    raise AssertionError("paging did not terminate")


class FakeService:
    """A catalog that pages its objects itself in name order with opaque tokens,
    capping pages at ``cap`` and answering fewer than asked when ``short``."""

    def __init__(self, names, cap, short=False):
        self.items = [SimpleNamespace(name=n, lance=not n.startswith("x")) for n in sorted(names)]
        self.cap, self.short, self.read = cap, short, 0

    def fetch(self, token, want):
        start = int(token[3:]) if token else 0
        size = min(want or self.cap, self.cap)
        if self.short and size > 1:
            size -= 1
        page = self.items[start : start + size]
        self.read += len(page)
        end = start + len(page)
        return page, (f"tok{end}" if end < len(self.items) else None)


names_st = st.sets(st.text(alphabet="abcx", min_size=1, max_size=4), max_size=40)


@given(names_st, st.integers(min_value=1, max_value=7), st.integers(min_value=1, max_value=6), st.booleans())
def test_service_pages_cover_every_accepted_name_once_in_order(names, limit, cap, short):
    svc = FakeService(names, cap, short)
    want = sorted(n for n in names if not n.startswith("x"))
    assert _enumerate(lambda n, t: page_by_service(svc.fetch, n, t, lambda i: i.lance), limit) == want


def test_a_service_page_reads_only_the_service_pages_it_spans():
    svc = FakeService([f"t{i:04d}" for i in range(10_000)], cap=50)
    page, token = page_by_service(svc.fetch, 100, None, lambda i: True)
    assert page == [f"t{i:04d}" for i in range(100)] and token
    assert svc.read == 101  # the page and the one after it, which says the listing goes on
    svc.read = 0
    page, _ = page_by_service(svc.fetch, 100, token, lambda i: True)
    assert page == [f"t{i:04d}" for i in range(100, 200)] and svc.read <= 200


@pytest.mark.parametrize("bad", ["t0005", "not base64!", "bnVsbA"])  # a name, garbage, base64 of 'null'
def test_a_service_token_not_given_by_us_is_invalid_input(bad):
    with pytest.raises(InvalidInputError):
        page_by_service(FakeService(["a"], 5).fetch, 1, bad, lambda i: True)


def _parts(listings: dict[str, list[str]], cap: int):
    """page_of for page_across over ``listings`` (part -> sorted names), each paged with
    paginate's keyset tokens at most ``cap`` at a time; ``read`` counts names read per part."""
    read = {part: 0 for part in listings}

    def page_of(part, limit, token):
        page, next_token = paginate(listings[part], min(limit or cap, cap), token)
        read[part] += len(page)
        return page, next_token

    return page_of, read


@given(st.lists(names_st, max_size=4), st.integers(min_value=1, max_value=7), st.integers(min_value=1, max_value=6))
def test_pages_across_parts_cover_every_name_once_in_order(listings, limit, cap):
    parts = {f"p{i}": sorted(f"p{i}/{n}" for n in names) for i, names in enumerate(listings)}
    page_of, _ = _parts(parts, cap)
    want = [n for part in sorted(parts) for n in parts[part]]
    assert _enumerate(lambda n, t: page_across(sorted(parts), page_of, n, t), limit) == want
    assert page_across(sorted(parts), page_of, None, None) == (want, None)  # no limit: every part, in pages


def test_a_page_across_parts_reads_only_the_parts_it_spans():
    parts = {"a": [f"a{i:03d}" for i in range(250)], "b": ["b0"], "c": [f"c{i}" for i in range(5)]}
    page_of, read = _parts(parts, cap=1000)
    page, token = page_across(["a", "b", "c"], page_of, 100, None)
    assert page == parts["a"][:100] and token and read == {"a": 100, "b": 0, "c": 0}
    page, token = page_across(["a", "b", "c"], page_of, 200, token)  # the rest of a, then b and c
    assert page == parts["a"][100:] + ["b0"] + parts["c"] and token is None
    assert read == {"a": 250, "b": 1, "c": 5}
    page, token = page_across(["a", "b", "c"], page_of, 251, None)  # a page ending where a part does
    assert page == parts["a"] + ["b0"] and token
    assert page_across(["a", "b", "c"], page_of, 10, token) == (parts["c"], None)


@pytest.mark.parametrize("bad", ["a", "not base64!", "bnVsbA", "WyJ6IixudWxsXQ"])  # ... and ["z", null]: no such part
def test_a_token_across_parts_not_given_by_us_is_invalid_input(bad):
    page_of, _ = _parts({"a": ["a0"]}, cap=5)
    with pytest.raises(InvalidInputError):
        page_across(["a"], page_of, 1, bad)


@given(names_st, st.integers(min_value=1, max_value=7))
def test_loaded_pages_cover_every_accepted_name_once_in_order(names, limit):
    items = {n: SimpleNamespace(name=n, lance=not n.startswith("x")) for n in names}
    loaded = []

    def load(batch):
        loaded.extend(batch)
        return [items[n] for n in reversed(batch)]  # (any order)

    want = sorted(n for n in names if not n.startswith("x"))
    assert _enumerate(lambda n, t: page_by_loading(sorted(names), n, t, load, lambda i: i.lance), limit) == want
    first = page_by_loading(sorted(names), limit, None, lambda b: [items[n] for n in b], lambda i: i.lance)
    assert first[0] == want[:limit]


# -- listings kept for continuation pages (Glue) -----------------------------------------

class Reads:
    """A listing source that counts its reads and can run a write in the middle of one."""

    def __init__(self):
        self.count, self.names, self.during = 0, ["a", "b"], None

    def __call__(self):
        self.count += 1
        seen = list(self.names)
        if self.during:
            self.during()
        return seen


def test_a_continuation_page_reuses_the_listing_a_first_page_read(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(paging.time, "monotonic", lambda: now[0])
    kept, read = ContinuationListings(ttl=30), Reads()
    assert kept.names("ns", False, read) == ["a", "b"] and read.count == 1
    read.names = ["a", "b", "c"]  # another process's write: a continuation page does not see it yet
    assert kept.names("ns", True, read) == ["a", "b"] and read.count == 1
    assert kept.names("ns", False, read) == ["a", "b", "c"] and read.count == 2  # a first page reads afresh
    now[0] += 31  # too old for a continuation page
    read.names = ["a"]
    assert kept.names("ns", True, read) == ["a"] and read.count == 3
    assert kept.names("other", True, read) == ["a"] and read.count == 4  # nothing kept for it: read


def test_a_write_in_this_process_is_seen_by_the_next_page_even_mid_read():
    kept, read = ContinuationListings(), Reads()
    kept.names("ns", False, read)
    read.names = ["a", "b", "c"]
    kept.forget("ns")
    assert kept.names("ns", True, read) == ["a", "b", "c"]
    # a write that lands while a page reads: that read (maybe from before it) is not kept
    read.names = ["a", "b", "c", "d"]
    read.during = lambda: kept.forget("ns")
    assert kept.names("ns", False, read) == ["a", "b", "c", "d"]
    read.during, n = None, read.count
    kept.names("ns", True, read)
    assert read.count == n + 1


def test_the_listings_kept_are_bounded_by_their_names_the_newest_always_kept():
    kept = ContinuationListings(keep_names=5)
    for key, size in (("x", 2), ("y", 2), ("z", 3)):
        kept.names(key, False, lambda: [str(i) for i in range(size)])
    assert list(kept._listings) == ["y", "z"] and kept._held == 5
    kept.names("big", False, lambda: [str(i) for i in range(9)])
    assert list(kept._listings) == ["big"] and kept._held == 9
    kept.forget("big")
    assert not kept._listings and kept._held == 0
