"""The state store: local workspaces in place, object-store workspaces committed by generation."""

from __future__ import annotations

from pathlib import Path

import pytest
from upath import UPath

from scorecard_assets.storage.state import (
    LocalStateStore,
    ObjectStateStore,
    StateConflict,
    state_store_at,
)


def test_a_local_workspace_is_the_directory_itself(tmp_path: Path) -> None:
    store = state_store_at(tmp_path / "state")
    assert isinstance(store, LocalStateStore)
    with store.workspace("github") as folder:
        (folder / "cache.sqlite").write_bytes(b"db")
    assert (tmp_path / "state" / "github" / "cache.sqlite").read_bytes() == b"db"
    with pytest.raises(ValueError, match="state workspace name"), store.workspace("../escape"):
        pass


def test_an_object_workspace_round_trips_and_commits_only_changes() -> None:
    store = state_store_at("memory://state-test-1/state")
    assert isinstance(store, ObjectStateStore)
    with store.workspace("agent-logs") as folder:
        (folder / "offsets.json").write_text('{"a": 1}')
    first = store.head("agent-logs")
    assert first
    with store.workspace("agent-logs") as folder:
        assert (folder / "offsets.json").read_text() == '{"a": 1}'
    assert store.head("agent-logs") == first  # nothing changed: no new generation
    with store.workspace("agent-logs") as folder:
        (folder / "offsets.json").write_text('{"a": 2}')
    assert store.head("agent-logs") != first


def test_a_failed_run_commits_nothing() -> None:
    store = ObjectStateStore(UPath("memory://state-test-2/state"))
    with pytest.raises(RuntimeError), store.workspace("github") as folder:
        (folder / "cache.sqlite").write_bytes(b"half")
        raise RuntimeError("sync failed")
    assert store.head("github") is None


def test_a_concurrent_commit_is_detected_and_not_overwritten() -> None:
    store = ObjectStateStore(UPath("memory://state-test-3/state"))
    with store.workspace("github") as folder:
        (folder / "db").write_bytes(b"v1")
    with pytest.raises(StateConflict, match="another run committed"), store.workspace("github") as mine:
        with store.workspace("github") as theirs:
            (theirs / "db").write_bytes(b"theirs")
        (mine / "db").write_bytes(b"mine")
    with store.workspace("github") as folder:
        assert (folder / "db").read_bytes() == b"theirs"
