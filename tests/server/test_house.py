"""The server's house (issue "the house"): a setting is declared once and reaches the
app from either front end and in every worker; the UI and the protocol routes share
the one pipeline (authorization, read-only credentials, audit) and every path the
one outer wrapper (metrics, access log line, panics)."""

from __future__ import annotations

import dataclasses
import json
import logging

import pytest
from starlette.testclient import TestClient

import lance_ns
from lance_ns import vending
from lance_ns.server import command, running, workers
from lance_ns.server.app import create_app
from lance_ns.server.pipeline import Pipeline
from lance_ns.server.settings import FLAGS, SETTING_FLAGS, ServerSettings
from lance_ns.server.ui.pages import Browser

from tests.ui.conftest import build_lake

from .test_authorization import TOKENS, auth_toml

FIELDS = dataclasses.fields(ServerSettings)


# -- a setting is declared once ------------------------------------------------------------


def _changed_settings(tmp_path, monkeypatch) -> tuple[list[str], ServerSettings]:
    """Serving flags that move every setting off its default, and the settings they mean."""
    auth = tmp_path / "auth.toml"
    auth.write_text(auth_toml())
    argv, expected = ["--log-level", "warning"], {"log_requests": False}  # via --log-level
    monkeypatch.setenv("LANCE_NS_API_KEYS", "k1,k2")
    expected["api_keys"] = ("k1", "k2")  # via --api-keys-env's variable
    for f in FIELDS:
        flag = f.metadata["flag"]
        if flag is None:
            continue
        if flag.switch:
            argv.append(flag.name)
            expected[f.name] = False
            continue
        if flag.type in (int, float):
            value = flag.type((f.default or 0) + 7)
        else:
            value = {"auth_token": "tok-1", "auth_file": str(auth)}[f.name]
        argv += [flag.name, str(value)]
        expected[f.name] = value
    return argv, ServerSettings(**expected)


def test_every_setting_has_a_flag_or_names_the_flags_it_comes_from():
    names = {f.name for f in FLAGS}
    for f in FIELDS:
        flag, via = f.metadata["flag"], f.metadata["via"]
        assert (flag is None) != (via is None), f.name
        assert (flag.name if flag else via) in names, f.name
        assert f.metadata["help"], f.name
    assert len(SETTING_FLAGS) == len(FIELDS) - 2  # api_keys (--api-keys-env), log_requests (--log-level)


def test_every_setting_reaches_the_app_from_both_front_ends_and_in_workers(tmp_path, monkeypatch):
    from lance_ns.cli import app as cli

    argv, expected = _changed_settings(tmp_path, monkeypatch)
    assert all(getattr(expected, f.name) != f.default for f in FIELDS)  # each one moved
    seen: list[ServerSettings] = []
    monkeypatch.setattr(running, "serve", lambda ns, **kw: seen.append(kw["settings"]))
    choice = ["--impl", "dir", "--prop", f"root={tmp_path / 'lake'}"]
    assert command.main(choice + argv) == 0
    assert cli.main(["serve", *choice, *argv]) == 0
    assert seen == [expected, expected]
    # the app serves with them (create_app's options are the same fields)
    ns = lance_ns.connect("dir", {"root": str(tmp_path / "lake")})
    owner = create_app(ns, expected).state.namespace_app
    assert owner.settings == expected and owner.threads == expected.threads
    assert owner.pipeline.limits == expected.limits and owner.max_body_bytes == expected.max_body_bytes
    assert create_app(ns, **{f.name: getattr(expected, f.name) for f in FIELDS}).state.namespace_app.settings == expected
    with pytest.raises(TypeError):
        create_app(ns, max_body_byte=1)  # a misspelt setting is no silent default
    # and a worker process of --workers gets the same settings
    monkeypatch.setenv(workers.CONFIG_ENV, workers.encode({"impl": "dir", "properties": {"root": str(tmp_path / "lake")}},
                                                          expected, "warning", "text"))
    assert workers.app_factory().state.namespace_app.settings == expected
    assert "tok-1" not in repr(expected) and "k1" not in repr(expected)


def test_the_python_apis_limits_still_set_the_three_limits():
    from lance_ns.limits import Limits

    settings = ServerSettings.of(limits=Limits(max_properties=3))
    assert settings.limits == Limits(max_properties=3)


# -- the UI goes through the pipeline ------------------------------------------------------


class Recording:
    """The lake as a backend that may vend credentials: it records the vending cap
    each DescribeTable runs under (what its vendor would honour)."""

    vends_credentials = True

    def __init__(self, inner):
        self.inner, self.caps = inner, []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def describe_table(self, request):
        self.caps.append(vending._cap.get())
        return self.inner.describe_table(request)


@pytest.fixture
def lake(tmp_path):
    ns = build_lake(str(tmp_path / "lake"))
    yield ns
    ns.close()


@pytest.fixture
def guarded(lake, tmp_path):
    auth = tmp_path / "auth.toml"
    auth.write_text(auth_toml())
    backend = Recording(lake)
    app = create_app(backend, auth_file=str(auth), log_requests=False)
    return backend, app, TestClient(app, base_url="http://testserver", follow_redirects=False)


def _as(who: str) -> dict:
    return {"authorization": f"Bearer {TOKENS[who]}"}


def test_a_ui_page_runs_each_call_through_the_pipeline_as_the_principal(guarded, monkeypatch):
    backend, app, client = guarded
    calls = []
    original = Pipeline.call

    async def spy(self, principal, route, req, *args, **kw):
        calls.append((principal.name, route.op.op_id, tuple(req.id or ())))
        return await original(self, principal, route, req, *args, **kw)

    monkeypatch.setattr(Pipeline, "call", spy)
    assert client.post("/v1/table/sales$orders/describe", json={}, headers=_as("reader")).status_code == 200
    assert calls == [("reader", "DescribeTable", ("sales", "orders"))]
    assert client.get("/ui/table/sales/orders", headers=_as("reader")).status_code == 200
    assert ("reader", "DescribeTable", ("sales", "orders")) in calls[1:]
    assert ("reader", "QueryTable", ("sales", "orders")) in calls[1:]
    # authorization is the pipeline's: the reader may not see ops, on either path
    assert client.post("/v1/namespace/ops/describe", json={}, headers=_as("reader")).json()["code"] == 15
    denied = client.get("/ui/ns/ops", headers=_as("reader"))
    assert denied.status_code == 403 and "(code 15)" in denied.text


def test_a_read_only_principal_gets_read_only_credentials_on_the_ui_as_over_rest(guarded):
    backend, _, client = guarded
    for who, cap in (("reader", vending.Permission.READ), ("writer", None)):
        backend.caps.clear()
        assert client.post("/v1/table/sales$orders/describe", json={}, headers=_as(who)).status_code == 200
        assert client.get("/ui/table/sales/orders", headers=_as(who)).status_code == 200
        assert backend.caps and set(backend.caps) == {cap}, who  # the REST call and every UI describe


def test_the_uis_calls_are_audited_like_the_protocols(guarded, caplog):
    """The UI offers only reads (never audited, on either path); its one way to the backend,
    Browser.call, audits a mutating call exactly as the REST route does."""
    _, app, client = guarded
    pipeline = app.state.namespace_app.pipeline
    browser = Browser(pipeline)
    reader, writer = (pipeline.authenticate({"authorization": f"Bearer {TOKENS[w]}"}) for w in ("reader", "writer"))
    import anyio

    with caplog.at_level(logging.INFO, logger="lance_ns.audit"):
        assert client.get("/ui/table/sales/orders", headers=_as("reader")).status_code == 200
        assert client.post("/v1/table/sales$a/declare", json={}, headers=_as("writer")).status_code == 200
        anyio.run(lambda: browser.call(writer, "declare_table", id=["sales", "b"]))
        assert client.post("/v1/table/sales$c/declare", json={}, headers=_as("reader")).json()["code"] == 15
        with pytest.raises(lance_ns.errors.PermissionDeniedError):
            anyio.run(lambda: browser.call(reader, "declare_table", id=["sales", "d"]))
    lines = [r.getMessage() for r in caplog.records if r.name == "lance_ns.audit"]
    assert lines == [f"principal={who} op=DeclareTable id=sales.{n} outcome={outcome}"
                     for who, n, outcome in (("writer", "a", "ok"), ("writer", "b", "ok"),
                                             ("reader", "c", "error code 15"), ("reader", "d", "error code 15"))]


# -- one outer wrapper ----------------------------------------------------------------------


class PanicException(BaseException):
    """What pyo3 raises for a Rust panic (a BaseException, matched by its name)."""


def test_a_panic_is_answered_counted_and_logged_alike_on_every_path(lake, monkeypatch, caplog):
    from tests.server.test_operations import samples

    def panics(self, op, fields):
        raise PanicException("index out of bounds")

    monkeypatch.setattr(Pipeline, "model", panics)  # outside the backend call's own shield, on both paths
    client = TestClient(create_app(lake), base_url="http://testserver", raise_server_exceptions=False)
    with caplog.at_level(logging.INFO, logger="lance_ns.server"):
        answers = {path: client.get(path) for path in ("/v1/namespace/sales/list", "/ui/ns/sales")}
    for path, r in answers.items():
        assert r.status_code == 500 and r.json()["code"] == 18 and "bounds" not in r.text, path
        assert f"Lance panicked on GET {path}: index out of bounds" in caplog.text
        assert f"GET {path} 500 " in caplog.text  # the access log line
    got = samples(client.get("/metrics").text)
    for op in ("ListNamespaces", "other"):
        assert got[("lance_ns_requests_total", (("operation", op), ("status", "500")))] == 1, op
        assert got[("lance_ns_errors_total", (("code", "18"), ("operation", op)))] == 1, op
    assert got[("lance_ns_requests_in_flight", ())] == 1  # the /metrics request itself: none left over


def test_health_openapi_and_ui_are_counted_and_logged_by_the_same_wrapper(lake, caplog):
    from tests.server.test_operations import samples

    client = TestClient(create_app(lake), base_url="http://testserver")
    with caplog.at_level(logging.INFO, logger="lance_ns.server"):
        for path in ("/health", "/openapi.json", "/ui/", "/v1/namespace/$/list"):
            assert client.get(path).status_code == 200, path
            assert f"GET {path} 200 " in caplog.text, path
    got = samples(client.get("/metrics").text)
    for op in ("health", "other", "ListNamespaces"):
        assert got[("lance_ns_requests_total", (("operation", op), ("status", "200")))] >= 1, op
    assert json.loads(client.get("/openapi.json").text)["openapi"]
