"""A small GitHub REST client (urllib): the files of a pull request, and one feedback comment
that is created once and updated in place afterwards.

Server errors (5xx), 429 and network failures are retried with exponential backoff; 401 and 403
raise ``GitHubAuthError`` at once, with what to fix.
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from rnngrade import __version__
from rnngrade.errors import ExitCode, RnngradeError

MARKER = "<!-- rnngrade:feedback -->"
MAX_PAGES = 30  # GitHub lists at most 3000 files of a pull request: 30 pages of 100


class GitHubError(RnngradeError):
    """A GitHub API call failed."""

    exit_code = ExitCode.GITHUB

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class GitHubAuthError(GitHubError):
    """GitHub refused the token (401) or its permissions (403)."""


@dataclass
class GitHubClient:
    """Calls ``api_url`` (``https://api.github.com`` or a GitHub Enterprise URL) for ``repo``."""

    api_url: str
    repo: str
    token: str
    retries: int = 4
    backoff: float = 1.0  # seconds before the first retry; doubled after each
    max_delay: float = 30.0
    timeout: float = 30.0
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)

    def _url(self, path: str, params: dict[str, Any] | None = None) -> str:
        url = self.api_url.rstrip("/") + path
        return url + ("?" + urllib.parse.urlencode(params) if params else "")

    def request(self, method: str, url: str, body: Any = None) -> tuple[Any, dict[str, str]]:
        """One call with retries; returns (decoded JSON body, response headers)."""
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Accept": "application/vnd.github+json",
                   "Authorization": f"Bearer {self.token}",
                   "X-GitHub-Api-Version": "2022-11-28",
                   "User-Agent": f"rnngrade/{__version__}"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        what = f"{method} {urllib.parse.urlsplit(url).path}"
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                self.sleep(min(self.backoff * 2 ** (attempt - 1), self.max_delay))
            request = urllib.request.Request(url, data=data, headers=headers, method=method)
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    raw = response.read()
                    return (json.loads(raw) if raw.strip() else None), dict(response.headers)
            except urllib.error.HTTPError as exc:
                message = _error_message(exc)
                if exc.code in (401, 403):
                    raise GitHubAuthError(_auth_advice(exc.code, what, message), exc.code) \
                        from None
                if exc.code < 500 and exc.code != 429:
                    raise GitHubError(f"{what}: HTTP {exc.code} {message}", exc.code) from None
                last = f"HTTP {exc.code} {message}".strip()
            except (urllib.error.URLError, OSError) as exc:
                last = str(getattr(exc, "reason", exc))
        raise GitHubError(f"{what} failed {self.retries + 1} times; last: {last}")

    def paginate(self, path: str) -> list[Any]:
        """Every item of a list endpoint, following ``Link: rel="next"`` on the same host."""
        items: list[Any] = []
        url: str | None = self._url(path, {"per_page": 100})
        origin = urllib.parse.urlsplit(self.api_url)[:2]
        for _ in range(MAX_PAGES):
            if url is None:
                break
            page, headers = self.request("GET", url)
            items += page or []
            url = _next_link(headers.get("Link", "") or headers.get("link", ""))
            if url is not None and urllib.parse.urlsplit(url)[:2] != origin:
                url = None  # never send the token to another host
        return items

    def pull_request_files(self, number: int) -> list[str]:
        return [f["filename"] for f in self.paginate(f"/repos/{self.repo}/pulls/{number}/files")]

    def comments(self, number: int) -> list[dict[str, Any]]:
        return self.paginate(f"/repos/{self.repo}/issues/{number}/comments")

    def upsert_comment(self, number: int, body: str, *, marker: str = MARKER,
                       not_by: str | None = None) -> tuple[str, dict[str, Any]]:
        """Update the last comment holding ``marker`` (not written by ``not_by``, the pull
        request's author), or create one; returns ("updated" | "created", the comment)."""
        ours = [c for c in self.comments(number)
                if marker in (c.get("body") or "")
                and (c.get("user") or {}).get("login") != not_by]
        if ours:
            comment, _ = self.request(
                "PATCH", self._url(f"/repos/{self.repo}/issues/comments/{ours[-1]['id']}"),
                {"body": body})
            return "updated", comment
        comment, _ = self.request("POST", self._url(f"/repos/{self.repo}/issues/{number}/comments"),
                                  {"body": body})
        return "created", comment


@contextlib.contextmanager
def commands_stopped(write: Callable[[str], None], enabled: bool = True) -> Iterator[None]:
    """GitHub Actions workflow commands (``::error``, ``::add-mask``, ...) turned off in the job's
    log while the block runs: what a submission controls (its file names, its messages) may reach
    the log, and must not act there. Writes ``::stop-commands::TOKEN`` before and ``::TOKEN::``
    after; the token is random, so no text printed in between can end the pause."""
    if not enabled:
        yield
        return
    token = secrets.token_hex(16)
    write(f"::stop-commands::{token}")
    try:
        yield
    finally:
        write(f"::{token}::")


def _next_link(header: str) -> str | None:
    for part in header.split(","):
        match = re.match(r'\s*<([^>]+)>\s*;\s*rel="?next"?', part)
        if match:
            return match.group(1)
    return None


def _error_message(exc: urllib.error.HTTPError) -> str:
    try:
        text = exc.read().decode("utf-8", "replace")
    except OSError:
        return ""
    try:
        return str(json.loads(text).get("message", ""))[:300]
    except (ValueError, AttributeError):
        return text[:300]


def _auth_advice(status: int, what: str, message: str) -> str:
    said = f" (GitHub says: {message})" if message else ""
    if status == 401:
        return (f"{what}: GitHub rejected the token, HTTP 401{said}. Pass a valid token with "
                "--token or GITHUB_TOKEN (in a workflow: env: GITHUB_TOKEN: "
                "${{ secrets.GITHUB_TOKEN }}).")
    return (f"{what}: the token may not do this, HTTP 403{said}. The workflow needs "
            "`permissions: pull-requests: write` (and contents: read); pull requests from forks "
            "get a read-only token, so grade them from a branch of the repository instead.")
