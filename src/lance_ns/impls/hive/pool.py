"""A thread-safe pool of Thrift connections to a Hive metastore."""

from __future__ import annotations

import contextlib
import queue
import threading
from urllib.parse import urlparse

from pymetastore.hive_metastore import ThriftHiveMetastore
from pymetastore.hive_metastore import ttypes as hms
from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

from ...errors import InvalidInputError, ServiceUnavailableError


def parse_uri(uri: str) -> list[tuple[str, int]]:
    """``thrift://host:port[,thrift://host2:port2...]`` -> [(host, port), ...]."""
    out = []
    for part in uri.split(","):
        try:
            parsed = urlparse(part.strip())
            host, port = parsed.hostname, parsed.port
        except ValueError:
            host = port = None
        if parsed.scheme != "thrift" or not host or not port:
            raise InvalidInputError(f"'uri' must be thrift://host:port[,thrift://host:port...], got {uri!r}")
        out.append((host, port))
    return out


class _Connection:
    def __init__(self, addresses: list[tuple[str, int]], connect_timeout_ms: int, socket_timeout_ms: int):
        # Several metastores (HA, "thrift://a:9083,thrift://b:9083"): the first that answers.
        error: Exception | None = None
        for host, port in addresses:
            self.socket = TSocket.TSocket(host, port)
            self.socket.setTimeout(connect_timeout_ms)
            self.transport = TTransport.TBufferedTransport(self.socket)
            try:
                self.transport.open()
                break
            except TTransport.TTransportException as e:
                error = e
        else:
            raise error
        self.socket.setTimeout(socket_timeout_ms)  # every later read/write
        self.client = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(self.transport))

    def alive(self) -> bool:
        # TSocket.isOpen peeks the socket: False once the metastore closed it
        # (e.g. it restarted), so stale connections are replaced, not used.
        return self.socket.isOpen()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.transport.close()


class ClientPool:
    """A thread-safe pool of at most ``size`` Thrift connections.

    Callers block while all connections are in use (up to ``wait_timeout``
    seconds, then ServiceUnavailable).  A connection that failed at the
    transport level is discarded; the next caller opens a fresh one.
    """

    def __init__(
        self,
        addresses: list[tuple[str, int]],
        size: int,
        connect_timeout_ms: int,
        socket_timeout_ms: int,
        wait_timeout_s: float,
    ):
        self.addresses, self.size = addresses, size
        self._connect_ms, self._socket_ms = connect_timeout_ms, socket_timeout_ms
        self._wait = wait_timeout_s
        self._slots = threading.BoundedSemaphore(size)
        self._idle: queue.LifoQueue[_Connection] = queue.LifoQueue()
        self._lock = threading.Lock()
        self.in_use = 0
        self.peak_in_use = 0
        self.opened = 0  # connections opened over the pool's life

    def client(self) -> "_Lease":
        """``with pool.client() as c:`` -- one connection for one thread."""
        return _Lease(self)

    # A class, not @contextmanager: the generated Thrift exceptions are
    # immutable and contextlib would try to set their __traceback__.
    def acquire(self) -> _Connection:
        """A connection of this caller's own, each paired with one :meth:`release` (what
        :meth:`client`'s lease does)."""
        if not self._slots.acquire(timeout=self._wait):
            raise ServiceUnavailableError(
                f"no free metastore connection within {self._wait:g}s (client.pool-size={self.size})"
            )
        with self._lock:
            self.in_use += 1
            self.peak_in_use = max(self.peak_in_use, self.in_use)
        try:
            return self._checkout()
        except BaseException:
            self.release(None)
            raise

    def release(self, conn: _Connection | None) -> None:
        """Give back an acquired connection (None: it was broken and closed)."""
        if conn is not None:
            self._idle.put(conn)
        with self._lock:
            self.in_use -= 1
        self._slots.release()

    def _checkout(self) -> _Connection:
        while True:
            try:
                conn = self._idle.get_nowait()
            except queue.Empty:
                conn = _Connection(self.addresses, self._connect_ms, self._socket_ms)
                with self._lock:
                    self.opened += 1
                return conn
            if conn.alive():
                return conn
            conn.close()

    def close(self) -> None:
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return


class _Lease:
    def __init__(self, pool: ClientPool):
        self.pool = pool
        self.conn: _Connection | None = None

    def __enter__(self):
        self.conn = self.pool.acquire()
        return self.conn.client

    def __exit__(self, exc_type, exc, tb):
        conn, self.conn = self.conn, None
        if exc_type is not None and exc_type.__module__ != hms.__name__:
            # Only the metastore's declared exceptions (NoSuchObject, ...) leave the
            # connection in step; after anything else (transport, protocol, an
            # interrupt mid-call) it is broken or out of step: never reuse it.
            conn.close()
            conn = None
        self.pool.release(conn)
        return False


__all__ = ["ClientPool", "parse_uri"]
