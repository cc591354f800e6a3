"""Storage that "points nowhere": a TCP listener, in a process of its own, that closes
every connection at once and counts them.

Its own process, because a listener thread inside the test's process closes a
connection only once it holds that process's GIL: a client call that keeps the GIL
while it waits on the socket then waits for its request timeout (30 s in
object_store), which is the test's listener, not the code under test.  CI saw that
once (a CreateTable answering 17 after 32.0 s).

``connections`` asks the listener, which first accepts whatever the kernel has
queued, so a count is never behind the connections made before it was asked.
"""

from __future__ import annotations

import subprocess
import sys


class Nowhere:
    """The listener process; ``port``, ``connections``, ``storage()``, ``close()``."""

    def __init__(self):
        self._proc = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      text=True, bufsize=1)
        self.port = int(self._proc.stdout.readline())

    @property
    def connections(self) -> int:
        self._proc.stdin.write("count\n")
        self._proc.stdin.flush()
        return int(self._proc.stdout.readline())

    def storage(self) -> dict[str, str]:
        """Storage options of a table root at this listener (S3 on ``http://127.0.0.1:port``)."""
        return {"storage.endpoint": f"http://127.0.0.1:{self.port}", "storage.allow_http": "true",
                "storage.aws_access_key_id": "nowhere", "storage.aws_secret_access_key": "nowhere",
                "storage.region": "us-east-1"}

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.stdin.close()
            self._proc.wait(10)


def _serve() -> None:
    import selectors
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    listener.setblocking(False)
    count = 0

    def drain() -> None:
        nonlocal count
        while True:
            try:
                conn, _ = listener.accept()
            except BlockingIOError:
                return
            count += 1
            conn.close()

    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(sys.stdin, selectors.EVENT_READ)
    print(listener.getsockname()[1], flush=True)
    while True:
        for key, _ in selector.select():
            if key.fileobj is listener:
                drain()
                continue
            if not sys.stdin.readline():  # the test closed its end: stop
                return
            drain()
            print(count, flush=True)


if __name__ == "__main__":
    _serve()
