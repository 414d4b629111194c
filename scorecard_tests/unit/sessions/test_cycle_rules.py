"""The cycle-cutting rules (docs/sessions.md, "Cycles"), one at a time, on facts built directly."""

from __future__ import annotations

import pytest

from scorecard_assets.sessions.cycles import cut_sessions, cycle_frame, fold
from scorecard_tests.factories.sessions import T0, edit, facts_frame, msg, shell

PLAN, BUILD, OTHER = 1, 2, 0
S = 1000
MIN = 60 * S


def rows(msgs, **info):
    fields = {"session_id": "s1", "directory": "/w/shop", "agent": "build", **info}
    frame = facts_frame([(fields, msgs)])
    cut = cut_sessions(frame)
    return cut, cycle_frame(fold(cut))


def test_first_message_credit_and_heartbeat_cap():
    msgs = [
        msg("user", T0),
        msg("assistant", T0 + 30 * S, role=BUILD),  # +30 s
        msg("assistant", T0 + 30 * S + 25 * MIN, role=BUILD),  # gap 25 min -> capped at 10 min
        msg("user", T0 + 30 * S + 25 * MIN + 2 * S),  # +2 s
    ]
    cut, frame = rows(msgs)
    s = cut.sessions[("opencode", "s1")]
    assert s.ms == 60 * S + 30 * S + 10 * MIN + 2 * S
    assert frame["thrs"].iloc[0] == round((60 + 30 + 600 + 2) / 3600, 3)


def test_negative_gap_credits_nothing():
    cut, _ = rows([msg("user", T0), msg("assistant", T0 - 5 * S, role=BUILD)])
    assert cut.sessions[("opencode", "s1")].ms == 60 * S


def test_plan_return_opens_a_cycle_and_moves_the_user_turn():
    msgs = [
        msg("user", T0),
        msg("assistant", T0 + 1 * S, role=PLAN, model="claude-opus-4.6"),
        msg("user", T0 + 2 * S),
        msg("assistant", T0 + 3 * S, role=BUILD),
        msg("user", T0 + 4 * S),  # the turn that kicks off the next plan
        msg("assistant", T0 + 5 * S, role=PLAN, model="claude-opus-4.6"),
        msg("assistant", T0 + 6 * S, role=BUILD),
    ]
    cut, frame = rows(msgs)
    c0, c1 = cut.sessions[("opencode", "s1")].cycles
    assert (c0.first_ms, c1.first_ms) == (T0, T0 + 5 * S)
    # u: cycle 0 keeps msgs 1 and 3; msg 5 moved into cycle 1's plan phase
    assert (c0.u, c1.u) == (2, 1)
    assert c1.phases[PLAN].u == 1
    # msg 1 counts in build (the stored agent), msg 3 in plan (the current role), msg 5 left build
    assert (c0.phases[PLAN].u, c0.phases[BUILD].u, c0.phases[OTHER].u) == (1, 1, 0)
    assert (c0.a, c1.a) == (2, 2)
    assert list(frame["cycle_index"]) == [0, 1]


def test_no_new_cycle_without_a_build_before_the_plan():
    msgs = [
        msg("user", T0),
        msg("assistant", T0 + 1 * S, role=OTHER),
        msg("assistant", T0 + 2 * S, role=PLAN),
        msg("assistant", T0 + 3 * S, role=BUILD),
    ]
    cut, _ = rows(msgs)
    assert len(cut.sessions[("opencode", "s1")].cycles) == 1


def test_no_moved_turn_when_an_assistant_precedes_the_plan():
    msgs = [
        msg("user", T0),
        msg("assistant", T0 + 1 * S, role=BUILD),
        msg("user", T0 + 2 * S),
        msg("assistant", T0 + 3 * S, role=BUILD),
        msg("assistant", T0 + 4 * S, role=PLAN),
    ]
    cut, _ = rows(msgs)
    c0, c1 = cut.sessions[("opencode", "s1")].cycles
    assert (c0.u, c1.u) == (2, 0)


def test_rows_before_any_role_take_the_stored_agent_role():
    cut, _ = rows([msg("user", T0), msg("assistant", T0 + S, role=PLAN)], agent="build")
    c = cut.sessions[("opencode", "s1")].cycles[0]
    assert c.phases[BUILD].u == 1 and c.phases[PLAN].a == 1
    cut, _ = rows([msg("user", T0), msg("assistant", T0 + S)], agent="plan")  # no signal at all
    c = cut.sessions[("opencode", "s1")].cycles[0]
    assert c.phases[PLAN].u == 1 and c.phases[PLAN].a == 1


def test_a_user_hint_counts_before_the_first_role_signal():
    cut, _ = rows([msg("user", T0, role=PLAN), msg("assistant", T0 + S, role=PLAN)], agent=None)
    assert cut.sessions[("opencode", "s1")].cycles[0].phases[PLAN].u == 1


def test_dominant_model_per_phase_with_ties_and_effort():
    msgs = [
        msg("user", T0),
        msg("assistant", T0 + 1 * S, role=PLAN, model="p-x", provider="p1"),
        msg("assistant", T0 + 2 * S, role=PLAN, model="p-x", provider="p2"),
        msg("assistant", T0 + 3 * S, role=PLAN, model="p-x", provider="p2", effort="max"),
        msg("assistant", T0 + 4 * S, role=BUILD, model="m-a", effort="low"),
        msg("assistant", T0 + 5 * S, role=BUILD, model="m-b", effort="high"),
        msg("assistant", T0 + 6 * S, role=BUILD, model="m-b", effort="low"),
        msg("assistant", T0 + 7 * S, role=BUILD, model="m-a", effort="high"),
    ]
    _, frame = rows(msgs)
    assert len(frame) == 1
    row = frame.iloc[0]
    # build: m-a 2, m-b 2 -> the first seen (m-a); its efforts low 1, high 1 -> the first seen (low)
    assert (row.bm, row.bv) == ("m-a", "low")
    # the provider is part of the pair: (p-x, p2) has 2 steps; its efforts (none) 1, max 1 -> (none)
    assert (row.pm, row.pp, row.pv) == ("p-x", "p2", "(none)")
    # the session model counts every step: (p-x, p2), m-a and m-b have 2 each -> (p-x, p2) seen first
    assert (row.model, row.prov, row.variant) == ("p-x", "p2", "(none)")


def test_latency_bounds_and_upper_median():
    lats = [0.0, -5.0, 600_000.0, 600_001.0, 1500.0, 2500.0]
    msgs = [msg("user", T0)] + [
        msg("assistant", T0 + (i + 1) * S, role=BUILD, latency=v) for i, v in enumerate(lats)
    ]
    _, frame = rows(msgs)
    # kept: 600000, 1500, 2500 -> sorted [1500, 2500, 600000], upper middle = 2500
    assert frame["latmed"].iloc[0] == 2.5
    _, frame = rows([msg("user", T0), msg("assistant", T0 + S, role=BUILD)])
    assert frame["latmed"].iloc[0] == -1
    _, frame = rows(
        [msg("user", T0)]
        + [msg("assistant", T0 + (i + 1) * S, role=BUILD, latency=v) for i, v in enumerate([1000.0, 3000.0])]
    )
    assert frame["latmed"].iloc[0] == 3.0  # even count: sorted[len // 2]


@pytest.mark.parametrize(
    ("text", "eerr", "abort"),
    [
        ("oldString not found in content", 1, 0),
        ("Tool execution aborted", 0, 1),
        ("tool execution was interrupted", 0, 1),
        ("Task cancelled by user", 0, 1),
        ("The user rejected permission to use this specific tool call", 0, 1),
        ("Tool execution was interrupted before V2 migration", 0, 0),
    ],
)
def test_abort_error_and_migration_texts(text, eerr, abort):
    msgs = [
        msg("user", T0),
        msg("assistant", T0 + S, role=BUILD, tools=[edit(status="error", error=text), edit()]),
    ]
    _, frame = rows(msgs)
    row = frame.iloc[0]
    assert (row.tedits, row.teerr, row.tabort) == (2, eerr, abort)


@pytest.mark.parametrize(
    ("tools_by_msg", "tver"),
    [
        ([[edit()], [shell("npm test")]], 1),
        ([[shell("npm test")], [edit()]], 0),
        ([[edit(), shell("uv run pytest -q")]], 1),  # same message, verify after the edit
        ([[shell("pytest"), edit()]], 0),  # same message, verify before the edit
        ([[edit()], [shell("echo pytestx")]], 0),  # word-bounded
        ([[edit()], [shell("cargo clippy --all")]], 1),
        ([[shell("make")]], 0),  # no edit at all
    ],
)
def test_verify_after_last_edit(tools_by_msg, tver):
    msgs = [msg("user", T0)] + [
        msg("assistant", T0 + (i + 1) * S, role=BUILD, tools=t) for i, t in enumerate(tools_by_msg)
    ]
    _, frame = rows(msgs)
    assert frame["tver"].iloc[0] == tver


def test_tpaths_needs_a_recorded_path():
    outside = edit("/elsewhere/a.ts")  # absolute, not under the session directory
    _, frame = rows([msg("user", T0), msg("assistant", T0 + S, role=BUILD, tools=[outside])])
    assert (frame["tedits"].iloc[0], frame["tpaths"].iloc[0]) == (1, 0)
    _, frame = rows([msg("user", T0), msg("assistant", T0 + S, role=BUILD, tools=[edit("src/a.ts")])])
    assert frame["tpaths"].iloc[0] == 1


def test_cost_share_by_active_time():
    msgs = [
        msg("user", T0),
        msg("assistant", T0 + 60 * S, role=PLAN, cost=1.0),
        msg("assistant", T0 + 120 * S, role=BUILD, cost=1.0),
        msg("assistant", T0 + 180 * S, role=PLAN, cost=1.0),
    ]
    cut, frame = rows(msgs)
    # cycle 0: 60 + 60 + 60 s, cycle 1: 60 s of 240 s; session cost 3.0 (no stored cost)
    assert list(frame["tcost"]) == [round(3.0 * 180 / 240, 4), round(3.0 * 60 / 240, 4)]
    _, frame = rows(msgs, cost_usd=8.0)  # the stored session cost wins over the message sum
    assert list(frame["tcost"]) == [6.0, 2.0]


def test_tree_folding_assigns_children_by_first_message():
    parent = [
        msg("user", T0),
        msg("assistant", T0 + 10 * S, role=BUILD, tools=[edit()]),
        msg("assistant", T0 + 20 * S, role=PLAN),
        msg("assistant", T0 + 30 * S, role=BUILD),
    ]
    child_a = [
        msg("user", T0 + 15 * S),
        msg(
            "assistant", T0 + 16 * S, role=BUILD, tools=[edit(), edit(status="error", error="boom")], cost=0.5
        ),
    ]
    child_b = [
        msg("user", T0 + 25 * S),
        msg(
            "assistant",
            T0 + 26 * S,
            role=BUILD,
            tools=[edit(status="abort", error="Tool execution aborted")],
            cost=0.25,
        ),
    ]
    grandchild = [
        msg("user", T0 + 27 * S),
        msg("assistant", T0 + 28 * S, role=BUILD, tools=[shell("pytest")], cost=0.125),
    ]
    early = [
        msg("user", T0 - 50 * S),
        msg("assistant", T0 - 40 * S, role=BUILD),
    ]  # before the parent: clamped to cycle 0
    frame = facts_frame(
        [
            ({"session_id": "p", "directory": "/w/shop", "agent": "build", "cost_usd": 1.0}, parent),
            ({"session_id": "ca", "parent_id": "p", "directory": "/w/shop"}, child_a),
            ({"session_id": "cb", "parent_id": "p", "directory": "/w/shop"}, child_b),
            ({"session_id": "gc", "parent_id": "cb", "directory": "/w/shop"}, grandchild),
            ({"session_id": "ce", "parent_id": "p", "directory": "/w/shop"}, early),
        ]
    )
    cut = cut_sessions(frame)
    assert cut.top == [("opencode", "p")]
    out = cycle_frame(fold(cut))
    assert list(out["session_id"]) == ["p", "p"]
    c0, c1 = out.iloc[0], out.iloc[1]
    assert (c0.children, c1.children) == (2, 2)  # ca + ce | cb + gc
    assert (c0.tedits, c0.teerr, c0.tabort) == (1 + 2, 1, 0)
    assert (c1.tedits, c1.teerr, c1.tabort) == (0 + 1, 0, 1)
    assert (c0.u, c1.u) == (1, 0)  # children never add human turns
    # grandchild verified after cb's (aborted) edit -> tver 1 on cycle 1
    assert (c0.tver, c1.tver) == (0, 1)
    p = cut.sessions[("opencode", "p")]
    share0 = 1.0 * p.cycles[0].ms / p.ms
    assert c0.tcost == round(share0 + 0.5 + 0.0, 4)
    assert c1.tcost == round(1.0 - share0 + 0.25 + 0.125, 4)


def test_parent_loops_do_not_hide_sessions():
    frame = facts_frame(
        [
            ({"session_id": "a", "parent_id": "b"}, [msg("user", T0), msg("assistant", T0 + S, role=BUILD)]),
            (
                {"session_id": "b", "parent_id": "a"},
                [msg("user", T0 + 2 * S), msg("assistant", T0 + 3 * S, role=BUILD)],
            ),
        ]
    )
    cut = cut_sessions(frame)
    assert len(cut.top) == 1 and len(cycle_frame(fold(cut))) == 1


def test_an_opencode_session_without_a_stored_agent_has_role_other(tmp_path):
    from scorecard_assets.sessions.opencode import read_opencode
    from scorecard_tests.factories import sessions as F

    db = tmp_path / "opencode.db"
    conn = F.v2_db(db)
    F.add_v2_session(conn, "ses_a", agent="")
    F.add_v2_message(conn, "m1", "ses_a", "user", 0, T0, F.user(T0))
    F.add_v2_message(conn, "m2", "ses_a", "assistant", 1, T0 + S, F.assistant(T0 + S, agent="build"))
    conn.commit()
    conn.close()
    cut = cut_sessions(read_opencode(db).facts)
    s = cut.sessions[("opencode", "ses_a")]
    assert s.role == OTHER and s.cycles[0].phases[OTHER].u == 1  # the first turn takes the stored role
