"""What the engine tests (Ray, Daft) share: a job script the engine runs in an environment of
its own against two lance-ns namespaces -- one by backend name (``lance_ns.dir``, through
lance_namespace's registry) and one over REST at ``lance-ns serve`` -- each seeded with a
table lance-ns wrote (``sales.ours``: x = 10, 20, 30); then what the engine wrote into
``sales.events`` (1,500 rows: ids 0..1499, v = 2*id for the first 1,000 and 1 for the rest),
read back here by lance-ns and by pylance through it."""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path

import lance

import lance_ns
from tests.packaging.install import fresh_venv, run
from tests.server.conftest import lance_ns_serve

#: the job's results per namespace, for the rows described above
EXPECTED = {"count": 1500, "sum_id": sum(range(1500)), "sum_v": 2 * sum(range(1000)) + 500,
            "ours_count": 3, "ours_sum": 60}


def engine_python(wheel: str, venv: Path, requirements) -> Path:
    """The python of a fresh environment holding lance-ns (its wheel, with the REST client)
    and the engine's ``requirements``, beside but apart from the dev environment."""
    return fresh_venv(venv, [f"{wheel}[rest]", *requirements]) / "python"


def _seed(ns) -> None:
    import pyarrow as pa

    ns.create_namespace({"id": ["sales"]})
    lance.write_dataset(pa.table({"x": [10, 20, 30]}), namespace_client=ns, table_id=["sales", "ours"], mode="create")


@contextmanager
def namespaces(tmp_path: Path):
    """(plan for the job: [impl, properties] pairs, the two lance-ns clients), both seeded."""
    by_name, served_root = tmp_path / "by-name", tmp_path / "served"
    _seed(lance_ns.connect("dir", {"root": str(by_name)}))
    with lance_ns_serve(["--impl", "dir", "--prop", f"root={served_root}", "--no-ui"]) as srv:
        rest = lance_ns.connect("rest", {"uri": srv.url})
        _seed(rest)
        plan = [["lance_ns.dir", {"root": str(by_name)}], ["rest", {"uri": srv.url}]]
        yield plan, [lance_ns.connect("dir", {"root": str(by_name)}), rest]


def job_results(python, job: str, plan: list, tmp_path: Path, timeout: int) -> dict:
    """Run ``job`` (its argv[1]: the plan as JSON) with the engine's ``python``; what it printed
    after ``RESULT ``."""
    script = tmp_path / "job.py"
    script.write_text(job)
    done = run([python, script, json.dumps(plan)], timeout=timeout)
    line = next(l for l in done.stdout.splitlines() if l.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def assert_written(clients, version: int | None = None) -> None:
    """What the engine wrote into sales.events, read by lance-ns and by pylance through it."""
    for ns in clients:
        assert ns.list_tables({"id": ["sales"]}).tables == ["events", "ours"]
        dataset = lance.dataset(namespace_client=ns, table_id=["sales", "events"])
        if version is not None:
            assert dataset.version == version
        table = dataset.to_table()
        assert table.num_rows == 1500
        assert sum(table.column("id").to_pylist()) == EXPECTED["sum_id"]
        assert sum(table.column("v").to_pylist()) == EXPECTED["sum_v"]
        assert ns.count_table_rows({"id": ["sales", "events"]}).count == 1500
