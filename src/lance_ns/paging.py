"""Paging for every list operation, implemented once.

Tokens are keyset tokens: the last name of the previous page.  With a
sorted listing the next page starts by bisection, so enumerating N items
in pages costs O(N log N) in total, not O(N^2 / limit).
"""

from __future__ import annotations

import base64
import binascii
import bisect
import json
import threading
import time
from abc import ABC, abstractmethod
from collections import OrderedDict
from typing import Callable, Hashable, Iterator, Sequence

from .errors import InternalError, InvalidInputError


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


#: how long a listing read whole for one page serves the continuation pages after it
CONTINUATION_TTL = 30.0


class ContinuationListings:
    """Sorted listings read whole for a page, kept for the continuation pages that follow.

    For a backend whose service cannot start a listing at a name (Glue's GetTables; the
    directory namespace keeps an object store's root listing its own way, for as long):
    without it every page of an enumeration reads the whole listing again, N / limit
    times.  A first page (no token) always reads afresh; a continuation page within
    ``ttl`` seconds of that read reuses it, so the pages of one enumeration come from one
    listing.  :meth:`forget` (this process's own writes to the key) makes the next page
    read afresh.  Another process's writes are seen by the next first page, or by a
    continuation page once ``ttl`` has passed.
    """

    def __init__(self, ttl: float = CONTINUATION_TTL, keep_names: int = 1_000_000):
        # the bound is in names, not listings (a million short names: tens of MB); the
        # newest listing is kept whatever its size
        self.ttl, self.keep_names = ttl, keep_names
        self._listings: OrderedDict[Hashable, tuple[float, list[str]]] = OrderedDict()
        self._held = 0  # names held, over all listings
        self._forgets = 0  # a read that a forget overtook is not kept (it may predate the write)
        self._lock = threading.Lock()

    def names(self, key: Hashable, continuation: bool, read: Callable[[], list[str]]) -> list[str]:
        now = time.monotonic()
        with self._lock:
            held = self._listings.get(key)
            if continuation and held is not None and now - held[0] < self.ttl:
                self._listings.move_to_end(key)
                return held[1]
            forgets = self._forgets
        names = read()
        with self._lock:
            if forgets == self._forgets:
                self._drop(key)
                self._listings[key] = (now, names)
                self._held += len(names)
                while self._held > self.keep_names and len(self._listings) > 1:
                    self._drop(next(iter(self._listings)))  # the least recently used
        return names

    def forget(self, key: Hashable) -> None:
        with self._lock:
            self._forgets += 1
            self._drop(key)

    def _drop(self, key: Hashable) -> None:
        held = self._listings.pop(key, None)
        if held is not None:
            self._held -= len(held[1])


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


def page_by_loading(
    names: Sequence[str], limit: object, page_token: str | None, load, accept
) -> tuple[list[str], str | None]:
    """One page of a sorted name listing whose items must be loaded to be judged (a
    catalog's table objects: only a loaded table tells whether it is a Lance table).

    ``load(batch)`` returns the loaded objects of the names ``batch`` (those still
    there, in any order), each with a ``name``; ``accept(obj)`` says whether it belongs in the page.
    A page of n loads n + 1 objects (the one after the page says whether the listing
    goes on), more only as far as rejected ones are skipped; the token is the page's
    last name, where the next page resumes (:func:`paginate`'s keyset tokens).
    """
    n = check_limit(limit)
    rest = names[bisect.bisect_right(names, page_token) if page_token else 0 :]
    found: list[str] = []
    while rest and (n is None or len(found) <= n):
        take = len(rest) if n is None else n + 1 - len(found)
        batch, rest = rest[:take], rest[take:]
        found += sorted(item.name for item in load(batch) if accept(item))  # (a service may load in any order)
    if n is not None and len(found) > n:
        return found[:n], found[n - 1]
    return found, None


def page_by_service(fetch, limit: object, page_token: str | None, accept) -> tuple[list[str], str | None]:
    """One page of a listing the service pages itself, in name order (Unity Catalog's
    tables: its ``page_token`` is opaque to us), without reading past the page.

    ``fetch(service_token, want)`` returns one service page (objects with a ``name``)
    and the service's next token; ``want`` is how many objects would do (None: a full
    page).  ``accept(obj)`` says whether it belongs in the page.  Our token names the
    service page the next page starts in and the last name given, so a page costs the
    service pages it spans plus one object, never the whole listing.
    """
    n = check_limit(limit)
    token, after = _service_position(page_token)
    found: list[tuple[str, str | None]] = []  # (name, the token of its service page)
    seen = {token}
    while True:
        # resuming inside a service page: a full one (how many to skip is not known)
        items, next_token = fetch(token, None if n is None or after is not None else n + 1 - len(found))
        for item in items:
            if (after is None or item.name > after) and accept(item):
                found.append((item.name, token))
                if n is not None and len(found) > n:
                    break
        if after is not None and items:  # pages overlapping the names given are read past
            after = max(after, items[-1].name)
        if not next_token or (n is not None and len(found) > n):
            break
        if next_token in seen:
            raise InternalError(f"the catalog repeated its page token {next_token!r}")
        seen.add(next_token)
        token = next_token
    if n is None or len(found) <= n:
        return [name for name, _ in found], None
    last, page = found[n - 1]
    return [name for name, _ in found[:n]], _service_token(page, last)


def page_across(parts: Sequence[str], page_of: Callable[[str, int | None, str | None], tuple[list[str], str | None]],
                limit: object, page_token: str | None) -> tuple[list[str], str | None]:
    """One page of listings that follow one another in the order of ``parts`` (the mounts of a
    ``mounts`` namespace), each paged by its own ``page_of(part, limit, token)``: a page of
    (at most, as a rule) ``limit`` items and the part's own next token (None: the part is
    done).  Our token names the part the next page starts in and that part's own token, so
    a page costs the pages of the parts it spans, never a whole listing."""
    n = check_limit(limit)
    start, token = _part_position(page_token, parts)
    found: list[str] = []
    for i in range(start, len(parts)):
        while True:
            page, token = page_of(parts[i], None if n is None else n - len(found), token)
            found += page
            if not token:
                break  # this part is done: the next one from its start
            if not page:
                raise InternalError(f"{parts[i]!r} answered an empty page that goes on")
            if n is not None and len(found) >= n:
                return found, _part_token(parts[i], token)
        if n is not None and len(found) >= n:
            return found, (_part_token(parts[i + 1], None) if i + 1 < len(parts) else None)
    return found, None


def _part_token(part: str, token: str | None) -> str:
    return _token_of([part, token])


def _part_position(page_token: str | None, parts: Sequence[str]) -> tuple[int, str | None]:
    """(the index of the part to start in, that part's own token) of our token."""
    if not page_token:
        return 0, None
    part, token = _pair_in(page_token)
    if part in parts and (token is None or isinstance(token, str)):
        return list(parts).index(part), token
    raise _not_ours(page_token)


def _token_of(pair: list) -> str:
    """A token of our own that carries a pair (a position in listings paged by others)."""
    return base64.urlsafe_b64encode(json.dumps(pair, separators=(",", ":")).encode()).decode().rstrip("=")


def _pair_in(page_token: str) -> list:
    """The pair :func:`_token_of` put in ``page_token`` (13 for a token we did not give)."""
    try:
        pair = json.loads(base64.urlsafe_b64decode(page_token + "=" * (-len(page_token) % 4)))
    except (ValueError, TypeError, binascii.Error):
        raise _not_ours(page_token) from None
    if not (isinstance(pair, list) and len(pair) == 2):
        raise _not_ours(page_token)
    return pair


def _not_ours(page_token: str) -> InvalidInputError:
    return InvalidInputError(f"page_token {page_token!r} is not one this namespace gave")


def _service_token(service_token: str | None, last: str) -> str:
    return _token_of([service_token, last])


def _service_position(page_token: str | None) -> tuple[str | None, str | None]:
    """(the service token to start at, the last name already given) of our token."""
    if not page_token:
        return None, None
    token, last = _pair_in(page_token)
    if (token is None or isinstance(token, str)) and isinstance(last, str):
        return token, last
    raise _not_ours(page_token)
