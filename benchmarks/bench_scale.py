"""The directory namespace at the scale of a multi-tenant lake: one namespace grown to
1k, 10k, 100k (and 1M) tables, each figure printed as the ratio to its value at 1k.

Each size is measured beside a root of 1,000 tables kept for the purpose, the two in
alternating blocks of calls (so the ratio is of the same minutes: this machine's pace
drifts by 2x within a quarter of an hour, which a 1k figure measured first and a 1M
figure measured twenty minutes later took for the namespace's size); at 1,000 the
ratio is of two 1k roots, the noise of the method.

    python benchmarks/bench_scale.py --quick        # 1k, 10k, 100k
    python benchmarks/bench_scale.py                # ... and 1M (takes its time)

The root is grown by bulk declaration (BatchCommitTables of DeclareTable operations,
``--batch`` tables each: one manifest commit per batch); at every size it measures,
on the grown namespace:

* bulk declare: tables/s of the batches that grew it to this size (goal >= 10,000/s):
  the first half of each growth by BatchCommitTables from the benchmark's own process
  (a Python caller: the collector walks its ~140k objects every batch or two), the
  second by ``lance-ns table declare --from FILE`` (which keeps its long-lived objects
  out of those walks: see ``lance_ns.gc_pause``), at the rate it reports for its
  batches and at the rate of its whole run;
  beside the limit of the disk under the root: the spec has DeclareTable write a
  ``.lance-reserved`` file in each table's directory, and a mkdir and a file create per
  table (the helpers' system calls), from one process and with nothing else, is measured
  in the grown root itself after each growth (hidden names the namespace passes by: a
  create in a directory of a million entries costs the kernel more than in a new one),
  and, for comparison, in a new directory just before and just after it.  Nothing
  the benchmark made is deleted before its end: on ext4 without a journal (this machine's), creating an inode
  scans the inodes deleted in the last minutes, and after a mass deletion a create
  cost 1 ms of kernel time instead of 0.1 ms (``perf``: ``recently_deleted`` under
  ``ext4_new_inode``); run it a few minutes after deleting many files;
* declare, deregister (of a table declared just before, and "old": of tables declared
  long ago, spread over the namespace), create (CreateTable of one row: a Lance table
  written and its row committed) and drop (DropTable of the table just created: its row
  and its directory gone), describe, exists and one page of 100 (the
  first and one from the middle): median and p99 per call (goal: within 1.5x of the 1k value, p99 included),
  ``--rounds`` x 50 calls of each read and x 10 of each write, so that a p99 is not the
  slowest single call; measured after an ``os.sync()``, so that the writeback of the
  marker files of the growth just before does not land in them;
* cold start: a new process (interpreter and imports included) connecting and
  answering its first DescribeTable, and the resident memory it holds once its
  manifest is loaded (goal:
  within 1.5x of 1k, under 1 GB);
* the manifest's bytes;
* the server in front: ``lance-ns serve`` started over the grown root and over a root of
  1,000 tables kept beside it, DescribeTable, TableExists and a ListTables page of 100
  (from the middle) answered per second to ``--serve-clients`` client threads of a
  separate load process (pooled HTTP clients), after each server has loaded its manifest,
  in ``--serve-repeats`` alternating cells of ``--serve-seconds`` on each server (the
  machine's drift falls on both; medians): goal, the 1k throughput is at most 1.2x the
  throughput at this size.

pylance's own DirectoryNamespace is measured beside it on the same machine for as far
as it gets within ``--pylance-seconds`` (declaring one by one: it has no bulk path),
at the sizes it reaches.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

GOAL = 1.5
BULK_GOAL = 10_000
SERVE_GOAL = 1.2
SERVE_OPS = ("describe", "exists", "page")


def _p(times: list[float], q: float) -> float:
    s = sorted(times)
    return s[min(len(s) - 1, int(q * len(s)))]


def _interleaved(calls: dict, n: int, blocks: int = 10) -> dict[str, list[float]]:
    """``n`` timed calls of each function of ``calls`` ({label: fn(i)}), in alternating
    blocks (their order swapped every block), so that the machine's drift (this one's
    moves a describe between 40 and 110 us within minutes) falls on every label alike."""
    out: dict[str, list[float]] = {label: [] for label in calls}
    per = max(n // blocks, 1)
    labels = list(calls)
    for block in range(-(-n // per)):
        for label in labels if block % 2 == 0 else labels[::-1]:
            fn = calls[label]
            for i in range(block * per, min(n, (block + 1) * per)):
                t = time.perf_counter()
                fn(i)
                out[label].append(time.perf_counter() - t)
    return out


def side_by_side(per_side: dict) -> dict[str, dict[str, list[float]]]:
    """{side: {figure: (calls, fn(i))}} -> {side: {figure: seconds of each call}}, each
    figure's sides timed in alternating blocks (:func:`_interleaved`)."""
    fig: dict[str, dict[str, list[float]]] = {label: {} for label in per_side}
    for key, (n, _) in next(iter(per_side.values())).items():
        got = _interleaved({label: ops[key][1] for label, ops in per_side.items()}, n)
        for label in per_side:
            fig[label][key] = got[label]
    return fig


#: The process's own peak resident memory: Linux's VmHWM.  Not getrusage's ru_maxrss, which
#: Linux carries over from the process that started this one (a child of a benchmark holding
#: a 1M-table root reported that benchmark's 2 GB; measured: a parent of 1.5 GB, a child of
#: 9 MB, ru_maxrss 1,511 MB).
_COLD = """
import json, resource, sys, time
import lance_ns
ns = lance_ns.connect("dir", {"root": sys.argv[1]})
ns.describe_table({"id": [sys.argv[3], sys.argv[2]]})
answered = time.time()
ns.manifest.current()  # the rest of the manifest, loading on a thread meanwhile: memory is measured loaded
try:
    rss_mb = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")) / 1024
except (OSError, StopIteration):  # not Linux: the best there is
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"answered_at": answered, "rss_mb": rss_mb}))
"""


def cold_start(root: str, name: str, namespace: str = "t") -> dict:
    """A new process's first describe (of table ``name`` of ``namespace``), from the moment
    it is started (the interpreter and its imports included) to the moment it has the answer."""
    started = time.time()
    out = subprocess.run([sys.executable, "-c", _COLD, root, name, namespace], capture_output=True, text=True,
                         check=True)
    result = json.loads(out.stdout)
    result["wall"] = result["answered_at"] - started
    return result


def measure(sides: dict, rounds: int, tag: str, restore: tuple = ()) -> dict:
    """Every figure of each side ({label: (ns, root, size)}), the sides measured in
    alternating blocks (:func:`_interleaved`): a ratio between two sides is of the same
    minutes.  ``tag`` keeps the names declared here apart from an earlier call's; the
    tables the old deregistrations removed from the sides in ``restore`` are declared again."""
    import pyarrow as pa

    from lance_ns.impls.dir import manifest
    from lance_ns.datasets import table_to_ipc_stream

    one_row = table_to_ipc_stream(pa.table({"id": pa.array([1], pa.int64())}))
    os.sync()  # (after grow(), which waits for its upkeep) the growth's writeback is not a later call's cost
    reads = rounds * 50
    # writes: enough calls that the p99 is not simply the slowest one (a p99 of 20 calls is
    # their maximum: one stall of the disk)
    writes = rounds * 10
    old = {label: old_tables(size, writes) for label, (_, _, size) in sides.items()}
    asked = {label: table_names(size, rounds) for label, (_, _, size) in sides.items()}  # by reads and cold starts

    def calls(label: str) -> dict:
        """Each figure's number of calls and call on this side's namespace."""
        ns, _, size = sides[label]
        names = asked[label]
        middle = ns.list_tables({"id": ["t"], "limit": 100, "page_token": f"x{size // 2}"}).page_token or ""
        return {
            "describe": (reads, lambda i: ns.describe_table({"id": ["t", names[i % len(names)]]})),
            "exists": (reads, lambda i: ns.table_exists({"id": ["t", names[i % len(names)]]})),
            "page_first": (reads, lambda i: ns.list_tables({"id": ["t"], "limit": 100})),
            "page_middle": (reads, lambda i: ns.list_tables({"id": ["t"], "limit": 100, "page_token": middle})),
            "declare": (writes, lambda i: ns.declare_table({"id": ["t", f"d{size}_{tag}_{i}"]})),
            "drop": (writes, lambda i: ns.deregister_table({"id": ["t", f"d{size}_{tag}_{i}"]})),
            "drop_old": (writes, lambda i: ns.deregister_table({"id": ["t", old[label][i]]})),
            "create": (writes, lambda i: ns.create_table({"id": ["t", f"c{size}_{tag}_{i}"]}, one_row)),
            "drop_table": (writes, lambda i: ns.drop_table({"id": ["t", f"c{size}_{tag}_{i}"]})),
        }

    fig = side_by_side({label: calls(label) for label in sides})
    for label, (ns, _, _) in sides.items():
        ns.manifest.wait_for_upkeep()  # a compaction still running here is not a new process's cost
        if label in restore:
            ns.batch_commit_tables({"operations": [{"declare_table": {"id": ["t", n]}} for n in old[label]]})
            ns.manifest.wait_for_upkeep()
    os.sync()  # the tables just grown are written back first: their writeback is not a cold start's cost
    cold: dict[str, list[dict]] = {label: [] for label in sides}
    for i in range(3):
        for label, (_, root, _) in sides.items():
            cold[label].append(cold_start(root, asked[label][i % len(asked[label])]))
    return {label: {
        **{k: (statistics.median(v), _p(v, 0.99)) for k, v in fig[label].items()},
        "cold": (statistics.median(c["wall"] for c in cold[label]), max(c["wall"] for c in cold[label])),
        "rss_mb": max(c["rss_mb"] for c in cold[label]),
        "manifest_mb": manifest.table_bytes(ns.manifest.uri, ns.manifest.storage_options) / 1e6,
    } for label, (ns, _, _) in sides.items()}


def old_tables(size: int, n: int) -> list[str]:
    """``n`` tables declared long ago, spread over the namespace (each deregistration
    deletes a row of a sealed fragment), off the multiples :func:`table_names` asks for."""
    step = max(size // n, 1)
    return [f"x{i * step + (step + 1) // 2}" for i in range(min(n, size))]  # (the last below x<size>)


def table_names(size: int, rounds: int) -> list[str]:
    """The tables describe and exists ask for: spread over the namespace, never deregistered."""
    return [f"x{i}" for i in range(0, size, max(size // rounds, 1))][:rounds]


def serve_throughput(base_root: str, root: str, size: int, rounds: int, clients: int, seconds: float,
                     repeats: int) -> dict[str, tuple[float, float]]:
    """Requests/s of each of SERVE_OPS against ``lance-ns serve`` over the 1k ``base_root``
    and over ``root`` (``size`` tables), two servers measured in alternating cells of the
    same minutes, so that the machine's drift falls on both: {op: (base, this size)}."""
    from bench_rest import start_ours, stop

    servers = [start_ours(r, threads=8) for r in (base_root, root)]
    try:
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--_serve-load", servers[0][1], servers[1][1],
                              str(size), str(rounds), str(clients), str(seconds), str(repeats)],
                             capture_output=True, text=True)
        if out.returncode:
            raise RuntimeError(f"the load process failed:\n{out.stderr[-3000:]}")
        return {op: tuple(v) for op, v in json.loads(out.stdout.strip().splitlines()[-1]).items()}
    finally:
        for proc, _ in servers:
            stop(proc)


def serve_load(base_url: str, url: str, size: int, rounds: int, clients: int, seconds: float,
               repeats: int) -> dict[str, list[float]]:
    """(in its own process) each operation from ``clients`` threads in a closed loop, on the
    base server and this size's in turn, ``repeats`` cells each: the median requests/s of each."""
    from bench_rest import closed_loop

    import lance_ns

    def target(server_url: str, tables: int):
        names = table_names(tables, rounds)
        conns = [lance_ns.connect("rest", {"uri": server_url, "max_retries": 0, "pool.max_connections": 2})
                 for _ in range(clients)]
        # the middle page's token: its answer also waits for the server's manifest to load
        middle = conns[0].list_tables({"id": ["t"], "limit": 100, "page_token": f"x{tables // 2}"}).page_token or ""
        return conns, {
            "describe": lambda c, i: c.describe_table({"id": ["t", names[i % len(names)]]}),
            "exists": lambda c, i: c.table_exists({"id": ["t", names[i % len(names)]]}),
            "page": lambda c, i: c.list_tables({"id": ["t"], "limit": 100, "page_token": middle}),
        }

    targets = [target(base_url, 1_000), target(url, size)]
    out = {}
    for op in SERVE_OPS:
        rates: list[list[float]] = [[], []]
        for r in range(repeats):
            for t in ((0, 1) if r % 2 == 0 else (1, 0)):  # alternate who goes first
                conns, calls = targets[t]
                counters = [iter(range(k, 10**9, clients)) for k in range(clients)]
                for k, c in enumerate(conns):  # warm each connection
                    calls[op](c, k)
                cell = closed_loop([lambda c=c, n=n: calls[op](c, next(n)) for c, n in zip(conns, counters)], seconds)
                if cell["errors"]:
                    raise RuntimeError(f"{op}: {cell['errors']} failed requests")
                rates[t].append(len(cell["lat"]) / cell["elapsed"])
        out[op] = [statistics.median(rates[0]), statistics.median(rates[1])]
    return out


def marker_limit(into: str, n: int = 10_000) -> float:
    """Directories with a ``.lance-reserved`` file created per second, with the system
    calls of the namespace's marker helpers (one process, no catalog), directly in the
    directory ``into``: what a bulk declaration of a directory namespace on this disk is
    bound by.  In the grown root itself, its limit at that size: a create in a directory
    of a million entries costs the kernel more than in one of a thousand.  The names
    start with a dot (no table's: the namespace passes them by) and stay until the end
    of the run (a deletion would slow the creates after it: see the module's doc)."""
    from lance_ns.impls.dir import small_files
    from lance_ns.impls.dir.layout import MARKER_BODY, RESERVED

    tag, parents = os.urandom(4).hex(), small_files.Parents()
    t = time.perf_counter()
    for i in range(n):
        parents.write(os.fsencode(os.path.join(into, f".disk-limit-{tag}-{i}", RESERVED)), MARKER_BODY)
    return n / (time.perf_counter() - t)


def warm_up(batch: int, rounds: int):
    """Every figure once on a root of 1,000 tables, so that the first size is not measured
    cold (this process's first calls import and cache what later sizes reuse); the root
    and its namespace are kept as the base each size is measured beside (:func:`measure`,
    :func:`serve_throughput`), the caller removes it."""
    import lance_ns

    root = tempfile.mkdtemp(prefix="scale-base-")
    ns = lance_ns.connect("dir", {"root": root})
    ns.create_namespace({"id": ["t"]})
    grow(ns, 0, 1_000, batch)
    measure({"base": (ns, root, 1_000)}, rounds, tag="warm", restore=("base",))
    return root, ns


def grow_by_cli(root: str, start: int, size: int, batch: int, scratch: str) -> tuple[float, float]:
    """Declare tables x<start>..x<size-1> with ``lance-ns table declare t --from FILE``, in a
    process of its own; (tables/s it reports for its batches, tables/s of its whole run:
    interpreter, imports, the manifest's load and the file's parse included)."""
    listing = os.path.join(scratch, f"tables-{start}-{size}.txt")
    with open(listing, "w") as f:
        f.writelines(f"x{i}\n" for i in range(start, size))
    t = time.perf_counter()
    ran = subprocess.run([sys.executable, "-m", "lance_ns.cli", "table", "declare", "t", "--from", listing,
                          "--batch", str(batch), "--json", "--impl", "dir", "--prop", f"root={root}"],
                         capture_output=True, text=True)
    wall = time.perf_counter() - t
    os.remove(listing)
    if ran.returncode != 0:
        raise RuntimeError(f"lance-ns table declare --from failed: {ran.stdout}{ran.stderr}")
    said = json.loads(ran.stdout)
    return said["declared"] / said["seconds"], said["declared"] / wall


def grow(ns, start: int, size: int, batch: int) -> float:
    """Declare tables x<start>..x<size-1> in bulk; tables/s (the compactions and cleanups
    the batches made due included: they run on a thread, and would otherwise run into
    the figures measured next)."""
    t = time.perf_counter()
    for lo in range(start, size, batch):
        ns.batch_commit_tables({"operations": [{"declare_table": {"id": ["t", f"x{i}"]}}
                                               for i in range(lo, min(size, lo + batch))]})
    ns.manifest.wait_for_upkeep()
    return (size - start) / (time.perf_counter() - t)


def pylance_growth(seconds: float, checkpoints: list[int]) -> dict[int, dict]:
    """pylance's DirectoryNamespace, one declare at a time, for at most ``seconds``."""
    from lance.namespace import DirectoryNamespace

    root = tempfile.mkdtemp(prefix="scale-pylance-")
    try:
        ns = DirectoryNamespace(root=root)
        ns.create_namespace(_req("CreateNamespaceRequest", id=["t"]))
        out, done, t0 = {}, 0, time.perf_counter()
        for size in checkpoints:
            t = time.perf_counter()
            while done < size and time.perf_counter() - t0 < seconds:
                ns.declare_table(_req("DeclareTableRequest", id=["t", f"x{done}"]))
                done += 1
            if done < size:
                break
            rate = (size - (0 if not out else max(out))) / (time.perf_counter() - t)
            desc = _interleaved({"pylance": lambda i: ns.describe_table(
                _req("DescribeTableRequest", id=["t", f"x{i * 7 % size}"]))}, 50)["pylance"]
            out[size] = {"declare_rate": rate, "describe": statistics.median(desc)}
        return out
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _req(name: str, **fields):
    import lance_namespace

    return getattr(lance_namespace, name)(**fields)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="stop at 100,000 tables")
    ap.add_argument("--sizes", help="comma-separated sizes (default 1000,10000,100000[,1000000])")
    ap.add_argument("--batch", type=int, default=10_000, help="tables per bulk BatchCommitTables")
    ap.add_argument("--rounds", type=int, default=50, help="calls per figure and size (reads 50x, writes 10x)")
    ap.add_argument("--pylance-seconds", type=float, default=60.0, help="time given to pylance's namespace")
    ap.add_argument("--serve-clients", type=int, default=8, help="client threads against lance-ns serve")
    ap.add_argument("--serve-seconds", type=float, default=2.0, help="seconds per cell of a server operation")
    ap.add_argument("--serve-repeats", type=int, default=3, help="cells per server, operation and size (medians)")
    ap.add_argument("--no-serve", action="store_true", help="skip the server figures")
    ap.add_argument("--_serve-load", nargs=7, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._serve_load:
        base_url, url, size, rounds, clients, seconds, repeats = args._serve_load
        print(json.dumps(serve_load(base_url, url, int(size), int(rounds), int(clients), float(seconds), int(repeats))))
        return
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else (
        [1_000, 10_000, 100_000] + ([] if args.quick else [1_000_000]))

    import lance_ns

    base_root, base_ns = warm_up(args.batch, args.rounds)
    root = tempfile.mkdtemp(prefix="scale-ours-")
    scratch = tempfile.mkdtemp(prefix="scale-markers-", dir=os.path.dirname(root))
    try:
        ns = lance_ns.connect("dir", {"root": root})
        ns.create_namespace({"id": ["t"]})
        results, beside, have = {}, {}, 0
        for size in sizes:
            # the disk's limit beside the growth (its pace drifts): in a fresh directory, and in
            # the root itself once grown (a create in a directory of 1M entries costs more)
            fresh = marker_limit(tempfile.mkdtemp(prefix="markers-", dir=scratch))
            # the CLI grows the second half of a growth of 20,000 tables or more (a smaller half
            # would be one batch, or one too small for the marker helpers)
            half = have + (size - have) // 2 if size - have >= 20_000 else size
            bulk = grow(ns, have, half, args.batch)
            bulk_cli, bulk_cli_wall = grow_by_cli(root, half, size, args.batch, scratch) if half < size else (None, None)
            fresh = max(fresh, marker_limit(tempfile.mkdtemp(prefix="markers-", dir=scratch)))
            limit = marker_limit(root)
            have = size
            both = measure({"base": (base_ns, base_root, 1_000), "here": (ns, root, size)}, args.rounds,
                           tag=str(size), restore=("base", "here"))  # (the next size's old tables may be these)
            results[size], beside[size] = {"bulk": bulk, "bulk_cli": bulk_cli, "bulk_cli_wall": bulk_cli_wall,
                                           "limit": limit, "limit_fresh": fresh, **both["here"]}, both["base"]
            if not args.no_serve:
                results[size]["serve"] = serve_throughput(base_root, root, size, args.rounds, args.serve_clients,
                                                          args.serve_seconds, args.serve_repeats)
            print(f"  {size:>9,} tables: bulk {bulk:,.0f}/s{'' if bulk_cli is None else f' (CLI {bulk_cli:,.0f}/s)'}, describe {results[size]['describe'][0] * 1e6:.0f} us, "
                  f"cold start {results[size]['cold'][0]:.2f} s, {results[size]['rss_mb']:.0f} MB", flush=True)
        rust = pylance_growth(args.pylance_seconds, sizes)  # before our roots go (see marker_limit)
        report(args, sizes, results, beside, rust)  # before the removal: a 1M root takes minutes to delete
    finally:
        print("\nremoving the roots...", flush=True)
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(base_root, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)


def report(args, sizes: list[int], results: dict, beside: dict, rust: dict) -> None:
    """The ratios of every size, the bulk rates beside the disk's, the server's, pylance's."""
    print(f"\nlance-ns dir, one namespace; ratio = value / value on a root of 1,000 tables measured beside it, "
          f"in alternating blocks of the same minutes (goal <= {GOAL}x; at 1,000: two 1k roots, the noise)")
    header = f"{'figure':<22}" + "".join(f"{s:>14,}" for s in sizes)
    print(header)
    for key, label in (("describe", "describe"), ("exists", "exists"), ("page_first", "first page of 100"),
                       ("page_middle", "a middle page of 100"), ("declare", "declare"), ("drop", "deregister"),
                       ("drop_old", "old deregister"), ("create", "create"), ("drop_table", "drop"),
                       ("cold", "cold start")):
        for q, qname in ((0, "median"), (1, "p99" if key != "cold" else "max")):
            row = f"{label + ' ' + qname:<22}"
            for s in sizes:
                r = results[s][key][q] / beside[s][key][q]
                row += f"{r:>10.2f}x{'' if r <= GOAL else ' !':<3}"
            print(row)
    for key, label, note in (
            ("bulk", "bulk declare /s", f"goal >= {BULK_GOAL:,}/s; BatchCommitTables from this process, the first half "
                                        "of the growth to this size"),
            ("bulk_cli", "  by the CLI /s", "lance-ns table declare --from FILE, the second half: the rate it reports "
                                            "for its batches"),
            ("bulk_cli_wall", "  CLI whole run /s", "the same, its interpreter, imports, manifest load and file "
                                                   "parse included")):
        print(f"{label:<22}" + "".join(f"{'-':>14}" if results[s][key] is None else
                                       f"{results[s][key]:>13,.0f}{'' if results[s][key] >= BULK_GOAL else '!'}"
                                       for s in sizes) + f"   ({note})")
    print(f"{'disk limit /s':<22}" + "".join(f"{results[s]['limit']:>14,.0f}" for s in sizes)
          + "   (table directories with a marker file created per second by one process, in the grown root)")
    print(f"{'  in a new directory':<22}" + "".join(f"{results[s]['limit_fresh']:>14,.0f}" for s in sizes)
          + "   (the same in a directory of its own, the faster of just before and just after the growth)")
    print(f"{'bulk / disk limit':<22}" + "".join(f"{results[s]['bulk'] / results[s]['limit']:>14.2f}" for s in sizes))
    if not args.no_serve:
        print(f"lance-ns serve, {args.serve_clients} clients: ratio = requests/s over 1,000 tables / requests/s "
              f"at this size, both servers measured in the same minutes (goal <= {SERVE_GOAL}x)")
        for op in SERVE_OPS:
            row = f"{'serve ' + op:<22}"
            for s in sizes:
                one_k, here = results[s]["serve"][op]
                r = one_k / here
                row += f"{r:>10.2f}x{'' if r <= SERVE_GOAL else ' !':<3}"
            print(row)
        print("requests/s at the largest size: " + ", ".join(
            f"{op} {results[sizes[-1]]['serve'][op][1]:,.0f} (1k: {results[sizes[-1]]['serve'][op][0]:,.0f})"
            for op in SERVE_OPS))
    print(f"{'cold-start memory MB':<22}" + "".join(f"{results[s]['rss_mb']:>14.0f}" for s in sizes) + "   (goal < 1024)")
    print(f"{'manifest MB':<22}" + "".join(f"{results[s]['manifest_mb']:>14.1f}" for s in sizes))
    absolute = ("describe", "exists", "page_first", "declare", "drop", "drop_old", "create", "drop_table", "cold")
    for label, fig in (("1k root beside the largest", beside[sizes[-1]]), (f"{sizes[-1]:,} tables", results[sizes[-1]])):
        print(f"absolute medians, {label}: " + ", ".join(f"{k} {fig[k][0] * 1e3:.2f} ms" for k in absolute))
    print(f"\npylance's DirectoryNamespace ({args.pylance_seconds:.0f} s, one declare at a time):")
    for s in sizes:
        if s in rust:
            ours = results[s]
            print(f"  {s:>9,}: declares/s {rust[s]['declare_rate']:,.0f} (ours bulk {ours['bulk']:,.0f}, "
                  f"one by one {1 / ours['declare'][0]:,.0f}); describe {rust[s]['describe'] * 1e6:.0f} us "
                  f"(ours {ours['describe'][0] * 1e6:.0f} us)")
        else:
            print(f"  {s:>9,}: not reached in {args.pylance_seconds:.0f} s")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
