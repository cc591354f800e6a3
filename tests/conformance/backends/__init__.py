"""Backends of the conformance suite.

A backend joins the suite with a module in this package that defines
``BACKENDS``, a list of :class:`Backend`.  Each ``start(tmp_dir)`` is a
context manager, entered once per test session, that starts whatever the
backend needs (a real server where one can run here) and yields a
:class:`Ctx`.  The suite then creates its own uniquely named namespaces under
``Ctx.parent`` and removes them afterwards.

Select backends with ``LANCE_NS_BACKENDS=dir-local,memory`` (default: all).

The suite generates only the combinations that apply: a backend declares its
:data:`CAPABILITIES` and :data:`FACTS` (``Backend.facts``), a test what it needs
(``@pytest.mark.needs("data", "!rest")``, or ``@pytest.mark.applies(predicate, why)``),
and a combination that cannot apply is never generated (not generated and then
skipped).  A started backend must show exactly the facts it declares
(:func:`shown_facts`), else each of its tests fails saying which: a backend that
lost a capability cannot pass for one that never had it.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, ContextManager, Iterable

from lance_namespace import LanceNamespace

from lance_ns.conformance import capabilities

#: capabilities a backend may have; the suite checks the behaviour either way
#: (e.g. without "cascade", a Cascade drop must answer Unsupported, code 0).
#: "cascade", "drop_missing_ok" and "managed" are declared by the backend classes
#: themselves (lance_ns.conformance.CAPABILITY_ATTRIBUTES), read by
#: :func:`declared_caps`; the others describe what this test environment offers.
CAPABILITIES = {
    "nested",  # namespaces inside the suite's namespace
    "cascade",  # DropNamespace behavior=Cascade
    "data",  # pylance writes/reads table data through the namespace
    "detail",  # DescribeTable load_detailed_metadata=True returns version/schema
    "ns_properties",  # namespace properties round-trip
    "table_properties",  # table properties round-trip
    "register",  # RegisterTable of an existing Lance table location
    "drop_missing_ok",  # DropNamespace of a missing namespace succeeds (Iceberg spec)
    "managed",  # implementation-managed tables (managed_versioning), declared by the class
}


#: what a test may need of a backend beyond its capabilities (true of the started backend,
#: told by :func:`shown_facts`; declared up front in ``Backend.facts``)
FACTS = {
    "at_root": "the suite's namespaces are children of the root (no fixed parent namespace)",
    "third_party": "a server or client that is not lance-ns",
    "spawn": "another process can connect to the same catalog",
    "ours": "the client is a lance-ns namespace object (it sends lance-ns's request context)",
    "rest": "the client is lance-ns's REST client (the raw protocol checks run)",
    "catalog": "the client is a catalog backend object itself (CatalogNamespace, not the directory)",
    "directory": "the client is a directory namespace object itself",
}


def declared_caps(namespace: LanceNamespace, *environment: str) -> frozenset[str]:
    """The capabilities ``namespace``'s class declares (the same reading
    ``lance-ns check`` makes), plus what this test environment offers."""
    has, _ = capabilities(namespace)
    return has | frozenset(environment)


@dataclass
class Ctx:
    connect: Callable[[], LanceNamespace]
    parent: list[str] = field(default_factory=list)
    caps: frozenset[str] = frozenset()
    #: where the suite may write Lance tables for RegisterTable (a location the
    #: backend accepts) and the storage options pylance needs to write there
    scratch: str | None = None
    storage_options: dict[str, str] = field(default_factory=dict)
    #: the backend's Backend.departures (set when it starts)
    departures: dict[str, str] = field(default_factory=dict)
    #: the backend's Backend.race_limits (set when it starts: the tests read them here)
    race_limits: dict[str, str] = field(default_factory=dict)
    #: rounds of each race (test_concurrency.py; None: ``LANCE_NS_RACE_ROUNDS``, default 2)
    race_rounds: int | None = None
    #: rounds of the concurrent-appends races (test_managed.py; None: ``LANCE_NS_APPEND_ROUNDS``,
    #: default 20), for a backend where one round costs tens of seconds
    append_rounds: int | None = None
    #: a server or client that is not lance-ns (optional operations may be missing there)
    third_party: bool = False
    #: (impl, properties) a process of its own connects with to the same catalog
    #: (None: the catalog lives in this process, as ``memory``'s does)
    spawn: tuple[str, dict] | None = None


def facts(words: str) -> frozenset[str]:
    """A backend's declared facts, written as words: ``facts("data nested ours")``."""
    return frozenset(words.split())


def shown_facts(ctx: Ctx) -> frozenset[str]:
    """The capabilities and :data:`FACTS` a started backend shows."""
    from lance_ns.base import NamespaceBase
    from lance_ns.catalog import CatalogNamespace
    from lance_ns.impls.rest import RestNamespace

    client = ctx.connect()
    shown = {
        "at_root": not ctx.parent, "third_party": ctx.third_party, "spawn": ctx.spawn is not None,
        "ours": isinstance(client, NamespaceBase), "rest": isinstance(client, RestNamespace),
        "catalog": isinstance(client, CatalogNamespace) and not client.catalog_in_storage,
        "directory": isinstance(client, CatalogNamespace) and client.catalog_in_storage,
    }
    return frozenset(ctx.caps) | {fact for fact, true in shown.items() if true}


@dataclass
class Backend:
    name: str
    start: Callable[[Path], ContextManager[Ctx]]
    #: its capabilities and FACTS, declared (what the suite generates from; checked at start)
    facts: frozenset[str] = frozenset()
    marks: tuple = ()
    #: the test modules (their last dotted part) the backend joins; None: every one.  A
    #: backend that exists for one kind of check (several servers over one root: the
    #: races) is generated only where it applies, not generated and then skipped
    modules: frozenset[str] | None = None
    #: how many servers answer the backend's clients (a test module asking for more with
    #: MIN_SERVERS is not generated for it)
    servers: int = 1
    #: test name -> reason: races a third-party server settles only sometimes
    #: (test_concurrency.py); not generated, since a strict xfail would be flaky
    race_limits: dict[str, str] = field(default_factory=dict)
    #: test name (``scenario:<check>`` for a scenario check) -> reason: where a third-party
    #: server departs from the spec (a strict expected failure; the scenario's checks that
    #: build on such a check are not generated: they could only skip)
    departures: dict[str, str] = field(default_factory=dict)
    #: OperationId -> why the backend's client does not offer it: an operation the spec makes
    #: optional, so the scenario's checks that use it are not generated (they could only skip);
    #: test_scenario.py holds each to it (the operation answers Unsupported, code 0)
    unoffered: dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        unknown = set(self.facts) - CAPABILITIES - set(FACTS)
        if unknown:
            raise ValueError(f"backend {self.name} declares unknown facts {sorted(unknown)}")

    def why_not(self, needs: Iterable[str]) -> str | None:
        """Why a test needing ``needs`` (a fact, or ``!fact``: its absence) does not apply here."""
        for need in needs:
            absent = need.startswith("!")
            fact = need[1:] if absent else need
            if fact not in CAPABILITIES and fact not in FACTS:
                raise ValueError(f"a test needs the unknown fact {fact!r}")
            if absent and fact in self.facts:
                return f"not where {FACTS.get(fact, f'the backend has {fact}')}"
            if not absent and fact not in self.facts:
                return f"needs {fact}"
        return None


def discover() -> list[Backend]:
    found: list[Backend] = []
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        module = importlib.import_module(f"{__name__}.{info.name}")
        found.extend(getattr(module, "BACKENDS", []))
    wanted = os.environ.get("LANCE_NS_BACKENDS")
    if wanted:
        names = {w.strip() for w in wanted.split(",") if w.strip()}
        unknown = names - {b.name for b in found}
        if unknown:
            raise RuntimeError(f"unknown backends in LANCE_NS_BACKENDS: {sorted(unknown)}")
        found = [b for b in found if b.name in names]
    return sorted(found, key=lambda b: b.name)
