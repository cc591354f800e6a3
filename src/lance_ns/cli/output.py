"""Output: rich tables and trees for people, JSON with the protocol's field names
for scripts, progress only on a terminal, secrets never."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import Any, Iterable, Iterator, Sequence

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from ..readable import type_label
from ..redact import Scrubber, redact_tree


class Output:
    def __init__(self, as_json: bool, stdout=None, stderr=None, stdin=None):
        self.as_json = as_json
        self.scrub = Scrubber()
        self.out = Console(file=stdout or sys.stdout, soft_wrap=True, highlight=False)
        if not self.out.is_terminal and "COLUMNS" not in os.environ:
            # piped or captured: rich would assume 80 columns and fold ids and locations
            self.out.width = 160
        self.err = Console(file=stderr or sys.stderr, soft_wrap=True, highlight=False)
        self.stdin = stdin or sys.stdin

    @property
    def interactive(self) -> bool:
        """A person can answer a question: stdin and stderr are terminals."""
        isatty = getattr(self.stdin, "isatty", None)
        return bool(isatty and isatty()) and self.err.is_terminal

    # -- data
    def json(self, value: Any, mask: bool = True) -> None:
        """``mask``: secrets by key name (responses, configurations); off for table rows,
        whose column names are the user's data, not configuration."""
        if mask:
            text = self.scrub(json.dumps(redact_tree(value), indent=2, sort_keys=True, default=str))
        else:  # data: only the connection's known secrets are removed, no key-name pattern applies
            text = self.scrub.known(json.dumps(value, indent=2, sort_keys=True, default=str))
        self.out.file.write(text + "\n")

    def emit(self, value: Any, human, mask: bool = True) -> None:
        """``value`` as JSON with --json, else ``human()`` renders it."""
        if self.as_json:
            self.json(value, mask)
        else:
            human()

    def table(self, columns: Sequence[str], rows: Iterable[Sequence[Any]], title: str | None = None) -> None:
        t = Table(title=title, show_lines=False)
        for c in columns:
            t.add_column(c, overflow="fold")
        for row in rows:
            t.add_row(*(Text(self.scrub("" if v is None else str(v))) for v in row))
        self.out.print(t)

    def mapping(self, data: dict, title: str | None = None) -> None:
        rows = []
        for key, value in redact_tree(data).items():
            if isinstance(value, (dict, list)):
                value = json.dumps(value, sort_keys=True, default=str)
            rows.append((key, value))
        self.table(("field", "value"), rows, title)

    def tree(self, tree: Tree) -> None:
        self.out.print(tree)

    def message(self, text: str) -> None:
        if not self.as_json:
            self.out.print(self.scrub(text), markup=False)

    def note(self, text: str) -> None:
        """Information for a person, on stderr (never mixed into data)."""
        self.err.print(self.scrub(text), markup=False, highlight=False)

    def error(self, text: str) -> None:
        self.err.print(f"[red]error:[/red] {escape(self.scrub(text))}", markup=True, highlight=False)

    # -- progress
    @contextlib.contextmanager
    def progress(self, description: str, total: int | None) -> Iterator:
        """A progress bar on a terminal (stderr); silent otherwise."""
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.err,
            transient=True,
            disable=not self.err.is_terminal,
        ) as progress:
            task = progress.add_task(description, total=total)

            def advance(n: int = 1, description: str | None = None) -> None:
                progress.update(task, advance=n, **({"description": description} if description else {}))

            yield advance

    @contextlib.contextmanager
    def status(self, text: str) -> Iterator[None]:
        """A spinner on a terminal for one long call; silent otherwise."""
        if self.err.is_terminal:
            with self.err.status(text):
                yield
        else:
            yield


def schema_tree(schema: dict, title: str) -> Tree:
    """A JSON Arrow schema (the protocol's form) as a tree: ``name: type`` per field,
    struct children nested, ``not null`` where a field is required."""
    root = Tree(Text(title, style="bold"))

    def add(node: Tree, field: dict) -> None:
        t = field.get("type") or {}
        label = Text(f"{field.get('name')}: ", style="bold")
        label.append(type_label(t), style="cyan")
        if field.get("nullable") is False:
            label.append(" not null", style="yellow")
        child = node.add(label)
        if t.get("type") == "struct":
            for sub in t.get("fields") or []:
                add(child, sub)
        elif t.get("type") in ("list", "large_list", "fixed_size_list") and t.get("fields"):
            element = t["fields"][0]
            if (element.get("type") or {}).get("type") == "struct":
                for sub in element["type"].get("fields") or []:
                    add(child, sub)

    for field in schema.get("fields") or []:
        add(root, field)
    return root
