"""Quickstart: compare five optimizers on a linear regression, time-to-target table."""

import optcmp
from optcmp.problems import LinearRegression

problem = LinearRegression(n_samples=100_000, seed=0)  # or LinearRegression.from_csv(path, ...)
optimizers = [optcmp.gd, optcmp.diag_newton, optcmp.adadelta(rho=0.9),
              optcmp.sgd(batch_size=256), "lbfgs"]
result = optcmp.compare(problem, optimizers, backends=["numpy"], tol=1e-6, max_time=2.0)
print(result.table())                     # sorted by time-to-target, lstsq floor included
best = result.best()                      # a RunResult: x, fun, nit, nfev, time_to_target, trace
print(f"fastest: {best.label}, {best.time_to_target:.3f}s" if best else "none converged")
