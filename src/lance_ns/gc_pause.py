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
