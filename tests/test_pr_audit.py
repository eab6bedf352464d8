"""The check before every pull request of ``publish-results``, against the local Hub server with the real
``HfApi`` (``get_repo_discussions``, ``list_repo_files`` and ``hf_hub_download`` at main and ``refs/pr/N``):
an equal value on main (skipped), a conflicting value in an open pull request (refused without
``--allow-conflict``), a closed pull request (ignored), and nothing (ready).
"""

from __future__ import annotations

import pytest
import yaml
from huggingface_hub import EvalResultEntry, eval_result_entries_to_yaml
from test_hub_results import ACC_P, ACC_Q, DATASET, args_for, codis_run  # noqa: F401  (the module's fixture)

from cogbench.reference_eval.publishing.hub_results import NotPublishable, publish_results

from hub_server import COMMIT_OID, HubRepo, LocalHub, local_hub_api


def results_file(task_id: str, value: float) -> bytes:
    entry = EvalResultEntry(dataset_id=DATASET, task_id=task_id, value=value, dataset_revision=COMMIT_OID)
    return yaml.safe_dump(eval_result_entries_to_yaml([entry]), sort_keys=False).encode()


def hub_holding(hub: LocalHub, main=None, prs=(), closed=()) -> HubRepo:
    hub.repos[DATASET] = HubRepo(tags={"v2.0.0": COMMIT_OID})
    repo = hub.models["me/model"] = HubRepo(files=dict(main or {}), prs=[dict(pr) for pr in prs], closed=set(closed))
    return repo


EQUAL_ON_MAIN = {".eval_results/codis_acc_p.yaml": results_file("codis_acc_p", round(ACC_P, 2))}
OTHER_IN_PR = {".eval_results/acc-q.yaml": results_file("codis_acc_q", 50.0)}  # another tool's file name


def test_equal_on_main_is_skipped_and_a_conflict_in_an_open_pr_refuses_the_push(codis_run, tmp_path, monkeypatch):  # noqa: F811
    lines = []
    with LocalHub() as hub:
        repo = hub_holding(hub, EQUAL_ON_MAIN, [OTHER_IN_PR])
        with pytest.raises(NotPublishable, match="codis_acc_q already hold another value"):
            publish_results(args_for(codis_run[1], tmp_path), api=local_hub_api(hub, monkeypatch), say=lines.append)
    assert len(repo.prs) == 1 and "me/details" not in hub.repos  # nothing pushed: no PR, no details
    assert f"  codis_acc_p: already present (main .eval_results/codis_acc_p.yaml: {round(ACC_P, 2)}): skipped" in lines
    assert (
        f"  codis_acc_q: conflict: ours {round(ACC_Q, 2)} | the repo holds PR #1 .eval_results/acc-q.yaml: 50.0"
        in lines
    )


def test_allow_conflict_opens_a_pr_without_the_result_already_present(codis_run, tmp_path, monkeypatch):  # noqa: F811
    with LocalHub() as hub:
        repo = hub_holding(hub, EQUAL_ON_MAIN, [OTHER_IN_PR])
        args = args_for(codis_run[1], tmp_path, allow_conflict=True)
        assert publish_results(args, api=local_hub_api(hub, monkeypatch), say=print) == 0
    assert len(repo.prs) == 2 and sorted(repo.prs[1]) == [".eval_results/codis_acc_q.yaml"]


def test_every_result_already_present_opens_no_pr(codis_run, tmp_path, monkeypatch):  # noqa: F811
    lines = []
    both = {**EQUAL_ON_MAIN, ".eval_results/codis_acc_q.yaml": results_file("codis_acc_q", round(ACC_Q, 2))}
    with LocalHub() as hub:
        repo = hub_holding(hub, prs=[both])  # both in an open pull request (not yet merged)
        assert (
            publish_results(args_for(codis_run[1], tmp_path), api=local_hub_api(hub, monkeypatch), say=lines.append)
            == 0
        )
    assert len(repo.prs) == 1 and lines[-1].startswith("nothing to add: me/model already holds every result")
    assert "me/details" not in hub.repos


def odd_file(task_id: str, value: str, dataset: str | None = None) -> bytes:
    """A results file as another tool (or an attacker) might leave it in an open pull request."""
    dataset = dataset or f"{{id: {DATASET}, task_id: {task_id}}}"
    return f"- dataset: {dataset}\n  value: {value}\n".encode()


@pytest.mark.parametrize("value", [".nan", ".NaN", ".inf", "-.inf"])
def test_a_value_that_is_not_a_number_in_an_open_pr_is_a_conflict(value, codis_run, tmp_path, monkeypatch):  # noqa: F811
    """``.nan`` differs from nothing by more than the tolerance, so it read as "already present" and was skipped."""
    lines = []
    with LocalHub() as hub:
        repo = hub_holding(hub, prs=[{".eval_results/q.yaml": odd_file("codis_acc_q", value)}])
        with pytest.raises(NotPublishable, match="codis_acc_q already hold another value"):
            publish_results(args_for(codis_run[1], tmp_path), api=local_hub_api(hub, monkeypatch), say=lines.append)
    assert len(repo.prs) == 1
    assert any(line.startswith("  codis_acc_q: conflict: ours") for line in lines), lines


NESTED = ("- " + "[" * 50_000 + "]" * 50_000 + "\n").encode()


@pytest.mark.parametrize(
    "held",
    [
        odd_file("codis_acc_q", "50.0", "[1]"),
        odd_file("codis_acc_q", "50.0", "cogorg/cogbench"),
        odd_file("codis_acc_q", "50.0", "null"),
        b"- [1, 2]\n- 7\n- value: 50.0\n",
        NESTED,
    ],
    ids=["dataset-list", "dataset-string", "dataset-null", "entries-of-other-shapes", "nested-50000-deep"],
)
def test_an_open_pr_file_of_another_shape_is_skipped_not_a_crash(held, codis_run, tmp_path, monkeypatch):  # noqa: F811
    """``dataset: [1]`` or a string crashed publish-results (AttributeError); a file nested 50,000 deep
    ended the audit (RecursionError) and so blocked every publish. Each names no result of ours: skipped."""
    lines = []
    with LocalHub() as hub:
        repo = hub_holding(hub, EQUAL_ON_MAIN, prs=[{".eval_results/other.yaml": held}])
        assert (
            publish_results(args_for(codis_run[1], tmp_path), api=local_hub_api(hub, monkeypatch), say=lines.append)
            == 0
        )
    assert len(repo.prs) == 2 and sorted(repo.prs[1]) == [".eval_results/codis_acc_q.yaml"]
    assert f"  codis_acc_q: ready ({round(ACC_Q, 2)}; nothing on main or in open PRs)" in lines
    assert any(line.startswith("  codis_acc_p: already present") for line in lines)


def test_a_file_name_from_an_open_pr_is_printed_escaped(codis_run, tmp_path, monkeypatch):  # noqa: F811
    """A name with a newline and ANSI escapes cannot forge a line of the audit (an ``error:`` of its own)."""
    name = ".eval_results/q\n\x1b[31merror: forged" + "x" * 200 + ".yaml"  # 230 bytes: a file name here
    lines = []
    with LocalHub() as hub:
        hub_holding(hub, prs=[{name: results_file("codis_acc_q", 50.0)}])
        with pytest.raises(NotPublishable):
            publish_results(args_for(codis_run[1], tmp_path), api=local_hub_api(hub, monkeypatch), say=lines.append)
    (line,) = [line for line in lines if line.startswith("  codis_acc_q: conflict")]
    assert "\n" not in line and "\x1b" not in line and len(line) < 300, line
    assert "\\n\\x1b[31merror: forged" in line


def test_nothing_held_and_a_closed_pr_are_ready_and_the_dry_run_prints_the_table(codis_run, tmp_path, monkeypatch):  # noqa: F811
    lines = []
    with LocalHub() as hub:
        repo = hub_holding(hub, prs=[OTHER_IN_PR], closed={1})
        args = args_for(codis_run[1], tmp_path, dry_run=True, out=str(tmp_path / "out"))
        assert publish_results(args, api=local_hub_api(hub, monkeypatch), say=lines.append) == 0
    assert len(repo.prs) == 1 and "me/details" not in hub.repos  # a dry run pushes nothing
    start = lines.index("before the pull request: me/model on main and in its open pull requests:")
    assert lines[start + 1 : start + 3] == [
        f"  codis_acc_p: ready ({round(ACC_P, 2)}; nothing on main or in open PRs)",
        f"  codis_acc_q: ready ({round(ACC_Q, 2)}; nothing on main or in open PRs)",
    ]
