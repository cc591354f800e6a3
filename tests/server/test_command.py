"""``lance-ns serve`` and ``python -m lance_ns.server``: one flag table, one run function."""

from __future__ import annotations

import types

import pytest

from lance_ns.server import command, logs, settings


def _argparse_dests() -> dict[str, object]:
    parser = command.build_parser()
    return {a.dest: a.default for a in parser._actions if a.option_strings and a.dest != "help"}


def _click_params() -> dict[str, object]:
    from lance_ns.cli import app

    return {p.name: p.default for p in app.cli.commands["serve"].params}


def test_both_front_ends_build_every_serving_flag_from_the_one_table():
    argparse_flags, click_flags = _argparse_dests(), _click_params()
    for flag in settings.FLAGS:
        assert argparse_flags[flag.dest] == flag.default, flag.name
        assert click_flags[flag.dest] == flag.default, flag.name
    # beyond the table only the namespace choice differs
    assert set(argparse_flags) - {f.dest for f in settings.FLAGS} == {"impl", "name", "prop"}
    assert set(click_flags) - {f.dest for f in settings.FLAGS} == {"config", "impl", "prop", "delimiter"}


def test_both_front_ends_call_the_one_run_function(monkeypatch, tmp_path):
    """The same argv after the namespace choice reaches command.run with the same flag values."""
    from lance_ns.cli import app

    seen = []
    openers = []

    def fake_run(ns, args, opener=None):
        seen.append({f.dest: getattr(args, f.dest) for f in settings.FLAGS})
        openers.append(opener)

    monkeypatch.setattr(command, "run", fake_run)
    flags = ["--port", "4444", "--threads", "3", "--log-level", "WARNING", "--max-properties", "7", "--body-timeout", "1.5"]
    ns_choice = ["--impl", "dir", "--prop", f"root={tmp_path}"]
    assert command.main(ns_choice + flags) == 0
    assert app.main(["serve", *ns_choice, *flags]) == 0
    assert len(seen) == 2 and seen[0] == seen[1]
    assert (seen[0]["port"], seen[0]["threads"], seen[0]["log_level"], seen[0]["body_timeout"]) == (4444, 3, "warning", 1.5)
    # and both say how a worker process opens the namespace again
    assert openers == [{"impl": "dir", "properties": {"root": str(tmp_path)}}] * 2


@pytest.mark.parametrize(
    "flags, env, expected",
    [
        ({}, {}, (None, None)),
        ({}, {"LANCE_NS_AUTH_TOKEN": "t0k", "LANCE_NS_API_KEYS": "a,b"}, ("t0k", ["a", "b"])),
        ({"auth_token_env": "MY_TOKEN"}, {"MY_TOKEN": "mine", "LANCE_NS_AUTH_TOKEN": "other"}, ("mine", None)),
        ({"auth_token": "given"}, {"LANCE_NS_AUTH_TOKEN": "other"}, ("given", None)),
    ],
)
def test_credentials_from_the_flag_or_the_variable_it_names(monkeypatch, flags, env, expected):
    for var in ("LANCE_NS_AUTH_TOKEN", "LANCE_NS_API_KEYS", "MY_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    args = types.SimpleNamespace(**{f.dest: f.default for f in settings.FLAGS})
    for k, v in flags.items():
        setattr(args, k, v)
    assert command.credentials(args) == expected


def test_the_fast_http_stack_is_used_and_logged_with_a_fallback(monkeypatch, caplog, tmp_path):
    """uvloop + httptools when installed (the server extra), asyncio + h11 when forced or absent;
    the start-up line names what the server really runs on."""
    import logging
    import sys

    import httpx

    import lance_ns
    from lance_ns.server import run_server_in_thread

    ns = lance_ns.connect("dir", {"root": str(tmp_path)})
    caplog.set_level(logging.INFO, logger="lance_ns.server")
    expected = {"auto": logs.http_stack(), "forced": ("asyncio", "h11")}
    for case, options in (("auto", {}), ("forced", {"loop": "asyncio", "http": "h11"})):
        caplog.clear()
        with run_server_in_thread(ns, uvicorn_options=options, log_requests=False) as server:
            assert httpx.get(f"{server.url}/v1/namespace/%24/list", timeout=60).status_code == 200
            loop = type(server.server.servers[0].get_loop()).__module__.split(".")[0]
            # (lance_ns.server.protocols subclasses uvicorn's: the parser is the uvicorn class it extends)
            parser = next(c.__name__ for c in server.server.config.http_protocol_class.__mro__
                          if c.__module__.startswith("uvicorn."))
        want_loop, want_http = expected[case]
        assert (loop, parser) == (want_loop, {"httptools": "HttpToolsProtocol", "h11": "H11Protocol"}[want_http])
        assert f"on the {want_loop} event loop with the {want_http} HTTP parser" in caplog.text
    # where the platform has no wheels (neither module importable), auto falls back cleanly
    monkeypatch.setitem(sys.modules, "uvloop", None)
    monkeypatch.setitem(sys.modules, "httptools", None)
    assert logs.http_stack() == ("asyncio", "h11")
