"""A fake GitHub REST API on 127.0.0.1 for tests and benchmarks (stdlib ``http.server`` only).

It serves the routes the trail sync and PyGithub use, with GitHub's semantics where they matter:

- ``GET /repos/{o}/{n}``, ``/repos/{o}/{n}/issues`` (``state`` default open, ``since``, ``sort``
  created|updated|comments, ``direction`` default desc; pull requests included, flagged),
  ``/repos/{o}/{n}/issues/comments`` (``since``, ``sort`` created|updated, ``direction``; ascending
  id without ``sort``), ``/repos/{o}/{n}/issues/comments/{id}``, ``/repos/{o}/{n}/issues/{n}``,
  ``/repos/{o}/{n}/issues/{n}/comments``, ``/rate_limit``;
- for publishing (``FakeRepoWrites``): ``GET /repos/{o}/{n}/branches/{b}``, ``GET|POST`` git refs,
  ``GET|PUT /repos/{o}/{n}/contents/{path}`` (base64, ``sha`` required to update, 409 on a stale
  one), ``GET|POST /repos/{o}/{n}/pulls`` (``state``, ``head`` as ``owner:branch``, ``base``) and
  ``PATCH /repos/{o}/{n}/pulls/{n}``; every repo has a ``main`` branch;
- page-number pagination (``per_page`` ≤ 100, default 30) announced by ``Link`` headers
  (``next``/``last``/``first``/``prev``) whose URLs use the server's own host:port;
- ``since`` is inclusive (``updated_at >= since``); a new comment bumps its issue's ``updated_at``;
- ``Authorization: token <t>`` (or ``Bearer``) is required, else 401 "Bad credentials";
- every request is recorded (``requests``, ``count``) and can be waited for (``wait_for_requests``);
- faults are armed with ``inject``: any status with headers/body (5xx, 429 + ``Retry-After``, 403
  secondary or primary rate limit), a delay, a body cut short of its ``Content-Length``, a 200 with
  broken JSON, the previous page again, a ``Link`` looping back, or an error body echoing the caller's ``Authorization`` header;
- ``hold`` parks one chosen request before it is answered until the test releases it (the kill
  test: the client is provably mid-listing), ``delay_s`` slows every response, ``prefix`` emulates
  GitHub Enterprise's ``/api/v3``.

Times come from a deterministic clock: each mutation without an explicit ``at`` advances it by
``step``.
"""

from __future__ import annotations

import bisect
import json
import re
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

DEFAULT_TOKEN = "ghp_FAKEtoken0123456789abcdefSECRET"
RUNSTATE_MARKER = "<!-- runstate:v1 -->"
MAX_PER_PAGE = 100
DEFAULT_PER_PAGE = 30

SECONDARY_RATE_LIMIT_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
)
PRIMARY_RATE_LIMIT_MESSAGE = "API rate limit exceeded for user ID 1."


def iso(value: datetime) -> str:
    """GitHub's timestamp form: ``2026-08-01T00:00:00Z``."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def milestone(phase: str, run: str, at: str, *extra: str, status: str = "done") -> str:
    """A runstate:v1 milestone body (header line plus one pair per extra line)."""
    lines = [RUNSTATE_MARKER, f"phase={phase} status={status} run={run} at={at}", *extra]
    return "\n".join(lines)


@dataclass
class Fault:
    """One injected misbehaviour, answered instead of the real reply (``status``, ``headers``,
    ``body``), or, with status 200 and no ``body``, done to the real reply (``delay_s``,
    ``truncate``, ``broken_json``, ``repeat_previous``: the body of the previous answer on the same
    path again, a repeated page; ``link_back_to``: a ``Link`` whose ``next`` points to that page
    number, a pagination loop; ``link_ahead``: a ``next`` one page further, whatever the total).
    A repeated page is the last body answered without this fault, so it repeats while armed."""

    status: int = 500
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    delay_s: float = 0.0
    truncate: bool = False
    broken_json: bool = False
    echo_token: bool = False
    repeat_previous: bool = False
    link_back_to: int | None = None
    link_ahead: bool = False

    @classmethod
    def retry_after(cls, status: int = 429, seconds: int = 0) -> Fault:
        return cls(status=status, headers={"Retry-After": str(seconds)}, body={"message": "slow down"})

    @classmethod
    def secondary_rate_limit(cls, retry_after: int | None = 0) -> Fault:
        headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
        return cls(status=403, headers=headers, body={"message": SECONDARY_RATE_LIMIT_MESSAGE})

    @classmethod
    def primary_rate_limit(cls, reset_epoch: int) -> Fault:
        headers = {
            "X-RateLimit-Limit": "5000",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": str(reset_epoch),
        }
        return cls(status=403, headers=headers, body={"message": PRIMARY_RATE_LIMIT_MESSAGE})


@dataclass
class _Armed:
    fault: Fault
    path_contains: str
    skip: int
    times: int


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    query: dict[str, str]
    status: int
    fault: bool


@dataclass
class _Repo:
    name: str
    issues: dict[int, dict[str, Any]] = field(default_factory=dict)
    comments: dict[int, dict[str, Any]] = field(default_factory=dict)
    issue_times: dict[int, tuple[datetime, datetime]] = field(default_factory=dict)
    comment_times: dict[int, tuple[datetime, datetime]] = field(default_factory=dict)
    encoded: dict[tuple[str, int], bytes] = field(default_factory=dict)
    extra_items: dict[str, list[Any]] = field(default_factory=lambda: {"issues": [], "comments": []})
    hidden_comments: set[int] = field(default_factory=set)
    listing_memo: dict[tuple[Any, ...], list[int]] = field(default_factory=dict)
    version: int = 0
    _sorted: dict[str, tuple[int, list[tuple[datetime, int]]]] = field(default_factory=dict)

    def touched(self) -> None:
        self.version += 1

    def by_updated(self, kind: str) -> list[tuple[datetime, int]]:
        """``(updated_at, key)`` ascending, rebuilt only after a mutation."""
        cached = self._sorted.get(kind)
        if cached is not None and cached[0] == self.version:
            return cached[1]
        times = self.issue_times if kind == "issues" else self.comment_times
        ordered = sorted((t[1], key) for key, t in times.items())
        self._sorted[kind] = (self.version, ordered)
        return ordered


class FakeGitHub:
    """The fake server; use as a context manager or call ``start()`` / ``stop()``."""

    def __init__(
        self,
        token: str = DEFAULT_TOKEN,
        *,
        start: datetime = datetime(2026, 8, 1, tzinfo=UTC),
        step: timedelta = timedelta(minutes=1),
        prefix: str = "",
        delay_s: float = 0.0,
    ) -> None:
        self.token = token
        self.prefix = prefix.rstrip("/")
        self.delay_s = delay_s
        self._clock = start
        self._step = step
        self._repos: dict[str, _Repo] = {}
        self._next_comment_id = 1_000_001
        self._lock = threading.RLock()
        self._faults: list[_Armed] = []
        self._hooks: list[tuple[str, int, Callable[[], None]]] = []
        self._seen = threading.Condition()
        self._last_body: dict[str, bytes] = {}
        self.requests: list[RecordedRequest] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.writes = FakeRepoWrites()

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> FakeGitHub:
        handler = type("FakeGitHubHandler", (_Handler,), {"fake": self})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        server.block_on_close = False
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def root_url(self) -> str:
        assert self._server is not None, "start() the fake first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def base_url(self) -> str:
        """What to pass as PyGithub's ``base_url``."""
        return self.root_url + self.prefix

    # ------------------------------------------------------------------ data

    def now(self) -> datetime:
        return self._clock

    def tick(self, at: datetime | None = None) -> datetime:
        """The time of a mutation: ``at`` (which also sets the clock) or the clock advanced by ``step``."""
        with self._lock:
            self._clock = at if at is not None else self._clock + self._step
            return self._clock

    def repo(self, name: str) -> _Repo:
        """The repo's data, created empty on first use (unknown repos answer 404 until then)."""
        with self._lock:
            if name not in self._repos:
                self._repos[name] = _Repo(name)
            return self._repos[name]

    def _api(self, path: str) -> str:
        return f"{self.base_url}{path}"

    def add_issue(
        self,
        repo: str,
        number: int | None = None,
        *,
        title: str = "",
        state: str = "open",
        pull_request: bool = False,
        at: datetime | None = None,
    ) -> int:
        with self._lock:
            r = self.repo(repo)
            number = number if number is not None else max(r.issues, default=0) + 1
            when = self.tick(at)
            r.issues[number] = {
                "id": 500_000 + number,
                "number": number,
                "title": title or f"issue {number}",
                "state": state,
                "url": self._api(f"/repos/{repo}/issues/{number}"),
                "html_url": f"https://github.example/{repo}/issues/{number}",
                "comments_url": self._api(f"/repos/{repo}/issues/{number}/comments"),
                "user": {"login": "octo", "id": 1, "type": "User"},
                "labels": [],
                "comments": 0,
                "created_at": iso(when),
                "updated_at": iso(when),
                "closed_at": iso(when) if state == "closed" else None,
                "body": "",
            }
            if pull_request:
                r.issues[number]["pull_request"] = {"url": self._api(f"/repos/{repo}/pulls/{number}")}
            r.issue_times[number] = (when, when)
            self._changed(r, "issues", number)
            return number

    def add_comment(
        self, repo: str, issue: int, body: str, *, author: str = "sched-bot", at: datetime | None = None
    ) -> int:
        with self._lock:
            r = self.repo(repo)
            if issue not in r.issues:
                self.add_issue(repo, issue, at=at)
            when = self.tick(at)
            comment_id = self._next_comment_id
            self._next_comment_id += 1
            r.comments[comment_id] = {
                "id": comment_id,
                "url": self._api(f"/repos/{repo}/issues/comments/{comment_id}"),
                "html_url": f"https://github.example/{repo}/issues/{issue}#issuecomment-{comment_id}",
                "issue_url": self._api(f"/repos/{repo}/issues/{issue}"),
                "user": {"login": author, "id": 2, "type": "Bot"},
                "author_association": "NONE",
                "body": body,
                "created_at": iso(when),
                "updated_at": iso(when),
            }
            r.comment_times[comment_id] = (when, when)
            self._changed(r, "comments", comment_id)
            self._bump_issue(r, issue, when, comments_delta=1)
            return comment_id

    def edit_comment(self, repo: str, comment_id: int, body: str, *, at: datetime | None = None) -> None:
        with self._lock:
            r = self.repo(repo)
            when = self.tick(at)
            r.comments[comment_id]["body"] = body
            r.comments[comment_id]["updated_at"] = iso(when)
            r.comment_times[comment_id] = (r.comment_times[comment_id][0], when)
            self._changed(r, "comments", comment_id)

    def delete_comment(self, repo: str, comment_id: int) -> None:
        with self._lock:
            r = self.repo(repo)
            issue = int(r.comments[comment_id]["issue_url"].rsplit("/", 1)[1])
            del r.comments[comment_id]
            del r.comment_times[comment_id]
            r.encoded.pop(("comments", comment_id), None)
            r.touched()
            if issue in r.issues:
                r.issues[issue]["comments"] -= 1
                self._changed(r, "issues", issue)

    def set_issue_state(self, repo: str, number: int, state: str, *, at: datetime | None = None) -> None:
        with self._lock:
            r = self.repo(repo)
            when = self.tick(at)
            r.issues[number]["state"] = state
            r.issues[number]["closed_at"] = iso(when) if state == "closed" else None
            self._bump_issue(r, number, when)

    def add_raw_items(self, repo: str, listing: str, items: Iterable[Any]) -> None:
        """Serve arbitrary (possibly malformed) items at the end of every ``issues``/``comments`` listing."""
        with self._lock:
            r = self.repo(repo)
            r.extra_items[listing].extend(items)
            r.touched()

    def hide_from_listings(self, repo: str, comment_id: int) -> None:
        """Leave a comment out of listings while ``GET …/issues/comments/{id}`` still finds it.

        This is what an offset shift caused by a concurrent deletion looks like to a client.
        """
        with self._lock:
            r = self.repo(repo)
            r.hidden_comments.add(comment_id)
            r.touched()

    def _bump_issue(self, r: _Repo, number: int, when: datetime, comments_delta: int = 0) -> None:
        issue = r.issues[number]
        issue["updated_at"] = iso(when)
        issue["comments"] += comments_delta
        r.issue_times[number] = (r.issue_times[number][0], when)
        self._changed(r, "issues", number)

    @staticmethod
    def _changed(r: _Repo, kind: str, key: int) -> None:
        r.encoded.pop((kind, key), None)
        r.touched()

    def issues_json(self, repo: str) -> list[dict[str, Any]]:
        with self._lock:
            r = self.repo(repo)
            return [json.loads(json.dumps(r.issues[n])) for n in sorted(r.issues)]

    def comments_json(self, repo: str) -> list[dict[str, Any]]:
        with self._lock:
            r = self.repo(repo)
            return [json.loads(json.dumps(r.comments[c])) for c in sorted(r.comments)]

    def write_export(self, root: Path) -> None:
        """The recorded export of the served data: ``root/<owner>/<name>/{issues,comments}.json``."""
        with self._lock:
            for name in self._repos:
                d = root / name
                d.mkdir(parents=True, exist_ok=True)
                (d / "issues.json").write_text(json.dumps(self.issues_json(name), indent=1), encoding="utf-8")
                (d / "comments.json").write_text(
                    json.dumps(self.comments_json(name), indent=1), encoding="utf-8"
                )

    def load_export(self, repo: str, repo_dir: Path) -> tuple[int, int]:
        """Serve a recorded export's ``issues.json`` / ``comments.json`` (URLs rewritten to this server)."""
        issues = json.loads((repo_dir / "issues.json").read_text(encoding="utf-8"))
        comments = json.loads((repo_dir / "comments.json").read_text(encoding="utf-8"))
        with self._lock:
            r = self.repo(repo)
            for obj in issues:
                self._load_issue(r, repo, obj)
            for obj in comments:
                self._load_comment(r, repo, obj)
            r.touched()
        return len(issues), len(comments)

    def _load_issue(self, r: _Repo, repo: str, obj: dict[str, Any]) -> None:
        number = int(obj["number"])
        created = parse_iso(obj.get("created_at")) or self._clock
        updated = parse_iso(obj.get("updated_at")) or created
        obj = dict(obj, url=self._api(f"/repos/{repo}/issues/{number}"))
        obj.setdefault("state", "open")
        obj.setdefault("comments", 0)
        r.issues[number] = obj
        r.issue_times[number] = (created, updated)
        self._clock = max(self._clock, updated)

    def _load_comment(self, r: _Repo, repo: str, obj: dict[str, Any]) -> None:
        comment_id = int(obj["id"])
        issue = int(str(obj["issue_url"]).rstrip("/").rsplit("/", 1)[1])
        created = parse_iso(obj.get("created_at")) or self._clock
        updated = parse_iso(obj.get("updated_at")) or created
        obj = dict(
            obj,
            url=self._api(f"/repos/{repo}/issues/comments/{comment_id}"),
            issue_url=self._api(f"/repos/{repo}/issues/{issue}"),
        )
        r.comments[comment_id] = obj
        r.comment_times[comment_id] = (created, updated)
        self._next_comment_id = max(self._next_comment_id, comment_id + 1)
        self._clock = max(self._clock, updated)

    # ------------------------------------------------------------------ faults and requests

    def inject(self, fault: Fault, *, path_contains: str = "", skip: int = 0, times: int = 1) -> None:
        """Answer the matching requests ``skip+1`` … ``skip+times`` with ``fault``."""
        with self._lock:
            self._faults.append(_Armed(fault, path_contains, skip, times))

    def call_before(self, action: Callable[[], None], *, path_contains: str = "", skip: int = 0) -> None:
        """Run ``action`` once, just before serving the ``skip+1``-th matching request."""
        with self._lock:
            self._hooks.append((path_contains, skip, action))

    def hold(self, *, path_contains: str = "", skip: int = 0) -> Gate:
        """Park the ``skip+1``-th matching request before it is answered, until ``Gate.release``.

        The client waiting on that reply cannot get past it, so whatever the test does while the
        request is parked (a SIGKILL, say) happens at a known point of the sync, however slow the
        machine is."""
        gate = Gate()
        self.call_before(gate.park, path_contains=path_contains, skip=skip)
        return gate

    def _run_hooks(self, path: str) -> None:
        due: list[Callable[[], None]] = []
        with self._lock:
            kept: list[tuple[str, int, Callable[[], None]]] = []
            for contains, skip, action in self._hooks:
                if contains not in path:
                    kept.append((contains, skip, action))
                elif skip > 0:
                    kept.append((contains, skip - 1, action))
                else:
                    due.append(action)
            self._hooks = kept
        for action in due:
            action()

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def _take_fault(self, path: str) -> Fault | None:
        with self._lock:
            for armed in self._faults:
                if armed.path_contains not in path:
                    continue
                if armed.skip > 0:
                    armed.skip -= 1
                    continue
                armed.times -= 1
                if armed.times <= 0:
                    self._faults.remove(armed)
                return armed.fault
        return None

    def _record(self, request: RecordedRequest) -> None:
        with self._seen:
            self.requests.append(request)
            self._seen.notify_all()

    def count(self, path_contains: str = "", *, query: dict[str, str] | None = None) -> int:
        """Requests received whose path contains ``path_contains`` (and whose query has ``query``)."""
        with self._seen:
            return sum(
                1
                for r in self.requests
                if path_contains in r.path and all(r.query.get(k) == v for k, v in (query or {}).items())
            )

    def reset_counts(self) -> None:
        with self._seen:
            self.requests.clear()

    def wait_for_requests(self, n: int, path_contains: str = "", timeout_s: float = 20.0) -> bool:
        """Block until ``n`` matching requests arrived (a condition wait, not a sleep)."""
        deadline = time.monotonic() + timeout_s
        with self._seen:
            while self.count(path_contains) < n:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._seen.wait(remaining)
        return True

    # ------------------------------------------------------------------ listings

    def listing(self, repo: str, kind: str, query: dict[str, str]) -> tuple[int, list[bytes]]:
        """``(total, encoded items of the requested page)`` of an ``issues`` or ``comments`` listing,
        filtered and ordered as GitHub does (``page`` / ``per_page`` taken from ``query``)."""
        per_page = _bounded_int(query.get("per_page"), DEFAULT_PER_PAGE, 1, MAX_PER_PAGE)
        page = _bounded_int(query.get("page"), 1, 1, 10**9)
        with self._lock:
            r = self.repo(repo)
            keys = self._listing_keys(r, kind, query)
            extra = r.extra_items[kind]
            total = len(keys) + len(extra)
            lo, hi = (page - 1) * per_page, page * per_page
            chunk = [self._encoded(r, kind, k) for k in keys[lo:hi]]
            chunk += [
                json.dumps(item).encode() for item in extra[max(0, lo - len(keys)) : max(0, hi - len(keys))]
            ]
            return total, chunk

    def _listing_keys(self, r: _Repo, kind: str, query: dict[str, str]) -> list[int]:
        """The ordered keys of a listing; the same query (any page) is answered from a memo."""
        memo_key = (r.version, kind, tuple(sorted((k, v) for k, v in query.items() if k != "page")))
        memo = r.listing_memo.get(memo_key)
        if memo is not None:
            return memo
        keys = self._ordered_keys(r, kind, query, parse_iso(query.get("since")))
        if kind == "issues":
            keys = [k for k in keys if _state_matches(r.issues[k], query.get("state", "open"))]
        elif r.hidden_comments:
            keys = [k for k in keys if k not in r.hidden_comments]
        if len(r.listing_memo) > 16:
            r.listing_memo.clear()
        r.listing_memo[memo_key] = keys
        return keys

    def _ordered_keys(self, r: _Repo, kind: str, query: dict[str, str], since: datetime | None) -> list[int]:
        sort = query.get("sort")
        times = r.issue_times if kind == "issues" else r.comment_times
        if kind == "comments" and sort is None:
            return sorted(k for k, t in times.items() if since is None or t[1] >= since)
        direction = query.get("direction", "desc")
        if sort == "updated":
            ordered = r.by_updated(kind)
            start = 0 if since is None else bisect.bisect_left(ordered, (since, -1))
            keys = [key for _, key in ordered[start:]]
            return keys[::-1] if direction == "desc" else keys
        selected = [k for k, t in times.items() if since is None or t[1] >= since]
        if sort == "comments" and kind == "issues":
            selected.sort(key=lambda k: (r.issues[k]["comments"], k))
        else:
            selected.sort(key=lambda k: (times[k][0], k))
        return selected[::-1] if direction == "desc" else selected

    def _encoded(self, r: _Repo, kind: str, key: int) -> bytes:
        cached = r.encoded.get((kind, key))
        if cached is None:
            source = r.issues if kind == "issues" else r.comments
            cached = json.dumps(source[key]).encode()
            r.encoded[(kind, key)] = cached
        return cached


class Gate:
    """One parked request (see ``FakeGitHub.hold``): ``wait_arrived`` then ``release``."""

    def __init__(self, max_hold_s: float = 120.0) -> None:
        self._arrived = threading.Event()
        self._released = threading.Event()
        self._max_hold_s = max_hold_s  # a forgotten gate cannot hang the server thread forever

    def park(self) -> None:
        self._arrived.set()
        self._released.wait(self._max_hold_s)

    def wait_arrived(self, timeout_s: float = 60.0) -> bool:
        return self._arrived.wait(timeout_s)

    def release(self) -> None:
        self._released.set()


def _state_matches(issue: dict[str, Any], wanted: str) -> bool:
    return wanted == "all" or issue.get("state") == wanted


_REPO = r"(?P<repo>[^/]+/[^/]+)"
_ROUTES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"^/repos/{_REPO}$"), "repo"),
    (re.compile(rf"^/repos/{_REPO}/issues$"), "issues"),
    (re.compile(rf"^/repos/{_REPO}/issues/comments$"), "comments"),
    (re.compile(rf"^/repos/{_REPO}/issues/comments/(?P<id>\d+)$"), "comment"),
    (re.compile(rf"^/repos/{_REPO}/issues/(?P<number>\d+)$"), "issue"),
    (re.compile(rf"^/repos/{_REPO}/issues/(?P<number>\d+)/comments$"), "issue_comments"),
    (re.compile(r"^/rate_limit$"), "rate_limit"),
    (re.compile(rf"^/repos/{_REPO}/branches/(?P<branch>[^?]+)$"), "branch"),
    (re.compile(rf"^/repos/{_REPO}/git/ref/heads/(?P<branch>.+)$"), "git_ref"),
    (re.compile(rf"^/repos/{_REPO}/contents/(?P<path>.+)$"), "contents"),
    (re.compile(rf"^/repos/{_REPO}/pulls$"), "pulls"),
]


class _Handler(BaseHTTPRequestHandler):
    fake: FakeGitHub
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body leave at once: no 40 ms delayed-ACK stalls
    wbufsize = -1

    def log_message(self, format: str, *args: Any) -> None:  # silence the default stderr log
        return

    def do_GET(self) -> None:  # noqa: N802 (http.server naming)
        fake = self.fake
        parsed = urllib.parse.urlsplit(self.path)
        path = parsed.path
        query = {k: v[-1] for k, v in urllib.parse.parse_qs(parsed.query).items()}
        fake._run_hooks(path)
        fault = fake._take_fault(path)
        delay = fake.delay_s + (fault.delay_s if fault else 0.0)
        if delay > 0:
            time.sleep(delay)
        if fault is not None and (fault.status != 200 or fault.body is not None):
            self._send_fault(fault, path, query)
            return
        status, headers, body = self._route(path, query)
        fake._record(RecordedRequest("GET", path, query, status, fault is not None))
        if status == 200:
            with fake._lock:
                previous = fake._last_body.get(path)
                if fault is not None and fault.repeat_previous and previous is not None:
                    body = previous
                else:
                    fake._last_body[path] = body
            if fault is not None and fault.link_back_to is not None:
                headers["Link"] = self._link_to(query, fault.link_back_to)
            if fault is not None and fault.link_ahead:
                page = _bounded_int(query.get("page"), 1, 1, 10**9)
                headers["Link"] = self._link_to(query, page + 1)
        if fault is not None and fault.broken_json and status == 200:
            body = body[: max(1, len(body) // 2)]
        if fault is not None and fault.truncate and status == 200:
            self._send(status, headers, body, cut_at=max(1, len(body) // 2))
            return
        self._send(status, headers, body)

    def _send_fault(self, fault: Fault, path: str, query: dict[str, str]) -> None:
        self.fake._record(RecordedRequest("GET", path, query, fault.status, True))
        payload = fault.body if fault.body is not None else {"message": f"fake fault {fault.status}"}
        if fault.echo_token:
            payload = {"message": f"rejected credentials {self.headers.get('Authorization', '')}"}
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self._send(fault.status, dict(fault.headers), body)

    def _route(self, path: str, query: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        fake = self.fake
        if fake.prefix:
            if not path.startswith(fake.prefix + "/"):
                return _json(404, {"message": "Not Found"})
            path = path[len(fake.prefix) :]
        if not self._authorized():
            return _json(401, {"message": "Bad credentials"})
        for pattern, name in _ROUTES:
            m = pattern.match(path)
            if m:
                repo = m.groupdict().get("repo")
                if repo is not None and repo not in fake._repos:
                    return _json(404, {"message": "Not Found"})
                return getattr(self, f"_serve_{name}")(m.groupdict(), query)
        return _json(404, {"message": "Not Found"})

    def _authorized(self) -> bool:
        header = self.headers.get("Authorization", "")
        return header in (f"token {self.fake.token}", f"Bearer {self.fake.token}")

    # --------------------------------------------------------------- routes

    def _serve_repo(self, groups: dict[str, str], query: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        repo = groups["repo"]
        owner, name = repo.split("/", 1)
        obj = {
            "id": 1,
            "name": name,
            "full_name": repo,
            "owner": {"login": owner},
            "url": self.fake._api(f"/repos/{repo}"),
            "default_branch": "main",
        }
        return _json(200, obj)

    # -------------------------------------------------------- publishing routes (FakeRepoWrites)

    def _serve_branch(
        self, groups: dict[str, str], query: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        sha = self.fake.writes.head(groups["repo"], groups["branch"])
        if sha is None:
            return _json(404, {"message": "Branch not found"})
        return _json(200, {"name": groups["branch"], "commit": {"sha": sha}})

    def _serve_git_ref(
        self, groups: dict[str, str], query: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        repo, branch = groups["repo"], groups["branch"]
        sha = self.fake.writes.head(repo, branch)
        if sha is None:
            return _json(404, {"message": "Not Found"})
        return _json(200, _ref_json(self.fake, repo, branch, sha))

    def _serve_contents(
        self, groups: dict[str, str], query: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        repo, path = groups["repo"], groups["path"]
        found = self.fake.writes.file(repo, query.get("ref", "main"), path)
        if found is None:
            return _json(404, {"message": "Not Found"})
        return _json(200, _content_json(self.fake, repo, path, *found))

    def _serve_pulls(
        self, groups: dict[str, str], query: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        pulls = self.fake.writes.pulls.get(groups["repo"], [])
        state = query.get("state", "open")
        out = [
            p
            for p in pulls
            if (state == "all" or p["state"] == state)
            and ("head" not in query or p["head"]["label"] == query["head"])
            and ("base" not in query or p["base"]["ref"] == query["base"])
        ]
        return _json(200, out)

    def _write(self, method: str) -> None:
        fake = self.fake
        parsed = urllib.parse.urlsplit(self.path)
        path = parsed.path[len(fake.prefix) :] if fake.prefix else parsed.path
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            payload = json.loads(raw) if raw else {}
        except ValueError:
            payload = None
        if not self._authorized():
            status, headers, body = _json(401, {"message": "Bad credentials"})
        elif not isinstance(payload, dict):
            status, headers, body = _json(400, {"message": "Problems parsing JSON"})
        else:
            status, headers, body = fake.writes.handle(fake, method, path, payload)
        fake._record(RecordedRequest(method, path, {}, status, False))
        self._send(status, headers, body)

    def do_POST(self) -> None:  # noqa: N802 (http.server naming)
        self._write("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self._write("PUT")

    def do_PATCH(self) -> None:  # noqa: N802
        self._write("PATCH")

    def _serve_issues(
        self, groups: dict[str, str], query: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        return self._page(*self.fake.listing(groups["repo"], "issues", query), query)

    def _serve_comments(
        self, groups: dict[str, str], query: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        return self._page(*self.fake.listing(groups["repo"], "comments", query), query)

    def _serve_comment(
        self, groups: dict[str, str], query: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        with self.fake._lock:
            r = self.fake.repo(groups["repo"])
            obj = r.comments.get(int(groups["id"]))
            return _json(200, obj) if obj is not None else _json(404, {"message": "Not Found"})

    def _serve_issue(
        self, groups: dict[str, str], query: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        with self.fake._lock:
            obj = self.fake.repo(groups["repo"]).issues.get(int(groups["number"]))
            return _json(200, obj) if obj is not None else _json(404, {"message": "Not Found"})

    def _serve_issue_comments(
        self, groups: dict[str, str], query: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        number = int(groups["number"])
        with self.fake._lock:
            r = self.fake.repo(groups["repo"])
            since = parse_iso(query.get("since"))
            keys = sorted(
                k
                for k, obj in r.comments.items()
                if obj["issue_url"].endswith(f"/issues/{number}")
                and (since is None or r.comment_times[k][1] >= since)
            )
            per_page = _bounded_int(query.get("per_page"), DEFAULT_PER_PAGE, 1, MAX_PER_PAGE)
            page = _bounded_int(query.get("page"), 1, 1, 10**9)
            chunk = [
                self.fake._encoded(r, "comments", k) for k in keys[(page - 1) * per_page : page * per_page]
            ]
        return self._page(len(keys), chunk, query)

    def _serve_rate_limit(
        self, groups: dict[str, str], query: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        core = {"limit": 5000, "remaining": 4999, "reset": int(time.time()) + 3600, "used": 1}
        return _json(200, {"resources": {"core": core}, "rate": core})

    def _page(
        self, total: int, chunk: list[bytes], query: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        """A page body and its ``Link`` header, for ``chunk`` of a listing of ``total`` items."""
        per_page = _bounded_int(query.get("per_page"), DEFAULT_PER_PAGE, 1, MAX_PER_PAGE)
        page = _bounded_int(query.get("page"), 1, 1, 10**9)
        last = max(1, -(-total // per_page))
        body = b"[" + b",".join(chunk) + b"]"
        headers = {}
        links = self._links(query, page, last)
        if links:
            headers["Link"] = links
        return 200, headers, body

    def _link_to(self, query: dict[str, str], page: int) -> str:
        """A ``Link`` header whose ``next`` is ``page`` (the looping-Link fault)."""
        path = urllib.parse.urlsplit(self.path).path
        q = urllib.parse.urlencode({**query, "page": str(page)})
        return f'<{self.fake.root_url}{path}?{q}>; rel="next"'

    def _links(self, query: dict[str, str], page: int, last: int) -> str:
        path = urllib.parse.urlsplit(self.path).path

        def url(n: int) -> str:
            q = urllib.parse.urlencode({**query, "page": str(n)})
            return f"{self.fake.root_url}{path}?{q}"

        rels: list[tuple[str, int]] = []
        if page < last:
            rels += [("next", page + 1), ("last", last)]
        if page > 1:
            rels += [("first", 1), ("prev", min(page - 1, last))]
        return ", ".join(f'<{url(n)}>; rel="{rel}"' for rel, n in rels)

    # --------------------------------------------------------------- wire

    def _send(self, status: int, headers: dict[str, str], body: bytes, cut_at: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for key, value in headers.items():
            self.send_header(key, value)
        if cut_at is not None:
            self.send_header("Connection", "close")
        self.end_headers()
        try:
            self.wfile.write(body if cut_at is None else body[:cut_at])
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        if cut_at is not None:
            self.close_connection = True


def _json(status: int, obj: Any) -> tuple[int, dict[str, str], bytes]:
    return status, {}, json.dumps(obj).encode()


def _bounded_int(raw: str | None, default: int, lo: int, hi: int) -> int:
    try:
        value = int(raw) if raw is not None else default
    except ValueError:
        value = default
    return min(hi, max(lo, value))


def iter_export_repos(root: Path) -> Iterator[tuple[str, Path]]:
    """``(owner/name, dir)`` for each ``root/<owner>/<name>/`` with ``issues.json`` and ``comments.json``."""
    for owner_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        for repo_dir in sorted(p for p in owner_dir.iterdir() if p.is_dir()):
            if (repo_dir / "issues.json").is_file() and (repo_dir / "comments.json").is_file():
                yield f"{owner_dir.name}/{repo_dir.name}", repo_dir


# ---------------------------------------------------------------------- helpers shared by the tests


def populate(
    fake: FakeGitHub,
    repo: str,
    *,
    issues: int,
    milestones: int,
    chatter: int = 0,
    pull_requests: int = 0,
) -> None:
    """Deterministic data: ``issues`` issues, then ``milestones`` runstate comments spread over them
    round-robin, ``chatter`` ordinary comments, and ``pull_requests`` pull requests each with one
    milestone comment (which the frame must skip)."""
    first = max(fake.repo(repo).issues, default=0) + 1
    numbers = [
        fake.add_issue(repo, first + i, state="closed" if i % 3 == 0 else "open") for i in range(issues)
    ]
    for k in range(milestones):
        number = numbers[k % len(numbers)]
        at = iso(fake.now())
        fake.add_comment(repo, number, milestone("gate", f"r-{number}-{k:04x}", at, f"model=m-{k % 4}"))
    for k in range(chatter):
        fake.add_comment(repo, numbers[k % len(numbers)], f"looks good to me ({k})", author="human")
    for k in range(pull_requests):
        pr = fake.add_issue(repo, first + issues + k, pull_request=True)
        fake.add_comment(repo, pr, milestone("ship", f"r-{pr}-beef", iso(fake.now())))


def read_export_frame(root: Path, repos: Iterable[str]) -> Any:
    """The trail_comments frame of a recorded export, parsed with the shared REST-shape readers."""
    from scorecard_assets.sources.trail_records import comment_from_rest, issue_from_rest, trail_frame

    issues: list[Any] = []
    comments: list[Any] = []
    for repo in repos:
        d = root / repo
        issues += [issue_from_rest(repo, o) for o in json.loads((d / "issues.json").read_text("utf-8"))]
        comments += [comment_from_rest(repo, o) for o in json.loads((d / "comments.json").read_text("utf-8"))]
    return trail_frame(issues, comments)


# ------------------------------------------------------------------------------------ publishing


def _ref_json(fake: FakeGitHub, repo: str, branch: str, sha: str) -> dict[str, Any]:
    return {
        "ref": f"refs/heads/{branch}",
        "url": fake._api(f"/repos/{repo}/git/refs/heads/{branch}"),
        "object": {"sha": sha, "type": "commit"},
    }


def _content_json(fake: FakeGitHub, repo: str, path: str, data: bytes, sha: str) -> dict[str, Any]:
    import base64

    return {
        "type": "file",
        "encoding": "base64",
        "name": path.rsplit("/", 1)[-1],
        "path": path,
        "sha": sha,
        "size": len(data),
        "content": base64.b64encode(data).decode(),
        "url": fake._api(f"/repos/{repo}/contents/{path}"),
    }


@dataclass
class FakeRepoWrites:
    """Branches (files per branch, a head commit each) and pull requests of the fake's repos."""

    files: dict[tuple[str, str], dict[str, tuple[bytes, str]]] = field(default_factory=dict)
    heads: dict[tuple[str, str], str] = field(default_factory=dict)
    pulls: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    commits: int = 0

    def _sha(self, prefix: str) -> str:
        self.commits += 1
        return f"{prefix}{self.commits:038x}"[:40]

    def head(self, repo: str, branch: str) -> str | None:
        if branch == "main" and (repo, "main") not in self.heads:
            self.heads[(repo, "main")] = self._sha("c0")
            self.files[(repo, "main")] = {}
        return self.heads.get((repo, branch))

    def file(self, repo: str, branch: str, path: str) -> tuple[bytes, str] | None:
        if self.head(repo, branch) is None:
            return None
        return self.files[(repo, branch)].get(path)

    def handle(
        self, fake: FakeGitHub, method: str, path: str, body: dict[str, Any]
    ) -> tuple[int, dict[str, str], bytes]:
        import base64

        with fake._lock:
            m = re.match(rf"^/repos/{_REPO}/git/refs$", path)
            if m and method == "POST":
                repo, ref, sha = m["repo"], str(body.get("ref", "")), body.get("sha")
                branch = ref.removeprefix("refs/heads/")
                if self.head(repo, branch) is not None:
                    return _json(422, {"message": "Reference already exists"})
                source = next((b for (r, b), h in self.heads.items() if r == repo and h == sha), None)
                if source is None:
                    return _json(422, {"message": "Object does not exist"})
                self.heads[(repo, branch)] = str(sha)
                self.files[(repo, branch)] = dict(self.files[(repo, source)])
                return _json(201, _ref_json(fake, repo, branch, str(sha)))
            m = re.match(rf"^/repos/{_REPO}/contents/(?P<path>.+)$", path)
            if m and method == "PUT":
                repo, file_path, branch = m["repo"], m["path"], str(body.get("branch") or "main")
                if self.head(repo, branch) is None:
                    return _json(404, {"message": "Branch not found"})
                current = self.files[(repo, branch)].get(file_path)
                if current is not None and body.get("sha") != current[1]:
                    return _json(409, {"message": f"{file_path} does not match {body.get('sha')}"})
                if current is None and body.get("sha"):
                    return _json(422, {"message": "sha given for a new file"})
                data = base64.b64decode(str(body.get("content", "")))
                blob = self._sha("b")
                self.files[(repo, branch)][file_path] = (data, blob)
                commit = self._sha("c")
                self.heads[(repo, branch)] = commit
                out = {"content": _content_json(fake, repo, file_path, data, blob), "commit": {"sha": commit}}
                return _json(201 if current is None else 200, out)
            m = re.match(rf"^/repos/{_REPO}/pulls$", path)
            if m and method == "POST":
                repo = m["repo"]
                head, base = str(body.get("head", "")), str(body.get("base", ""))
                if self.head(repo, head) is None or self.head(repo, base) is None:
                    return _json(422, {"message": "Validation Failed"})
                pulls = self.pulls.setdefault(repo, [])
                owner = repo.split("/", 1)[0]
                if any(p["state"] == "open" and p["head"]["ref"] == head for p in pulls):
                    return _json(422, {"message": f"A pull request already exists for {owner}:{head}."})
                number = 1 + max([p["number"] for p in pulls] or [0])
                pr = {
                    "number": number,
                    "state": "open",
                    "title": body.get("title"),
                    "body": body.get("body"),
                    "url": fake._api(f"/repos/{repo}/pulls/{number}"),
                    "html_url": f"https://github.example/{repo}/pull/{number}",
                    "head": {"ref": head, "label": f"{owner}:{head}"},
                    "base": {"ref": base, "label": f"{owner}:{base}"},
                }
                pulls.append(pr)
                return _json(201, pr)
            m = re.match(rf"^/repos/{_REPO}/pulls/(?P<number>\d+)$", path)
            if m and method == "PATCH":
                pr = next((p for p in self.pulls.get(m["repo"], []) if p["number"] == int(m["number"])), None)
                if pr is None:
                    return _json(404, {"message": "Not Found"})
                pr.update({k: body[k] for k in ("title", "body", "state") if k in body})
                return _json(200, pr)
        return _json(404, {"message": "Not Found"})
