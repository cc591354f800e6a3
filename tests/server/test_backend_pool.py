"""Issue 22 item 4: the event loop never blocks on a backend.  Backend calls run on
the server's bounded pool (``--threads``): while one call is stuck, requests for
other tables are answered; with every thread stuck, a request waits at most
``--queue-timeout`` and is answered 503 code 17 (ServiceUnavailable, the code the
OpenAPI document gives every route for an unavailable service) with Retry-After.

The backend is a double: the memory namespace, whose DescribeTable of table
``stuck`` blocks until the test releases it (a ``threading.Event``), standing in
for a catalog that hangs (a Hive Metastore under load, a slow object store)."""

from __future__ import annotations

import threading

import httpx
import pytest

from lance_ns.impls.memory import MemoryNamespace
from lance_ns.server import run_server_in_thread


class BlockingNamespace(MemoryNamespace):
    """DescribeTable of a table named ``stuck`` blocks until ``release`` is set."""

    def __init__(self, **properties: str):
        super().__init__(**properties)
        self.release = threading.Event()
        self.entered = threading.Semaphore(0)  # one release per call that started blocking

    def describe_table(self, request):
        if request.id[-1] == "stuck":
            self.entered.release()
            assert self.release.wait(60), "the test never released the blocked call"
        return super().describe_table(request)


@pytest.fixture
def blocking():
    ns = BlockingNamespace()
    ns.create_namespace({"id": ["db"]})
    for name in ("stuck", "quick"):
        ns.declare_table({"id": ["db", name]})
    yield ns
    ns.release.set()  # never leave a pool thread hanging


def describe(url: str, name: str, timeout: float = 30) -> httpx.Response:
    return httpx.post(f"{url}/v1/table/db${name}/describe", json={}, timeout=timeout)


def test_a_blocked_backend_call_does_not_stall_the_others(blocking):
    with run_server_in_thread(blocking, threads=2, log_requests=False, ui=False) as srv:
        slow = threading.Thread(target=describe, args=(srv.url, "stuck"))
        slow.start()
        assert blocking.entered.acquire(timeout=30)  # the call is in flight, holding one thread
        quick = describe(srv.url, "quick", timeout=10)
        assert quick.status_code == 200 and quick.json()["table"] == "quick"
        assert slow.is_alive()  # answered while the other call was still blocked
        blocking.release.set()
        slow.join(30)


def test_an_exhausted_pool_answers_503_code_17_with_retry_after(blocking):
    with run_server_in_thread(blocking, threads=1, queue_timeout=0.2, log_requests=False, ui=False) as srv:
        answers: list[httpx.Response] = []
        slow = threading.Thread(target=lambda: answers.append(describe(srv.url, "stuck")))
        slow.start()
        assert blocking.entered.acquire(timeout=30)  # the only thread is taken
        busy = describe(srv.url, "quick", timeout=10)
        assert busy.status_code == 503, busy.text
        assert busy.json()["code"] == 17 and busy.headers["retry-after"] == "1"
        assert httpx.get(f"{srv.url}/health", timeout=10).status_code == 200  # the loop itself is free
        blocking.release.set()
        slow.join(30)
        assert answers and answers[0].status_code == 200  # the blocked call finished normally
        assert describe(srv.url, "quick", timeout=10).status_code == 200  # and the pool serves again


def test_the_pool_is_sized_by_the_backend_unless_the_flag_says(tmp_path):
    from lance_ns.config import connect
    from lance_ns.server.app import NamespaceApp
    from lance_ns.server.settings import DEFAULT_THREADS

    local = connect("dir", {"root": str(tmp_path)})
    assert NamespaceApp(local).threads == local.server_threads < DEFAULT_THREADS  # local disk: short calls
    assert NamespaceApp(MemoryNamespace()).threads == DEFAULT_THREADS
    assert NamespaceApp(local, threads=3).threads == 3
