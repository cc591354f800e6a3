"""Mounts: the suite run inside one mount of a ``mounts`` namespace.

The namespace mounts a local ``dir`` root as ``lake`` and a ``memory`` catalog as
``mem``; the suite's namespaces are created under ``[lake]``, so every operation passes
the mounts layer (the mount named by the id's first level, the rest of the id handed
on, full ids in the answers).  What only mounts do (the root listing the mounts,
operations across two mounts, a mount that is down) is tested in tests/mounts/test_mounts.py.
"""

from contextlib import contextmanager

import lance_ns

from . import Backend, Ctx, declared_caps, facts


@contextmanager
def _start(tmp):
    props = {"mounts.lake.impl": "dir", "mounts.lake.root": str(tmp / "lake"),
             "mounts.mem.impl": "memory", "mounts.mem.root": str(tmp / "mem")}
    connect = lambda: lance_ns.connect("mounts", props)  # noqa: E731  (a new client each time, as dir-local)
    yield Ctx(connect=connect, parent=["lake"],
              caps=declared_caps(connect(), "nested", "data", "detail", "ns_properties", "table_properties", "register"),
              scratch=str(tmp / "lake" / "scratch"), spawn=("mounts", props),
              # mounts hand each commit to the mount, which decides it: dir's commit path runs its 20
              # rounds on dir-local; here a few rounds show the hand-over loses nothing
              append_rounds=4)


BACKENDS = [Backend("mounts", _start, facts("cascade data detail managed nested ns_properties ours register spawn "
                                            "table_properties"))]
