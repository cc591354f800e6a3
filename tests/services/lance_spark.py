"""lance-spark (the Lance project's JVM Spark connector, ``org.lance`` on Maven Central) and the
environment it runs in, for tests/interop/test_lance_spark.py and benchmarks/bench_spark.py.

What Maven Central serves here (``maven/lance_spark/pom.xml`` resolves it into ~/.m2; no jar is
committed): no lance-spark *bundle* at all, so no Spark 4.x connector; the lean jar
``org.lance:lance-spark-3.5_2.12:0.4.0`` and its dependencies are served, and they are what
the bundle shades.  So it runs on Spark 3.5 (pyspark 3.5.5, the version lance-spark 0.4.0
builds against) in a venv of its own made with ``uv`` (our pyspark is 4.x) from a wheel built
once into ~/.cache/lance-ns; our package is not installed there.  Its jars go on the driver's
class path *before* Spark's (``spark.driver.extraClassPath``; local mode: the driver is the
executor): through ``spark.jars`` Spark's Arrow 12 wins over lance-core's Arrow 18 and every
write fails (``NoSuchMethodError ... ArrowRecordBatch.getVariadicBufferCounts``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.packaging.install import clean_env, fresh_venv
from tests.server.conftest import LANCE_NS, free_port
from tests.services.mvn import CACHE, MavenError, maven_classpath
from tests.services.process import stop_by_pid, wait_healthy

POM = Path(__file__).resolve().parent / "maven" / "lance_spark" / "pom.xml"

#: the connector (artifact, version) and the pyspark it runs on; override with
#: LANCE_NS_TEST_LANCE_SPARK=artifact:version and LANCE_NS_TEST_LANCE_SPARK_PYSPARK=version
#: (e.g. lance-spark-bundle-4.2_2.13:0.7.0 with 4.2.0 where Maven serves the bundles)
ARTIFACT, VERSION = os.environ.get("LANCE_NS_TEST_LANCE_SPARK", "lance-spark-3.5_2.12:0.4.0").split(":")
PYSPARK = os.environ.get("LANCE_NS_TEST_LANCE_SPARK_PYSPARK", "3.5.5")

#: coordinates the Maven Central reachable here refused ("Could not find artifact"), verified
#: when the interop test was written; the Spark 4.x connectors exist upstream but are not served
REFUSED = (
    "org.lance:lance-spark-bundle-4.2_2.13:0.7.0", "org.lance:lance-spark-bundle-4.2_2.13:0.7.1",
    "org.lance:lance-spark-bundle-4.2_2.13:0.7.2", "org.lance:lance-spark-bundle-4.1_2.13:0.7.0",
    "org.lance:lance-spark-bundle-4.0_2.13:0.7.0", "org.lance:lance-spark-bundle-4.0_2.13:0.4.0",
    "org.lance:lance-spark-bundle-4.1_2.13:0.4.0", "org.lance:lance-spark-bundle-3.5_2.12:0.4.0",
    "org.lance:lance-spark-bundle-3.5_2.13:0.4.0", "org.lance:lance-spark-4.0_2.13:0.4.0",
    "org.lance:lance-spark-4.1_2.13:0.4.0", "org.lance:lance-spark-3.5_2.13:0.4.0",
    "com.lancedb:lance-spark-bundle-3.5_2.12:0.0.15",
)

#: the catalog class, configured as ``spark.sql.catalog.NAME`` with ``.impl`` ``dir`` (and
#: ``.root``) or ``rest`` (and ``.uri``)
CATALOG_CLASS = "org.lance.spark.LanceNamespaceSparkCatalog"



class Unavailable(RuntimeError):
    """lance-spark or its Spark cannot be had here (no ``mvn``, Maven refused the artifact)."""


def resolve_classpath(artifact: str = ARTIFACT, version: str = VERSION) -> str:
    """The connector's jars and their dependencies (``:``-separated paths in ~/.m2), resolved by
    Maven; the answer is kept in CACHE, keyed by the pom and the coordinates, while every jar
    it names is still there (tests/services/mvn.py)."""
    coordinates = f"org.lance:{artifact}:{version}"
    try:
        jars = maven_classpath(POM, "lance-spark", [f"-Dlance.spark.artifact={artifact}",
                                                    f"-Dlance.spark.version={version}"], f"{coordinates} (lance-spark)")
    except MavenError as e:
        raise Unavailable(str(e)) from e
    assert any(Path(j).name.startswith(f"{artifact}-{version}") for j in jars.split(os.pathsep)), jars
    return jars


def pyspark_wheel(version: str = PYSPARK) -> Path:
    """pyspark ``version`` as a wheel, built once into CACHE.  PyPI has only its source
    distribution (317 MB), and uv rebuilds that on every install here (its cached build is
    revalidated as a new revision each time): about 40 s per session without this."""
    wheels = CACHE / "wheels"
    found = sorted(wheels.glob(f"pyspark-{version}-*.whl"))
    if found:
        return found[0]
    wheels.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=wheels) as tmp:
        done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--disable-pip-version-check",
                               "-w", tmp, f"pyspark=={version}"], capture_output=True, text=True, timeout=1800)
        assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-3000:])
        (built,) = Path(tmp).glob("pyspark-*.whl")
        built.replace(wheels / built.name)  # atomic: a racing session finds a whole wheel or none
    return wheels / built.name


def make_python(venv: Path) -> Path:
    """A venv at ``venv`` with only pyspark (the version the connector was built for; it talks
    to a namespace itself, so our package is not needed there); answers its python."""
    return fresh_venv(venv, [str(pyspark_wheel())]) / "python"


def job_env(python: Path) -> dict[str, str]:
    """The environment of a process run by ``python`` (the venv's): none of our venv, work tree
    or Spark settings leak into it."""
    env = {k: v for k, v in clean_env().items() if not k.startswith(("SPARK_", "PYSPARK_", "LANCE_NS"))}
    env.update(SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=str(python))
    return env


@dataclass
class Served:
    url: str
    root: Path
    log: Path


@contextmanager
def serve_dir(root: Path, log: Path):
    """``lance-ns serve --impl dir`` with its request log in a file (lance-spark makes
    hundreds of requests; a pipe nobody reads would fill up)."""
    port = free_port()
    environ = {k: v for k, v in os.environ.items() if not k.startswith("LANCE_NS")}
    with open(log, "w") as sink:
        proc = subprocess.Popen([LANCE_NS, "serve", "--impl", "dir", "--prop", f"root={root}", "--no-ui",
                                 "--port", str(port)], env=environ, stdout=sink, stderr=subprocess.STDOUT)
        try:
            wait_healthy(proc, f"http://127.0.0.1:{port}", 120)
            yield Served(f"http://127.0.0.1:{port}", root, log)
        finally:
            stop_by_pid(proc)
