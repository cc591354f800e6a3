"""How fast ``lance-ns`` answers what needs no backend: ``--help``, ``--version``,
``completion bash``, and ``table --help``; pyiceberg's ``--help`` timed beside it (the
same kind of tool, its CLI on click too), and ``python -c pass`` as the limit (the
interpreter's own start).

    .venv/bin/python benchmarks/bench_cli.py [--runs 5]

Prints each command's median of ``--runs`` runs (whole processes, alternated with
pyiceberg's so both see the same load), its ratio to pyiceberg's, and the goal: a
median of at most 0.3 s for ``lance-ns --help`` on 2 cores.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent
GOAL = 0.3


def run_once(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args()
    peer = [str(BIN / "pyiceberg"), "--help"]
    limit = [sys.executable, "-c", "pass"]
    ours = {
        "--help": [str(BIN / "lance-ns"), "--help"],
        "--version": [str(BIN / "lance-ns"), "--version"],
        "completion bash": [str(BIN / "lance-ns"), "completion", "bash"],
        "table --help": [str(BIN / "lance-ns"), "table", "--help"],
    }
    run_once(peer), run_once(ours["--help"])  # warm the file cache
    times = {name: [] for name in ours}
    peer_times, limit_times = [], []
    for _ in range(args.runs):
        for name, argv in ours.items():
            times[name].append(run_once(argv))
        peer_times.append(run_once(peer))
        limit_times.append(run_once(limit))
    peer_median, limit_median = statistics.median(peer_times), statistics.median(limit_times)
    print(f"pyiceberg --help: {peer_median:.3f} s;  python -c pass (the limit): {limit_median:.3f} s")
    for name, ts in times.items():
        m = statistics.median(ts)
        print(f"lance-ns {name:16s} {m:.3f} s   {peer_median / m:4.1f}x pyiceberg's throughput, "
              f"{m / limit_median:4.1f}x the interpreter's start")
    helped = statistics.median(times["--help"])
    print(f"goal: lance-ns --help median <= {GOAL} s: {helped:.3f} s {'met' if helped <= GOAL else 'NOT met'}")


if __name__ == "__main__":
    main()
