"""What every benchmark here times with: one timing loop, one interleaving of two peers.

The scripts run as ``python benchmarks/bench_X.py``, so this directory is on
``sys.path`` and they ``from common import ...``.  The machine is shared and
noisy: compare medians of a peer timed in the same run (``timed_pair`` alternates
the two so both see the same load), never absolute numbers from another run.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def timed(fn: Callable[[], object], repeat: int = 1) -> list[float]:
    """Seconds taken by each of ``repeat`` calls of ``fn``."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def median_time(fn: Callable[[], object], repeat: int = 1) -> float:
    """Median seconds of ``repeat`` calls of ``fn``."""
    return statistics.median(timed(fn, repeat))


def timed_pair(a, b, repeat: int, setup=None) -> tuple[list[float], list[float]]:
    """Seconds of ``repeat`` calls of ``a`` and of ``b``, alternated so that both see the
    same (shared, noisy) machine; ``setup`` runs, untimed, before every call."""
    times_a, times_b = [], []
    for _ in range(repeat):
        for fn, out in ((a, times_a), (b, times_b)):
            if setup:
                setup()
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return times_a, times_b

