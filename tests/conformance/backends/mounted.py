"""Catalogs as mounts: the conformance suite inside a mount of a ``mounts`` namespace
whose mount is a real catalog service, directly and through our server.

``mounted-<backend>`` starts ``<backend>`` as its own module does and mounts it as ``m``
beside a ``memory`` mount; the suite's namespaces are created under ``[m, *its parent]``,
so every request passes the mounts layer (the mount named by the first level, the rest
of the id handed on, full ids in the answers, the mount's error codes passed through).
``...-served`` serves that mounts namespace with our server and hands the suite our REST
client of it (served.py).  The services mounted: Glue (moto), Hive Metastore 3.1 (real)
and pylance's own REST server (``RestAdapter``); the directory mount is ``mounts``
(mounts.py), served here as ``mounts-served``.

Each keeps its backend's declared facts (less being the catalog or directory object
itself), departures and race limits: a mount answers as its backend does.  They run the
suite's behavioural modules (MODULES); the races of test_concurrency and test_managed run
on each backend itself and inside the dir mount (``mounts``), since the mounts layer hands
each commit to the mount, which decides it.
"""

from __future__ import annotations

from contextlib import contextmanager

import lance_ns
from lance_ns.impls.mounts import MountsNamespace

from . import Backend, Ctx
from . import glue, hive, mounts, rest
from .served import served

#: the suite's modules a mounted catalog joins (see the module docstring)
MODULES = frozenset({"test_conformance", "test_scenario", "test_table_ops", "test_boundary_errors",
                     "test_field_coverage"})
MOUNT = "m"


def mounted(base: Backend, departures: dict[str, str] | None = None) -> Backend:
    @contextmanager
    def start(tmp):
        with base.start(tmp) as ctx:
            side_root = str(tmp / "side")
            side = lance_ns.connect("memory", {"root": side_root})
            namespace = MountsNamespace.of({MOUNT: ctx.connect(), "side": side})
            spawn = None
            if ctx.spawn is not None:  # a process of its own mounts the same services
                impl, props = ctx.spawn
                spawn = ("mounts", {f"{MOUNT}.impl": impl, **{f"{MOUNT}.{k}": v for k, v in props.items()},
                                    "side.impl": "memory", "side.root": side_root})
            yield Ctx(connect=lambda: namespace, parent=[MOUNT, *ctx.parent], caps=ctx.caps, scratch=ctx.scratch,
                      storage_options=ctx.storage_options, third_party=ctx.third_party, spawn=spawn,
                      race_rounds=ctx.race_rounds, append_rounds=ctx.append_rounds)

    facts = (base.facts - {"catalog", "directory", "at_root", "rest"}) | {"ours"}
    return Backend(f"mounted-{base.name}", start, facts, marks=base.marks, modules=MODULES,
                   race_limits=base.race_limits, departures=base.departures if departures is None else departures)


def _named(backends, name):
    return next(b for b in backends if b.name == name)


def _without(departures: dict[str, str], *fixed: str) -> dict[str, str]:
    return {k: v for k, v in departures.items() if k not in fixed}


#: pylance's REST server's departures (rest.py) that our layers in front of it put right: the
#: mounts check every id before a mount sees it, and our server every request's modes and body
_PYLANCE = _named(rest.BACKENDS, "rest-pylance-server")
_PYLANCE_MOUNTED = {
    **_without(_PYLANCE.departures, "scenario:table.declare.invalid_name", "scenario:namespace.create.invalid_name"),
    # generated here (the client is the mounts namespace, not a REST client), and built on RegisterTable
    "test_an_adopted_table_loses_its_data_on_drop": rest.PYLANCE_SERVER_DEPARTURES["test_dropping_a_registered_table_keeps_its_data"],
}
_PYLANCE_SERVED = _without(_PYLANCE_MOUNTED, "scenario:http.malformed_arrow", "scenario:http.unknown_mode",
                           "scenario:http.empty_component", "test_unknown_modes_are_invalid_input")

_GLUE, _HMS3 = mounted(_named(glue.BACKENDS, "glue")), mounted(_named(hive.BACKENDS, "hive3-hms3"))
_PYLANCE_MOUNT = mounted(_PYLANCE, _PYLANCE_MOUNTED)
BACKENDS = [_GLUE, _HMS3, _PYLANCE_MOUNT, served(_GLUE, modules=MODULES), served(_HMS3, modules=MODULES),
            served(_PYLANCE_MOUNT, modules=MODULES, departures=_PYLANCE_SERVED),
            served(mounts.BACKENDS[0], modules=MODULES)]
