"""The installed ``lance-ns`` script, as a user runs it: ``serve`` in one
process, the namespace/table commands against it from others."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

LANCE_NS = str(Path(sys.executable).with_name("lance-ns"))
TOKEN = "tok-6f1d-never-printed"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LANCE_NS")}
    env.update(extra)
    return env


@pytest.mark.slow  # two cold Python starts (pylance + pydantic models): ~6 s CPU, more on a busy machine
def test_serve_and_drive_it_with_the_script(tmp_path, cli):
    port = _free_port()
    uri = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [LANCE_NS, "serve", "--impl", "dir", "--prop", f"root={tmp_path}", "--port", str(port), "--log-level", "warning"],
        env=_env(LANCE_NS_AUTH_TOKEN=TOKEN, LANCE_NS_CONFIG=str(tmp_path / "none.toml")),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # one real invocation of the script, connected through the environment; started
    # at once so that its imports overlap the server's (it retries until the server listens)
    client = subprocess.Popen(
        [LANCE_NS, "namespace", "create", "db", "--json"],
        env=_env(
            LANCE_NS_IMPL="rest", LANCE_NS_REST_URI=uri, LANCE_NS_REST_AUTH_TOKEN=TOKEN,
            LANCE_NS_REST_MAX_RETRIES="60", LANCE_NS_REST_RETRY_BACKOFF_MS="250", LANCE_NS_REST_RETRY_MAX_BACKOFF_MS="1000",
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120  # a cold start imports pylance and pydantic models: slow on a busy machine
        while True:
            assert server.poll() is None, server.communicate()
            try:
                if httpx.get(f"{uri}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "lance-ns serve did not start"
            time.sleep(0.2)
        out, err = client.communicate(timeout=120)
        assert client.returncode == 0, err
        assert isinstance(json.loads(out), dict)
        # the rest in-process (each script start costs seconds of imports)
        conn = ["--impl", "rest", "--prop", f"uri={uri}", "--prop", f"auth_token={TOKEN}"]
        assert cli("namespace", "list", "--json", *conn).json()["namespaces"] == ["db"]
        assert cli("table", "declare", "db.events", *conn).rc == 0
        assert cli("table", "exists", "db.events", *conn).rc == 0
        assert cli("table", "exists", "db.nope", *conn).rc == 3
        # without the token: unauthenticated, exit 7
        denied = cli("namespace", "list", "--impl", "rest", "--prop", f"uri={uri}")
        assert denied.rc == 7 and "code 16" in denied.err
    finally:
        if client.poll() is None:
            client.kill()
            client.communicate()
        server.terminate()
        try:
            out, err = server.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            out, err = server.communicate()
    assert "serving" in err and "clients must authenticate" in err
    assert TOKEN not in out + err
