"""The catalog browser in a real browser: headless Chromium (Debian's ``chromium``,
driven by playwright with ``executable_path``; never ``playwright install``) against
a real server on a dir namespace.  Screenshots go to ``.artifacts/ui/`` (git-ignored).

Skips, saying why, when playwright is not installed, when /usr/bin/chromium is absent
(CI installs it with apt-get in .ci/run) or when Chromium cannot start here.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from lance_ns.server import run_server_in_thread
from tests.missing import missing

from .conftest import HOSTILE_VALUE

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / ".artifacts" / "ui"
CHROMIUM = os.environ.get("LANCE_NS_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]
TOKEN = "browser-s3cret"


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        missing("playwright", "pip install 'lance-ns[test]'")
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        missing(f"Chromium at {CHROMIUM}", "apt-get install -y chromium, as .ci/run does")
    with sync_playwright() as p:
        try:
            chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        except Error as e:
            missing(f"a Chromium that starts (at {CHROMIUM}: {str(e).splitlines()[0]})", "apt-get install -y chromium")
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    pg.set_default_timeout(20_000)
    yield pg
    context.close()


def shot(page, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 5_000  # a rendered page, not an empty canvas
    return path


def test_browse_namespace_tree_and_a_table(lake, page):
    with run_server_in_thread(lake) as server:
        page.goto(f"{server.url}/ui/")
        assert page.title() == "root · lance-ns"
        assert page.locator("a.ns-link").all_inner_texts() == ["ops", "sales"]
        page.click("a.ns-link >> text=sales")
        page.wait_for_url("**/ui/ns/sales")
        # the tree shows sales opened with its children, the main list the same children
        assert page.locator("aside .tree li.open > a").first.inner_text() == "sales"
        assert page.locator("aside .tree .tree a").all_inner_texts()[:2] == ["eu", "us"]
        assert "orders" in page.locator("a.table-link").all_inner_texts()
        assert page.locator("#properties").inner_text().count("***") == 1  # api_token masked
        shot(page, "namespace")

        page.fill("input[name=q]", "ORD")
        page.click("form.search button")
        assert page.locator("a.table-link").all_inner_texts() == ["orders"]

        page.click("a.table-link >> text=orders")
        page.wait_for_url("**/ui/table/sales/orders")
        assert page.locator("h1").inner_text() == "Table orders"
        assert page.locator("#row-count").inner_text() == "8"
        schema = page.locator("#schema").inner_text()
        for label in ("where struct", "x float64", "items list<struct>", "sku utf8", "embedding fixed_size_list<float32>[4]"):
            assert label in " ".join(schema.split()), label
        versions = page.locator("#versions tbody tr")
        assert versions.count() == 3
        assert "release-1" in versions.nth(1).inner_text()
        assert " UTC" in versions.nth(0).inner_text()
        assert page.locator("#indices").inner_text().count("id_idx") == 1
        rows = page.locator("#rows table.rows tbody tr")
        assert rows.count() == 8 and rows.first.inner_text().split("\t")[:2] == ["0", "cust-0"]
        shot(page, "table")

        # column projection through the form
        for name in ("placed", "where", "items", "embedding", "customer"):
            page.uncheck(f"input[name=columns][value={name}]")
        page.fill("input[name=rows]", "2")
        page.click("form.projection button")
        assert page.locator("#rows thead th").all_inner_texts() == ["id"]
        assert page.locator("#rows table.rows tbody tr").count() == 2

        # an older version from the history, then back up through the breadcrumbs
        page.click("#versions a >> text=1")
        assert page.locator("#row-count").inner_text() == "5"
        page.click("nav.crumbs a >> text=sales")
        page.wait_for_url("**/ui/ns/sales")


def test_user_data_stays_text_in_the_browser(lake, page):
    with run_server_in_thread(lake) as server:
        page.goto(f"{server.url}/ui/ns/sales")
        hostile = page.locator("a.table-link").filter(has_text="onerror")
        assert hostile.count() == 1 and hostile.inner_text().startswith("<img")
        hostile.click()
        assert page.title() != "pwned"  # the row's <script> did not run
        assert HOSTILE_VALUE in page.locator("#rows").inner_text()


def test_sign_in_in_the_browser(lake, page):
    with run_server_in_thread(lake, auth_token=TOKEN) as server:
        page.goto(f"{server.url}/ui/ns/sales")
        assert "/ui/login" in page.url
        page.fill("input[name=token]", "wrong")
        page.click("main form button[type=submit]")
        assert "not accepted" in page.locator("[role=alert]").inner_text()
        page.fill("input[name=token]", TOKEN)
        page.click("main form button[type=submit]")
        page.wait_for_url("**/ui/ns/sales")
        assert page.locator("a.ns-link").all_inner_texts() == ["eu", "us"]
        cookie = next(c for c in page.context.cookies() if c["name"] == "lance_ns_ui")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert page.evaluate("document.cookie") == ""  # invisible to scripts
        page.click("header form.signout button")
        assert "/ui/login" in page.url
