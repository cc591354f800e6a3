"""``pip install lance-ns`` with no extras, in a fresh virtual environment: the
command works for the directory namespace, and every feature behind an extra
answers with one line naming the ``pip install`` to run."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

REPO = Path(__file__).resolve().parents[2]


def _run(args, env=None, timeout=600, check=True):
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=timeout)
    if check:
        assert done.returncode == 0, (args, done.stdout[-3000:], done.stderr[-3000:])
    return done


@pytest.mark.slow  # builds a venv and installs pylance, pyarrow, pydantic, click, rich from pip's cache: ~2-4 min
def test_plain_install(tmp_path):
    wheels = tmp_path / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(REPO)])
    (wheel,) = wheels.glob("lance_ns-*.whl")
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True, system_site_packages=False)
    bin_dir = env_dir / "bin"
    _run([str(bin_dir / "python"), "-m", "pip", "install", "-q", str(wheel)])
    installed = _run([str(bin_dir / "python"), "-m", "pip", "list", "--format=freeze"]).stdout.lower()
    for absent in ("starlette", "uvicorn", "httpx", "boto3", "pymetastore", "pyiceberg", "pyspark"):
        assert f"{absent}==" not in installed, absent  # really no extra

    env = {k: v for k, v in os.environ.items() if not k.startswith("LANCE_NS") and k != "PYTHONPATH"}
    env["LANCE_NS_CONFIG"] = str(tmp_path / "none.toml")
    lance_ns = str(bin_dir / "lance-ns")

    def cli(*argv, ok=True):
        return _run([lance_ns, *map(str, argv)], env=env, timeout=300, check=ok)

    assert "Usage: lance-ns" in cli("--help").stdout
    assert cli("--version").stdout.startswith("lance-ns ")
    src = tmp_path / "orders.parquet"
    pq.write_table(pa.table({"order_id": [1, 2, 3], "amount": [1.5, 2.5, 3.5]}), src)
    conn = ["--impl", "dir", "--prop", f"root={tmp_path / 'lake'}"]
    cli(*conn, "namespace", "create", "sales")
    cli("table", "create", "sales.orders", "--from", src, *conn)
    assert "sales.orders" in cli("table", "list", "sales", *conn).stdout
    described = cli("table", "describe", "sales.orders", *conn).stdout
    assert "rows" in described and "3" in described and "order_id: int64" in described
    assert '"amount": 2.5' in cli("table", "head", "sales.orders", "2", "--json", *conn).stdout

    for argv, extra in (
        (["serve", *conn], "server"),
        (["check", "--uri", "http://127.0.0.1:9"], "rest"),
        (["namespace", "list", "--impl", "rest", "--prop", "uri=http://127.0.0.1:9"], "rest"),
        (["namespace", "list", "--impl", "glue"], "glue"),
        (["namespace", "list", "--impl", "hive3", "--prop", "uri=thrift://127.0.0.1:9"], "hive"),
        (["namespace", "list", "--impl", "unity", "--prop", "endpoint=http://127.0.0.1:9"], "unity"),
        (["namespace", "list", "--impl", "iceberg", "--prop", "endpoint=http://127.0.0.1:9"], "iceberg"),
    ):
        done = cli(*argv, ok=False)
        assert done.returncode != 0 and done.stdout == "", argv
        assert len(done.stderr.splitlines()) == 1, (argv, done.stderr)
        assert f"pip install 'lance-ns[{extra}]'" in done.stderr, (argv, done.stderr)
