"""The in-process catalog: the shared catalog algorithm with no service behind it."""

from contextlib import contextmanager

import lance_ns

from . import Backend, Ctx, declared_caps, facts


@contextmanager
def _start(tmp):
    root = str(tmp / "memory")
    ns = lance_ns.connect("memory", {"root": root})  # one catalog shared by every client
    yield Ctx(
        connect=lambda: ns,
        caps=declared_caps(ns, "nested", "data", "detail", "ns_properties", "table_properties", "register"),
        scratch=str(tmp / "memory-scratch"),
    )


BACKENDS = [Backend("memory", _start, facts("at_root cascade catalog data detail managed nested ns_properties ours "
                                            "register table_properties"))]
