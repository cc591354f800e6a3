"""Issue 22: reads a backend answers from memory run on the event loop (no thread
hand-off), and every step that could block sends the call to the backend's threads
instead, so the loop never waits on a backend.  Also the request path's other
shortcuts: requests remembered by their bytes, the shared body timer, metrics off.

The backend is the real directory namespace on a local root (its manifest view is
what inline reads answer from)."""

from __future__ import annotations

import socket
import threading
import time

import httpx
import pytest

import lance_ns
from lance_ns.base import WouldBlock, refuse_blocking
from lance_ns.server import run_server_in_thread


@pytest.fixture
def lake(tmp_path):
    ns = lance_ns.connect("dir", {"root": str(tmp_path / "lake")})
    ns.create_namespace({"id": ["db"]})
    ns.declare_table({"id": ["db", "t"]})
    yield ns
    ns.close()


def describe(url: str, name: str = "t", **kwargs) -> httpx.Response:
    return httpx.post(f"{url}/v1/table/db${name}/describe", json={}, timeout=30, **kwargs)


def _threads_used(monkeypatch, ns) -> list[str]:
    """The name of the thread each DescribeTable of ``ns`` runs on."""
    seen: list[str] = []
    real = type(ns).get_table_entry

    def spy(self, *args):
        seen.append(threading.current_thread().name)
        return real(self, *args)

    monkeypatch.setattr(type(ns), "get_table_entry", spy)
    return seen


def test_a_fresh_read_is_answered_on_the_event_loop(lake, monkeypatch):
    assert {"describe_table", "table_exists", "list_tables"} <= lake.inline_methods
    seen = _threads_used(monkeypatch, lake)
    with run_server_in_thread(lake, log_requests=False, ui=False) as srv:
        assert describe(srv.url).json()["table"] == "t"
    assert seen and not any(name.startswith("lance-ns-backend") for name in seen), seen


def test_a_read_waiting_on_a_commit_runs_on_a_thread_and_the_loop_stays_free(lake, monkeypatch):
    """A commit holds the manifest's lock: an inline ListTables would wait for it; the
    call goes to a backend thread instead while the loop answers /health at once."""
    with run_server_in_thread(lake, log_requests=False, ui=False) as srv:
        answers: list[httpx.Response] = []
        lake.manifest.writers_lock.acquire()  # as a commit in progress does
        try:
            reader = threading.Thread(
                target=lambda: answers.append(httpx.get(f"{srv.url}/v1/namespace/db/table/list", timeout=30)))
            reader.start()
            time.sleep(0.3)
            started = time.perf_counter()
            assert httpx.get(f"{srv.url}/health", timeout=5).status_code == 200
            assert time.perf_counter() - started < 2  # not behind the waiting read
            assert reader.is_alive()  # still waiting for the lock, on a thread
            lake.declare_table({"id": ["db", "u"]})  # same thread: the lock is re-entrant
        finally:
            lake.manifest.writers_lock.release()
        reader.join(30)
        assert answers and answers[0].status_code == 200
        assert answers[0].json()["tables"] == ["t", "u"]  # the commit it waited for is seen


def test_a_new_manifest_version_is_read_on_a_thread_and_seen_by_the_next_read(lake, tmp_path, monkeypatch):
    with run_server_in_thread(lake, log_requests=False, ui=False) as srv:
        assert describe(srv.url).status_code == 200
        other = lance_ns.connect("dir", {"root": str(tmp_path / "lake")})  # another process's commit
        other.declare_table({"id": ["db", "v"]})
        seen = _threads_used(monkeypatch, lake)
        r = describe(srv.url, "v")
        assert r.status_code == 200 and r.json()["table"] == "v"
        assert any(name.startswith("lance-ns-backend") for name in seen), seen  # the load ran on a thread
        other.close()


def test_a_call_that_would_block_is_checked_once_and_answered_from_a_thread(lake, monkeypatch):
    """refuse_blocking is the one signal; the request is not built or checked twice."""
    calls: list[str] = []
    real = type(lake).describe_table

    def describe_table(self, request):
        calls.append(threading.current_thread().name)
        refuse_blocking("the test says so")
        return real(self, request)

    monkeypatch.setattr(type(lake), "describe_table", describe_table)
    with run_server_in_thread(lake, log_requests=False, ui=False) as srv:
        r = describe(srv.url)
    assert r.status_code == 200 and r.json()["table"] == "t"
    assert len(calls) == 2 and calls[1].startswith("lance-ns-backend"), calls
    with pytest.raises(WouldBlock):  # outside the loop it never fires: only on_event_loop arms it
        from lance_ns.base import on_event_loop

        on_event_loop(refuse_blocking, "x")
    refuse_blocking("not armed")  # no error


def test_a_remembered_request_is_authorized_and_answered_afresh(tmp_path):
    """Requests are remembered by their bytes and principal (an answer only while the
    backend's stamp holds: test_kept_answers.py): the same describe after a drop is 404
    code 4, and the same bytes from a principal without the grant 403."""
    ns = lance_ns.connect("dir", {"root": str(tmp_path / "lake")})
    ns.create_namespace({"id": ["db"]})
    ns.declare_table({"id": ["db", "t"]})
    auth = tmp_path / "auth.toml"
    auth.write_text('[[principal]]\nname = "reader"\ntoken = "r"\nread = ["db"]\n\n'
                    '[[principal]]\nname = "stranger"\ntoken = "s"\nread = ["other"]\n')
    with run_server_in_thread(ns, auth_file=str(auth), log_requests=False, ui=False) as srv:
        reader, stranger = ({"authorization": f"Bearer {t}"} for t in ("r", "s"))
        for _ in range(2):
            assert describe(srv.url, headers=reader).status_code == 200
        denied = describe(srv.url, headers=stranger)
        assert denied.status_code == 403 and denied.json()["code"] == 15
        ns.drop_table({"id": ["db", "t"]})
        gone = describe(srv.url, headers=reader)
        assert gone.status_code == 404 and gone.json()["code"] == 4
    ns.close()


def test_a_body_arriving_in_pieces_within_the_timeout_is_read_and_a_stalled_one_is_408(lake):
    with run_server_in_thread(lake, body_timeout=1.0, log_requests=False, ui=False) as srv:
        host, port = srv.url.removeprefix("http://").split(":")
        body = b'{"id": ["db", "t"]}'
        with socket.create_connection((host, int(port)), timeout=10) as s:
            s.sendall(b"POST /v1/table/db$t/describe HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: %d\r\n\r\n" % len(body))
            for i in range(0, len(body), 8):  # slow, but well within the timeout
                s.sendall(body[i:i + 8])
                time.sleep(0.1)
            answer = s.recv(65536).decode()
        assert answer.startswith("HTTP/1.1 200"), answer
        # a body stalled after its first byte, and one of which not a byte came after the headers
        # (the very first wait): each answered 408 at the timeout, and the loop still serves
        for sent in (b"{", b""):
            answer, waited = _stalled(host, int(port), sent)
            assert answer.startswith("HTTP/1.1 408"), answer
            assert 0.9 < waited < 3, waited  # the timeout, met at most a quarter of it late (plus slack)
            assert describe(srv.url).status_code == 200


def _stalled(host: str, port: int, sent: bytes) -> tuple[str, float]:
    """The answer to a describe that promises a 100-byte body and sends ``sent`` of it, and
    the seconds it took."""
    with socket.create_connection((host, port), timeout=10) as s:
        s.sendall(b"POST /v1/table/db$t/describe HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 100\r\n\r\n" + sent)
        started = time.perf_counter()
        answer = s.recv(65536).decode()
        return answer, time.perf_counter() - started


def test_metrics_can_be_turned_off(lake):
    with run_server_in_thread(lake, metrics=False, log_requests=False, ui=False) as srv:
        assert describe(srv.url).status_code == 200
        r = httpx.get(f"{srv.url}/metrics", timeout=10)
        assert r.status_code == 404 and r.json()["code"] == 0


def test_reads_of_one_loop_turn_share_one_check_and_the_next_turn_checks_again():
    """The turn marker (lance_ns.base.loop_turn): the same for every read until the callbacks
    queued when it was made have run, a new one after."""
    import asyncio

    from lance_ns.server.pipeline import LoopTurns

    async def main():
        turns = LoopTurns()
        first = turns.current()
        assert turns.current() is first  # the same turn: reads share its check
        await asyncio.sleep(0)  # the callbacks queued so far (the turn's end among them) run
        second = turns.current()
        assert second is not first
        loop = asyncio.get_running_loop()
        seen = []
        loop.call_soon(lambda: seen.append(turns.current()))  # queued behind the turn's end
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert seen and seen[0] is not second

    asyncio.run(main())


def test_a_commit_by_another_process_is_seen_by_every_read_sent_after_it_under_load(lake, tmp_path):
    """Reads of one turn of the server's event loop share one check of the manifest; still a
    table another process (another manifest) declared or dropped is seen by the very next
    read sent after the commit returned, while 8 other clients keep every turn busy."""
    other = lance_ns.connect("dir", {"root": str(tmp_path / "lake")})  # a second writer, not the server's
    with run_server_in_thread(lake, log_requests=False, ui=False) as srv:
        stop = threading.Event()

        def hammer():
            with httpx.Client(timeout=30) as c:
                while not stop.is_set():
                    c.post(f"{srv.url}/v1/table/db$t/describe", json={})

        load = [threading.Thread(target=hammer) for _ in range(8)]
        for t in load:
            t.start()
        try:
            with httpx.Client(timeout=30) as c:
                for i in range(30):
                    other.declare_table({"id": ["db", f"n{i}"]})
                    seen = c.post(f"{srv.url}/v1/table/db$n{i}/describe", json={})
                    assert seen.status_code == 200, (i, seen.text)
                    other.drop_table({"id": ["db", f"n{i}"]})
                    gone = c.post(f"{srv.url}/v1/table/db$n{i}/describe", json={})
                    assert gone.status_code == 404 and gone.json()["code"] == 4, (i, gone.text)
        finally:
            stop.set()
            for t in load:
                t.join()
    other.close()
