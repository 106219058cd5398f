"""Griffe extension for the docs build: render the reST bits of optcmp's numpydoc docstrings.

The docstrings follow numpydoc, whose inline markup is reStructuredText: ``:func:`name```,
``:math:`x```, ``.. math::`` blocks and double-backtick literals. mkdocstrings renders docstrings
as Markdown, so this extension rewrites those constructs before rendering:

- ``:math:`x``` becomes ``$x$`` and a ``.. math::`` block becomes a ``$$ ... $$`` block
  (pymdownx.arithmatex);
- ``:func:`~a.b```, ``:class:``, ``:meth:``, ``:data:``, ``:mod:``, ``:attr:`` and ``:exc:``
  become inline code (the ``~`` prefix is dropped);
- a ``Name::`` line followed by an indented block becomes ``Name:`` and a fenced code block.

Only the text handed to the docs renderer changes; the code's docstrings are untouched.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|data|mod|attr|exc|obj):`~?([^`]+)`")
_MATH = re.compile(r":math:`([^`]+)`")


def _blocks(text: str) -> str:
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        is_math = stripped.startswith(".. math::")
        is_literal = stripped.endswith("::") and not stripped.startswith("..") and stripped != "::"
        if not (is_math or is_literal):
            out.append(line)
            i += 1
            continue
        indent = len(line) - len(line.lstrip())
        inline = stripped[len(".. math::"):].strip() if is_math else ""
        j = i + 1
        body: list[str] = []
        while j < len(lines) and (not lines[j].strip() or
                                  len(lines[j]) - len(lines[j].lstrip()) > indent):
            body.append(lines[j])
            j += 1
        while body and not body[-1].strip():
            body.pop()
        nonblank = [b for b in body if b.strip()]
        dedent = min((len(b) - len(b.lstrip()) for b in nonblank), default=0)
        content = [b[dedent:] for b in body]
        while content and not content[0].strip():
            content.pop(0)
        pad = " " * indent
        if is_math:
            math = ([inline] if inline else []) + content
            if any("&" in c or "\\\\" in c for c in math):  # aligned rows need an environment
                math = ["\\begin{aligned}", *math, "\\end{aligned}"]
            out += ["", pad + "$$"] + [pad + c if c.strip() else "" for c in math]
            out += [pad + "$$", ""]
        else:
            out.append(line.rstrip()[:-1])  # "Example::" -> "Example:"
            out += ["", pad + "```text"] + [pad + c if c.strip() else "" for c in content]
            out += [pad + "```", ""]
        i = j
    return "\n".join(out)


def rst_to_markdown(text: str) -> str:
    """Rewrite the reST constructs listed in the module docstring as Markdown."""
    text = _blocks(text)
    text = _MATH.sub(lambda m: f"${m.group(1)}$", text)
    return _ROLE.sub(lambda m: f"`{m.group(1)}`", text)


class RstToMarkdown(griffe.Extension):
    """Rewrite every docstring's reST markup before mkdocstrings renders it."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Called once per loaded object (module, class, function, attribute)."""
        if obj.docstring is not None:
            obj.docstring.value = rst_to_markdown(obj.docstring.value)
