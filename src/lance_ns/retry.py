"""One retry policy for the backends that speak HTTP through httpx (rest, unity).

Exponential backoff with full jitter, so that many clients do not retry in
step.  What may be repeated is decided here once:

* the request never reached the server (connect errors): always safe;
* the server refused it before doing any work (``retry_status``, e.g. 429 and
  503; ``Retry-After`` is honoured): safe;
* it may have been processed (read timeouts, dropped connections): only for
  requests that change nothing (``safe=True``); a write is never repeated and
  the error says it may have been applied.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Callable

import httpx

from .errors import ServiceUnavailableError

#: the server was not reached
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
#: the request may have been processed
MAYBE_SENT = (httpx.ReadTimeout, httpx.WriteTimeout, httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError)
MAX_RETRY_AFTER_S = 30.0


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 3
    backoff_ms: int = 100
    max_backoff_ms: int = 5000

    @classmethod
    def from_properties(cls, ns) -> "RetryPolicy":
        """``max_retries``, ``retry_backoff_ms``, ``retry_max_backoff_ms`` of a NamespaceBase."""
        return cls(
            ns.int_prop("max_retries", 3),
            ns.int_prop("retry_backoff_ms", 100),
            ns.int_prop("retry_max_backoff_ms", 5000),
        )

    def delay(self, attempt: int) -> float:
        return random.uniform(0, min(self.max_backoff_ms, self.backoff_ms * 2**attempt)) / 1000


def retry_after(resp: httpx.Response) -> float | None:
    raw = resp.headers.get("retry-after")
    try:
        return min(float(raw), MAX_RETRY_AFTER_S) if raw else None
    except ValueError:
        return None


def send(
    client: httpx.Client,
    policy: RetryPolicy,
    method: str,
    url: str,
    *,
    safe: bool,
    retry_status: Callable[[int], bool],
    what: str,
    **kwargs,
) -> httpx.Response:
    """``client.request(method, url, **kwargs)`` under ``policy``.

    Returns the last response (possibly an error status); raises
    ServiceUnavailableError when the server cannot be reached in time.
    """
    attempt = 0
    while True:
        delay = None
        try:
            resp = client.request(method, url, **kwargs)
        except NOT_SENT as e:
            failure: Exception | None = e
        except MAYBE_SENT as e:
            if not safe:
                raise ServiceUnavailableError(f"{what} failed (the request may have been applied): {e!r}") from e
            failure = e
        else:
            if not retry_status(resp.status_code) or attempt >= policy.max_retries:
                return resp
            failure, delay = None, retry_after(resp)
        if attempt >= policy.max_retries:
            raise ServiceUnavailableError(f"{what}: no answer after {attempt + 1} attempts: {failure!r}") from failure
        time.sleep(delay if delay is not None else policy.delay(attempt))
        attempt += 1
