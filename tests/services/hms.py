"""A real Hive Metastore 2.3.10 for tests, run from the jars in the pyspark wheel.

``HiveMetastore(workdir)`` starts ``org.apache.hadoop.hive.metastore.HiveMetaStore``
on 127.0.0.1 and a free port with an embedded Derby database and a file
warehouse under ``workdir``; readiness is a real Thrift call
(``get_all_databases``).  ``stop()`` kills it by PID, ``restart()`` starts it
again on the same port over the same Derby database (the fault test).

The metastore grants locks (its lock API, which commits of implementation-managed
tables are made under): see ``TRANSACTION_CONF``.  ``HiveMetastore(workdir,
transactions=False)`` is one without the transaction tables, whose ``lock``
answers an internal error (as a metastore whose schema only DataNucleus made).

``shared_metastore()`` starts ONE metastore per test process (8-14 s of JVM
start) on first use and stops it at interpreter exit, so the conformance
suite (hive2 + hive3) and tests/hive share it.

``s3://BUCKET/...`` locations: HMS 2.3 checks a table location's filesystem,
so the scheme is mapped (Hadoop's ViewFileSystemOverloadScheme) onto local
``workdir/s3/BUCKET`` directories; the data itself lives wherever the client
writes it (moto S3 in the tests), the metastore only needs the path to resolve.
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pyspark

from tests.services.process import stop_by_pid

JARS = Path(pyspark.__file__).parent / "jars"
MAIN = "org.apache.hadoop.hive.metastore.HiveMetaStore"
LOOPBACK_SRC = Path(__file__).parent / "hms_loopback"
S3_BUCKETS = ("lance-hive",)  # buckets the metastore accepts in s3:// locations


#: how long the metastore waits before retrying a call that hit a datastore error (Hive's default
#: is 2 s): racing creates make Derby refuse all but one statement, and each loser then slept 2 s
#: in the metastore before its retry found the winner's database or table (a race of the
#: conformance suite took ~4 s on HMS, of nothing but these pauses); the retries and their
#: answers are as before.  Hive 2.3 names it hive.hmshandler.retry.interval, 3.1
#: metastore.hmshandler.retry.interval (tests/services/hms3.py).
HMS_HANDLER_RETRY_INTERVAL = "50ms"

#: what makes the metastore grant locks (lock/check_lock/unlock, the compare-and-swap of
#: implementation-managed tables).  The lock API needs the transaction tables (TXNS,
#: HIVE_LOCKS, NEXT_LOCK_ID...), which DataNucleus' autoCreateAll does not make; Hive 2.3's
#: TxnHandler creates them itself (TxnDbUtil.prepDb) when ``hive.in.test`` is true, as
#: schematool's hive-txn-schema-2.3.0 script would on a production metastore.  The
#: housekeeper (started with the compactor initiator) reaps locks whose holder stopped
#: heart-beating for ``hive.txn.timeout``: shortened here so that a test can watch it.
TRANSACTION_CONF = {
    "hive.in.test": "true",
    "hive.support.concurrency": "true",
    "hive.txn.manager": "org.apache.hadoop.hive.ql.lockmgr.DbTxnManager",
    "hive.compactor.initiator.on": "true",
    "hive.txn.timeout": "6s",
    "hive.timedout.txn.reaper.start": "1s",
    "hive.timedout.txn.reaper.interval": "1s",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _with_parent_death_signal(cmd: list[str]) -> list[str]:
    # A killed test run must not leave a JVM behind: util-linux's setpriv asks
    # the kernel to SIGTERM the JVM when its parent dies (a preexec_fn would do
    # the same but forks the Python process, which lance warns is not fork-safe).
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "TERM", *cmd] if setpriv else cmd


def loopback_classes(build_dir: Path) -> Path:
    """Compile the loopback-binding stand-in of HiveAuthUtils (see hms_loopback/).

    HMS 2.3 has no bind-host setting and listens on every interface; this class,
    first on the classpath, makes it listen on 127.0.0.1 only.
    """
    out = build_dir / "loopback-classes"
    if not (out / "org/apache/hadoop/hive/common/auth/HiveAuthUtils.class").exists():
        sources = [str(p) for p in LOOPBACK_SRC.rglob("*.java")]
        subprocess.run(
            ["javac", "-nowarn", "-d", str(out), "-cp", f"{JARS}/*", *sources],
            check=True,
            capture_output=True,
        )
    return out


def thrift_ping(host: str, port: int, timeout: float = 2.0) -> bool:
    """True if a metastore answers a real Thrift call at host:port."""
    from pymetastore.hive_metastore import ThriftHiveMetastore
    from thrift.protocol import TBinaryProtocol
    from thrift.transport import TSocket, TTransport

    try:  # a plain connect first: thrift logs every refused connection as an error
        socket.create_connection((host, port), timeout).close()
    except OSError:
        return False
    sock = TSocket.TSocket(host, port)
    sock.setTimeout(timeout * 1000)
    transport = TTransport.TBufferedTransport(sock)
    try:
        transport.open()
        client = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(transport))
        client.get_all_databases()
        return True
    except Exception:
        return False
    finally:
        transport.close()


class HiveMetastore:
    def __init__(self, workdir: str | os.PathLike, startup_timeout: float = 180.0, transactions: bool = True):
        self.workdir = Path(workdir)
        self.transactions = transactions
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.host = "127.0.0.1"
        self.port = free_port()
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen | None = None
        self.warehouse = self.workdir / "wh"
        self.s3_root = self.workdir / "s3"

    @property
    def uri(self) -> str:
        return f"thrift://{self.host}:{self.port}"

    def _command(self) -> list[str]:
        d = self.workdir
        conf = {
            "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={d}/metastore_db;create=true",
            "datanucleus.schema.autoCreateAll": "true",
            "hive.metastore.schema.verification": "false",
            "datanucleus.connectionPoolingType": "HikariCP",  # BoneCP is not shipped
            "hive.async.log.enabled": "false",  # the disruptor jar is missing
            "hive.metastore.warehouse.dir": f"file://{self.warehouse}",
            "fs.s3.impl": "org.apache.hadoop.fs.viewfs.ViewFileSystemOverloadScheme",
            "fs.s3a.impl": "org.apache.hadoop.fs.viewfs.ViewFileSystemOverloadScheme",
            "fs.viewfs.overload.scheme.target.file.impl": "org.apache.hadoop.fs.LocalFileSystem",
            "hive.hmshandler.retry.interval": HMS_HANDLER_RETRY_INTERVAL,
        }
        if self.transactions:
            conf.update(TRANSACTION_CONF)
        for bucket in S3_BUCKETS:
            (self.s3_root / bucket).mkdir(parents=True, exist_ok=True)
            conf[f"fs.viewfs.mounttable.{bucket}.linkFallback"] = f"file://{self.s3_root / bucket}"
        cmd = [
            "java",
            "-Xmx512m",
            "-XX:TieredStopAtLevel=1",
            "-XX:+UseSerialGC",
            f"-Djava.io.tmpdir={d}",
            f"-Dderby.system.home={d}",
            "-cp",
            f"{loopback_classes(self.workdir)}:{JARS}/*",
            MAIN,
            "-p",
            str(self.port),
        ]
        for key, value in conf.items():
            cmd += ["--hiveconf", f"{key}={value}"]
        return cmd

    def start(self) -> "HiveMetastore":
        if self.proc is not None and self.proc.poll() is None:
            return self
        log = open(self.workdir / "hms.log", "ab")
        self.proc = subprocess.Popen(
            _with_parent_death_signal(self._command()),
            cwd=self.workdir,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        log.close()
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"metastore exited with {self.proc.returncode}; see {self.workdir / 'hms.log'}")
            if thrift_ping(self.host, self.port):
                return self
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"metastore not ready after {self.startup_timeout}s; see {self.workdir / 'hms.log'}")

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        stop_by_pid(proc)

    def restart(self) -> "HiveMetastore":
        self.stop()
        return self.start()

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def __enter__(self) -> "HiveMetastore":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class ExternalMetastore:
    """A metastore someone else runs (``LANCE_NS_TEST_HMS_URI``): no stop/restart."""

    def __init__(self, uri: str):
        self.uri = uri
        self.host, _, port = uri.removeprefix("thrift://").partition(":")
        self.port = int(port)
        self.proc = None
        self.running = True


class SharedMetastore:
    """The one metastore of a kind in this test process: started on first use and stopped
    at exit, or the metastore someone else runs that ``env_var`` names (thrift://host:port)."""

    def __init__(self, make, env_var: str, prefix: str):
        self._make, self._env_var, self._prefix = make, env_var, prefix
        self._server = None
        self._lock = threading.Lock()

    def get(self):
        with self._lock:
            if self._server is None and os.environ.get(self._env_var):
                self._server = ExternalMetastore(os.environ[self._env_var])
            if self._server is None:
                workdir = tempfile.mkdtemp(prefix=self._prefix)
                self._server = self._make(workdir)
                atexit.register(self._stop, workdir)
            if not self._server.running:
                self._server.start()
            return self._server

    def _stop(self, workdir: str) -> None:
        if not isinstance(self._server, ExternalMetastore):
            self._server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


_SHARED = SharedMetastore(HiveMetastore, "LANCE_NS_TEST_HMS_URI", "lance-ns-hms-")


def shared_metastore() -> HiveMetastore:
    """The one metastore of this test process (started on first use, stopped at exit).

    With ``LANCE_NS_TEST_HMS_URI=thrift://host:port`` the tests use that metastore
    instead (quick iteration; the fault test, which must restart it, is skipped).
    """
    return _SHARED.get()


if __name__ == "__main__":  # manual use: python -m tests.services.hms
    t0 = time.monotonic()
    with HiveMetastore(tempfile.mkdtemp(prefix="hms-")) as hms:
        print(f"ready at {hms.uri} in {time.monotonic() - t0:.1f}s (pid {hms.proc.pid}); Ctrl-C to stop")
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
