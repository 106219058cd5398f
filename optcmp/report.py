"""Old home of the offline HTML report; the code lives in :mod:`optcmp.analysis.report`. New
code imports that module."""

from optcmp.analysis.format import NOT_REACHED
from optcmp.analysis.report import IMAGE_FORMATS, png_img, svg_inline, to_html, verdict

__all__ = ["IMAGE_FORMATS", "NOT_REACHED", "png_img", "svg_inline", "to_html", "verdict"]
