"""Fixtures of the conformance suite: one session per backend, one fresh
namespace per test (removed afterwards)."""

from __future__ import annotations

import uuid
from contextlib import ExitStack

import pytest

from lance_ns.walk import drop_tree

from .backends import Ctx, discover, shown_facts

_BACKENDS = discover()


def why_not(b, metafunc) -> str | None:
    """Why test ``metafunc`` does not apply to backend ``b`` (None: it does)."""
    module = metafunc.module.__name__.rsplit(".", 1)[-1]
    if b.modules is not None and module not in b.modules:
        return f"{b.name} joins only {sorted(b.modules)}"
    if b.servers < getattr(metafunc.module, "MIN_SERVERS", 1):
        return "needs several servers"
    for mark in metafunc.definition.iter_markers("needs"):
        reason = b.why_not(mark.args)
        if reason:
            return reason
    for mark in metafunc.definition.iter_markers("applies"):
        applies, reason = mark.args
        if not applies(b):
            return reason
    limit = b.race_limits.get(metafunc.definition.originalname)
    if limit:
        return f"server limit: {limit}"
    return None


def pytest_generate_tests(metafunc):
    if "backend" not in metafunc.fixturenames:
        return
    applicable = [b for b in _BACKENDS if why_not(b, metafunc) is None]
    pairs = getattr(metafunc.module, "combinations", None)
    if pairs is not None:  # the module pairs each backend with what applies to it (test_scenario's checks)
        names, values = pairs(applicable)
        metafunc.parametrize(names, [pytest.param(b, *rest, id="-".join([b.name, *map(str, rest)]), marks=b.marks)
                                     for b, *rest in values], indirect=["backend"], scope="session")
        return
    metafunc.parametrize("backend", [pytest.param(b, id=b.name, marks=b.marks) for b in applicable],
                         indirect=True, scope="session")


@pytest.fixture(scope="session")
def _started():
    with ExitStack() as stack:
        yield stack, {}


@pytest.fixture(scope="session")
def backend(request, _started, tmp_path_factory) -> Ctx:
    stack, cache = _started
    b = request.param
    if b.name not in cache:
        ctx = stack.enter_context(b.start(tmp_path_factory.mktemp(b.name)))
        ctx.race_limits, ctx.departures = b.race_limits, b.departures
        cache[b.name] = (ctx, shown_facts(ctx))
    ctx, shown = cache[b.name]
    if shown != b.facts:  # what the suite generated from is not what started: no test of it means anything
        pytest.fail(f"backend {b.name} declares {sorted(b.facts)} but shows {sorted(shown)}: "
                    f"missing {sorted(b.facts - shown)}, undeclared {sorted(shown - b.facts)}", pytrace=False)
    return ctx


@pytest.fixture(autouse=True)
def _departures(request):
    """Known departures of third-party servers are expected failures, strictly."""
    if "backend" not in request.fixturenames:
        return
    ctx = request.getfixturevalue("backend")
    name = request.node.originalname
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
