"""The PyGithub client: token resolution, bounded retries against injected faults, counting, redaction."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from github import Github
from github.GithubException import BadCredentialsException, GithubException, UnknownObjectException

from scorecard_assets.config import GitHubConfig
from scorecard_assets.github.client import (
    ApiReader,
    ClientSettings,
    MissingTokenError,
    Redactor,
    RetryWaitTooLong,
    client_context,
    describe_error,
    make_github,
    parse_link_header,
    redacting_logs,
    resolve_token,
)
from scorecard_tests.fakes.github import FakeGitHub, Fault

REPO = "acme/api"
ISSUES = f"/repos/{REPO}/issues"


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        server.add_issue(REPO, 1)
        server.add_issue(REPO, 2)
        yield server


@pytest.fixture
def sleeps() -> list[float]:
    return []


def client(fake: FakeGitHub, sleeps: list[float], **overrides: Any) -> Github:
    values: dict[str, Any] = {"base_url": fake.base_url, "max_retries": 3, "max_retry_wait_s": 30.0}
    values.update(overrides)
    return make_github(ClientSettings(**values), fake.token, sleeper=sleeps.append)


def get_issues(gh: Github) -> list[Any]:
    _, data = ApiReader(gh).get(ISSUES, {"state": "all"})
    return data


# ------------------------------------------------------------------------------------ settings, token


def test_resolve_token_reads_the_named_variable() -> None:
    assert resolve_token("MY_GH", {"MY_GH": " abc "}) == "abc"


@pytest.mark.parametrize("environ", [{}, {"MY_GH": ""}, {"MY_GH": "   "}])
def test_missing_token_names_the_variable(environ: dict[str, str]) -> None:
    with pytest.raises(MissingTokenError, match="MY_GH"):
        resolve_token("MY_GH", environ)


def test_settings_from_config_with_overrides_winning_over_config() -> None:
    gh = GitHubConfig(base_url="https://ghe.example/api/v3/", per_page=50, max_retries=2, timeout_s=9)
    s = ClientSettings.from_config(gh, per_page=None, max_retries=5)
    assert (s.base_url, s.per_page, s.max_retries, s.timeout_s) == ("https://ghe.example/api/v3", 50, 5, 9)


def test_parse_link_header() -> None:
    value = '<http://h/x?page=2>; rel="next", <http://h/x?page=5>; rel="last"'
    assert parse_link_header(value) == {"next": "http://h/x?page=2", "last": "http://h/x?page=5"}
    assert parse_link_header(None) == {}


def test_redactor_replaces_raw_and_url_encoded_forms() -> None:
    redact = Redactor(["a/b+c"])
    assert redact("x a/b+c y a%2Fb%2Bc z") == "x *** y *** z"


# ------------------------------------------------------------------------------------ plain requests


def test_token_is_sent_as_authorization_header_and_answers_parse(
    fake: FakeGitHub, sleeps: list[float]
) -> None:
    gh = client(fake, sleeps)
    assert [i["number"] for i in get_issues(gh)] == [2, 1]
    assert fake.count(ISSUES) == 1
    assert client_context(gh).counter.attempts == 1


def test_wrong_token_is_not_retried_and_says_check_the_token(fake: FakeGitHub, sleeps: list[float]) -> None:
    gh = make_github(ClientSettings(base_url=fake.base_url), "wrong-token", sleeper=sleeps.append)
    with pytest.raises(BadCredentialsException) as info:
        get_issues(gh)
    assert fake.count(ISSUES) == 1
    assert "check the token" in describe_error(info.value, Redactor(["wrong-token"]))


def test_not_found_is_not_retried(fake: FakeGitHub, sleeps: list[float]) -> None:
    gh = client(fake, sleeps)
    with pytest.raises(UnknownObjectException):
        ApiReader(gh).get("/repos/acme/none/issues/comments/7")
    assert fake.count("/issues/comments/7") == 1


def test_enterprise_prefix_base_url() -> None:
    with FakeGitHub(prefix="/api/v3") as fake:
        fake.add_issue(REPO, 1)
        gh = make_github(ClientSettings(base_url=fake.base_url), fake.token)
        assert [i["number"] for i in get_issues(gh)] == [1]
        assert fake.requests[0].path == f"/api/v3{ISSUES}"


# ------------------------------------------------------------------------------------ faults


@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_errors_are_retried_and_recover(fake: FakeGitHub, sleeps: list[float], status: int) -> None:
    fake.inject(Fault(status=status), path_contains=ISSUES, times=2)
    gh = client(fake, sleeps, backoff_factor=0)
    assert len(get_issues(gh)) == 2
    assert fake.count(ISSUES) == 3
    counter = client_context(gh).counter
    assert (counter.requests, counter.retries, counter.attempts) == (1, 2, 3)


def test_backoff_grows_exponentially_between_retries(fake: FakeGitHub, sleeps: list[float]) -> None:
    # urllib3 schedule: no wait before the first retry, then factor * 2^(n-1): 1.5*2, 1.5*4.
    fake.inject(Fault(status=503), path_contains=ISSUES, times=3)
    gh = client(fake, sleeps, backoff_factor=1.5)
    get_issues(gh)
    assert sleeps == [3.0, 6.0]


def test_backoff_is_capped_by_max_retry_wait(fake: FakeGitHub, sleeps: list[float]) -> None:
    fake.inject(Fault(status=502), path_contains=ISSUES, times=3)
    gh = client(fake, sleeps, backoff_factor=10, max_retry_wait_s=25)
    get_issues(gh)
    assert sleeps == [20.0, 25.0]


def test_retries_are_bounded_in_count(fake: FakeGitHub, sleeps: list[float]) -> None:
    fake.inject(Fault(status=500), path_contains=ISSUES, times=50)
    gh = client(fake, sleeps, max_retries=2, backoff_factor=0)
    with pytest.raises(requests.exceptions.RetryError) as info:
        get_issues(gh)
    assert fake.count(ISSUES) == 3  # first attempt + 2 retries
    assert client_context(gh).counter.attempts == 3
    assert "500" in describe_error(info.value, Redactor())


def test_429_honours_retry_after(fake: FakeGitHub, sleeps: list[float]) -> None:
    fake.inject(Fault.retry_after(429, 7), path_contains=ISSUES)
    gh = client(fake, sleeps)
    assert len(get_issues(gh)) == 2
    assert sleeps == [7]
    assert fake.count(ISSUES) == 2


def test_429_with_retry_after_zero_retries_at_once(fake: FakeGitHub, sleeps: list[float]) -> None:
    fake.inject(Fault.retry_after(429, 0), path_contains=ISSUES, times=2)
    gh = client(fake, sleeps, backoff_factor=0)
    assert len(get_issues(gh)) == 2
    assert fake.count(ISSUES) == 3
    assert sleeps == []


def test_secondary_rate_limit_with_retry_after(fake: FakeGitHub, sleeps: list[float]) -> None:
    fake.inject(Fault.secondary_rate_limit(retry_after=3), path_contains=ISSUES)
    gh = client(fake, sleeps)
    assert len(get_issues(gh)) == 2
    assert sleeps == [3]


def test_secondary_rate_limit_without_retry_after_waits_the_secondary_wait(
    fake: FakeGitHub, sleeps: list[float]
) -> None:
    # No header: GitHub's guidance is to wait about a minute; bounded by max_retry_wait_s (30 here).
    fake.inject(Fault.secondary_rate_limit(retry_after=None), path_contains=ISSUES)
    gh = client(fake, sleeps)
    assert len(get_issues(gh)) == 2
    assert sleeps == [30.0]


def test_primary_rate_limit_waits_until_the_reset_header(fake: FakeGitHub, sleeps: list[float]) -> None:
    before = time.time()
    reset = int(before) + 12
    fake.inject(Fault.primary_rate_limit(reset), path_contains=ISSUES)
    gh = client(fake, sleeps)
    assert len(get_issues(gh)) == 2
    after = time.time()
    assert len(sleeps) == 1
    # reset - now + 1, with "now" taken somewhere between before and after
    assert reset - after + 1 <= sleeps[0] <= reset - before + 1


def test_429_without_retry_after_uses_the_rate_limit_reset(fake: FakeGitHub, sleeps: list[float]) -> None:
    before = time.time()
    reset = int(before) + 5
    headers = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)}
    fake.inject(Fault(status=429, headers=headers), path_contains=ISSUES)
    gh = client(fake, sleeps)
    get_issues(gh)
    after = time.time()
    assert len(sleeps) == 1 and reset - after + 1 <= sleeps[0] <= reset - before + 1


def test_a_wait_longer_than_the_bound_is_not_waited(fake: FakeGitHub, sleeps: list[float]) -> None:
    fake.inject(Fault.retry_after(429, 3600), path_contains=ISSUES)
    gh = client(fake, sleeps, max_retry_wait_s=60)
    with pytest.raises(RetryWaitTooLong) as info:
        get_issues(gh)
    assert sleeps == []
    assert fake.count(ISSUES) == 1
    assert "3600" in describe_error(info.value, Redactor())


def test_primary_rate_limit_reset_far_away_fails_fast(fake: FakeGitHub, sleeps: list[float]) -> None:
    fake.inject(Fault.primary_rate_limit(int(time.time()) + 3000), path_contains=ISSUES)
    gh = client(fake, sleeps, max_retry_wait_s=60)
    with pytest.raises(GithubException):
        get_issues(gh)
    assert sleeps == [] and fake.count(ISSUES) == 1


def test_forbidden_without_rate_limit_is_not_retried(fake: FakeGitHub, sleeps: list[float]) -> None:
    fake.inject(
        Fault(status=403, body={"message": "Resource not accessible by integration"}), path_contains=ISSUES
    )
    gh = client(fake, sleeps)
    with pytest.raises(GithubException) as info:
        get_issues(gh)
    assert fake.count(ISSUES) == 1
    assert describe_error(info.value, Redactor()) == "HTTP 403: Resource not accessible by integration"


@pytest.mark.parametrize("fault", [Fault(status=200, truncate=True), Fault(status=200, broken_json=True)])
def test_broken_bodies_are_retried(fake: FakeGitHub, sleeps: list[float], fault: Fault) -> None:
    fake.inject(fault, path_contains=ISSUES, times=2)
    gh = client(fake, sleeps, backoff_factor=0)
    assert [i["number"] for i in get_issues(gh)] == [2, 1]
    assert fake.count(ISSUES) == 3
    assert client_context(gh).counter.attempts == 3


def test_broken_bodies_are_bounded_too(fake: FakeGitHub, sleeps: list[float]) -> None:
    fake.inject(Fault(status=200, broken_json=True), path_contains=ISSUES, times=10)
    gh = client(fake, sleeps, max_retries=2, backoff_factor=0)
    with pytest.raises(ValueError):
        get_issues(gh)
    assert fake.count(ISSUES) == 3


def test_slow_response_within_timeout_is_fine(fake: FakeGitHub, sleeps: list[float]) -> None:
    fake.inject(Fault(status=200, delay_s=0.2), path_contains=ISSUES)
    gh = client(fake, sleeps)
    assert len(get_issues(gh)) == 2
    assert fake.count(ISSUES) == 1


def test_response_slower_than_the_timeout_is_retried(fake: FakeGitHub, sleeps: list[float]) -> None:
    fake.inject(Fault(status=200, delay_s=1.6), path_contains=ISSUES)
    gh = client(fake, sleeps, timeout_s=1, backoff_factor=0)
    assert len(get_issues(gh)) == 2
    assert client_context(gh).counter.attempts == 2


# ------------------------------------------------------------------------------------ redaction


def test_describe_error_redacts_a_token_echoed_by_the_server(fake: FakeGitHub, sleeps: list[float]) -> None:
    fake.inject(Fault(status=422, echo_token=True), path_contains=ISSUES)
    gh = client(fake, sleeps)
    with pytest.raises(GithubException) as info:
        get_issues(gh)
    text = describe_error(info.value, client_context(gh).redactor)
    assert text.startswith("HTTP 422") and "***" in text
    assert fake.token not in text


def test_redacting_logs_scrubs_pygithub_debug_records(
    fake: FakeGitHub, sleeps: list[float], caplog: pytest.LogCaptureFixture
) -> None:
    fake.inject(Fault(status=422, echo_token=True), path_contains=ISSUES)
    gh = client(fake, sleeps)
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="github")  # PyGithub pins its logger at INFO
    with redacting_logs(client_context(gh).redactor), pytest.raises(GithubException):
        get_issues(gh)
    assert "rejected credentials" in caplog.text  # PyGithub logged the echoed body …
    assert fake.token not in caplog.text  # … without the token
