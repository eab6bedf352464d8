"""MkDocs hook: the CLI reference page, rendered from `cogbench.cli.build_parser()` at build time.

Every subcommand's `--help` is taken from the same argparse parsers the `cogbench` command runs,
so the page cannot drift from the code. It replaces the `<!-- cli-reference -->` line of cli.md.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

MARKER = "<!-- cli-reference -->"
WIDTH = "80"  # argparse wraps help to $COLUMNS: fixed, so the page is the same on every machine, and fits its column


def render() -> str:
    os.environ["COLUMNS"] = WIDTH
    from cogbench.cli import build_parser

    parser = build_parser()
    sections = ["## cogbench", "", "```text", parser.format_help().rstrip(), "```", ""]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, subparser in action.choices.items():
                sections += [f"## cogbench {name}", "", "```text", subparser.format_help().rstrip(), "```", ""]
    return "\n".join(sections)


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    if page.file.src_uri != "cli.md":
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"docs/cli.md has lost its {MARKER} line")
    return markdown.replace(MARKER, render())
