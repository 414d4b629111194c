"""The Sessions part of the report and the sidecar's pairings.sessions pool."""

from __future__ import annotations

from scorecard_assets.report.markdown import render_markdown
from scorecard_assets.report.sessions import HEADING, sessions_part, ship_states_line
from scorecard_assets.scoring.sidecar.model import sidecar_problems
from scorecard_tests.factories.sidecar import make_group, make_pool, make_sidecar


def _pool():
    return make_pool(
        [make_group("claude-opus → claude-sonnet", 61.0, 1, hjudged=15), make_group("gpt → gpt", 44.0, 2)],
        [make_group("claude-opus-4.6 → claude-sonnet-4.5", 61.0, 1, hjudged=15)],
    )


def test_ship_states_count_misses_apart_from_pending():
    line = ship_states_line({"shipped": 42, "shipJudged": 53, "pending": 3})
    assert "42 shipped" in line and "11 not shipped" in line and "3 pending" in line


def test_a_window_without_session_cycles_says_so():
    lines = sessions_part(None, lambda pool: ["never called"])
    assert lines[0] == HEADING and lines[-1] == "No session cycles were scored for this window."


def test_the_pool_block_follows_its_summary_and_the_ship_states():
    lines = sessions_part(_pool(), lambda pool: ["SUMMARY", "", "TABLES"])
    i = lines.index("SUMMARY")
    assert lines[i + 2].startswith("Ship states of the judged cycles: 90 shipped, 10 not shipped")
    assert lines[-1] == "TABLES"


def test_the_report_shows_the_part_only_when_the_sidecar_has_the_pool():
    base = make_sidecar()
    assert HEADING not in render_markdown(base, regenerate_cmd="make week")
    with_pool = make_sidecar(pairings={**base["pairings"], "sessions": _pool()})
    text = render_markdown(with_pool, regenerate_cmd="make week")
    part = text[text.index(HEADING) :]
    assert "| 1 | `claude-opus` → `claude-sonnet` | 61 |" in part
    assert text.index("### Fleet cycles") < text.index(HEADING) < text.index("## Wall-clock per phase")
    empty = make_sidecar(pairings={**base["pairings"], "sessions": None})
    assert "No session cycles were scored for this window." in render_markdown(empty, regenerate_cmd="x")


def test_the_sidecar_accepts_the_sessions_pool_in_its_place():
    base = make_sidecar()
    assert sidecar_problems(make_sidecar(pairings={**base["pairings"], "sessions": _pool()})) == []
    assert sidecar_problems(base) == []  # optional: absent while sessions: is off
    wrong = {"sessions": _pool(), **base["pairings"]}
    assert any("pairings" in p for p in sidecar_problems(make_sidecar(pairings=wrong)))
