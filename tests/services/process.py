"""Waiting for a server the tests started as a subprocess."""

from __future__ import annotations

import contextlib
import subprocess
import time

import httpx

#: the client that polls the servers the tests start, until they are up.  ``httpx.get`` makes
#: a client per call, and each builds an SSL context (~40 ms of CPU, even for http://): a loop
#: polling every 0.2 s took a fifth of a core from the server starting beside it
poller = httpx.Client(timeout=2)


def wait_healthy(proc: subprocess.Popen, url: str, timeout: float = 60.0, verify=True) -> None:
    """Poll ``url``/health until it answers 200; raise if ``proc`` exits or time runs out."""
    deadline = time.monotonic() + timeout
    # (a TLS test's own trust: a client of its own for the whole wait)
    with contextlib.nullcontext(poller) if verify is True else httpx.Client(timeout=2, verify=verify) as http:
        while True:
            if proc.poll() is not None:
                output = proc.stderr or proc.stdout
                raise RuntimeError(f"server exited: {output.read() if output else proc.returncode}")
            try:
                if http.get(f"{url}/health").status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("server did not start")
            time.sleep(0.2)


def stop_by_pid(proc: subprocess.Popen | None) -> None:
    """Stop a server the tests started: SIGTERM by its PID, then SIGKILL after 15 s."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)
