"""The TLS trust our HTTP clients (REST, Unity) verify servers with by default.

Building an SSL context loads a whole CA bundle: ~40 ms of CPU, which ``httpx.Client``
pays at construction even for an ``http://`` URL.  Every ``connect("rest", ...)`` and
``connect("unity", ...)`` makes a client, so the default context is built once per
process and shared: an ``SSLContext`` may be used by many clients and threads at once,
and nothing changes this one after it is built.
"""

from __future__ import annotations

import functools
import ssl

import httpx


@functools.cache
def default_context() -> ssl.SSLContext:
    """httpx's own default trust (``SSL_CERT_FILE`` or ``SSL_CERT_DIR`` when set, else
    certifi's bundle), built at the first client: later changes to those variables reach
    a new process, not this one."""
    return httpx.create_ssl_context()
