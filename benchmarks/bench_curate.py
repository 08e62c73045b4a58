"""Is a curated suite's ranking of clustering techniques more stable than a random suite's? (issue 53 item 4)

    python benchmarks/bench_curate.py [--dev]

Reads only committed reference data: the whole shared bundle's leaderboard (`reference/bundle_board`) and the nine
techniques' best AMI per dataset (`reference/bundle_ground_truth` for barton and gagolews_v1, `reference/hjn96_paper_scale`
for hjn_labeled96). Stability is paper 000's mean P(A, B) over 100 draws of 10 datasets (`clm_nb.curate.suite_stability`).

1. The acceptance figure, fixed before it was computed: `select_suite(board, 30)` (trustworthy, greedy k-center) on the
   whole bundle against 1,000 random suites of 30 drawn from every scored dataset.
2. Why: random suites of 30 drawn within each verdict.
3. The real collections alone (hjn_labeled96, barton/real-world, gagolews_v1/uci), n = 20, against random suites of
   20 of the real datasets, and of their trustworthy ones: a look after the fact, not part of the fixed protocol.
4. `--dev` (about 4 minutes more): on the synthetic collections, 20 random sub-boards (80 % of the datasets); on each, every
   selection's suite of 30 against 200 random suites of 30 from that sub-board. The sub-boards share most of their
   datasets, so the share of p-values below 0.05 describes these sub-boards, not the power on new data.
"""
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from clm_nb.curate import read_board, select_suite, suite_stability, technique_scores
from clm_nb.evaluation import rank_stability

REF = Path(__file__).resolve().parent / "reference"
REAL = ("hjn_labeled96", "barton/real-world", "gagolews_v1/uci")


def load() -> tuple[pd.DataFrame, pd.DataFrame]:
    "(the whole board, as `clm-nb curate` reads it, with a column `scored`; the scores)."
    board = read_board(REF / "bundle_board")
    scores = technique_scores([REF / "bundle_ground_truth" / "ami.csv", REF / "hjn96_paper_scale"])
    return board.assign(scored=[k in scores.index for k in zip(board.collection, board.dataset)]), scores


def pairs(rows: pd.DataFrame) -> list:
    return list(zip(rows.collection, rows.dataset))


def random_within(scores, rows, n, k, rng) -> str:
    "Mean P of k random suites of n drawn from `rows`: mean (2.5 %-97.5 %)."
    v = [rank_stability(scores.loc[pairs(rows.iloc[rng.choice(len(rows), n, replace=False)])], n_draws=100, size=10,
                        random_state=int(rng.integers(2**31))).mean for _ in range(k)]
    return f"{np.mean(v):.3f} ({np.quantile(v, 0.025):.3f}-{np.quantile(v, 0.975):.3f})"


def dev(board, scores, n=30, boards=20, rng=None) -> pd.DataFrame:
    "Each selection's suite against random suites, on sub-boards of the synthetic collections."
    syn = board[board.scored & ~board.collection.isin(REAL)].reset_index(drop=True)
    P = lambda rows: rank_stability(scores.loc[pairs(rows)], n_draws=100, size=10,
                                    random_state=int(rng.integers(2**31))).mean
    res = []
    for i in range(boards):
        sub = syn.iloc[np.sort(rng.choice(len(syn), int(0.8 * len(syn)), replace=False))].reset_index(drop=True)
        tr = sub[sub.verdict == "trustworthy"]
        firm = sub[(sub.borderline.fillna("").astype(str) == "") | (sub.verdict != "trustworthy")]
        chosen = {"k-center, trustworthy (the default)": select_suite(sub, n, n_random=10).table,
                  "k-center, trustworthy not borderline": select_suite(firm, n, n_random=10).table,
                  "k-center, any verdict": select_suite(sub, n, verdicts=("trustworthy", "doubtful", "unreliable"),
                                                        n_random=10).table,
                  "top by sc_a (paper 000)": tr.sort_values("sc_a", ascending=False).head(n),
                  "random trustworthy": tr.iloc[rng.choice(len(tr), n, replace=False)]}
        rand = np.array([P(sub.iloc[rng.choice(len(sub), n, replace=False)]) for _ in range(200)])
        for k, t in chosen.items():
            p = P(t)
            res.append(dict(selection=k, P=p, random=rand.mean(), p_value=(1 + (rand >= p).sum()) / (1 + len(rand))))
    r = pd.DataFrame(res)
    return r.groupby("selection", sort=False).agg(P=("P", "mean"), random=("random", "mean"),
                                                  median_p=("p_value", "median"),
                                                  share_p_below_005=("p_value", lambda s: (s < 0.05).mean()))


def main(with_dev: bool = False) -> None:
    t0 = time.perf_counter()
    board, scores = load()
    rng = np.random.default_rng(2026)
    print(f"{len(board)} datasets on the board, {board.scored.sum()} scored: "
          f"{board[board.scored].verdict.value_counts().to_dict()}")
    suite = select_suite(board, 30)                    # the whole board, as the command line chooses
    stab = suite_stability(scores, suite, n_random=1000)
    print(f"\n1. whole bundle, n = 30 ({len(suite.candidates)} candidates; coverage radius {suite.radius:.2f}, random "
          f"suites {suite.random_radius[0]:.2f}):\n   {stab.text()}")
    print("   by collection:", suite.table.groupby("collection").size().to_dict())
    print("\n2. random suites of 30 within a verdict (mean P, middle 95 %):")
    for v in ("trustworthy", "doubtful", "unreliable"):
        rows = board[board.scored & (board.verdict == v)]
        if len(rows) >= 30:
            print(f"   {v:12s} ({len(rows)} datasets): {random_within(scores, rows, 30, 300, rng)}")
    top = board[board.scored & (board.verdict == "trustworthy")].sort_values("sc_a", ascending=False).head(30)
    print(f"   top 30 by sc_a (paper 000's choice): {suite_stability(scores, pairs(top), n_random=1000).text()}")
    real = board[board.collection.isin(REAL)].reset_index(drop=True)
    held = select_suite(real, 20)
    hs = suite_stability(scores.loc[pairs(real[real.scored])], held, n_random=1000)
    print(f"\n3. the real collections only ({real.scored.sum()} scored datasets, {len(held.candidates)} trustworthy), "
          f"n = 20 (a look after the fact, not in the protocol):\n   {hs.text()}")
    trusted = real[real.scored & (real.verdict == "trustworthy")]
    print(f"   random 20 of their {len(trusted)} trustworthy: {random_within(scores, trusted, 20, 1000, rng)}")
    if with_dev:
        print("\n4. the selections on the synthetic collections (20 sub-boards of 80 %, n = 30):")
        print(dev(board, scores, rng=rng).round(3).to_string())
    print(f"\n{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main("--dev" in sys.argv[1:])
