# The script that wrote the files of this folder with optcmp 0.1.0 (kept for the record: rerunning
# it with a later optcmp writes new files, which tests/test_saved_files.py does not compare).
import os
import warnings

import optcmp
from optcmp.problems import FizzBuzzMLP, LinearRegression

warnings.simplefilter("ignore")
p = LinearRegression(n_samples=2000, seed=0)
comp = optcmp.compare(p, [optcmp.gd, "lbfgs", optcmp.sgd(batch_size=256), optcmp.adadelta,
                          optcmp.gd(learning_rate=50.0, label="gd-diverging")],
                      backends=["numpy", "torch", "tensorflow"], tol=1e-3, max_iter=130,
                      repeats=2, progress=False)
comp.save("linreg.json")
open("linreg.table.txt", "w").write(comp.table() + "\n")
open("linreg.summary.txt", "w").write(comp.summary_table() + "\n")
open("linreg.verdict.txt", "w").write(comp.verdict() + "\n")
s = optcmp.suites.mgh()
sub = optcmp.suites.Suite("mgh3", s.problems[:3])
c2 = optcmp.compare(sub, ["lbfgs"], backends=["numpy"], tol=1e-6, max_iter=500, progress=False)
c2.save("suite.json")
open("suite.table.txt", "w").write(c2.table() + "\n")
f = FizzBuzzMLP()
c3 = optcmp.compare(f, [optcmp.sgd(learning_rate=0.5, batch_size=64)],
                    backends=["numpy", "torch"],
                    stopping=optcmp.LossTarget(0.01) | optcmp.MaxIter(300), progress=False)
c3.save("fizzbuzz.json")
open("fizzbuzz.table.txt", "w").write(c3.table() + "\n")
if os.path.exists("store.jsonl"):
    os.remove("store.jsonl")
optcmp.compare(LinearRegression(n_samples=500, seed=1), [optcmp.gd, "lbfgs"],
               backends=["numpy"], tol=1e-3, max_iter=50, progress=False, store="store.jsonl")
open("store.table.txt", "w").write(optcmp.Comparison.load("store.jsonl").table() + "\n")
