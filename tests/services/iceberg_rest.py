"""The Apache Iceberg REST *reference* server (``RESTCatalogServer``) for tests.

The server is the one the Iceberg project tests its clients with (its Docker image is
``apache/iceberg-rest-fixture``): from 1.8.0 to 1.10.1 the main jar of
``org.apache.iceberg:iceberg-open-api`` is that runnable shadow jar (``Main-Class:
org.apache.iceberg.rest.RESTCatalogServer``, every dependency inside).  Maven fetches it
(``maven/iceberg_rest/pom.xml``, ~/.m2 is the cache; nothing is committed), so a machine
needs only ``mvn`` and a JDK (11+); a refused or missing artifact fails with Maven's own
message.  ``LANCE_NS_TEST_ICEBERG_REST_VERSION`` picks another version.

Configuration is by ``CATALOG_*`` variables (RCKUtils: prefix stripped, ``__`` -> ``-``,
``_`` -> ``.``): a JDBC catalog on a SQLite *file* (the server's default
``jdbc:sqlite::memory:`` gives each pooled connection its own empty database, so two
concurrent requests could see two catalogs), the warehouse a local directory through
HadoopFileIO (no S3): table locations are plain local paths.  It binds every interface
(no host setting); the tests talk to it on 127.0.0.1 only.  No authentication: it answers
any request, and it names no ``prefix`` in its config (its routes have none).

``iceberg_rest_server()`` starts ONE server per test process on first use (about 1 s of
JVM start with the quick flags below) and stops it by PID at interpreter exit; the JVM
also gets SIGTERM if the test process dies (setpriv's parent-death signal).
``python -m tests.services.iceberg_rest`` runs one by hand and prints its start-up time.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
import threading
import time
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .process import poller, stop_by_pid
from .hms import _with_parent_death_signal, free_port
from .mvn import maven_classpath

POM = Path(__file__).parent / "maven" / "iceberg_rest" / "pom.xml"
VERSION = os.environ.get("LANCE_NS_TEST_ICEBERG_REST_VERSION", "1.10.1")
COORDINATES = "org.apache.iceberg:iceberg-open-api:{version}"
MAIN = "org.apache.iceberg.rest.RESTCatalogServer"
LOCAL_REPOSITORY = Path.home() / ".m2" / "repository"
JVM_FLAGS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx512m"]


#: catalog properties beyond the warehouse, database and port
CATALOG = {
    # the JDBC catalog's check that a new table's namespace exists (off by default: a
    # CreateTable into a missing namespace would answer 200 and bring the namespace into
    # being, where the REST spec answers 404)
    "jdbc.strict-mode": "true",
}


def _env_name(key: str) -> str:
    """The CATALOG_* variable RESTCatalogServer reads as catalog property ``key``."""
    return "CATALOG_" + key.replace("-", "__").replace(".", "_").upper()


@dataclass(frozen=True)
class IcebergRest:
    url: str  # the REST endpoint (no prefix: paths are /v1/namespaces...)
    warehouse: Path  # the catalog's warehouse directory (default table locations)
    workdir: Path  # log, SQLite catalog, JVM temp files
    version: str
    pid: int
    startup_seconds: float  # JVM start to the first answered GET /v1/config


def server_jar(version: str = VERSION) -> Path:
    """The reference server's shadow jar of ``version``, resolved by Maven (~/.m2 caches it;
    a jar already in the default local repository is taken without starting Maven, ~8 s;
    :class:`tests.services.mvn.MavenError` where Maven cannot provide it)."""
    coordinates = COORDINATES.format(version=version)
    cached = LOCAL_REPOSITORY / f"org/apache/iceberg/iceberg-open-api/{version}/iceberg-open-api-{version}.jar"
    if cached.exists() and _runnable(cached):
        return cached
    classpath = maven_classpath(POM, "iceberg-rest", [f"-Diceberg.version={version}"],
                                f"{coordinates} (the Iceberg REST reference server)")
    entries = [p for p in classpath.split(os.pathsep) if p]
    jar = next((Path(p) for p in entries if Path(p).name == f"iceberg-open-api-{version}.jar"), None)
    if jar is None or not jar.exists():
        raise RuntimeError(f"Maven resolved {coordinates} to {entries!r}: no jar to run")
    if not _runnable(jar):
        raise RuntimeError(f"{jar} has no {MAIN}: only iceberg-open-api 1.8.0 .. 1.10.1 are the runnable shadow jar")
    return jar


def _runnable(jar: Path) -> bool:
    try:
        with zipfile.ZipFile(jar) as z:
            return MAIN.replace(".", "/") + ".class" in z.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


class IcebergRestServer:
    def __init__(self, workdir: str | os.PathLike, version: str = VERSION, startup_timeout: float = 120.0,
                 catalog: dict[str, str] | None = None):
        self.workdir = Path(workdir)
        self.catalog = CATALOG if catalog is None else catalog
        self.version = version
        self.startup_timeout = startup_timeout
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.warehouse = self.workdir / "warehouse"
        self.proc: subprocess.Popen | None = None
        self.startup_seconds = 0.0

    def start(self) -> IcebergRest:
        import httpx

        jar = server_jar(self.version)
        self.warehouse.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("CATALOG_")}
        env.update({
            "CATALOG_WAREHOUSE": f"file:{self.warehouse}",
            "CATALOG_URI": f"jdbc:sqlite:{self.workdir / 'catalog.db'}",
            "CATALOG_REST_PORT": str(self.port),
        })
        env.update({_env_name(key): value for key, value in self.catalog.items()})
        cmd = ["java", *JVM_FLAGS, f"-Djava.io.tmpdir={self.workdir}", "-cp", str(jar), MAIN]
        log = open(self.workdir / "server.log", "ab")
        t0 = time.monotonic()
        self.proc = subprocess.Popen(
            _with_parent_death_signal(cmd), cwd=self.workdir, env=env,
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )
        log.close()
        deadline = t0 + self.startup_timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"the Iceberg REST server exited with {self.proc.returncode}: {self._log_tail()}")
            try:
                if poller.get(f"{self.url}/v1/config").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the Iceberg REST server is not ready after {self.startup_timeout}s: "
                                   f"{self._log_tail()}")
            time.sleep(0.05)
        self.startup_seconds = time.monotonic() - t0
        return IcebergRest(self.url, self.warehouse, self.workdir, self.version, self.proc.pid,
                           self.startup_seconds)

    def _log_tail(self) -> str:
        try:
            return (self.workdir / "server.log").read_text(errors="replace")[-2000:]
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        stop_by_pid(proc)


_lock = threading.Lock()
_server: IcebergRestServer | None = None
_info: IcebergRest | None = None


def _stop_shared() -> None:
    global _server, _info
    with _lock:
        server, _server, _info = _server, None, None
    if server is not None:
        server.stop()
        shutil.rmtree(server.workdir, ignore_errors=True)


@contextmanager
def iceberg_rest_server():
    """The shared reference server of this test process (started on first use)."""
    global _server, _info
    with _lock:
        if _info is None:
            server = IcebergRestServer(tempfile.mkdtemp(prefix="lance-ns-iceberg-rest-"))
            try:
                _info = server.start()
            except BaseException:
                server.stop()
                shutil.rmtree(server.workdir, ignore_errors=True)
                raise
            _server = server
            atexit.register(_stop_shared)
        info = _info
    yield info


if __name__ == "__main__":  # manual use: python -m tests.services.iceberg_rest
    t0 = time.monotonic()
    jar = server_jar()
    print(f"{jar} via mvn in {time.monotonic() - t0:.1f}s")
    with iceberg_rest_server() as s:
        print(f"ready at {s.url} in {s.startup_seconds:.2f}s (pid {s.pid}, warehouse {s.warehouse}); Ctrl-C to stop")
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
