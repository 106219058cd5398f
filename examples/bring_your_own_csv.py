"""Bring your own data: a linear regression read from a CSV file.

Writes a small CSV (``price`` as a linear function of three columns plus noise; 200,000 rows,
5,000 with ``OPTCMP_QUICK=1``) to a temporary directory, builds the problem with
``LinearRegression.from_csv``, compares diag_newton and L-BFGS to a relative suboptimality of
1e-8 and prints the table and the coefficients the fastest run found next to the true ones.
The same data on the command line: ``optcmp run --csv FILE --targets price``.

Expected output: the table (both runs ``converged``), then (the name is whichever run was
fastest)::

    coefficients found by lbfgs: rooms=11.946, area_m2=0.797, age=-0.303, intercept=50.623
    true coefficients:           rooms=12.000, area_m2=0.800, age=-0.300, intercept=50.000

with the found values close to the true ones: the noise (standard deviation 5) sets how close,
about 0.01 for the slopes and 0.1 to 1 for the intercept.
"""

from __future__ import annotations

import csv
import os
import tempfile
from pathlib import Path

import numpy as np

import optcmp

QUICK = os.environ.get("OPTCMP_QUICK") == "1"
TRUE = {"rooms": 12.0, "area_m2": 0.8, "age": -0.3, "intercept": 50.0}


def write_csv(path: Path, n: int, seed: int = 0) -> None:
    """Write ``n`` rows of made-up housing data with a header row."""
    rng = np.random.default_rng(seed)
    rooms = rng.integers(1, 8, n)
    area = rng.normal(90.0, 30.0, n).clip(15.0)
    age = rng.uniform(0.0, 80.0, n)
    price = (TRUE["rooms"] * rooms + TRUE["area_m2"] * area + TRUE["age"] * age
             + TRUE["intercept"] + rng.normal(0.0, 5.0, n))
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["rooms", "area_m2", "age", "price"])
        w.writerows(zip(rooms.tolist(), area.round(2).tolist(), age.round(1).tolist(),
                        price.round(2).tolist()))


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "houses.csv"
        write_csv(path, 5_000 if QUICK else 200_000)
        problem = optcmp.problems.LinearRegression.from_csv(path, targets="price",
                                                            name="houses.csv")
    cmp = optcmp.compare(problem, [optcmp.diag_newton, optcmp.lbfgs], tol=1e-8,
                         max_iter=100_000, progress=False)
    print(cmp.table())
    best = cmp.best()
    if best is None:
        print("no optimizer reached the target")
        return
    names = ["rooms", "area_m2", "age", "intercept"]
    found = ", ".join(f"{n}={v:.3f}" for n, v in zip(names, best.x))
    true = ", ".join(f"{n}={TRUE[n]:.3f}" for n in names)
    head = f"coefficients found by {best.label}:"
    print(f"{head} {found}")
    print(f"{'true coefficients:':{len(head)}s} {true}")


if __name__ == "__main__":
    main()
