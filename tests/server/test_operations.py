"""Operations (issue 19.5): Prometheus /metrics, JSON logs, graceful shutdown."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

import lance_ns
from lance_ns.server import run_server_in_thread

from .conftest import lance_ns_serve

REPO = Path(__file__).resolve().parents[2]


def samples(text: str) -> dict[tuple, float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def test_metrics_count_requests_latency_errors_and_backend_calls(tmp_path):
    backend = lance_ns.connect("dir", {"root": str(tmp_path / "lake")})
    with run_server_in_thread(backend, log_requests=False) as server:
        url = server.url
        assert httpx.post(f"{url}/v1/namespace/db/create", json={}).status_code == 200
        for _ in range(2):
            assert httpx.get(f"{url}/v1/namespace/$/list").status_code == 200
        missing = httpx.post(f"{url}/v1/namespace/nope/describe", json={})
        assert missing.status_code == 404
        bad = httpx.post(f"{url}/v1/namespace/a$$b/describe", json={})
        assert bad.status_code == 400
        r = httpx.get(f"{url}/metrics")
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    got = samples(r.text)
    assert got[("lance_ns_requests_total", (("operation", "ListNamespaces"), ("status", "200")))] == 2
    assert got[("lance_ns_requests_total", (("operation", "CreateNamespace"), ("status", "200")))] == 1
    code = missing.json()["code"]
    assert got[("lance_ns_errors_total", (("code", str(code)), ("operation", "DescribeNamespace")))] == 1
    assert got[("lance_ns_errors_total", (("code", "13"), ("operation", "DescribeNamespace")))] == 1
    assert got[("lance_ns_request_duration_seconds_count", (("operation", "ListNamespaces"),))] == 2
    # the backend's own latency: only calls that reached it (the malformed id did not)
    assert got[("lance_ns_backend_call_duration_seconds_count", (("operation", "DescribeNamespace"),))] == 1
    assert got[("lance_ns_backend_call_duration_seconds_count", (("operation", "CreateNamespace"),))] == 1
    assert got[("lance_ns_requests_in_flight", ())] == 1  # the /metrics request itself


def test_metrics_are_behind_the_servers_authentication(tmp_path):
    with run_server_in_thread(lance_ns.connect("memory", {}), auth_token="m-token-1", log_requests=False) as server:
        assert httpx.get(f"{server.url}/metrics").status_code == 401
        r = httpx.get(f"{server.url}/metrics", headers={"Authorization": "Bearer m-token-1"})
        assert r.status_code == 200 and "lance_ns_requests_total" in r.text
        assert httpx.get(f"{server.url}/health").status_code == 200  # probes need no token


@pytest.mark.slow  # one cold `lance-ns serve` start
def test_json_logs_and_a_graceful_shutdown_that_finishes_in_flight_requests():
    env = {"PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    args = ["--impl", "tests.server.slow:SlowNamespace", "--prop", "delay_ms=2500", "--log-format", "json",
            "--log-level", "info", "--graceful-timeout", "20"]
    with lance_ns_serve(args, env=env) as served:
        assert httpx.post(f"{served.url}/v1/namespace/slow/create", json={}).status_code == 200
        answer = {}

        def slow_request():
            try:
                answer["response"] = httpx.post(f"{served.url}/v1/namespace/slow/describe", json={}, timeout=30)
            except httpx.HTTPError as e:  # pragma: no cover - the failure the test is about
                answer["error"] = e

        thread = threading.Thread(target=slow_request)
        thread.start()
        time.sleep(1.0)  # the request is inside the backend now
        served.proc.terminate()  # SIGTERM while it is in flight
        thread.join(30)
        output = served.stop()
        assert "response" in answer, answer
        assert answer["response"].status_code == 200
        assert served.proc.returncode in (0, -15)  # uvicorn re-raises the signal once it has finished
    lines = [json.loads(line) for line in output.splitlines() if line.strip()]  # every line is JSON
    messages = [(entry["logger"], entry["message"]) for entry in lines]
    assert ("lance_ns.server", "POST /v1/namespace/slow/create 200") in [(lg, m.rsplit(" ", 1)[0]) for lg, m in messages]
    assert any(m.startswith("POST /v1/namespace/slow/describe 200 ") for _, m in messages), output
    assert all({"time", "level", "logger", "message"} <= set(entry) for entry in lines)
    assert any(entry["logger"].startswith("uvicorn") for entry in lines)  # the server's own lines too
    from lance_ns.server.logs import http_stack

    loop, http = http_stack()  # the start-up line names the stack: uvloop + httptools with the server extra
    assert any(m.startswith("uvicorn ") and f"on the {loop} event loop with the {http} HTTP parser" in m
               for lg, m in messages if lg == "lance_ns.server"), output
