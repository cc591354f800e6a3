"""A real Hive Metastore 3.1 for tests (the catalog API), its jars fetched from Maven Central.

The class path comes from ``mvn dependency:build-classpath`` on
``tests/services/maven/hms3/pom.xml`` (``org.apache.hive:hive-standalone-metastore:3.1.3``,
``org.apache.hadoop:hadoop-common:3.1.0``, ``org.apache.derby:derby:10.14.2.0``; ``~/.m2`` is the
cache, nothing is committed; a refused artifact fails with its name).  ``Hive3Metastore(workdir)``
then runs ``org.apache.hadoop.hive.metastore.HiveMetaStore -p PORT`` (through the small launcher
below) on Java 17 on 127.0.0.1 and a free port, with an embedded Derby database and a file
warehouse under ``workdir``, polled with a real Thrift call until it answers (about 5 s on an
idle 2-core machine, plus 2 s of javac on first use); ``stop()`` kills it by PID.  Process handling (start, stop,
restart, the parent-death signal) is :class:`tests.services.hms.HiveMetastore`'s; only the
command differs.

How it is set up, and why:

* no hive-exec: a bare metastore never builds Hive's ``SessionState``; the defaults that name
  hive-exec classes are replaced (``metastore.expression.proxy``, ``metastore.task.threads.always``).
* the schema is DataNucleus' (``datanucleus.schema.autoCreateAll``); the transaction tables
  the lock API needs (TXNS, HIVE_LOCKS, NEXT_LOCK_ID...) are not in it, and schematool's
  scripts are not in the Maven jars.  ``hms3_java/lancens/tests/Hms3Main.java`` makes them with
  Hive's own ``TxnDbUtil.prepDb`` and then runs ``HiveMetaStore.main``.  (Hive 3 would call
  prepDb itself under ``hive.in.test``, as tests/services/hms.py has 2.3 do, but on 3.1 that
  switch also refuses ``get_table`` to every client without the TEST capability.)
  The lock reaper (``AcidHouseKeeperService``) is one of the "always" task threads here: its
  usual place, the remote-only tasks, starts only after the compactor, a hive-exec class.
* HMS 3.1 has no bind-host setting and listens on every interface; the stand-in
  ``SecurityUtils`` of ``hms3_java/``, compiled at first use and first on the class path,
  makes it listen on 127.0.0.1 only.
* ``s3://`` and ``s3a://`` locations (any bucket): the metastore resolves the filesystem of
  every location it stores, and Hadoop 3.1's hadoop-common has none for S3 (nor the
  ViewFileSystemOverloadScheme tests/services/hms.py maps it with).  ``PathOnlyFileSystem``
  of ``hms3_java/`` answers that every path is an existing empty directory and never makes,
  writes or deletes anything: the data lives wherever the client writes it, the metastore
  keeps only the path.

``shared_hms3()`` starts ONE such metastore per test process, on first use, and stops it at
exit (``LANCE_NS_TEST_HMS3_URI=thrift://host:port`` uses one someone else runs).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from tests.services.hms import HMS_HANDLER_RETRY_INTERVAL, HiveMetastore, SharedMetastore
from tests.services.mvn import maven_classpath

HERE = Path(__file__).parent
POM = HERE / "maven" / "hms3" / "pom.xml"
JAVA_SRC = HERE / "hms3_java"
#: HiveMetaStore.main, after making the transaction tables (hms3_java/lancens/tests/Hms3Main.java)
MAIN = "lancens.tests.Hms3Main"
HIVE_VERSION = "3.1.3"

#: what makes the metastore grant locks (see the module docstring).  The housekeeper reaps
#: locks whose holder stopped heart-beating for ``hive.txn.timeout``: short, so a test can watch.
TRANSACTION_CONF = {
    "hive.support.concurrency": "true",
    "hive.txn.manager": "org.apache.hadoop.hive.ql.lockmgr.DbTxnManager",
    "hive.txn.timeout": "6s",
    "metastore.timedout.txn.reaper.interval": "1s",
}
TASKS = "org.apache.hadoop.hive.metastore.events.EventCleanerTask"
REAPER = "org.apache.hadoop.hive.metastore.txn.AcidHouseKeeperService"
#: the filesystem of s3:// and s3a:// locations: every path an existing empty directory
PATH_ONLY_FS = "lancens.tests.PathOnlyFileSystem"


def resolve_classpath() -> str:
    """The metastore's class path (jar paths in ~/.m2, ``:``-separated), fetched with mvn (and
    kept between test processes: tests/services/mvn.py)."""
    return maven_classpath(POM, "hms3", what=f"Hive Metastore {HIVE_VERSION}'s class path")


def java_classes(build_dir: Path, classpath: str) -> Path:
    """Compile hms3_java/: the launcher, the loopback-binding stand-in of SecurityUtils and
    the s3:// filesystem."""
    out = build_dir / "hms3-classes"
    if not (out / "lancens/tests/Hms3Main.class").exists():
        javac = shutil.which("javac")
        if javac is None:
            raise RuntimeError("javac is not on PATH: the Hive Metastore 3 test server needs a JDK")
        sources = [str(p) for p in JAVA_SRC.rglob("*.java")]
        proc = subprocess.run([javac, "-nowarn", "--release", "8", "-d", str(out), "-cp", classpath, *sources],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"javac failed on {JAVA_SRC}:\n{proc.stdout}{proc.stderr}")
    return out


class Hive3Metastore(HiveMetastore):
    """A Hive Metastore 3.1 (see the module docstring); start/stop/restart as HiveMetastore's."""

    def _command(self) -> list[str]:
        d = self.workdir
        classpath = resolve_classpath()
        db_url = f"jdbc:derby:{d}/metastore_db;create=true"
        conf = {
            "javax.jdo.option.ConnectionURL": db_url,
            "datanucleus.schema.autoCreateAll": "true",
            "hive.metastore.schema.verification": "false",
            "hive.metastore.warehouse.dir": f"file:{self.warehouse}",
            "metastore.expression.proxy": "org.apache.hadoop.hive.metastore.DefaultPartitionExpressionProxy",
            "metastore.task.threads.always": f"{TASKS},{REAPER}" if self.transactions else TASKS,
            "fs.s3.impl": PATH_ONLY_FS,
            "fs.s3a.impl": PATH_ONLY_FS,
            "metastore.hmshandler.retry.interval": HMS_HANDLER_RETRY_INTERVAL,
        }
        if self.transactions:
            conf.update(TRANSACTION_CONF)
        (d / "log4j2.properties").write_text(
            "status = error\n"
            "appender.console.type = Console\nappender.console.name = console\n"
            "appender.console.layout.type = PatternLayout\n"
            "appender.console.layout.pattern = %d{HH:mm:ss.SSS} %-5p [%t] %c{1}: %m%n\n"
            "rootLogger.level = warn\nrootLogger.appenderRef.console.ref = console\n"
        )
        cmd = [
            "java",
            "-Xmx512m",
            "-XX:TieredStopAtLevel=1",
            "-XX:+UseSerialGC",
            f"-Djava.io.tmpdir={d}",
            f"-Dderby.system.home={d}",
            f"-Dlog4j.configurationFile={d / 'log4j2.properties'}",
            f"-Dlancens.txn.db={db_url if self.transactions else ''}",
            "-cp",
            f"{java_classes(d, classpath)}{os.pathsep}{classpath}",
            MAIN,
            "-p",
            str(self.port),
        ]
        for key, value in conf.items():
            cmd += ["--hiveconf", f"{key}={value}"]
        return cmd


_SHARED = SharedMetastore(Hive3Metastore, "LANCE_NS_TEST_HMS3_URI", "lance-ns-hms3-")


def shared_hms3() -> Hive3Metastore:
    """The one Hive 3 metastore of this test process (started on first use, stopped at exit).

    With ``LANCE_NS_TEST_HMS3_URI=thrift://host:port`` the tests use that metastore instead.
    """
    return _SHARED.get()


if __name__ == "__main__":  # manual use: python -m tests.services.hms3
    resolve_classpath()
    t0 = time.monotonic()
    with Hive3Metastore(tempfile.mkdtemp(prefix="hms3-")) as hms:
        print(f"ready at {hms.uri} in {time.monotonic() - t0:.1f}s (pid {hms.proc.pid}); Ctrl-C to stop")
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
