"""Waiting for a server the tests started as a subprocess."""

from __future__ import annotations

import subprocess
import time

import httpx


def wait_healthy(proc: subprocess.Popen, url: str, timeout: float = 60.0, verify=True) -> None:
    """Poll ``url``/health until it answers 200; raise if ``proc`` exits or time runs out."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            output = proc.stderr or proc.stdout
            raise RuntimeError(f"server exited: {output.read() if output else proc.returncode}")
        try:
            if httpx.get(f"{url}/health", timeout=2, verify=verify).status_code == 200:
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
