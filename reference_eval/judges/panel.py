"""A panel of judges: several judges give a verdict on every item; the panel's verdict is their majority.

One judge's errors move a score; several judges whose errors are independent move it less (their
majority is wrong less often than any of them). ``cogbench score --judge A --judge B --judge C``
makes a panel: each member judges every item, each member's verdicts and raw replies are kept
in details.jsonl, and the single-judge fields hold the panel's verdict, decided by ``PANEL_RULE``.

A member is ``rule`` (the offline CODIS judge) or ``openai:MODEL``, its endpoint given after an
``@`` (``openai:MODEL@http://HOST:PORT/v1``) or else ``--judge-base-url``'s, so that each member may
sit behind its own server. The URL never reaches a file: members are named without it.

A key goes only to the host it was given for: ``OPENAI_API_KEY`` to ``--judge-base-url``'s endpoint
(OpenAI's without one) and to a member's ``@URL`` on that same scheme, host and port; a member elsewhere
names the environment variable holding its own key after a ``#`` (``openai:MODEL@URL#VARIABLE``), or is
sent no key at all.

A member may also be ``vllm:PATH_OR_ID[@REVISION]`` (judges/vllm_judge.py): its own engine in this process,
loaded once, its identity (weights, engine, arguments) recorded under its name; it is sent no key.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from cogbench.errors import UsageError
from cogbench.redaction import redact_text, split_endpoint
from cogbench.reference_eval.backends.openai_api import API_KEY_VARIABLE, OPENAI_BASE_URL
from cogbench.reference_eval.judges.llm import LLMJudge
from cogbench.reference_eval.judges.vllm_judge import split_spec
from cogbench.reference_eval.metrics.panel_agreement import PanelItem, panel_agreement

PANEL_RULE = (
    "majority of the members' verdicts; a tie goes to the lowest verdict (wrong, 0); "
    "no panel verdict when any member gave none (a judge failure, retried on a re-run)"
)
KEY_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # an environment variable's name, after the member's #


@dataclass(frozen=True)
class Member:
    """One panel member: ``name`` keys it in details.jsonl and scores.json (never its URL)."""

    name: str
    kind: str  # rule | openai | vllm
    model: str | None = None
    base_url: str | None = None
    key_variable: str | None = None  # the environment variable whose key it is sent (its name); None: no key


def origin(base_url: str | None) -> tuple[str, str, int | None]:
    """Scheme, host and port of an endpoint (OpenAI's for None): where a key goes is decided on these."""
    url = urlparse(base_url or OPENAI_BASE_URL)
    try:
        port = url.port or {"http": 80, "https": 443}.get(url.scheme)
    except ValueError:  # not a port: check_base_url refuses the URL before any request
        port = None
    return url.scheme.lower(), (url.hostname or "").lower(), port


def openai_member(value: str, default_base_url: str | None, option: str = "--judge") -> Member | None:
    """``openai:MODEL``, its endpoint after an ``@`` and its key's variable after a ``#``
    (``openai:MODEL@URL#VARIABLE``, cut by ``redaction.split_endpoint``), as a member; None without a model.
    The one reading of an ``openai:`` judge: a panel's member and a single ``--judge`` alike."""
    spec, url, variable = split_endpoint(value)
    if variable is not None and not KEY_VARIABLE.fullmatch(variable):
        raise UsageError(
            f"{option} {spec.split('@', 1)[0]!r}: after # comes the name of the environment variable that "
            "holds this member's key, e.g. openai:MODEL@https://HOST/v1#HOST_API_KEY"
        )
    model = spec[len("openai:") :]
    if "://" in model:  # a URL without its @ (openai:http://...): never a model name, never sent or written
        raise UsageError(f"{option} {redact_text(value)!r}: the endpoint goes after an @ (openai:MODEL@http://HOST/v1)")
    if not model:
        return None
    url = url or default_base_url
    # OPENAI_API_KEY goes only to the endpoint it was given for (--judge-base-url's, or OpenAI's).
    given_for = origin(url) == origin(default_base_url)
    return Member(spec, "openai", model, url, variable or (API_KEY_VARIABLE if given_for else None))


def parse_member(value: str, default_base_url: str | None, task: str) -> Member:
    """``rule``, ``vllm:PATH_OR_ID`` or an ``openai:`` member (``openai_member``); one usage line for anything else."""
    if value == "rule":
        if task != "codis":
            raise UsageError("--judge rule is the offline CODIS judge; a description panel takes openai:MODEL members")
        return Member("rule", "rule")
    if value.startswith("openai:"):
        member = openai_member(value, default_base_url)
        if member is not None:
            return member
    if value.startswith("vllm:"):  # in this process; @ gives a Hub revision, not an endpoint
        split_spec(value[len("vllm:") :])
        return Member(value, "vllm", value[len("vllm:") :])
    raise UsageError(
        f"--judge {value.split('@', 1)[0]!r}: a panel member is rule (codis), vllm:PATH_OR_ID or openai:MODEL, its endpoint "
        "optionally after @ and its key's environment variable after # (openai:MODEL@http://HOST:PORT/v1#VARIABLE; "
        "default --judge-base-url and OPENAI_API_KEY)"
    )


def parse_members(values: Sequence[str], default_base_url: str | None, task: str) -> list[Member]:
    """The panel's members in the order given (the first is the first in every table); each once."""
    if task == "vqa":
        raise UsageError("VQA accuracy needs no judge; leave --judge out")
    members = [parse_member(value, default_base_url, task) for value in values]
    names = [member.name for member in members]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise UsageError(f"--judge {twice[0]} is given twice: each panel member once")
    return members


def llm_members(options: Any) -> list[Member]:
    """The members that an LLM judges for (openai: and vllm:; none without a panel)."""
    members = parse_members(options.panel, options.judge_base_url, options.task) if options.panel else []
    return [member for member in members if member.kind in ("openai", "vllm")]


def panel_verdict(verdicts: Sequence[Any]) -> Any:
    """``PANEL_RULE``: the most frequent verdict, a tie the lowest of the tied, None if any member gave none."""
    if not verdicts or any(verdict is None for verdict in verdicts):
        return None
    counts = Counter(verdicts)
    top = max(counts.values())
    return min(verdict for verdict, count in counts.items() if count == top)


# Per prompt: (verdict, error, raw reply or None); what each member gave.
MemberReplies = list[tuple[Any, str | None, str | None]]


def ask_panel(
    panel: Panel,
    prompts: Sequence[str],
    parse: Callable[[str, str, str], Any],
    mode: str,
    offline: dict[str, list[Any]],
    no_verdict: str,
) -> dict[str, MemberReplies]:
    """Each member's verdict on each prompt: LLM members asked (their caches first), the others' ``offline``."""
    found: dict[str, MemberReplies] = {}
    for member in panel.members:
        if member.name not in panel.judges:
            found[member.name] = [(verdict, None, None) for verdict in offline[member.name]]
            continue
        replies = panel.judges[member.name].ask(prompts, accept=lambda p, r: parse(p, r, mode) is not None)
        given: MemberReplies = []
        for prompt, reply in zip(prompts, replies):
            verdict = parse(prompt, reply.text, mode) if reply.text is not None else None
            error = reply.error or (no_verdict if verdict is None else None)
            given.append((verdict, error, reply.text if reply.text is not None else reply.unusable_text))
        found[member.name] = given
    return found


def call_verdicts(members: dict[str, MemberReplies], number: int, size: int) -> tuple[Any, None, str | None, None]:
    """A call of ``size`` verdicts (Cognition: one per key point), the panel's, as one judge's reply gives them:
    (verdicts by position or None, no other parsing, the first member's error, no reply)."""
    given = [replies[number] for replies in members.values()]
    error = next((e for _, e, _ in given if e), None)
    if error:
        return None, None, error, None
    return [panel_verdict([v[p] for v, _, _ in given]) for p in range(size)], None, None, None


def member_verdict(reply: tuple[Any, str | None, str | None], position: int) -> tuple[Any, str | None]:
    """(verdict, error) at ``position`` of a member's reply to a call of several verdicts."""
    verdicts, error, _ = reply
    return (verdicts[position] if verdicts is not None else None), error


def panel_block(
    names: list[str],
    scores: dict[str, Any],
    items: Sequence[PanelItem],
    categories: Sequence[str],
    resamples: int,
    seed: int,
) -> dict[str, Any]:
    """scores.json's ``panel``: the members, the rule, each member's scores, and their agreement."""
    return {
        "members": names,
        "rule": PANEL_RULE,
        "metrics": scores,
        "agreement": panel_agreement(names, items, categories, "panel", resamples, seed),
    }


@dataclass
class Panel:
    """The members and, for each LLM member, its judge (rule members have none)."""

    members: list[Member]
    judges: dict[str, LLMJudge] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return [member.name for member in self.members]

    def summary(self, parsing: str) -> dict[str, Any]:
        """scores.json's ``judge`` block of a panel: each member's own judge summary."""
        members = []
        for member in self.members:
            judge = self.judges.get(member.name)
            about = {"name": member.name, "kind": member.kind}
            members.append({**about, **(judge.summary() if judge else {})})
        return {"kind": "panel", "model": " + ".join(self.names), "members": members, "parsing": parsing}

    def close(self) -> None:
        for judge in self.judges.values():
            judge.close()
