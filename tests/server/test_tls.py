"""TLS (issue 19.3): the server serves HTTPS with --tls-cert/--tls-key and, with --tls-ca,
requires client certificates; the rest client's tls.* properties (pylance's names)."""

from __future__ import annotations

import socket
import ssl
import time
import types

import httpx
import pyarrow as pa
import pytest

import lance_ns
from lance_ns.errors import LanceNamespaceError
from lance_ns.server import command, run_server_in_thread
from tests.rest.conftest import arrow_stream

from .certs import make_certs
from .conftest import lance_ns_serve


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_certs(tmp_path_factory.mktemp("certs"))


def _tls(**flags):
    args = types.SimpleNamespace(tls_cert=None, tls_key=None, tls_ca=None)
    vars(args).update(flags)
    return command.tls_options(args)


def test_tls_flags_become_uvicorn_options(certs):
    assert _tls() == {}
    assert _tls(tls_cert=str(certs.server_cert), tls_key=str(certs.server_key)) == {
        "ssl_certfile": str(certs.server_cert), "ssl_keyfile": str(certs.server_key)}
    mutual = _tls(tls_cert=str(certs.server_cert), tls_key=str(certs.server_key), tls_ca=str(certs.ca))
    assert mutual["ssl_ca_certs"] == str(certs.ca) and mutual["ssl_cert_reqs"] == ssl.CERT_REQUIRED
    with pytest.raises(LanceNamespaceError, match="need --tls-cert"):
        _tls(tls_key=str(certs.server_key))


def _client(url: str, **tls: str):
    return lance_ns.connect("rest", {"uri": url, "max_retries": "0", **{f"tls.{k}": str(v) for k, v in tls.items()}})


def test_https_with_the_rest_client_trusting_the_test_ca(certs, tmp_path):
    backend = lance_ns.connect("dir", {"root": str(tmp_path / "lake")})
    options = {"ssl_certfile": str(certs.server_cert), "ssl_keyfile": str(certs.server_key)}
    with run_server_in_thread(backend, uvicorn_options=options, log_requests=False) as server:
        assert server.url.startswith("https://")
        with _client(server.url, ssl_ca_cert=certs.ca) as client:
            client.create_namespace({"id": ["db"]})
            client.create_table({"id": ["db", "t"]}, arrow_stream(pa.table({"x": [1, 2]})))
            assert client.count_table_rows({"id": ["db", "t"]}).count == 2
        # a client that does not trust the CA refuses the server; plain HTTP gets no answer
        with _client(server.url) as untrusting, pytest.raises(LanceNamespaceError):
            untrusting.list_namespaces({"id": []})
        with _client(server.url, ssl_ca_cert=certs.other_ca) as wrong_ca, pytest.raises(LanceNamespaceError):
            wrong_ca.list_namespaces({"id": []})
        with pytest.raises(httpx.HTTPError):
            httpx.get(server.url.replace("https://", "http://") + "/health", timeout=5)
        # tls.verify=false is an explicit opt-out
        with _client(server.url, verify="false") as unverified:
            assert unverified.list_namespaces({"id": []}).namespaces == ["db"]


def test_mutual_tls_requires_a_client_certificate_from_the_ca(certs, tmp_path):
    backend = lance_ns.connect("memory", {})
    options = {"ssl_certfile": str(certs.server_cert), "ssl_keyfile": str(certs.server_key),
               "ssl_ca_certs": str(certs.ca), "ssl_cert_reqs": ssl.CERT_REQUIRED}
    with run_server_in_thread(backend, uvicorn_options=options, log_requests=False) as server:
        with _client(server.url, ssl_ca_cert=certs.ca, cert_file=certs.client_cert, key_file=certs.client_key) as client:
            client.create_namespace({"id": ["db"]})
            assert client.list_namespaces({"id": []}).namespaces == ["db"]
        with _client(server.url, ssl_ca_cert=certs.ca) as anonymous, pytest.raises(LanceNamespaceError):
            anonymous.list_namespaces({"id": []})
        # a client certificate another CA signed
        other = make_certs(tmp_path / "other")
        with _client(server.url, ssl_ca_cert=certs.ca, cert_file=other.client_cert, key_file=other.client_key) as stranger:
            with pytest.raises(LanceNamespaceError):
                stranger.list_namespaces({"id": []})


@pytest.mark.slow  # one cold `lance-ns serve` start
def test_lance_ns_serve_over_tls_end_to_end_with_the_cli_and_pylance(certs, cli, tmp_path):
    import lance
    from lance.namespace import RestNamespace

    args = ["--impl", "dir", "--prop", f"root={tmp_path / 'lake'}", "--tls-cert", certs.server_cert,
            "--tls-key", certs.server_key, "--tls-ca", certs.ca, "--log-level", "warning"]
    verify = ssl.create_default_context(cafile=str(certs.ca))
    verify.load_cert_chain(str(certs.client_cert), str(certs.client_key))
    with lance_ns_serve([str(a) for a in args], scheme="https", verify=verify) as served:
        tls = ["--prop", f"tls.ssl_ca_cert={certs.ca}", "--prop", f"tls.cert_file={certs.client_cert}",
               "--prop", f"tls.key_file={certs.client_key}"]
        rest = ["--impl", "rest", "--prop", f"uri={served.url}", *tls]
        assert cli("namespace", "create", "db", *rest).rc == 0
        csv = tmp_path / "t.csv"
        csv.write_text("x\n1\n2\n3\n")
        assert cli("table", "create", "db.t", "--from", csv, *rest).rc == 0
        # pylance's own REST client, with the same property names
        ns = RestNamespace(uri=served.url, **{"tls.ssl_ca_cert": str(certs.ca), "tls.cert_file": str(certs.client_cert),
                                              "tls.key_file": str(certs.client_key)})
        from lance_namespace import ListTablesRequest

        assert ns.list_tables(ListTablesRequest(id=["db"])).tables == ["t"]
        assert lance.dataset(namespace_client=ns, table_id=["db", "t"]).count_rows() == 3
        nocert = cli("namespace", "list", "--impl", "rest", "--prop", f"uri={served.url}",
                     "--prop", f"tls.ssl_ca_cert={certs.ca}", "--prop", "max_retries=0")
        assert nocert.rc != 0


@pytest.mark.parametrize("extra", [[], ["--http", "h11"], ["--workers", "2"]], ids=["auto", "h11", "workers"])
def test_an_idle_tls_client_does_not_hold_the_shutdown(certs, tmp_path, extra):
    """An idle keep-alive TLS connection whose client reads nothing (a pooled Python client
    between calls) answered no close_notify, and SIGTERM waited asyncio's 30 s for it (the
    whole default grace period); it is aborted at once now (server/protocols.py)."""
    args = ["--impl", "dir", "--prop", f"root={tmp_path / 'lake'}", "--tls-cert", certs.server_cert,
            "--tls-key", certs.server_key, "--log-level", "warning", *extra]
    verify = ssl.create_default_context(cafile=str(certs.ca))
    with lance_ns_serve([str(a) for a in args], scheme="https", verify=verify) as served:
        port = int(served.url.rsplit(":", 1)[1])
        with verify.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="127.0.0.1") as idle:
            idle.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            assert idle.recv(4096).startswith(b"HTTP/1.1 200")
            started = time.monotonic()
            served.stop()
            assert served.proc.returncode is not None and time.monotonic() - started < 10
