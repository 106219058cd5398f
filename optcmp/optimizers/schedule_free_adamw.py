"""Schedule-Free AdamW (Defazio et al. 2024): the rule and the judged sequence are in
:mod:`optcmp.optimizers._schedule_free`."""

from __future__ import annotations

from optcmp.optimizers._common import spec_from
from optcmp.optimizers._schedule_free import schedule_free_fields
from optcmp.optimizers.base import OptimizerInfo, OptimizerSpec, register_optimizer
from optcmp.optimizers.schedule import Schedule


def schedule_free_adamw(learning_rate: float = 0.0025, beta1: float = 0.9, beta2: float = 0.999,
                        eps: float = 1e-8, weight_decay: float = 0.0,
                        weight_lr_power: float = 2.0, eval_at: str = "x",
                        schedule: str | Schedule | None = "constant",
                        clip_norm: float | None = None, batch_size: int | None = None,
                        shuffle: bool = True, *, impl: str = "auto",
                        label: str = "") -> OptimizerSpec:
    r"""Schedule-Free AdamW (Defazio et al. 2024), full batch or minibatch.

    Parameters
    ----------
    learning_rate : float, default 0.0025
    beta1 : float, default 0.9
        Interpolation between the average ``x`` and the base iterate ``z``, in (0, 1).
    beta2 : float, default 0.999
    eps : float, default 1e-8
        Added to the bias-corrected root of the second moment.
    weight_decay : float, default 0.0
        ``lr * weight_decay * y`` added to the base step.
    weight_lr_power : float, default 2.0
    eval_at : {"x", "y"}, default "x"
        The sequence the run judges (objective, targets, final iterate).
    schedule : str or Schedule, default "constant"
    clip_norm : float, optional
    batch_size : int, optional
    shuffle : bool, default True
    impl : {"auto", "native", "reference"}
    label : str, optional

    Returns
    -------
    OptimizerSpec
    """
    return spec_from("schedule_free_adamw", locals())


register_optimizer(OptimizerInfo(**schedule_free_fields("schedule_free_adamw", True, 0.0025)), schedule_free_adamw)
