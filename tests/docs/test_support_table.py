"""docs/backends.md's table of operations per backend says what the classes
answer: a "yes" cell for exactly the operations ``supported_operations()``
lists, a row for each of the interface's operations."""

from __future__ import annotations

from pathlib import Path

from lance_ns.base import OPERATIONS
from lance_ns.config import load_class

DOC = Path(__file__).resolve().parents[2] / "docs" / "backends.md"


def _table() -> tuple[list[str], dict[str, list[str]]]:
    lines = DOC.read_text().split("## Operations per backend", 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| "))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    rows = [line for line in lines[start:end] if not line.startswith("|---")]
    header = [c.strip() for c in rows[0].strip("|").split("|")]
    body = {}
    for row in rows[1:]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        body[cells[0]] = cells[1:]
    return header[1:], body


def _supported(alias: str) -> set[str]:
    return set(load_class(alias).supported_operations())


def test_every_operation_has_a_row():
    _, body = _table()
    assert sorted(body) == sorted(op.op_id for op in OPERATIONS.values())


def test_cells_match_what_the_classes_answer():
    header, body = _table()
    wrong = []
    for i, column in enumerate(header):
        if column == "rest":
            continue
        for alias in (a.strip() for a in column.split("/")):
            supported = _supported(alias)
            for op, cells in body.items():
                if cells[i].startswith("yes") != (op in supported):
                    wrong.append(f"{op} / {alias}: table says {cells[i]!r}")
    assert not wrong, wrong
