"""A real moto server (AWS S3, Glue, STS) for tests, on 127.0.0.1 and a free port.

``moto_server()`` starts ONE moto server per test process on first
use (it shares one in-memory AWS account across every client, like a real
account) and stops it at interpreter exit; it yields the endpoint URL.
Readiness is a real call (``sts get_caller_identity``).  Tests keep their
state apart with unique names (buckets, databases), never by restarting.

moto answers any credentials; the fixed test keys below are what the clients
sign with.  Known gaps of moto (checked with moto 5.2): no Glue catalog APIs
(GetCatalog/GetCatalogs/CreateCatalog answer 500 NotImplemented), no
pagination (everything in one page), CatalogId is not used for scoping.

One departure is mended here, because every S3 race test stands on it: moto checks a
conditional PUT (``If-None-Match: *``, ``If-Match``) and stores the object in two
steps, so two racing creates of one key can both succeed (seen: a create-namespace
race on ``dir-s3`` with two winners, the manifest version file written twice).  Real
S3 decides such a PUT atomically; :func:`_atomic_conditional_puts` makes moto's do the
same, with one lock around its conditional PUTs.  Glue's CreateTable and CreateDatabase
have the same gap in moto (look up the name, build the object, then store it: seen, a
declare-table race on ``glue`` with two winners); real Glue answers the second
AlreadyExistsException, and :func:`_atomic_glue_creates` makes moto's do the same.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass

ACCESS_KEY = "testing"
SECRET_KEY = "testing"
REGION = "us-east-1"
ACCOUNT_ID = "123456789012"  # moto's default account

_lock = threading.Lock()
_server = None
_endpoint: str | None = None


def _one_step(cls, name: str, guard: threading.Lock, when=lambda self: True) -> None:
    """``cls.name`` run under ``guard`` (where ``when(self)``): one step, as the real service
    decides it.  Wrapped once per process: a method already wrapped is left as it is."""
    plain = getattr(cls, name)
    if getattr(plain, "_lance_ns_atomic", False):
        return

    def method(self, *args, **kwargs):
        if when(self):
            with guard:
                return plain(self, *args, **kwargs)
        return plain(self, *args, **kwargs)

    method._lance_ns_atomic = True
    setattr(cls, name, method)


def _atomic_conditional_puts() -> None:
    """S3's conditional PUT as one step in moto (see the module docstring)."""
    from moto.s3.responses import S3Response

    _one_step(S3Response, "put_object", threading.Lock(),
              when=lambda response: response.headers.get("If-None-Match") or response.headers.get("If-Match"))


def _atomic_glue_creates() -> None:
    """Glue's create-if-absent as one step in moto (see the module docstring)."""
    from moto.glue.models import GlueBackend

    guard = threading.Lock()  # (one for both: a table's create checks its database too)
    for name in ("create_table", "create_database"):
        _one_step(GlueBackend, name, guard)


def _start() -> str:
    global _server, _endpoint
    _atomic_conditional_puts()
    _atomic_glue_creates()
    # moto logs a traceback for every API it lacks (Glue's catalog APIs); the
    # client sees the 500 anyway, so keep test output readable
    logging.getLogger("werkzeug").setLevel(logging.CRITICAL)
    server = _UvicornMoto()
    endpoint = server.start()
    _wait_ready(endpoint)
    _server, _endpoint = server, endpoint
    atexit.register(_stop)
    return endpoint


class _UvicornMoto:
    """moto's own WSGI application (what ``ThreadedMotoServer`` serves), served by
    uvicorn on a thread of this process.  Measured here: a GET takes ~3 ms, against
    ~6-10 ms through moto's werkzeug server, and a Lance append ~47 ms against ~85;
    the S3-backed suites (dir-s3, glue) spend most of their time on such requests.
    moto 5.2 also lists its package directory (a listdir and ~180 stats) twice per
    request to route it: the listing is taken once (:func:`_cached_module_list`)."""

    def __init__(self):
        self._thread: threading.Thread | None = None
        self._uvicorn = None

    def start(self) -> str:
        import socket
        import time
        import warnings

        import uvicorn
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

        _cached_module_list()
        with warnings.catch_warnings():  # uvicorn's WSGI adapter is deprecated, not gone (uvicorn < 1)
            warnings.simplefilter("ignore", DeprecationWarning)
            from uvicorn.middleware import wsgi

            _raw_uri_in_environ(wsgi)
            app = wsgi.WSGIMiddleware(DomainDispatcherApplication(create_backend_app), workers=16)
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="critical", access_log=False, lifespan="off")
        self._uvicorn = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._uvicorn.run, kwargs={"sockets": [sock]},
                                        name="moto-server", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._uvicorn.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("moto (uvicorn) did not start")
            time.sleep(0.02)
        return f"http://127.0.0.1:{port}"

    def stop(self) -> None:
        if self._uvicorn is not None:
            self._uvicorn.should_exit = True
            self._thread.join(10)


def _raw_uri_in_environ(wsgi) -> None:
    """What werkzeug's server puts in the WSGI environ and uvicorn's adapter does not:
    the path as it arrived (``RAW_URI``: moto matches S3 keys against it, or an encoded
    ``%24`` or ``%2F`` in a key would reach it decoded), and ``wsgi.input_terminated``
    (uvicorn has buffered the body whole; without it werkzeug reads nothing of a
    chunked body, and a multipart part arrives empty)."""
    if getattr(wsgi.build_environ, "_lance_ns_raw", False):
        return
    plain = wsgi.build_environ

    def build_environ(scope, message, body):
        environ = plain(scope, message, body)
        raw = (scope.get("raw_path") or scope["path"].encode()).decode("latin-1")
        query = scope.get("query_string") or b""
        environ["RAW_URI"] = environ["REQUEST_URI"] = raw + ("?" + query.decode("latin-1") if query else "")
        environ["wsgi.input_terminated"] = True  # the body is whole: read it to its end
        return environ

    build_environ._lance_ns_raw = True
    wsgi.build_environ = build_environ


def _cached_module_list() -> None:
    import moto.backends as backends

    if getattr(backends.list_of_moto_modules, "_lance_ns_cached", False):
        return
    modules = tuple(backends.list_of_moto_modules())

    def list_of_moto_modules():
        return modules

    list_of_moto_modules._lance_ns_cached = True
    backends.list_of_moto_modules = list_of_moto_modules


def _wait_ready(endpoint: str, timeout: float = 20.0) -> None:
    import time

    import boto3

    sts = boto3.client("sts", **client_kwargs(endpoint))
    deadline = time.monotonic() + timeout
    while True:
        try:
            sts.get_caller_identity()
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _stop() -> None:
    global _server, _endpoint
    with _lock:
        if _server is not None:
            _server.stop()
        _server, _endpoint = None, None


def client_kwargs(endpoint: str) -> dict:
    """Keyword arguments for ``boto3.client(service, **...)`` against the server."""
    return {
        "endpoint_url": endpoint,
        "region_name": REGION,
        "aws_access_key_id": ACCESS_KEY,
        "aws_secret_access_key": SECRET_KEY,
    }


def s3_storage_options(endpoint: str) -> dict[str, str]:
    """pylance / object_store storage options for moto's S3."""
    return {
        "endpoint": endpoint,
        "allow_http": "true",
        "aws_access_key_id": ACCESS_KEY,
        "aws_secret_access_key": SECRET_KEY,
        "region": REGION,
    }


def no_ambient_aws_credentials(monkeypatch, tmp_path) -> None:
    """No AWS credential for a client to find but those it is handed: none in the
    environment, no credentials or config file, no instance metadata."""
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def shared_endpoint() -> str:
    """The endpoint URL of this process's moto server (started on first use)."""
    with _lock:
        if _endpoint is None:
            # no proxy for the local server, whatever the environment says
            os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")
            return _start()
        return _endpoint


@contextmanager
def moto_server():
    """Context manager yielding the endpoint URL of the shared moto server."""
    yield shared_endpoint()


@contextmanager
def moto_bucket(bucket: str):
    """The shared moto server with ``bucket`` created: (boto3 S3 client, pylance storage options)."""
    import boto3

    with moto_server() as endpoint:
        client = boto3.client("s3", **client_kwargs(endpoint))
        client.create_bucket(Bucket=bucket)
        yield client, s3_storage_options(endpoint)


@dataclass
class IamWorld:
    """A moto server enforcing IAM: the namespace's own user and the role it vends."""

    endpoint: str
    role_arn: str
    server_key_id: str
    server_secret: str
    region: str = REGION

    def server_storage_options(self) -> dict[str, str]:
        """The namespace's own storage options: its IAM user's keys (never handed out when vending)."""
        return {"endpoint": self.endpoint, "allow_http": "true", "region": self.region,
                "aws_access_key_id": self.server_key_id, "aws_secret_access_key": self.server_secret}


@contextmanager
def iam_moto_server(bucket: str):
    """A moto server of its own (a subprocess: IAM enforcement is process-wide in moto)
    that, after the setup, refuses requests not signed with credentials it issued or
    not allowed by the caller's IAM policies (``/moto-api/reset-auth``).

    Set up: ``bucket``; an IAM user (the namespace's identity: S3 on the bucket and
    ``sts:AssumeRole``) with an access key; the role ``lake-tables`` (S3 on the
    bucket) that user may assume.  moto evaluates only the role's own policies for
    its sessions, never a session policy, and does not expire them.
    """
    import json
    import socket
    import subprocess
    import sys
    import time

    import boto3
    import httpx

    from .process import poller, stop_by_pid

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if poller.get(f"{endpoint}/moto-api/").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the IAM moto server did not start")
            time.sleep(0.2)
        kwargs = client_kwargs(endpoint)
        iam, s3 = boto3.client("iam", **kwargs), boto3.client("s3", **kwargs)
        s3.create_bucket(Bucket=bucket)
        everything_s3 = {"Effect": "Allow", "Action": "s3:*",
                         "Resource": [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"]}
        user = iam.create_user(UserName="lance-ns")["User"]["Arn"]
        role = iam.create_role(
            RoleName="lake-tables",
            AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [
                {"Effect": "Allow", "Principal": {"AWS": user}, "Action": "sts:AssumeRole"}]}),
        )["Role"]["Arn"]
        iam.put_role_policy(RoleName="lake-tables", PolicyName="s3",
                            PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [everything_s3]}))
        iam.put_user_policy(UserName="lance-ns", PolicyName="serve", PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [everything_s3,
                                                    {"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": role}]}))
        key = iam.create_access_key(UserName="lance-ns")["AccessKey"]
        httpx.post(f"{endpoint}/moto-api/reset-auth", content=b"0").raise_for_status()
        yield IamWorld(endpoint, role, key["AccessKeyId"], key["SecretAccessKey"])
    finally:
        stop_by_pid(proc)
