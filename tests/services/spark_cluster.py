"""A real Spark standalone cluster and a Spark Connect server, from the pyspark wheel.

``SparkStandalone(workdir)`` starts a master and two workers, each its own JVM
(``bin/spark-class org.apache.spark.deploy.master.Master`` / ``...worker.Worker``,
the script ``exec``s the JVM, so the PID Popen keeps is the JVM's), bound to
127.0.0.1 on explicit free ports, logging under ``workdir``; ready when the
master's JSON status lists every worker ALIVE.  Executors run in JVMs the
workers start, with work directories ``workdir/worker-N/app-*/<executor id>/``
(where the jars a driver ships with ``spark.jars`` are fetched to).

``SparkConnectServer(workdir, conf)`` runs ``org.apache.spark.sql.connect.
service.SparkConnectServer`` through ``bin/spark-submit`` (what
``sbin/start-connect-server.sh`` does, minus the daemonizing that would hide
the JVM's PID) on 127.0.0.1 and a free gRPC port; ready when the port accepts
connections.  Clients use ``SparkSession.builder.remote(server.url)``.

Every process is stopped by PID (SIGTERM, then SIGKILL), and dies with the
test process (``setpriv --pdeathsig``, see hms.py).

    python -m tests.services.spark_cluster      # a cluster to try by hand
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pyspark

from .hms import _with_parent_death_signal, free_port
from .process import poller

SPARK_HOME = Path(pyspark.__file__).parent
HOST = "127.0.0.1"
# Master and workers only schedule: C1 JIT and SerialGC start them ~1 s sooner
# each (as for the metastore, hms.py); executors keep the session's settings.
DAEMON_JAVA_OPTS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
CONNECT_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"


def spark_env(workdir: Path) -> dict[str, str]:
    """The environment of every Spark process here: this pyspark, loopback only,
    no user configuration directory, and Python workers running this interpreter."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
    conf_dir = workdir / "conf"  # empty: no spark-defaults.conf / spark-env.sh from elsewhere
    conf_dir.mkdir(parents=True, exist_ok=True)
    env.update(
        SPARK_HOME=str(SPARK_HOME),
        SPARK_CONF_DIR=str(conf_dir),
        SPARK_LOCAL_IP=HOST,
        SPARK_LOCAL_DIRS=str(workdir / "local"),
        PYSPARK_PYTHON=sys.executable,
        PYSPARK_DRIVER_PYTHON=sys.executable,
    )
    return env


class _Process:
    """One JVM started by a Spark script, its output in ``log``, stopped by PID."""

    def __init__(self, cmd: list[str], env: dict[str, str], log: Path):
        self.log = log
        with open(log, "ab") as out:
            self.proc = subprocess.Popen(
                _with_parent_death_signal(cmd),
                cwd=log.parent,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def check_alive(self) -> None:
        if self.proc.poll() is not None:
            tail = self.log.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"{self.log.name}: exited with {self.proc.returncode}:\n{tail}")

    def stop(self) -> None:
        if self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


def _wait(ready, processes: list[_Process], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while True:
        for p in processes:
            p.check_alive()
        if ready():
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} not ready after {timeout:.0f}s; logs: {[str(p.log) for p in processes]}")
        time.sleep(0.25)


class SparkStandalone:
    """A standalone master and ``workers`` workers (1 core, ``worker_memory`` each)."""

    def __init__(self, workdir: str | os.PathLike, workers: int = 2, worker_memory: str = "1g"):
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.n_workers = workers
        self.worker_memory = worker_memory
        self.port = free_port()
        self.webui_port = free_port()
        self.master: _Process | None = None
        self.workers: list[_Process] = []

    @property
    def url(self) -> str:
        return f"spark://{HOST}:{self.port}"

    def worker_dir(self, i: int) -> Path:
        return self.workdir / f"worker-{i}"

    def status(self) -> dict:
        """The master's JSON status (workers, running applications)."""
        return poller.get(f"http://{HOST}:{self.webui_port}/json/").json()

    def _alive_workers(self) -> int:
        try:
            return sum(w["state"] == "ALIVE" for w in self.status()["workers"])
        except (httpx.HTTPError, ValueError, KeyError):
            return 0

    def start(self, timeout: float = 300.0) -> "SparkStandalone":
        env = spark_env(self.workdir)
        # the Master and Worker classes read these (a Spark Connect server, a driver, does too:
        # it gets spark.driver.extraJavaOptions instead)
        env.update(SPARK_DAEMON_JAVA_OPTS=DAEMON_JAVA_OPTS, SPARK_DAEMON_MEMORY="256m")
        spark_class = str(SPARK_HOME / "bin" / "spark-class")
        try:
            self.master = _Process(
                [spark_class, "org.apache.spark.deploy.master.Master", "--host", HOST,
                 "--port", str(self.port), "--webui-port", str(self.webui_port)],
                env,
                self.workdir / "master.log",
            )
            for i in range(self.n_workers):
                work = self.worker_dir(i)
                work.mkdir(exist_ok=True)
                self.workers.append(
                    _Process(
                        [spark_class, "org.apache.spark.deploy.worker.Worker", self.url, "--host", HOST,
                         "--port", str(free_port()), "--webui-port", str(free_port()), "--cores", "1",
                         "--memory", self.worker_memory, "--work-dir", str(work)],
                        env,
                        self.workdir / f"worker-{i}.log",
                    )
                )
            _wait(lambda: self._alive_workers() == self.n_workers, self.processes, timeout, "spark standalone cluster")
        except BaseException:
            self.stop()
            raise
        return self

    @property
    def processes(self) -> list[_Process]:
        return ([self.master] if self.master else []) + self.workers

    def stop(self) -> None:
        for p in reversed(self.processes):  # workers first: a master gone first makes them retry
            p.stop()
        self.master, self.workers = None, []

    def __enter__(self) -> "SparkStandalone":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class SparkConnectServer:
    """A Spark Connect server (``master`` local[2] by default) with ``conf`` and ``jars``."""

    def __init__(
        self,
        workdir: str | os.PathLike,
        conf: dict[str, str] | None = None,
        jars: list[str] = (),
        master: str = "local[2]",
    ):
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.conf = dict(conf or {})
        self.jars = list(jars)
        self.master = master
        self.server: _Process | None = None

    @property
    def url(self) -> str:
        return f"sc://{HOST}:{self.port}"

    def command(self) -> list[str]:
        conf = {
            "spark.connect.grpc.binding.address": HOST,
            "spark.connect.grpc.binding.port": str(self.port),
            "spark.driver.host": HOST,
            "spark.ui.enabled": "false",
            **self.conf,
        }
        cmd = [str(SPARK_HOME / "bin" / "spark-submit"), "--class", CONNECT_CLASS, "--name", "Spark Connect server",
               "--master", self.master]
        if self.jars:
            cmd += ["--jars", ",".join(self.jars)]
        for key, value in conf.items():
            cmd += ["--conf", f"{key}={value}"]
        return cmd

    def _listening(self) -> bool:
        import socket

        try:
            socket.create_connection((HOST, self.port), 1).close()
            return True
        except OSError:
            return False

    def start(self, timeout: float = 300.0) -> "SparkConnectServer":
        self.server = _Process(self.command(), spark_env(self.workdir), self.workdir / "connect-server.log")
        try:
            _wait(self._listening, [self.server], timeout, "spark connect server")
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None

    def __enter__(self) -> "SparkConnectServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


if __name__ == "__main__":  # manual use: python -m tests.services.spark_cluster
    t0 = time.monotonic()
    with SparkStandalone(tempfile.mkdtemp(prefix="spark-cluster-")) as cluster:
        print(f"{cluster.url} ready in {time.monotonic() - t0:.1f}s (master pid {cluster.master.pid}, "
              f"UI http://{HOST}:{cluster.webui_port}, logs in {cluster.workdir}); Ctrl-C to stop")
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
