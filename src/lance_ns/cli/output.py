"""Output: rich tables for people, JSON for scripts, progress only on a TTY."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import Any, Iterable, Iterator, Sequence

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.markup import escape
from rich.table import Table
from rich.text import Text


class Output:
    def __init__(self, as_json: bool, stdout=None, stderr=None):
        self.as_json = as_json
        self.out = Console(file=stdout or sys.stdout, soft_wrap=True, highlight=False)
        if not self.out.is_terminal and "COLUMNS" not in os.environ:
            # piped or captured: rich would assume 80 columns and fold ids and locations
            self.out.width = 160
        self.err = Console(file=stderr or sys.stderr, soft_wrap=True, highlight=False)

    # -- data
    def json(self, value: Any) -> None:
        self.out.file.write(json.dumps(value, indent=2, sort_keys=True, default=str) + "\n")

    def emit(self, value: Any, human) -> None:
        """``value`` as JSON with --json, else ``human()`` renders it."""
        if self.as_json:
            self.json(value)
        else:
            human()

    def table(self, columns: Sequence[str], rows: Iterable[Sequence[Any]], title: str | None = None) -> None:
        t = Table(title=title, show_lines=False)
        for c in columns:
            t.add_column(c, overflow="fold")
        for row in rows:
            t.add_row(*(Text("" if v is None else str(v)) for v in row))
        self.out.print(t)

    def mapping(self, data: dict, title: str | None = None) -> None:
        rows = []
        for key, value in data.items():
            if isinstance(value, (dict, list)):
                value = json.dumps(value, sort_keys=True, default=str)
            rows.append((key, value))
        self.table(("field", "value"), rows, title)

    def message(self, text: str) -> None:
        if not self.as_json:
            self.out.print(text, markup=False)

    def error(self, text: str) -> None:
        self.err.print(f"[red]error:[/red] {escape(text)}", markup=True, highlight=False)

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


def dump(model: Any) -> Any:
    if model is None:
        return {}
    if hasattr(model, "model_dump"):
        return model.model_dump(mode="json", exclude_none=True, by_alias=False)
    return model
