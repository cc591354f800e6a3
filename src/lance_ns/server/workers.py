"""Serving one backend from several processes (``--workers N``).

uvicorn's supervisor binds the socket once and spawns N worker processes; each
builds its own app with :func:`app_factory` from the configuration the parent
put in the environment variable :data:`CONFIG_ENV` (how to open the namespace:
impl and properties, or a configuration name; and the app's settings).  Each
worker opens the namespace itself: nothing is shared but the storage, so
correctness rests on the backend's conditional commits (two workers declaring
one name: one wins, the other answers 409 code 5), as between any two clients.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import shutil
import tempfile

from .settings import ServerSettings

#: the serialized worker configuration (JSON), set by the parent process
CONFIG_ENV = "LANCE_NS_SERVE_CONFIG"
#: seconds a worker has to answer the supervisor's health check (uvicorn's default: 5)
WORKER_HEALTHCHECK_SECONDS = 60


def encode(opener: dict, settings: ServerSettings, log_level: str, log_format: str) -> str:
    app = dataclasses.asdict(settings)  # every setting, whatever fields ServerSettings grows
    return json.dumps({"opener": opener, "app": app, "log_level": log_level, "log_format": log_format})


def app_factory():
    """The app of one worker process (uvicorn calls it with ``factory=True``)."""
    from ..config import connect, load_namespace
    from .app import create_app
    from .logs import configure_logging

    config = json.loads(os.environ[CONFIG_ENV])
    configure_logging(config["log_level"], config["log_format"])
    opener = config["opener"]
    ns = load_namespace(opener["name"]) if "name" in opener else connect(opener["impl"], opener["properties"])
    return create_app(ns, ServerSettings.of(**config["app"]))


def serve_workers(workers: int, opener: dict, *, host: str, port: int, log_level: str, log_format: str,
                  uvicorn_options: dict, settings: ServerSettings) -> None:
    """Serve with ``workers`` processes until interrupted (SIGTERM/Ctrl-C: each worker
    finishes its in-flight requests)."""
    import uvicorn

    from .logs import configure_logging, log_http_stack
    from .running import server_options

    configure_logging(log_level, log_format)
    log_http_stack(uvicorn_options)
    os.environ[CONFIG_ENV] = encode(opener, settings, log_level, log_format)
    # /metrics answers the sum over the workers: prometheus-client's multiprocess mode, in a
    # directory of this run's (removed when it ends) unless the caller named one
    made_metrics_dir = None
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        made_metrics_dir = os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="lance-ns-metrics-")
    options: dict = dict(port=port, workers=workers, factory=True)
    if log_format == "json":
        options["log_config"] = None
    if "timeout_worker_healthcheck" in inspect.signature(uvicorn.Config).parameters:  # newer uvicorns only
        # a worker still importing pylance on a busy machine answers the supervisor's ping late:
        # uvicorn's 5 s would kill and restart it, over and over
        options["timeout_worker_healthcheck"] = WORKER_HEALTHCHECK_SECONDS
    try:
        uvicorn.run("lance_ns.server.workers:app_factory",
                    **server_options(host, log_level, **{**options, **uvicorn_options}))
    finally:
        if made_metrics_dir:  # and the variable naming it, which would name nothing now
            os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
            shutil.rmtree(made_metrics_dir, ignore_errors=True)
