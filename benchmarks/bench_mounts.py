"""What a mount adds to an operation: DescribeTable (and ListTables) through a ``mounts``
namespace against the same call on the mounted backend itself, in the same run.

    python benchmarks/bench_mounts.py [--calls 2000] [--repeat 15] [--backend memory|dir|rest]

Each sample is ``--calls`` calls in a row; the two are alternated (``timed_pair``) so both
see the same machine, and the medians are compared.  The ratio printed is throughput,
mounts / direct (issue 56's goal: DescribeTable >= 1 / 1.05 = 0.95); the limit is the
backend itself (1.0).

    python benchmarks/bench_mounts.py --served [--seconds 3] [--repeat 5] [--clients 32]

compares the two as served, the way a mount is used: ``lance-ns serve`` of a ``mounts``
namespace whose mount ``lake`` is a directory, against ``lance-ns serve`` of that directory
itself, each in its own process, DescribeTable in a closed loop from ``--clients`` threads
sharing one pylance RestNamespace (Rust), the two servers alternated cell by cell.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import tempfile

from lance_namespace import DescribeTableRequest, ListTablesRequest

import lance_ns
from common import timed_pair
from lance_ns.impls.mounts import MountsNamespace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per sample")
    parser.add_argument("--repeat", type=int, default=15, help="samples of each")
    parser.add_argument("--served", action="store_true", help="through lance-ns serve (see above)")
    parser.add_argument("--seconds", type=float, default=3.0, help="--served: seconds per cell")
    parser.add_argument("--clients", type=int, default=32, help="--served: client threads")
    parser.add_argument("--backend", choices=("memory", "dir", "rest"), default="memory",
                        help="the mounted backend (rest: our REST client of lance-ns serve over a dir, the "
                             "network catalog a mount usually is)")
    args = parser.parse_args()
    if args.served:
        return served(args)
    with tempfile.TemporaryDirectory() as root, contextlib.ExitStack() as stack:
        if args.backend == "rest":
            from lance_ns.server import run_server_in_thread

            server = stack.enter_context(run_server_in_thread(lance_ns.connect("dir", {"root": root}),
                                                             log_requests=False))
            direct = lance_ns.connect("rest", {"uri": server.url})
        else:
            direct = lance_ns.connect(args.backend, {"root": root})
        mounts = MountsNamespace.of({"lake": direct})
        direct.create_namespace({"id": ["s"]})
        for i in range(100):
            direct.declare_table({"id": ["s", f"t{i}"]})
        print(f"backend {args.backend}: {args.calls} calls a sample, {args.repeat} samples each, alternated")
        for label, direct_request, mounted_request, method in (
            ("DescribeTable", DescribeTableRequest(id=["s", "t7"]), DescribeTableRequest(id=["lake", "s", "t7"]),
             "describe_table"),
            ("ListTables", ListTablesRequest(id=["s"], limit=10), ListTablesRequest(id=["lake", "s"], limit=10),
             "list_tables"),
        ):
            call_direct, call_mounted = getattr(direct, method), getattr(mounts, method)

            def run_direct():
                for _ in range(args.calls):
                    call_direct(direct_request)

            def run_mounted():
                for _ in range(args.calls):
                    call_mounted(mounted_request)

            d, m = timed_pair(run_direct, run_mounted, args.repeat)
            per_direct = statistics.median(d) / args.calls * 1e6
            per_mounted = statistics.median(m) / args.calls * 1e6
            print(f"{label:14s} direct {per_direct:7.1f} us  mounts {per_mounted:7.1f} us  "
                  f"throughput mounts/direct {per_direct / per_mounted:.2f} (limit 1.00, goal >= 0.95)")


def served(args: argparse.Namespace) -> None:
    """DescribeTable through ``lance-ns serve``: mounts over a directory vs the directory."""
    import subprocess

    import lance.namespace
    from bench_rest import PY, TARGET, closed_loop, free_port, setup, stop, wait_up

    def serve(*options: str) -> tuple[subprocess.Popen, str]:
        port = free_port()
        proc = subprocess.Popen([PY, "-m", "lance_ns.server", *options, "--port", str(port), "--log-level", "warning"])
        url = f"http://127.0.0.1:{port}"
        wait_up(url)
        return proc, url

    with tempfile.TemporaryDirectory() as root:
        setup(root)  # bench_rest's tables, written with pylance through our directory namespace
        servers = {"direct": serve("--impl", "dir", "--prop", f"root={root}"),
                   "mounts": serve("--impl", "mounts", "--prop", "lake.impl=dir", "--prop", f"lake.root={root}")}
        try:
            requests = {"direct": DescribeTableRequest(id=TARGET), "mounts": DescribeTableRequest(id=["lake", *TARGET])}
            clients = {name: lance.namespace.RestNamespace(uri=url) for name, (_, url) in servers.items()}
            for name, client in clients.items():  # both answer, and each connection is warm
                client.describe_table(requests[name])
            rps: dict[str, list[float]] = {name: [] for name in servers}
            for _ in range(args.repeat):
                for name, client in clients.items():
                    call = lambda client=client, request=requests[name]: client.describe_table(request)  # noqa: E731
                    cell = closed_loop([call] * args.clients, args.seconds)
                    if cell["errors"]:
                        raise RuntimeError(f"{name}: {cell['errors']} calls failed")
                    rps[name].append(len(cell["lat"]) / cell["elapsed"])
        finally:
            for proc, _ in servers.values():
                stop(proc)
    direct, mounted = (statistics.median(rps[name]) for name in ("direct", "mounts"))
    print(f"served DescribeTable, {args.clients} clients, {args.repeat} x {args.seconds:g} s cells, alternated; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"direct {direct:7.0f} rps  mounts {mounted:7.0f} rps  throughput mounts/direct {mounted / direct:.2f} "
          f"(limit 1.00, goal >= 0.95)")


if __name__ == "__main__":
    main()
