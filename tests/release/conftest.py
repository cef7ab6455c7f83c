"""Fixtures of the release tests: one student release per test run, and a fake GitHub API."""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from rnngrade.labs import available_labs, get_lab
from rnngrade.release import build_release
from tests.shared_public_fixtures import share_public_fixtures

PUBLIC_LABS = [lab for lab in available_labs()
               if any(lab.assignment_dir().glob("test_*_public.py"))]


@pytest.fixture(scope="session")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The student repository as ``rnngrade release`` builds it (never modify it: copy it).
    Built once per test run: under pytest-xdist the first worker to ask builds it, under a lock,
    in the folder the workers' temporary folders share, and the others wait for it."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        out = tmp_path_factory.mktemp("release") / "student-repo"
        build_release(out, grading_workflow=True)
        return out
    shared = tmp_path_factory.getbasetemp().parent / "release"
    out, built = shared / "student-repo", shared / "built"
    with open(f"{shared}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not built.exists():
            shutil.rmtree(shared, ignore_errors=True)  # what a failed build left
            for lab in PUBLIC_LABS:  # tests/test_generated.py asks for the same vectors
                share_public_fixtures(lab, shared.parent / "public-fixtures")
            build_release(out, grading_workflow=True)
            built.touch()
    return out


@pytest.fixture
def lab1_vectors_shared(tmp_path_factory: pytest.TempPathFactory) -> None:
    """lab1's public vectors computed once per test run for the tests that release lab1 alone
    (the whole release, maybe built in another worker, computed them already)."""
    share_public_fixtures(get_lab("lab1"), tmp_path_factory.getbasetemp().parent
                          / "public-fixtures")


@pytest.fixture
def release_copy(release: Path, tmp_path: Path) -> Path:
    """A copy of the release to change freely."""
    target = tmp_path / "student-repo"
    shutil.copytree(release, target)
    return target


@dataclass
class FakeGitHub:
    """What the fake API holds and saw. ``failures`` maps "METHOD /path" to the statuses to answer
    before the real answer (e.g. [500, 502]); ``always`` maps it to a status answered forever."""

    repo: str = "course/alice-labs"
    pr: int = 7
    files: list[str] = field(default_factory=list)
    comments: list[dict[str, Any]] = field(default_factory=list)
    failures: dict[str, list[int]] = field(default_factory=dict)
    always: dict[str, int] = field(default_factory=dict)
    requests: list[tuple[str, str, str, Any]] = field(default_factory=list)  # method, path, auth
    url: str = ""
    next_id: int = 1000

    def seen(self, method: str, fragment: str = "") -> list[tuple[str, str, str, Any]]:
        return [r for r in self.requests if r[0] == method and fragment in r[1]]

    def answer(self, method: str, path: str, body: Any) -> tuple[int, Any, dict[str, str]]:
        route = urlsplit(path).path
        key = f"{method} {route}"
        if key in self.always:
            status = self.always[key]
            return status, {"message": "Bad credentials" if status == 401
                            else "Resource not accessible by integration"}, {}
        if self.failures.get(key):
            return self.failures[key].pop(0), {"message": "Server Error"}, {}
        base = f"/repos/{self.repo}"
        page = int(parse_qs(urlsplit(path).query).get("page", ["1"])[0])
        if method == "GET" and route == f"{base}/pulls/{self.pr}/files":
            return self._page([{"filename": f, "status": "modified"} for f in self.files], page,
                              route)
        if method == "GET" and route == f"{base}/issues/{self.pr}/comments":
            return self._page(self.comments, page, route)
        if method == "POST" and route == f"{base}/issues/{self.pr}/comments":
            comment = {"id": self.next_id, "body": body["body"],
                       "user": {"login": "github-actions[bot]", "type": "Bot"},
                       "html_url": f"https://github.test/{self.repo}/pull/{self.pr}"
                                   f"#issuecomment-{self.next_id}"}
            self.next_id += 1
            self.comments.append(comment)
            return 201, comment, {}
        match = re.fullmatch(rf"{base}/issues/comments/(\d+)", route)
        if method == "PATCH" and match:
            for comment in self.comments:
                if comment["id"] == int(match.group(1)):
                    comment["body"] = body["body"]
                    return 200, comment, {}
        return 404, {"message": "Not Found"}, {}

    def _page(self, items: list, page: int, route: str, size: int = 2
              ) -> tuple[int, Any, dict[str, str]]:
        """Pages of ``size`` items with a Link header, like GitHub (tiny pages test paging)."""
        chunk = items[(page - 1) * size: page * size]
        headers = {}
        if page * size < len(items):
            headers["Link"] = f'<{self.url}{route}?per_page={size}&page={page + 1}>; rel="next"'
        return 200, chunk, headers


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    """A local HTTP server on 127.0.0.1 (random port) that imitates the GitHub REST API."""
    state = FakeGitHub()

    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            state.requests.append((self.command, self.path,
                                   self.headers.get("Authorization", ""), body))
            status, payload, headers = state.answer(self.command, self.path, body)
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = _serve

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
