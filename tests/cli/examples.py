"""Run documented ``lance-ns`` command lines as written, against a small world
under a temporary directory: ``/data/...`` in a line means ``<tmp>/data/...``.

The world: ``/data/lake`` is a directory namespace with namespace ``db`` (table
``events``: 2 versions, tag ``stable``) and an empty namespace ``staging``;
``/data/raw`` holds two Lance tables (``events.lance``, ``clicks.lance``);
``/data/orders.parquet`` and ``/data/orders.csv`` are files to load,
``/data/tenants.txt`` lists tables to declare (``table declare --from``); the named
configuration ``prod`` is that lake; a REST server for ``127.0.0.1:2333``
(token ``s3cret``) serves it when a line needs one.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import lance
import pyarrow as pa
import pyarrow.parquet as pq

import lance_ns
from lance_ns.cli import main

EXAMPLE_LINE = re.compile(r"^\s*\$ (?P<line>.+)$", re.M)
SERVER_ADDRESS = "127.0.0.1:2333"
TOKEN = "s3cret"


def build_world(base: Path) -> Path:
    data = base / "data"
    lake, raw = data / "lake", data / "raw"
    ns = lance_ns.connect("dir", {"root": str(lake)})
    ns.create_namespace({"id": ["db"]})
    ns.create_namespace({"id": ["staging"]})
    lance.write_dataset(pa.table({"id": [1, 2, 3]}), namespace_client=ns, table_id=["db", "events"], mode="create")
    lance.write_dataset(pa.table({"id": [4]}), namespace_client=ns, table_id=["db", "events"], mode="append")
    ds = lance.dataset(namespace_client=ns, table_id=["db", "events"])
    ds.tags.create("stable", 1)
    for name in ("events", "clicks"):
        lance.write_dataset(pa.table({"id": [1, 2]}), str(raw / f"{name}.lance"))
    orders = pa.table({"order_id": [1, 2], "amount": [9.5, 20.0], "customer": ["ann", "bob"]})
    pq.write_table(orders, data / "orders.parquet")
    (data / "orders.csv").write_text("order_id,amount\n1,9.5\n2,20.0\n")
    (data / "tenants.txt").write_text('tenant_a\n{"id": ["tenant_b"], "properties": {"tier": "gold"}}\n')
    (data / "scratch").mkdir()
    config = base / "config.toml"
    config.write_text(f'[namespaces.prod]\nimpl = "dir"\nroot = "{lake}"\n')
    return config


@dataclass
class Ran:
    line: str
    rc: int
    out: str
    err: str


@dataclass
class World:
    base: Path
    monkeypatch: object
    server: object = None
    served: list = field(default_factory=list)

    def __post_init__(self):
        config = build_world(self.base)
        self.monkeypatch.setenv("LANCE_NS_CONFIG", str(config))
        # `lance-ns serve` examples: the namespace is opened and handed to the server; the
        # server itself is not started on the example's fixed port
        import lance_ns.server.running as running

        def fake_serve(ns, **kwargs):
            ns.list_namespaces({"id": []})
            self.served.append(kwargs)

        self.monkeypatch.setattr(running, "serve", fake_serve)

    def close(self):
        if self.server is not None:
            self.server.stop()

    def _address(self) -> str:
        if self.server is None:
            from lance_ns.server import run_server_in_thread

            ns = lance_ns.connect("dir", {"root": str(self.base / "data" / "lake")})
            self.server = run_server_in_thread(ns, auth_token=TOKEN, log_requests=False)
        return self.server.url.split("://", 1)[1]

    def run(self, line: str) -> Ran:
        text = line.replace(" /data/", f" {self.base}/data/").replace("=/data/", f"={self.base}/data/")
        if SERVER_ADDRESS in text and "serve" not in shlex.split(text):
            text = text.replace(SERVER_ADDRESS, self._address())
        words = shlex.split(text)
        inner = re.fullmatch(r'eval "\$\((.*)\)"', text)
        if inner:  # eval "$(lance-ns completion bash)": run the inner command
            words = shlex.split(inner.group(1))
        env = {}
        while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
            key, _, value = words.pop(0).partition("=")
            env[key] = value
        assert words and words[0] == "lance-ns", line
        out, err = io.StringIO(), io.StringIO()
        with _environ(env):
            rc = main(words[1:], stdout=out, stderr=err)
        return Ran(line, rc, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def _environ(values: dict):
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
