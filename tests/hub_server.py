"""A real local HTTP server answering the Hugging Face Hub endpoints that ``cogbench publish`` uses.

The real ``huggingface_hub.HfApi(endpoint=server.endpoint)`` talks to it, so the
publish tests see the library's own requests, return types and errors: repo
info (404 with ``X-Error-Code: RepoNotFound`` for a repo that does not exist),
the file tree, file downloads (``resolve``, so ``snapshot_download`` works), refs, the pull-request
listing (``GET /api/models/ORG/NAME/discussions``: ``HfApi.get_repo_discussions``) and each open
pull request's tree and files at ``refs/pr/N`` (main's files with the PR's on top, as the Hub has them), create, settings, card YAML check, preupload (every file "regular", so
the commit carries its bytes inline), commit and tag. Dataset repos are in ``repos``, model
repos in ``models``; a commit with ``create_pr=1`` (``create_pr=True`` of ``create_commit`` /
``upload_folder``) leaves the files alone and opens a pull request in ``HubRepo.prs``, as the
Hub does. Every request is recorded and the repo's files are kept, so a test checks what was
uploaded.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

COMMIT_OID = "0123456789abcdef0123456789abcdef01234567"


@dataclass
class HubRepo:
    files: dict[str, bytes] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    prs: list[dict[str, bytes]] = field(default_factory=list)  # each pull request's added files (PR #1 first)
    closed: set[int] = field(default_factory=set)  # numbers of the pull requests that are closed

    def at(self, revision: str) -> dict[str, bytes] | None:
        """The files at ``main`` or ``refs/pr/N`` (None: no such revision)."""
        if revision in ("main", COMMIT_OID):
            return self.files
        number = revision.removeprefix("refs/pr/")
        if number.isdigit() and 1 <= int(number) <= len(self.prs):
            return {**self.files, **self.prs[int(number) - 1]}
        return None


class LocalHub:
    def __init__(self):
        self.repos: dict[str, HubRepo] = {}  # dataset repos
        self.models: dict[str, HubRepo] = {}  # model repos
        self.requests: list[tuple[str, str]] = []
        self.authorizations: list[str | None] = []  # each request's Authorization header (None: none sent)
        self.refuse: tuple[str, str, int, str] | None = None  # (method, last path part, status, body) to refuse
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _body(self) -> bytes:
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _send(self, status: int, payload: Any = None, headers: dict[str, str] | None = None, head=False):
                raw = isinstance(payload, bytes)  # a file's bytes (resolve), else JSON
                body = payload if raw else json.dumps(payload).encode() if payload is not None else b""
                self.send_response(status)
                self.send_header("Content-Type", "application/octet-stream" if raw else "application/json")
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if not head:
                    self.wfile.write(body)

            def _route(self, method: str):
                url = urlparse(self.path)
                path = unquote(url.path)
                hub.requests.append((method, path))
                hub.authorizations.append(self.headers.get("Authorization"))
                body = self._body() if method in ("POST", "PUT") else b""
                if "/resolve/" in path and not path.startswith("/api/"):  # a file download (hf_hub_download)
                    status, payload, headers = hub.resolve(path)
                else:
                    status, payload, headers = hub.answer(method, path, body, parse_qs(url.query))
                self._send(status, payload, headers, head=method == "HEAD")

            def do_GET(self):
                self._route("GET")

            def do_HEAD(self):
                self._route("HEAD")

            def do_POST(self):
                self._route("POST")

            def do_PUT(self):
                self._route("PUT")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> LocalHub:
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._httpd.shutdown()
        self._httpd.server_close()

    def resolve(self, path: str):
        """``[/datasets]/ORG/NAME/resolve/REVISION/FILE``: the file's bytes, with the headers the client reads
        (a pull request's revision ``refs/pr/N`` has a commit of its own)."""
        dataset = path.startswith("/datasets/")
        repo_id, rest = path.split("/resolve/", 1)[0].strip("/").split("/")[-2:], path.split("/resolve/", 1)[1]
        repo = (self.repos if dataset else self.models).get("/".join(repo_id))
        pr = rest.startswith("refs/pr/")
        revision, name = (
            ("/".join(rest.split("/", 3)[:3]), rest.split("/", 3)[3:])
            if pr
            else (rest.split("/", 1)[0], rest.split("/", 1)[1:])
        )
        files = repo.at(revision) if repo is not None else None
        if files is None or not name or name[0] not in files:
            return 404, {"error": "Entry not found"}, {"X-Error-Code": "EntryNotFound"}
        data = files[name[0]]
        etag = hashlib.sha256(data).hexdigest()
        commit = hashlib.sha1(revision.encode()).hexdigest() if pr else COMMIT_OID
        return 200, data, {"X-Repo-Commit": commit, "ETag": f'"{etag}"'}

    def answer(self, method: str, path: str, body: bytes, query: dict[str, list[str]] | None = None):
        parts = path.strip("/").split("/")
        if self.refuse and (method, parts[-1]) == self.refuse[:2]:
            return self.refuse[2], {"error": self.refuse[3]}, {}
        if method == "POST" and path == "/api/repos/create":
            request = json.loads(body)
            repo_id = f"{request['organization']}/{request['name']}" if request.get("organization") else request["name"]
            kind = request.get("type") or "model"
            (self.repos if kind == "dataset" else self.models).setdefault(repo_id, HubRepo())
            return 200, {"url": f"{self.endpoint}/{'datasets/' if kind == 'dataset' else ''}{repo_id}"}, {}
        if method == "POST" and path == "/api/validate-yaml":  # the client checks a README's card header
            return 200, {"errors": [], "warnings": []}, {}
        if parts[:2] not in (["api", "datasets"], ["api", "models"]) or len(parts) < 4:
            return 404, {"error": "not found"}, {}
        repo_id, rest = "/".join(parts[2:4]), parts[4:]
        repos, prefix = (self.repos, "datasets/") if parts[1] == "datasets" else (self.models, "")
        repo = repos.get(repo_id)
        if repo is None:
            return 404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"}
        revision = "/".join(rest[1:]) if rest[:1] == ["revision"] else "main"
        if revision not in repo.tags and repo.at(revision) is None:  # as the Hub answers a revision it lacks
            return 404, {"error": f"Invalid rev id: {revision}"}, {"X-Error-Code": "RevisionNotFound"}
        if (method == "GET" and not rest) or rest[:1] == ["revision"]:
            return 200, {"id": repo_id, "sha": COMMIT_OID, "private": False, "siblings": []}, {}
        if method == "GET" and rest[:1] == ["tree"]:
            files = repo.at("/".join(rest[1:4]) if rest[1:3] == ["refs", "pr"] else "main")
            if files is None:
                return 404, {"error": "Revision not found"}, {"X-Error-Code": "RevisionNotFound"}
            return (
                200,
                [
                    {"type": "file", "path": name, "size": len(data), "oid": "0" * 40}
                    for name, data in sorted(files.items())
                ],
                {},
            )
        if method == "GET" and rest == ["discussions"]:  # HfApi.get_repo_discussions: one page, filters applied
            wanted = (query or {}).get("status", ["all"])[0]
            listed = [
                {
                    "num": number,
                    "title": f"pull request {number}",
                    "author": {"name": "someone"},
                    "createdAt": "2026-01-01T00:00:00.000Z",
                    "status": "closed" if number in repo.closed else "open",
                    "repo": {"name": repo_id, "type": parts[1][:-1]},
                    "isPullRequest": True,
                }
                for number in range(1, len(repo.prs) + 1)
            ]
            listed = [d for d in listed if wanted == "all" or d["status"] == wanted]
            return 200, {"discussions": listed, "count": len(listed), "start": 0, "numClosedDiscussions": 0}, {}
        if method == "GET" and rest == ["refs"]:
            refs = [{"name": tag, "ref": f"refs/tags/{tag}", "targetCommit": oid} for tag, oid in repo.tags.items()]
            return (
                200,
                {
                    "branches": [{"name": "main", "ref": "refs/heads/main", "targetCommit": COMMIT_OID}],
                    "converts": [],
                    "tags": refs,
                },
                {},
            )
        if method == "PUT" and rest == ["settings"]:
            repo.settings.update(json.loads(body))
            return 200, {}, {}
        if method == "POST" and rest[:1] == ["preupload"]:
            files = json.loads(body)["files"]
            return (
                200,
                {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files]},
                {},
            )
        if method == "POST" and rest[:1] == ["commit"]:
            create_pr = (query or {}).get("create_pr") == ["1"]
            files = {} if create_pr else repo.files
            for line in body.decode().splitlines():
                entry = json.loads(line)
                if entry["key"] == "file":
                    files[entry["value"]["path"]] = base64.b64decode(entry["value"]["content"])
                elif entry["key"] == "deletedFile":
                    files.pop(entry["value"]["path"], None)
            answer = {"commitUrl": f"{self.endpoint}/{prefix}{repo_id}/commit/{COMMIT_OID}", "commitOid": COMMIT_OID}
            if create_pr:
                repo.prs.append(files)
                answer["pullRequestUrl"] = f"{self.endpoint}/{prefix}{repo_id}/discussions/{len(repo.prs)}"
            return 200, answer, {}
        if method == "POST" and rest[:1] == ["tag"]:
            repo.tags[json.loads(body)["tag"]] = COMMIT_OID
            return 200, {}, {}
        return 404, {"error": f"no route {method} {path}"}, {}


def call_names(hub: LocalHub) -> list[str]:
    """The ``HfApi`` methods behind the recorded requests, in order (a commit's three requests are one call)."""
    names = []
    for method, path in hub.requests:
        last = path.rstrip("/").split("/")
        name = (
            "create_repo"
            if path == "/api/repos/create"
            else "update_repo_settings"
            if last[-1] == "settings"
            else "list_repo_refs"
            if last[-1] == "refs"
            else "list_repo_files"
            if "tree" in last
            else "create_tag"
            if "tag" in last
            else "create_commit"
            if "commit" in last or "preupload" in last or path == "/api/validate-yaml"
            else "repo_exists"
            if method == "GET"
            else f"{method} {path}"
        )
        if not (name == "create_commit" and names[-1:] == ["create_commit"]):
            names.append(name)
    return names


def configure_hub(hub: LocalHub, monkeypatch, cache: Path) -> None:
    """Make ``hub`` the Hub configured here, as HF_ENDPOINT would (read by huggingface_hub at import),
    with its own download cache ``cache`` (the session's would answer a repo another test downloaded)."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "ENDPOINT", hub.endpoint)
    monkeypatch.setattr(
        constants, "HUGGINGFACE_CO_URL_TEMPLATE", hub.endpoint + "/{repo_id}/resolve/{revision}/{filename}"
    )


def local_hub_api(hub: LocalHub, monkeypatch):
    """The real ``HfApi`` on ``hub`` (the tests' HF_HUB_OFFLINE guard lifted for it: it is 127.0.0.1)."""
    from huggingface_hub import HfApi, constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    return HfApi(endpoint=hub.endpoint)
