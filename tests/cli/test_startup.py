"""``lance-ns --help``, ``--version`` and ``completion`` answer at once: they import the
CLI's own code and click, never lance_namespace (whose package imports the whole
generated REST client), pyarrow, pylance or a backend.  (Timed, not here: CI times
nothing, benchmarks/bench_cli.py prints the medians.)"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: modules whose import a quick answer must not pay for
HEAVY = ("lance_namespace", "lance_namespace_urllib3_client", "pyarrow", "lance", "pydantic", "numpy",
         "lance_ns.errors", "lance_ns.config", "lance_ns.cli.commands", "lance_ns.cli.connection", "boto3",
         "httpx", "starlette", "uvicorn", "pyspark")

_PROBE = """
import json, sys
from lance_ns.cli import main
code = main(sys.argv[1:])
print("\\n__MODULES__" + json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def imported_by(*argv: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stderr.rsplit("__MODULES__", 1)[1]))


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["completion", "bash"], ["table", "--help"]])
def test_a_quick_answer_imports_nothing_heavy(argv):
    modules = imported_by(*argv)
    heavy = sorted(m for m in modules if m.split(".")[0] in HEAVY or m in HEAVY)
    assert not heavy, f"lance-ns {' '.join(argv)} imported {heavy}"


def test_a_command_imports_its_backend_only():
    modules = imported_by("namespace", "list", "--impl", "memory")
    backends = sorted(m for m in modules if m.startswith("lance_ns.impls.") and m != "lance_ns.impls.memory")
    assert not backends, f"a memory command imported other backends: {backends}"
    assert "boto3" not in modules and "pyspark" not in modules and "starlette" not in modules


def test_the_formats_the_tree_offers_are_the_ones_commands_read():
    """``table create --format``'s choices are spelled in the light command tree (FORMATS), the
    readers in lance_ns.cli.commands: the two must name the same formats."""
    from lance_ns.cli import app, commands

    assert sorted(commands.READERS) == sorted(app.FORMATS)
