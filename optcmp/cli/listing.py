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
        doc = (cls.__doc__ or "").strip().splitlines()[0]
        print(f"  {name:20s} {doc}")
    print("suites:")
    for name, build in SUITES.items():
        suite = build()
        print(f"  {name:20s} {len(suite)} problems (--suite {name})")
    print("optimizers:")
    for name in optimizer_names():
        info = optimizer_info(name)
        hp = ", ".join(f"{k}={p.default!r}" for k, p in info.params.items())
        alias = f" (aliases: {', '.join(info.aliases)})" if info.aliases else ""
        print(f"  {name:20s} {info.summary}; defaults: {hp}{alias}")
    print("backends:")
    for name, b in BACKENDS.items():
        ok = is_available(name)
        how = "installed" if ok else f"not installed: pip install 'optcmp[{b.extra}]'"
        print(f"  {name:20s} {how}")
    return 0


__all__ = ["add_parser", "command"]
