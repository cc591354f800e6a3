"""Concurrent appends to one implementation-managed table: no acknowledged write lost.

W writers append to one table at once, each A times (retrying a failed append a few
times, as a pipeline would), and afterwards the table must hold:

* every acknowledged append exactly once, and nothing of an append that was not
  acknowledged;
* versions 1..N without a gap, N = 1 + the acknowledged appends;
* no Overwrite in its history after version 1: pylance takes a table it cannot open
  for a new one and commits a fresh dataset over it, an Overwrite no client asked
  for (the loss this check was written for, see docs/reliability.md).

Writers run as threads sharing one client, or as processes with clients of their own (:class:`ProcessWriters`: ``python -m
lance_ns.conformance.appends`` workers, started once and given one round at a
time).  The conformance suite (tests/conformance/test_managed.py) and
``benchmarks/stress_appends.py`` run the same rounds.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

#: attempts per append (the first one and its retries)
ATTEMPTS = 5


def _batch(writer: int, seq: int, attempt: int):
    import pyarrow as pa

    # two rows per append: a half-applied append would show as one
    return pa.table({"writer": pa.array([writer] * 2, pa.int32()), "seq": pa.array([seq] * 2, pa.int32()),
                     "attempt": pa.array([attempt] * 2, pa.int32())})


def append_all(client, table_id: list[str], writer: int, appends: int, start: threading.Barrier | None = None) -> dict:
    """Writer ``writer``'s appends; {"acked": [[seq, attempt]...], "failed": [[seq, attempt, error]...]}."""
    import lance

    acked, failed = [], []
    if start is not None:
        start.wait()
    for seq in range(appends):
        for attempt in range(ATTEMPTS):
            try:
                lance.write_dataset(_batch(writer, seq, attempt), namespace_client=client, table_id=table_id,
                                    mode="append")
            except Exception as e:  # noqa: BLE001 - counted; the next attempt is the retry
                failed.append([seq, attempt, f"{type(e).__name__}: {str(e)[:200]}"])
                continue
            acked.append([seq, attempt])
            break
    return {"acked": acked, "failed": failed}


@dataclass
class RoundResult:
    acked: dict[tuple[int, int], int] = field(default_factory=dict)  # (writer, seq) -> attempt acknowledged
    failed: list[tuple[int, int, int, str]] = field(default_factory=list)  # (writer, seq, attempt, error)
    problems: list[str] = field(default_factory=list)

    def add(self, writer: int, outcome: dict) -> None:
        for seq, attempt in outcome["acked"]:
            self.acked[(writer, seq)] = attempt
        self.failed.extend((writer, seq, attempt, err) for seq, attempt, err in outcome["failed"])


def seed(client, table_id: list[str]) -> None:
    """The round's table: declared implementation-managed, version 1 written by pylance."""
    import lance
    import pyarrow as pa

    from lance_namespace import DeclareTableRequest

    # (request models, not dicts: pylance's own namespace classes take only those)
    client.declare_table(DeclareTableRequest(id=table_id, properties={"managed_versioning": "true"}))
    lance.write_dataset(pa.table({"writer": pa.array([-1], pa.int32()), "seq": pa.array([-1], pa.int32()),
                                  "attempt": pa.array([-1], pa.int32())}),
                        namespace_client=client, table_id=table_id, mode="append")


def verify(client, table_id: list[str], result: RoundResult) -> list[str]:
    """What the table holds against what was acknowledged (see the module doc); problems found."""
    import lance

    problems = []
    ds = lance.dataset(namespace_client=client, table_id=table_id)
    rows = ds.to_table(columns=["writer", "seq", "attempt"]).to_pylist()
    held = Counter((r["writer"], r["seq"], r["attempt"]) for r in rows if r["writer"] >= 0)
    for (writer, seq), attempt in sorted(result.acked.items()):
        if held.get((writer, seq, attempt), 0) != 2:
            problems.append(f"acknowledged append writer {writer} #{seq} (attempt {attempt}) holds "
                            f"{held.get((writer, seq, attempt), 0)} of its 2 rows")
    acked = {(w, s, a) for (w, s), a in result.acked.items()}
    for key in sorted(set(held) - acked):
        problems.append(f"append writer {key[0]} #{key[1]} attempt {key[2]} was not acknowledged, yet the "
                        f"table holds it ({held[key]} rows)")
    if sum(1 for r in rows if r["writer"] < 0) != 1:
        problems.append("the seed row (version 1) is not held exactly once")
    versions = sorted(v.version for v in _all_versions(client, table_id))
    expected = list(range(1, len(result.acked) + 2))
    if versions != expected:
        problems.append(f"versions {versions} are not 1..{expected[-1]}")
    if ds.version != expected[-1]:
        problems.append(f"the latest version read is {ds.version}, not {expected[-1]}")
    overwrites = [t.read_version + 1 for t in ds.get_transactions(len(versions))
                  if t is not None and type(t.operation).__name__ == "Overwrite" and t.read_version > 0]
    if overwrites:
        problems.append(f"Overwrites no client asked for, on top of versions {sorted(overwrites)}")
    return problems


def _all_versions(client, table_id: list[str]) -> list:
    from lance_namespace import ListTableVersionsRequest

    versions, token = [], None
    while True:
        page = client.list_table_versions(ListTableVersionsRequest(id=table_id, page_token=token, limit=1000))
        versions += page.versions
        token = page.page_token
        if not token:
            return versions


def run_round(connect: Callable[[], object], table_id: list[str], writers: int = 4, appends: int = 6,
              processes: "ProcessWriters | None" = None, catalog: tuple[str, dict] | None = None) -> RoundResult:
    """One round: seed the table, race the writers (threads on one client, or ``processes``
    connected to ``catalog``, ``(impl, properties)``, or to their own default), then verify."""
    client = connect()
    seed(client, table_id)
    result = RoundResult()
    if processes is not None:
        for writer, outcome in enumerate(processes.round(table_id, appends, *(catalog or ()))):
            result.add(writer, outcome)
    else:
        start = threading.Barrier(writers, timeout=60)
        outcomes: list[dict | None] = [None] * writers

        def run(i):
            outcomes[i] = append_all(client, table_id, i, appends, start)

        threads = [threading.Thread(target=run, args=(i,), name=f"appender-{i}") for i in range(writers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(600)
        for i, outcome in enumerate(outcomes):
            if outcome is None:
                result.problems.append(f"writer {i} did not finish within 600 s")
            else:
                result.add(i, outcome)
    result.problems += verify(client, table_id, result)
    return result


class ProcessWriters:
    """W writer processes, each with a client of its own, started once and given one round
    at a time (a new process per round would spend its time importing pylance).

    A round names the catalog it writes to (``impl`` and ``properties``, as
    :func:`lance_ns.connect` takes them; given here, they are every round's default): a
    process connects when a round names another catalog than its last one, so one set of
    processes serves the races of many backends (a test suite's session shares it)."""

    def __init__(self, impl: str | None = None, properties: dict[str, str] | None = None, writers: int = 4):
        self.catalog = {"impl": impl, "properties": properties or {}}
        self.procs = [subprocess.Popen([sys.executable, "-m", __name__, str(i)], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, text=True) for i in range(writers)]
        for p in self.procs:  # each answers "ready" once its imports are done
            line = p.stdout.readline()
            if line.strip() != "ready":
                self.close()
                raise RuntimeError(f"an append writer process did not start: {line!r}")

    def alive(self) -> bool:
        return all(p.poll() is None for p in self.procs)

    def round(self, table_id: list[str], appends: int, impl: str | None = None,
              properties: dict[str, str] | None = None) -> list[dict]:
        catalog = self.catalog if impl is None else {"impl": impl, "properties": properties or {}}
        for p in self.procs:
            p.stdin.write(json.dumps({**catalog, "table": table_id, "appends": appends}) + "\n")
            p.stdin.flush()
        return [json.loads(p.stdout.readline()) for p in self.procs]

    def close(self) -> None:
        for p in self.procs:
            if p.stdin:
                p.stdin.close()
        for p in self.procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _worker(writer: int) -> None:
    """One writer process: rounds from stdin, outcomes to stdout, a JSON line each; a client
    of its own for the catalog its rounds name, made again when a round names another."""
    import lance  # noqa: F401 (imported before "ready": no round waits for the import)
    import lance_ns

    client, connected_to = None, None
    print("ready", flush=True)
    for line in sys.stdin:
        task = json.loads(line)
        catalog = (task["impl"], task["properties"])
        if catalog != connected_to:
            if client is not None and hasattr(client, "close"):
                client.close()
            client, connected_to = lance_ns.connect(*catalog), catalog
        print(json.dumps(append_all(client, task["table"], writer, task["appends"])), flush=True)


if __name__ == "__main__":
    _worker(int(sys.argv[1]))
