"""``optcmp list``: the problems, suites, optimizers (with their defaults) and backends."""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(sub: Any) -> None:
    """Add ``optcmp list`` to the sub-command parsers ``sub``."""
    p = sub.add_parser("list", help="problems, optimizers and backends (with availability)")
    p.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    """Run ``optcmp list``: print every problem, suite, optimizer and backend."""
    from optcmp.frameworks import BACKENDS, is_available
    from optcmp.optimizers import optimizer_info, optimizer_names
    from optcmp.problems import PROBLEMS
    from optcmp.suites import SUITES
    print("problems:")
    for name, cls in PROBLEMS.items():
        _item(name, (cls.__doc__ or "").strip().splitlines()[0])
    from optcmp.problems import digits
    for name in ("digits_mlp", "digits_cnn"):
        doc = (getattr(digits, name).__doc__ or "").strip().splitlines()[0]
        _item(name.replace("_", "-"), doc.replace("``", "").rstrip(".") + "; one per framework")
    print("suites:")
    for name, build in SUITES.items():
        _item(name, f"{len(build())} problems (--suite {name})")
    print("optimizers:")
    for name in optimizer_names():
        info = optimizer_info(name)
        hp = ", ".join(f"{k}={p.default!r}" for k, p in info.params.items())
        _item(name, info.summary, f"defaults: {hp}",
              *([f"aliases: {', '.join(info.aliases)}"] if info.aliases else []))
    print("backends:")
    for name, b in BACKENDS.items():
        _item(name, "installed" if is_available(name) else
              f"not installed: from the checkout, pip install -c constraints/ci.txt '.[{b.extra}]'")
    return 0


def _item(name: str, *parts: str) -> None:
    """One listed item: its name, then each part on its own lines, within 120 columns."""
    import textwrap
    for i, part in enumerate(parts):
        first = f"  {name:20s} " if i == 0 else " " * 23
        print("\n".join(textwrap.wrap(part, 120, initial_indent=first, subsequent_indent=" " * 25,
                                     break_long_words=False, break_on_hyphens=False)))


__all__ = ["add_parser", "command"]
