"""``lance-ns serve`` and ``lance-ns check``: thin wrappers over
:mod:`lance_ns.server` and :mod:`lance_ns.conformance`."""

from __future__ import annotations

import os

from .connection import import_extra, open_namespace, parse_pairs, resolve
from .output import Output

from ..server.settings import AUTH_TOKEN_ENV as AUTH_ENV  # the server's default --auth-token-env; `check` reads it too


def serve(args, out: Output) -> int:
    """``lance-ns serve``: the CLI's connection options pick the namespace; the serving
    flags and the code that serves are :mod:`lance_ns.server.command`'s, as for
    ``python -m lance_ns.server``."""
    import_extra("lance_ns.server.running", "server", "lance-ns serve")
    from ..server import command

    ns = open_namespace(args, out)
    choice = resolve(args)  # how each worker of --workers opens the namespace again
    opener = {"name": choice} if isinstance(choice, str) else {"impl": choice[0], "properties": choice[1]}
    token, keys = command.credentials(args)
    out.scrub.learn({"auth_token": token or "", **{f"api_key.{i}": k for i, k in enumerate(keys or [])}})
    guard = " (clients must authenticate)" if token or keys else ""
    # the token itself is never printed
    if args.log_format != "json":  # JSON logs: stderr holds JSON only (uvicorn logs the address)
        out.note(f"serving {ns.namespace_id()} at {command.scheme(args)}://{args.host}:{args.port}{guard}")
        if not args.no_ui:
            out.note(f"catalog browser: {command.scheme(args)}://{args.host}:{args.port}/ui/")
    command.run(ns, args, opener)
    return 0


def check(args, out: Output) -> int:
    from .. import conformance as C  # here: it builds its scenario's data on import (~0.5 s, pandas)

    token = args.auth_token or os.environ.get(AUTH_ENV) or None
    if args.uri:
        if args.impl or args.config or args.prop:
            from ..errors import InvalidInputError

            raise InvalidInputError("give either --uri or a namespace (--impl/--config), not both")
        import_extra("httpx", "rest", "lance-ns check --uri")
        import_extra("lance_ns.impls.rest", "rest", "lance-ns check --uri")
        out.scrub.learn({"auth_token": token or "", **{f"header.{k}": v for k, v in parse_pairs(args.header, "--header").items()}})
        target = C.Target.rest_server(args.uri, auth_token=token, headers=parse_pairs(args.header, "--header"))
    else:
        target = C.Target.backend(open_namespace(args, out))
    parent = [p for p in (args.parent or "").split(args.delimiter) if p]
    try:
        with out.progress("checking", len(C.RESULT_NAMES)) as advance:
            results = C.run_checks(target, parent=parent, on_result=lambda r: advance())
    finally:
        target.close()
    if args.only:
        # the whole scenario always runs (later checks build on earlier ones); --only picks what is judged
        keep = ("scenario.",) + tuple(args.only)
        results = [r for r in results if r.name.startswith(keep)]
    checks = C.CHECKS
    ok = C.passed(results)
    by_name = {c.name: c for c in checks}
    payload = {
        "target": target.description,
        "passed": ok,
        "summary": C.summary(results),
        "results": [r.to_dict() for r in results],
    }
    out.emit(payload, lambda: _report(out, results, by_name, target.description, ok))
    return 0 if ok else 1


def _report(out: Output, results, by_name, description: str, ok: bool) -> None:
    from rich.table import Table
    from rich.text import Text

    from .. import conformance as C

    mark = {C.PASS: "[green]pass[/green]", C.FAIL: "[red]FAIL[/red]", C.SKIP: "[yellow]skip[/yellow]"}

    clean = out.scrub  # a target URI or a server's message may carry a secret
    t = Table(title=clean(f"lance-ns check: {description}"))
    t.add_column("result", no_wrap=True)
    t.add_column("check", no_wrap=True)
    t.add_column("operation", no_wrap=True)
    t.add_column("expectation / finding", overflow="fold")
    for r in results:
        finding = r.detail if r.status != C.PASS else r.expectation
        t.add_row(mark[r.status], Text(r.name), Text(r.operation), Text(clean(finding)))
    out.out.print(t)
    codes: dict[int, dict[str, int]] = {}
    for r in results:
        for code in by_name[r.name].codes() if r.name in by_name else ():
            codes.setdefault(code, {C.PASS: 0, C.FAIL: 0, C.SKIP: 0})[r.status] += 1
    if codes:
        from ..errors import ERRORS

        ct = Table(title="error codes")
        for col in ("code", "name", "pass", "fail", "skip"):
            ct.add_column(col)
        for code in sorted(codes):
            c = codes[code]
            ct.add_row(str(code), ERRORS[code].name if code in ERRORS else "?", str(c[C.PASS]), str(c[C.FAIL]), str(c[C.SKIP]))
        out.out.print(ct)
    s = C.summary(results)
    verdict = "[green]PASSED[/green]" if ok else "[red]FAILED[/red]"
    out.out.print(f"{verdict}: {s[C.PASS]} passed, {s[C.FAIL]} failed, {s[C.SKIP]} skipped")
    failed = [r.name for r in results if r.status == C.FAIL]
    if failed:
        out.out.print("departures from the spec: " + ", ".join(failed), markup=False)
