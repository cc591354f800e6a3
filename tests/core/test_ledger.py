"""lance_ns.ledger: a document changed only by compare-and-swap, in a tiny Lance dataset
(Unity's managed tables keep their history there: tests/unity/test_managed.py)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from lance_ns import ledger
from lance_ns.ledger import Ledger


def files(uri: str, sub: str) -> list[str]:
    return sorted(p.name for p in Path(uri, sub).glob("*") if p.suffix != ".json")


def race(n: int, fn) -> list:
    """``fn(i)`` in ``n`` threads released at once; their results."""
    out, barrier = [None] * n, threading.Barrier(n)

    def run(i):
        barrier.wait()
        out[i] = fn(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def test_nothing_written_reads_as_version_0(tmp_path):
    assert Ledger(str(tmp_path / "l.lance")).read() == (0, None)


def test_racing_creators_one_wins_and_the_losers_leave_no_files(tmp_path):
    uri = str(tmp_path / "l.lance")
    won = race(8, lambda i: Ledger(uri).swap(f"doc{i}", 0))
    assert won.count(True) == 1, won
    assert Ledger(uri).read() == (1, f"doc{won.index(True)}")
    assert len(files(uri, "data")) == 1  # the losers removed their data files


def test_a_swap_against_a_stale_version_is_refused_and_writes_nothing(tmp_path):
    uri = str(tmp_path / "l.lance")
    a, b = Ledger(uri), Ledger(uri)
    assert a.swap("one", 0)
    assert a.swap("two", 1)
    assert not b.swap("stale", 1) and not b.swap("stale", 0)
    assert a.read() == (2, "two")
    assert len(files(uri, "data")) == 2 and len(files(uri, "_versions")) == 2


def test_racing_swaps_of_one_version_have_one_winner(tmp_path):
    uri = str(tmp_path / "l.lance")
    Ledger(uri).swap("base", 0)
    won = race(6, lambda i: Ledger(uri).swap(f"doc{i}", 1))
    assert won.count(True) == 1, won
    assert Ledger(uri).read() == (2, f"doc{won.index(True)}")


def test_a_commit_whose_answer_was_lost_counts_as_made(tmp_path, monkeypatch):
    """The commit landed but its caller saw an error (a connection dropped after the
    write): the ledger itself shows the document at the next version, so the swap is
    reported as made, not as lost to another writer."""
    from lance.dataset import LanceDataset

    uri = str(tmp_path / "l.lance")
    Ledger(uri).swap("base", 0)
    commit = LanceDataset.commit

    def lands_then_fails(*args, **kwargs):
        commit(*args, **kwargs)
        raise OSError("connection reset")

    monkeypatch.setattr(LanceDataset, "commit", staticmethod(lands_then_fails))
    assert Ledger(uri).swap("mine", 1) is True
    monkeypatch.setattr(LanceDataset, "commit", staticmethod(commit))
    assert Ledger(uri).read() == (2, "mine")


def test_a_failure_that_is_no_lost_race_is_raised(tmp_path, monkeypatch):
    from lance.dataset import LanceDataset

    uri = str(tmp_path / "l.lance")
    Ledger(uri).swap("base", 0)

    def fails(*args, **kwargs):
        raise OSError("access denied")

    monkeypatch.setattr(LanceDataset, "commit", staticmethod(fails))
    with pytest.raises(OSError, match="access denied"):
        Ledger(uri).swap("mine", 1)
    assert len(files(uri, "data")) == 1  # its data file was removed


def test_a_long_commit_sequence_stays_bounded(tmp_path):
    uri = str(tmp_path / "l.lance")
    book = Ledger(uri, retain_versions=3, cleanup_every=5)
    for version in range(40):
        assert book.swap(f"doc{version + 1}", version)
    assert book.read() == (40, "doc40")
    # at most the retained versions plus those since the last cleanup
    assert len(files(uri, "_versions")) <= 3 + 5
    assert len(files(uri, "data")) <= 3 + 5
    assert len(files(uri, "_transactions")) <= 3 + 5


def test_ids_are_the_only_path_components_accepted():
    new = ledger.new_id()
    assert ledger.is_id(new) and ledger.uri("/t.lance", new) == f"/t.lance/_lance_ns/ledger-{new}.lance"
    for bad in ("../x", "", None, new.upper(), new + "/"):
        assert not ledger.is_id(bad)
    with pytest.raises(ValueError):
        ledger.uri("/t.lance", "../../elsewhere")
