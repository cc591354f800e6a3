"""Every example in ``lance-ns ... --help`` works as written (see examples.py for
the world it runs in), and every command has one."""

from __future__ import annotations

import click
import pytest

from lance_ns.cli.app import cli as root_group
from lance_ns.impls.dir import DirectoryNamespace

from .examples import EXAMPLE_LINE, World


def leaf_paths(group: click.Group = root_group, prefix: tuple = ()) -> list[tuple[str, ...]]:
    paths = []
    for name, sub in sorted(group.commands.items()):
        if isinstance(sub, click.Group):
            paths += leaf_paths(sub, prefix + (name,))
        else:
            paths.append(prefix + (name,))
    return paths


LEAVES = leaf_paths()
HELP_WITH_EXAMPLES = [()] + LEAVES


def test_the_command_tree():
    # every command of the issue is there (a renamed or lost command fails here)
    assert set(LEAVES) >= {
        ("namespace", n) for n in ("list", "describe", "create", "drop", "exists")
    } | {
        ("table", n) for n in ("list", "describe", "schema", "head", "create", "declare", "register", "register-many",
                               "deregister", "drop", "exists", "versions", "restore", "rename", "list-all",
                               "branches")
    } | {("table", "tags", n) for n in ("list", "create", "delete")} | {
        ("config", "list"), ("config", "show"), ("serve",), ("check",), ("completion",)
    }


@pytest.mark.parametrize("path", HELP_WITH_EXAMPLES, ids=lambda p: " ".join(p) or "lance-ns")
def test_help_examples_run_as_written(path, cli, tmp_path, monkeypatch):
    if path == ("table", "branches") and "ListTableBranches" not in DirectoryNamespace.supported_operations():
        pytest.skip("the directory namespace does not implement ListTableBranches yet: the example cannot run")
    helped = cli(*path, "--help")
    assert helped.rc == 0 and helped.err == ""
    lines = EXAMPLE_LINE.findall(helped.out)
    assert lines, f"lance-ns {' '.join(path)} --help has no example"
    world = World(tmp_path, monkeypatch)
    try:
        for line in lines:
            ran = world.run(line)
            assert ran.rc == 0, (line, ran.out, ran.err)
            assert ran.out or ran.err, line
            assert "s3cret" not in ran.out + ran.err, line
    finally:
        world.close()
    if path == ("serve",):
        assert world.served and world.served[0]["settings"].auth_token == "s3cret" and world.served[0]["port"] == 2333
