"""A writer process for the kill -9 test: commits operations on a directory
root and prints one line per *acknowledged* operation (after it returned).

    python -m tests.reliability.writer ROOT RUN
"""

from __future__ import annotations

import sys

import pyarrow as pa

import lance_ns
from lance_ns.datasets import table_to_ipc_stream


def main(root: str, run: str) -> None:
    ns = lance_ns.connect("dir", {"root": root})
    ns.create_namespace({"id": ["w"], "mode": "ExistOk"})
    print("ready", flush=True)
    i = 0
    while True:
        name = f"{run}_{i:04d}"
        kind = i % 3
        if kind == 0:
            ns.declare_table({"id": ["w", name]})
        elif kind == 1:
            data = pa.table({"id": pa.array(range(i % 7 + 1), pa.int64())})
            ns.create_table({"id": ["w", name]}, table_to_ipc_stream(data))
        else:
            ns.create_namespace({"id": ["w", name]})
        print(f"ack {kind} {name}", flush=True)
        i += 1


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
