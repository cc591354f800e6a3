"""What a scenario runs against, and what it is known to offer.

Capabilities are declared once, as attributes of the backend classes
(:data:`CAPABILITY_ATTRIBUTES`), read from the namespace object (``vending``
depends on its configuration); the tests' backends and ``lance-ns check
--impl`` both read them through :func:`capabilities`.  A remote server's
class is unknown: there the spec's behaviour is expected and the runner
probes what it can (whether namespaces nest).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from lance_namespace import LanceNamespace

#: capability -> the class attribute that declares it (True: the backend has it)
CAPABILITY_ATTRIBUTES: dict[str, str] = {
    "cascade": "supports_cascade",  # DropNamespace behavior=Cascade
    "drop_missing_ok": "drop_missing_ok",  # DropNamespace of a missing namespace succeeds (Iceberg spec)
    "managed": "supports_managed_versioning",  # implementation-managed tables (managed_versioning)
    "vending": "vends_credentials",  # credential_vendor.enabled: DescribeTable/DeclareTable vend credentials
}


def capabilities(namespace: Any) -> tuple[frozenset[str], frozenset[str]]:
    """(declared present, declared absent) capabilities of a namespace's class;
    a class that declares nothing about a capability appears in neither."""
    cls = type(namespace)
    has, lacks = set(), set()
    for cap, attr in CAPABILITY_ATTRIBUTES.items():
        if hasattr(cls, attr):
            (has if getattr(namespace, attr) else lacks).add(cap)  # the instance: vending is configuration
    return frozenset(has), frozenset(lacks)


@dataclass
class Target:
    """A namespace client, plus raw protocol access when it is our REST client."""

    client: LanceNamespace
    rest: Any = None  # lance_ns.impls.rest.RestNamespace: raw requests, error bodies
    anonymous: Any = None  # the same server without credentials (auth checks)
    description: str = ""
    #: capabilities the target declares it has / has not (:func:`capabilities`)
    caps: frozenset[str] = field(default_factory=frozenset)
    lacks: frozenset[str] = field(default_factory=frozenset)
    owned: tuple = ()  # clients this target opened and closes

    @classmethod
    def rest_server(cls, uri: str, auth_token: str | None = None, headers: Mapping[str, str] | None = None) -> "Target":
        from ..impls.rest import RestNamespace

        props = {"uri": uri, "max_retries": "0"}
        props.update({f"header.{k}": v for k, v in (headers or {}).items()})
        client = RestNamespace(**props, **({"auth_token": auth_token} if auth_token else {}))
        anonymous = RestNamespace(**props) if auth_token else None
        owned = tuple(c for c in (client, anonymous) if c is not None)
        return cls(client, client, anonymous, f"REST server {uri}", owned=owned)

    @classmethod
    def backend(cls, namespace: LanceNamespace) -> "Target":
        """Any namespace object; our REST client also gets the raw protocol checks."""
        try:
            from ..impls.rest import RestNamespace
        except ImportError:  # the rest extra is not installed: no REST client to be
            RestNamespace = ()  # noqa: N806
        rest = namespace if RestNamespace and isinstance(namespace, RestNamespace) else None
        # a REST client's class says nothing about the server behind it
        has, lacks = capabilities(namespace) if rest is None else (frozenset(), frozenset())
        return cls(namespace, rest, description=namespace.namespace_id(), caps=has, lacks=lacks)

    def close(self) -> None:
        for c in self.owned:
            c.close()
