"""How many fragments the directory namespace's manifest keeps under churn: tables declared
and deregistered for ever, in a namespace of ``--tables``.

A simulation of the manifest's fragments, not a run on storage: each step deregisters
``--churn`` random tables (deletions in the fragments holding them) and declares as many
(one append), then runs one compaction as the namespace plans it (``compaction.plan``
itself; the rewrite of each run of fragments it marks is modelled as
``compaction.prepare`` writes it).  Every commit of the manifest lists every fragment, and
every reader compares them, so their number is a cost of every write.

Printed, after ``--steps`` steps: the fragments kept with the merge of shrunk fragments
(:func:`lance_ns.impls.dir.compaction._merge_shrunk`), the same without it (the peer: the
same steps, the same random choices), each as a ratio to the limit (the fewest fragments
the rows held fit in: rows / SEALED_ROWS), and the rows all compactions rewrote per row
declared (the price).

    .venv/bin/python benchmarks/bench_fragments.py                                  # 100k tables, ~20 s
    .venv/bin/python benchmarks/bench_fragments.py --tables 1000000 --churn 5000    # ~4 min
"""

from __future__ import annotations

import argparse
import itertools
import random
from types import SimpleNamespace

from lance_ns.impls.dir import compaction


class _Fragment:
    def __init__(self, rows, where: dict):
        self.live = set(rows)
        self.physical = len(self.live)
        for row in self.live:
            where[row] = self

    def planned(self):  # what plan() reads of a fragment
        deleted = self.physical - len(self.live)
        return SimpleNamespace(metadata=SimpleNamespace(num_rows=len(self.live), physical_rows=self.physical,
                                                        deletion_file=SimpleNamespace() if deleted else None))


def simulate(tables: int, churn: int, steps: int, merge_shrunk: bool, seed: int) -> dict:
    rng, where = random.Random(seed), {}
    per_file = compaction.rows_per_file(tables)
    fragments = [_Fragment(range(lo, min(tables, lo + per_file)), where) for lo in range(0, tables, per_file)]
    declared, alive, rewritten = tables, list(range(tables)), 0
    plain = compaction._merge_shrunk
    if not merge_shrunk:
        compaction._merge_shrunk = lambda older, keep: None
    try:
        for _ in range(steps):
            for _ in range(churn):
                k = rng.randrange(len(alive))
                row, alive[k] = alive[k], alive[-1]
                alive.pop()
                where.pop(row).live.discard(row)
            fresh = range(declared, declared + churn)
            declared += churn
            alive += fresh
            fragments.append(_Fragment(fresh, where))
            keep = compaction.plan([f.planned() for f in fragments])
            if keep is None:
                continue
            after = []
            for kept, run in itertools.groupby(zip(fragments, keep), key=lambda pair: pair[1]):
                run = [f for f, _ in run]
                if kept:
                    after += run
                    continue
                rows = [row for f in run for row in f.live]  # a run rewritten as prepare() writes it
                rewritten += len(rows)
                if rows:
                    per_file = compaction.rows_per_rewritten_file(len(rows), len(run))
                    after += [_Fragment(rows[k:k + per_file], where) for k in range(0, len(rows), per_file)]
            fragments = after
    finally:
        compaction._merge_shrunk = plain
    sizes = sorted(len(f.live) for f in fragments)
    return {"fragments": len(fragments), "median": sizes[len(sizes) // 2], "rewritten": rewritten / (churn * steps),
            "shrunk": sum(s < compaction.SEALED_ROWS // 2 for s in sizes)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables", type=int, default=100_000, help="tables held (default 100,000)")
    ap.add_argument("--churn", type=int, default=500, help="tables deregistered and declared per step (default 500)")
    ap.add_argument("--steps", type=int, default=1_000, help="steps, one compaction each (default 1,000)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    limit = -(-args.tables // compaction.SEALED_ROWS)
    print(f"{args.tables:,} tables, {args.churn:,} deregistered and {args.churn:,} declared per step, {args.steps:,} "
          f"steps ({args.churn * args.steps / args.tables:.1f}x turnover); limit {limit} fragments "
          f"(rows / SEALED_ROWS {compaction.SEALED_ROWS:,})")
    runs = {merge: simulate(args.tables, args.churn, args.steps, merge, args.seed) for merge in (False, True)}
    for merge, r in runs.items():
        print(f"  {'with' if merge else 'without'} the merge of shrunk fragments: {r['fragments']} fragments "
              f"({r['fragments'] / limit:.2f}x the limit; median {r['median']:,} rows, {r['shrunk']} under half of "
              f"SEALED_ROWS), {r['rewritten']:.1f} rows rewritten per row declared")
    print(f"  fragments with / without: {runs[True]['fragments'] / runs[False]['fragments']:.2f}x; rows rewritten "
          f"with / without: {runs[True]['rewritten'] / runs[False]['rewritten']:.2f}x")


if __name__ == "__main__":
    main()
