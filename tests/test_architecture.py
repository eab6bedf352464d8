"""Imports flow one way between the project's parts (ARCHITECTURE.md); read from the source with ``ast``.

Every ``import`` of a ``cogbench`` module, at module level or inside a
function, is checked against ``MAY_IMPORT``. Imports inside functions are
allowed only where ARCHITECTURE.md says why (commands load their code on use;
the hf backend loads torch on use), never to hide a cycle.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Source folder -> the name it is installed under (pyproject.toml's package-dir).
FOLDERS = {
    "cogbench": "cogbench",
    "schemas": "cogbench.schemas",
    "dataset_builders": "cogbench.dataset_builders",
    "validation": "cogbench.validation",
    "cards": "cogbench.cards",
    "reference_eval": "cogbench.reference_eval",
}
EVAL = "cogbench.reference_eval"

# Each part of the project, by the module-name prefix that identifies it
# (the longest matching prefix wins), and the parts it may import besides itself.
PARTS = {
    "core": ("cogbench.errors", "cogbench"),
    "schemas": ("cogbench.schemas",),
    "dataset_builders": ("cogbench.dataset_builders",),
    "validation": ("cogbench.validation",),
    "cards": ("cogbench.cards",),
    "eval.demo": (f"{EVAL}.demo",),  # stand-ins to try it with: `cogbench demo` (a tiny model, a local server)
    "eval.loading": (f"{EVAL}.loading",),
    "eval.answers": (f"{EVAL}.answers",),
    "eval.queries": (f"{EVAL}.tasks.prompts", f"{EVAL}.tasks.queries", f"{EVAL}.tasks.image_variants"),
    "eval.formats": (f"{EVAL}.formats",),
    "eval.metrics": (f"{EVAL}.metrics",),
    "eval.backends": (f"{EVAL}.backends",),
    "eval.judges": (f"{EVAL}.judges",),
    "eval.harnesses": (f"{EVAL}.harnesses",),
    "eval.run_records": (f"{EVAL}.run.completeness", f"{EVAL}.run.progress", f"{EVAL}.run.lock"),
    "eval.provenance": (f"{EVAL}.run.provenance",),
    "eval.task_scoring": (f"{EVAL}.tasks.probes", f"{EVAL}.tasks.scorers"),
    # cli, run.runner, scoring.*, api.*, recording.*, reports.*, publishing.*, verifying.*
    "eval.orchestration": (EVAL,),
    "eval.sweeping": (f"{EVAL}.sweeping",),  # above api: many runs through api.evaluation (ARCHITECTURE.md)
    "eval.labelling": (f"{EVAL}.labelling",),  # people's labels: below certifying, which joins them to verdicts
    "eval.certifying": (f"{EVAL}.certifying",),  # above reports: it reads runs and their judges' agreement
    "eval.explaining": (f"{EVAL}.explaining",),  # above reports: it reads runs through recording.run_reader
    "eval.site": (f"{EVAL}.site",),  # the static site of `report --site`: above the reports it shows
    "eval.contamination": (f"{EVAL}.contamination",),  # `leak-scan`: a corpus against the build's fingerprints
    "command": ("cogbench.cli", "cogbench.__main__"),
}
# A room's package (`run/`, `tasks/`, `verifying/`...) holds only its docstring; `from <room> import module`
# names it as well as the module, so importing it is allowed from anywhere and it may import nothing.
ROOMS = {f"{EVAL}.{room}" for room in ("run", "tasks", "scoring", "loading", "api")} | {
    f"{EVAL}.{room}"
    for room in ("recording", "reports", "publishing", "verifying", "certifying", "sweeping", "labelling")
}
BELOW_EVAL = {"core", "schemas", "dataset_builders", "validation"}
MAY_IMPORT = {
    "core": set(),
    "schemas": {"core"},
    "dataset_builders": {"core", "schemas"},
    "validation": {"core", "schemas", "dataset_builders"},
    "cards": {"core", "schemas", "dataset_builders", "validation"},
    "eval.demo": BELOW_EVAL,
    "eval.contamination": BELOW_EVAL,
    "eval.loading": BELOW_EVAL,
    "eval.answers": BELOW_EVAL,
    "eval.queries": BELOW_EVAL,
    "eval.formats": BELOW_EVAL,
    "eval.metrics": BELOW_EVAL | {"eval.loading"},
    "eval.backends": BELOW_EVAL | {"eval.queries", "eval.loading", "eval.answers"},
    "eval.judges": BELOW_EVAL | {"eval.metrics", "eval.backends", "eval.loading", "eval.answers"},
    "eval.harnesses": BELOW_EVAL
    | {"eval.queries", "eval.formats", "eval.metrics", "eval.judges", "eval.loading", "eval.answers"},
    "eval.run_records": BELOW_EVAL,
    "eval.provenance": BELOW_EVAL | {"eval.metrics", "eval.judges", "eval.loading"},
    "eval.task_scoring": BELOW_EVAL
    | {
        "eval.queries",
        "eval.metrics",
        "eval.judges",
        "eval.run_records",
        "eval.provenance",
        "eval.loading",
        "eval.answers",
    },
    "eval.orchestration": BELOW_EVAL
    | {
        p
        for p in PARTS
        if p.startswith("eval.")
        and p not in ("eval.explaining", "eval.site", "eval.certifying", "eval.sweeping", "eval.labelling")
    },
    "eval.sweeping": BELOW_EVAL
    | {
        p
        for p in PARTS
        if p.startswith("eval.") and p not in ("eval.explaining", "eval.site", "eval.certifying", "eval.labelling")
    },
    "eval.labelling": BELOW_EVAL
    | {
        p
        for p in PARTS
        if p.startswith("eval.") and p not in ("eval.explaining", "eval.site", "eval.certifying", "eval.sweeping")
    },
    "eval.certifying": BELOW_EVAL
    | {p for p in PARTS if p.startswith("eval.") and p not in ("eval.explaining", "eval.site", "eval.sweeping")},
    "eval.explaining": BELOW_EVAL
    | {p for p in PARTS if p.startswith("eval.") and p not in ("eval.site", "eval.sweeping")},
    "eval.site": BELOW_EVAL
    | {p for p in PARTS if p.startswith("eval.") and p not in ("eval.explaining", "eval.sweeping")},
    "command": set(PARTS),
    "eval.room": set(),
}
# Module names used twice on purpose: one per benchmark in each role (the judge of CODIS and the
# metric of CODIS are different things that belong to different rooms).
DUPLICATE_NAMES_BY_ROLE = {"codis", "cognition"}
# Modules that may import project modules inside functions, and why (ARCHITECTURE.md).
LAZY_IMPORTS_ALLOWED = {
    "cogbench.dataset_builders.cli": "a command loads its code when it runs",
    "cogbench.validation.cli": "a command loads its code when it runs",
    "cogbench.cards.cli": "a command loads its code when it runs",
    "cogbench.reference_eval.cli": "a command loads its code when it runs (score needs no torch)",
    "cogbench.reference_eval.run.cli": "a command loads its code when it runs (eval needs torch, score does not)",
    "cogbench.reference_eval.api.cli": "a command loads its code when it runs",
    "cogbench.reference_eval.harnesses.cli": "a command loads its code when it runs",
    "cogbench.reference_eval.reports.cli": "a command loads its code when it runs",
    "cogbench.reference_eval.publishing.cli": "a command loads its code when it runs",
    "cogbench.reference_eval.verifying.cli": "a command loads its code when it runs",
    "cogbench.reference_eval.certifying.cli": "a command loads its code when it runs",
    "cogbench.reference_eval.explaining.cli": "a command loads its code when it runs",
    "cogbench.reference_eval.demo.cli": "a command loads its code when it runs (tiny-model needs torch)",
    "cogbench.reference_eval.sweeping.cli": "a command loads its code when it runs (cogbench --help stays light)",
    "cogbench.reference_eval.labelling.cli": "a command loads its code when it runs",
    "cogbench.reference_eval.contamination.cli": "a command loads its code when it runs (faiss, imagehash)",
    "cogbench.reference_eval.run.runner": "the hf backend imports torch; loaded only when a run uses it",
    # datasets' Features (schemas/features) where rows are written or read through datasets: the commands that only
    # read a build's files (score, verify, report...) then never import datasets (issue 49's start-up)
    "cogbench.dataset_builders.build": "datasets' Features, imported where a shard is written",
    "cogbench.dataset_builders.load": "datasets' Features, imported where a config is read through datasets",
    "cogbench.dataset_builders.croissant": "datasets' Features, imported where croissant.json is rendered",
}


# The one import that goes up: the package's ``__init__`` names the Python API (``cogbench.evaluate``...)
# for type checkers only (under ``TYPE_CHECKING``) and imports it lazily (module ``__getattr__``).
API = f"{EVAL}.api"
# A command module that may load a part above its own when the command runs (inside its function):
# `report --site` calls into the site room, which itself reads runs through reports; `report` hands the explaining
# room's section (two runs of one model) and the certifying room's certificate section to reports.runs; `report
# SWEEP_DIR --site` reads the sweep's ledger (sweeping) and hands its rows to the site's board.
COMMAND_ENTRIES = {
    "cogbench.reference_eval.reports.cli": {"eval.site", "eval.explaining", "eval.certifying", "eval.sweeping"}
}


def part_of(module: str) -> str | None:
    """The part a module belongs to (longest prefix), or None for a module outside the project."""
    if module in ROOMS:
        return "eval.room"
    best, best_length = None, -1
    for part, prefixes in PARTS.items():
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_length:
                best, best_length = part, len(prefix)
    return best


def source_modules() -> dict[str, Path]:
    """Installed module name -> source file, for every Python file of the package."""
    modules = {}
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join([package, *parts])] = path
    return modules


def project_imports(module: str, path: Path) -> list[tuple[str, int, bool]]:
    """(imported module, line, inside a function) for every import of a cogbench module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend((alias.name, child.lineno, in_function) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:  # relative import: resolve against this module's package
                    base = module.split(".")
                    base = base if is_package else base[:-1]
                    base = base[: len(base) - (child.level - 1)]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                # `from pkg import submodule` imports the submodule too.
                found.append((target, child.lineno, in_function))
                found.extend((f"{target}.{alias.name}", child.lineno, in_function) for alias in child.names)
            visit(child, nested)

    visit(tree, False)
    return [(name, line, inside) for name, line, inside in found if name == "cogbench" or name.startswith("cogbench.")]


EXPLAIN_API = "cogbench.reference_eval.explaining.explain_api"  # cogbench.explain: explaining/ sits above api/
SWEEP_API = "cogbench.reference_eval.sweeping.sweep_api"  # cogbench.sweep: sweeping/ sits above api/ too


def violations(modules: dict[str, Path]) -> list[str]:
    known = set(modules)
    problems = []
    for module, path in modules.items():
        source_part = part_of(module)
        for imported, line, inside in project_imports(module, path):
            if imported not in known:
                continue  # `from cogbench.x import name` also yields `cogbench.x.name`
            target_part = part_of(imported)
            if module == "cogbench" and (imported == API or imported.startswith((API + ".", EXPLAIN_API, SWEEP_API))):
                continue  # the lazy re-export of the Python API (test_the_api_is_named_lazily)
            where = f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{line}"
            allowed = MAY_IMPORT[source_part] | (COMMAND_ENTRIES.get(module, set()) if inside else set())
            if target_part not in (source_part, "eval.room") and target_part not in allowed:
                problems.append(f"{where}: {source_part} imports {imported} ({target_part}), which is above it")
            if inside and module not in LAZY_IMPORTS_ALLOWED and target_part is not None:
                problems.append(f"{where}: {imported} is imported inside a function")
    return problems


def test_the_api_is_named_lazily():
    """``import cogbench`` imports nothing of the API: only under TYPE_CHECKING, and by name in ``__getattr__``."""
    tree = ast.parse((ROOT / "cogbench" / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            assert not (getattr(node, "module", "") or "").startswith("cogbench"), ast.unparse(node)
        if isinstance(node, ast.If) and any(isinstance(n, ast.ImportFrom) for n in node.body):
            assert ast.unparse(node.test) == "TYPE_CHECKING"
            # explain sits in explaining/, above api/ (ARCHITECTURE.md), beside it under the same rule
            assert all(n.module.startswith((API + ".", EXPLAIN_API, SWEEP_API)) for n in node.body)


def test_every_module_belongs_to_a_part():
    modules = source_modules()
    assert len(modules) > 40
    assert [m for m in modules if part_of(m) is None] == []


def test_reference_eval_top_holds_only_the_commands_and_rooms():
    """Issue 34: no loose orchestration modules at reference_eval's top, and no module name twice."""
    top = sorted(p.name for p in (ROOT / "reference_eval").glob("*.py"))
    assert top == ["__init__.py", "cli.py"]
    names = [m.rsplit(".", 1)[-1] for m, path in source_modules().items() if path.name not in ("__init__.py", "cli.py")]
    assert sorted({n for n in names if names.count(n) > 1}) == sorted(DUPLICATE_NAMES_BY_ROLE)


def test_room_packages_hold_only_their_docstring():
    for room in ROOMS:
        path = ROOT / "reference_eval" / room.rsplit(".", 1)[-1] / "__init__.py"
        body = ast.parse(path.read_text(encoding="utf-8")).body
        assert len(body) == 1 and isinstance(body[0], ast.Expr), path


def test_imports_flow_one_way():
    assert violations(source_modules()) == []


@pytest.mark.parametrize(
    ("folder", "code", "expected"),
    [
        (
            "dataset_builders",
            "from cogbench.validation import validate\n",
            "dataset_builders imports cogbench.validation",
        ),
        ("schemas", "import cogbench.dataset_builders.raw\n", "schemas imports cogbench.dataset_builders.raw"),
        ("reference_eval/metrics", "from cogbench.reference_eval.judges import llm\n", "eval.metrics imports"),
        ("validation", "def f():\n    from cogbench.cards import card\n", "validation imports cogbench.cards (cards)"),
        ("validation", "def f():\n    from cogbench.dataset_builders import raw\n", "imported inside a function"),
        ("reference_eval/reports", "from cogbench.reference_eval.site import leaderboard\n", "which is above it"),
        ("reference_eval/verifying", "from cogbench.reference_eval.certifying import certify\n", "which is above it"),
        ("reference_eval/api", "from cogbench.reference_eval.sweeping import plan\n", "which is above it"),
        ("reference_eval/site", "from cogbench.reference_eval.sweeping import ledger\n", "which is above it"),
    ],
)
def test_a_reintroduced_upward_import_is_caught(tmp_path, folder, code, expected):
    """The checker itself: an upward import (the old builders <-> validation cycle, say) fails the test."""
    modules = source_modules()
    module = FOLDERS[folder.split("/")[0]] + "".join("." + p for p in folder.split("/")[1:]) + ".planted"
    planted = tmp_path / "planted.py"
    planted.write_text(code, encoding="utf-8")
    modules[module] = planted
    found = [p for p in violations(modules) if "planted.py" in p]
    assert any(expected in problem for problem in found), found


def rooms() -> dict[str, Path]:
    """Every room: each top-level folder and each sub-package of ``reference_eval/``, by its folder."""
    found = {folder: ROOT / folder for folder in FOLDERS}
    for init in sorted((ROOT / "reference_eval").glob("*/__init__.py")):
        found[f"{init.parent.name}"] = init.parent
    return found


def unnamed_modules(folder: Path, docstring: str) -> list[str]:
    """The modules of a room that its ``__init__`` docstring does not name as ``module``."""
    modules = sorted(path.stem for path in folder.glob("*.py") if path.name != "__init__.py")
    return [module for module in modules if f"``{module}``" not in docstring]


def test_every_module_is_named_in_its_room_docstring():
    """Issue 49: each room's ``__init__`` names every module it holds, one line each: the map beside the code."""
    assert {"verifying", "certifying", "publishing", "recording", "reports"} <= set(rooms())
    missing = {}
    for name, folder in rooms().items():
        docstring = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8"))) or ""
        if unnamed := unnamed_modules(folder, docstring):
            missing[name] = unnamed
    assert missing == {}


def test_a_module_missing_from_its_room_docstring_is_caught(tmp_path):
    """The checker itself: a module added to a room without its line is named."""
    (tmp_path / "__init__.py").write_text('"""A room.\n\n- ``kept``: named.\n"""\n', encoding="utf-8")
    (tmp_path / "kept.py").write_text("", encoding="utf-8")
    (tmp_path / "added.py").write_text("", encoding="utf-8")
    assert unnamed_modules(tmp_path, ast.get_docstring(ast.parse((tmp_path / "__init__.py").read_text())) or "") == [
        "added"
    ]


def test_the_map_names_every_room():
    """ARCHITECTURE.md's room table has a row for every room, and no row for a room that is not there."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    table = text.split("## Rooms", 1)[1].split("\n\n| room |", 1)[1].split("\n\n", 1)[0]
    named = {re.match(r"\| `([a-z_]+)/`", row).group(1) for row in table.splitlines()[2:]}
    assert named == set(rooms())
