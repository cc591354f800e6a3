"""Concurrent appends to one implementation-managed table, many rounds: the stress run of
the check tests/conformance/test_managed.py makes 20 times per backend in CI.

    .venv/bin/python benchmarks/stress_appends.py [--rounds 200] [--writers threads|processes|both]
        [--impl dir --prop root=/tmp/x --prop ...]

Each round declares a fresh managed table, races W writers x A appends (threads sharing one
client object, and/or processes with clients of their own) and checks what the table holds
(lance_ns.conformance.appends: every acknowledged append exactly once, nothing unacknowledged,
versions 1..N, no Overwrite nobody asked for).  pylance's own DirectoryNamespace with
table_version_tracking_enabled runs the same threads beside ours on a root of its own, the
peer.  Prints the rounds that failed, per kind, and the seconds a round took.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid

from lance_namespace import CreateNamespaceRequest

import lance_ns
from lance_ns.conformance import appends


def parse_props(items: list[str]) -> dict[str, str]:
    return dict(item.split("=", 1) for item in items)


def run_kind(label: str, connect, rounds: int, writers: int, appends_each: int, processes=None) -> None:
    failed, started = [], time.perf_counter()
    client = connect()
    parent = [f"stress{uuid.uuid4().hex[:6]}"]
    client.create_namespace(CreateNamespaceRequest(id=parent))
    for r in range(rounds):
        result = appends.run_round(connect, parent + [f"r{r}"], writers, appends_each, processes=processes)
        if result.problems:
            failed.append(r)
            print(f"  {label} round {r}: {'; '.join(result.problems[:3])}", flush=True)
    took = (time.perf_counter() - started) / max(rounds, 1)
    print(f"{label}: {len(failed)} of {rounds} rounds lost or invented writes; {took:.2f} s a round", flush=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=200)
    p.add_argument("--writers", choices=["threads", "processes", "both"], default="both")
    p.add_argument("--count", type=int, default=4, help="writers per round")
    p.add_argument("--appends", type=int, default=6, help="appends per writer")
    p.add_argument("--impl", default="dir")
    p.add_argument("--prop", action="append", default=[], help="KEY=VALUE (default for dir: a fresh root)")
    p.add_argument("--no-peer", action="store_true", help="skip pylance's own DirectoryNamespace")
    args = p.parse_args()
    props = parse_props(args.prop)
    if args.impl == "dir" and "root" not in props:
        props["root"] = tempfile.mkdtemp(prefix="stress-appends-")

    # memory's catalog lives in its namespace object: every round and writer shares that one
    shared = lance_ns.connect(args.impl, props) if args.impl == "memory" else None

    def connect():
        return shared if shared is not None else lance_ns.connect(args.impl, props)

    if args.writers in ("threads", "both"):
        run_kind("lance-ns threads", connect, args.rounds, args.count, args.appends)
    if args.writers in ("processes", "both"):
        with appends.ProcessWriters(args.impl, props, args.count) as procs:
            run_kind("lance-ns processes", connect, args.rounds, args.count, args.appends, processes=procs)
    if not args.no_peer:
        from lance.namespace import DirectoryNamespace

        root = tempfile.mkdtemp(prefix="stress-appends-pylance-")
        pylance = DirectoryNamespace(root=root, table_version_tracking_enabled="true")
        run_kind("pylance DirectoryNamespace threads (peer)", lambda: pylance, args.rounds, args.count, args.appends)
    return 0


if __name__ == "__main__":
    sys.exit(main())
