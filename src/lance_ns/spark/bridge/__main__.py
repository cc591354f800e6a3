"""``python -m lance_ns.spark.bridge``: what a Spark session of your own needs
for lance (the bridge jar, built if needed, and the settings), as
``spark-submit`` arguments or ``spark-defaults.conf`` lines.

    python -m lance_ns.spark.bridge --catalog lake impl=dir root=/data/lake
    eval spark-submit "$(python -m lance_ns.spark.bridge --catalog lake impl=dir root=/data/lake)" job.py
    python -m lance_ns.spark.bridge --catalog prod config=prod --defaults >> $SPARK_HOME/conf/spark-defaults.conf
"""

from __future__ import annotations

import argparse
import shlex
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lance_ns.spark.bridge",
        description="Print the Spark settings for lance-ns: the bridge jar (the JVM read path and the "
        "lancens.spark.LanceCatalog SQL catalog) and, with --catalog, a catalog's keys.",
    )
    parser.add_argument(
        "--catalog",
        nargs="+",
        action="append",
        default=[],
        metavar=("NAME", "KEY=VALUE"),
        help="a catalog NAME and its properties: impl=<alias> and the impl's properties without "
        "prefix (root=..., uri=...), or config=<named configuration>; repeatable",
    )
    parser.add_argument(
        "--defaults", action="store_true", help="spark-defaults.conf lines instead of spark-submit arguments"
    )
    args = parser.parse_args(argv)
    catalogs = {}
    for name, *props in args.catalog:
        pairs = dict(p.split("=", 1) for p in props if "=" in p)
        if len(pairs) != len(props) or not ("impl" in pairs or "config" in pairs):
            parser.error(f"catalog {name}: give KEY=VALUE properties, with impl=... or config=...")
        catalogs[name] = pairs

    from ..jar import jar_path
    from ..session import submit_conf

    jar = jar_path()
    if jar is None:
        print("no bridge jar: LANCE_NS_SPARK_BRIDGE is off or no JDK (javac) was found", file=sys.stderr)
        return 1
    conf = submit_conf(catalogs)
    if args.defaults:
        print(f"spark.jars {jar}")
        for key, value in conf.items():
            print(f"{key} {value}")
    else:
        print(f"--jars {shlex.quote(jar)}")
        for key, value in conf.items():
            print(f"--conf {shlex.quote(f'{key}={value}')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
