"""The run settings on the command line: every :class:`~optcmp.engine.RunConfig` field with a
``"flag"`` in its metadata is a flag of the commands it names, so that a new setting is one
RunConfig field.
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass
from typing import Any

from optcmp.cli.common import number
from optcmp.engine.config import Flag, RunConfig

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

#: What the help texts of :class:`~optcmp.engine.config.Flag` may name in braces.
HELP_VALUES = {"default_max_iter": f"{DEFAULT_MAX_ITER:,}"}


@dataclass(frozen=True)
class Setting:
    """A run setting on the command line: a RunConfig field and its :class:`Flag`."""

    name: str
    flag: Flag
    default: Any

    @property
    def option(self) -> str:
        """The option, ``--`` and the setting with dashes (``--max-iter``)."""
        return "--" + self.name.replace("_", "-")

    def argument(self, command: str) -> dict[str, Any]:
        """The keywords of ``add_argument`` for the flag in ``command``."""
        f = self.flag
        text = f.helps[command]
        kwargs: dict[str, Any] = {
            "dest": self.name, "default": f.defaults.get(command, self.default),
            "help": None if text is None else text.format_map(HELP_VALUES)}
        extra = {"type": None if f.value is None else number(*f.value), "choices": f.choices,
                 "metavar": f.metavar}
        return {**kwargs, **{k: v for k, v in extra.items() if v is not None}}


#: The run settings on the command line, in RunConfig's field order.
SETTINGS = tuple(Setting(f.name, f.metadata["flag"], f.default)
                 for f in dataclasses.fields(RunConfig) if "flag" in f.metadata)


class SettingFlags:
    """Adds a command's run-setting flags (:data:`SETTINGS`) to its parser, where it places them."""

    def __init__(self, parser: argparse.ArgumentParser, command: str) -> None:
        self.parser = parser
        self.command = command
        self.flags = {s.name: s for s in SETTINGS if command in s.flag.helps}
        self.added: set[str] = set()

    def add(self, *settings: str) -> None:
        """Add the flags of ``settings``, in this order."""
        for name in settings:
            setting = self.flags[name]
            self.parser.add_argument(setting.option, **setting.argument(self.command))
            self.added.add(name)

    def add_rest(self) -> None:
        """Add every flag of the command not added yet, in RunConfig's field order."""
        self.add(*(name for name in self.flags if name not in self.added))


def setting_values(args: argparse.Namespace, command: str) -> dict[str, Any]:
    """The values of ``command``'s run-setting flags, by RunConfig field."""
    return {s.name: getattr(args, s.name) for s in SETTINGS if command in s.flag.helps}


__all__ = ["DEFAULT_MAX_ITER", "DEFAULT_MAX_TIME", "HELP_VALUES", "MAIN_ROWS", "MAIN_TOL",
           "SETTINGS", "Setting", "SettingFlags", "setting_values"]
