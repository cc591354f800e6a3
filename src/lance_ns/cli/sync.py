"""``lance-ns sync``: the command over :mod:`lance_ns.sync`."""

from __future__ import annotations

from typing import Any

from .. import sync as syncing
from ..config import connect, load_namespace, named_config
from ..errors import InvalidInputError
from ..identifiers import parse_id, to_string
from .connection import parse_pairs
from .exitcodes import exit_code
from .output import Output


def side(spec: str | None, impl: str | None, props: list[str], flag: str, delimiter: str, out: Output):
    """One side of a sync: ``NAME[:ID]`` (a named configuration), or ``[:ID]`` with
    ``--FLAG-impl``/``--FLAG-prop``."""
    name, _, raw_id = (spec or "").partition(":")
    if impl:
        if name:
            raise InvalidInputError(f"give the {flag} side either as NAME[:ID] or as --{flag}-impl with [:ID], not both")
        properties = parse_pairs(props, f"--{flag}-prop")
        out.scrub.learn(properties)
        ns = connect(impl, properties)
    elif props:
        raise InvalidInputError(f"--{flag}-prop needs --{flag}-impl")
    elif not name:
        raise InvalidInputError(f"no {flag} namespace: give {flag.upper()} as NAME[:ID] (a named configuration) "
                                f"or --{flag}-impl NAME --{flag}-prop KEY=VALUE")
    else:
        out.scrub.learn(named_config(name))
        ns = load_namespace(name)
    return ns, parse_id(raw_id, delimiter)


def sync(args: Any, out: Output) -> int:
    if args.config or args.impl or args.prop:
        raise InvalidInputError("sync takes its two namespaces as SRC and DST (or --from-*/--to-*), "
                                "not --config/--impl/--prop")
    src, src_id = side(args.src, args.from_impl, args.from_prop, "from", args.delimiter, out)
    dst, dst_id = side(args.dst, args.to_impl, args.to_prop, "to", args.delimiter, out)
    found = syncing.plan(src, dst, src_id, dst_id, mode=args.mode, versions=args.versions,
                         on_conflict=args.on_conflict, include=args.include, exclude=args.exclude)
    if found.refusals or args.dry_run:
        show_plan(found, out, args.delimiter)
        if found.refusals:
            # raised as sync() does: the first refusal's code, nothing written
            return syncing_refused(found, out)
        return 0
    with out.progress("sync", total=len(found.steps)) as advance:
        report = syncing.apply(found, src, dst, advance)
    if out.as_json:
        out.json(report.to_dict())
    else:
        for step, code, message in report.failed:
            out.error(f"{step.kind} {to_string(step.target, args.delimiter)}: {message} [code {code}]")
        out.message(f"sync: {len(report.done)} done, {len(report.skipped)} already in sync or skipped, "
                    f"{len(report.failed)} failed")
    if report.failed:
        from ..errors import error_from_code

        return exit_code(error_from_code(report.failed[0][1], report.failed[0][2]))
    return 0


def syncing_refused(found: syncing.Plan, out: Output) -> int:
    from ..errors import error_from_code

    for refusal in found.refusals:
        out.error(f"{refusal.reason} [code {refusal.code}]")
    out.note("nothing written")
    return exit_code(error_from_code(found.refusals[0].code, found.refusals[0].reason))


def show_plan(found: syncing.Plan, out: Output, delimiter: str) -> None:
    if out.as_json:
        out.json(found.to_dict())
        return
    rows = [(s.action, s.kind, to_string(s.source, delimiter) or "(root)", to_string(s.target, delimiter),
             s.location or "", s.reason) for s in found.steps]
    out.table(("action", "kind", "source", "target", "location", "note"), rows,
              title=f"sync plan: {len(found.writes)} write(s), {len(found.steps) - len(found.writes)} in sync")
