"""Fixtures for the deployment tests: ``lance-ns serve`` as a user starts it (a
subprocess on a free port), and the ``lance-ns`` CLI in-process."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import pytest

from tests.cli.conftest import run_cli
from tests.services.process import wait_healthy

LANCE_NS = str(Path(sys.executable).with_name("lance-ns"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Served:
    url: str
    proc: subprocess.Popen
    output: list[str] = field(default_factory=list)

    def stop(self, timeout: float = 30) -> str:
        """SIGTERM (a graceful shutdown), then the server's whole stderr/stdout."""
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            out = self.proc.communicate(timeout=timeout)[0]
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out = self.proc.communicate()[0]
        self.output.append(out or "")
        return "".join(self.output)


@contextlib.contextmanager
def lance_ns_serve(args: list[str], *, env: dict | None = None, scheme: str = "http", verify=True,
                   startup: float = 120, log_file: Path | None = None) -> Iterator[Served]:
    """``lance-ns serve ARGS --port P`` until its /health answers; stopped on exit.  Its
    output goes to ``log_file`` if given (a server logging each request would fill a pipe
    nobody reads until the end, and block), else to :meth:`Served.stop`'s answer."""
    port = free_port()
    environ = {k: v for k, v in os.environ.items() if not k.startswith("LANCE_NS")}
    environ.update(env or {})
    out = open(log_file, "w") if log_file is not None else subprocess.PIPE  # noqa: SIM115 - the child holds it
    proc = subprocess.Popen([LANCE_NS, "serve", *args, "--port", str(port)], env=environ,
                            stdout=out, stderr=subprocess.STDOUT, text=True)
    if log_file is not None:
        out.close()
    served = Served(f"{scheme}://127.0.0.1:{port}", proc)
    try:
        wait_healthy(proc, served.url, startup, verify)  # a cold start imports pylance: slow on a busy machine
        yield served
    finally:
        served.stop()


@pytest.fixture
def cli(monkeypatch, tmp_path):
    """``lance-ns ARGS`` in-process, with no LANCE_NS_* variable or config file leaking in."""
    for key in list(os.environ):
        if key.startswith("LANCE_NS"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("LANCE_NS_CONFIG", str(tmp_path / "absent-config.toml"))
    return run_cli
