"""Python's cyclic garbage collector paused while a call builds many objects at once.

The collector runs each time allocations of container objects outnumber deallocations by
a few hundred, and every few such runs it walks every tracked object of the process: at
a million tables, the manifest's million entries.  A bulk declaration allocates a few
dozen containers per table, nearly all freed by reference counting as they go; the walks
their allocations trigger, not garbage, were 40-60% of its time (measured at 100,000
tables: 7,600-9,500 declarations/s planned and committed, 15,000-27,000/s with the
collector paused).  Loading the manifest (a million entries built in a row) is the same
case.  Reference counting still frees everything meanwhile; only cycles wait for the end
of the pause.  (Mercurial's ``util.nogc`` is the same remedy for the same cost.)

A pause covers the library's own allocations only.  A caller building batch after batch
of requests makes the collector walk everything its process holds every batch or two:
~140k objects from the imports alone (lance_namespace's models are half) and the
manifest's sorted index, ~180 ms a walk at a million tables.  That is an application's
to settle, not a library's: :func:`long_lived_frozen` is what ``lance-ns table declare
--from`` does between its batches.
"""

from __future__ import annotations

import contextlib
import gc
import threading

_lock = threading.Lock()
_depth = 0  # pauses in progress, over every thread: the collector is the process's
_resume = False  # whether the collector was enabled when the first of them began


@contextlib.contextmanager
def gc_paused():
    """The collector off for the block (and as a decorator, for the call); back as it
    was once the last overlapping pause in any thread ends."""
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()


@contextlib.contextmanager
def long_lived_frozen():
    """For an application's bulk: yields ``settle``, which keeps every object alive at that
    moment out of the collector's walks (:func:`gc.freeze`: one step, whatever their
    number); call it after start-up and between batches.  Reference counting still frees
    what is dropped; a cycle among the settled objects waits for the end of the block,
    where they are handed back to the collector -- unless something froze objects before
    it began (a server that forks, say), which then keeps them frozen as it chose."""
    frozen_before = gc.get_freeze_count() > 0
    try:
        yield gc.freeze
    finally:
        if not frozen_before:
            gc.unfreeze()
