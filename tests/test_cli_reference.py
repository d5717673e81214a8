"""docs/command_line.md's reference is what tools/cli_reference.py generates from the
argument parser: a new, renamed or re-worded option fails here until ``make
cli-reference`` is run and the page committed."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import cli_reference  # noqa: E402


def test_cli_reference_in_docs_is_what_the_parser_generates():
    page = cli_reference.PAGE.read_text(encoding="utf-8")
    assert cli_reference.updated(page, cli_reference.generate()) == page, (
        "docs/command_line.md is stale: run make cli-reference and commit it"
    )


def test_cli_reference_names_every_command_and_option():
    section = cli_reference.generate()
    parsers, _ = cli_reference._subcommands(cli_reference.build_parser())
    for name, parser in parsers.items():
        assert f"`{name}`" in section
        if name in cli_reference.INTERNAL:
            continue
        for action in parser._actions:
            for flag in action.option_strings if action.dest != "help" else ():
                assert flag in section, f"{name} {flag} is missing from the reference"


def test_cli_reference_sees_an_option_added_to_the_parser():
    page = cli_reference.PAGE.read_text(encoding="utf-8")
    parser = cli_reference.build_parser()
    parsers, _ = cli_reference._subcommands(parser)
    parsers["report"].add_argument("--brand-new", help="an option the page does not have")
    section = cli_reference.generate(parser)
    assert "--brand-new" in section
    assert cli_reference.updated(page, section) != page


def test_cli_reference_check_exits_0_when_current():
    assert cli_reference.main(["--check"]) == 0
