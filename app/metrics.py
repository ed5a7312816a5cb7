"""Prometheus request counts and latencies, served at /metrics."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator

from fastapi import FastAPI, Request, Response
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from app.db.replicas import OK, ReplicaSet

log = logging.getLogger("ewall.http")

# The method is a label: a client sending made-up methods must not mint a series per word.
KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
OTHER_METHOD = "other"


def method_label(method: str) -> str:
    return method if method in KNOWN_METHODS else OTHER_METHOD


class _ReplicaCollector(Collector):
    def __init__(self, replicas: ReplicaSet) -> None:
        self.replicas = replicas

    def collect(self) -> Iterator[Metric]:
        lag = GaugeMetricFamily(
            "ewall_replica_lag_seconds",
            "Replay lag of each read replica behind the primary (NaN while unmeasured).",
            labels=["replica"],
        )
        up = GaugeMetricFamily(
            "ewall_replica_up",
            "1 when the replica gets searches (state ok), else 0.",
            labels=["replica", "state"],
        )
        for state in self.replicas.states():
            lag.add_metric(
                [state.name], float("nan") if state.lag_ms is None else state.lag_ms / 1000
            )
            up.add_metric([state.name, state.state], 1.0 if state.state == OK else 0.0)
        yield lag
        yield up


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "ewall_http_requests_total",
            "HTTP requests by route template and status.",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "ewall_http_request_duration_seconds",
            "HTTP request latency by route template.",
            ["method", "route"],
            registry=self.registry,
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
        )
        self.searches = Counter(
            "ewall_searches_total",
            "Searches by mode and dense strategy.",
            ["mode", "strategy"],
            registry=self.registry,
        )

        self.replica_searches = Counter(
            "ewall_replica_searches_total",
            "Searches by where they ran (a replica's name or primary) and outcome: served, "
            "fenced (the primary moved past the replica; rerun on the primary), behind (the "
            "replica had not replayed a policy version already served), failed, or busy "
            "(no free connection in its pool: the next replica or the primary ran it).",
            ["replica", "outcome"],
            registry=self.registry,
        )
        self.replica_grounding = Counter(
            "ewall_replica_grounding_total",
            "Grounding checks by where their reads ran (a replica's name or primary) and "
            "outcome: served, behind (the replica had not replayed the primary's position at "
            "request start), fenced (the primary's policy moved past the replica's), failed, or "
            "busy (no free connection in its pool: the next replica or the primary read).",
            ["replica", "outcome"],
            registry=self.registry,
        )

    def watch_replicas(self, replicas: ReplicaSet) -> None:
        """Per replica: ewall_replica_lag_seconds and ewall_replica_up, read at scrape time."""
        self.registry.register(_ReplicaCollector(replicas))

    def render(self) -> Response:
        return Response(generate_latest(self.registry), media_type=CONTENT_TYPE_LATEST)


CLIENT_CLOSED = 499  # nginx's code for a request its client closed before the answer
NO_RESPONSE = "No response returned."  # starlette.middleware.base, the route sent nothing


def install_request_middleware(app: FastAPI, metrics: Metrics) -> None:
    @app.middleware("http")
    async def _observe(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        request_id = request.headers.get("x-request-id") or uuid.uuid4().hex
        request.state.request_id = request_id[:64]
        started = time.perf_counter()
        status = 500
        try:
            try:
                response = await call_next(request)
            except RuntimeError as exc:
                # Starlette's word for a route that never answered because the client went
                # away before its body arrived: nobody is listening. Counted as 499 (client
                # closed request), not as a server error; any other RuntimeError is one.
                if str(exc) != NO_RESPONSE or not await request.is_disconnected():
                    raise
                response = Response(status_code=CLIENT_CLOSED)
            status = response.status_code
        finally:
            elapsed = time.perf_counter() - started
            route = request.scope.get("route")
            template = getattr(route, "path", "unmatched")
            method = method_label(request.method)
            metrics.requests.labels(method, template, str(status)).inc()
            metrics.latency.labels(method, template).observe(elapsed)
            log.info(
                "request",
                extra={
                    "request_id": request.state.request_id,
                    "method": method,
                    "route": template,
                    "status": status,
                    "ms": round(elapsed * 1000, 2),
                    "person_id": getattr(request.state, "person_id", None),
                },
            )
        response.headers["X-Request-ID"] = request.state.request_id
        return response
