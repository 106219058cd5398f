"""MkDocs hooks: fill generated parts of pages from the code, so the docs cannot drift from it.

Markers replaced in a page's Markdown:

``<!-- optcmp:cli-help -->``
    The ``--help`` text of ``optcmp`` and of every sub-command, from ``optcmp.cli.build_parser()``.
``<!-- optcmp:examples -->``
    One section per ``examples/*.py``: its docstring (what it shows, expected output) and the
    command to run it.
``<!-- optcmp:changelog -->``
    The repository's ``CHANGELOG.md`` (its first heading dropped), or a pointer to it when the
    file does not exist.
``<!-- optcmp:optimizer-defaults -->``
    A table of every registered optimizer with its hyperparameters, defaults and reference,
    from ``optcmp.optimizers.optimizer_info``.

Formulas: ``pymdownx.arithmatex`` (generic mode) wraps the TeX of ``$...$``, ``\\(...\\)``
and ``$$...$$`` in ``<span class="arithmatex">`` / ``<div class="arithmatex">``;
:func:`on_page_content` renders each to MathML with ``latex2mathml`` (the ``docs`` extra) at
build time, so the site shows formulas offline, with no script and no CDN (browsers render
MathML Core natively). A formula that does not convert fails the build, naming the page.

Generated figures (``<!--n:page.key-->143<!--/n-->``, written by ``scripts/docs_numbers.py``)
keep their text and lose their markers, so that a marker inside a code block or a formula does
not show.
"""

from __future__ import annotations

import argparse
import ast
import html
import os
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _cli_help() -> str:
    from optcmp.cli import build_parser

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        parser = build_parser()
        parts = ["### `optcmp`", "", "```text", parser.format_help().rstrip(), "```", ""]
        for action in parser._actions:  # noqa: SLF001 - argparse keeps sub-parsers here
            if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
                for name, sub in action.choices.items():
                    parts += [f"### `optcmp {name}`", "", "```text", sub.format_help().rstrip(),
                              "```", ""]
        return "\n".join(parts)
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


def _examples() -> str:
    parts: list[str] = []
    for path in sorted((ROOT / "examples").glob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        title, _, body = doc.partition("\n")
        parts += [f"## `{path.name}`", "", f"**{title.strip()}**", "", body.strip(), "",
                  "```bash", f"python examples/{path.name}",
                  f"OPTCMP_QUICK=1 python examples/{path.name}   # reduced size, as in CI",
                  "```", ""]
    return "\n".join(parts)


def _changelog() -> str:
    path = ROOT / "CHANGELOG.md"
    if not path.exists():
        return "The changelog is kept in `CHANGELOG.md` at the root of the repository."
    lines = path.read_text(encoding="utf-8").splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    return "\n".join(lines)


def _optimizer_defaults() -> str:
    from optcmp.optimizers import optimizer_info, optimizer_names

    rows = ["| optimizer | hyperparameters (optcmp default) | summary | reference |",
            "| --- | --- | --- | --- |"]
    for name in optimizer_names():
        info = optimizer_info(name)
        hp = "<br>".join(f"`{k}={p.default!r}`" for k, p in info.params.items())
        rows.append(f"| `{name}` | {hp} | {info.summary} | {info.reference} |")
    return "\n".join(rows)


_MARKERS = {
    "<!-- optcmp:cli-help -->": _cli_help,
    "<!-- optcmp:examples -->": _examples,
    "<!-- optcmp:changelog -->": _changelog,
    "<!-- optcmp:optimizer-defaults -->": _optimizer_defaults,
}


#: The markers of a generated figure (see scripts/docs_numbers.py).
_NUMBER_MARKERS = re.compile(r"<!--n:[a-z0-9_.-]+-->|<!--/n-->")


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """Replace the markers listed in the module docstring with generated Markdown."""
    for marker, make in _MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, make())
    return _NUMBER_MARKERS.sub("", markdown)


#: What pymdownx.arithmatex (generic mode) writes around a formula.
_ARITHMATEX = re.compile(r'<(?P<tag>span|div) class="arithmatex">(?P<tex>.*?)</(?P=tag)>', re.S)
_DELIMS = ((r"\(", r"\)"), (r"\[", r"\]"), ("$$", "$$"), ("$", "$"))


def tex_to_mathml(tex: str, display: bool) -> str:
    """One TeX formula (with or without its delimiters) as a MathML ``<math>`` element.

    Raises ValueError when latex2mathml cannot convert it.
    """
    from latex2mathml.converter import convert

    tex = tex.strip()
    for left, right in _DELIMS:
        if tex.startswith(left) and tex.endswith(right) and len(tex) >= len(left) + len(right):
            tex = tex[len(left):len(tex) - len(right)].strip()
            break
    try:
        out = convert(tex, display="block" if display else "inline")
    except Exception as exc:  # latex2mathml raises several kinds
        raise ValueError(f"cannot render the formula {tex!r}: {exc}") from exc
    # the namespace is implied in HTML5; keep the page free of any URL
    out = out.replace(' xmlns="http://www.w3.org/1998/Math/MathML"', "", 1)
    return out.replace("<math ", f'<math alttext="{html.escape(tex, quote=True)}" ', 1)


def render_math(page_html: str) -> str:
    """Replace every arithmatex span/div of a page with server-side MathML."""

    def repl(m: re.Match[str]) -> str:
        display = m["tag"] == "div"
        mathml = tex_to_mathml(html.unescape(m["tex"]), display)
        return f'<div class="arithmatex">{mathml}</div>' if display else \
            f'<span class="arithmatex">{mathml}</span>'

    return _ARITHMATEX.sub(repl, page_html)


def on_page_content(html_text: str, page: Any = None, **kwargs: Any) -> str:
    """Render the page's formulas to MathML (see the module docstring)."""
    try:
        return render_math(html_text)
    except ValueError as exc:
        where = getattr(getattr(page, "file", None), "src_path", "?")
        raise ValueError(f"{where}: {exc}") from exc
