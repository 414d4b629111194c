"""bench.history: history fleets assembled from eras, split a week before as_of, and the week put back.

The defining property of the split: the fleet plus its week, appended as a real week would be, is
byte for byte the fleet the eras simulated. Everything else (what the base holds, what the week
holds, that eras never clash, that the cache is not written through) is checked on the tiny fleet.
"""

from __future__ import annotations

import os
import shutil
from collections import Counter
from pathlib import Path

import orjson
import pytest

from bench.history import (
    ERA_MARKER,
    MARKER_FILE,
    PREAMBLE,
    WEEK_MANIFEST,
    WEEK_SPLIT,
    _cut_log,
    apply_week,
    assemble,
    ensure_history_fleet,
    fleet_marker,
    generate_era,
    save_before_week,
    undo_week,
)
from scorecard_tests.factories.history import SEED, TINY, TinyHistory

SPLIT = f"{WEEK_SPLIT.isoformat()}T00:00:00"


def _files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name not in (MARKER_FILE, ERA_MARKER)  # markers hold timings
    }


def _array(path: Path) -> list[dict]:
    data = orjson.loads(path.read_bytes())
    assert isinstance(data, list)
    return data


def _jsonl(path: Path) -> list[dict]:
    out = []
    for line in path.read_bytes().splitlines():
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue  # the fleet's deliberately damaged lines
        if isinstance(value, dict):
            out.append(value)
    return out


@pytest.fixture(scope="module")
def simulated(tiny_history: TinyHistory, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The eras assembled without the split: the fleet as simulated, week included."""
    out = tmp_path_factory.mktemp("simulated") / "fleet"
    assemble(tiny_history.eras, out, TINY.name)
    return out


@pytest.fixture
def working_copy(tiny_history: TinyHistory, tmp_path: Path) -> Path:
    copy = tmp_path / "fleet"
    shutil.copytree(tiny_history.fleet, copy)
    return copy


# ------------------------------------------------------------------------------ the split


def test_fleet_plus_its_week_is_the_simulated_fleet(
    tiny_history: TinyHistory, simulated: Path, working_copy: Path
) -> None:
    apply_week(working_copy, tiny_history.week)
    after, expected = _files(working_copy), _files(simulated)
    assert sorted(after) == sorted(expected)
    assert [name for name in expected if after[name] != expected[name]] == []


def test_the_fleet_holds_nothing_from_the_last_week(tiny_history: TinyHistory) -> None:
    fleet = tiny_history.fleet
    runs = [r for p in fleet.rglob("runs.jsonl") for r in _jsonl(p)]
    events = [e for p in fleet.rglob("events.jsonl") for e in _jsonl(p)]
    assert runs and events
    assert max(r["timestamp"] for r in runs)[:19] < SPLIT
    assert max(e["ts"] for e in events)[:19] < SPLIT
    for path in fleet.rglob("comments.json"):
        if path.read_bytes().startswith(b"["):
            assert all(c["created_at"][:19] < SPLIT for c in _array(path))
    for path in fleet.rglob("*.log"):
        if path.is_file():
            for line in path.read_bytes().splitlines():
                if line.startswith(PREAMBLE):
                    assert orjson.loads(line)["ts"][:19] < SPLIT
    assert f"as_of: {WEEK_SPLIT.isoformat()}" in (fleet / "scorecard.yaml").read_text()


def test_the_fleets_export_is_the_one_of_the_split_day(tiny_history: TinyHistory) -> None:
    checked = 0
    for issues_path in tiny_history.fleet.rglob("issues.json"):
        comments_path = issues_path.with_name("comments.json")
        if not issues_path.read_bytes().startswith(b"["):
            continue  # the rate-limited repo's saved reply
        per_issue = Counter(int(c["issue_url"].rsplit("/", 1)[1]) for c in _array(comments_path))
        for issue in _array(issues_path):
            assert issue["created_at"][:19] < SPLIT
            assert issue["comments"] == per_issue[issue["number"]]
            assert issue["closed_at"] is None or issue["closed_at"][:19] < SPLIT
            assert issue["updated_at"][:19] < SPLIT
            checked += 1
    assert checked > 0


def test_the_week_holds_a_week_of_every_input(tiny_history: TinyHistory) -> None:
    manifest = orjson.loads((tiny_history.week / WEEK_MANIFEST).read_bytes())
    counts = manifest["counts"]
    assert counts["new_comments"] > 0
    assert counts["events"] > 0
    assert counts["runs_jsonl_lines"] > 0
    assert counts["log_bytes"] > 0 and counts["logs_new"] + counts["logs_appended"] > 0
    modes = {entry["path"]: entry["mode"] for entry in manifest["files"]}
    assert modes["scorecard.yaml"] == "replace"
    assert {m for p, m in modes.items() if p.endswith(("runs.jsonl", "events.jsonl", ".log"))} == {"append"}
    assert {m for p, m in modes.items() if p.endswith(("issues.json", "comments.json"))} == {"replace"}
    for path, mode in modes.items():
        if mode == "append" and path.endswith(".jsonl"):
            first = (tiny_history.week / "files" / path).read_bytes().split(b"\n", 1)[0]
            stamp = orjson.loads(first).get("timestamp") or orjson.loads(first)["ts"]
            assert stamp[:19] >= SPLIT


def test_a_log_is_cut_at_the_first_slice_of_the_week() -> None:
    def preamble(ts: str) -> bytes:
        return PREAMBLE + ts.encode() + b'","cmd":["x"]}\n'

    old, new = preamble("2026-11-15T23:59:59.000Z"), preamble(f"{SPLIT}.000Z")
    body = b'{"type":"result"}\n'
    assert _cut_log(old + body + new + body) == len(old + body)
    assert _cut_log(new + body) == 0
    assert _cut_log(old + body) == len(old + body)
    assert _cut_log(b"plain text log\n") == len(b"plain text log\n")


# ---------------------------------------------------------------------- applying the week


def test_undo_puts_the_fleet_back_in_place(
    tiny_history: TinyHistory, working_copy: Path, tmp_path: Path
) -> None:
    before = _files(working_copy)
    runs = next(working_copy.rglob("runs.jsonl"))
    inode = runs.stat().st_ino
    undo = save_before_week(working_copy, tiny_history.week, tmp_path / "saved")
    apply_week(working_copy, tiny_history.week)
    assert _files(working_copy) != before
    undo_week(working_copy, undo)
    assert _files(working_copy) == before
    # appended files are truncated, not replaced: an incremental reader sees the same file
    assert runs.stat().st_ino == inode


def test_appending_never_writes_through_a_hard_link(tmp_path: Path) -> None:
    cache, fleet, week = tmp_path / "cache.jsonl", tmp_path / "fleet", tmp_path / "week"
    cache.write_bytes(b'{"ts":"2026-11-01T00:00:00.000Z"}\n')
    fleet.mkdir()
    os.link(cache, fleet / "events.jsonl")
    (week / "files").mkdir(parents=True)
    (week / "files" / "events.jsonl").write_bytes(b'{"ts":"2026-11-20T00:00:00.000Z"}\n')
    manifest = {"files": [{"path": "events.jsonl", "mode": "append"}], "counts": {}}
    (week / WEEK_MANIFEST).write_bytes(orjson.dumps(manifest))
    apply_week(fleet, week)
    assert cache.read_bytes() == b'{"ts":"2026-11-01T00:00:00.000Z"}\n'
    assert (fleet / "events.jsonl").read_bytes().count(b"\n") == 2


# --------------------------------------------------------------------------------- eras


def test_eras_never_share_an_issue_number_or_a_comment_id(tiny_history: TinyHistory) -> None:
    numbers: dict[str, list[set[int]]] = {}
    comment_ids: list[set[object]] = []
    for era in tiny_history.eras:
        ids: set[object] = set()
        for path in era.rglob("issues.json"):
            if path.read_bytes().startswith(b"["):
                repo = path.parent.relative_to(era / "github").as_posix()
                numbers.setdefault(repo, []).append({i["number"] for i in _array(path)})
                ids.update(c["id"] for c in _array(path.with_name("comments.json")))
        comment_ids.append(ids)
    for repo, per_era in numbers.items():
        newest, older = per_era
        assert newest and older, repo
        assert not newest & older
        assert max(older) < min(newest)  # older history holds the smaller numbers, as on GitHub
    assert not comment_ids[0] & comment_ids[1]


def test_merged_files_are_in_time_order(simulated: Path) -> None:
    for path in simulated.rglob("runs.jsonl"):
        stamps = [r["timestamp"] for r in _jsonl(path)]
        assert stamps == sorted(stamps), path
    for path in simulated.rglob("comments.json"):
        if path.read_bytes().startswith(b"["):
            created = [c["created_at"] for c in _array(path)]
            assert created == sorted(created), path


def test_an_era_is_the_same_bytes_every_time(tiny_history: TinyHistory, tmp_path: Path) -> None:
    again = tmp_path / "era1"
    generate_era(TINY, 1, SEED, again)
    assert _files(again) == _files(tiny_history.eras[1])


def test_a_current_fleet_is_reused_as_it_is(tiny_history: TinyHistory) -> None:
    marker = (tiny_history.fleet / MARKER_FILE).stat().st_mtime_ns
    again = ensure_history_fleet(TINY, tiny_history.root, SEED, jobs=1)
    assert again == tiny_history.fleet
    assert (again / MARKER_FILE).stat().st_mtime_ns == marker
    summary = fleet_marker(again)
    assert summary is not None and summary["size"] == "tiny"
    assert summary["issues"] > 0 and summary["week"]["new_comments"] > 0
