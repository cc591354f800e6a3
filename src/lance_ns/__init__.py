"""lance-ns: Lance Namespace implementations, a Lance REST server and a Spark source.

>>> import lance_ns
>>> ns = lance_ns.connect("dir", {"root": "/tmp/lake"})
>>> ns = lance_ns.from_config({"impl": "dir", "dir.root": "/tmp/lake"})
>>> ns = lance_ns.load_namespace("prod")   # ~/.config/lance-ns/config.toml or LANCE_NS__PROD__*
"""

from .config import IMPLS, connect, from_config, load_class, load_namespace, named_config
from .identifiers import parse_id, to_string

__version__ = "0.1.0"

__all__ = [
    "IMPLS",
    "connect",
    "from_config",
    "load_class",
    "load_namespace",
    "named_config",
    "parse_id",
    "to_string",
    "__version__",
]
