"""The TLS trust our HTTP clients (REST, Unity) verify servers with by default.

Building an SSL context loads a whole CA bundle: ~40 ms of CPU, which ``httpx.Client``
pays at construction even for an ``http://`` URL.  Every ``connect("rest", ...)`` and
``connect("unity", ...)`` makes a client, and so does each CLI command, so the default
context is built once per process and shared: an ``SSLContext`` may be used by many
clients and threads at once, and nothing changes this one after it is built.
"""

from __future__ import annotations

import functools
import os
import ssl


@functools.cache
def default_context() -> ssl.SSLContext:
    """httpx's own default trust: ``SSL_CERT_FILE`` or ``SSL_CERT_DIR`` when set (read once,
    at the first client), else certifi's bundle."""
    if os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
    if os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=os.environ["SSL_CERT_DIR"])
    import certifi

    return ssl.create_default_context(cafile=certifi.where())
