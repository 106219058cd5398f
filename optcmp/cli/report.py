"""``optcmp report``: render a saved comparison (JSON or run store) as one offline HTML file,
and optionally export the traces (CSV/Parquet) and the plots."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from optcmp.cli.common import CLIError, cannot_write, check_files, csv_list, read_errors

#: Formats ``--plots-dir`` can write.
PLOT_FORMATS = ("png", "svg", "pdf")


def add_parser(sub: Any) -> None:
    """Add ``optcmp report`` to the sub-command parsers ``sub``."""
    p = sub.add_parser(
        "report", help="render a saved comparison (JSON) as one offline HTML file",
        description="Read a comparison saved with 'optcmp run --out' or Comparison.save and "
                    "write a self-contained HTML report (inline plots, no network); optionally "
                    "export the traces as long-format CSV/Parquet and the plots as files.")
    p.add_argument("results", help="comparison JSON file")
    p.add_argument("-o", "--output", default="report.html", help="HTML path (default %(default)s)")
    p.add_argument("--title", default=None, help="page title")
    p.add_argument("--images", choices=("svg", "png"), default="svg",
                   help="inline SVG (default) or base64 PNG plots")
    p.add_argument("--no-plots", action="store_true", help="leave the plots out")
    p.add_argument("--csv", default=None, help="also write the traces as long-format CSV")
    p.add_argument("--parquet", default=None, help="also write the traces as Parquet (pyarrow)")
    p.add_argument("--plots-dir", default=None, help="also save every plot in this folder")
    p.add_argument("--formats", type=csv_list, default=["png"],
                   help="formats for --plots-dir: png,svg,pdf (default png)")
    p.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    """Run ``optcmp report``."""
    bad = [f for f in args.formats if f not in PLOT_FORMATS]
    if bad:
        raise CLIError(f"--formats: unknown format(s) {bad}; allowed: {', '.join(PLOT_FORMATS)}")
    check_files([("--output", args.output), ("--csv", args.csv), ("--parquet", args.parquet)],
                [("results", args.results)])
    if args.plots_dir is not None and os.path.exists(args.plots_dir) and not os.path.isdir(
            args.plots_dir):
        raise CLIError(f"--plots-dir: {args.plots_dir} exists and is not a directory")
    comp = _load(args.results)
    try:
        with cannot_write():
            _write(args, comp)
    except ImportError as exc:
        raise CLIError(str(exc)) from None
    return 0


def _write(args: argparse.Namespace, comp: Any) -> None:
    """The HTML report, and the CSV, Parquet and plot files asked for."""
    comp.to_html(args.output, title=args.title, images=args.images, plots=not args.no_plots)
    print(f"wrote {args.output} ({len(comp)} runs)", file=sys.stderr)
    if args.csv:
        n = comp.to_csv(args.csv)
        print(f"wrote {args.csv} ({n} trace rows)", file=sys.stderr)
    if args.parquet:
        n = comp.to_parquet(args.parquet)
        print(f"wrote {args.parquet} ({n} trace rows)", file=sys.stderr)
    if args.plots_dir:
        files = comp.save_plots(args.plots_dir, formats=args.formats)
        print(f"wrote {len(files)} plot file(s) to {args.plots_dir}", file=sys.stderr)


def _load(path: str) -> Any:
    """The comparison saved at ``path``; a file that cannot be read is a :class:`CLIError`."""
    from optcmp.comparison import Comparison
    try:
        with read_errors("", path, "; give the comparison JSON file (optcmp run --out)"):
            return Comparison.load(path)
    except ValueError as exc:
        raise CLIError(str(exc)) from None


__all__ = ["PLOT_FORMATS", "add_parser", "command"]
