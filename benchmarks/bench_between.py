"""Time of the between-dataset measures over a collection of the bundle (run by hand; figures go in the issue note).

    .venv/bin/python benchmarks/bench_between.py [--data ../shared/datasets] [--collection hjn_labeled96]
                                                 [--measures ch_btwn ch_a ...] [--n-permutations 20]

Runs the measures as the dataset-ranking study does (clm_nb.tasks.score_datasets: validation once per dataset, the
pair engine's cluster sums shared by dunn_a and sc_a), and prints the total per measure, the slowest datasets and
the wall-clock time. The acceptance target of issue 4: the seven between measures (ch_btwn and the six IVM_A) over
hjn_labeled96 in <= 60 s on the 2-core machine."""
import argparse
import time
from pathlib import Path

from clm_nb.bundle import iter_datasets, list_datasets
from clm_nb.tasks import score_datasets

SEVEN = ["ch_btwn", "ch_a", "db_a", "dunn_a", "i_a", "xb_a", "sc_a"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "datasets"))
    ap.add_argument("--collection", default="hjn_labeled96")
    ap.add_argument("--measures", nargs="+", default=SEVEN)
    args = ap.parse_args()
    n = len(list_datasets(args.data, collections=args.collection))
    t0 = time.perf_counter()
    long = score_datasets(iter_datasets(args.data, collections=args.collection), args.measures, random_state=0,
                          progress=False, total=n)
    wall = time.perf_counter() - t0
    print(f"{long.dataset.nunique()} datasets, {len(args.measures)} measures, wall clock {wall:.1f} s "
          f"(loading and validation included); errors: {(long.error != '').sum()}")
    print(long.groupby("measure").seconds.sum().round(2).to_string())
    print(f"sum of measure times: {long.seconds.sum():.1f} s")
    per = long.groupby(["dataset", "n", "d", "K"]).seconds.sum().sort_values(ascending=False).head(6)
    print(per.round(2).to_string())


if __name__ == "__main__":
    main()
