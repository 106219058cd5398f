"""Each native optimizer at its framework's own cost: ``torch.optim.LBFGS`` observed one
iteration per ``step()`` spends the evaluations torch's own loop spends for the same iterates."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import lr_a, lr_b, lr_c, needs_torch

import optcmp
from optcmp.problems import LinearRegression
from optcmp.stopping import MaxIter


def _torch_own_loop(problem: LinearRegression, iterations: int) -> tuple[np.ndarray, int, int]:
    """``torch.optim.LBFGS`` run as torch runs it: one ``step()`` of ``iterations`` iterations
    (optcmp's options), the closure the problem's own formula on the transposed design matrix
    a full-batch torch run reads; the iterate, the closure calls and the iterations done."""
    import torch

    AT = torch.tensor(problem.train_data["A"].T)
    y = torch.tensor(problem.train_data["y"])
    x = torch.tensor(problem.init_params(0), dtype=torch.float64).requires_grad_(True)
    opts = optcmp.optimizers.optimizer_info("lbfgs").native("torch").options(
        optcmp.lbfgs(max_iter_per_step=iterations).hyperparameters)
    opt = torch.optim.LBFGS([x], **opts)
    calls = [0]

    def closure() -> torch.Tensor:
        calls[0] += 1
        with torch.no_grad():
            r = AT.T @ x - y
            x.grad = (AT @ r) * (2.0 / r.numel())
            return torch.sum(r * r) / r.numel()

    opt.step(closure)
    return x.detach().numpy().copy(), calls[0], int(opt.state[x]["n_iter"])


@needs_torch
@pytest.mark.parametrize("make, iterations", [
    # optcmp run's main job: 6 iterations to its target
    pytest.param(lambda: LinearRegression(n_samples=100_000), 6, marks=pytest.mark.slow),
    (lr_a, 4), (lr_b, 32), (lr_c, 60)])
def test_torch_lbfgs_spends_the_evaluations_of_torchs_own_loop(make, iterations):
    """Observed one iteration per step(), torch's L-BFGS used to re-evaluate every incoming
    iterate (main job: 16 evaluations for 6 iterations); the right count is torch's own loop's,
    at the same iterate."""
    import torch

    torch.set_num_threads(1)
    problem = make()
    # torch's loop stops inside its step() where a line search makes no move at all, at an
    # iteration that follows the last bit of every product (13 of lr_c's 60 on AVX-512, none
    # on AVX2): optcmp's run is compared over the iterations torch's loop did
    x, calls, done = _torch_own_loop(problem, iterations)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = optcmp.run(problem, optcmp.lbfgs(impl="native"), backend="torch", threads=1,
                       stopping=MaxIter(done))
    assert r.nit == done and done >= min(iterations, 12)
    np.testing.assert_allclose(r.x, x, rtol=1e-12, atol=0)
    assert r.nfev == calls and r.njev == calls
