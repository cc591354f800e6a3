"""``pip install lance-ns`` with no extras, in a fresh virtual environment: the
command works for the directory namespace, and every feature behind an extra
answers with one line naming the ``pip install`` to run."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.packaging.install import clean_env, fresh_venv, installed, run


@pytest.mark.slow  # a venv with the wheel and its core dependencies (uv, from its cache: seconds)
def test_plain_install(lance_ns_wheel, tmp_path):
    bin_dir = fresh_venv(tmp_path / "venv", str(lance_ns_wheel))
    packages = installed(bin_dir)
    for absent in ("starlette", "uvicorn", "httpx", "boto3", "pymetastore", "pyiceberg", "pyspark"):
        assert f"{absent}==" not in packages, absent  # really no extra

    env = {k: v for k, v in clean_env().items() if not k.startswith("LANCE_NS")}
    env["LANCE_NS_CONFIG"] = str(tmp_path / "none.toml")
    lance_ns = str(bin_dir / "lance-ns")

    def cli(*argv, ok=True):
        return run([lance_ns, *map(str, argv)], env=env, timeout=300, check=ok)

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
