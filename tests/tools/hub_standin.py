# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""A small HTTP stand-in for the Hugging Face Hub, for tests only: the Hub itself is unreachable here.

It serves, in memory, model and dataset repositories through just the endpoints huggingface_hub 2.4 calls to create a
repository, upload a folder (the README's YAML check; preupload, answering "regular" for every file, i.e. inline
base64 in the commit, so no LFS / Xet storage is needed; the NDJSON commit) and download it again (repository info at
a revision, file tree listing, paths-info, HEAD/GET of `resolve/<revision>/<file>`); `add_repo` serves one that exists
before the test, such as a dataset for `datasets.load_dataset`. Point a process at it with `HF_ENDPOINT=<endpoint>`
set before huggingface_hub is imported, or pass `endpoint=`. Anything else answers 404 and is recorded in
`unhandled`, so a test sees when a new client version needs more.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

import yaml

# A dataset repository is kept under "datasets/<owner>/<name>" in `HubStandIn.repos`, a model under "<owner>/<name>".
_API = r"/api/(?:models/|(?P<kind>datasets)/)(?P<repo>[^/]+/[^/]+)"
_FILE = r"/(?:(?P<kind>datasets)/)?(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<path>.+)"
_ROUTES = {
    ("POST", re.compile(r"/api/repos/create")): "create",
    ("POST", re.compile(r"/api/validate-yaml")): "validate_yaml",
    ("POST", re.compile(rf"{_API}/preupload/(?P<rev>[^/]+)")): "preupload",
    ("POST", re.compile(rf"{_API}/commit/(?P<rev>[^/]+)")): "commit",
    ("POST", re.compile(rf"{_API}/paths-info/(?P<rev>[^/]+)")): "paths_info",
    ("GET", re.compile(rf"{_API}(?:/revision/(?P<rev>[^/]+))?")): "info",
    ("GET", re.compile(rf"{_API}/tree/(?P<rev>[^/]+)(?:/(?P<folder>.+))?")): "tree",
    ("GET", re.compile(_FILE)): "resolve",
    ("HEAD", re.compile(_FILE)): "resolve",
}


class HubStandIn:
    """`with HubStandIn() as hub:` serves on 127.0.0.1 at `hub.endpoint`; `hub.repos[repo_id]` is `{path: bytes}`."""

    def __init__(self):
        self.repos: dict[str, dict[str, bytes]] = {}
        self.commits: dict[str, str] = {}  # repo id -> current commit sha
        self.unhandled: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def add_repo(self, repo: str, files: Path | dict[str, bytes], kind: str = "model") -> None:
        """Serves a repository that exists before the test starts: a folder's files, or `{path: bytes}`."""
        if isinstance(files, Path):
            files = {str(p.relative_to(files)): p.read_bytes() for p in sorted(files.rglob("*")) if p.is_file()}
        key = f"datasets/{repo}" if kind == "dataset" else repo
        self.repos[key] = dict(files)
        self.commits[key] = hashlib.sha1(repr(sorted(files)).encode()).hexdigest()

    def __enter__(self) -> HubStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()


def _handler(hub: HubStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # keep pytest output clean
            pass

        def _route(self, method: str) -> None:
            path = unquote(urlparse(self.path).path)
            for (verb, pattern), name in _ROUTES.items():
                match = pattern.fullmatch(path)
                if verb == method and match:
                    fields = match.groupdict()
                    if fields.pop("kind", None):
                        fields["repo"] = f"datasets/{fields['repo']}"
                    return getattr(self, f"_{name}")(**fields)
            hub.unhandled.append(f"{method} {self.path}")
            self._send(404, {"error": "not served by the stand-in"})

        do_GET = lambda self: self._route("GET")  # noqa: E731
        do_HEAD = lambda self: self._route("HEAD")  # noqa: E731
        do_POST = lambda self: self._route("POST")  # noqa: E731

        def _body(self) -> bytes:
            return self.rfile.read(int(self.headers.get("Content-Length", 0)))

        def _send(self, status: int, payload: dict | list | bytes, headers: dict[str, str] | None = None) -> None:
            body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header(
                "Content-Type", "application/octet-stream" if isinstance(payload, bytes) else "application/json"
            )
            self.send_header("Content-Length", str(len(body)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _missing(self, repo: str) -> bool:
            if repo in hub.repos:
                return False
            self._send(404, {"error": f"Repository {repo} not found"}, {"X-Error-Code": "RepoNotFound"})
            return True

        def _create(self) -> None:
            request = json.loads(self._body())
            repo = f"{request['organization']}/{request['name']}" if request.get("organization") else request["name"]
            repo = f"datasets/{repo}" if request.get("type") == "dataset" else repo
            hub.repos.setdefault(repo, {})
            hub.commits.setdefault(repo, "0" * 40)
            self._send(200, {"url": f"{hub.endpoint}/{repo}", "name": repo})

        def _validate_yaml(self) -> None:
            # The README's front matter must be a YAML mapping (the real Hub also checks its fields' schema).
            content = json.loads(self._body())["content"]
            match = re.match(r"---\n(.*?)\n---\n", content, re.DOTALL)
            try:
                valid = match is not None and isinstance(yaml.safe_load(match.group(1)), dict)
            except yaml.YAMLError:
                valid = False
            if valid:
                self._send(200, {"warnings": []})
            else:
                self._send(400, {"errors": [{"message": "README.md front matter is not a YAML mapping"}]})

        def _preupload(self, repo: str, rev: str) -> None:
            files = json.loads(self._body())["files"]
            if not self._missing(repo):
                self._send(
                    200,
                    {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files]},
                )

        def _commit(self, repo: str, rev: str) -> None:
            lines = [json.loads(line) for line in self._body().decode().splitlines() if line.strip()]
            if self._missing(repo):
                return
            for line in lines:
                if line["key"] == "file":
                    hub.repos[repo][line["value"]["path"]] = base64.b64decode(line["value"]["content"])
                elif line["key"] == "deletedFile":
                    hub.repos[repo].pop(line["value"]["path"], None)
            sha = hashlib.sha1(json.dumps(lines, sort_keys=True).encode()).hexdigest()
            hub.commits[repo] = sha
            self._send(200, {"commitUrl": f"{hub.endpoint}/{repo}/commit/{sha}", "commitOid": sha})

        def _info(self, repo: str, rev: str | None = None) -> None:
            if self._missing(repo):
                return
            siblings = [{"rfilename": path} for path in sorted(hub.repos[repo])]
            sha = hub.commits[repo]
            self._send(
                200, {"id": repo, "modelId": repo, "sha": sha, "siblings": siblings, "private": False, "tags": []}
            )

        def _entry(self, path: str, content: bytes) -> dict:
            return {"type": "file", "oid": hashlib.sha1(content).hexdigest(), "size": len(content), "path": path}

        def _paths_info(self, repo: str, rev: str) -> None:
            asked = parse_qs(self._body().decode()).get("paths", [])
            if self._missing(repo):
                return
            files = hub.repos[repo]
            found = [self._entry(p, files[p]) for p in asked if p in files]
            found += [{"type": "directory", "oid": "0" * 40, "path": p} for p in asked
                      if p not in files and any(f.startswith(f"{p}/") for f in files)]  # fmt: skip
            self._send(200, found)

        def _tree(self, repo: str, rev: str, folder: str | None = None) -> None:
            if self._missing(repo):
                return
            prefix = f"{folder.rstrip('/')}/" if folder else ""
            recursive = "recursive=true" in self.path
            entries: dict[str, dict] = {}
            for path, content in sorted(hub.repos[repo].items()):
                if not path.startswith(prefix):
                    continue
                child = path[len(prefix) :]
                if "/" in child and not recursive:
                    directory = prefix + child.split("/")[0]
                    entries[directory] = {"type": "directory", "oid": "0" * 40, "path": directory}
                else:
                    entries[path] = self._entry(path, content)
            if prefix and not entries:
                self._send(404, {"error": f"Entry {folder} not found"}, {"X-Error-Code": "EntryNotFound"})
            else:
                self._send(200, list(entries.values()))

        def _resolve(self, repo: str, rev: str, path: str) -> None:
            if self._missing(repo):
                return
            content = hub.repos[repo].get(path)
            if content is None:
                self._send(
                    404,
                    {"error": f"Entry {path} not found"},
                    {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": hub.commits[repo]},
                )
                return
            etag = hashlib.sha1(content).hexdigest()
            self._send(200, content, {"X-Repo-Commit": hub.commits[repo], "ETag": f'"{etag}"'})

    return Handler


def online_env(hub: HubStandIn, home: Path) -> dict[str, str]:
    """A user's environment: the Hub reachable (the stand-in), an empty cache, this environment's commands first."""
    online = {var: "0" for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE")}
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    return {**os.environ, **online, "HF_ENDPOINT": hub.endpoint, "HF_HOME": str(home), "PATH": path}
