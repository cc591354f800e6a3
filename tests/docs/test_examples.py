"""Every code block of README.md and docs/*.md runs as written (tests/docs/examples.py
says how), so a documented example cannot rot.  Paths under /data/ and HOME point into a
temporary directory; a block may opt out with ``<!-- skip-example: REASON -->``.  The
vendored specification (docs/spec/) is reference material and is not run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.examples import blocks, why_not_runnable

REPO = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).with_name("examples.py")
DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def uses_spark(doc: Path) -> bool:
    return any(b.lang == "python" and "spark" in b.code for b in blocks(doc.read_text(), doc.name))


#: the documents whose examples start Spark run in one interpreter, one after the
#: other, so that they share one JVM and its Python workers (examples.py: each has
#: its own globals and WORKDIR); every other document runs in a process of its own
SPARK_DOCUMENTS = [d for d in DOCUMENTS if uses_spark(d)]


def run_examples(doc: Path | list[Path], tmp_path: Path, timeout: float = 540) -> subprocess.CompletedProcess:
    """examples.py on ``doc`` in ``tmp_path``, or on each of a list of documents in a
    directory of its own under ``tmp_path``."""
    docs = doc if isinstance(doc, list) else [doc]
    workdirs = [tmp_path] if len(docs) == 1 else [tmp_path / f"{i}-{d.stem}" for i, d in enumerate(docs)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("LANCE_NS")}
    env.pop("XDG_CONFIG_HOME", None)
    if any(map(uses_spark, docs)):
        # the reader's bridge jar cache (HOME moves to WORKDIR/home): these tests are about
        # the examples; tests/spark/test_units.py builds the jar into an empty cache
        from lance_ns.spark.jar import jar_path

        jar = jar_path()
        if jar:
            env["LANCE_NS_CACHE"] = str(Path(jar).parent)
    args = []
    for d, workdir in zip(docs, workdirs):
        workdir.mkdir(exist_ok=True)
        args += [str(d), str(workdir)]
    return subprocess.run(
        [sys.executable, str(RUNNER), *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=timeout,
    )


@pytest.mark.parametrize(
    "doc",
    [
        *[pytest.param(d, id=str(d.relative_to(REPO))) for d in DOCUMENTS if d not in SPARK_DOCUMENTS],
        pytest.param(
            SPARK_DOCUMENTS, marks=pytest.mark.slow, id="+".join(str(d.relative_to(REPO)) for d in SPARK_DOCUMENTS)
        ),
    ],
)
def test_document_examples_run_as_written(doc, tmp_path):
    done = run_examples(doc, tmp_path)
    print(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_documents_have_python_examples():
    python_blocks = [b for d in DOCUMENTS for b in blocks(d.read_text(), d.name) if b.lang == "python"]
    assert len(python_blocks) >= 4, python_blocks
    assert any(b.doc == "README.md" for b in python_blocks)


# -- the runner can fail, and skips only what it says ------------------------------

def test_a_failing_block_fails_and_names_its_line(tmp_path):
    doc = tmp_path / "bad.md"
    doc.write_text("# t\n\n```python\nx = 1\n```\n\ntext\n\n```python\n\nassert x == 2, 'x is 1'\n```\n")
    done = run_examples(doc, tmp_path)
    assert done.returncode == 1
    assert "FAILED bad.md:10 (python block)" in done.stderr
    assert 'File "bad.md", line 11' in done.stderr and "x is 1" in done.stderr


@pytest.mark.slow  # a fresh process or a whole build: not in the quick loop
def test_blocks_share_globals_paths_are_redirected_and_skips_are_honoured(tmp_path):
    doc = tmp_path / "ok.md"
    doc.write_text(
        "```toml\n# ~/.config/lance-ns/config.toml\n[namespaces.lake]\nimpl = \"dir\"\nroot = \"/data/lake\"\n```\n\n"
        "```python\nimport lance_ns\nns = lance_ns.load_namespace(\"lake\")\nns.create_namespace({\"id\": [\"a\"]})\n```\n\n"
        "```bash\nlance-ns namespace list --impl dir --prop root=/data/lake\n```\n\n"
        "<!-- skip-example: would fail -->\n```python\nraise SystemExit(9)\n```\n\n"
        "```bash\nlance-ns serve --impl dir --prop root=/data/lake\n```\n"
    )
    done = run_examples(doc, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "home/.config/lance-ns/config.toml").is_file()
    assert (tmp_path / "data/lake").is_dir()
    assert "not run ok.md:20 (python): skip-example: would fail" in done.stdout
    assert "not run ok.md:24 (bash): starts a server" in done.stdout
    assert "3 blocks ran, 2 not run" in done.stdout


@pytest.mark.slow  # a fresh process or a whole build: not in the quick loop
def test_a_failing_command_or_bad_toml_fails(tmp_path):
    doc = tmp_path / "cmd.md"
    doc.write_text("```bash\nlance-ns namespace describe nope --impl dir --prop root=/data/lake\n```\n")
    assert run_examples(doc, tmp_path).returncode == 1
    doc.write_text("```toml\n[a\n```\n")
    done = run_examples(doc, tmp_path)
    assert done.returncode == 1 and "FAILED cmd.md:2 (toml block)" in done.stderr


@pytest.mark.parametrize(
    "command, runnable",
    [
        ("lance-ns namespace list --impl dir --prop root=/data/lake", True),
        ("lance-ns table list a --impl memory", True),
        ("lance-ns --help", True),
        ("lance-ns namespace create sales --impl glue --prop region=us-east-1", False),
        ("lance-ns table list sales --json --config prod", False),
        ("lance-ns serve --impl dir --prop root=/data/lake --port 2333", False),
        ("make demo", False),
    ],
)
def test_which_commands_run(command, runnable):
    assert (why_not_runnable(command) is None) is runnable


def test_bash_blocks_of_a_document_with_its_own_test_are_left_to_it(tmp_path, monkeypatch, capsys):
    from tests.docs import examples

    doc = tmp_path / "docs" / "cli.md"
    doc.parent.mkdir()
    doc.write_text("```bash\nlance-ns namespace describe nope --impl dir --prop root=/data/lake\n```\n")
    monkeypatch.setattr(examples, "BASH_TESTED_BY", {"docs/cli.md": "tests/docs/test_examples.py"})
    assert examples.run(doc, tmp_path) == 0  # the failing command was not run here
    assert "not run docs/cli.md:2 (bash): run by tests/docs/test_examples.py" in capsys.readouterr().out
