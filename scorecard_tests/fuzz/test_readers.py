"""Fuzz targets: runs.jsonl, events.jsonl, recorded trails, cycle imports, config files and the session
transcripts (docs/reliability.md "Fuzz targets"). Mutated well-formed input: no exception, and the
line accounting adds up."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given, note, settings
from hypothesis import strategies as st

from scorecard_assets.config import ConfigError, ScorecardConfig, load_config
from scorecard_assets.pairings.imported import read_cycle_files
from scorecard_assets.sessions._common import LineStats, Problems
from scorecard_assets.sessions.claude_code import parse_file as parse_claude_session
from scorecard_assets.sessions.codex import parse_file as parse_codex_session
from scorecard_assets.sources.events import read_dispatch_events
from scorecard_assets.sources.jsonl import read_jsonl
from scorecard_assets.sources.runs_jsonl import READ_FIELDS, read_run_telemetry
from scorecard_assets.sources.trails_recorded import RecordedTrailsError, read_recorded_trails
from scorecard_tests.factories import readers as R
from scorecard_tests.factories import sessions as S
from scorecard_tests.factories.cycles import pooled_row


def _blank_lines(data: bytes) -> int:
    return sum(1 for line in data.split(b"\n")[: R.physical_lines(data)] if not line.strip())


@settings()
@given(R.mutated_file(R.RUNS_RECORDS))
def test_runs_jsonl(data: bytes) -> None:
    note(repr(data))
    with tempfile.TemporaryDirectory() as tmp:
        path = R.write_runs(Path(tmp), data)
        batch = read_jsonl(path, READ_FIELDS)
        result = read_run_telemetry(R.config(Path(tmp)).hosts)
    assert batch.lines == R.physical_lines(data)
    assert batch.lines == batch.rows + len(batch.bad) + batch.blank + batch.filtered
    (stat,) = result.sources
    assert stat.rows == batch.rows and stat.malformed == len(batch.bad)
    assert len(result.frame) <= stat.rows


@settings()
@given(R.mutated_file(R.EVENT_RECORDS))
def test_events_jsonl(data: bytes) -> None:
    note(repr(data))
    with tempfile.TemporaryDirectory() as tmp:
        R.write_events(Path(tmp), data)
        result = read_dispatch_events(R.config(Path(tmp)))
    (stat,) = result.sources
    notes = stat.notes or ""
    numbers = [int(word) for word in notes.replace(":", " ").replace(",", " ").split() if word.isdigit()]
    lines, kept, ignored, unknown, malformed = numbers[:5]
    assert lines == R.physical_lines(data)
    assert kept + ignored + unknown + malformed + _blank_lines(data) == lines, notes
    assert len(result.frame) == kept and stat.malformed == malformed


_COMMENT = {
    "id": 11,
    "issue_url": "https://api.github.com/repos/acme/api/issues/5",
    "body": "<!-- runstate -->\nphase=plan status=done run=r-5-aaaa at=2026-09-01T10:00:00Z",
    "created_at": "2026-09-01T10:00:05Z",
    "updated_at": "9999-12-31T23:59:59Z",
    "user": {"login": "fleet-bot"},
}
_ISSUE = {"number": 5, "state": "closed", "created_at": "0001-01-01T00:00:00Z", "updated_at": "now"}


@settings()
@given(
    st.lists(R.mutated_record([_COMMENT]), max_size=6),
    st.lists(R.mutated_record([_ISSUE]), max_size=3),
)
def test_recorded_trails(comments: list[dict[str, Any]], issues: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo_dir = root / "acme" / "api"
        repo_dir.mkdir(parents=True)
        (repo_dir / "comments.json").write_text(json.dumps(comments), encoding="utf-8")
        (repo_dir / "issues.json").write_text(json.dumps(issues), encoding="utf-8")
        cfg = ScorecardConfig.model_validate(
            {"repos": [{"name": "acme/api"}], "github": {"source": "recorded", "recorded_dir": str(root)}}
        )
        try:
            result = read_recorded_trails(cfg)
        except RecordedTrailsError:
            return  # every repo failed: a clear error, the documented outcome
    (stat,) = result.sources
    assert len(result.frame) == stat.rows <= len(comments)
    assert stat.malformed <= len(comments) + len(issues)


_CYCLE_FIELDS = list(pooled_row())


@settings()
@given(R.mutated_file([pooled_row()]), st.booleans())
def test_cycle_imports(data: bytes, as_csv: bool) -> None:
    note(repr(data))
    if as_csv:
        rows = [json.loads(line) for line in data.split(b"\n") if _is_object(line)]
        head = ",".join(_CYCLE_FIELDS).encode()
        body = b"\n".join(
            b",".join(str(r.get(f, "")).encode("utf-8", "surrogatepass") for f in _CYCLE_FIELDS) for r in rows
        )
        data = head + b"\n" + body + data[:3]  # the first bytes of the raw lines as a damaged tail
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / ("cycles.csv" if as_csv else "cycles.jsonl")
        path.write_bytes(data)
        result = read_cycle_files([path])
    (stat,) = result.sources
    assert len(result.frame) + stat.malformed <= R.physical_lines(data)
    if not as_csv and "\ufffd" in "".join(map(str, result.frame.get("pm", []))):
        # never replaced silently: the file held U+FFFD itself, or the replacement is warned
        # (a lone surrogate escape is valid JSON: replaced by U+FFFD, docs/reliability.md "Encodings")
        assert "\ufffd".encode() in data or any(w.code == "text_replaced" for w in result.warnings)


def _is_object(line: bytes) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


_CONFIG = {
    "repos": [{"name": "acme/api"}],
    "as_of": "2026-09-07",
    "window": {"days": 7},
    "models": {"aliases": {"sonnet": "claude-sonnet-5"}},
}


@settings()
@given(R.mutated_record([_CONFIG]), st.sampled_from(["dump", "deep", "number", "text"]), st.text(max_size=30))
def test_config_files(config: dict[str, Any], how: str, noise: str) -> None:
    if how == "dump":
        text = yaml.safe_dump(config)
    elif how == "deep":
        text = yaml.safe_dump(config) + "window: " + "[" * 3000 + "]" * 3000 + "\n"
    elif how == "number":
        text = "repos: [{name: a/b}]\nas_of: " + "7" * 4400 + "\n"
    else:
        text = yaml.safe_dump(config) + noise
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scorecard.yaml"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            load_config(path, check_paths=False)
        except ConfigError as exc:
            assert str(exc).startswith(("invalid scorecard config", "cannot read scorecard config"))
            assert len(str(exc).splitlines()[0]) < 600


_SESSION_PATH = Path("/p/-w/rollout-2026-03-02T11-00-00-019c8f3e-7a10-7d2b-9c41-5e6f7a8b9c0d.jsonl")


@settings()
@given(R.mutated_file(S.section_5_2(), max_lines=10), R.mutated_file(S.section_5_3(), max_lines=10))
def test_session_transcripts(claude: bytes, codex: bytes) -> None:
    for parse, data in ((parse_claude_session, claude), (parse_codex_session, codex)):
        stats = LineStats()
        problems = Problems(source="fuzz")
        parse(_SESSION_PATH, data, stats, problems)
        body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
        assert stats.lines == R.physical_lines(body)
        assert stats.check(), stats
