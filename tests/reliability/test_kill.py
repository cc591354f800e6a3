"""kill -9 of a writer process in the middle of its commits, again and again:
every operation it acknowledged is there afterwards, and the root stays
readable by our client and by pylance's own DirectoryNamespace."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import lance
import lance.namespace
import pytest
from lance_namespace import DescribeTableRequest, ListNamespacesRequest, ListTablesRequest

import lance_ns

REPO = Path(__file__).resolve().parents[2]
KILLS = int(os.environ.get("LANCE_NS_KILLS", "5"))


def _run_and_kill(root: str, run: str, rng: random.Random) -> list[tuple[int, str]]:
    """Start a writer, let it commit for a random while, SIGKILL it; its acknowledged ops."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LANCE_NS")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.reliability.writer", root, run],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO,
    )
    lines: list[str] = []
    ready = threading.Event()

    def read():
        for line in proc.stdout:
            lines.append(line.strip())
            if line.startswith("ready"):
                ready.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert ready.wait(180), f"writer did not start: {proc.stderr.read() if proc.poll() is not None else ''}"
        time.sleep(rng.uniform(0.3, 2.0))  # lands anywhere in a commit
        assert proc.poll() is None, proc.stderr.read()
    finally:
        os.kill(proc.pid, signal.SIGKILL)  # by PID: only the process started here
        proc.wait()
    reader.join(10)
    acks = []
    for line in lines:
        parts = line.split()
        if len(parts) == 3 and parts[0] == "ack":
            acks.append((int(parts[1]), parts[2]))
    return acks


@pytest.mark.slow  # one cold writer start (pylance import) per kill: ~3-5 s each
def test_kill_9_loses_no_acknowledged_operation(tmp_path):
    root = str(tmp_path / "root")
    rng = random.Random(int(os.environ.get("LANCE_NS_KILL_SEED", "15")))
    acked: list[tuple[int, str]] = []
    for k in range(KILLS):
        acked += _run_and_kill(root, f"r{k}", rng)
    assert len(acked) >= KILLS, f"the writers acknowledged almost nothing: {acked}"
    print(f"{KILLS} kills, {len(acked)} acknowledged operations")

    ours = lance_ns.connect("dir", {"root": root})
    pylance = lance.namespace.DirectoryNamespace(root=root)
    tables = set(pylance.list_tables(ListTablesRequest(id=["w"])).tables)
    namespaces = set(pylance.list_namespaces(ListNamespacesRequest(id=["w"])).namespaces)
    assert set(ours.list_tables({"id": ["w"]}).tables) == tables
    assert set(ours.list_namespaces({"id": ["w"]}).namespaces) == namespaces
    for kind, name in acked:
        if kind == 2:
            assert name in namespaces, f"acknowledged namespace w.{name} is missing"
            ours.namespace_exists({"id": ["w", name]})
            continue
        assert name in tables, f"acknowledged table w.{name} is missing"
        ours.describe_table({"id": ["w", name]})
        pylance.describe_table(DescribeTableRequest(id=["w", name]))
        if kind == 1:
            i = int(name.rsplit("_", 1)[1])
            assert lance.dataset(namespace_client=ours, table_id=["w", name]).count_rows() == i % 7 + 1
            assert lance.dataset(namespace_client=pylance, table_id=["w", name]).count_rows() == i % 7 + 1
