"""Run the code blocks of a Markdown document, in order, the way a reader would.

``python tests/docs/examples.py DOC WORKDIR [DOC WORKDIR ...]`` runs every block
of each DOC inside its WORKDIR, one document after the other in one interpreter,
and exits non-zero at the first failure, naming DOC:LINE:

* ```python blocks run in one interpreter, sharing their globals (a block may
  continue the previous one, like a notebook); tracebacks name the document's
  own line numbers;
* ```toml blocks are parsed; one whose first line is a comment naming a file
  (``# ~/.config/lance-ns/config.toml``) is also written there, so the blocks
  after it see the configuration it shows;
* ```bash blocks run when every command is a ``lance-ns`` command against a
  local backend (``--impl dir`` / ``--impl memory``, ``sync`` with local
  ``--from-impl`` and ``--to-impl``, or ``--help``); others
  (servers, remote catalogs, ``make``, ``export``) are listed as not run, and
  so are those of a document whose own test runs them (BASH_TESTED_BY);
* a block right after ``<!-- skip-example: REASON -->`` is not run.

Examples write to ``/data/...`` paths: every ``/data/`` becomes
``WORKDIR/data/``; HOME is WORKDIR/home, so ``~`` and the default config path
are inside WORKDIR too.  Each document has globals of its own; what the
interpreter holds beyond them (a SparkSession that ``build_session`` reuses, the
imported modules) serves the next document too, as in a reader's notebook.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\s*(?P<lang>[\w+-]*)")
SKIP = re.compile(r"^\s*<!--\s*skip-example:\s*(?P<reason>.+?)\s*-->\s*$")
DATA_PATH = re.compile(r"(?<![\w.~/-])/data/")
FILE_COMMENT = re.compile(r"^#\s*(?P<path>~?/\S+)\s*$")
LOCAL_IMPLS = ("dir", "memory")
REPO = Path(__file__).resolve().parents[2]
#: documents whose bash blocks a dedicated test runs, in the world (files, tables) the
#: document describes; once that test exists, this runner leaves those blocks to it
BASH_TESTED_BY = {"docs/cli.md": "tests/cli/test_docs_examples.py"}


@dataclass(frozen=True)
class Block:
    doc: str
    line: int  # 1-based line of the block's first code line
    lang: str
    code: str
    skip: str | None  # the reason given by a skip-example comment


def blocks(text: str, doc: str) -> list[Block]:
    """The fenced code blocks of a Markdown text, in order."""
    out: list[Block] = []
    lines = text.splitlines()
    i = 0
    previous = ""  # the last non-blank line before the current one
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            if lines[i].strip():
                previous = lines[i]
            i += 1
            continue
        fence, start = m.group("fence"), i + 1
        end = start
        while end < len(lines) and not lines[end].strip().startswith(fence):
            end += 1
        skip = SKIP.match(previous)
        code = "\n".join(line[len(m.group("indent")) :] for line in lines[start:end])
        out.append(Block(doc, start + 1, m.group("lang").lower(), code + "\n", skip and skip.group("reason")))
        previous = lines[end] if end < len(lines) else ""
        i = end + 1
    return out


def redirect(code: str, workdir: Path) -> str:
    return DATA_PATH.sub(f"{workdir}/data/", code)


def bash_commands(code: str) -> list[str]:
    """The commands of a bash block: continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\n", " ", code)
    commands = []
    for line in joined.splitlines():
        line = re.sub(r"(^|\s)#.*$", "", line).strip()
        if line:
            commands.append(line)
    return commands


def why_not_runnable(command: str) -> str | None:
    """None when a bash command can run here, else why not."""
    argv = shlex.split(command)
    if not argv or argv[0] != "lance-ns":
        return f"not a lance-ns command: {argv[0] if argv else command!r}"
    if "--help" in argv or "-h" in argv or "--version" in argv:
        return None
    if len(argv) > 1 and argv[1] == "serve":
        return "starts a server that runs until stopped"
    if len(argv) > 1 and argv[1] == "sync":  # two sides, each given by --from-impl / --to-impl
        impls = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("--from-impl", "--to-impl")]
        if len(impls) == 2 and all(i in LOCAL_IMPLS for i in impls):
            return None
        return f"needs a remote catalog or server (sync between {' and '.join(impls) or 'named configurations'})"
    impl = argv[argv.index("--impl") + 1] if "--impl" in argv[:-1] else None
    if impl not in LOCAL_IMPLS:
        return f"needs a remote catalog or server (impl {impl or 'from --config/--uri'})"
    return None


def run(doc: Path, workdir: Path) -> int:
    name = doc.name if doc.parent.name != "docs" else f"docs/{doc.name}"
    scope: dict = {"__name__": "__main__"}
    not_run = []
    count = 0
    for block in blocks(doc.read_text(), name):
        where = f"{name}:{block.line}"
        if block.skip:
            not_run.append(f"{where} ({block.lang}): skip-example: {block.skip}")
            continue
        code = redirect(block.code, workdir)
        try:
            if block.lang == "python":
                # pad so that tracebacks give the document's line numbers
                exec(compile("\n" * (block.line - 1) + code, name, "exec"), scope)
            elif block.lang == "toml":
                tomllib.loads(code)
                target = FILE_COMMENT.match(code.splitlines()[0]) if code.strip() else None
                if target:
                    path = Path(os.path.expanduser(target.group("path")))
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(code)
            elif block.lang in ("bash", "sh", "shell"):
                commands = bash_commands(code)
                reasons = [r for r in map(why_not_runnable, commands) if r]
                owner = BASH_TESTED_BY.get(name)
                if owner and (REPO / owner).is_file():
                    reasons.insert(0, f"run by {owner}")
                if reasons:
                    not_run.append(f"{where} (bash): {reasons[0]}")
                    continue
                for command in commands:
                    argv = [sys.executable, "-m", "lance_ns.cli", *shlex.split(command)[1:]]
                    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
                    if done.returncode != 0:
                        raise RuntimeError(
                            f"`{command}` exited {done.returncode}\n{done.stdout}{done.stderr}"
                        )
            else:
                continue  # output samples, diagrams: nothing to run
        except BaseException as e:  # SystemExit of an example counts as a failure too
            print(f"FAILED {where} ({block.lang} block)", file=sys.stderr)
            if isinstance(e, RuntimeError) and block.lang != "python":
                print(e, file=sys.stderr)
            else:
                traceback.print_exc()
            return 1
        count += 1
        print(f"ran {where} ({block.lang})")
    for line in not_run:
        print(f"not run {line}")
    print(f"{count} blocks ran, {len(not_run)} not run")
    return 0


def run_each(pairs: list[tuple[Path, Path]]) -> int:
    """Run each document in its own WORKDIR (the current directory and HOME's parent)."""
    for doc, workdir in pairs:
        home = workdir / "home"
        home.mkdir(parents=True, exist_ok=True)
        os.environ["HOME"] = str(home)
        os.chdir(workdir)
        if run(doc, workdir) != 0:
            return 1
    return 0


if __name__ == "__main__":
    paths = [Path(arg).resolve() for arg in sys.argv[1:]]
    if not paths or len(paths) % 2:
        sys.exit(f"usage: {sys.argv[0]} DOC WORKDIR [DOC WORKDIR ...]")
    sys.exit(run_each(list(zip(paths[::2], paths[1::2]))))
