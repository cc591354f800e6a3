"""The ``lance-ns`` command line: click groups and options, one dispatch point.

Connection options (``--config``, ``--impl``, ``--prop``, ``--delimiter``) and
``--json`` are accepted before the subcommand and after it; after wins, and
``--prop`` pairs add up.  Every command's ``--help`` ends with examples
(lines starting ``$``) that run as written; tests/cli/test_help_examples.py
runs each one.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import types
from typing import Any, Callable, Sequence

import click

from ..identifiers import DEFAULT_DELIMITER
from ..impls import IMPLS
from ..modes import CreateMode, RegisterMode
from ..server import command as server_command
from ..server import settings as server_settings
from .exitcodes import (  # noqa: F401 - re-exported for scripts and tests
    EXIT_CONFLICT,
    EXIT_DENIED,
    EXIT_ERROR,
    EXIT_INVALID,
    EXIT_NOT_FOUND,
    EXIT_OK,
    EXIT_UNAVAILABLE,
    EXIT_UNSUPPORTED,
    Declined,
    exit_code,
    exit_table,
)

# This module builds the whole command tree, and ``lance-ns --help``, ``--version`` and
# ``completion`` are answered from it alone: it imports only click and the few modules
# above, none of which imports lance_namespace (~0.6 s), pyarrow or pylance.  What a
# command runs is imported when it runs (:class:`_Handlers`); tests/cli/test_startup.py
# holds the line.

PROG = "lance-ns"
COMPLETE_VAR = "_LANCE_NS_COMPLETE"
# the server's defaults (lance_ns.server.command imports no starlette/uvicorn)
DEFAULT_THREADS = server_settings.DEFAULT_THREADS
DEFAULT_MAX_BODY_BYTES = server_settings.DEFAULT_MAX_BODY_BYTES
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 110}
#: the file formats ``table create --from`` reads (lance_ns.cli.commands.READERS' keys)
FORMATS = ("csv", "json", "parquet")

ENV_HELP = """\
connection (first match wins):
  --config NAME              named config: [namespaces.NAME] in ~/.config/lance-ns/config.toml
                             (or $LANCE_NS_CONFIG), overridden by LANCE_NS__NAME__KEY variables
  --impl NAME --prop K=V     an implementation alias (dir, rest, hive, hive3, glue, unity,
                             iceberg, memory) or module:Class, with its properties
  LANCE_NS_IMPL=NAME         the environment alone; properties as LANCE_NS_<IMPL>_<KEY>,
                             e.g. LANCE_NS_IMPL=dir LANCE_NS_DIR_ROOT=/data
                             ('__' in KEY is a dot: LANCE_NS_DIR_STORAGE__REGION)
"""


class _Handlers:
    """The command handlers of ``lance_ns.cli.<module>``, imported when one of them runs:
    ``cmd.table_drop`` here is a function that imports ``lance_ns.cli.commands`` and calls
    its ``table_drop``."""

    def __init__(self, module: str):
        self._module = f"lance_ns.cli.{module}"

    def __getattr__(self, name: str) -> Callable:
        module = self._module

        def call(args, out):
            return getattr(importlib.import_module(module), name)(args, out)

        call.__name__ = name
        return call


cmd, configs, service = _Handlers("commands"), _Handlers("configs"), _Handlers("service")
syncing = _Handlers("sync")


# -- option types ------------------------------------------------------------------------


class ModeType(click.ParamType):
    """A spec mode in any spelling the API accepts: ``exist-ok``, ``exist_ok``, ``ExistOk``."""

    name = "mode"

    def __init__(self, mode_class) -> None:
        self.mode_class = mode_class

    def convert(self, value, param, ctx):
        from ..errors import InvalidInputError

        try:
            return self.mode_class.parse(value).value
        except InvalidInputError as e:
            self.fail(str(e), param, ctx)

    def get_metavar(self, param, ctx=None) -> str:
        return "[" + "|".join(m.value for m in self.mode_class) + "]"

    def shell_complete(self, ctx, param, incomplete):
        from click.shell_completion import CompletionItem

        return [CompletionItem(m.value) for m in self.mode_class if m.value.startswith(incomplete)]


def _complete_impl(ctx, param, incomplete):
    return [name for name in sorted(IMPLS) if name.startswith(incomplete)]


def _complete_config(ctx, param, incomplete):
    from .connection import configuration_names

    try:
        return [n for n in configuration_names() if n.startswith(incomplete)]
    except Exception:  # noqa: BLE001 - completion never fails the shell
        return []


# -- option groups ------------------------------------------------------------------------


def _apply(f: Callable, options: Sequence[Callable]) -> Callable:
    for option in reversed(options):
        f = option(f)
    return f


def shared_options(json_flag: bool = True) -> list[Callable]:
    """The options every command takes, before or after the subcommand."""
    options = [
        click.option("--config", metavar="NAME", shell_complete=_complete_config,
                     help="a named configuration: [namespaces.NAME] of the config file"),
        click.option("--impl", metavar="NAME", shell_complete=_complete_impl,
                     help="implementation alias (" + ", ".join(sorted(IMPLS)) + ") or module:Class"),
        click.option("--prop", multiple=True, metavar="KEY=VALUE", help="implementation property (repeatable)"),
        click.option("--delimiter", metavar="SEP", help=f"delimiter of the ids typed on this command line (default {DEFAULT_DELIMITER!r}); "
                                                         "not the REST path's: a client joins a path id with "
                                                         "'$', or names its own in ?delimiter="),
    ]
    if json_flag:
        options.append(click.option("--json", "as_json", is_flag=True, help="print JSON (the protocol's field names)"))
    return options


def id_options(what: str, required: bool = False) -> list[Callable]:
    return [
        click.argument("id", required=False, metavar="ID" if required else "[ID]"),
        click.option("--part", multiple=True, metavar="NAME",
                     help=f"{what}: one id component (repeatable) instead of ID split at --delimiter"),
    ]


PAGING = [
    click.option("--limit", type=int, help="one page of at most N items (default: every page)"),
    click.option("--page-token", help="continue from this token (with --limit)"),
]


def properties_option(what: str) -> Callable:
    return click.option("--property", multiple=True, metavar="KEY=VALUE", help=f"{what} property (repeatable)")


YES = click.option("--yes", "-y", is_flag=True,
                   help="do not ask for confirmation (required when there is no terminal to ask on)")


def examples(*lines: str) -> str:
    """An epilog: example command lines (each runs as written) and the connection help."""
    shown = "\n".join(f"  $ {line}" for line in lines)
    return f"\b\nexamples:\n{shown}\n\n\b\n{ENV_HELP}"


# -- dispatch -------------------------------------------------------------------------------


def merged_options(root: dict, leaf: dict) -> dict:
    """A leaf's options over the root's: after the subcommand wins, --prop pairs add up."""
    merged = dict(leaf)
    for key in ("config", "impl", "delimiter"):
        merged[key] = leaf.get(key) or root.get(key)
    merged["delimiter"] = merged["delimiter"] or DEFAULT_DELIMITER
    merged["prop"] = [*(root.get("prop") or ()), *(leaf.get("prop") or ())]
    merged["as_json"] = bool(leaf.get("as_json") or root.get("as_json"))
    return merged


def run(handler: Callable, params: dict) -> int:
    """Run one handler; every failure becomes one message line and an exit code."""
    root = click.get_current_context().find_root()
    args = types.SimpleNamespace(**merged_options(root.params, params))
    streams = root.obj or {}
    from .output import Output

    out = Output(args.as_json, streams.get("stdout"), streams.get("stderr"), streams.get("stdin"))
    try:
        return handler(args, out)
    except KeyboardInterrupt:
        out.error("interrupted")
        return 130
    except Declined as e:
        out.error(str(e))
        return EXIT_ERROR
    except Exception as e:  # noqa: BLE001 - every failure becomes a message and an exit code
        from lance_namespace.errors import LanceNamespaceError

        from ..errors import ERRORS, code_of

        code = code_of(e)
        name = ERRORS[code].name if code in ERRORS else "INTERNAL"
        text = str(e) if isinstance(e, LanceNamespaceError) else f"{type(e).__name__}: {e}"
        text = " ".join(text.split())  # one line, whatever the backend's message looked like
        if out.as_json:
            out.json({"error": text, "code": code, "type": name})
        out.error(f"{text} [code {code} {name}]")
        return exit_code(e)


def command(group: click.Group, name: str, handler: Callable, summary: str, example_lines: Sequence[str],
            *options: Callable, json_flag: bool = True, short: str | None = None) -> click.Command:
    """A leaf command: its own options, then the shared ones, then run(handler).
    ``short``: the line in the parent's command list, when ``summary`` is long."""

    def callback(**params: Any) -> int:
        return run(handler, params)

    callback = _apply(callback, shared_options(json_flag))
    callback = _apply(callback, options)
    return group.command(name, help=summary, short_help=short or summary, epilog=examples(*example_lines),
                         context_settings=CONTEXT)(callback)


def version_line() -> str:
    from importlib.metadata import PackageNotFoundError, version

    def v(dist: str) -> str:
        try:
            return version(dist)
        except PackageNotFoundError:
            return "?"

    py = ".".join(map(str, sys.version_info[:3]))
    return f"{PROG} {v('lance-ns')} (pylance {v('pylance')}, lance-namespace {v('lance-namespace')}, Python {py})"


def _show_version(ctx: click.Context, param, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(version_line())
        ctx.exit()


# -- the command tree ---------------------------------------------------------------------

ROOT = "--impl dir --prop root=/data/lake"


@click.group(
    name=PROG,
    context_settings=CONTEXT,
    help="Administer any Lance namespace, serve it over REST, or check a REST server for conformance.",
    epilog=examples(
        f"lance-ns {ROOT} namespace list",
        "lance-ns namespace create db.team --mode exist_ok --impl dir --prop root=/data/lake",
        "LANCE_NS_IMPL=dir LANCE_NS_DIR_ROOT=/data/lake lance-ns table list db --json",
        "lance-ns --config prod table describe db.events",
        "LANCE_NS_AUTH_TOKEN=s3cret lance-ns check --uri http://127.0.0.1:2333",
    ) + "\n\n\b\n" + exit_table()
    + "\n\n\b\nshell completion: eval \"$(lance-ns completion bash)\" (or zsh, fish); see docs/cli.md",
)
@(lambda f: _apply(f, shared_options()))  # the root takes the shared options too
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_show_version,
              help="show the versions of lance-ns, pylance and lance-namespace and exit")
@click.pass_context
def cli(ctx: click.Context, **_: Any) -> None:
    pass


@cli.group(context_settings=CONTEXT, help="list, describe, create, drop namespaces")
def namespace() -> None:
    pass


@cli.group(context_settings=CONTEXT, help="create, list, describe, read, version, tag, drop tables")
def table() -> None:
    pass


@table.group(context_settings=CONTEXT, help="list, create and delete a table's tags (named versions)")
def tags() -> None:
    pass


@cli.group(context_settings=CONTEXT, help="show the named configurations and what a command connects to")
def config() -> None:
    pass


CREATE_MODE = click.option("--mode", type=ModeType(CreateMode), default="create",
                           help="create: fail if it exists (default); exist_ok: keep it; overwrite: replace it "
                                "(any spelling: exist-ok, ExistOk)")
REGISTER_MODE = click.option("--mode", type=ModeType(RegisterMode), default="create",
                             help="create: fail if the name exists (default); overwrite: replace the entry")
SKIP_MISSING = click.option("--skip-missing", is_flag=True, help="succeed if it does not exist")
VERSION = click.option("--version", type=int, help="this table version (default: the latest)")

# namespace ...
command(namespace, "list", cmd.namespace_list, "list the child namespaces of a namespace (default: the root)",
        [f"lance-ns namespace list {ROOT}", f"lance-ns {ROOT} namespace list db --json"],
        *id_options("parent namespace"), *PAGING)
command(namespace, "describe", cmd.namespace_describe, "show a namespace's properties",
        ["lance-ns namespace describe db --config prod", f"lance-ns namespace describe db --json {ROOT}"],
        *id_options("namespace"))
command(namespace, "create", cmd.namespace_create,
        "create a namespace; --property sets its properties where the backend stores them",
        [f"lance-ns namespace create db.team --mode exist_ok --property owner=ml {ROOT}"],
        *id_options("namespace"), CREATE_MODE, properties_option("namespace"))
command(namespace, "drop", cmd.namespace_drop,
        "drop a namespace; --cascade and --walk drop its tables too and ask first (--yes: don't ask)",
        [f"lance-ns namespace drop db --cascade --yes {ROOT}"],
        *id_options("namespace"), SKIP_MISSING,
        click.option("--cascade", is_flag=True, help="also drop everything inside (behavior Cascade, one call)"),
        click.option("--walk", is_flag=True, help="cascade client-side: drop each table and child namespace with "
                                                   "progress (for servers that do not honour Cascade; not atomic)"),
        YES)
command(namespace, "exists", cmd.namespace_exists, "exit 0 if the namespace exists, 3 if not",
        [f"lance-ns namespace exists db {ROOT}"], *id_options("namespace"))

# table ...
command(table, "list", cmd.table_list, "list the tables of a namespace",
        [f"lance-ns table list db --json {ROOT}"], *id_options("namespace"), *PAGING)
command(table, "describe", cmd.table_describe,
        "show a table: location, version, rows, size, commit time, properties and schema",
        [f"lance-ns table describe db.events {ROOT}", f"lance-ns table describe db.events --version 1 --json {ROOT}"],
        *id_options("table", required=True), VERSION,
        click.option("--detail", is_flag=True, hidden=True, help="kept for old scripts: details are always loaded"))
command(table, "schema", cmd.table_schema, "show a table's schema as a tree (--json: the protocol's JSON schema)",
        [f"lance-ns table schema db.events {ROOT}"], *id_options("table", required=True), VERSION)
command(table, "head", cmd.table_head, "print the first N rows of a table (default 10)",
        [f"lance-ns table head db.events 5 {ROOT}", f"lance-ns table head db.events --columns id --json {ROOT}"],
        *id_options("table", required=True), click.argument("rows", type=int, default=10, required=False),
        VERSION, click.option("--columns", metavar="A,B", help="only these columns"))
command(table, "create", cmd.table_create,
        "create a table from a parquet, CSV or newline-delimited JSON file (read with pyarrow)",
        [f"lance-ns table create db.orders --from /data/orders.parquet {ROOT}",
         f"lance-ns table create db.orders_csv --from /data/orders.csv --property team=ml {ROOT}"],
        *id_options("table", required=True),
        click.option("--from", "source", required=True, type=click.Path(dir_okay=False), help="the file to load"),
        click.option("--format", type=click.Choice(FORMATS),
                     help="the file's format (default: from its suffix: .parquet, .csv, .json/.jsonl)"),
        CREATE_MODE, properties_option("table"))
command(table, "declare", cmd.table_declare,
        "declare a table (reserve its name and location, no data yet); with --from FILE, every table the "
        "file lists (one id a line, or a JSON object with id, location, properties; ID is then the namespace "
        "they go into), --batch at a time, each batch all or none",
        [f"lance-ns table declare db.clicks --property team=ml {ROOT}",
         f"lance-ns table declare db --from /data/tenants.txt {ROOT}"],
        *id_options("table", required=True), click.option("--location", help="table location (default: chosen by the namespace)"),
        properties_option("table"),
        click.option("--from", "source", type=click.Path(dir_okay=False, exists=True),
                     help="declare the tables this file lists (see above)"),
        click.option("--batch", type=click.IntRange(1), default=10000, show_default=True,
                     help="tables per BatchCommitTables with --from"),
        short="declare a table, or every table a file lists")
command(table, "register", cmd.table_register, "register an existing Lance table location under a name",
        ["lance-ns table register db.raw_events --location /data/raw/events.lance "
         "--impl dir --prop root=/data/lake --prop allow_external_locations=true"],
        *id_options("table", required=True), click.option("--location", required=True, help="where the Lance table is"),
        REGISTER_MODE, properties_option("table"))
command(table, "register-many", cmd.table_register_many,
        "register every Lance table directory inside DIRECTORY (name = directory name without --suffix); "
        "the directory namespace refuses locations outside its root unless allow_external_locations=true",
        [f"lance-ns table register-many staging --directory /data/raw {ROOT} --prop allow_external_locations=true"],
        *id_options("namespace to register into"),
        click.option("--directory", required=True, help="a local directory holding Lance table directories"),
        click.option("--suffix", default=".lance", help="suffix removed from directory names (default .lance)"),
        REGISTER_MODE, short="register every Lance table directory inside a directory")
command(table, "deregister", cmd.table_deregister, "remove a table from the namespace, keeping its data",
        [f"lance-ns table deregister db.events {ROOT}"], *id_options("table", required=True))
command(table, "drop", cmd.table_drop,
        "drop a table, and its data where lance-ns made the table (a registered table's data stays unless "
        "--purge); asks first (--yes: don't ask)",
        [f"lance-ns table drop db.events --yes {ROOT}", f"lance-ns table drop db.gone --skip-missing --yes {ROOT}"],
        *id_options("table", required=True), SKIP_MISSING,
        click.option("--purge", is_flag=True,
                     help="also delete the data of a table lance-ns did not make (registered, or declared at a "
                          "location given)"),
        YES, short="drop a table (and the data of a table lance-ns made)")
command(table, "adopt", cmd.table_adopt,
        "record lance-ns as the owner of a table's data, so that a drop deletes it: for tables of releases "
        "before the ownership record (judged by their location until adopted) and registered tables whose "
        "data is handed over; asks first (--yes: don't ask)",
        [f"lance-ns table adopt db.events --yes {ROOT}"],
        *id_options("table", required=True), YES, short="record lance-ns as the owner of a table's data")
command(table, "rename", cmd.table_rename,
        "rename a table, or move it into another namespace (--to-namespace); its data stays where it is",
        [f"lance-ns table rename db.events events_2024 {ROOT}",
         f"lance-ns table rename db.events_2024 events --to-namespace staging --json {ROOT}"],
        *id_options("table", required=True), click.argument("new_name", metavar="NEW_NAME"),
        click.option("--to-namespace", metavar="NAMESPACE", help="the namespace to move the table into "
                                                                  "(split at --delimiter; default: where it is)"),
        short="rename a table or move it into another namespace")
command(table, "list-all", cmd.table_list_all,
        "list every table below a namespace (default: the root), nested namespaces included, as full ids",
        [f"lance-ns table list-all {ROOT}", f"lance-ns table list-all db --limit 2 --json {ROOT}"],
        *id_options("namespace"), *PAGING)
command(table, "branches", cmd.table_branches, "list a table's branches with the version each was created from",
        [f"lance-ns table branches db.events {ROOT}"], *id_options("table", required=True))
command(table, "exists", cmd.table_exists, "exit 0 if the table exists, 3 if not",
        [f"lance-ns table exists db.events {ROOT}"], *id_options("table", required=True))
command(table, "versions", cmd.table_versions, "list a table's versions with commit times, rows and sizes",
        [f"lance-ns table versions db.events --descending --limit 5 {ROOT}"],
        *id_options("table", required=True), *PAGING, click.option("--descending", is_flag=True, help="newest first"))
command(table, "restore", cmd.table_restore,
        "make an old version the latest again (a new version is committed; history is kept)",
        [f"lance-ns table restore db.events 1 {ROOT}"],
        *id_options("table", required=True), click.argument("to_version", metavar="VERSION", type=int))
command(tags, "list", cmd.tags_list, "list a table's tags",
        [f"lance-ns table tags list db.events {ROOT}"], *id_options("table", required=True))
command(tags, "create", cmd.tags_create, "tag a version of a table (default: the latest)",
        [f"lance-ns table tags create db.events first --version 1 {ROOT}"],
        *id_options("table", required=True), click.argument("tag"),
        click.option("--version", "tag_version", type=int, help="the version to tag (default: the latest)"))
command(tags, "delete", cmd.tags_delete, "delete a tag (the version stays)",
        [f"lance-ns table tags delete db.events stable {ROOT}"],
        *id_options("table", required=True), click.argument("tag"))

# config ...
command(config, "list", configs.config_list, "list the named configurations, secrets masked",
        ["lance-ns config list"])
command(config, "show", configs.config_show,
        "show what a command with these options connects to (resolved, secrets masked)",
        ["lance-ns config show --config prod", "lance-ns config show --impl rest --prop uri=http://user:pw@host:2333"])

# serve: the flags are the server's own (lance_ns.server.settings.FLAGS), shared with python -m lance_ns.server
command(cli, "serve", service.serve, "serve a namespace over the Lance REST protocol (until Ctrl-C); needs lance-ns[server]",
        [f"LANCE_NS_AUTH_TOKEN=s3cret lance-ns serve {ROOT} --host 127.0.0.1 --port 2333",
         "lance-ns namespace list --impl rest --prop uri=http://127.0.0.1:2333 --prop auth_token=s3cret"],
        *server_command.click_options(),
        json_flag=False)

# sync
command(cli, "sync", syncing.sync,
        "mirror a namespace tree into another namespace, any backend into any other. "
        "--mode register (the default): namespaces with their properties, then every table registered "
        "at its location, declared tables declared; the data stays where it is and stays the source's "
        "(dropping a table at the destination never deletes it). "
        "--mode copy: each table's files copied into the place the destination chooses for it "
        "(--versions latest, or all: every version and tag, so time travel works there), each copied "
        "version's rows and schema checked, and only then registered as the destination's own. "
        "SRC and DST are NAME[:ID], NAME a named configuration, or [:ID] with --from-impl/--to-impl. "
        "A run plans first and writes nothing while the plan is refused (ids deeper than the destination "
        "holds, locations it refuses, conflicts under --on-conflict fail); a second run, or one resumed "
        "after a kill, writes only what is left",
        ["lance-ns sync prod --to-impl memory --to-prop root=/data/mirror --dry-run",
         "lance-ns sync prod:db --to-impl memory --to-prop root=/data/mirror :imported --json",
         "lance-ns sync prod --to-impl dir --to-prop root=/data/backup --mode copy --versions all",
         "lance-ns sync prod --to-impl dir --to-prop root=/data/archive --to-prop allow_external_locations=true "
         "--include 'db.*'"],
        click.argument("src", metavar="SRC", required=False),
        click.argument("dst", metavar="DST", required=False),
        click.option("--from-impl", metavar="NAME", help="the source's implementation (instead of a NAME in SRC)"),
        click.option("--from-prop", multiple=True, metavar="KEY=VALUE", help="a property of --from-impl (repeatable)"),
        click.option("--to-impl", metavar="NAME", help="the destination's implementation (instead of a NAME in DST)"),
        click.option("--to-prop", multiple=True, metavar="KEY=VALUE", help="a property of --to-impl (repeatable)"),
        click.option("--mode", type=click.Choice(["register", "copy"]), default="register", show_default=True,
                     help="register: the destination's entries point at the source's data; copy: the data is "
                          "copied into the destination's own locations"),
        click.option("--versions", type=click.Choice(["latest", "all"]), default="latest", show_default=True,
                     help="copy mode: the latest version only, or every version and tag (time travel)"),
        click.option("--on-conflict", type=click.Choice(["fail", "skip", "replace"]), default="fail", show_default=True,
                     help="a destination table of the id holding other data: refuse the whole plan, leave it, "
                          "or deregister it (its data kept) and put the source's in its place"),
        click.option("--include", multiple=True, metavar="GLOB",
                     help="only ids (dot-joined, full source ids) matching one of these globs (repeatable)"),
        click.option("--exclude", multiple=True, metavar="GLOB", help="leave out ids matching one of these (repeatable)"),
        click.option("--dry-run", is_flag=True, help="print the plan and write nothing"),
        short="mirror or copy a namespace tree into another backend")

# check
command(cli, "check", service.check,
        "run the behavioural conformance scenario against a Lance REST server (--uri; needs lance-ns[rest]) "
        "or a backend, in a fresh namespace it removes afterwards; exit 0 only if every check passes",
        ["LANCE_NS_AUTH_TOKEN=s3cret lance-ns check --uri http://127.0.0.1:2333",
         "lance-ns check --impl dir --prop root=/data/scratch --json"],
        click.option("--uri", help="base URL of the Lance REST server to check"),
        click.option("--auth-token", help=f"bearer token for the server (or ${server_settings.AUTH_TOKEN_ENV}); also checks 401 without it"),
        click.option("--header", multiple=True, metavar="KEY=VALUE", help="extra HTTP header (repeatable)"),
        click.option("--parent", help="create the scenario's namespace under this namespace (default: the root)"),
        click.option("--only", multiple=True, metavar="PREFIX",
                     help="judge and report only checks whose name starts with PREFIX "
                          "(repeatable; the whole scenario still runs)"),
        short="check a REST server or a backend against the spec's behaviour")


@cli.command(context_settings=CONTEXT, short_help="print the shell completion script (bash, zsh, fish)",
             epilog=examples('eval "$(lance-ns completion bash)"'))
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """print the shell completion script for SHELL (add the eval line to your shell's rc file)"""
    from click.shell_completion import get_completion_class

    cls = get_completion_class(shell)
    click.echo(cls(cli, {}, PROG, COMPLETE_VAR).source())


# -- entry point ----------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None, stdout=None, stderr=None, stdin=None) -> int:
    """Run ``lance-ns`` with ``argv``; the exit code is returned (the script exits with it)."""
    with contextlib.ExitStack() as stack:
        if stdout is not None:
            stack.enter_context(contextlib.redirect_stdout(stdout))
        if stderr is not None:
            stack.enter_context(contextlib.redirect_stderr(stderr))
        try:
            rv = cli.main(args=list(argv) if argv is not None else None, prog_name=PROG, complete_var=COMPLETE_VAR,
                          standalone_mode=False, obj={"stdout": stdout, "stderr": stderr, "stdin": stdin})
        except click.ClickException as e:  # usage errors: exit 2
            e.show()
            return e.exit_code
        except click.Abort:
            click.echo("aborted", err=True)
            return 130
    return rv if isinstance(rv, int) else EXIT_OK


def build_parser() -> click.Group:
    """The command tree (kept under its old name for callers)."""
    return cli


if __name__ == "__main__":
    sys.exit(main())
