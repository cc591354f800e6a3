"""The cyclic collector paused for bulk calls (lance_ns.gc_pause): back as it was after,
whatever threads overlap; no collection while a bulk declaration runs."""

import gc
import threading

import pytest

import lance_ns
from lance_ns.gc_pause import gc_paused


@pytest.fixture
def collections():
    """Every collection the collector starts in the test's own thread, by generation, while
    the test runs (one another thread starts, a server's left from an earlier test, is not
    the test's call's: while a pause holds, no thread's allocations start one)."""
    seen = []
    test_thread = threading.get_ident()

    def note(phase, info):
        if phase == "start" and threading.get_ident() == test_thread:
            seen.append(info["generation"])

    gc.callbacks.append(note)
    try:
        yield seen
    finally:
        gc.callbacks.remove(note)


def test_overlapping_pauses_resume_the_collector_only_when_the_last_ends():
    assert gc.isenabled()
    first_in, release = threading.Event(), threading.Event()

    def first():
        with gc_paused():
            first_in.set()
            release.wait(10)

    t = threading.Thread(target=first)
    t.start()
    assert first_in.wait(10)
    with gc_paused():
        assert not gc.isenabled()
    assert not gc.isenabled(), "the other thread's pause still holds"
    release.set()
    t.join(10)
    assert gc.isenabled()


def test_a_pause_leaves_a_collector_disabled_by_its_caller_disabled():
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_pause_ends_when_the_call_fails():
    with pytest.raises(ValueError):
        with gc_paused():
            raise ValueError("boom")
    assert gc.isenabled()


def _counting_from_now(collections: list) -> None:
    """Count from a collector with nothing pending (gc.collect resets its allocation count):
    allocations carried in from before would start a collection as the call begins, before
    its pause, and the one after it would make two (a CI run saw exactly that)."""
    gc.collect()
    collections.clear()


def test_a_bulk_declaration_is_not_interrupted_by_the_collector(tmp_path, collections):
    ns = lance_ns.connect("dir", {"root": str(tmp_path)})
    ns.create_namespace({"id": ["t"]})
    request = {"operations": [{"declare_table": {"id": ["t", f"x{i}"]}} for i in range(3_000)]}
    _counting_from_now(collections)
    ns.batch_commit_tables(request)
    # the allocations of 3,000 declarations start dozens of collections; paused, one runs
    # at most, as the pause ends and the collector catches up once
    assert len(collections) <= 1, f"the collector ran during the bulk call: {collections}"
    assert gc.isenabled()
    assert len(ns.list_tables({"id": ["t"], "limit": 10_000}).tables) == 3_000
    [[i] for i in range(2_000)]  # allocations after it: the collector is back
    assert collections, "the collector did not come back after the bulk call"


class _Cycle:
    def __init__(self):
        self.me = self


def test_settled_objects_are_out_of_collections_until_the_block_ends():
    import weakref

    from lance_ns.gc_pause import long_lived_frozen

    with long_lived_frozen() as settle:
        cycle = _Cycle()
        settle()
        assert gc.get_freeze_count() > 0
        gone = weakref.ref(cycle)
        del cycle
        gc.collect()
        assert gone() is not None, "a settled cycle is not collected inside the block"
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert gone() is None, "handed back to the collector at the end of the block"


def test_objects_frozen_before_the_block_stay_frozen():
    """Asked of one frozen object, not of gc.get_freeze_count(): that count falls whenever
    any thread frees a frozen object (a server's thread beside this test did)."""
    import weakref

    from lance_ns.gc_pause import long_lived_frozen

    cycle = _Cycle()
    gc.freeze()
    try:
        with long_lived_frozen() as settle:
            settle()
        gone = weakref.ref(cycle)
        del cycle
        gc.collect()
        assert gone() is not None, "the application's own freeze is not undone"
    finally:
        gc.unfreeze()


def test_a_bulk_declaration_the_server_checked_is_not_interrupted_either(tmp_path, collections):
    """The REST server's path (NamespaceBase.call_checked, the request checked by the server)
    pauses the collector as the public method does."""
    from lance_namespace import BatchCommitTablesRequest

    ns = lance_ns.connect("dir", {"root": str(tmp_path)})
    ns.create_namespace({"id": ["t"]})
    request = BatchCommitTablesRequest.model_validate(
        {"operations": [{"declare_table": {"id": ["t", f"x{i}"]}} for i in range(3_000)]})
    _counting_from_now(collections)
    ns.call_checked("batch_commit_tables", request)
    assert len(collections) <= 1, f"the collector ran during the bulk call: {collections}"
    assert len(ns.list_tables({"id": ["t"], "limit": 10_000}).tables) == 3_000
