"""The repository carries everything its tests and docs use: no tracked file
refers to a path outside it (the sibling ``shared/`` folder of the development
machines, absolute ``/work`` paths), and every relative Markdown link resolves
to a tracked file or folder inside the repository.  A fresh clone with nothing
beside it must pass ``make test``."""

from __future__ import annotations

import posixpath
import re
from urllib.parse import unquote

import pytest

from tests.docs.repo_files import tracked_files, tracked_text

# Spelled in pieces so this file does not match itself.
SIBLING = re.compile(re.escape("..") + r"[/\\]" + "shared" + r"\b")
ABSOLUTE_WORK = re.compile(r"(?<![\w.~-])/" + "work" + r"/")
# [text](target "title") and ![alt](target); reference definitions "[id]: target".
MD_LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
MD_REF_DEF = re.compile(r"^\s{0,3}\[[^\]\n]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M)
EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//|#)", re.I)  # http:, mailto:, //host, #anchor


def outside_references(path: str, text: str) -> list[str]:
    """Every mention of a path outside the repository in one file's text."""
    found = []
    for n, line in enumerate(text.splitlines(), 1):
        for pattern in (SIBLING, ABSOLUTE_WORK):
            for m in pattern.finditer(line):
                found.append(f"{path}:{n}: {m.group(0)!r} in {line.strip()[:120]!r}")
    return found


def broken_links(path: str, text: str, tracked: frozenset[str]) -> list[str]:
    """Relative Markdown links of ``path`` that leave the repository or name no tracked file/folder."""
    folders = {posixpath.dirname(p) for p in tracked}
    folders |= {f for d in list(folders) for f in _parents(d)}
    found = []
    targets = [m.group(1) for m in MD_LINK.finditer(text)] + [m.group(1) for m in MD_REF_DEF.finditer(text)]
    for target in targets:
        if EXTERNAL.match(target):
            continue
        rel = unquote(target.split("#", 1)[0].split("?", 1)[0])
        if not rel:
            continue
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), rel))
        if resolved == ".." or resolved.startswith("../") or rel.startswith("/"):
            found.append(f"{path}: link {target!r} leaves the repository")
        elif resolved.rstrip("/") not in tracked and resolved.rstrip("/") not in folders:
            found.append(f"{path}: link {target!r} names a missing file ({resolved})")
    return found


def _parents(folder: str):
    while folder:
        yield folder
        folder = posixpath.dirname(folder)


def test_no_tracked_file_refers_outside_the_repository():
    problems = []
    for path in tracked_files():
        text = tracked_text(path)
        if text is not None:
            problems += outside_references(path, text)
    assert not problems, "paths outside the repository:\n" + "\n".join(problems)


def test_markdown_links_resolve_inside_the_repository():
    tracked = frozenset(tracked_files())
    problems = []
    for path in tracked:
        if path.endswith(".md") and (text := tracked_text(path)) is not None:
            problems += broken_links(path, text, tracked)
    assert not problems, "broken Markdown links:\n" + "\n".join(problems)


# -- the checks can fail ---------------------------------------------------------

@pytest.mark.parametrize(
    "line",
    [
        "spec = Path('../" + "shared/reference/x.yaml')",
        "see [spec](.." + "/shared/spec/namespace-spec.md)",
        "load('/" + "work/shared/reference/unity.yaml')",
        "cd /" + "work/main && make",
    ],
)
def test_outside_references_are_found(line):
    assert outside_references("f.py", "ok\n" + line + "\n")


def test_inside_text_is_not_an_outside_reference():
    assert outside_references("f.md", "the shared base; ../elsewhere.lance; s3://bucket/work/x; ./work/") == []


def test_broken_links_are_found():
    tracked = frozenset({"README.md", "docs/server.md", "docs/spec/namespace-spec.md", "src/lance_ns/protocol/openapi.yaml"})
    text = "\n".join([
        "[ok](docs/server.md#routes) [ok](docs/spec/) [web](https://example.com/x.md) [a](#top)",
        "[out](../elsewhere/spec.md)",
        "[missing](docs/reliability.md)",
        "![pic](./layout.png)",
        "[ref]: ../../outside.md",
    ])
    problems = broken_links("README.md", text, tracked)
    assert len(problems) == 4, problems
    assert broken_links("docs/spec/namespace-spec.md", "[api](../../src/lance_ns/protocol/openapi.yaml)", tracked) == []
