"""The ``lance-ns`` command line: parser, exit codes, dispatch."""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from lance_namespace.errors import LanceNamespaceError

from ..errors import ERRORS, code_of
from ..identifiers import DEFAULT_DELIMITER
from . import commands as cmd
from . import service
from .connection import ENV_HELP, add_connection_options
from .exitcodes import (  # noqa: F401 - re-exported for scripts and tests
    EXIT_CONFLICT,
    EXIT_DENIED,
    EXIT_ERROR,
    EXIT_INVALID,
    EXIT_NOT_FOUND,
    EXIT_OK,
    EXIT_UNAVAILABLE,
    EXIT_UNSUPPORTED,
    exit_code,
    exit_table,
)
from .output import Output

# the server's defaults, without importing starlette/uvicorn for every command
DEFAULT_THREADS = 32
DEFAULT_MAX_BODY_BYTES = 256 * 1024 * 1024

# -- parser ---------------------------------------------------------------------------------


class _Formatter(argparse.RawDescriptionHelpFormatter):
    pass


def _common(json_flag: bool = True) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    add_connection_options(p)
    p.add_argument("--delimiter", default=DEFAULT_DELIMITER, help="identifier delimiter (default '.')")
    if json_flag:
        p.add_argument("--json", action="store_true", help="print JSON for scripts instead of tables")
    return p


def _id_args(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("id", nargs="?", metavar="ID", help=f"{what}, e.g. db.events (split at --delimiter)")
    p.add_argument("--part", action="append", default=[], metavar="NAME", help="an id component (repeatable) instead of ID")


def _paging(p: argparse.ArgumentParser) -> None:
    p.add_argument("--limit", type=int, help="one page of at most N items (default: every page)")
    p.add_argument("--page-token", help="continue from this token (with --limit)")


def _props(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--property", action="append", default=[], metavar="KEY=VALUE", help=f"{what} property (repeatable)")


def _add(sub, name: str, func, help_: str, example: str, common) -> argparse.ArgumentParser:
    p = sub.add_parser(
        name, help=help_, description=help_, parents=[common], formatter_class=_Formatter,
        epilog=f"example:\n  {example}\n\n{ENV_HELP}",
    )
    p.set_defaults(func=func)
    return p


def build_parser() -> argparse.ArgumentParser:
    common = _common()
    parser = argparse.ArgumentParser(
        prog="lance-ns",
        description="Administer any Lance namespace, serve it over REST, or check a REST server for conformance.",
        formatter_class=_Formatter,
        epilog=(
            "examples:\n"
            "  lance-ns namespace list --impl dir --prop root=/data/lake\n"
            "  LANCE_NS_IMPL=dir LANCE_NS_DIR_ROOT=/data/lake lance-ns table list db --json\n"
            "  lance-ns serve --impl dir --prop root=/data/lake --port 2333\n"
            "  lance-ns check --uri http://127.0.0.1:2333\n\n"
            f"{ENV_HELP}\n{exit_table()}"
        ),
    )
    groups = parser.add_subparsers(dest="group", metavar="COMMAND", required=True)

    # namespace ...
    ns = groups.add_parser("namespace", help="list, describe, create, drop namespaces", formatter_class=_Formatter,
                           epilog="example:\n  lance-ns namespace create db --impl dir --prop root=/data/lake")
    nsub = ns.add_subparsers(dest="command", metavar="COMMAND", required=True)
    p = _add(nsub, "list", cmd.namespace_list, "list the child namespaces of a namespace (default: the root)",
             "lance-ns namespace list --impl dir --prop root=/data/lake", common)
    _id_args(p, "parent namespace")
    _paging(p)
    p = _add(nsub, "describe", cmd.namespace_describe, "show a namespace's properties",
             "lance-ns namespace describe db --config prod", common)
    _id_args(p, "namespace")
    p = _add(nsub, "create", cmd.namespace_create, "create a namespace",
             "lance-ns namespace create db.team --mode exist-ok --property owner=ml --impl dir --prop root=/data/lake", common)
    _id_args(p, "namespace")
    p.add_argument("--mode", choices=sorted(cmd.CREATE_MODES), default="create",
                   help="create: fail if it exists (default); exist-ok: keep it; overwrite: replace it")
    _props(p, "namespace")
    p = _add(nsub, "drop", cmd.namespace_drop, "drop a namespace",
             "lance-ns namespace drop db --cascade --impl dir --prop root=/data/lake", common)
    _id_args(p, "namespace")
    p.add_argument("--skip-missing", action="store_true", help="succeed if it does not exist (mode Skip)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--cascade", action="store_true", help="also drop everything inside (behavior Cascade, one call)")
    how.add_argument("--walk", action="store_true",
                     help="cascade client-side: drop each table and child namespace with progress "
                          "(for servers that do not honour Cascade; not atomic)")
    p = _add(nsub, "exists", cmd.namespace_exists, "exit 0 if the namespace exists, 3 if not",
             "lance-ns namespace exists db --impl dir --prop root=/data/lake && echo yes", common)
    _id_args(p, "namespace")

    # table ...
    tb = groups.add_parser("table", help="list, describe, declare, register, deregister, drop tables",
                           formatter_class=_Formatter,
                           epilog="example:\n  lance-ns table list db --impl dir --prop root=/data/lake")
    tsub = tb.add_subparsers(dest="command", metavar="COMMAND", required=True)
    p = _add(tsub, "list", cmd.table_list, "list the tables of a namespace",
             "lance-ns table list db --json --impl dir --prop root=/data/lake", common)
    _id_args(p, "namespace")
    _paging(p)
    p = _add(tsub, "describe", cmd.table_describe, "show a table's location, properties (and version, schema with --detail)",
             "lance-ns table describe db.events --detail --impl dir --prop root=/data/lake", common)
    _id_args(p, "table")
    p.add_argument("--detail", action="store_true", help="load version, schema and stats from the table")
    p.add_argument("--version", type=int, help="describe this table version")
    p = _add(tsub, "declare", cmd.table_declare, "declare a table (reserve its name and location, no data yet)",
             "lance-ns table declare db.events --property team=ml --impl dir --prop root=/data/lake", common)
    _id_args(p, "table")
    p.add_argument("--location", help="table location (default: chosen by the namespace)")
    _props(p, "table")
    p = _add(tsub, "register", cmd.table_register, "register an existing Lance table location under a name",
             "lance-ns table register db.events --location /data/raw/events.lance --impl dir --prop root=/data/lake", common)
    _id_args(p, "table")
    p.add_argument("--location", required=True, help="where the Lance table is")
    p.add_argument("--mode", choices=sorted(cmd.REGISTER_MODES), default="create",
                   help="create: fail if the name exists (default); overwrite: replace the entry")
    _props(p, "table")
    p = _add(tsub, "register-many", cmd.table_register_many,
             "register every Lance table directory inside DIRECTORY (name = directory name without --suffix)",
             "lance-ns table register-many db --directory /data/raw --impl dir --prop root=/data/lake "
             "--prop allow_external_locations=true\n"
             "  (the directory namespace refuses locations outside its root unless allow_external_locations=true)",
             common)
    _id_args(p, "namespace to register into")
    p.add_argument("--directory", required=True, help="a local directory holding Lance table directories")
    p.add_argument("--suffix", default=".lance", help="suffix removed from directory names (default .lance)")
    p.add_argument("--mode", choices=sorted(cmd.REGISTER_MODES), default="create", help="as for register")
    p = _add(tsub, "deregister", cmd.table_deregister, "remove a table from the namespace, keeping its data",
             "lance-ns table deregister db.events --impl dir --prop root=/data/lake", common)
    _id_args(p, "table")
    p = _add(tsub, "drop", cmd.table_drop, "drop a table and its data",
             "lance-ns table drop db.events --skip-missing --impl dir --prop root=/data/lake", common)
    _id_args(p, "table")
    p.add_argument("--skip-missing", action="store_true", help="succeed if the table does not exist")
    p = _add(tsub, "exists", cmd.table_exists, "exit 0 if the table exists, 3 if not",
             "lance-ns table exists db.events --impl dir --prop root=/data/lake || echo missing", common)
    _id_args(p, "table")
    p = _add(tsub, "versions", cmd.table_versions, "list a table's versions",
             "lance-ns table versions db.events --descending --limit 5 --impl dir --prop root=/data/lake", common)
    _id_args(p, "table")
    _paging(p)
    p.add_argument("--descending", action="store_true", help="newest first")

    # serve
    p = _add(groups, "serve", service.serve, "serve a namespace over the Lance REST protocol (until Ctrl-C)",
             "LANCE_NS_AUTH_TOKEN=s3cret lance-ns serve --impl dir --prop root=/data/lake --host 127.0.0.1 --port 2333\n"
             "  then: lance-ns namespace list --impl rest --prop uri=http://127.0.0.1:2333 --prop auth_token=s3cret",
             _common(json_flag=False))
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=2333, help="port (default 2333, the spec's)")
    p.add_argument("--auth-token", help=f"bearer token clients must send (better: ${service.AUTH_ENV}; "
                   f"x-api-key values: ${service.API_KEYS_ENV}, comma-separated); never printed")
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    p.add_argument("--threads", type=int, default=DEFAULT_THREADS, help=f"backend worker threads (default {DEFAULT_THREADS})")
    p.add_argument("--max-body-bytes", type=int, default=DEFAULT_MAX_BODY_BYTES,
                   help="larger request bodies get HTTP 413 (default 256 MiB)")

    # check
    p = _add(groups, "check", service.check,
             "run the behavioural conformance scenario against a Lance REST server (--uri) or a backend, "
             "in a fresh namespace it removes afterwards; exit 0 only if every check passes",
             "LANCE_NS_AUTH_TOKEN=s3cret lance-ns check --uri http://127.0.0.1:2333\n  lance-ns check --impl dir --prop root=/tmp/scratch --json",
             common)
    p.add_argument("--uri", help="base URL of the Lance REST server to check")
    p.add_argument("--auth-token", help=f"bearer token for the server (or ${service.AUTH_ENV}); also checks 401 without it")
    p.add_argument("--header", action="append", default=[], metavar="KEY=VALUE", help="extra HTTP header (repeatable)")
    p.add_argument("--parent", help="create the scenario's namespace under this namespace (default: the root)")
    p.add_argument("--only", action="append", metavar="PREFIX",
                   help="judge and report only checks whose name starts with PREFIX (repeatable; the whole scenario still runs)")
    return parser


def main(argv: Sequence[str] | None = None, stdout=None, stderr=None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help (0) or a usage error (2)
        return int(e.code or 0)
    out = Output(getattr(args, "json", False), stdout, stderr)
    try:
        return args.func(args, out)
    except KeyboardInterrupt:
        out.error("interrupted")
        return 130
    except Exception as e:  # noqa: BLE001 - every failure becomes a message and an exit code
        code = code_of(e)
        name = ERRORS[code].name if code in ERRORS else "INTERNAL"
        if out.as_json:
            out.json({"error": str(e), "code": code, "type": name})
        text = str(e) if isinstance(e, LanceNamespaceError) else f"{type(e).__name__}: {e}"
        out.error(f"{text} [code {code} {name}]")
        return exit_code(e)


if __name__ == "__main__":
    sys.exit(main())
