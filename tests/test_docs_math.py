"""Formulas in the built site are rendered offline: MathML at build time, no raw TeX, no CDN.

``scripts/mkdocs_hooks.py`` renders every ``pymdownx.arithmatex`` formula with ``latex2mathml``
(the ``docs`` extra). The fast tests run the site's own Markdown extensions on every page with a
formula; the slow one builds the whole site and reads its HTML text.
"""

from __future__ import annotations

import html
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("latex2mathml")
markdown = pytest.importorskip("markdown")
pytest.importorskip("pymdownx")

#: Raw TeX delimiters that must not reach a reader.
RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$")


def _hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", ROOT / "scripts" /
                                                  "mkdocs_hooks.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def visible_text(page: str) -> str:
    """The text a reader sees: no tags, no code, no scripts or styles, entities decoded."""
    page = re.sub(r"<(script|style|code|pre)\b.*?</\1>", " ", page, flags=re.S)
    page = re.sub(r"<math\b.*?</math>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def _render(md_text: str) -> str:
    md = markdown.Markdown(extensions=["admonition", "tables", "pymdownx.superfences",
                                       "pymdownx.arithmatex"],
                           extension_configs={"pymdownx.arithmatex": {"generic": True}})
    return _hooks().render_math(md.convert(md_text))


def test_a_formula_becomes_mathml() -> None:
    out = _render(r"The gap $\frac{f(x_k) - f^*}{f(x_0) - f^*} \le \tau$ and" "\n\n"
                  r"$$ r_{p,s} = t_{p,s} / \min_s t_{p,s} $$")
    assert out.count("<math") == 2 and 'display="block"' in out and "<mfrac>" in out
    assert 'alttext="\\frac{f(x_k) - f^*}' in out
    assert not RAW_TEX.search(visible_text(out)) and "http" not in out


@pytest.mark.parametrize("page", ["concepts.md", "statistics-and-plots.md", "fizzbuzz-story.md",
                                  "getting-started.md", "stories/numpy-vs-tensorflow.md"])
def test_docs_pages_have_no_raw_tex(page: str) -> None:
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    assert "$" in text
    out = _render(text)
    assert "<math" in out
    seen = visible_text(out)
    assert not RAW_TEX.search(seen), RAW_TEX.search(seen)


def test_a_broken_formula_fails_loudly() -> None:
    with pytest.raises(ValueError, match="cannot render the formula"):
        _hooks().tex_to_mathml(r"\frac{1}{", display=False)


@pytest.mark.slow
def test_built_site_has_no_raw_tex_and_no_cdn(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", PYTHONPATH=str(ROOT))
    site = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(site)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    pages = list(site.rglob("*.html"))
    assert len(pages) > 20
    n_math = 0
    for f in pages:
        page = f.read_text(encoding="utf-8")
        n_math += page.count("<math")
        seen = visible_text(page)
        m = RAW_TEX.search(seen)
        assert m is None, f"{f.relative_to(site)}: raw TeX {seen[m.start() - 40:m.end() + 40]!r}"
        assert "<!--n:" not in page, f"{f.relative_to(site)}: a docs-numbers marker survived"
        assert not re.search(r"(cdn\.jsdelivr|mathjax|katex)", page, flags=re.I), f
    assert n_math > 50
