"""Two REST servers on one directory root, racing clients split across them.

Used by tests/reliability/test_two_servers.py (bounded) and runnable alone for
a longer run::

    python -m tests.reliability.stress --slots 12 --threads 8

Every *conflict* is one request sent by all threads at once (released by a
barrier), thread ``i`` going to server ``i % 2``.  The expected outcome of
each conflict follows from the state the acknowledged operations left, which
a model keeps; at the end the root itself (read by a fresh client of ours
and by pylance's own DirectoryNamespace) must equal the model.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import lance
import lance.namespace
import pyarrow as pa
from lance_namespace import LanceNamespaceError, ListNamespacesRequest, ListTablesRequest

import lance_ns
from lance_ns.datasets import table_to_ipc_stream
from tests.services.process import wait_healthy

OK = "ok"
#: codes a loser may answer; never 17/18 (unavailable / internal) or a non-spec error
SERVER_FAULTS = {17, 18}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def dir_servers(root: str, count: int = 2, threads: int = 8):
    """``count`` ``python -m lance_ns.server --impl dir`` processes on one root; yields their URLs."""
    procs, urls = [], []
    env = {k: v for k, v in os.environ.items() if not k.startswith("LANCE_NS")}
    try:
        for _ in range(count):
            port = _free_port()
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "lance_ns.server", "--impl", "dir", "--prop", f"root={root}",
                     "--port", str(port), "--threads", str(threads), "--log-level", "warning"],
                    env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                )
            )
            urls.append(f"http://127.0.0.1:{port}")
        deadline = time.monotonic() + 180  # cold starts import pylance: slow on a busy machine
        for proc, url in zip(procs, urls):
            wait_healthy(proc, url, timeout=deadline - time.monotonic())
        yield urls
    finally:
        for proc in procs:  # by PID: only the processes started here
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def rows(i: int) -> pa.Table:
    return pa.table({"id": pa.array(range(i + 1), pa.int64()), "who": [f"writer{i}"] * (i + 1)})


@dataclass
class Report:
    conflicts: int = 0
    operations: int = 0
    outcomes: Counter = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)

    def check(self, what: str, ok: bool, out) -> None:
        if not ok:
            self.problems.append(f"{what}: {out}")


class Stress:
    def __init__(self, urls: list[str], root: str, threads: int = 8):
        self.root = root
        self.threads = threads
        self.clients = [lance_ns.connect("rest", {"uri": urls[i % len(urls)]}) for i in range(threads)]
        self.report = Report()
        #: the model: namespace -> {table: rows or None (declared only)}
        self.model: dict[str, dict[str, int | None]] = {}

    def close(self) -> None:
        for c in self.clients:
            c.close()

    def race(self, fn) -> list:
        barrier = threading.Barrier(self.threads, timeout=120)
        out: list = [None] * self.threads

        def run(i):
            barrier.wait()
            try:
                fn(self.clients[i], i)
                out[i] = OK
            except LanceNamespaceError as e:
                out[i] = int(e.code)
            except Exception as e:  # noqa: BLE001 - a problem, reported
                out[i] = repr(e)

        workers = [threading.Thread(target=run, args=(i,)) for i in range(self.threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(300)
        self.report.conflicts += 1
        self.report.operations += self.threads
        self.report.outcomes.update(o if isinstance(o, (str, int)) else repr(o) for o in out)
        for o in out:
            if o in SERVER_FAULTS or (isinstance(o, str) and o != OK):
                self.report.problems.append(f"server fault / non-spec error: {o!r}")
        return out

    def one_winner(self, what: str, out: list, loser_codes: set[int]) -> int | None:
        good = out.count(OK) == 1 and all(o == OK or o in loser_codes for o in out)
        self.report.check(f"{what}: one winner, losers {sorted(loser_codes)}", good, out)
        return out.index(OK) if OK in out else None

    # -- one slot: a namespace's life, every step a conflict ------------------------------
    def slot(self, k: int) -> None:
        ns = f"s{k}"
        out = self.race(lambda c, i: c.create_namespace({"id": [ns]}))
        if self.one_winner(f"create_namespace {ns}", out, {2}) is not None:
            self.model[ns] = {}
        if ns not in self.model:
            return

        out = self.race(lambda c, i: c.declare_table({"id": [ns, "d"]}))
        if self.one_winner(f"declare {ns}.d", out, {5}) is not None:
            self.model[ns]["d"] = None

        out = self.race(lambda c, i: c.create_table({"id": [ns, "c"]}, table_to_ipc_stream(rows(i))))
        w = self.one_winner(f"create_table {ns}.c", out, {5})
        if w is not None:
            self.model[ns]["c"] = w + 1

        out = self.race(lambda c, i: c.create_table({"id": [ns, "d"]}, table_to_ipc_stream(rows(i))))
        w = self.one_winner(f"create_table of declared {ns}.d", out, {5})
        if w is not None:
            self.model[ns]["d"] = w + 1

        out = self.race(lambda c, i: c.drop_table({"id": [ns, "d"]}))
        if self.one_winner(f"drop_table {ns}.d", out, {4}) is not None:
            self.model[ns].pop("d", None)

        out = self.race(lambda c, i: c.deregister_table({"id": [ns, "c"]}))
        if self.one_winner(f"deregister {ns}.c", out, {4}) is not None:
            self.model[ns].pop("c", None)

        # creates racing drops of one table: consistent, whatever the order
        def create_or_drop(c, i):
            if i % 2:
                return c.drop_table({"id": [ns, "x"]})
            return c.create_table({"id": [ns, "x"]}, table_to_ipc_stream(rows(i)))

        out = self.race(create_or_drop)
        creates = [o for i, o in enumerate(out) if i % 2 == 0]
        drops = [o for i, o in enumerate(out) if i % 2]
        # each acknowledged drop removed one table; a create answering 14 (a drop
        # overtook it) may or may not have declared the table that drop removed
        least = creates.count(OK) - drops.count(OK)
        most = least + creates.count(14)
        try:
            self.clients[0].describe_table({"id": [ns, "x"]})
            alive = 1
        except LanceNamespaceError as e:
            alive = 0 if int(e.code) == 4 else -99  # anything else is a problem
        self.report.check(
            f"create/drop {ns}.x", all(o in (OK, 5, 14) for o in creates) and all(o in (OK, 4) for o in drops)
            and alive in (0, 1) and least <= alive <= most, (alive, out),
        )
        if alive == 1:
            n = self._rows([ns, "x"])
            winners = {i + 1 for i, o in enumerate(out) if i % 2 == 0 and o == OK}
            self.report.check(f"{ns}.x holds a winner's rows", n in winners, (n, out))
            self.model[ns]["x"] = n

        if k % 2 == 0:  # every other namespace is dropped again (once empty)
            for t in list(self.model[ns]):
                self.clients[0].drop_table({"id": [ns, t]})
                del self.model[ns][t]
            out = self.race(lambda c, i: c.drop_namespace({"id": [ns]}))
            if self.one_winner(f"drop_namespace {ns}", out, {1}) is not None:
                del self.model[ns]

    def _rows(self, table_id) -> int:
        return lance.dataset(namespace_client=self.clients[0], table_id=table_id).count_rows()

    # -- the end: the root holds exactly what was acknowledged ------------------------------
    def verify(self) -> None:
        ours = lance_ns.connect("dir", {"root": self.root})
        pylance = lance.namespace.DirectoryNamespace(root=self.root)
        for name, reader in (("lance_ns dir", ours), ("pylance DirectoryNamespace", pylance)):
            try:
                namespaces = sorted(reader.list_namespaces(ListNamespacesRequest(id=[])).namespaces)
            except Exception as e:  # noqa: BLE001 - reported
                self.report.problems.append(f"{name} cannot list the root: {e!r}")
                continue
            self.report.check(f"{name}: namespaces", namespaces == sorted(self.model), (namespaces, sorted(self.model)))
            for ns, tables in self.model.items():
                listed = sorted(reader.list_tables(ListTablesRequest(id=[ns])).tables)
                self.report.check(f"{name}: tables of {ns}", listed == sorted(tables), (listed, sorted(tables)))
        for ns, tables in self.model.items():
            for t, n in tables.items():
                if n is not None:
                    got = lance.dataset(namespace_client=ours, table_id=[ns, t]).count_rows()
                    self.report.check(f"rows of {ns}.{t}", got == n, (got, n))


def run(root: str, slots: int, threads: int = 8, urls: list[str] | None = None) -> Report:
    """The stress run on two new servers, or on ``urls`` (servers already serving ``root``)."""
    if urls is None:
        with dir_servers(root, 2, threads) as started:
            return run(root, slots, threads, started)
    stress = Stress(urls, root, threads)
    try:
        for k in range(slots):
            stress.slot(k)
            if stress.report.problems:  # the rest would only repeat them (and a hung server times out)
                break
    finally:
        stress.close()
    stress.verify()
    return stress.report


def main(argv=None) -> int:
    import tempfile

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--slots", type=int, default=12, help="namespaces raced through (8 conflicts each)")
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--root", help="directory root (default: a temporary directory)")
    args = p.parse_args(argv)
    root = args.root or tempfile.mkdtemp(prefix="lance-ns-stress-")
    started = time.monotonic()
    report = run(root, args.slots, args.threads)
    print(f"{report.conflicts} conflicts, {report.operations} operations in {time.monotonic() - started:.1f}s "
          f"on two servers; outcomes {dict(report.outcomes)}")
    for problem in report.problems:
        print("PROBLEM", problem)
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
