"""The catalog browser's pages over HTTP (no browser): what each page shows, paging,
search, escaping, secrets, sign-in and the authorization hook."""

from __future__ import annotations

import re
import warnings
from html import unescape

import pytest

import lance_ns
from lance_ns.errors import PermissionDeniedError
from lance_ns.server import create_app
from lance_ns.server.ui import pages

from .conftest import HOSTILE_NAME, HOSTILE_VALUE, SECRET

warnings.filterwarnings("ignore", message=".*httpx.*")
from starlette.testclient import TestClient  # noqa: E402


def client(app, **kw) -> TestClient:
    return TestClient(app, base_url="http://testserver", follow_redirects=False, **kw)


@pytest.fixture
def ui(lake):
    return client(create_app(lake))


def links(html: str, css_class: str) -> list[str]:
    return [unescape(m) for m in re.findall(rf'<a class="{css_class}" href="[^"]*">([^<]*)</a>', html)]


def test_root_page_shows_the_tree_and_the_root_tables(ui):
    r = ui.get("/ui/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert links(r.text, "ns-link") == ["ops", "sales"]
    assert links(r.text, "table-link") == ["top_level"]
    assert "script-src" not in r.headers["content-security-policy"]  # no script allowed at all
    assert r.headers["cache-control"] == "no-store"


def test_nested_namespace_page(ui):
    r = ui.get("/ui/ns/sales")
    assert r.status_code == 200
    assert links(r.text, "ns-link") == ["eu", "us"]
    # declared tables are listed too (the spec's ListTables default)
    assert links(r.text, "table-link") == sorted(["orders", "pending", HOSTILE_NAME])
    assert 'href="/ui/table/sales/orders"' in r.text
    assert 'href="/ui/ns/sales/eu"' in r.text
    # the tree: root's children with sales opened, and sales' children below it
    tree = r.text.split('<aside class="side">')[1].split("</aside>")[0]
    assert tree.index(">ops<") < tree.index(">sales<") < tree.index(">eu<")
    assert "team-sales" in r.text  # properties


def test_secrets_in_properties_are_masked(ui):
    r = ui.get("/ui/ns/sales")
    assert SECRET not in r.text
    assert re.search(r"<th>api_token</th><td>\*\*\*</td>", r.text)


def test_names_and_rows_are_escaped(ui):
    r = ui.get("/ui/ns/sales")
    assert HOSTILE_NAME not in r.text  # never as markup
    assert "&lt;img src=x onerror=alert(1)&gt;&amp;co&#34;q" in r.text
    table = ui.get("/ui/table/sales/" + HOSTILE_NAME.replace("&", "%26").replace('"', "%22"))
    assert table.status_code == 200, table.text
    assert HOSTILE_VALUE not in table.text
    assert "&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;" in table.text


def test_table_page_shows_location_schema_count_versions_tags_indices_rows(ui, lake):
    r = ui.get("/ui/table/sales/orders")
    assert r.status_code == 200
    text = r.text
    location = lake.describe_table({"id": ["sales", "orders"]}).location
    assert location in text
    assert '<td id="row-count">8</td>' in text
    # nested types readable: struct children, list of struct, fixed-size list
    assert '<span class="field">where</span> <span class="type">struct</span>' in text
    assert '<span class="field">sku</span> <span class="type">utf8</span>' in text
    assert "list&lt;struct&gt;" in text and "fixed_size_list&lt;float32&gt;[4]" in text
    assert "timestamp[us, tz=UTC]" in text
    # versions newest first, readable UTC times, the tag beside its version
    versions = re.findall(r'\?version=(\d+)">\1</a>', text)
    assert versions == ["3", "2", "1"]
    assert re.search(r"<td>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC</td>", text)
    assert re.search(r'version=2">2</a></td>.*?<span class="tag">release-1</span>', text, re.S)
    assert "<td>id_idx</td><td>id</td>" in text
    rows = re.findall(r"<tr><td>(\d+)</td><td>cust-\1</td>", text)
    assert rows == [str(i) for i in range(8)]


def test_rows_take_a_projection_and_a_bounded_count(ui):
    r = ui.get("/ui/table/sales/orders?columns=customer&columns=id&rows=3")
    assert r.status_code == 200
    head = r.text.split('<table class="rows">')[1].split("</thead>")[0]
    assert re.findall(r"<th>([^<]+)</th>", head) == ["customer", "id"]
    assert len(re.findall(r"<tr><td>cust-\d</td>", r.text)) == 3
    # the projection form keeps only the chosen columns checked
    assert 'value="id" checked' in r.text and 'value="placed" checked' not in r.text
    many = ui.get(f"/ui/table/sales/orders?rows={pages.MAX_SAMPLE_ROWS * 10}")
    assert f'value="{pages.MAX_SAMPLE_ROWS}"' in many.text
    unknown = ui.get("/ui/table/sales/orders?columns=nope")
    assert unknown.status_code == 200 and "nope" in unknown.text  # the rows section says why


def test_a_pinned_version_shows_that_version(ui):
    r = ui.get("/ui/table/sales/orders?version=1")
    assert r.status_code == 200
    assert "at version 1" in r.text
    assert '<td id="row-count">5</td>' in r.text
    assert ui.get("/ui/table/sales/orders?version=99").status_code == 404
    bad = ui.get("/ui/table/sales/orders?version=x")
    assert bad.status_code == 400 and "(code 13)" in bad.text


def test_declared_table_and_missing_objects(ui):
    r = ui.get("/ui/table/sales/pending")
    assert r.status_code == 200 and "declared (no data yet)" in r.text
    missing = ui.get("/ui/table/sales/nope")
    assert missing.status_code == 404 and "(code 4)" in missing.text
    assert ui.get("/ui/ns/nope").status_code == 404
    assert ui.get("/ui/ns/sales//eu").status_code == 400  # an empty name
    assert ui.get("/ui/ns/sales/%01").status_code == 400  # a control character
    assert ui.get("/ui/nothing-here").status_code == 404


def test_paging_follows_page_tokens(lake, monkeypatch):
    monkeypatch.setattr(pages, "PAGE_SIZE", 2)
    ui = client(create_app(lake))
    first = ui.get("/ui/ns/sales")
    assert links(first.text, "table-link") == sorted(["orders", "pending", HOSTILE_NAME])[:2]
    nxt = re.search(r'class="next-tables" href="([^"]+)"', first.text)
    assert nxt
    second = ui.get(unescape(nxt.group(1)))
    assert links(second.text, "table-link") == sorted(["orders", "pending", HOSTILE_NAME])[2:]
    assert 'class="next-tables"' not in second.text


def test_paging_asks_for_one_page_not_the_whole_listing(lake, monkeypatch):
    seen = []
    original = lake.list_tables

    def spy(request):
        seen.append(request.limit)
        return original(request)

    monkeypatch.setattr(lake, "list_tables", spy)
    client(create_app(lake)).get("/ui/ns/sales")
    assert seen == [pages.PAGE_SIZE]


def test_search_over_names_of_the_current_namespace(ui):
    r = ui.get("/ui/ns/sales?q=ORD")
    assert links(r.text, "table-link") == ["orders"]
    assert links(r.text, "ns-link") == []
    u = ui.get("/ui/ns/sales?q=u")
    assert links(u.text, "ns-link") == ["eu", "us"]
    assert links(u.text, "table-link") == []
    none = ui.get("/ui/ns/sales?q=zzz")
    assert "no matching tables" in none.text


def test_search_is_bounded_and_continues(lake, monkeypatch):
    for i in range(7):
        lake.declare_table({"id": ["ops", f"job{i}"]})
    monkeypatch.setattr(pages, "SEARCH_BATCH", 2)
    monkeypatch.setattr(pages, "SEARCH_BUDGET", 4)
    ui = client(create_app(lake))
    found, url = [], "/ui/ns/ops?q=JOB"
    for _ in range(5):
        r = ui.get(url)
        found += links(r.text, "table-link")
        more = re.search(r'class="continue" href="([^"]+)"', r.text)
        if not more:
            break
        assert re.search(r"scanned\s+4 names", r.text)
        url = unescape(more.group(1))
    assert found == [f"job{i}" for i in range(7)]


def test_storage_options_lose_the_servers_secrets(tmp_path):
    ns = lance_ns.connect("dir", {"root": str(tmp_path / "lake"), "storage.aws_secret_access_key": SECRET,
                                  "storage.region": "eu-west-1"})
    ns.declare_table({"id": ["t"]})
    r = client(create_app(ns)).get("/ui/table/t")
    assert r.status_code == 200
    assert SECRET not in r.text


def test_any_backend_memory(tmp_path):
    ns = lance_ns.connect("memory", {"root": str(tmp_path / "mem")})
    ns.create_namespace({"id": ["a"]})
    ns.declare_table({"id": ["a", "t1"]})
    ui = client(create_app(ns))
    assert links(ui.get("/ui/").text, "ns-link") == ["a"]
    assert links(ui.get("/ui/ns/a").text, "table-link") == ["t1"]
    assert ui.get("/ui/table/a/t1").status_code == 200


def test_no_ui(lake):
    app = create_app(lake, ui=False)
    r = client(app).get("/ui/")
    assert r.status_code == 404 and r.json()["code"] == 0


# -- sign-in -------------------------------------------------------------------------------

TOKEN = "s3cret-token"


@pytest.fixture
def guarded(lake):
    return client(create_app(lake, auth_token=TOKEN, api_keys=["key-1"]))


def test_pages_need_credentials(guarded):
    r = guarded.get("/ui/ns/sales?q=x")
    assert r.status_code == 303
    assert r.headers["location"] == "/ui/login?next=%2Fui%2Fns%2Fsales%3Fq%3Dx"
    form = guarded.get(r.headers["location"])
    assert form.status_code == 200 and 'name="token"' in form.text
    assert guarded.get("/ui/static/ui.css").status_code == 200  # the form's style
    assert guarded.get("/v1/namespace/$/list").status_code == 401  # REST is unchanged


def test_sign_in_sets_a_strict_httponly_cookie(guarded):
    bad = guarded.post("/ui/login", data={"token": "wrong", "next": "/ui/ns/sales"})
    assert bad.status_code == 401 and "not accepted" in bad.text and "wrong" not in bad.text
    ok = guarded.post("/ui/login", data={"token": TOKEN, "next": "/ui/ns/sales"})
    assert ok.status_code == 303 and ok.headers["location"] == "/ui/ns/sales"
    cookie = ok.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict") and "Path=/ui/" in cookie
    assert TOKEN not in cookie  # encoded, not the raw text
    assert links(guarded.get("/ui/ns/sales").text, "ns-link") == ["eu", "us"]
    # the cookie opens the UI only: REST clients still send the header
    assert guarded.get("/v1/namespace/$/list").status_code == 401
    out = guarded.post("/ui/logout")
    assert out.status_code == 303
    assert guarded.get("/ui/").status_code == 303


def test_an_api_key_signs_in_too_and_headers_work_without_a_cookie(guarded, lake):
    ok = guarded.post("/ui/login", data={"token": "key-1"})
    assert ok.status_code == 303 and ok.headers["location"] == "/ui/"
    fresh = client(create_app(lake, auth_token=TOKEN))
    assert fresh.get("/ui/", headers={"authorization": f"Bearer {TOKEN}"}).status_code == 200
    assert fresh.get("/ui/", headers={"authorization": "Bearer nope"}).status_code == 303


def test_sign_in_refuses_other_sites_and_foreign_redirects(guarded):
    cross = guarded.post("/ui/login", data={"token": TOKEN}, headers={"origin": "https://evil.example"})
    assert cross.status_code == 403 and "set-cookie" not in cross.headers
    for target in ("https://evil.example/", "//evil.example/ui/", "/v1/namespace/$/list"):
        r = guarded.post("/ui/login", data={"token": TOKEN, "next": target})
        assert r.headers["location"] == "/ui/"


def test_every_call_asks_the_servers_authorization_hook(lake):
    """Per-principal grants: the pipeline's ``authorize(principal, route, request)`` refuses
    with PermissionDeniedError, ``visible(principal, route, request, result)`` narrows
    listings (issue 19's server defines both; here they are stand-ins)."""
    app = create_app(lake)
    asked = []

    def authorize(principal, route, request):
        op = route.op
        asked.append((op.op_id, tuple(request.id or ())))
        if op.op_id == "ListTableVersions" or tuple(request.id or ()) == ("ops",):
            raise PermissionDeniedError(f"no grant for {op.op_id}")

    def visible(principal, route, request, result):
        if route.op.method == "list_namespaces" and list(request.id or []) == ["sales"]:
            return result.model_copy(update={"namespaces": [n for n in result.namespaces if n != "us"]})
        return result

    app.state.namespace_app.pipeline.authorize = authorize
    app.state.namespace_app.pipeline.visible = visible
    ui = client(app)
    table = ui.get("/ui/table/sales/orders")
    assert table.status_code == 200
    assert "no grant for ListTableVersions" in table.text
    assert ("DescribeTable", ("sales", "orders")) in asked and ("QueryTable", ("sales", "orders")) in asked
    denied = ui.get("/ui/ns/ops")
    assert denied.status_code == 403 and "(code 15)" in denied.text
    sales = ui.get("/ui/ns/sales").text
    assert links(sales, "ns-link") == ["eu"] and 'href="/ui/ns/sales/us"' not in sales  # the tree too


def test_both_serve_commands_take_no_ui(monkeypatch, tmp_path):
    """``python -m lance_ns.server --no-ui`` and ``lance-ns serve --no-ui`` reach the app as ui=False."""
    from click.testing import CliRunner

    from lance_ns.cli import app as cli_app
    from lance_ns.server import command, running

    seen = []
    monkeypatch.setattr(running, "serve", lambda ns, **kw: seen.append(kw["settings"].ui))
    root = str(tmp_path / "lake")
    assert command.main(["--impl", "dir", "--prop", f"root={root}", "--no-ui"]) == 0
    assert command.main(["--impl", "dir", "--prop", f"root={root}"]) == 0
    for extra in (["--no-ui"], []):
        r = CliRunner().invoke(cli_app.cli, ["serve", "--impl", "dir", "--prop", f"root={root}", *extra])
        assert r.exit_code == 0, r.output
    assert seen == [False, True, False, True]


def test_a_section_that_fails_unexpectedly_leaves_the_rest_of_the_page(lake, monkeypatch, caplog):
    def broken(request):
        raise RuntimeError("backend bug with password=hunter2")

    monkeypatch.setattr(lake, "list_table_indices", broken)
    r = client(create_app(lake)).get("/ui/table/sales/orders")
    assert r.status_code == 200
    assert '<td id="row-count">8</td>' in r.text
    assert "failed unexpectedly" in r.text and "hunter2" not in r.text
    assert "hunter2" not in caplog.text


def test_any_backend_rest_over_another_server(lake):
    """The UI of a server whose backend is the rest client of another server."""
    from lance_ns.server import run_server_in_thread

    with run_server_in_thread(lake) as upstream:
        remote = lance_ns.connect("rest", {"uri": upstream.url, "max_retries": 0})
        try:
            ui = client(create_app(remote))
            assert links(ui.get("/ui/ns/sales").text, "ns-link") == ["eu", "us"]
            r = ui.get("/ui/table/sales/orders?rows=2")
            assert r.status_code == 200
            assert '<td id="row-count">8</td>' in r.text
            assert re.findall(r"<tr><td>(\d+)</td><td>cust-\1</td>", r.text) == ["0", "1"]
            assert '<span class="tag">release-1</span>' in r.text
        finally:
            remote.close()
