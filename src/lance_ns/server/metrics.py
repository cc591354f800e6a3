"""Prometheus metrics of the server (``GET /metrics``), through ``prometheus-client``.

* ``lance_ns_requests_total{operation, status}``: answered requests;
* ``lance_ns_request_duration_seconds{operation}``: latency histogram, whole request;
* ``lance_ns_errors_total{operation, code}``: error answers by the protocol's integer code;
* ``lance_ns_backend_call_duration_seconds{operation}``: latency of the backend call alone;
* ``lance_ns_requests_in_flight``: requests being served;
* serving a ``mounts`` namespace, also ``lance_ns_mount_requests_total{mount, operation, status}``
  and ``lance_ns_mount_errors_total{mount, operation, code}``: the same answers by the mount
  the request's id names (requests with no id, or the root's, are not in them).

``operation`` is the OperationId (``DescribeTable``), or ``health``/``metrics``/``other``.
Each app has its own registry (several servers in one process do not mix).

One process keeps its numbers as plain Python numbers, changed only on the event loop
(so without prometheus-client's lock per change), and hands them to prometheus-client
as a custom collector when scraped.  With several worker processes the variable
``PROMETHEUS_MULTIPROC_DIR`` (set by ``--workers``) makes the metrics prometheus-client's
own shared-file values, and ``/metrics`` answers the sum over every worker.
"""

from __future__ import annotations

import os
from bisect import bisect_left
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

#: request latencies from 1 ms to 60 s
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

_REQUESTS = ("lance_ns_requests", "Answered requests")
_LATENCY = ("lance_ns_request_duration_seconds", "Request latency")
_ERRORS = ("lance_ns_errors", "Error answers by the protocol's error code")
_BACKEND = ("lance_ns_backend_call_duration_seconds", "Latency of the backend call")
_IN_FLIGHT = ("lance_ns_requests_in_flight", "Requests being served")
_MOUNT_REQUESTS = ("lance_ns_mount_requests", "Answered requests by the mount their id names")
_MOUNT_ERRORS = ("lance_ns_mount_errors", "Error answers by the mount their id names and the protocol's error code")


def Metrics() -> "Tally | SharedMetrics":
    """The metrics of one app: shared between worker processes when they run under ``--workers``."""
    return SharedMetrics() if os.environ.get("PROMETHEUS_MULTIPROC_DIR") else Tally()


class _Histogram:
    __slots__ = ("counts", "sum")

    def __init__(self) -> None:
        self.counts = [0] * (len(BUCKETS) + 1)  # per bucket, the last one +Inf
        self.sum = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect_left(BUCKETS, seconds)] += 1
        self.sum += seconds

    def cumulative(self) -> list[tuple[str, int]]:
        total, out = 0, []
        for bound, count in zip((*map(str, BUCKETS), "+Inf"), self.counts):
            total += count
            out.append((bound, total))
        return out


class Tally:
    """One process's metrics.  A request only appends its numbers to a list (a few
    hundred nanoseconds); they are counted into the series in one tight loop when the
    list is long, or when scraped."""

    #: numbers kept before they are counted
    FOLD_EVERY = 1024

    def __init__(self) -> None:
        self.in_flight = 0
        #: (operation, status, seconds, code, backend seconds, mount) of answers not counted yet
        self._answered: list[tuple[str, int, float, Any, float | None, str | None]] = []
        self._requests: dict[tuple[str, int], int] = {}
        self._errors: dict[tuple[str, Any], int] = {}
        self._mount_requests: dict[tuple[str, str, int], int] = {}
        self._mount_errors: dict[tuple[str, str, Any], int] = {}
        self._latency: dict[str, _Histogram] = {}
        self._backend: dict[str, _Histogram] = {}
        self.registry = CollectorRegistry(auto_describe=True)
        self.registry.register(self)

    def started(self) -> None:
        self.in_flight += 1

    def finished(self, operation: str, status: int, seconds: float, code: int | str | None,
                 backend_seconds: float | None = None, mount: str | None = None) -> None:
        """A request answered: its status, latency, error code (None if it is no error), how
        long its backend call took (None if it made none) and the mount its id names (None:
        not served through mounts, or no mount named)."""
        self.in_flight -= 1
        answered = self._answered
        answered.append((operation, status, seconds, code, backend_seconds, mount))
        if len(answered) >= self.FOLD_EVERY:
            self._fold()

    def _fold(self) -> None:
        """Count the numbers kept so far (on the event loop, as every change here)."""
        answered, self._answered = self._answered, []
        requests, errors, latency, backend = self._requests, self._errors, self._latency, self._backend
        for operation, status, seconds, code, backend_seconds, mount in answered:
            key = (operation, status)
            requests[key] = requests.get(key, 0) + 1
            _histogram(latency, operation).observe(seconds)
            if code is not None:
                key = (operation, code)
                errors[key] = errors.get(key, 0) + 1
            if backend_seconds is not None:
                _histogram(backend, operation).observe(backend_seconds)
            if mount is not None:
                key = (mount, operation, status)
                self._mount_requests[key] = self._mount_requests.get(key, 0) + 1
                if code is not None:
                    key = (mount, operation, code)
                    self._mount_errors[key] = self._mount_errors.get(key, 0) + 1

    def collect(self):
        """prometheus-client's collector protocol: the families, built when scraped."""
        self._fold()
        requests = CounterMetricFamily(*_REQUESTS, labels=["operation", "status"])
        for (operation, status), n in sorted(self._requests.items()):
            requests.add_metric([operation, str(status)], n)
        errors = CounterMetricFamily(*_ERRORS, labels=["operation", "code"])
        for (operation, code), n in sorted(self._errors.items(), key=str):
            errors.add_metric([operation, str(code)], n)
        yield requests
        yield errors
        if self._mount_requests:
            by_mount = CounterMetricFamily(*_MOUNT_REQUESTS, labels=["mount", "operation", "status"])
            for (mount, operation, status), n in sorted(self._mount_requests.items()):
                by_mount.add_metric([mount, operation, str(status)], n)
            yield by_mount
            mount_errors = CounterMetricFamily(*_MOUNT_ERRORS, labels=["mount", "operation", "code"])
            for (mount, operation, code), n in sorted(self._mount_errors.items(), key=str):
                mount_errors.add_metric([mount, operation, str(code)], n)
            yield mount_errors
        for (name, doc), series in ((_LATENCY, self._latency), (_BACKEND, self._backend)):
            family = HistogramMetricFamily(name, doc, labels=["operation"])
            for operation, histogram in sorted(series.items()):
                family.add_metric([operation], histogram.cumulative(), histogram.sum)
            yield family
        yield GaugeMetricFamily(*_IN_FLIGHT, value=self.in_flight)

    def exposition(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


def _histogram(series: dict[str, _Histogram], operation: str) -> _Histogram:
    histogram = series.get(operation)
    if histogram is None:
        histogram = series[operation] = _Histogram()
    return histogram


class SharedMetrics:
    """Worker processes' metrics: prometheus-client's values in ``PROMETHEUS_MULTIPROC_DIR``."""

    def __init__(self) -> None:
        r = self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(*_REQUESTS, ["operation", "status"], registry=r)
        self.latency = Histogram(*_LATENCY, ["operation"], buckets=BUCKETS, registry=r)
        self.errors = Counter(*_ERRORS, ["operation", "code"], registry=r)
        self.backend = Histogram(*_BACKEND, ["operation"], buckets=BUCKETS, registry=r)
        self.in_flight_gauge = Gauge(*_IN_FLIGHT, registry=r, multiprocess_mode="livesum")
        self.mount_requests = Counter(*_MOUNT_REQUESTS, ["mount", "operation", "status"], registry=r)
        self.mount_errors = Counter(*_MOUNT_ERRORS, ["mount", "operation", "code"], registry=r)
        # labelled children by their labels: prometheus-client's labels() takes a lock and
        # builds a key on every call
        self._children: dict[tuple, Any] = {}

    def started(self) -> None:
        self.in_flight_gauge.inc()

    def finished(self, operation: str, status: int, seconds: float, code: int | str | None,
                 backend_seconds: float | None = None, mount: str | None = None) -> None:
        self.in_flight_gauge.dec()
        if mount is not None:
            self._child(self.mount_requests, mount, operation, str(status)).inc()
            if code is not None:
                self._child(self.mount_errors, mount, operation, str(code)).inc()
        self._child(self.requests, operation, str(status)).inc()
        self._child(self.latency, operation).observe(seconds)
        if code is not None:
            self._child(self.errors, operation, str(code)).inc()
        if backend_seconds is not None:
            self._child(self.backend, operation).observe(backend_seconds)

    def _child(self, metric: Any, *labels: str) -> Any:
        """``metric.labels(*labels)``, created once."""
        key = (metric, *labels)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*labels)
        return child

    def exposition(self) -> tuple[bytes, str]:
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry), CONTENT_TYPE_LATEST
