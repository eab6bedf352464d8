"""Publish a built folder to the Hugging Face Hub as one tagged release.

Order matters: validate (refuse on errors) -> create the repo -> apply gating
and visibility, so that CogBench data is never public even for a moment ->
one commit adding every file of the build and deleting shards the release no
longer has -> tag that commit ``vX.Y.Z``.

The token is whatever huggingface_hub finds (``HF_TOKEN`` or ``hf auth
login``); this module never reads, prints or stores it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cogbench.cards.card import render_card
from cogbench.dataset_builders.build import CARD_FILE, MANIFEST_FILE, load_manifest
from cogbench.dataset_builders.fingerprints import FAMILIES, FINGERPRINT_FILE, FINGERPRINTS_EXTRA, FINGERPRINTS_PIP
from cogbench.dataset_builders.output import MARKER_FILE, build_command, folder_files
from cogbench.errors import CogbenchError, UsageError
from cogbench.schemas.sources import expected_licence
from cogbench.validation import validate as validate_release
from cogbench.validation.integrity import build_files, configs_on_disk

REPO_TYPE = "dataset"
DATA_DIR = "data/"


@dataclass
class RemoteState:
    """What the Hub holds already; ``reachable`` is False when it could not be asked."""

    reachable: bool
    exists: bool = False
    files: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    problem: str = ""


@dataclass
class PublishPlan:
    folder: Path
    repo_id: str
    version: str
    private: bool
    gated: str | None  # "manual", "auto" or None (not gated)
    uploads: list[tuple[str, int]]  # (path in repo, bytes)
    deletions: list[str]
    remote: RemoteState

    @property
    def tag(self) -> str:
        return f"v{self.version}"

    def load_line(self, config: str = "vqa") -> str:
        return f'load_dataset("{self.repo_id}", "{config}", split="test", revision="{self.tag}")'


def local_files(folder: Path, manifest: dict[str, Any]) -> list[tuple[str, int]]:
    """The files to upload, as (path in repo, size): exactly those the build wrote and the
    manifest lists (the local marker stays local). Any other file refuses the publish."""
    listed = build_files(manifest)
    stray = sorted(set(folder_files(folder)) - listed)
    if stray:
        more = f" and {len(stray) - 5} more" if len(stray) > 5 else ""
        raise CogbenchError(
            f"{folder} holds files the build did not write: {', '.join(stray[:5])}{more}; "
            "nothing was uploaded (move them out of the build folder)"
        )
    missing = sorted(name for name in listed if not (folder / name).is_file())
    if missing:
        raise CogbenchError(
            f"{folder} lacks files its manifest lists: {', '.join(missing[:5])}; nothing was uploaded (rebuild it)"
        )
    return sorted((name, (folder / name).stat().st_size) for name in listed - {MARKER_FILE})


def redact(text: str, secret: str | None) -> str:
    return text.replace(secret, "***") if secret else text


def hub_problem(error: Exception, token: str | None) -> str:
    """A Hub failure in one line: for an HTTP error its type and status only, never the
    response body (a server may echo the request, token included); otherwise (offline,
    DNS) its message, with the token masked."""
    response = getattr(error, "response", None)
    status = getattr(response, "status_code", None)
    if response is not None:
        return f"{type(error).__name__} (HTTP {status})"
    return redact(f"{type(error).__name__}: {error}", token)


def remote_state(api: Any, repo_id: str) -> RemoteState:
    if not api.repo_exists(repo_id, repo_type=REPO_TYPE):
        return RemoteState(reachable=True)
    files = api.list_repo_files(repo_id, repo_type=REPO_TYPE)
    tags = [tag.name for tag in api.list_repo_refs(repo_id, repo_type=REPO_TYPE).tags]
    return RemoteState(reachable=True, exists=True, files=files, tags=tags)


def check_build(folder: Path, manifest: dict[str, Any], repo_id: str, version: str) -> None:
    """Refuse a folder that does not say what the user asked to publish."""
    if manifest["dataset_version"] != version:
        raise UsageError(
            f"{folder} was built as version {manifest['dataset_version']}, not {version}; "
            f"rebuild with `{build_command(folder, '--version', version, '--repo-id', repo_id)}`"
        )
    if manifest.get("repo_id") != repo_id:
        raise UsageError(
            f"the card in {folder} tells users to load {manifest.get('repo_id') or 'an unnamed repo'}, not {repo_id}; "
            f"rebuild with `{build_command(folder, '--version', version, '--repo-id', repo_id)}`"
        )
    prints = manifest.get("fingerprints") if isinstance(manifest.get("fingerprints"), dict) else {}
    lacking = [family for family in FAMILIES if family not in (prints.get("families") or [])]
    if lacking:
        raise UsageError(
            f"{folder / FINGERPRINT_FILE} has no {', '.join(lacking)} hashes (built without imagehash or pdqhash): "
            f"a release carries every fingerprint; install the `{FINGERPRINTS_EXTRA}` extra ({FINGERPRINTS_PIP}) "
            "and run the same `cogbench build` again"
        )
    if not (folder / CARD_FILE).is_file():
        raise UsageError(f"{folder} has no {CARD_FILE}; rebuild it")
    if (folder / CARD_FILE).read_text(encoding="utf-8", errors="replace") != render_card(manifest):
        raise CogbenchError(
            f"{folder / CARD_FILE} is not the card the build rendered from {MANIFEST_FILE} "
            "(edited licence, gating or text?); nothing was uploaded: rebuild the folder"
        )


def validation_errors(folder: Path, validate: Callable[..., Any], expected: str | None = "auto") -> list[str]:
    """The validators' errors for the folder."""
    report = validate(folder, expected=expected)
    return [str(error) for error in report.errors]


def plan_publish(
    folder: Path,
    repo_id: str,
    version: str,
    gated: str | None,
    private: bool,
    api: Any,
    dry_run: bool,
    token: str | None = None,
) -> PublishPlan:
    manifest = load_manifest(folder)
    check_build(folder, manifest, repo_id, version)
    uploads = local_files(folder, manifest)
    # Gating follows the shards actually present, whatever the manifest says.
    if gated is None and expected_licence(set(configs_on_disk(folder)) | set(manifest["configs"]))["gated"]:
        gated = "manual"
    try:
        remote = remote_state(api, repo_id)
    except Exception as error:  # offline, no token, network down: a dry run still shows the plan
        problem = hub_problem(error, token)
        if not dry_run:
            raise CogbenchError(f"cannot read {repo_id} on the Hub: {problem}") from None
        remote = RemoteState(reachable=False, problem=problem)
    plan_tag = f"v{version}"
    if plan_tag in remote.tags:
        raise UsageError(f"{repo_id} already has a release {plan_tag}; build a higher version (see `cogbench diff`)")
    kept = {path for path, _ in uploads}
    deletions = sorted(path for path in remote.files if path.startswith(DATA_DIR) and path not in kept)
    return PublishPlan(folder, repo_id, version, private, gated, uploads, deletions, remote)


def _size(num_bytes: int) -> str:
    return f"{num_bytes / 1e6:.1f} MB" if num_bytes >= 100_000 else f"{num_bytes / 1e3:.1f} kB"


def format_plan(plan: PublishPlan, token_found: bool) -> str:
    remote = plan.remote
    if not remote.reachable:
        where = (
            f"could not be checked ({remote.problem}); assuming a new repo, so deletions of old shards are not shown"
        )
    elif remote.exists:
        where = f"exists ({len(remote.files)} files, tags: {', '.join(remote.tags) or 'none'})"
    else:
        where = "does not exist; it will be created"
    total = sum(size for _, size in plan.uploads)
    lines = [
        f"repo:        https://huggingface.co/datasets/{plan.repo_id} ({where})",
        f"visibility:  {'private' if plan.private else 'public'}",
        f"gating:      {plan.gated + ' approval (CogBench data use agreement)' if plan.gated else 'none'}",
        f"token:       {'found (HF_TOKEN or hf auth login)' if token_found else 'NOT FOUND: set HF_TOKEN or run `hf auth login`'}",
        f"commit:      'Release {plan.tag}': {len(plan.uploads)} file(s) to upload ({_size(total)}), {len(plan.deletions)} to delete",
    ]
    lines += [f"  + {path} ({_size(size)})" for path, size in plan.uploads]
    lines += [f"  - {path}" for path in plan.deletions]
    lines.append(f"tag:         {plan.tag} on that commit")
    lines.append(f"users load:  {plan.load_line()}")
    return "\n".join(lines)


def commit_operations(plan: PublishPlan) -> list:
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    adds = [CommitOperationAdd(path_in_repo=path, path_or_fileobj=str(plan.folder / path)) for path, _ in plan.uploads]
    return adds + [CommitOperationDelete(path_in_repo=path) for path in plan.deletions]


def execute(plan: PublishPlan, api: Any) -> str:
    """Create, gate, commit, tag; return the commit id."""
    api.create_repo(plan.repo_id, repo_type=REPO_TYPE, private=plan.private, exist_ok=True)
    if plan.gated or (plan.private and plan.remote.exists):
        api.update_repo_settings(
            plan.repo_id, repo_type=REPO_TYPE, gated=plan.gated or None, private=plan.private or None
        )
    commit = api.create_commit(
        plan.repo_id,
        operations=commit_operations(plan),
        commit_message=f"Release {plan.tag}",
        commit_description=f"cogbench dataset {plan.tag}: {MANIFEST_FILE} lists every shard with its sha256.",
        repo_type=REPO_TYPE,
    )
    api.create_tag(
        plan.repo_id, tag=plan.tag, revision=commit.oid, tag_message=f"Release {plan.tag}", repo_type=REPO_TYPE
    )
    return commit.oid


def publish(
    folder: str | Path,
    repo_id: str,
    version: str,
    gated: str | None = None,
    private: bool = False,
    dry_run: bool = False,
    api: Any = None,
    validate: Callable[..., Any] = validate_release,
    say: Callable[[str], None] = print,
    expected: str | None = "auto",
) -> PublishPlan:
    """Validate ``folder`` and publish it as ``repo_id`` release ``vVERSION`` (or only print the plan)."""
    from huggingface_hub import HfApi, get_token

    folder = Path(folder)
    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise UsageError(f"--repo-id must be ORG/NAME, got {repo_id!r}")
    api = api or HfApi()
    errors = validation_errors(folder, validate, expected)
    if errors:
        shown = "\n  ".join(errors[:20])
        raise CogbenchError(f"{folder} fails validation ({len(errors)} error(s)); nothing was uploaded:\n  {shown}")
    token = get_token()
    plan = plan_publish(folder, repo_id, version, gated, private, api, dry_run, token)
    token_found = token is not None
    say(
        ("dry run: nothing will be changed\n" if dry_run else "")
        + "validation:  passed\n"
        + format_plan(plan, token_found)
    )
    if dry_run:
        say("to publish, run the same command without --dry-run")
        return plan
    if not token_found:
        raise UsageError("no Hugging Face token: set HF_TOKEN or run `hf auth login`, then try again")
    try:
        commit = execute(plan, api)
    except Exception as error:  # the Hub refused or failed: one line, no body, no token
        raise CogbenchError(
            f"publishing {plan.repo_id} {plan.tag} failed: {hub_problem(error, token)}; see the repo on the Hub before retrying"
        ) from None
    say(f"published {plan.repo_id} {plan.tag} (commit {commit[:12]})")
    say(f"users load it with: {plan.load_line()}")
    return plan
