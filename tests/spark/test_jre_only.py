"""One engine for every user with a JVM: the package carries the bridge jar of every supported
Spark minor (built when it was installed: lance_ns/spark/jar.py, setup.py), so a machine with
a Java runtime and no JDK runs the JVM path, the lance catalogs and the SQL extension.

The JRE is a real one: ``jlink`` makes a Java runtime image of this JDK without its compiler
(module ``jdk.compiler``, so no ``javac``), cached by the JDK's version.  The smoke subset of
the catalog suite (tests/spark/smoke_job.py) runs with it as ``JAVA_HOME``, no ``javac`` on
``PATH``, and an empty jar cache."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .test_supported_range import _spark_range

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
#: what Spark needs of the platform: Java SE, sun.misc.Unsafe, the vector API it uses, and the
#: usual runtime services (what a distribution's JRE package holds, minus nothing Spark uses)
JRE_MODULES = ("java.se", "jdk.unsupported", "jdk.incubator.vector", "jdk.crypto.ec", "jdk.management",
               "jdk.naming.dns", "jdk.zipfs", "jdk.localedata", "jdk.security.auth", "jdk.net", "jdk.charsets")


def _spark_minors() -> list[str]:
    """Every minor of the ``spark`` extra's pyspark range (pyproject.toml)."""
    (major, oldest), (next_major, beyond) = _spark_range()
    assert major == next_major, "a range over two majors needs its minors listed"
    return [f"{major}.{minor}" for minor in range(oldest, beyond)]


def test_the_package_carries_a_bridge_jar_for_every_supported_minor():
    from lance_ns.spark import jar

    assert sorted(jar.SPARK_RELEASES) == _spark_minors()
    missing = [m for m in _spark_minors() if jar.packaged_jar(m) is None]
    assert not missing, f"no packaged bridge jar (built from these sources) for Spark {missing}: see setup.py"


def _jdk_home() -> Path:
    javac = shutil.which("javac") or pytest.fail("CI has a JDK: no javac found to make a JRE from")
    return Path(os.path.realpath(javac)).parents[1]


def _jre() -> Path:
    """A Java runtime image of this JDK without its compiler, made once per JDK version."""
    jdk = _jdk_home()
    version = subprocess.run([jdk / "bin" / "java", "-version"], capture_output=True, text=True).stderr.split("\n")[0]
    key = re.sub(r"[^0-9A-Za-z.]+", "-", version).strip("-")
    base = Path(os.environ.get("LANCE_NS_CACHE") or Path.home() / ".cache" / "lance-ns") / "jre" / key
    if not (base / "bin" / "java").exists():
        shutil.rmtree(base, ignore_errors=True)
        base.parent.mkdir(parents=True, exist_ok=True)
        made = subprocess.run([jdk / "bin" / "jlink", "--add-modules", ",".join(JRE_MODULES), "--output", base,
                               "--no-header-files", "--no-man-pages", "--strip-debug"],
                              capture_output=True, text=True, timeout=300)
        assert made.returncode == 0, made.stderr
    assert not (base / "bin" / "javac").exists()
    return base


def _without_jdk(directory: Path, mirror: Path) -> str:
    """``directory`` as a PATH entry, or where it holds the JDK's tools (``/usr/bin/javac`` is a
    link into the JDK), a mirror of it without them: the rest of the machine as it is."""
    if not os.access(directory / "javac", os.X_OK):
        return str(directory)
    jdk = _jdk_home()
    mirror.mkdir(parents=True)
    for entry in directory.iterdir():
        if not Path(os.path.realpath(entry)).is_relative_to(jdk):
            (mirror / entry.name).symlink_to(entry)
    return str(mirror)


def test_the_jvm_path_runs_on_a_machine_with_a_jre_only(tmp_path):
    import pyspark

    jre = _jre()
    path = [str(jre / "bin")] + [_without_jdk(Path(d), tmp_path / "path" / str(i))
                                 for i, d in enumerate(os.environ["PATH"].split(os.pathsep)) if d]
    env = {**os.environ, "JAVA_HOME": str(jre), "PATH": os.pathsep.join(path),
           "LANCE_NS_CACHE": str(tmp_path / "cache")}  # no jar built earlier by a JDK
    env.pop("SPARK_HOME", None)
    done = subprocess.run([sys.executable, str(REPO / "tests" / "spark" / "smoke_job.py"), str(tmp_path / "lake")],
                          env=env, capture_output=True, text=True, timeout=600)
    line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert line is not None, f"the smoke job failed on the JRE (exit {done.returncode}): {done.stderr[-4000:]}"
    result = json.loads(line[len("RESULT "):])
    assert result["javac"] is None, "the job found a javac: it did not run as on a JRE-only machine"
    assert Path(result["java_home"]).resolve() == jre.resolve(), result["java_home"]  # Spark's JVM is the JRE
    minor = ".".join(pyspark.__version__.split(".")[:2])
    assert result["jar"] == str(REPO / "src" / "lance_ns" / "spark" / f"lance-ns-spark-{minor}.jar")
    assert result["jvm_scan"], "format('lance') did not read through the JVM path on the JRE"
    expected = [[1, "a", 1.5], [2, "b", 25.0], [3, "C", 3.5], [5, "e", 0.5]]
    assert result["filtered"] == [2, 3, 4] and result["count"] == 4
    assert result["rows"] == expected and result["pylance"] == expected
    assert result["indexes"] == [["by_id", "btree"]]  # the SQL extension, from the same jar
