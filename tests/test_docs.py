"""The README and the user guide say what is true: their Python snippets run and print
what their ``# ->`` comments say, every relative link points to a file of the repository
(and none points outside it), and every command line they show uses commands, options
and choices the argument parser has."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
#: the pages this project writes as its user guide: every option they name must exist
GUIDE = [
    ROOT / "README.md",
    *(
        ROOT / "docs" / f"{n}.md"
        for n in (
            "panel",
            "scan",
            "frame_ranges",
            "fix_and_export",
            "command_line",
            "audit",
            "performance",
            "python_api",
        )
    ),
]

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"```(\w*)\n(.*?)```", re.S)
INLINE = re.compile(r"`([^`\n]+)`")
COMMAND = re.compile(r"(?:hierarchy_inspector\s+)?\b(demo|report|export|fix|audit)\b((?:\s+\S+)*)")


def _python_blocks(page: Path) -> list[str]:
    return [code for lang, code in FENCE.findall(page.read_text(encoding="utf-8")) if lang == "python"]


def _expected_and_printed(code: str) -> tuple[list[str], list[str]]:
    """The ``# -> OUTPUT`` comments of the print lines, and what the code prints."""
    expected = []
    for line in code.splitlines():
        if line.startswith("print("):
            assert "-> " in line, f"a print line without its '# -> output' comment: {line}"
            expected.append(line.rsplit("-> ", 1)[1])
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT / "build" if (ROOT / "build").is_dir() else None,
    )
    assert run.returncode == 0, run.stderr
    return expected, run.stdout.splitlines()


def test_readme_python_api_snippet_prints_what_it_says():
    readme = ROOT / "README.md"
    blocks = _python_blocks(readme)
    assert len(blocks) == 1, "the README has one Python snippet (the API in ten lines)"
    expected, printed = _expected_and_printed(blocks[0])
    assert len(expected) >= 3
    assert printed == expected


@pytest.mark.parametrize("index", range(2))
def test_docs_python_api_snippets_print_what_they_say(index):
    blocks = _python_blocks(ROOT / "docs" / "python_api.md")
    assert len(blocks) == 2
    expected, printed = _expected_and_printed(blocks[index])
    assert expected and printed == expected


def test_a_snippet_that_prints_otherwise_is_caught():
    expected, printed = _expected_and_printed("print(1 + 1)  # -> 3\n")
    assert printed != expected


def _links(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return LINK.findall(text)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_links_point_to_files_in_the_repository(page):
    assert page.is_file(), f"{page.relative_to(ROOT)} is missing"
    links = _links(page)
    outside = [t for t in links if re.match(r"[a-z][a-z0-9+.-]*:", t) or t.startswith("//")]
    assert outside == [], f"links outside the repository: {outside}"
    broken = []
    for target in links:
        path = target.split("#", 1)[0]
        if not path:  # an anchor in the same page
            continue
        resolved = (page.parent / path).resolve()
        if not resolved.exists() or ROOT not in (resolved, *resolved.parents):
            broken.append(target)
    assert broken == [], f"{page.relative_to(ROOT)}: links to nothing in the repository: {broken}"


def test_the_link_check_sees_a_broken_link(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("[a](missing.md) ![b](pic.png#x) [c](https://example.com)\n```\n[d](in-code.md)\n```\n")
    assert _links(page) == ["missing.md", "pic.png#x", "https://example.com"]


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    from hierarchy_inspector.addon.cli.arguments import build_parser

    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {flag: a for a in parser._actions for flag in a.option_strings}


def _command_lines(page: Path) -> list[str]:
    """Command lines of this project in code blocks (continuations joined) and inline code."""
    text = page.read_text(encoding="utf-8")
    lines = []
    for lang, code in FENCE.findall(text):
        if lang in ("", "sh"):
            joined = re.sub(r"\\\n\s*", " ", code)
            lines += [ln for ln in joined.splitlines() if re.search(r"-[mc] hierarchy_inspector ", ln)]
    lines += [span for span in INLINE.findall(FENCE.sub("", text)) if COMMAND.fullmatch(span)]
    return lines


def _problems(line: str, parsers: dict[str, argparse.ArgumentParser]) -> list[str]:
    found = COMMAND.search(line[line.find("hierarchy_inspector") :] if "hierarchy_inspector" in line else line)
    if found is None or found.group(1) not in parsers:
        return [f"no command in {line!r}"] if "hierarchy_inspector <" not in line else []
    options = _options(parsers[found.group(1)])
    words = found.group(2).replace("'", " ").split()
    problems = []
    for k, word in enumerate(words):
        flag = word.split("=", 1)[0]
        if not flag.startswith("--") or flag == "--help":
            continue
        action = options.get(flag)
        if action is None:
            problems.append(f"{found.group(1)} has no {flag} ({line!r})")
        elif action.choices and k + 1 < len(words) and words[k + 1] not in action.choices:
            problems.append(f"{found.group(1)} {flag} has no choice {words[k + 1]!r} ({line!r})")
    return problems


@pytest.mark.parametrize("page", GUIDE, ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_command_lines_use_options_that_exist(page):
    parsers = _subparsers()
    lines = _command_lines(page)
    problems = [p for line in lines for p in _problems(line, parsers)]
    assert problems == []


def test_docs_inline_options_exist_in_some_command():
    """Every option named alone in the guide's prose (`--resume`) is one a command has."""
    every = {flag for p in _subparsers().values() for flag in _options(p)}
    unknown = set()
    for page in GUIDE:
        text = FENCE.sub("", page.read_text(encoding="utf-8"))
        for span in INLINE.findall(text):
            flag = re.match(r"(--[a-z][a-z-]*)", span)
            if flag and flag.group(1) not in every:
                unknown.add(f"{page.name}: {span}")
    assert unknown == set()


def test_the_command_check_sees_a_wrong_option_and_choice():
    parsers = _subparsers()
    assert _problems("python -m hierarchy_inspector export a.blend --target obj --out x --frames scene", parsers)
    assert _problems("`audit --shards 2/4`", parsers)
    assert not _problems("python -m hierarchy_inspector audit --merge a b --out c", parsers)
