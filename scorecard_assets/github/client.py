"""The PyGithub client: settings, token resolution, bounded retries, request counting, redaction.

Pure of Dagster. Everything that talks HTTP goes through a ``github.Github`` built by
``make_github``:

- **Retries** happen inside urllib3 (``BoundedGithubRetry``, a ``GithubRetry``): 5xx, 429 and
  rate-limit 403s are retried at most ``max_retries`` times; ``Retry-After`` and the
  ``X-RateLimit-Reset`` header are honoured; exponential back-off otherwise. Any single wait longer
  than ``max_retry_wait_s`` is not waited out: the request fails with ``RetryWaitTooLong`` so a
  repo that GitHub throttles for an hour fails fast and keeps its cached trails.
- **Broken bodies** (a truncated or undecodable response that arrived with a 2xx status) are not
  seen by urllib3; ``ApiReader.get`` retries those itself, within the same count and wait bounds.
- **Counting**: ``RequestCounter`` counts every HTTP attempt made through ``ApiReader`` (logical
  requests plus urllib3 retries), per client (``client_context(gh).counter``).
- **The token** is read from the environment at run time (``resolve_token``), lives only inside the
  ``Github`` object, and every string we produce from a failure goes through ``Redactor``;
  ``redacting_logs`` scrubs it from the log records of PyGithub and urllib3 too.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import threading
import time
import urllib.parse
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import requests
import urllib3.exceptions
from github import Auth, Github, GithubRetry
from github.GithubException import GithubException

from scorecard_assets.config import GitHubConfig

Sleeper = Callable[[float], None]

DEFAULT_BASE_URL = "https://api.github.com"
USER_AGENT = "scorecard-trails (PyGithub)"
ERROR_TEXT_CAP = 300

# Loggers whose records may carry request or response details; the redacting filter is attached here.
_SCRUBBED_LOGGERS = (
    "github.Requester",
    "github.GithubRetry",
    "urllib3.connectionpool",
    "urllib3.util.retry",
    "scorecard_assets.github",
)

_LINK_RE = re.compile(r'<([^>]*)>\s*;\s*rel="?([A-Za-z]+)"?')


class MissingTokenError(RuntimeError):
    """The environment variable that should hold the GitHub token is unset or empty."""


class RetryWaitTooLong(GithubException):
    """GitHub asked for a wait longer than ``max_retry_wait_s``; the request is given up instead."""

    def __init__(self, status: int, wait_s: float, limit_s: float) -> None:
        super().__init__(status, None, None, f"GitHub asked to wait {wait_s:.0f} s (limit {limit_s:.0f} s)")
        self.wait_s = wait_s
        self.limit_s = limit_s

    def __str__(self) -> str:
        return f"HTTP {self.status}: {self.message}"


@dataclass(frozen=True)
class ClientSettings:
    """How to reach GitHub. Defaults match ``config.GitHubConfig``; tests set the waits to zero."""

    base_url: str = DEFAULT_BASE_URL
    per_page: int = 100
    timeout_s: float = 30.0
    max_retries: int = 6
    max_retry_wait_s: float = 120.0
    seconds_between_requests: float = 0.0
    backoff_factor: float = 1.0
    secondary_rate_wait_s: float = 60.0

    @classmethod
    def from_config(cls, gh: GitHubConfig, **overrides: Any) -> ClientSettings:
        """Settings from the config's ``github`` section; ``None`` overrides are ignored."""
        values: dict[str, Any] = {
            "base_url": gh.base_url,
            "per_page": gh.per_page,
            "timeout_s": gh.timeout_s,
            "max_retries": gh.max_retries,
            "max_retry_wait_s": gh.max_retry_wait_s,
            "seconds_between_requests": gh.seconds_between_requests,
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        values["base_url"] = str(values["base_url"]).rstrip("/")
        return cls(**values)


def resolve_token(env_name: str, environ: Mapping[str, str] | None = None) -> str:
    """The token held by ``env_name``; ``MissingTokenError`` names the variable (never a value)."""
    env = os.environ if environ is None else environ
    token = env.get(env_name, "").strip()
    if not token:
        raise MissingTokenError(
            f"the GitHub token variable {env_name} is not set or is empty: export {env_name}=<token> "
            "(or set github.token_env in the scorecard config to the variable that holds it)"
        )
    return token


class RequestCounter:
    """HTTP attempts made by one client: logical requests plus the retries urllib3 made for them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests = 0
        self.retries = 0

    def count_request(self) -> None:
        with self._lock:
            self.requests += 1

    def count_retry(self) -> None:
        with self._lock:
            self.retries += 1

    @property
    def attempts(self) -> int:
        """Every HTTP request sent (what GitHub's rate limit sees)."""
        return self.requests + self.retries


class Redactor:
    """Replaces secrets (and their URL-encoded forms) by ``***`` in any text."""

    def __init__(self, secrets: list[str] | tuple[str, ...] = ()) -> None:
        forms: set[str] = set()
        for s in secrets:
            if s:
                forms.update({s, urllib.parse.quote(s, safe=""), urllib.parse.quote_plus(s)})
        self._forms = sorted(forms, key=len, reverse=True)

    def __call__(self, text: object) -> str:
        out = str(text)
        for form in self._forms:
            out = out.replace(form, "***")
        return out


class _RedactingFilter(logging.Filter):
    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self._redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken format string must not break logging
            message = str(record.msg)
        record.msg = self._redactor(message)
        record.args = None
        return True


@contextmanager
def redacting_logs(redactor: Redactor) -> Iterator[None]:
    """While active, records of PyGithub, urllib3 and this package have secrets replaced by ``***``."""
    flt = _RedactingFilter(redactor)
    loggers = [logging.getLogger(name) for name in _SCRUBBED_LOGGERS]
    for lg in loggers:
        lg.addFilter(flt)
    try:
        yield
    finally:
        for lg in loggers:
            lg.removeFilter(flt)


class BoundedGithubRetry(GithubRetry):
    """``GithubRetry`` with a cap on every single wait, an injectable sleep, and retry counting.

    Retried: 5xx, 429, and 403 responses that are rate limits (``GithubRetry`` inspects them). The
    wait is ``Retry-After`` when given, else the rate-limit reset time (``X-RateLimit-Reset`` with
    ``X-RateLimit-Remaining: 0``) for 403/429, else the exponential back-off. A wait above
    ``max_wait_s`` raises ``RetryWaitTooLong`` instead of sleeping.
    """

    def __init__(
        self,
        *,
        max_wait_s: float = 120.0,
        counter: RequestCounter | None = None,
        sleeper: Sleeper | None = None,
        **kwargs: Any,
    ) -> None:
        self.max_wait_s = max_wait_s
        self.counter = counter
        self.sleeper = sleeper
        super().__init__(**kwargs)

    def new(self, **kw: Any) -> BoundedGithubRetry:
        kw.update(max_wait_s=self.max_wait_s, counter=self.counter, sleeper=self.sleeper)
        return super().new(**kw)  # type: ignore[return-value]

    def increment(  # type: ignore[override]
        self,
        method: str | None = None,
        url: str | None = None,
        response: Any = None,
        error: Exception | None = None,
        _pool: Any = None,
        _stacktrace: Any = None,
    ) -> BoundedGithubRetry:
        nxt = super().increment(method, url, response, error, _pool, _stacktrace)
        assert isinstance(nxt, BoundedGithubRetry)
        wait = nxt.planned_wait(response)
        if wait > self.max_wait_s:
            raise RetryWaitTooLong(getattr(response, "status", 0) or 0, wait, self.max_wait_s)
        if self.counter is not None:
            self.counter.count_retry()
        return nxt

    def planned_wait(self, response: Any) -> float:
        """The seconds urllib3 will sleep before the next attempt (same rule as ``Retry.sleep``)."""
        if self.respect_retry_after_header and response is not None:
            retry_after = self.get_retry_after(response)
            if retry_after:
                return retry_after
        return self.get_backoff_time()

    def get_retry_after(self, response: Any) -> float | None:
        try:
            value = super().get_retry_after(response)
        except urllib3.exceptions.InvalidHeader:
            value = None
        if value is None and getattr(response, "status", None) in (403, 429):
            value = _rate_limit_reset_wait(response.headers)
        return value

    def sleep_for_retry(self, response: Any) -> bool:
        retry_after = self.get_retry_after(response)
        if retry_after:
            self._sleep(retry_after)
            return True
        return False

    def _sleep_backoff(self) -> None:
        backoff = self.get_backoff_time()
        if backoff > 0:
            self._sleep(backoff)

    def _sleep(self, seconds: float) -> None:
        (self.sleeper or time.sleep)(seconds)


def _rate_limit_reset_wait(headers: Mapping[str, str]) -> float | None:
    """Seconds until ``X-RateLimit-Reset`` (+1) when the response says the quota is exhausted."""
    remaining = headers.get("X-RateLimit-Remaining")
    reset = headers.get("X-RateLimit-Reset")
    if remaining != "0" or not reset or not reset.strip().isdigit():
        return None
    return max(0.0, int(reset) - time.time()) + 1.0


@dataclass
class ClientContext:
    """What travels with a ``Github`` built here: settings, counter, sleep function and redactor."""

    settings: ClientSettings
    counter: RequestCounter = field(default_factory=RequestCounter)
    sleeper: Sleeper = time.sleep
    redactor: Redactor = field(default_factory=Redactor)


_CONTEXTS: weakref.WeakKeyDictionary[Github, ClientContext] = weakref.WeakKeyDictionary()


def make_github(
    settings: ClientSettings,
    token: str,
    *,
    counter: RequestCounter | None = None,
    sleeper: Sleeper | None = None,
) -> Github:
    """A lazy ``Github`` client with bounded retries; its context is ``client_context(gh)``."""
    ctx = ClientContext(
        settings=settings,
        counter=counter or RequestCounter(),
        sleeper=sleeper or time.sleep,
        redactor=Redactor([token]),
    )
    retry = BoundedGithubRetry(
        total=settings.max_retries,
        backoff_factor=settings.backoff_factor,
        backoff_max=settings.max_retry_wait_s,
        status_forcelist=[429, *range(500, 600)],
        secondary_rate_wait=min(settings.secondary_rate_wait_s, settings.max_retry_wait_s),
        max_rate_limit_wait=settings.max_retry_wait_s,
        max_wait_s=settings.max_retry_wait_s,
        counter=ctx.counter,
        sleeper=ctx.sleeper,
    )
    gh = Github(
        auth=Auth.Token(token),
        base_url=settings.base_url,
        per_page=settings.per_page,
        timeout=max(1, math.ceil(settings.timeout_s)),
        retry=retry,
        seconds_between_requests=settings.seconds_between_requests or None,
        seconds_between_writes=None,
        user_agent=USER_AGENT,
        lazy=True,
    )
    _CONTEXTS[gh] = ctx
    return gh


def client_context(gh: Github) -> ClientContext:
    """The context of ``gh``; a ``Github`` built elsewhere gets default settings and a new counter."""
    ctx = _CONTEXTS.get(gh)
    if ctx is None:
        auth = gh.requester.auth
        token = auth.token if isinstance(auth, Auth.Token) else ""
        ctx = ClientContext(
            settings=ClientSettings(base_url=gh.requester.base_url, per_page=gh.requester.per_page),
            redactor=Redactor([token]),
        )
        _CONTEXTS[gh] = ctx
    return ctx


# Failures that happen after a 2xx status line, while reading or decoding the body: urllib3 never
# sees them, so ApiReader retries them.
_BODY_ERRORS: tuple[type[BaseException], ...] = (
    requests.exceptions.ChunkedEncodingError,
    requests.exceptions.ContentDecodingError,
    urllib3.exceptions.ProtocolError,
    json.JSONDecodeError,
)


@dataclass(frozen=True)
class Page:
    """One page of a REST listing: its 1-based number, the URL asked, the items, the next URL and
    the number of the last page the ``Link`` header announced (``None`` when it announced none)."""

    number: int
    url: str
    items: list[Any]
    next_url: str | None
    last_page: int | None = None

    @property
    def is_last(self) -> bool:
        return self.next_url is None


class ApiReader:
    """GET requests and Link-header pagination over a ``Github`` client's requester.

    The raw JSON is returned as GitHub sent it (no PyGithub objects), so the sync parses exactly the
    REST shapes that the recorded export holds, and no attribute access can trigger a lazy GET.
    """

    def __init__(self, gh: Github) -> None:
        self.gh = gh
        self.ctx = client_context(gh)

    def get(self, url: str, params: Mapping[str, Any] | None = None) -> tuple[dict[str, Any], Any]:
        """``(headers, json)`` of one GET; broken bodies are retried within the retry bounds."""
        settings = self.ctx.settings
        failures = 0
        while True:
            self.ctx.counter.count_request()
            try:
                return self.gh.requester.requestJsonAndCheck("GET", url, parameters=dict(params or {}))
            except _BODY_ERRORS:
                failures += 1
                if failures > settings.max_retries:
                    raise
                wait = _backoff(settings.backoff_factor, failures, settings.max_retry_wait_s)
                if wait > 0:
                    self.ctx.sleeper(wait)

    def page(self, url: str, params: Mapping[str, Any] | None, number: int, *, listing: str = "") -> Page:
        """One page of a listing (``number`` is only its position, for messages)."""
        headers, data = self.get(url, params)
        if not isinstance(data, list):
            raise UnexpectedResponse(
                f"page {number} of {listing or url} is a JSON {type(data).__name__}, expected a list"
            )
        links = parse_link_header(headers.get("link"))
        following = links.get("next") if data else None
        return Page(
            number=number, url=url, items=data, next_url=following, last_page=_page_number(links.get("last"))
        )

    def pages(self, url: str, params: Mapping[str, Any]) -> Iterator[Page]:
        """Every page of a listing, following ``Link: rel="next"`` until there is none.

        Bounded (docs/reliability.md "GitHub sync"): a ``next`` that points to a page already read,
        or more pages than the first page's ``rel="last"`` announced (plus ``PAGE_SLACK``), raises
        ``PaginationError`` instead of looping.
        """
        next_url: str | None = url
        next_params: Mapping[str, Any] | None = params
        number = 0
        seen: set[str] = set()
        bound: int | None = None
        while next_url is not None:
            number += 1
            if bound is not None and number > bound:
                raise PaginationError(
                    f"the listing {url} went on for more pages than the {bound - PAGE_SLACK} its first "
                    "page announced; stopped"
                )
            page = self.page(next_url, next_params, number, listing=url)
            seen.add(page_key(next_url, next_params))
            if bound is None and page.last_page is not None:
                bound = page.last_page + PAGE_SLACK
            yield page
            if page.next_url is not None and page_key(page.next_url, None) in seen:
                raise PaginationError(
                    f"the Link header of page {number} of {url} points back to a page already read; stopped"
                )
            next_url, next_params = page.next_url, None


# Pages a listing may grow by while it is read (new items pushing others to later pages).
PAGE_SLACK = 2


class PaginationError(RuntimeError):
    """A listing whose pagination cannot be trusted (a loop, or more pages than it can need)."""


def _page_number(url: str | None) -> int | None:
    """The ``page`` query parameter of a ``Link`` URL, when it is a positive integer."""
    if not url:
        return None
    values = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).get("page")
    if not values or not values[-1].isdigit():
        return None
    return int(values[-1]) or None


def page_key(url: str, params: Mapping[str, Any] | None) -> str:
    """A page's identity: path plus sorted query (``page`` 1 when absent), host left out."""
    parts = urllib.parse.urlsplit(url)
    query = {k: v[-1] for k, v in urllib.parse.parse_qs(parts.query).items()}
    query.update({k: str(v) for k, v in (params or {}).items()})
    query.setdefault("page", "1")
    return parts.path + "?" + urllib.parse.urlencode(sorted(query.items()))


class UnexpectedResponse(RuntimeError):
    """A 2xx response whose JSON does not have the shape the endpoint documents."""


class ListingError(RuntimeError):
    """A listing whose answers contradict each other (a page repeated, items older than asked)."""


def _backoff(factor: float, failures: int, cap: float) -> float:
    """urllib3's schedule: nothing before the first retry, then factor * 2^(n-1), capped."""
    if failures <= 1:
        return 0.0
    return float(min(cap, factor * (2 ** (failures - 1))))


def parse_link_header(value: object) -> dict[str, str]:
    """``{rel: url}`` from an RFC 8288 ``Link`` header (``rel="next"`` etc.); ``{}`` when absent."""
    if not isinstance(value, str):
        return {}
    return {rel: url for url, rel in _LINK_RE.findall(value)}


def describe_error(exc: BaseException, redactor: Redactor) -> str:
    """A short, token-free sentence for a failed request (status and GitHub's message if any)."""
    if isinstance(exc, RetryWaitTooLong):
        text = str(exc)
    elif isinstance(exc, GithubException):
        message = exc.message
        if not message and isinstance(exc.data, dict):
            message = str(exc.data.get("message") or "")
        text = f"HTTP {exc.status}" + (f": {message}" if message else "")
        if exc.status in (401, 403) and "credential" in (message or "").lower():
            text += " (check the token)"
    elif isinstance(exc, requests.exceptions.RetryError):
        text = f"gave up after retries ({_innermost_reason(exc)})"
    elif isinstance(exc, requests.exceptions.Timeout):
        text = "timed out waiting for GitHub"
    elif isinstance(exc, requests.exceptions.ConnectionError):
        text = f"connection failed ({_innermost_reason(exc)})"
    elif isinstance(exc, PaginationError | ListingError):
        text = str(exc)
    elif isinstance(exc, _BODY_ERRORS):
        text = f"response body broken after retries ({type(exc).__name__})"
    else:
        text = f"{type(exc).__name__}: {exc}"
    text = redactor(text)
    return text if len(text) <= ERROR_TEXT_CAP else text[:ERROR_TEXT_CAP] + "\u2026"


def _innermost_reason(exc: BaseException) -> str:
    """The innermost cause in a requests/urllib3 wrapper chain, e.g. 'too many 502 error responses'."""
    current = exc
    for _ in range(6):
        nested = getattr(current, "reason", None)
        if (
            not isinstance(nested, BaseException)
            and current.args
            and isinstance(current.args[0], BaseException)
        ):
            nested = current.args[0]
        if not isinstance(nested, BaseException):
            break
        current = nested
    text = str(current)
    return f"{type(current).__name__}: {text}" if text else type(current).__name__
