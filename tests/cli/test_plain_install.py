"""``pip install lance-ns`` with no extras, in a fresh virtual environment: the
command works for the directory namespace, and every feature behind an extra
answers with one line naming the ``pip install`` to run.

Each ``lance-ns`` process imports pylance (seconds on a busy machine), so the
commands run in one Python of the fresh venv through the script's own entry
function (``lance_ns.cli.main``, what the installed script calls); the
installed script itself runs once, for a command that must fail cleanly."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.packaging.install import clean_env, fresh_venv, installed, run

#: in the fresh venv: each argv of argv[1] through lance_ns.cli.main, in order;
#: prints [{"rc", "out", "err"}, ...]
RUN_COMMANDS = """
import io, json, sys
from lance_ns.cli import main

results = []
for argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    rc = main(argv, stdout=out, stderr=err)
    results.append({"rc": rc, "out": out.getvalue(), "err": err.getvalue()})
print(json.dumps(results))
"""

#: (command, the extra it needs): each fails with one line naming that extra
NEEDS_AN_EXTRA = [
    (["serve"], "server"),
    (["check", "--uri", "http://127.0.0.1:9"], "rest"),
    (["namespace", "list", "--impl", "rest", "--prop", "uri=http://127.0.0.1:9"], "rest"),
    (["namespace", "list", "--impl", "glue"], "glue"),
    (["namespace", "list", "--impl", "hive3", "--prop", "uri=thrift://127.0.0.1:9"], "hive"),
    (["namespace", "list", "--impl", "unity", "--prop", "endpoint=http://127.0.0.1:9"], "unity"),
    (["namespace", "list", "--impl", "iceberg", "--prop", "endpoint=http://127.0.0.1:9"], "iceberg"),
]


@pytest.mark.slow  # a venv with the wheel and its core dependencies (uv, from its cache: seconds)
def test_plain_install(lance_ns_wheel, tmp_path):
    bin_dir = fresh_venv(tmp_path / "venv", str(lance_ns_wheel))
    packages = installed(bin_dir)
    for absent in ("starlette", "uvicorn", "httpx", "boto3", "pymetastore", "pyiceberg", "pyspark"):
        assert f"{absent}==" not in packages, absent  # really no extra

    env = {k: v for k, v in clean_env().items() if not k.startswith("LANCE_NS")}
    env["LANCE_NS_CONFIG"] = str(tmp_path / "none.toml")

    # the installed script: a feature without its extra exits non-zero with one line on stderr
    done = run([bin_dir / "lance-ns", "namespace", "list", "--impl", "glue"], env=env, timeout=300, check=False)
    assert done.returncode != 0 and done.stdout == "", done
    assert len(done.stderr.splitlines()) == 1 and "pip install 'lance-ns[glue]'" in done.stderr

    src = tmp_path / "orders.parquet"
    pq.write_table(pa.table({"order_id": [1, 2, 3], "amount": [1.5, 2.5, 3.5]}), src)
    conn = ["--impl", "dir", "--prop", f"root={tmp_path / 'lake'}"]
    commands = [
        ["--help"],
        ["--version"],
        [*conn, "namespace", "create", "sales"],
        ["table", "create", "sales.orders", "--from", str(src), *conn],
        ["table", "list", "sales", *conn],
        ["table", "describe", "sales.orders", *conn],
        ["table", "head", "sales.orders", "2", "--json", *conn],
        *[[*argv, *conn] if argv == ["serve"] else argv for argv, _ in NEEDS_AN_EXTRA],
    ]
    done = run([bin_dir / "python", "-c", RUN_COMMANDS, json.dumps(commands)], env=env, timeout=300)
    results = json.loads(done.stdout)
    assert len(results) == len(commands)
    works, needs_an_extra = results[:7], results[7:]
    assert all(r["rc"] == 0 for r in works), list(zip(commands, works))
    helped, version, _, _, listed, described, head = (r["out"] for r in works)
    assert "Usage: lance-ns" in helped
    assert version.startswith("lance-ns ")
    assert "sales.orders" in listed
    assert "rows" in described and "3" in described and "order_id: int64" in described
    assert '"amount": 2.5' in head

    for (argv, extra), done in zip(NEEDS_AN_EXTRA, needs_an_extra):
        assert done["rc"] != 0 and done["out"] == "", (argv, done)
        assert len(done["err"].splitlines()) == 1, (argv, done["err"])
        assert f"pip install 'lance-ns[{extra}]'" in done["err"], (argv, done["err"])
