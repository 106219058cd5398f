"""The complete example of docs/adding-an-optimizer.md runs as written and gives real values."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import numpy as np

import optcmp
from optcmp.optimizers import optimizer_names, unregister_optimizer

DOC = Path(__file__).resolve().parents[1] / "docs" / "adding-an-optimizer.md"


def _example() -> str:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1
    return blocks[0]


def test_the_documented_example_runs_and_registers_sign_gd():
    ns: dict = {}
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(_example(), str(DOC), "exec"), ns)
        assert "sign_gd" in optimizer_names()
        r = ns["result"]
        assert r.nit == 200 and out.getvalue().split()[1:] == ["200", "exponential(gamma=0.99)"]
        # the rule by hand: 200 sign steps with lr 0.01 * 0.99**k from x0 on the same problem
        p = ns["problem"]
        x = np.asarray(p.init_params(0), dtype=np.float64)
        for k in range(200):
            _, g = p.value_and_grad(x, p.train_data)
            x = x - 0.01 * 0.99 ** k * np.sign(g)
        np.testing.assert_allclose(r.x, x, rtol=0, atol=1e-12)
        assert optcmp.optimizers.canonical_optimizer("signSGD") == "sign_gd"
    finally:
        unregister_optimizer("sign_gd")


def test_building_blocks_are_public():
    import optcmp.optimizers as o

    for name in ("HyperParam", "OptimizerInfo", "UpdateRule", "ScheduledRule",
                 "register_optimizer", "unregister_optimizer", "positive_float", "positive_int",
                 "boolean", "one_of", "optional_positive_float", "common_params",
                 "TorchOptimizer", "KerasOptimizer", "ScipyMinimize", "schedule"):
        assert name in o.__all__ and getattr(o, name) is not None, name
