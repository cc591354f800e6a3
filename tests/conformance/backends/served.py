"""Catalog backends through our server: the concurrent appends of managed tables through REST.

``<backend>-served`` starts the backend as its own module does, serves it with
``lance-ns serve`` in a process of its own, configured as the backend's clients are
(``memory``, which lives in the test process, is served on a thread of it), and hands the
suite lance-ns's REST client of it.  Racing writers then
meet in the server's commit path: 4 threads, each appending through the one REST client
(separate HTTP requests on its connection pool).  ``rest-ours`` does the same over
``dir``, with processes too; these give every other implementation with managed tables
the check through the server.  Processes, each with a REST client of its own, are left to
``rest-ours``: through the server they make the same requests as the threads, from
more interpreters, and cost ~50 s a backend on the CI machine's 2 cores.

They join only test_managed (the REST protocol itself is checked over every operation
by the rest backends).
"""

from contextlib import contextmanager

import lance_ns
from lance_ns.config import ENV_PREFIX
from lance_ns.server import run_server_in_thread
from tests.server.conftest import lance_ns_serve

from . import Backend, Ctx
from . import hive, iceberg, memory, unity

MODULES = frozenset({"test_managed"})


#: rounds of the concurrent appends through the server over a catalog server: 20, as every
#: implementation with managed tables runs directly (issue 57); over HMS, the Iceberg REST
#: reference and the Unity double a round costs 1.5-3 s of the CI machine's 2 cores
CATALOG_SERVED_APPEND_ROUNDS = 20


def served(base: Backend, append_rounds: int | None = None, modules: frozenset[str] = MODULES,
           departures: dict[str, str] | None = None) -> Backend:
    @contextmanager
    def start(tmp):
        with base.start(tmp) as ctx:
            with _serving(ctx, tmp) as server:
                # the server hands out no credentials of its own: each client brings the backend's
                own = {f"storage.{k}": v for k, v in ctx.storage_options.items()}
                client = lance_ns.connect("rest", {"uri": server.url, **own})
                try:
                    yield Ctx(connect=lambda: client, parent=ctx.parent, caps=ctx.caps, scratch=ctx.scratch,
                              storage_options=ctx.storage_options, append_rounds=append_rounds or ctx.append_rounds,
                              third_party=ctx.third_party, race_rounds=ctx.race_rounds)
                finally:
                    client.close()

    facts = (base.facts - {"catalog", "directory", "spawn"}) | {"rest"}
    return Backend(f"{base.name}-served", start, facts, marks=base.marks, modules=modules,
                   race_limits=base.race_limits, departures=base.departures if departures is None else departures)


@contextmanager
def _serving(ctx: Ctx, tmp):
    """The backend served by ``lance-ns serve`` in a process of its own where it can be
    configured (``ctx.spawn``: the catalog's properties, given as a named configuration's
    variables so that no secret is on a command line), else on a thread of this process
    (``memory``, which lives here)."""
    if ctx.spawn is None:
        with run_server_in_thread(ctx.connect()) as server:
            yield server
        return
    impl, props = ctx.spawn
    prefix = f"{ENV_PREFIX}SERVED__"  # LANCE_NS__NAME__KEY, a dot in KEY written "__"
    env = {f"{prefix}IMPL": impl, **{prefix + k.replace(".", "__").upper(): v for k, v in props.items()}}
    with lance_ns_serve(["--config", "served", "--log-level", "warning"], env=env,
                        log_file=tmp / "served.log") as server:
        yield server


def _named(backends, name):
    return next(b for b in backends if b.name == name)


# one server of each implementation with managed tables (dir's is rest-ours)
BACKENDS = [served(_named(memory.BACKENDS, "memory"))] + [
    served(_named(module.BACKENDS, name), CATALOG_SERVED_APPEND_ROUNDS)
    for module, name in ((hive, "hive3"), (iceberg, "iceberg-ref"), (unity, "unity"))]
