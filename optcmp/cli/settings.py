"""The run settings on the command line: one table, read into one :class:`~optcmp.engine.RunConfig`.

Each entry of :data:`FLAGS` is a :class:`~optcmp.engine.RunConfig` field: its option is the field's
name (``--max-iter`` for ``max_iter``), its default the field's default unless a command gives
its own, and it says which commands take it with which help. A command places its flags among
its other options (:class:`SettingFlags`) and reads them back as one dict of settings
(:func:`setting_values`), so that a new setting reaches every command that lists it here without
editing the commands: its value lands in the command's RunConfig, and from there in the runs,
their store keys and the comparison's settings.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from optcmp.cli.common import fraction, nonneg_int, positive_float, positive_int, ratio_above_one
from optcmp.engine import RunConfig
from optcmp.frameworks.base import DTYPES, GRADIENTS

#: Iterations each run of ``optcmp run`` may spend: its budget, the same on any machine under
#: any load (every row of the main job reaches its target well within it).
DEFAULT_MAX_ITER = 5000
#: Timed wall-clock seconds each run may spend: no cap unless the user asks (``--max-time``).
DEFAULT_MAX_TIME = None
#: Rows of the main job's generated regression (``optcmp run`` with no problem options);
#: ``--rows 1000000`` gives the full-size problem.
MAIN_ROWS = 100_000
#: The main job's relative-suboptimality target when neither ``--tol`` nor ``--target-loss``
#: is given.
MAIN_TOL = 1e-4

_DEVICE = "device for torch/tensorflow (cpu, cuda)"
_TOL = ("relative suboptimality target (default 1e-4 for the main job, else 1e-6); needs a "
        "problem with a known optimum")
_SEED = "seed of data and runs"
_EVAL_EVERY = ("minibatch optimizers (sgd): steps between two evaluations of the full "
               "objective (default: one epoch)")


@dataclass(frozen=True)
class Flag:
    """A run setting on the command line.

    Attributes
    ----------
    setting : str
        The :class:`~optcmp.engine.RunConfig` field (and the argparse ``dest``).
    helps : mapping of str to str or None
        The commands that take the flag, each with its help text (``%(default)s`` allowed).
    type : callable, optional
        The argparse type (parses and checks one value).
    choices : tuple, optional
    metavar : str, optional
    defaults : mapping of str to object
        A command's default where it is not the field's.
    """

    setting: str
    helps: Mapping[str, str | None]
    type: Callable[[str], Any] | None = None
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    defaults: Mapping[str, Any] = field(default_factory=dict)

    @property
    def option(self) -> str:
        """The option, ``--`` and the setting with dashes (``--max-iter``)."""
        return "--" + self.setting.replace("_", "-")

    def default(self, command: str) -> Any:
        """The flag's default in ``command``: the command's own, else the field's.

        Parameters
        ----------
        command : str

        Returns
        -------
        object
        """
        if command in self.defaults:
            return self.defaults[command]
        return FIELD_DEFAULTS[self.setting]


#: Every RunConfig field's default.
FIELD_DEFAULTS = {f.name: f.default for f in dataclasses.fields(RunConfig)}

#: The run settings on the command line, by command (``run``, ``tune``).
FLAGS = (
    Flag("backend", {"tune": "backend of the tuning runs"}),
    Flag("device", {"run": _DEVICE, "tune": _DEVICE}),
    Flag("dtype", {"run": None, "tune": None}, choices=DTYPES),
    Flag("tol", {"run": _TOL, "tune": _TOL}, type=fraction,
         defaults={"run": None, "tune": None}),  # None: not given (the target decides)
    Flag("max_time", {"run": "timed wall-clock seconds each run may spend: a cap only when "
                             "you ask for one (it depends on the load; default none)"},
         type=positive_float, defaults={"run": DEFAULT_MAX_TIME}),
    Flag("max_iter", {"run": "iterations each run may spend: the budget, the same on any "
                             f"machine under any load (default {DEFAULT_MAX_ITER:,}; "
                             "fizzbuzz 30,000)"},
         type=positive_int, defaults={"run": None}),
    Flag("max_cpu_time", {"run": "process CPU seconds of timed steps each run may spend (status "
                                 "max_cpu_time; default: none)"},
         type=positive_float, metavar="SECONDS"),
    Flag("censor_ratio", {"run": "censor a run once its CPU time exceeds this many times the "
                                 "best time-to-target of its repetition (default %(default)s; "
                                 "--no-early-stop: never)"},
         type=ratio_above_one, metavar="R"),
    Flag("threads", {"run": "CPU threads for every backend (BLAS, torch, TensorFlow pools), the "
                            "same for all (default %(default)s: reproducible on a shared "
                            "machine)",
                     "tune": "CPU threads of every tuning run, the same for every backend "
                             "(default %(default)s)"}, type=positive_int),
    Flag("execution", {"run": "auto, step or fused, or several comma-separated (e.g. "
                              "step,fused: both side by side); default %(default)s"},
         metavar="MODES"),
    Flag("gradient", {"run": "torch/TensorFlow gradients: the problem's formula where it "
                             "declares one (auto), always the framework's autodiff, or the "
                             "formula"}, choices=GRADIENTS),
    Flag("seed", {"run": _SEED, "tune": _SEED}, type=nonneg_int),
    Flag("eval_every", {"run": _EVAL_EVERY, "tune": _EVAL_EVERY}, type=positive_int,
         metavar="N"),
)


class SettingFlags:
    """Adds a command's run-setting flags (:data:`FLAGS`) to its parser, where it places them.

    Parameters
    ----------
    parser : argparse.ArgumentParser
    command : str
        The command (``"run"``, ``"tune"``).
    """

    def __init__(self, parser: argparse.ArgumentParser, command: str) -> None:
        self.parser = parser
        self.command = command
        self.flags = {f.setting: f for f in FLAGS if command in f.helps}
        self.added: set[str] = set()

    def add(self, *settings: str) -> None:
        """Add the flags of ``settings``, in this order.

        Parameters
        ----------
        *settings : str
            RunConfig fields the command takes (:data:`FLAGS`).
        """
        for name in settings:
            f = self.flags[name]
            kwargs: dict[str, Any] = {"default": f.default(self.command),
                                      "help": f.helps[self.command]}
            for key in ("type", "choices", "metavar"):
                if getattr(f, key) is not None:
                    kwargs[key] = getattr(f, key)
            self.parser.add_argument(f.option, dest=f.setting, **kwargs)
            self.added.add(name)

    def add_rest(self) -> None:
        """Add every flag of the command not added yet, in the order of :data:`FLAGS`."""
        self.add(*(name for name in self.flags if name not in self.added))


def setting_values(args: argparse.Namespace, command: str) -> dict[str, Any]:
    """The values of ``command``'s run-setting flags, by RunConfig field.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed with the flags of :class:`SettingFlags`.
    command : str

    Returns
    -------
    dict
        Field name -> value given or defaulted (``tol`` is None when not given).
    """
    return {f.setting: getattr(args, f.setting) for f in FLAGS if command in f.helps}


__all__ = ["DEFAULT_MAX_ITER", "DEFAULT_MAX_TIME", "FIELD_DEFAULTS", "FLAGS",
           "MAIN_ROWS", "MAIN_TOL", "Flag", "SettingFlags", "setting_values"]
