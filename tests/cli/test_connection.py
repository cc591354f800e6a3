"""How a command finds its namespace (flags, named config, environment) and exit codes."""

import pytest

from lance_ns.cli import exit_code
from lance_ns.cli.app import (
    EXIT_CONFLICT,
    EXIT_DENIED,
    EXIT_ERROR,
    EXIT_INVALID,
    EXIT_NOT_FOUND,
    EXIT_UNAVAILABLE,
    EXIT_UNSUPPORTED,
)
from lance_ns.errors import ERRORS, error_from_code


def test_environment_alone(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("LANCE_NS_IMPL", "dir")
    monkeypatch.setenv("LANCE_NS_DIR_ROOT", str(tmp_path / "env-lake"))
    assert cli("namespace", "create", "db").rc == 0
    # the same lake, reached with flags
    r = cli("namespace", "list", "--json", "--impl", "dir", "--prop", f"root={tmp_path / 'env-lake'}")
    assert r.json()["namespaces"] == ["db"]


def test_flags_override_environment_properties(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("LANCE_NS_IMPL", "dir")
    monkeypatch.setenv("LANCE_NS_DIR_ROOT", str(tmp_path / "a"))
    assert cli("namespace", "create", "only_in_b", "--impl", "dir", "--prop", f"root={tmp_path / 'b'}").rc == 0
    assert cli("namespace", "list", "--json").json()["namespaces"] == []  # env root a: untouched
    # --impl dir without --prop root takes the root from LANCE_NS_DIR_ROOT
    assert cli("namespace", "create", "in_a", "--impl", "dir").rc == 0
    assert cli("namespace", "list", "--json").json()["namespaces"] == ["in_a"]


def test_named_config_file_and_env(cli, tmp_path, monkeypatch):
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[namespaces.prod]\nimpl = "dir"\nroot = "{tmp_path / "prod"}"\n')
    monkeypatch.setenv("LANCE_NS_CONFIG", str(cfg))
    assert cli("namespace", "create", "db", "--config", "prod").rc == 0
    assert cli("namespace", "list", "--config", "prod", "--json").json()["namespaces"] == ["db"]
    # LANCE_NS__NAME__KEY overrides the file
    monkeypatch.setenv("LANCE_NS__PROD__ROOT", str(tmp_path / "other"))
    assert cli("namespace", "list", "--config", "prod", "--json").json()["namespaces"] == []
    assert cli("namespace", "list", "--config", "absent").rc == EXIT_INVALID
    assert cli("namespace", "list", "--config", "prod", "--impl", "dir").rc == EXIT_INVALID


@pytest.mark.parametrize(
    "argv",
    [
        ["namespace", "list"],  # nothing configured
        ["namespace", "list", "--prop", "root=/x"],  # --prop without --impl
        ["namespace", "list", "--impl", "dir", "--prop", "root"],  # not KEY=VALUE
        ["namespace", "list", "--impl", "no_such_impl"],
        ["namespace", "list", "--impl", "memory", "--limit", "-1"],
    ],
)
def test_configuration_errors_are_invalid_input(cli, argv):
    r = cli(*argv)
    assert r.rc == EXIT_INVALID and "error:" in r.err


def test_unsupported_operation_exit_code(cli):
    # the bare base class implements no operation at all
    assert cli("namespace", "list", "--impl", "lance_ns.base:NamespaceBase").rc == EXIT_UNSUPPORTED


def test_exit_codes_follow_the_error_table():
    expected = {
        1: EXIT_NOT_FOUND, 4: EXIT_NOT_FOUND, 11: EXIT_NOT_FOUND,
        2: EXIT_CONFLICT, 3: EXIT_CONFLICT, 5: EXIT_CONFLICT, 14: EXIT_CONFLICT,
        13: EXIT_INVALID, 20: EXIT_INVALID,
        17: EXIT_UNAVAILABLE, 21: EXIT_UNAVAILABLE,
        0: EXIT_UNSUPPORTED, 15: EXIT_DENIED, 16: EXIT_DENIED, 18: EXIT_ERROR,
    }
    for code, want in expected.items():
        assert exit_code(error_from_code(code, "x")) == want, code
    assert {exit_code(error_from_code(c, "x")) for c in ERRORS} <= {1, 2, 3, 4, 5, 6, 7}
    assert exit_code(RuntimeError("boom")) == EXIT_ERROR


def test_serve_defaults_match_the_server():
    from lance_ns.cli import app
    from lance_ns.server.app import DEFAULT_MAX_BODY_BYTES, DEFAULT_THREADS

    assert (app.DEFAULT_THREADS, app.DEFAULT_MAX_BODY_BYTES) == (DEFAULT_THREADS, DEFAULT_MAX_BODY_BYTES)
    serve = app.cli.commands["serve"]
    ctx = serve.make_context("serve", ["--impl", "memory"])
    assert (ctx.params["host"], ctx.params["port"], ctx.params["auth_token"]) == ("127.0.0.1", 2333, None)
    # no --threads: the backend's own pool size (server_threads), as `python -m lance_ns.server`
    assert (ctx.params["threads"], ctx.params["max_body_bytes"]) == (None, DEFAULT_MAX_BODY_BYTES)


def test_env_config_reads_the_tool_integration_keys():
    from lance_ns.config import env_config, split_config

    env = {"LANCE_NS_IMPL": "dir", "LANCE_NS_DIR_ROOT": "/d", "LANCE_NS_DIR_STORAGE__REGION": "x", "LANCE_NS_REST_URI": "u"}
    assert split_config(env_config(env)) == ("dir", {"root": "/d", "storage.region": "x"})
    assert env_config({"LANCE_NS_DIR_ROOT": "/d"}) is None  # no impl: nothing configured
