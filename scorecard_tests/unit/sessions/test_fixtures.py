"""One hand-made session per store (formats: docs/sessions.md "What we read"), read by its reader
and cut by hand.

Where the fixture's stated figures disagree with the cycle rules (docs/sessions.md, "Cycles") the rules
win: the OpenCode fixture has three assistant messages, so ``a`` is 3 (the text says 4).
"""

from __future__ import annotations

import pandas as pd
import pytest

from scorecard_assets.config import PriceConfig
from scorecard_assets.schemas import CYCLES, contract_problems
from scorecard_assets.sessions.claude_code import read_claude_code
from scorecard_assets.sessions.codex import read_codex
from scorecard_assets.sessions.cycles import cut_sessions
from scorecard_assets.sessions.git_log import parse_log
from scorecard_assets.sessions.opencode import read_opencode
from scorecard_assets.sessions.pipeline import session_cycles
from scorecard_assets.sessions.schema import SESSION_CYCLES, SESSION_FACTS
from scorecard_tests.factories import sessions as F

NO_COMMITS = pd.DataFrame({"repo_key": pd.Series([], dtype="str")})


def one_cycle(facts):
    res = session_cycles(facts, NO_COMMITS, [])
    assert len(res.cycles) == 1
    assert contract_problems(res.cycles, SESSION_CYCLES) == []
    assert contract_problems(res.pooled, CYCLES) == []
    return res.cycles.iloc[0], res


def test_opencode_fixture(tmp_path):
    read = read_opencode(F.section_5_1(tmp_path / "opencode.db"))
    assert read.warnings == []
    assert contract_problems(read.facts, SESSION_FACTS) == []
    row, res = one_cycle(read.facts)
    assert (row.u, row.a) == (2, 3)
    assert (row.pm, row.pp, row.pv) == ("claude-opus-4.6", "anthropic", "high")
    assert (row.bm, row.bp, row.bv) == ("claude-sonnet-4.5", "anthropic", "medium")
    assert (row.tedits, row.teerr, row.tpaths, row.tver, row.tabort) == (3, 1, 1, 1, 0)
    assert row.tcost == 0.4125  # the stored session cost
    # heartbeat: 60 s credit + 5 + 55 + 10 + 50 s = 180 s
    assert row.thrs == 0.05
    # latencies 35, 20, 30 s -> sorted [20, 30, 35], upper middle 30
    assert row.latmed == 30.0
    assert (row.model, row.prov, row.variant, row.role) == ("claude-sonnet-4.5", "anthropic", "medium", 2)
    assert (row.harness, row.hversion, row.day) == ("opencode", "2.0.26", "2026-03-02")
    cycle = res.cut.sessions[("opencode", F.SESSION)].cycles[0]
    # msg_1 precedes any assistant: the stored agent (build) places it; msg_3 follows the plan agent
    assert (cycle.phases[2].u, cycle.phases[1].u) == (1, 1)


def test_opencode_fixture_with_a_folded_child(tmp_path):
    db = F.section_5_1(tmp_path / "opencode.db")
    import sqlite3

    conn = sqlite3.connect(db)
    F.add_v2_session(conn, "ses_child", parent_id=F.SESSION, agent="general", cost=0.05)
    F.add_v2_message(conn, "c1", "ses_child", "user", 0, F.T0 + 75000, F.user(F.T0 + 75000, "subtask"))
    F.add_v2_message(
        conn,
        "c2",
        "ses_child",
        "assistant",
        1,
        F.T0 + 80000,
        F.assistant(F.T0 + 80000, agent="general", tools=[F.tool("edit", filePath="/w/shop/src/util.ts")]),
    )
    conn.commit()
    conn.close()
    row, _ = one_cycle(read_opencode(db).facts)
    assert (row.u, row.a, row.tedits, row.children) == (2, 3, 4, 1)
    assert row.tcost == round(0.4125 + 0.05, 4)
    # child heartbeat 60 s + 5 s added to the parent's 180 s
    assert row.thrs == round(245 / 3600, 3)


def test_claude_code_fixture(tmp_path):
    F.write_jsonl(tmp_path / "projects" / "-w-shop" / f"{F.CC_SESSION}.jsonl", F.section_5_2())
    prices = {
        "claude-sonnet-4.5": PriceConfig(input=3, output=15, cached_input=0.3, cache_write=3.75),
        "claude-opus-4.6": PriceConfig(input=5, output=25, cached_input=0.5, cache_write=6.25),
    }
    read = read_claude_code(tmp_path / "projects", prices=prices)
    assert read.warnings == []
    assert read.counters["lines_lines"] == 13 and read.counters["lines_ignored"] == 1  # the system line
    facts = read.facts
    assert list(facts["kind"]) == ["user"] + ["assistant"] * 6  # tool results are not human turns
    assert list(facts["role"]) == [1, 1, 2, 2, 2, 2, 2]
    row, res = one_cycle(facts)
    assert (row.u, row.a) == (1, 6)
    assert (row.pm, row.pp, row.pv) == ("claude-opus-4.6", "anthropic", "(none)")
    assert (row.bm, row.bp, row.bv) == ("claude-sonnet-4.5", "anthropic", "(none)")
    assert (row.tedits, row.teerr, row.tpaths, row.tver, row.tabort) == (3, 1, 1, 1, 0)
    # heartbeat 60 + 40 + 32 + 8 + 41 + 4 + 25 s = 210 s
    assert row.thrs == round(210 / 3600, 3)
    # step latency: trigger -> response: 40, 12, 7, 40, 3, 5 s -> sorted [3, 5, 7, 12, 40, 40][3]
    assert row.latmed == 12.0
    sonnet = (6 * 3 + 120 * 15 + 14000 * 0.3 + 500 * 3.75) / 1e6
    opus = (6 * 5 + 120 * 25 + 14000 * 0.5 + 500 * 6.25) / 1e6
    assert row.tcost == round(5 * sonnet + opus, 4)
    assert bool(row.cost_is_estimate) is True
    assert (row.harness, row.hversion, row.role) == ("claude-code", "2.1.63", 2)


def test_codex_fixture(tmp_path):
    F.write_jsonl(tmp_path / "sessions" / F.CX_FILE, F.section_5_3())
    prices = {"gpt-5.5": PriceConfig(input=1.25, output=10, cached_input=0.125)}
    read = read_codex(tmp_path / "sessions", prices=prices)
    assert read.warnings == []
    assert read.counters["lines_used"] == 15
    facts = read.facts
    assert list(facts["kind"]) == ["user", "assistant", "user", "assistant", "assistant", "assistant"]
    row, _ = one_cycle(facts)
    assert (row.u, row.a) == (2, 4)
    assert (row.pm, row.pp, row.pv) == ("gpt-5.5", "openai", "high")
    assert (row.bm, row.bp, row.bv) == ("gpt-5.3-codex", "openai", "medium")
    # two apply_patch calls (the second adds a file too), the first failed
    assert (row.tedits, row.teerr, row.tpaths, row.tver, row.tabort) == (2, 1, 1, 1, 0)
    # heartbeat 60 + 39.7 + 20.1 + 11.9 + 8 + 45 s = 184.7 s
    assert row.thrs == round(184.7 / 3600, 3)
    # latencies 39.8, 11.9, 7, 44 s -> sorted [7, 11.9, 39.8, 44][2]
    assert row.latmed == 39.8
    assert row.tcost == round((12000 * 1.25 + 9000 * 0.125 + 1200 * 10) / 1e6, 4)
    assert facts["input_tokens"].iloc[1] == 12000  # input includes the cached part
    assert set(facts["edit_paths"].iloc[4]) == {"/w/shop/src/cart.ts", "/w/shop/src/cart.test.ts"}


def test_the_three_fixtures_pool_as_sessions(tmp_path):
    F.write_jsonl(tmp_path / "projects" / "-w-shop" / f"{F.CC_SESSION}.jsonl", F.section_5_2())
    F.write_jsonl(tmp_path / "sessions" / F.CX_FILE, F.section_5_3())
    facts = pd.concat(
        [
            read_opencode(F.section_5_1(tmp_path / "opencode.db")).facts,
            read_claude_code(tmp_path / "projects").facts,
            read_codex(tmp_path / "sessions").facts,
        ],
        ignore_index=True,
    )
    res = session_cycles(facts, NO_COMMITS, [])
    assert sorted(res.pooled["harness"]) == ["claude-code", "codex", "opencode"]
    assert set(res.pooled["origin"]) == {"sessions"}
    assert len(cut_sessions(facts).sessions) == 3


def test_git_fixture():
    text = (
        "\x1e9b2e4f0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a|1772449200|Dev Example|dev@example.com\n\n"
        "3\t1\tsrc/cart.ts\n1\t0\tsrc/cart.test.ts\n-\t-\tdocs/cart.png\n0\t0\tsrc/{util => lib}/round.ts\n"
    )
    log = parse_log(text)
    assert log.hashes == ["9b2e4f0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a"]
    assert log.at == [1772449200]
    assert (log.names, log.emails) == (["Dev Example"], ["dev@example.com"])
    assert log.files == [("src/cart.ts", "src/cart.test.ts", "docs/cart.png", "src/lib/round.ts")]


@pytest.mark.parametrize(
    ("raw", "new"),
    [
        ("src/{util => lib}/round.ts", "src/lib/round.ts"),
        ("src/{lib => }/x.ts", "src/x.ts"),
        ("{lib => src}/x.ts", "src/x.ts"),
        ("{lib => }/x.ts", "x.ts"),
        ("old/a.ts => new/b.ts", "new/b.ts"),
        ('"caf\\303\\251 => men\\303\\272.txt"', "menú.txt"),
    ],
)
def test_rename_forms(raw, new):
    from scorecard_assets.sessions.git_log import rename_target

    assert rename_target(raw) == new
