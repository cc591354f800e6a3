"""Our REST server vs pylance's Rust ``RestAdapter``: same directory, same client.

Both servers run in their own processes over one shared root directory (ours
serves ``lance_ns`` ``dir``; pylance's serves its own DirectoryNamespace).
The load comes from a third process: N threads, each one client
(``lance_ns`` impl ``rest``, one pooled ``httpx.Client`` each), calling
DescribeTable / ListTables / TableExists in a closed loop.

    python benchmarks/bench_rest.py            # 5 s per cell
    python benchmarks/bench_rest.py --quick    # 1.5 s per cell

A third server, ``ours-pyl-dir`` (our server over pylance's own
DirectoryNamespace), compares the HTTP layers alone, the backend code being
the same as the Rust server's.

    python benchmarks/bench_rest.py --deployment   # issue 19's settings

compares our server with itself instead: an ``--auth-file`` (the client a
principal with ``read = ["bench"]``) versus no authentication (aim: at least
0.9x), and ``--workers 2`` versus 1 at 32 clients (on 2 cores, expect no more
than about 1.6x: the load generator shares the cores).  The four servers run at
once and every cell is measured on each in turn (interleaved).

Prints throughput and p99 per server, operation and concurrency, and the
ratios ours/pylance (throughput: higher is better; p99: lower is better).

    python benchmarks/bench_rest.py --limit [--quick]   # issue 22: the stack's limit

measures our server against what its HTTP stack can carry: ``ours`` (``lance-ns``
``dir``), ``bare`` (an ASGI callable on the same uvicorn stack answering the very
bytes ours answers, captured first) and ``pylance`` (pylance's Rust RestAdapter
over the same root), for DescribeTable, TableExists and a ListTables page of 100
from a namespace of 10,000 tables, at 1, 8 and 32 client threads sharing one
pylance ``RestNamespace`` (Rust) per server.  Cells are interleaved (each
operation and concurrency runs on the three servers in turn, for ``--rounds``
rounds) so that a machine's drifting load hits them alike; it prints throughput,
p50 and p99 with the ratios ours/bare and ours/pylance, against the targets (issue 22's,
DescribeTable's ours/bare raised to 0.8 by issue 53), and each server's CPU time per request.

    python benchmarks/bench_rest.py --overhead [--quick]

compares, with the same load, the server with authorization (an auth file) and
metrics on against the same server with both off (aim: at least 0.9x), then the
same two apps called in process (no sockets), which prints what on costs per
request in microseconds without the run-to-run noise of a loaded HTTP cell.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
PY = sys.executable
N_TABLES = 50
TARGET = ["bench", "t0017"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_up(url: str, timeout: float = 180) -> None:  # cold starts on a busy machine are slow
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{url}/v1/namespace/$/list", timeout=1).read()
            return
        except urllib.error.HTTPError:  # an answer (401 behind auth): the server is up
            return
        except Exception:
            time.sleep(0.1)
    raise RuntimeError(f"server at {url} did not come up")


def start_ours(root: str, threads: int, impl: str = "dir", extra: tuple = ()) -> tuple[subprocess.Popen, str]:
    port = free_port()
    cmd = [PY, "-m", "lance_ns.server", "--impl", impl, "--prop", f"root={root}", "--port", str(port),
           "--log-level", "warning", "--threads", str(threads), *extra]  # fmt: skip
    proc = subprocess.Popen(cmd)
    url = f"http://127.0.0.1:{port}"
    wait_up(url)
    return proc, url


_PYLANCE = """
import sys, lance.namespace
a = lance.namespace.RestAdapter("dir", {"root": sys.argv[1]}, host="127.0.0.1", port=0)
a.start()
print(a.port, flush=True)
sys.stdin.read()   # until the benchmark closes our stdin
a.stop()
"""


def start_pylance(root: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([PY, "-c", _PYLANCE, root], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    port = int(proc.stdout.readline())
    url = f"http://127.0.0.1:{port}"
    wait_up(url)
    return proc, url


def stop(proc: subprocess.Popen) -> None:
    if proc.stdin:
        proc.stdin.close()
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


def setup(root: str) -> None:
    """Tables written with pylance through our directory namespace."""
    import lance
    import pyarrow as pa

    import lance_ns

    ns = lance_ns.connect("dir", {"root": root})
    ns.create_namespace({"id": ["bench"]})
    data = pa.table({"id": list(range(100)), "v": [float(i) for i in range(100)]})
    for i in range(N_TABLES):
        lance.write_dataset(data, namespace_client=ns, table_id=["bench", f"t{i:04d}"], mode="create")


# -- the load generator (runs in its own process) ---------------------------------------------


def load(url: str, op: str, clients: int, seconds: float) -> dict:
    import lance_ns

    calls = {
        "describe": lambda c: c.describe_table({"id": TARGET}),
        "list": lambda c: c.list_tables({"id": ["bench"]}),
        "exists": lambda c: c.table_exists({"id": TARGET}),
    }
    fn = calls[op]
    token = {"auth_token": os.environ["BENCH_TOKEN"]} if os.environ.get("BENCH_TOKEN") else {}
    conns = [lance_ns.connect("rest", {"uri": url, "max_retries": 0, "pool.max_connections": 2, **token})
             for _ in range(clients)]
    for c in conns:  # warm up each connection
        fn(c)
    return _summary(closed_loop([lambda c=c: fn(c) for c in conns], seconds))


def closed_loop(calls: list, seconds: float) -> dict:
    """One thread per entry of ``calls``, each calling its entry in a closed loop for ``seconds``."""
    lat: list[list[float]] = [[] for _ in calls]
    errors = [0]
    go = threading.Event()
    stop_at = [0.0]

    def worker(i: int) -> None:
        call, mine = calls[i], lat[i]
        go.wait()
        while True:
            t0 = time.perf_counter()
            if t0 >= stop_at[0]:
                return
            try:
                call()
            except Exception:
                errors[0] += 1
            mine.append(time.perf_counter() - t0)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    start = time.perf_counter()
    stop_at[0] = start + seconds
    go.set()
    for t in threads:
        t.join()
    return {"elapsed": time.perf_counter() - start, "lat": [x for per in lat for x in per], "errors": errors[0]}


def run_loads(url: str, ops: list[str], clients: list[int], seconds: float, token: str | None = None) -> dict:
    """Every (op, clients) cell against one server, from one load process."""
    env = {**os.environ, **({"BENCH_TOKEN": token} if token else {})}
    out = subprocess.run(
        [PY, os.path.abspath(__file__), "--_load", url, ",".join(ops), ",".join(map(str, clients)), str(seconds)],
        check=True, capture_output=True, text=True, env=env,
    )  # fmt: skip
    raw = json.loads(out.stdout.strip().splitlines()[-1])
    return {(op, int(n)): v for key, v in raw.items() for op, n in [key.split("/")]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="1.5 s per cell instead of 5 s")
    p.add_argument("--seconds", type=float)
    p.add_argument("--clients", default="1,8,32")
    p.add_argument("--ops", default="describe,list,exists")
    p.add_argument("--threads", type=int, default=32, help="our server's backend thread pool")
    p.add_argument("--json", action="store_true", help="print the raw results as JSON too")
    p.add_argument("--deployment", action="store_true",
                   help="auth file on vs off, --workers 2 vs 1 (issue 19) instead of ours vs pylance")
    p.add_argument("--limit", action="store_true",
                   help="ours vs a bare ASGI callable on the same uvicorn stack vs pylance's RestAdapter (issue 22)")
    p.add_argument("--overhead", action="store_true",
                   help="authorization and metrics on vs both off, with --limit's load (issue 22)")
    p.add_argument("--rounds", type=int, help="--limit/--overhead: interleaved rounds per cell (default 3, 1 with --quick)")
    p.add_argument("--_load", nargs=4, help=argparse.SUPPRESS)
    p.add_argument("--_bare", nargs=2, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args._bare:
        serve_bare(int(args._bare[0]), args._bare[1])
        return 0
    if args._load:
        url, ops, clients, seconds = args._load
        out = {f"{op}/{n}": load(url, op, int(n), float(seconds)) for op in ops.split(",") for n in clients.split(",")}
        print(json.dumps(out))
        return 0

    seconds = args.seconds or (1.5 if args.quick else 5.0)
    clients = [int(c) for c in args.clients.split(",")]
    ops = args.ops.split(",")
    root = tempfile.mkdtemp(prefix="bench-rest-")
    setup(root)
    if args.deployment:
        return deployment(root, args.threads, ops, clients, seconds)
    if args.limit:
        return limit(root, args.threads, ops, clients, seconds, args.rounds or (1 if args.quick else 3))
    if args.overhead:
        return overhead(root, args.threads, ops, clients, seconds, args.rounds or (1 if args.quick else 3))
    servers = {}
    try:
        servers["ours"] = start_ours(root, args.threads)
        servers["pylance"] = start_pylance(root)
        # the HTTP layers alone: our server over pylance's own DirectoryNamespace
        servers["ours-pyl-dir"] = start_ours(root, args.threads, "lance.namespace:DirectoryNamespace")
        import lance_ns

        seen = {k: lance_ns.connect("rest", {"uri": u}).list_tables({"id": ["bench"]}).tables for k, (_, u) in servers.items()}
        if any(v != seen["ours"] for v in seen.values()) or len(seen["ours"]) != N_TABLES:
            raise RuntimeError(f"the servers disagree about the tables: {seen}")
        results = {}
        for name, (_, url) in servers.items():
            for (op, n), v in run_loads(url, ops, clients, seconds).items():
                results[(name, op, n)] = v
    finally:
        for proc, _ in servers.values():
            stop(proc)

    print(f"\n{seconds:.1f} s per cell, {N_TABLES} tables, cpu count {os.cpu_count()}")
    for other in [k for k in servers if k != "pylance"]:
        print(f"\n{other} vs pylance RestAdapter")
        print(f"{'op':9} {'clients':>7} | {other + ' rps':>16} {'p99 ms':>7} | {'pylance rps':>11} {'p99 ms':>7} | {'rps ratio':>9} {'p99 ratio':>9}")
        for op in ops:
            for n in clients:
                a, b = results[(other, op, n)], results[("pylance", op, n)]
                print(
                    f"{op:9} {n:>7} | {a['rps']:>16.0f} {a['p99_ms']:>7.2f} | {b['rps']:>11.0f} {b['p99_ms']:>7.2f} |"
                    f" {a['rps'] / b['rps']:>8.2f}x {a['p99_ms'] / b['p99_ms']:>8.2f}x"
                    + (f"  errors {a['errors']}/{b['errors']}" if a["errors"] or b["errors"] else "")
                )
    if args.json:
        print(json.dumps({f"{k[0]}/{k[1]}/{k[2]}": v for k, v in results.items()}, indent=1))
    return 0


# -- --limit: ours vs a bare ASGI callable on the same stack vs pylance's RestAdapter ---------------------

LIST_NAMESPACE = ["big"]  # bench_ui's 10,000 declared tables
LIST_TABLES = 10_000
PAGE = 100
#: the targets at 32 clients: (op, metric) -> (peer, minimum or maximum ratio); issue 22's,
#: with DescribeTable's ours/bare raised to 0.8 by issue 53 (the house, second step)
LIMIT_TARGETS = {
    ("describe", "rps"): [("bare", ">=", 0.8), ("pylance", ">=", 2.0)],
    ("describe", "p99"): [("bare", "<=", 2.0)],
    ("exists", "rps"): [("bare", ">=", 0.5)],
    ("list", "rps"): [("bare", ">=", 0.3)],
}


def _limit_requests():
    from lance_namespace import DescribeTableRequest, ListTablesRequest, TableExistsRequest

    return {
        "describe": lambda c: c.describe_table(DescribeTableRequest(id=TARGET)),
        "exists": lambda c: c.table_exists(TableExistsRequest(id=TARGET)),
        "list": lambda c: c.list_tables(ListTablesRequest(id=LIST_NAMESPACE, limit=PAGE)),
    }


#: the request each --limit operation sends, as (method, path, JSON body, query string): what
#: _capture records for the bare callable and in_process_cost replays
_LIMIT_HTTP = {
    "describe": ("POST", "/v1/table/" + "$".join(TARGET) + "/describe", json.dumps({"id": TARGET}).encode(), b""),
    "exists": ("POST", "/v1/table/" + "$".join(TARGET) + "/exists", json.dumps({"id": TARGET}).encode(), b""),
    "list": ("GET", f"/v1/namespace/{LIST_NAMESPACE[0]}/table/list", b"", f"limit={PAGE}".encode()),
}


def _capture(url: str) -> dict:
    """The bytes our server answers to each request the load sends (what the bare callable replays)."""
    import httpx

    got = {op: httpx.request(method, f"{url}{path}" + (f"?{query.decode()}" if query else ""), content=body,
                             headers={"content-type": "application/json"})
           for op, (method, path, body, query) in _LIMIT_HTTP.items()}
    for op, r in got.items():
        r.raise_for_status()
    return {op: {"status": r.status_code, "type": r.headers["content-type"], "body": r.text} for op, r in got.items()}


def bare_app(answers: dict):
    """An ASGI callable that reads the request and answers the captured bytes: the stack's own cost."""
    by_suffix = [(suffix, answers[op]) for op, suffix in (("describe", "/describe"), ("exists", "/exists"),
                                                           ("list", "/table/list"))]
    prepared = [(suffix, a["status"], [(b"content-type", a["type"].encode()),
                                       (b"content-length", str(len(a["body"].encode())).encode())], a["body"].encode())
                for suffix, a in by_suffix]

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        more = True
        while more:  # drain the body, as any server must
            more = (await receive()).get("more_body", False)
        path = scope["path"]
        for suffix, status, headers, body in prepared:
            if path.endswith(suffix):
                break
        else:
            status, headers, body = 404, [(b"content-length", b"0")], b""
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


def start_bare(answers: dict) -> tuple[subprocess.Popen, str]:
    port = free_port()
    path = tempfile.mktemp(suffix=".json", prefix="bench-bare-")
    with open(path, "w") as f:
        json.dump(answers, f)
    proc = subprocess.Popen([PY, os.path.abspath(__file__), "--_bare", str(port), path])
    url = f"http://127.0.0.1:{port}"
    wait_up(url)
    return proc, url


def serve_bare(port: int, answers_path: str) -> None:
    """The bare callable on the stack ``lance-ns serve`` runs on by default (uvicorn's auto: uvloop + httptools)."""
    import uvicorn

    from lance_ns.server.logs import log_http_stack

    with open(answers_path) as f:
        answers = json.load(f)
    log_http_stack({})
    uvicorn.run(bare_app(answers), host="127.0.0.1", port=port, log_level="warning", access_log=False,
                lifespan="off", timeout_keep_alive=30)


def limit_cell(client, op: str, clients: int, seconds: float) -> dict:
    """``clients`` threads sharing one pylance RestNamespace, in a closed loop for ``seconds``."""
    fn = _limit_requests()[op]
    return closed_loop([lambda: fn(client)] * clients, seconds)


def limit(root: str, threads: int, ops: list[str], clients: list[int], seconds: float, rounds: int) -> int:
    import lance.namespace

    from bench_ui import declare_many  # the same 10,000 declared tables as the UI benchmark

    started = time.perf_counter()
    declare_many(root, LIST_TABLES)
    print(f"declared {LIST_TABLES} tables in {time.perf_counter() - started:.1f} s", flush=True)
    servers: dict[str, tuple[subprocess.Popen, str]] = {}
    try:
        servers["ours"] = start_ours(root, threads)
        servers["bare"] = start_bare(_capture(servers["ours"][1]))
        servers["pylance"] = start_pylance(root)
        conns = {name: lance.namespace.RestNamespace(uri=url) for name, (_, url) in servers.items()}
        requests = _limit_requests()
        for op in ops:  # the three answer alike (and each connection is warm)
            answers = {name: requests[op](c) for name, c in conns.items()}
            if op == "list":
                pages = {name: a.tables for name, a in answers.items()}
                if len({tuple(p) for p in pages.values()}) != 1 or len(pages["ours"]) != PAGE:
                    raise RuntimeError(f"the servers disagree about the first page: { {k: v[:3] for k, v in pages.items()} }")
        results = _interleaved(conns, ops, clients, seconds, rounds,
                               pids={name: proc.pid for name, (proc, _) in servers.items()})
    finally:
        for proc, _ in servers.values():
            stop(proc)
    _print_conditions(seconds, rounds)
    print(f"{'op':9} {'clients':>7} | {'ours rps':>9} {'p50':>6} {'p99':>6} | {'bare rps':>9} {'p50':>6} {'p99':>6} |"
          f" {'pylance rps':>11} {'p50':>6} {'p99':>6} | {'ours/bare':>9} {'ours/pyl':>8} {'p99 ours/bare':>13}")
    for op in ops:
        for n in clients:
            o, b, p = (results[(name, op, n)] for name in ("ours", "bare", "pylance"))
            errors = [r["errors"] for r in (o, b, p)]
            print(f"{op:9} {n:>7} | {o['rps']:>9.0f} {o['p50_ms']:>6.2f} {o['p99_ms']:>6.2f} |"
                  f" {b['rps']:>9.0f} {b['p50_ms']:>6.2f} {b['p99_ms']:>6.2f} |"
                  f" {p['rps']:>11.0f} {p['p50_ms']:>6.2f} {p['p99_ms']:>6.2f} |"
                  f" {o['rps'] / b['rps']:>8.2f}x {o['rps'] / p['rps']:>7.2f}x {o['p99_ms'] / b['p99_ms']:>12.2f}x"
                  + (f"  errors {errors}" if any(errors) else ""))
    print("\nserver CPU per request (user + system; the load generator shares the cores, so its rps blur):")
    for op in ops:
        for n in clients:
            o, b, p = (results[(name, op, n)]["cpu_us"] for name in ("ours", "bare", "pylance"))
            print(f"{op:9} {n:>7} | ours {o:7.1f} us  bare {b:7.1f} us  pylance {p:8.1f} us | ours - bare {o - b:6.1f} us")
    n = max(clients)
    print(f"\ntargets at {n} clients (issue 22; describe ours/bare: issue 53):")
    for (op, metric), goals in LIMIT_TARGETS.items():
        if op not in ops:
            continue
        for peer, sense, bound in goals:
            key = "rps" if metric == "rps" else "p99_ms"
            ratio = results[("ours", op, n)][key] / results[(peer, op, n)][key]
            met = ratio >= bound if sense == ">=" else ratio <= bound
            print(f"  {op:9} {metric:3} ours/{peer:7} {ratio:6.2f}x  (target {sense} {bound}x)  {'met' if met else 'NOT met'}")
    return 0


def _print_conditions(seconds: float, rounds: int) -> None:
    avg = os.getloadavg()
    print(f"\n{seconds:.1f} s per cell x {rounds} rounds, interleaved; cpu count {os.cpu_count()}; "
          f"load average {avg[0]:.2f} {avg[1]:.2f} {avg[2]:.2f}")


def _cpu_seconds(pid: int) -> float:
    """CPU time (user + system) a process has used so far (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _interleaved(conns: dict, ops: list[str], clients: list[int], seconds: float, rounds: int,
                 pids: dict | None = None) -> dict:
    """(server, op, clients) -> summary, each cell run on every server in turn for ``rounds``
    rounds, so that a machine's drifting load hits them alike.  With ``pids`` (server -> its
    process) each summary also has the server's CPU time per request, which the load generator
    sharing the cores does not blur as it blurs requests per second."""
    cells: dict[tuple[str, str, int], dict] = {}
    names = list(conns)
    turn = 0
    for _ in range(rounds):
        for op in ops:
            for n in clients:
                # each cell starts with the next server: a server measured right after another
                # runs a few per cent faster here (an A/A run showed it), so none always goes first
                turn += 1
                for name in names[turn % len(names):] + names[:turn % len(names)]:
                    pid = (pids or {}).get(name)
                    cpu = _cpu_seconds(pid) if pid else 0.0
                    r = limit_cell(conns[name], op, n, seconds)
                    acc = cells.setdefault((name, op, n), {"elapsed": 0.0, "lat": [], "errors": 0, "cpu": 0.0})
                    acc["cpu"] += (_cpu_seconds(pid) - cpu) if pid else float("nan")
                    acc["elapsed"] += r["elapsed"]
                    acc["lat"] += r["lat"]
                    acc["errors"] += r["errors"]
    return {k: _summary(v) for k, v in cells.items()}


def overhead(root: str, threads: int, ops: list[str], clients: list[int], seconds: float, rounds: int) -> int:
    """Issue 22's last target: the server with authorization (an auth file; the client a
    reader principal) and metrics on, against the same server with both off
    (``--no-metrics``, no auth), with the load of --limit (pylance's Rust client)."""
    import lance.namespace

    from bench_ui import declare_many

    declare_many(root, LIST_TABLES)
    auth = os.path.join(root, "auth.toml")
    with open(auth, "w") as f:
        f.write(f'[[principal]]\nname = "reader"\ntoken = "{TOKEN}"\nread = ["bench", "big"]\n'
                '[[principal]]\nname = "other"\ntoken = "other-token"\nadmin = ["elsewhere"]\n')
    servers: dict[str, tuple[subprocess.Popen, str]] = {}
    try:
        servers["on"] = start_ours(root, threads, extra=("--auth-file", auth))
        servers["off"] = start_ours(root, threads, extra=("--no-metrics",))
        conns = {
            "on": lance.namespace.RestNamespace(uri=servers["on"][1], **{"header.Authorization": f"Bearer {TOKEN}"}),
            "off": lance.namespace.RestNamespace(uri=servers["off"][1]),
        }
        for op in ops:  # both answer (the token is accepted) and the connections are warm
            for conn in conns.values():
                _limit_requests()[op](conn)
        results = _interleaved(conns, ops, clients, seconds, rounds,
                               pids={name: proc.pid for name, (proc, _) in servers.items()})
    finally:
        for proc, _ in servers.values():
            stop(proc)
    _print_conditions(seconds, rounds)
    print("on: --auth-file (a reader principal's token) and metrics; off: no auth, --no-metrics")
    print(f"{'op':9} {'clients':>7} | {'on rps':>8} {'p99':>6} | {'off rps':>8} {'p99':>6} | {'on/off':>7}  target >= 0.9x")
    ratios = []
    for op in ops:
        for n in clients:
            a, b = results[("on", op, n)], results[("off", op, n)]
            ratio = a["rps"] / b["rps"]
            ratios.append(ratio)
            print(f"{op:9} {n:>7} | {a['rps']:>8.0f} {a['p99_ms']:>6.2f} | {b['rps']:>8.0f} {b['p99_ms']:>6.2f} |"
                  f" {ratio:>6.2f}x  {'met' if ratio >= 0.9 else 'NOT met'}"
                  + (f"  errors {a['errors']}/{b['errors']}" if a["errors"] or b["errors"] else ""))
    print(f"all cells (geometric mean): {statistics.geometric_mean(ratios):.2f}x")
    # A cell's ratio moves by several per cent from run to run on this machine, more than the
    # difference measured: the server's own cost per request, without sockets, says it exactly.
    own, n = in_process_cost(root, auth, ops), min(clients)
    print("\nthe server's own work per request, in process (the ASGI app called directly, median of 5 x 2,000):")
    for op in ops:
        on, off = own[op]
        print(f"{op:9} on {on:6.1f} us  off {off:6.1f} us  on costs {on - off:+5.1f} us: "
              f"{(on - off) / (1e6 / results[('off', op, n)]['rps']):.1%} of a request's time at {n} client(s) over HTTP")
    return 0


def in_process_cost(root: str, auth: str, ops: list[str], calls: int = 2000, repeat: int = 5) -> dict:
    """op -> (microseconds per request with auth and metrics on, with both off): the ASGI app
    called directly on one event loop, on and off alternated."""
    import asyncio

    import lance_ns
    from lance_ns.server.app import create_app

    apps = {
        "on": (create_app(lance_ns.connect("dir", {"root": root}), auth_file=auth, log_requests=False),
               [(b"authorization", f"Bearer {TOKEN}".encode())]),
        "off": (create_app(lance_ns.connect("dir", {"root": root}), metrics=False, log_requests=False), []),
    }

    async def call(app, headers, method, path, body, query):
        sent = []
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
                 "scheme": "http", "path": path, "raw_path": path.encode(), "root_path": "", "query_string": query,
                 "headers": [*headers, (b"content-type", b"application/json"),
                             (b"content-length", str(len(body)).encode())],
                 "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 1)}

        async def receive():
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message):
            sent.append(message)

        await app(scope, receive, send)
        if sent[0]["status"] != 200:
            raise RuntimeError(f"{method} {path}: {sent[0]['status']} {sent[1].get('body', b'')[:200]!r}")

    async def run() -> dict:
        out = {}
        for op in ops:
            request = _LIMIT_HTTP[op]
            times: dict[str, list[float]] = {"on": [], "off": []}
            for _ in range(repeat):
                for name, (app, headers) in apps.items():
                    for _ in range(calls // 10):  # warm
                        await call(app, headers, *request)
                    start = time.perf_counter()
                    for _ in range(calls):
                        await call(app, headers, *request)
                    times[name].append((time.perf_counter() - start) / calls * 1e6)
            out[op] = (statistics.median(times["on"]), statistics.median(times["off"]))
        return out

    return asyncio.run(run())


def _summary(cell: dict) -> dict:
    lat = sorted(cell["lat"])
    n = len(lat)
    return {
        "requests": n,
        "errors": cell["errors"],
        "rps": n / cell["elapsed"] if cell["elapsed"] else float("nan"),
        "p50_ms": lat[n // 2] * 1000 if n else float("nan"),
        "p99_ms": lat[min(n - 1, int(n * 0.99))] * 1000 if n else float("nan"),
        "cpu_us": cell.get("cpu", float("nan")) / n * 1e6 if n else float("nan"),
    }


TOKEN = "bench-reader-token"


def deployment(root: str, threads: int, ops: list[str], clients: list[int], seconds: float) -> int:
    """Authorization's cost and the gain of a second worker process."""
    auth = os.path.join(root, "auth.toml")
    with open(auth, "w") as f:
        f.write(f'[[principal]]\nname = "reader"\ntoken = "{TOKEN}"\nread = ["bench"]\n'
                '[[principal]]\nname = "other"\ntoken = "other-token"\nadmin = ["elsewhere"]\n')
    settings = {  # name: (extra flags, token)
        "no-auth": ((), None),
        "auth-file": (("--auth-file", auth), TOKEN),
        "workers-1": (("--workers", "1"), None),
        "workers-2": (("--workers", "2"), None),
    }
    results = {}
    servers = {}
    try:
        for name, (extra, _) in settings.items():
            servers[name] = start_ours(root, threads, extra=extra)
        for op in ops:  # interleaved: each cell on every server in turn, so drifting load hits them alike
            for n in clients:
                for name, (_, token) in settings.items():
                    if name.startswith("workers") and n != max(clients):
                        continue
                    v = run_loads(servers[name][1], [op], [n], seconds, token)[(op, n)]
                    results[(name, op, n)] = v
                    print(f"{name:10} {op:9} {n:>3} clients: {v['rps']:.0f} rps, p99 {v['p99_ms']:.2f} ms", flush=True)
    finally:
        for proc, _ in servers.values():
            stop(proc)
    avg = os.getloadavg()
    print(f"\n{seconds:.1f} s per cell, interleaved, {N_TABLES} tables, cpu count {os.cpu_count()}, "
          f"load average {avg[0]:.2f} {avg[1]:.2f} {avg[2]:.2f}")
    for a_name, b_name, cells in (("auth-file", "no-auth", clients), ("workers-2", "workers-1", [max(clients)])):
        print(f"\n{a_name} vs {b_name}")
        print(f"{'op':9} {'clients':>7} | {a_name + ' rps':>15} {'p99 ms':>7} | {b_name + ' rps':>15} {'p99 ms':>7} | {'rps ratio':>9}")
        for op in ops:
            for n in cells:
                a, b = results[(a_name, op, n)], results[(b_name, op, n)]
                print(f"{op:9} {n:>7} | {a['rps']:>15.0f} {a['p99_ms']:>7.2f} | {b['rps']:>15.0f} {b['p99_ms']:>7.2f} |"
                      f" {a['rps'] / b['rps']:>8.2f}x" + (f"  errors {a['errors']}/{b['errors']}" if a["errors"] or b["errors"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
