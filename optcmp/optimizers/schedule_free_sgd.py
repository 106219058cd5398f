"""Schedule-Free SGD (Defazio et al. 2024): :mod:`optcmp.optimizers.schedule_free_adamw`'s
method with the base step :math:`d_t = g_t`."""

from __future__ import annotations

from optcmp.optimizers._common import spec_from
from optcmp.optimizers._schedule_free import schedule_free_fields
from optcmp.optimizers.base import OptimizerInfo, OptimizerSpec, register_optimizer
from optcmp.optimizers.schedule import Schedule


def schedule_free_sgd(learning_rate: float = 1.0, beta1: float = 0.9, weight_decay: float = 0.0,
                      weight_lr_power: float = 2.0, eval_at: str = "x",
                      schedule: str | Schedule | None = "constant",
                      clip_norm: float | None = None, batch_size: int | None = None,
                      shuffle: bool = True, *, impl: str = "auto",
                      label: str = "") -> OptimizerSpec:
    r"""Schedule-Free SGD (Defazio et al. 2024), full batch or minibatch.

    Parameters
    ----------
    learning_rate : float, default 1.0
    beta1 : float, default 0.9
    weight_decay : float, default 0.0
    weight_lr_power : float, default 2.0
    eval_at : {"x", "y"}, default "x"
    schedule : str or Schedule, default "constant"
    clip_norm : float, optional
    batch_size : int, optional
    shuffle : bool, default True
    impl : {"auto", "native", "reference"}
    label : str, optional

    Returns
    -------
    OptimizerSpec

    See Also
    --------
    schedule_free_adamw : the parameters' meanings.
    """
    return spec_from("schedule_free_sgd", locals())


register_optimizer(OptimizerInfo(**schedule_free_fields("schedule_free_sgd", False, 1.0)), schedule_free_sgd)
