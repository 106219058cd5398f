r"""Schedule-Free SGD and AdamW (Defazio et al. 2024): three sequences, and which one is judged.

The gradient is taken at :math:`y`, the base optimizer steps :math:`z`, and :math:`x` averages
the :math:`z`:

.. math::

    z_{t} &= z_{t-1} - \eta_t \left(d_t + \lambda y_{t-1}\right), \quad
    c_t = \frac{\eta_{\max,t}^{p}}{\sum_{i \le t} \eta_{\max,i}^{p}} \\
    x_t &= (1 - c_t)\, x_{t-1} + c_t z_t, \quad y_t = \beta_1 x_t + (1 - \beta_1) z_t

with :math:`d_t = g_t` (SGD) or :math:`g_t / (\sqrt{v_t / (1 - \beta_2^t)} + \epsilon)`,
:math:`v_t = \beta_2 v_{t-1} + (1-\beta_2) g_t^2` (AdamW), :math:`\eta_{\max,t}` the largest
(scheduled) learning rate so far, :math:`p` = ``weight_lr_power``. The iterate optcmp steps is
:math:`y` (the parameters a framework holds); ``eval_at="x"`` judges
:math:`x = (y - (1-\beta_1) z) / \beta_1`, the sequence the method is meant to be evaluated
at (``optax.contrib.schedule_free_eval_params``), ``eval_at="y"`` the parameters themselves.
The run's objective, targets and final iterate are those of the judged sequence, evaluated
after every step off the clock. optax's form; the learning rate of step ``k`` is
``learning_rate * s(k)`` for the base step and the weights alike.

References
----------
A. Defazio, X. Yang, H. Mehta, K. Mishchenko, A. Khaled and A. Cutkosky, "The Road Less
Scheduled", NeurIPS 2024, arXiv:2405.15682.
"""

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
