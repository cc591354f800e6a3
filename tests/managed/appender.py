"""An appending writer process for the managed-table concurrency tests: commits
``N`` appends through a namespace with pylance and prints one line per
*acknowledged* append (after pylance returned), with the values it wrote.

    python -m tests.managed.appender dir ROOT TABLE WRITER N
    python -m tests.managed.appender rest URI TABLE WRITER N   # pylance's own RestNamespace
    python -m tests.managed.appender iceberg PROPS_JSON WH.NS.TABLE WRITER N   # any other impl:
    python -m tests.managed.appender unity PROPS_JSON CAT.SCHEMA.TABLE WRITER N  # its properties as JSON

A commit the namespace refuses (it lost a race: code 14, wrapped by pylance) is
retried with the same values: the namespace never published it, so a retry
cannot duplicate rows -- the test checks that it did not.
"""

from __future__ import annotations

import json
import sys
import time

import lance
import pyarrow as pa

ATTEMPTS = 60


def connect(kind: str, where: str):
    if kind == "dir":
        import lance_ns

        return lance_ns.connect("dir", {"root": where})
    if kind == "rest":
        import lance.namespace

        return lance.namespace.RestNamespace(uri=where)
    import lance_ns

    return lance_ns.connect(kind, json.loads(where))


def main(kind: str, where: str, table: str, writer: str, n: int) -> None:
    ns = connect(kind, where)
    print("ready", flush=True)
    for i in range(n):
        values = [f"{writer}-{i}-{j}" for j in range(3)]
        for attempt in range(ATTEMPTS):
            try:
                ds = lance.write_dataset(pa.table({"v": values}), namespace_client=ns, table_id=table.split("."),
                                         mode="append")
                break
            except Exception as e:  # noqa: BLE001 - a refused commit: retried, reported if it never lands
                last = e
                time.sleep(0.01 * (attempt % 5))
        else:
            print(f"failed {i} {str(last)[:200]!r}", flush=True)
            continue
        print(f"ack {ds.version} {' '.join(values)}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
