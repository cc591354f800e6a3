"""The command lines of docs/cli.md's ``bash`` blocks run as written, in order,
in the world of examples.py (a block after ``<!-- skip-example: why -->`` is skipped)."""

from __future__ import annotations

import re
from pathlib import Path

from .examples import World

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
BLOCK = re.compile(r"(?P<skip><!-- skip-example:[^>]*-->\s*\n)?```bash\n(?P<body>.*?)```", re.S)


def doc_lines() -> list[str]:
    lines = []
    for block in BLOCK.finditer(DOC.read_text()):
        if block.group("skip"):
            continue
        for line in block.group("body").splitlines():
            line = line.split("  #", 1)[0].strip()
            if line and not line.startswith("#"):
                lines.append(line)
    return lines


def test_docs_cli_examples_run(tmp_path, monkeypatch):
    lines = doc_lines()
    assert len(lines) >= 15 and all("lance-ns" in line for line in lines)
    world = World(tmp_path, monkeypatch)
    try:
        for line in lines:
            ran = world.run(line)
            assert ran.rc == 0, (line, ran.out, ran.err)
    finally:
        world.close()
