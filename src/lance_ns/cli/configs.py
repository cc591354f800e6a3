"""``lance-ns config list|show``: the named configurations and what a command
would connect to, resolved and with secrets masked."""

from __future__ import annotations

from ..config import default_config_path, named_config
from .connection import configuration_names, resolved
from .output import Output
from ..redact import redact_tree


def config_list(args, out: Output) -> int:
    rows = []
    for name in configuration_names():
        props = named_config(name)
        rows.append({"name": name, "impl": props.pop("impl"), "properties": redact_tree(props)})

    def human():
        out.table(("name", "impl", "properties"),
                  [(r["name"], r["impl"], ", ".join(f"{k}={v}" for k, v in sorted(r["properties"].items())))
                   for r in rows], title=f"named configurations ({default_config_path()} and LANCE_NS__NAME__KEY)")

    out.emit({"config_file": str(default_config_path()), "namespaces": rows}, human)
    return 0


def config_show(args, out: Output) -> int:
    source, impl, props = resolved(args)
    data = {"source": source, "impl": impl, "properties": redact_tree(props)}

    def human():
        out.mapping({"source": source, "impl": impl, **{f"property {k}": v for k, v in sorted(data["properties"].items())}},
                    title="connection")

    out.emit(data, human)
    return 0
