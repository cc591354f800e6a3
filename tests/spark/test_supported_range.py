"""The supported pyspark range, as the ``spark`` extra in pyproject.toml states it, tested at
both ends, and one engine for every user with a JVM:

* the package carries the bridge jar of every supported minor (built when it was installed:
  lance_ns/spark/jar.py, setup.py);
* the newest minor is the one the whole suite runs on (what ``pip install lance-ns[spark]``
  resolves to), through its packaged jar;
* the oldest, installed beside it, runs its own packaged jar on a machine with a Java runtime
  and no JDK (tests/spark/jre.py: a ``jlink``ed JRE, no ``javac`` anywhere on ``PATH``) and
  passes a smoke subset of the catalog suite (tests/spark/smoke_job.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def _spark_range() -> tuple[tuple[int, int], tuple[int, int]]:
    """(oldest minor, first minor not supported) of the ``spark`` extra's pyspark requirement."""
    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["spark"]
    spec = next(r for r in extra if r.startswith("pyspark"))
    low = re.search(r">=\s*(\d+)\.(\d+)", spec)
    high = re.search(r"<\s*(\d+)\.(\d+)", spec)
    assert low and high, f"the spark extra states no range of minors: {spec!r}"
    return (int(low[1]), int(low[2])), (int(high[1]), int(high[2]))


def _minor(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def test_the_suite_runs_on_the_newest_supported_minor():
    import pyspark

    oldest, beyond = _spark_range()
    assert oldest <= _minor(pyspark.__version__) < beyond
    # the newest minor below the bound: what a fresh install resolves to
    assert _minor(pyspark.__version__) == (beyond[0], beyond[1] - 1), (pyspark.__version__, beyond)


def _installed_oldest(oldest: tuple[int, int]) -> Path:
    """The newest release of the oldest supported minor, installed on its own (cached)."""
    base = Path(os.environ.get("LANCE_NS_CACHE") or Path.home() / ".cache" / "lance-ns") / "pyspark-range"
    target = base / f"{oldest[0]}.{oldest[1]}"
    if not (target / "pyspark" / "version.py").exists():
        target.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
             f"pyspark=={oldest[0]}.{oldest[1]}.*"],
            capture_output=True, text=True, timeout=600)
        if done.returncode:
            pytest.fail(f"pip could not install pyspark {oldest[0]}.{oldest[1]}: {done.stderr[-2000:]}")
    return target


def _supported_minors() -> list[str]:
    (major, oldest), (next_major, beyond) = _spark_range()
    assert major == next_major, "a range over two majors needs its minors listed"
    return [f"{major}.{minor}" for minor in range(oldest, beyond)]


def test_the_package_carries_a_bridge_jar_for_every_supported_minor():
    from lance_ns.spark import jar

    assert sorted(jar.SPARK_RELEASES) == _supported_minors()
    missing = [m for m in _supported_minors() if jar.packaged_jar(m) is None]
    assert not missing, f"no packaged bridge jar (built from these sources) for Spark {missing}: see setup.py"


def test_the_oldest_supported_minor_runs_its_packaged_jar_on_a_jre_only_machine_and_passes_the_smoke_subset(tmp_path):
    from .jre import jre_only_env

    oldest, _ = _spark_range()
    target = _installed_oldest(oldest)
    env, runtime = jre_only_env({**os.environ, "PYTHONPATH": os.pathsep.join([str(target), str(REPO / "src")]),
                                 "LANCE_NS_CACHE": str(tmp_path / "cache")}, tmp_path)  # no jar built earlier
    env.pop("SPARK_HOME", None)
    done = subprocess.run([sys.executable, str(REPO / "tests" / "spark" / "smoke_job.py"), str(tmp_path / "lake")],
                          env=env, capture_output=True, text=True, timeout=600)
    line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert line is not None, f"the smoke job failed (exit {done.returncode}): {done.stderr[-4000:]}"
    result = json.loads(line[len("RESULT "):])
    assert _minor(result["pyspark"]) == oldest, result["pyspark"]
    assert result["javac"] is None, "the job found a javac: it did not run as on a JRE-only machine"
    assert Path(result["java_home"]).resolve() == runtime.resolve(), result["java_home"]  # Spark's JVM is the JRE
    # the jar compiled for this minor when the package was installed (lance_ns.spark.jar)
    assert result["jar"] == str(REPO / "src" / "lance_ns" / "spark" / f"lance-ns-spark-{oldest[0]}.{oldest[1]}.jar")
    assert not list((tmp_path / "cache").glob("lance-ns-spark-*.jar"))
    assert result["filtered"] == [2, 3, 4] and result["count"] == 4
    expected = [[1, "a", 1.5], [2, "b", 25.0], [3, "C", 3.5], [5, "e", 0.5]]
    assert result["rows"] == expected and result["pylance"] == expected
    assert result["copied"] == [1, 2]  # (CTAS after the MERGE: ids below 3)
    assert result["indexes"] == [["by_id", "btree"]]
    assert result["jvm_scan"], "format('lance') did not read through the JVM path on the JRE"
