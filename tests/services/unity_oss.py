"""The real Unity Catalog OSS server for tests, its jars fetched from Maven Central by mvn.

``UnityOss(version)`` resolves the class path of ``io.unitycatalog:unitycatalog-server:VERSION``
with ``mvn dependency:build-classpath`` on ``tests/services/maven/unity/pom.xml`` (``~/.m2`` is
the cache; nothing is committed), then runs ``io.unitycatalog.server.UnityCatalogServer -p PORT``
from a temporary working directory holding ``etc/conf/server.properties`` (dev, authorization
disabled), ``etc/conf/hibernate.properties`` (an in-memory H2 database) and a log4j2
configuration writing to ``etc/logs/server.log``; the server writes its keys and ``token.txt``
into ``etc/conf``.  It listens on PORT (a URL transcoder) and PORT+1 (the API), on every
interface (it has no host option): two free ports are picked, and the tests talk to it on
127.0.0.1:PORT only.  Readiness is a real call (``GET .../catalogs``).  ``stop()`` ends it by
PID; a parent-death signal ends it if the test process dies first.

Where Maven refuses the server (as Maven Central does on the development machines: every
``unitycatalog-server`` version answers "Could not find artifact", while ``unitycatalog-client``
of the same versions is served) :class:`MavenRefused` says so with Maven's own words.  A server
class path obtained some other way (built from the tagged source, say) can be given instead,
per version: ``LANCE_NS_UNITY_OSS_CLASSPATH_0_6_0=<class path>`` (dots of the version as
underscores; ``@FILE`` reads the class path from FILE).

``shared_unity_oss(version)`` starts ONE server per version and test process on first use and
stops it at interpreter exit (``python -m tests.services.unity_oss [VERSION]`` runs one by hand).
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import httpx

from .process import poller, stop_by_pid
from .hms import _with_parent_death_signal
from .mvn import MavenError, maven_classpath

MAIN = "io.unitycatalog.server.UnityCatalogServer"
POM = Path(__file__).parent / "maven" / "unity" / "pom.xml"
PREFIX = "/api/2.1/unity-catalog"
#: the newest release, and the last one before ``type_json`` had to carry name/nullable/metadata
NEWEST = "0.6.0"
BEFORE_TYPE_JSON_CHECK = "0.4.1"
JVM_FLAGS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx512m")

SERVER_PROPERTIES = "server.env=dev\nserver.authorization=disable\n"
HIBERNATE_PROPERTIES = """\
hibernate.connection.driver_class=org.h2.Driver
hibernate.connection.url=jdbc:h2:mem:unity;DB_CLOSE_DELAY=-1
hibernate.hbm2ddl.auto=update
hibernate.show_sql=false
hibernate.archive.autodetection=class
"""
LOG4J2_PROPERTIES = """\
status = warn
appenders = file
appender.file.type = File
appender.file.name = File
appender.file.fileName = etc/logs/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{HH:mm:ss.SSS} [%t] %-5level %logger{36} - %msg%n
rootLogger.level = info
rootLogger.appenderRefs = file
rootLogger.appenderRef.file.ref = File
"""


class MavenRefused(RuntimeError):
    """Maven could not be given the server's jars (the registry refused an artifact)."""


def _classpath_override(version: str) -> str | None:
    value = os.environ.get("LANCE_NS_UNITY_OSS_CLASSPATH_" + version.replace(".", "_").replace("-", "_"))
    if value and value.startswith("@"):
        value = Path(value[1:]).read_text().strip()
    return value or None


def resolve_classpath(version: str) -> str:
    """The server's class path: the override for ``version`` if set, else Maven's answer (kept
    between test processes: tests/services/mvn.py)."""
    override = _classpath_override(version)
    if override:
        return override
    try:
        return maven_classpath(POM, "unity", [f"-Dunity.version={version}"], f"unitycatalog-server:{version}")
    except MavenError as e:
        if "Could not resolve dependencies" not in e.output:
            raise
        # Maven's words without its preamble: "Could not find artifact G:A:jar:V in central (URL)",
        # or "G:A:jar:V was not found in URL during a previous attempt" (the refusal is cached)
        reason = re.sub(r"^.*Could not resolve dependencies for project \S+: ", "", e.errors[0])
        reason = re.sub(r"\. This failure was cached.*|\s*-> \[Help 1\]$", "", reason)
        raise MavenRefused(f"Maven refused the Unity Catalog OSS server {version}: {reason}") from e


def _port_pair() -> int:
    """A port P with P and P+1 free on every interface (the server binds both there)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port >= 65535:
            continue
        try:
            for p in (port, port + 1):
                with socket.socket() as probe:
                    probe.bind(("0.0.0.0", p))
        except OSError:
            continue
        return port
    raise RuntimeError("no two consecutive free ports")


class UnityOss:
    def __init__(self, version: str = NEWEST, workdir: str | os.PathLike | None = None, startup_timeout: float = 180.0):
        self.version = version
        self._own_workdir = workdir is None  # a temporary one, removed by __exit__
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix=f"lance-ns-unity-{version}-"))
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen | None = None
        self.port = 0
        self.startup_seconds: float | None = None  # JVM start to first answer, of the last start
        self._classpath: str | None = None

    @property
    def endpoint(self) -> str:
        """Base URL (clients append /api/2.1/unity-catalog)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.workdir / "etc" / "logs" / "server.log"

    def _prepare(self) -> None:
        conf = self.workdir / "etc" / "conf"
        conf.mkdir(parents=True, exist_ok=True)
        (conf / "server.properties").write_text(SERVER_PROPERTIES)
        (conf / "hibernate.properties").write_text(HIBERNATE_PROPERTIES)
        (conf / "server.log4j2.properties").write_text(LOG4J2_PROPERTIES)
        if self._classpath is None:
            self._classpath = resolve_classpath(self.version)

    def ready(self, timeout: float = 2.0) -> bool:
        try:
            return poller.get(f"{self.endpoint}{PREFIX}/catalogs", timeout=timeout).status_code == 200
        except httpx.HTTPError:
            return False

    def start(self) -> "UnityOss":
        if self.running:
            return self
        self._prepare()
        for attempt in range(3):  # a port taken between the probe and the bind: another pair
            self.port = _port_pair()
            cmd = ["java", *JVM_FLAGS, f"-Djava.io.tmpdir={self.workdir}", "-cp", self._classpath, MAIN, "-p", str(self.port)]
            out = open(self.workdir / "stdout.log", "ab")
            started = time.monotonic()
            self.proc = subprocess.Popen(
                _with_parent_death_signal(cmd), cwd=self.workdir, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
            out.close()
            deadline = started + self.startup_timeout
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                if self.ready():
                    self.startup_seconds = time.monotonic() - started
                    return self
                time.sleep(0.2)
            else:
                self.stop()
                raise RuntimeError(f"Unity Catalog {self.version} not ready after {self.startup_timeout}s; see {self.workdir}")
            text = (self.workdir / "stdout.log").read_text(errors="replace")
            if "Address already in use" not in text or attempt == 2:
                raise RuntimeError(
                    f"Unity Catalog {self.version} exited with {self.proc.returncode}; see {self.workdir}:\n{text[-3000:]}"
                )
        raise AssertionError("unreachable")

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        stop_by_pid(proc)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def __enter__(self) -> "UnityOss":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)


_shared: dict[str, UnityOss] = {}
_shared_lock = threading.Lock()


def shared_unity_oss(version: str = NEWEST) -> UnityOss:
    """The one server of ``version`` in this test process (started on first use, stopped at exit).

    Raises :class:`MavenRefused` (every time it is asked, without asking Maven again) where
    Maven refuses the jars."""
    with _shared_lock:
        server = _shared.get(version)
        if server is None:
            server = _shared[version] = UnityOss(version)
            atexit.register(_stop_shared, server)
        if isinstance(server, Exception):
            raise server
        if not server.running:
            try:
                server.start()
            except MavenRefused as e:
                _shared[version] = e
                raise
        return server


def _stop_shared(server: UnityOss) -> None:
    server.stop()
    shutil.rmtree(server.workdir, ignore_errors=True)


if __name__ == "__main__":  # manual use: python -m tests.services.unity_oss [VERSION]
    import sys

    with UnityOss(sys.argv[1] if len(sys.argv) > 1 else NEWEST) as uc:
        print(f"Unity Catalog {uc.version} at {uc.endpoint} ready in {uc.startup_seconds:.1f}s (pid {uc.proc.pid}); Ctrl-C to stop")
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
