"""`optcmp run --help` and the text of docs/cli.md name the table and budget flags."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from optcmp.cli import build_parser

FLAGS = ("--wide", "--per-run", "--max-cpu-time", "--censor-ratio")
DOCS = Path(__file__).resolve().parent.parent / "docs" / "cli.md"


@pytest.mark.parametrize("flag", FLAGS)
def test_run_help_names_the_flag(flag, capsys):
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args(["run", "--help"])
    assert info.value.code == 0
    assert re.search(rf"(^|\s){re.escape(flag)}\b", capsys.readouterr().out, re.M), flag


@pytest.mark.parametrize("flag", FLAGS)
def test_the_cli_page_text_names_the_flag(flag):
    # the text above the generated reference block, not the block itself
    text = DOCS.read_text(encoding="utf-8").split("<!-- optcmp:cli-help -->")[0]
    assert f"`{flag}`" in text, flag
