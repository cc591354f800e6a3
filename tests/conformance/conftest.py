"""Fixtures of the conformance suite: one session per backend, one fresh
namespace per test (removed afterwards)."""

from __future__ import annotations

import uuid
from contextlib import ExitStack

import pytest

from lance_ns.walk import drop_tree

from .backends import Ctx, discover

_BACKENDS = discover()


def pytest_generate_tests(metafunc):
    if "backend" in metafunc.fixturenames:
        module = metafunc.module.__name__.rsplit(".", 1)[-1]
        servers = getattr(metafunc.module, "MIN_SERVERS", 1)
        metafunc.parametrize(
            "backend",
            [pytest.param(b, id=b.name, marks=b.marks) for b in _BACKENDS
             if (b.modules is None or module in b.modules) and b.servers >= servers],
            indirect=True,
            scope="session",
        )


@pytest.fixture(scope="session")
def _started():
    with ExitStack() as stack:
        yield stack, {}


@pytest.fixture(scope="session")
def backend(request, _started, tmp_path_factory) -> Ctx:
    stack, cache = _started
    b = request.param
    if b.name not in cache:
        cache[b.name] = stack.enter_context(b.start(tmp_path_factory.mktemp(b.name)))
    return cache[b.name]


@pytest.fixture(autouse=True)
def _departures(request):
    """Known departures of third-party servers are expected failures, strictly."""
    if "backend" not in request.fixturenames:
        return
    ctx = request.getfixturevalue("backend")
    name = request.node.originalname
    limit = ctx.race_limits.get(name)
    if limit:
        pytest.skip(f"server limit: {limit}")
    if name == "test_scenario":  # one test per scenario check: the check's own name
        name = f"scenario:{request.node.callspec.params['check']}"
    reason = ctx.departures.get(name)
    if reason:
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True))


class Scope:
    """A uniquely named namespace for one test, and helpers to address things in it."""

    def __init__(self, ctx: Ctx):
        self.ctx = ctx
        self.client = ctx.connect()
        self.id = ctx.parent + [f"t{uuid.uuid4().hex[:10]}"]

    def child(self, *names: str) -> list[str]:
        return self.id + list(names)

    def has(self, cap: str) -> bool:
        return cap in self.ctx.caps


@pytest.fixture
def scope(backend) -> Scope:
    s = Scope(backend)
    s.client.create_namespace({"id": s.id})
    yield s
    _cleanup(s)


def _cleanup(s: Scope) -> None:
    c = s.client
    try:
        if s.has("cascade"):
            c.drop_namespace({"id": s.id, "mode": "Skip", "behavior": "Cascade"})
            return
        drop_tree(c, s.id)
    except Exception as e:  # cleanup must not hide the test's own result
        print(f"cleanup of {s.id} failed: {e!r}")
