"""A Spark write killed mid-job (SIGKILL to the driver, its JVM and its Python workers, while
one task of each job has finished writing its fragment and the other is still running) leaves
every table as it was: the same version, fragments and rows, the same versions published by
the namespace for an implementation-managed table, no table made by a killed CTAS, the old
table of a killed RTAS, no micro-batch of a killed streaming query; and the next write, by
pylance through our namespace and by Spark (the CTAS run again too, the stream resumed from its
checkpoint, which writes its micro-batch once), lands as if nothing had happened.

The jobs run in their own process (tests/spark/killed_write_job.py), all forms at once in one
Spark application, so that one start-up of Spark serves every case; the writes after the kill
run in another (a rerun is a new application).  No test here uses the suite's shared Spark
session, so the module may run on any pytest worker (tests/conftest.py)."""

from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest

import lance_ns

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

JOB = Path(__file__).with_name("killed_write_job.py")
#: catalog -> (table, write form) run by the killed job; ``ctas`` names a table that does not exist
#: (one job per form and kind of commit: an append and a staged replace on a storage-managed table,
#: an overwrite published through the namespace, a staged create of each kind; every job starts
#: two Python workers, so the list is kept to what differs)
JOBS = {
    "lake": [("app", "append"), ("new", "ctas"), ("rep", "replace"), ("streamed", "stream")],
    "managed": [("ow", "insert-overwrite"), ("new", "ctas")],
}
SEED = pa.table({"n": pa.array([1, 2], pa.int64()), "s": ["a", "b"]})
#: what a ``stream`` job reads: the table ``stream_source`` of its catalog, in two fragments
STREAMED = [(n, str(n)) for n in range(100, 300)]


def _connect(root: Path, catalog: str):
    props = {"root": str(root / catalog)}
    if catalog == "managed":
        props["managed_versioning"] = "true"
    return lance_ns.connect("dir", props)


def _state(ns, table: str) -> dict:
    """What a killed write must leave as it was."""
    import lance

    ident = ["s", table]
    described = ns.describe_table({"id": ident})
    ds = lance.dataset(namespace_client=ns, table_id=ident)
    state = {"version": described.version, "dataset_version": ds.version,
             "fragments": sorted(json.dumps(f.metadata.to_json(), sort_keys=True) for f in ds.get_fragments()),
             "rows": sorted(tuple(r.values()) for r in ds.to_table().to_pylist())}
    if described.managed_versioning:
        state["published"] = [v.version for v in ns.list_table_versions({"id": ident}).versions]
    return state


def _recorded_tasks(root: Path) -> dict[str, int]:
    """table directory -> how many of its write job's tasks have recorded finished files."""
    found: dict[str, int] = {}
    for record in glob.glob(str(root / "*" / "*" / "_lance_ns_spark" / "*" / "*.json")):
        table_dir = Path(record).parents[2].name
        found[table_dir] = found.get(table_dir, 0) + 1
    return found


def _data_files(root: Path) -> set[str]:
    return set(glob.glob(str(root / "*" / "*" / "data" / "*")))


def _stream_source(ns) -> None:
    """The table a ``stream`` job reads: STREAMED in two fragments (two tasks of its micro-batch)."""
    import lance

    half = len(STREAMED) // 2
    first, second = (pa.table({"n": pa.array([n for n, _ in part], pa.int64()), "s": [s for _, s in part]})
                     for part in (STREAMED[:half], STREAMED[half:]))
    ns.create_table({"id": ["s", "stream_source"]}, first)
    lance.write_dataset(second, namespace_client=ns, table_id=["s", "stream_source"], mode="append")


class Killed:
    """The tables before the jobs ran, and the namespaces to look at them after the kill."""

    def __init__(self, root: Path):
        self.root = root
        self.spaces = {catalog: _connect(root, catalog) for catalog in JOBS}
        self.before: dict[tuple[str, str], dict] = {}


@pytest.fixture(scope="module")
def killed(tmp_path_factory) -> Killed:
    """Every job of JOBS started at once on its table, then SIGKILLed (driver, JVM and Python
    workers at once) while each job has one task finished and one still writing."""
    k = Killed(tmp_path_factory.mktemp("killed"))
    streams = []  # the data directories of the stream jobs' tables
    for catalog, jobs in JOBS.items():
        ns = k.spaces[catalog]
        ns.create_namespace({"id": ["s"]})
        for table, form in jobs:
            if form != "ctas":
                ns.create_table({"id": ["s", table]}, SEED)
                k.before[(catalog, table)] = _state(ns, table)
            if form == "stream":
                _stream_source(ns)
                streams.append(Path(ns.describe_table({"id": ["s", table]}).location) / "data")
    assert all(s.get("published") for (c, _), s in k.before.items() if c == "managed"), "not managed tables"
    files_before = _data_files(k.root)

    def streams_writing() -> bool:  # a data file of the micro-batch's finished task (and the stalled one's)
        return all(d.exists() and any(str(f) not in files_before for f in d.iterdir()) for d in streams)

    args = [f"{form}:{catalog}.s.{table}" for catalog, jobs in JOBS.items() for table, form in jobs]
    batch_jobs = sum(1 for jobs in JOBS.values() for _, form in jobs if form != "stream")
    proc = subprocess.Popen([sys.executable, str(JOB), str(k.root), *args], start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        # every job has a finished task (its fragment written and recorded) and is still running
        while len(_recorded_tasks(k.root)) < batch_jobs or not streams_writing():
            if proc.poll() is not None:
                pytest.fail(f"the writing job ended by itself ({proc.returncode}): {proc.stderr.read()[-3000:]}")
            if time.monotonic() > deadline:
                pytest.fail(f"the jobs never recorded a finished task: {_recorded_tasks(k.root)}")
            time.sleep(0.2)
        time.sleep(1.0)  # the stalled tasks are mid-write too
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the driver, its JVM and its Python workers at once
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert _data_files(k.root) - files_before, "the killed jobs wrote no data file: the test killed nothing"
    return k


def test_a_write_killed_mid_job_leaves_every_table_as_it_was(killed):
    for (catalog, table), state in killed.before.items():
        assert _state(killed.spaces[catalog], table) == state, f"{catalog}.s.{table} changed"


def test_a_killed_ctas_leaves_no_table(killed):
    """The staged CTAS wrote its fragments where the table would be, and nothing else."""
    from lance_ns.errors import TableNotFoundError

    for catalog, jobs in JOBS.items():
        ns = killed.spaces[catalog]
        for table in (table for table, form in jobs if form == "ctas"):
            assert table not in ns.list_tables({"id": ["s"]}).tables
            with pytest.raises(TableNotFoundError) as missing:
                ns.describe_table({"id": ["s", table]})
            assert missing.value.code == 4


def test_the_next_writes_after_a_killed_job_land(killed):
    """pylance through our namespace, then Spark (a new application, as a rerun would be): no
    lock, marker or version the killed jobs left stands in their way, and each write is one
    more version on the one the table had; a killed CTAS run again makes its table."""
    import lance

    for (catalog, table), state in killed.before.items():
        ns = killed.spaces[catalog]
        more = pa.table({"n": pa.array([7], pa.int64()), "s": ["z"]})
        lance.write_dataset(more, namespace_client=ns, table_id=["s", table], mode="append")
        after = _state(ns, table)
        assert after["rows"] == sorted(state["rows"] + [(7, "z")])
        assert after["dataset_version"] == state["dataset_version"] + 1
        if "published" in state:
            assert after["published"] == state["published"] + [state["published"][-1] + 1]
    statements, streams = [], []
    for catalog, jobs in JOBS.items():
        for table, form in jobs:
            if form == "ctas":  # run again: the killed one's orphan files are in no one's way
                statements.append(f"CREATE TABLE {catalog}.s.{table} AS SELECT CAST(9 AS BIGINT) AS n, 'x' AS s")
            else:
                statements.append(f"INSERT INTO {catalog}.s.{table} VALUES (9, 'x')")
            if form == "stream":  # resumed from its checkpoint: the killed micro-batch, once
                streams.append(f"{catalog}.s.{table}")
    done = subprocess.run([sys.executable, str(JOB), str(killed.root), "--sql", *statements, "--stream", *streams],
                          capture_output=True, text=True, timeout=300)
    assert "DONE" in done.stdout, f"the writes after the kill failed ({done.returncode}): {done.stderr[-3000:]}"
    for catalog, jobs in JOBS.items():
        for table, form in jobs:
            rows = _state(killed.spaces[catalog], table)["rows"]
            if form == "ctas":
                assert rows == [(9, "x")], (catalog, table)
            elif form == "stream":
                assert rows == sorted(killed.before[(catalog, table)]["rows"] + [(7, "z"), (9, "x")] + STREAMED), \
                    (catalog, table)
            else:
                assert rows == sorted(killed.before[(catalog, table)]["rows"] + [(7, "z"), (9, "x")]), (catalog, table)
