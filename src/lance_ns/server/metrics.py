"""Prometheus metrics of the server (``GET /metrics``), through ``prometheus-client``.

* ``lance_ns_requests_total{operation, status}``: answered requests;
* ``lance_ns_request_duration_seconds{operation}``: latency histogram, whole request;
* ``lance_ns_errors_total{operation, code}``: error answers by the protocol's integer code;
* ``lance_ns_backend_call_duration_seconds{operation}``: latency of the backend call alone;
* ``lance_ns_requests_in_flight``: requests being served.

``operation`` is the OperationId (``DescribeTable``), or ``health``/``metrics``/``other``.
Each app has its own registry (several servers in one process do not mix).  With
several worker processes the variable ``PROMETHEUS_MULTIPROC_DIR`` (set by
``--workers``) makes ``/metrics`` answer the sum over every worker.
"""

from __future__ import annotations

import os
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

#: request latencies from 1 ms to 60 s
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter("lance_ns_requests", "Answered requests", ["operation", "status"], registry=r)
        self.latency = Histogram("lance_ns_request_duration_seconds", "Request latency", ["operation"],
                                 buckets=BUCKETS, registry=r)
        self.errors = Counter("lance_ns_errors", "Error answers by the protocol's error code", ["operation", "code"],
                              registry=r)
        self.backend = Histogram("lance_ns_backend_call_duration_seconds", "Latency of the backend call",
                                 ["operation"], buckets=BUCKETS, registry=r)
        self.in_flight = Gauge("lance_ns_requests_in_flight", "Requests being served", registry=r,
                               multiprocess_mode="livesum")

        # labelled children by their labels: prometheus-client's labels() takes a lock and
        # builds a key on every call; a request should cost a dict lookup per series
        self._requests: dict[tuple[str, ...], Any] = {}
        self._latency: dict[tuple[str, ...], Any] = {}
        self._backend: dict[tuple[str, ...], Any] = {}

    def observe(self, operation: str, status: int, seconds: float, code: int | None) -> None:
        _child(self._requests, self.requests, operation, str(status)).inc()
        _child(self._latency, self.latency, operation).observe(seconds)
        if code is not None:
            self.errors.labels(operation, str(code)).inc()

    def observe_backend(self, operation: str, seconds: float) -> None:
        _child(self._backend, self.backend, operation).observe(seconds)

    def exposition(self) -> tuple[bytes, str]:
        if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            from prometheus_client import multiprocess

            registry = CollectorRegistry()
            multiprocess.MultiProcessCollector(registry)
            return generate_latest(registry), CONTENT_TYPE_LATEST
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


def _child(cache: dict[tuple[str, ...], Any], metric: Any, *labels: str) -> Any:
    """``metric.labels(*labels)``, created once and then found in ``cache``."""
    child = cache.get(labels)
    if child is None:
        child = cache[labels] = metric.labels(*labels)
    return child
