"""Fingerprints of reader inputs: what counts as unchanged (docs/incremental.md "What is remembered")."""

from __future__ import annotations

import os
from pathlib import Path

from scorecard_assets.storage.fingerprints import book_of, refresh_hashes, same_inputs, with_content_hashes


def _write(path: Path, data: bytes, mtime_ns: int | None = None) -> Path:
    path.write_bytes(data)
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))
    return path


def test_an_untouched_file_is_unchanged_and_an_appended_or_truncated_one_is_not(tmp_path: Path) -> None:
    runs = _write(tmp_path / "runs.jsonl", b'{"a": 1}\n{"a": 2}\n', 1_000_000_000)
    before = book_of([runs])
    assert same_inputs(before, book_of([runs]))

    _write(runs, b'{"a": 1}\n{"a": 2}\n{"a": 3}\n', 1_000_000_000)  # appended, mtime forged back
    assert not same_inputs(before, book_of([runs]))
    _write(runs, b'{"a": 1}\n', 1_000_000_000)  # truncated
    assert not same_inputs(before, book_of([runs]))


def test_a_rewritten_head_of_the_same_size_is_a_change(tmp_path: Path) -> None:
    log = _write(tmp_path / "events.jsonl", b'{"e": "spawned"}\n', 5_000)
    before = book_of([log])
    _write(log, b'{"e": "stalled"}\n', 5_000)  # rotated: same size, same mtime, other first bytes
    assert not same_inputs(before, book_of([log]))


def test_a_touched_file_is_unchanged_only_when_its_content_hash_says_so(tmp_path: Path) -> None:
    export = _write(tmp_path / "comments.json", b"[1, 2, 3]", 10_000)
    recorded = with_content_hashes(book_of([export]))
    os.utime(export, ns=(20_000, 20_000))  # touched (or copied): the stat moved, the bytes did not
    now = book_of([export])
    assert not same_inputs(recorded, now), "without the hash the stat decides"
    assert same_inputs(recorded, refresh_hashes(recorded, now))
    _write(export, b"[1, 2, 4]", 30_000)  # same size, new content
    assert not same_inputs(recorded, refresh_hashes(recorded, book_of([export])))


def test_paths_that_appear_disappear_or_are_not_files(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    missing = home / "runs.jsonl"
    before = book_of([home, missing])
    assert before[str(missing)] == {"kind": "missing"}
    assert same_inputs(before, book_of([home, missing]))
    assert not same_inputs(before, book_of([home])), "another set of paths"
    (home / "sched").mkdir()
    os.utime(home, ns=(1, 1))
    assert not same_inputs(before, book_of([home, missing])), "a directory whose listing changed"

    tar = _write(tmp_path / "dossier.tar", b"tar bytes")
    inside = tar / "runs.jsonl"  # a path below a regular file cannot be examined
    book = book_of([tar, inside])
    assert book[str(inside)]["kind"] == "error"
    assert same_inputs(book, book_of([tar, inside]))

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert book_of([fifo])[str(fifo)]["kind"] == "other"  # never opened
    assert same_inputs(book_of([fifo]), book_of([fifo]))


def test_a_damaged_record_never_matches(tmp_path: Path) -> None:
    f = _write(tmp_path / "runs.jsonl", b"{}\n")
    now = book_of([f])
    assert not same_inputs(None, now)
    assert not same_inputs({str(f): "not a fingerprint"}, now)
    assert not same_inputs({str(f): {**now[str(f)], "head": None}}, {str(f): {**now[str(f)], "head": None}})
