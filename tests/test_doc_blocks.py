"""Every shell and Python block of README.md and docs/*.md runs as written, or says why not (issue 34).

A block is a fenced ```bash, ```sh, ```shell, ```console or ```python block (an unlabelled block
is program output, not something to type). One preceded by `<!-- not run: WHY -->` is not run
(a GPU, the network, a paid API, a placeholder name); every other block runs here, README first
and then the site's pages in the order of mkdocs.yml's nav, in one fresh folder as a new user
would: shell blocks through `bash -e` (each line must succeed), Python blocks in a fresh
interpreter after the earlier Python blocks (a later block uses an earlier one's names). Raw files
come from a real local HTTP server mirroring raw.githubusercontent.com, as in test_hints.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from cogbench.dataset_builders.fetch import PUBLIC_SOURCES

from raw_mirror import lay_out_mirror, serve
from tiny_models import build_tiny_llava

ROOT = Path(__file__).resolve().parents[1]
BIN = str(Path(sys.executable).parent)
SHELL = ("bash", "sh", "shell", "console")
FENCE = re.compile(r"^```(\w*)\s*$")
NOT_RUN = re.compile(r"^<!-- not run: (.+) -->$")


@dataclass(frozen=True)
class Block:
    page: str
    line: int  # of the opening fence, 1-based
    language: str
    code: str
    not_run: str | None  # why, when marked


def blocks(path: Path) -> list[Block]:
    """The fenced code blocks of one Markdown file, with the marker on the line before each."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found, index = [], 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
        marker = NOT_RUN.match(lines[index - 1]) if index else None
        found.append(
            Block(
                path.relative_to(ROOT).as_posix(),
                index + 1,
                opening.group(1),
                "\n".join(lines[index + 1 : end]) + "\n",
                marker.group(1).strip() if marker else None,
            )
        )
        index = end + 1
    return found


class MkdocsLoader(yaml.SafeLoader):
    """mkdocs.yml as data: a ``!!python/name:`` tag (the Mermaid fence's formatter) read as its name, never imported."""


MkdocsLoader.add_multi_constructor("tag:yaml.org,2002:python/name:", lambda loader, suffix, node: suffix)


def pages() -> list[Path]:
    """README.md, then every page of the site in the order of its nav."""
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=MkdocsLoader)
    nav = [next(iter(entry.values())) for entry in config["nav"]]
    return [ROOT / "README.md", *(ROOT / "docs" / page for page in nav)]


def test_every_page_is_in_the_nav():
    in_nav = {path.name for path in pages()[1:]}
    assert in_nav == {path.name for path in (ROOT / "docs").glob("*.md")}


def test_every_block_is_run_or_says_why_not():
    for path in pages():
        text = path.read_text(encoding="utf-8")
        for block in blocks(path):
            assert block.language in ("", "text", "python", *SHELL), f"{block.page}:{block.line}: ```{block.language}"
            if block.not_run is not None:
                assert len(block.not_run) > 3, f"{block.page}:{block.line}: say why the block is not run"
        lines = text.splitlines()
        for number, line in enumerate(lines):  # a marker stands right before a block, never alone
            if line.startswith("<!-- not run"):
                assert NOT_RUN.match(line), f"{path.name}:{number + 1}: not `<!-- not run: WHY -->`"
                assert number + 1 < len(lines) and FENCE.match(lines[number + 1]), (
                    f"{path.name}:{number + 1}: a not-run marker must stand on the line before a block"
                )


def runnable() -> list[Block]:
    return [
        block
        for path in pages()
        for block in blocks(path)
        if block.not_run is None and block.language not in ("", "text")
    ]


def test_readme_quickstart_reaches_a_score():
    """The quickstart is run below: it must build, load, validate and score."""
    code = "".join(block.code for block in runnable() if block.page == "README.md")
    for step in ("cogbench fetch-raw", "cogbench build", "load_dataset(", "cogbench validate", "cogbench score"):
        assert step in code


def slug(heading: str) -> str:
    """A heading's anchor as MkDocs' toc extension makes it (``## During training`` -> ``during-training``)."""
    return re.sub(r"[\s-]+", "-", re.sub(r"[^\w\s-]", "", heading.strip().lower())).strip("-")


def test_readme_leads_to_what_else_it_does():
    """Issue 48 item 9j: after the quickstart, README names the Python API, the training callback, `explain`,
    `rescore` and the site, each with a link to its page (every link and anchor resolving); its set-up block first."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    first = blocks(ROOT / "README.md")[0]
    assert first.code.startswith("# 1. install and run the main job") and "# 2. install everything" in first.code
    headings = re.findall(r"^## (.+)$", text, re.MULTILINE)
    assert headings.index("What else it does") == headings.index("Quickstart") + 1
    section = text.split("## What else it does\n", 1)[1].split("\n## ", 1)[0]
    for named, page in (
        ("cogbench.evaluate", "docs/python.md"),
        ("CogbenchCallback", "docs/python.md#during-training"),
        ("cogbench explain", "docs/explain.md"),
        ("cogbench rescore", "docs/explain.md#errata"),
        ("--site", "docs/site.md"),
    ):
        assert named in section and f"]({page}" in section, named
    for target in re.findall(r"\]\(([^)#\s]+\.md)(?:#([^)\s]+))?\)", text):
        path, fragment = ROOT / target[0], target[1]
        assert path.is_file(), target
        if fragment:
            anchors = {slug(h) for h in re.findall(r"^#+ (.+)$", path.read_text(encoding="utf-8"), re.MULTILINE)}
            assert fragment in anchors, target


@pytest.fixture(scope="module")
def user_folder(real_raw_dir, tmp_path_factory):
    """A fresh folder, and the environment of a user whose raw files come from a local mirror."""
    root = lay_out_mirror(real_raw_dir, tmp_path_factory.mktemp("mirror"), PUBLIC_SOURCES)
    with serve(root) as url:
        env = {k: v for k, v in os.environ.items() if not k.startswith("COGBENCH_")}
        env |= {"PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}", "COGBENCH_RAW_BASE_URL": url, "HF_HUB_OFFLINE": "1"}
        user = tmp_path_factory.mktemp("user")
        # docs/python.md's model: the folder `python tests/tiny_models.py models/tiny-llava` writes.
        build_tiny_llava(user / "models" / "tiny-llava")
        yield user, env


@pytest.mark.slow
def test_every_unmarked_block_runs_as_written(user_folder):
    cwd, env = user_folder
    python_so_far = ""
    for block in runnable():
        where = f"{block.page}:{block.line}"
        if block.language == "python":
            python_so_far += block.code
            command = [sys.executable, "-c", python_so_far]
        else:
            command = ["bash", "-e", "-o", "pipefail", "-c", block.code]
        ran = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
        output = (ran.stdout + ran.stderr)[-2000:]
        assert ran.returncode == 0, f"{where}: the block exited {ran.returncode}:\n{block.code}\n{output}"
        assert "Traceback" not in ran.stderr, f"{where}:\n{output}"


def test_cli_reference_renders_every_command():
    """The site's CLI page is each parser's own --help (docs/hooks/cli_reference.py), every subcommand."""
    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        import cli_reference
    finally:
        sys.path.remove(str(ROOT / "docs" / "hooks"))
    page = cli_reference.render()
    help_text = subprocess.run(
        [sys.executable, "-m", "cogbench", "--help"],
        capture_output=True,
        text=True,
        check=True,
        env=os.environ | {"COLUMNS": cli_reference.WIDTH},
    ).stdout
    commands = re.findall(r"(?m)^    ([a-z][a-z-]*)\b", help_text)  # the COMMAND list, as a user reads it
    assert len(commands) >= 10
    for command in commands:
        shown = subprocess.run(
            [sys.executable, "-m", "cogbench", command, "--help"],
            capture_output=True,
            text=True,
            check=True,
            env=os.environ | {"COLUMNS": cli_reference.WIDTH},
        ).stdout
        assert f"## cogbench {command}\n\n```text\n{shown.rstrip()}\n```" in page
