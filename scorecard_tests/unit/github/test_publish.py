"""Publishing a week's report as a pull request, against the fake GitHub (contents, refs, pulls)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from github import Github

from scorecard_assets.github.client import ClientSettings, make_github
from scorecard_assets.github.publish import publish_pull_request
from scorecard_tests.fakes.github import FakeGitHub

REPO = "acme/reports"
FILES = {
    "model-scorecard.md": "# Model Scorecard\n",
    "digest.txt": "six lines\n",
    "chart.png": b"\x89PNG\x00",
}


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        server.repo(REPO)
        yield server


def _client(fake: FakeGitHub, token: str | None = None) -> Github:
    settings = ClientSettings(base_url=fake.base_url, max_retries=0, max_retry_wait_s=0.0)
    return make_github(settings, token or fake.token)


def _publish(gh: Github, window: str = "2026-11-22", files: dict | None = None, body: str = "digest"):
    return publish_pull_request(
        gh,
        repo_name=REPO,
        branch="scorecard/weekly",
        base=None,
        folder="reports/scorecard",
        window_end=window,
        files=files or FILES,
        body=body,
    )


def test_the_first_week_opens_a_pull_request_with_the_files(fake: FakeGitHub) -> None:
    result = _publish(_client(fake))
    assert result.created and result.number == 1 and result.files_changed == 6
    files = fake.writes.files[(REPO, "scorecard/weekly")]
    assert files["reports/scorecard/2026-11-22/model-scorecard.md"][0] == b"# Model Scorecard\n"
    assert files["reports/scorecard/latest/chart.png"][0] == b"\x89PNG\x00"
    assert fake.writes.files[(REPO, "main")] == {}  # nothing lands on the base branch
    (pr,) = fake.writes.pulls[REPO]
    assert pr["base"]["ref"] == "main" and pr["head"]["ref"] == "scorecard/weekly"
    assert pr["title"] == "Model scorecard: week ending 2026-11-22" and pr["body"] == "digest"


def test_the_next_week_updates_the_open_pull_request(fake: FakeGitHub) -> None:
    gh = _client(fake)
    _publish(gh)
    changed = {**FILES, "model-scorecard.md": "# Model Scorecard\nnext week\n"}
    result = _publish(gh, "2026-11-29", changed, body="new digest")
    assert not result.created and result.number == 1
    assert result.files_changed == 3 + 1  # a new week folder, and latest/ gets the one changed file
    (pr,) = fake.writes.pulls[REPO]
    assert pr["title"].endswith("2026-11-29") and pr["body"] == "new digest"
    latest = fake.writes.files[(REPO, "scorecard/weekly")]["reports/scorecard/latest/model-scorecard.md"]
    assert latest[0].endswith(b"next week\n")


def test_republishing_the_same_week_changes_nothing(fake: FakeGitHub) -> None:
    gh = _client(fake)
    _publish(gh)
    before = fake.count("/contents/")
    result = _publish(gh)
    assert result.files_changed == 0 and not result.created
    writes = [r for r in fake.requests if r.method == "PUT"]
    assert len(writes) == 6  # only the first publication wrote
    assert fake.count("/contents/") > before  # the files were compared, not blindly rewritten


def test_a_wrong_token_fails_without_writing(fake: FakeGitHub) -> None:
    with pytest.raises(Exception, match="401|Bad credentials"):
        _publish(_client(fake, token="ghp_wrong"))
    assert not fake.writes.pulls
