"""Build (once) and locate the jar of the ``lance`` format's JVM read path.

The Java sources ship in this package (``bridge/*.java``); they are compiled
with the JDK's ``javac`` against the jars of the installed pyspark, so the
jar always matches the Spark it runs in.  Built jars are cached under
``$LANCE_NS_CACHE`` (default ``~/.cache/lance-ns``), keyed by the sources and
the pyspark version.  Without a JDK, or with ``LANCE_NS_SPARK_BRIDGE=0``,
there is no jar and the ``lance`` format is the pure Python data source.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

SOURCES = Path(__file__).parent / "bridge"
PROVIDER = "lancens.spark.LanceProvider"
_SERVICE = "META-INF/services/org.apache.spark.sql.sources.DataSourceRegister"


def _cache_dir() -> Path:
    base = os.environ.get("LANCE_NS_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "lance-ns"
    )
    return Path(base)


def _javac() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and os.access(os.path.join(home, "bin", "javac"), os.X_OK):
        return os.path.join(home, "bin", "javac")
    return shutil.which("javac")


def enabled() -> bool:
    return os.environ.get("LANCE_NS_SPARK_BRIDGE", "1").lower() not in ("0", "false", "no", "off")


def jar_path() -> str | None:
    """The bridge jar for this pyspark, built if needed; None if disabled or
    no JDK is installed (the ``lance`` format then runs in Python only)."""
    if not enabled():
        return None
    import pyspark

    sources = sorted(SOURCES.glob("*.java"))
    digest = hashlib.sha256(pyspark.__version__.encode())
    for src in sources:
        digest.update(src.name.encode() + src.read_bytes())
    jar = _cache_dir() / f"lance-ns-spark-{digest.hexdigest()[:16]}.jar"
    if jar.exists():
        return str(jar)
    javac = _javac()
    if javac is None:
        return None
    jars = Path(pyspark.__file__).parent / "jars"
    jar.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=jar.parent) as tmp:
        classes = Path(tmp) / "classes"
        result = subprocess.run(
            [javac, "-nowarn", "--release", "17", "-d", str(classes), "-cp", f"{jars}/*", *map(str, sources)],
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            raise RuntimeError(f"compiling the lance Spark bridge failed:\n{result.stderr}")
        staged = Path(tmp) / jar.name
        with zipfile.ZipFile(staged, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr(_SERVICE, PROVIDER + "\n")
            for cls in sorted(classes.rglob("*.class")):
                z.write(cls, cls.relative_to(classes).as_posix())
        os.replace(staged, jar)  # atomic: concurrent builders both succeed
    return str(jar)


def main() -> int:
    """``python -m lance_ns.spark.jar``: print the jar's path (building
    it), e.g. for ``spark-submit --jars "$(python -m lance_ns.spark.jar)"``."""
    import sys

    jar = jar_path()
    if jar is None:
        print("no bridge jar: LANCE_NS_SPARK_BRIDGE is off or no JDK (javac) was found", file=sys.stderr)
        return 1
    print(jar)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
