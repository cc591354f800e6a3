"""What the serving commands open, they close (issue 16 item 4)."""

from __future__ import annotations

import lance_ns
from lance_ns.server import command, running


def test_serving_closes_the_namespace_when_it_ends(monkeypatch, tmp_path):
    served = []
    monkeypatch.setattr(running, "serve", lambda ns, **kw: served.append(ns))  # returns at once: "interrupted"
    ns = lance_ns.connect("memory", {"root": str(tmp_path)})
    closed = []
    monkeypatch.setattr(ns, "close", lambda: closed.append(True))
    command.run(ns, command.build_parser().parse_args(["--impl", "memory"]))
    assert served == [ns] and closed == [True]


def test_glue_close_releases_its_client(monkeypatch):
    glue = lance_ns.connect("glue", {"region": "us-east-1", "access_key_id": "k", "secret_access_key": "s"})
    closed = []
    monkeypatch.setattr(glue.glue, "close", lambda: closed.append("glue"))
    with glue:  # NamespaceBase is a context manager: leaving it closes
        pass
    assert closed == ["glue"]
