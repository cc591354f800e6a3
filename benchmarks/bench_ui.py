"""The catalog browser on a large namespace: a dir namespace with 10,000 tables.

The tables are declared in one batch: their manifest rows (pylance's ``__manifest``
layout, :mod:`lance_ns.impls.dir.manifest`) are appended in a single Lance commit,
which is what 10,000 DeclareTable calls leave behind, in seconds instead of minutes.

Then, against our server on a free port, it times:

* ``GET /ui/ns/big``: the namespace page's first page (tree, child namespaces, the
  first ``pages.PAGE_SIZE`` tables, properties);
* a bare ``ListTables(limit=PAGE_SIZE)`` on the same namespace object (in-process),
  and the same call over REST (``GET /v1/namespace/big/table/list``);

and prints the median and worst of each, the ratio page/ListTables, and whether the
page meets its target (first page under 1 s).

    python benchmarks/bench_ui.py            # 10,000 tables, 20 requests each
    python benchmarks/bench_ui.py --quick    # 10,000 tables, 5 requests each
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time

import httpx
import pyarrow as pa

import lance_ns
from common import timed
from lance_ns.impls.dir.layout import object_id
from lance_ns.impls.dir.manifest import SCHEMA
from lance_ns.impls.dir.view import TABLE
from lance_ns.server import run_server_in_thread
from lance_ns.server.ui import pages

TARGET_SECONDS = 1.0
NAMESPACE = ["big"]


def declare_many(root: str, n: int) -> None:
    """``n`` declared tables in ``big``: one manifest append, the rows DeclareTable writes."""
    import lance

    ns = lance_ns.connect("dir", {"root": root})
    ns.create_namespace({"id": NAMESPACE})
    names = [f"table_{i:05d}" for i in range(n)]
    rows = pa.table({
        "object_id": [object_id(NAMESPACE + [name]) for name in names],
        "object_type": [TABLE] * n,
        "location": [ns._stored(ns.default_location(NAMESPACE, name)) for name in names],
        "metadata": pa.nulls(n, pa.string()),
        "base_objects": pa.nulls(n, SCHEMA.field("base_objects").type),
    }, schema=SCHEMA)
    lance.write_dataset(rows, ns.manifest.uri, mode="append")
    ns.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tables", type=int, default=10_000)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--quick", action="store_true", help="5 requests of each kind")
    args = p.parse_args(argv)
    repeat = 5 if args.quick else args.repeat
    with tempfile.TemporaryDirectory(prefix="bench-ui-") as tmp:
        root = f"{tmp}/lake"
        start = time.perf_counter()
        declare_many(root, args.tables)
        print(f"declared {args.tables} tables in {time.perf_counter() - start:.1f} s (one manifest commit)")
        ns = lance_ns.connect("dir", {"root": root})
        with run_server_in_thread(ns, threads=8) as server, httpx.Client(base_url=server.url, timeout=60) as http:
            page_url = "/ui/ns/" + "/".join(NAMESPACE)
            first = timed(lambda: http.get(page_url).raise_for_status(), 1)[0]  # cold: the manifest loads
            body = http.get(page_url).text
            shown = body.count('class="table-link"')
            assert shown == pages.PAGE_SIZE, f"the page shows {shown} tables, expected {pages.PAGE_SIZE}"
            assert 'class="next-tables"' in body, "the page offers no next page"
            page = timed(lambda: http.get(page_url).raise_for_status(), repeat)
            bare = timed(lambda: ns.list_tables({"id": NAMESPACE, "limit": pages.PAGE_SIZE}), repeat)
            rest = timed(lambda: http.get(f"/v1/namespace/{'$'.join(NAMESPACE)}/table/list",
                                          params={"limit": pages.PAGE_SIZE}).raise_for_status(), repeat)
        ns.close()
    med = statistics.median
    print(f"namespace page (first {pages.PAGE_SIZE} of {args.tables} tables): cold {first * 1000:.1f} ms, "
          f"median {med(page) * 1000:.1f} ms, worst {max(page) * 1000:.1f} ms")
    print(f"ListTables(limit={pages.PAGE_SIZE}) in-process: median {med(bare) * 1000:.2f} ms; "
          f"over REST: median {med(rest) * 1000:.1f} ms")
    print(f"ratio page / in-process ListTables: {med(page) / med(bare):.1f}x; "
          f"page / REST ListTables: {med(page) / med(rest):.1f}x")
    ok = max(page + [first]) < TARGET_SECONDS
    print(f"target: first page under {TARGET_SECONDS:g} s: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
