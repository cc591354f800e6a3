"""Paging for every list operation, implemented once.

Tokens are keyset tokens: the last name of the previous page.  With a
sorted listing the next page starts by bisection, so enumerating N items
in pages costs O(N log N) in total, not O(N^2 / limit).
"""

from __future__ import annotations

import bisect
from abc import ABC, abstractmethod
from typing import Iterator, Sequence

from .errors import InvalidInputError


class SortedNames(ABC):
    """A listing its owner keeps sorted and unique and pages itself, so that a page
    costs O(log n + limit), not a copy of the listing (the directory namespace's
    manifest at a million tables)."""

    @abstractmethod
    def page(self, after: str | None, limit: int | None) -> tuple[list[str], bool]:
        """The names after ``after`` (from the first with None), at most ``limit`` of
        them (None: all), and whether more follow."""

    @abstractmethod
    def __iter__(self) -> Iterator[str]: ...

    @abstractmethod
    def __len__(self) -> int: ...


def check_limit(limit: object) -> int | None:
    """``None``/0 mean 'no limit'; negatives and non-integers are invalid."""
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise InvalidInputError(f"limit must be an integer, got {limit!r}")
    if limit < 0:
        raise InvalidInputError(f"limit must not be negative, got {limit}")
    return limit or None


def paginate(
    sorted_items: Sequence[str] | SortedNames, limit: object = None, page_token: str | None = None
) -> tuple[list[str], str | None]:
    """One page of an already sorted, duplicate-free listing and the next token.

    The returned token is None when the listing is complete.
    """
    n = check_limit(limit)
    if isinstance(sorted_items, SortedNames):
        page, more = sorted_items.page(page_token or None, n)
        return page, (page[-1] if more and page else None)
    start = bisect.bisect_right(sorted_items, page_token) if page_token else 0
    if n is None:
        return list(sorted_items[start:]), None
    page = list(sorted_items[start : start + n])
    more = start + n < len(sorted_items)
    return page, (page[-1] if more and page else None)


def page_of_sorted(items, limit: object = None, page_token: str | None = None):
    """Sort and de-duplicate ``items`` and return one page of them."""
    if isinstance(items, SortedNames):
        return paginate(items, limit, page_token)
    return paginate(sorted(set(items)), limit, page_token)
