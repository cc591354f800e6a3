import pytest
from hypothesis import given
from hypothesis import strategies as st
from lance_namespace.errors import InvalidInputError

from lance_ns.paging import page_of_sorted, paginate


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
