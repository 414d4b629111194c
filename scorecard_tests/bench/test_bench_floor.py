"""bench.floor: which files are a fleet's inputs, and that every byte of them is read and decoded."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from bench.floor import FloorCount, decode_file, input_files, kind_of, measure


def _fleet(root: Path) -> Path:
    """A small fleet: an export (one value per line), a host dossier with a damaged telemetry line,
    a pretty-printed JSON document, a host whose home is a tar archive, a cycle file; and files the
    config does not point at."""
    export = root / "github" / "acme" / "api"
    export.mkdir(parents=True)
    (export / "issues.json").write_text('[\n{"number":1},\n{"number":2}\n]\n')
    (export / "comments.json").write_text("[]\n")
    (export / "pretty.json").write_text(json.dumps({"a": [1, 2, {"b": None}]}, indent=2))
    dossier = root / "hosts" / "h1" / ".dossier"
    (dossier / "sched" / "acme-api" / "runs").mkdir(parents=True)
    (dossier / "runs.jsonl").write_text('{"timestamp":"t1"}\n{"timestamp":"t2"}\n{"timesta')
    (dossier / "sched" / "acme-api" / "events.jsonl").write_text('{"ts":"t"}\n')
    (dossier / "sched" / "acme-api" / "runs" / "issue-1.log").write_text('{"type":"x"}\nran 3 tests\n')
    archive = root / "hosts" / "h0.tar"
    with tarfile.open(archive, "w") as tar:
        data = b'{"timestamp":"t0"}\n'
        info = tarfile.TarInfo(".dossier/runs.jsonl")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    (root / "cycles.jsonl").write_text('{"day":"2026-11-01"}\n')
    (root / "notes.txt").write_text("not an input\n")
    (root / "scorecard.yaml").write_text(
        "repos:\n  - name: acme/api\n"
        "hosts:\n  - name: h1\n    dossier_home: hosts/h1/.dossier\n"
        "  - name: h0\n    dossier_home: hosts/h0.tar\n"
        "github:\n  source: recorded\n  recorded_dir: github\n"
        "cycles_import:\n  - cycles.jsonl\n"
    )
    return root / "scorecard.yaml"


def test_inputs_are_what_the_config_points_at(tmp_path: Path) -> None:
    config = _fleet(tmp_path)
    names = [p.relative_to(tmp_path).as_posix() for p in input_files(config)]
    assert names == sorted(
        [
            "cycles.jsonl",
            "github/acme/api/comments.json",
            "github/acme/api/issues.json",
            "github/acme/api/pretty.json",
            "hosts/h0.tar",
            "hosts/h1/.dossier/runs.jsonl",
            "hosts/h1/.dossier/sched/acme-api/events.jsonl",
            "hosts/h1/.dossier/sched/acme-api/runs/issue-1.log",
        ]
    )


def test_every_byte_is_counted_and_every_value_decoded(tmp_path: Path) -> None:
    config = _fleet(tmp_path)
    result = measure(config)
    files = [p for p in input_files(config) if p.suffix != ".tar"]
    member_bytes = len(b'{"timestamp":"t0"}\n')
    assert result.total.bytes == sum(p.stat().st_size for p in files) + member_bytes
    kinds = result.kinds
    assert (kinds["export"].decoded, kinds["export"].not_json) == (2, 0)  # brackets are not values
    assert (kinds["telemetry"].decoded, kinds["telemetry"].not_json) == (2, 1)  # the cut last line
    assert (kinds["agent logs"].decoded, kinds["agent logs"].not_json) == (1, 1)  # a text line
    assert (kinds["archives"].files, kinds["archives"].decoded) == (1, 1)  # the member, decoded
    assert (kinds["other"].decoded, kinds["other"].not_json) == (2, 0)  # pretty.json whole; cycles
    assert result.seconds >= 0


def test_a_document_spread_over_lines_is_decoded_whole(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    path.write_text(json.dumps({"k": list(range(5))}, indent=4))
    count = FloorCount()
    decode_file(path, count)
    assert (count.decoded, count.not_json, count.files) == (1, 0, 1)
    path.write_text('{"k": [1,\n2')  # broken: not one document, so counted line by line
    count = FloorCount()
    decode_file(path, count)
    assert (count.lines, count.decoded, count.not_json) == (2, 1, 1)


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("issues.json", "export"),
        ("runs.jsonl", "telemetry"),
        ("events.jsonl", "events"),
        ("issue-7.log", "agent logs"),
        ("home.tar", "archives"),
        ("imported-cycles.jsonl", "other"),
    ],
)
def test_kind_of_names_the_input(name: str, kind: str) -> None:
    assert kind_of(Path("x") / name) == kind
