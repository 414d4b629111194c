"""Ship attribution (docs/sessions.md, "Ships") on units and commits built directly."""

from __future__ import annotations

from scorecard_assets.sessions.cycles import cut_sessions, fold
from scorecard_assets.sessions.git_log import ParsedLog, Repo, commits_frame
from scorecard_assets.sessions.ships import attribute
from scorecard_assets.sessions.warnings import UNKNOWN_IDENTITY
from scorecard_tests.factories.sessions import T0, edit, facts_frame, msg

S = 1000
H = 3600 * S
D = 24 * H
REPO = Repo(key="/r/shop/.git", top="/r/shop", worktrees=["/r/shop", "/r/shop-wt"])
ME = "me@x"


def session(sid, start, *steps, directory="/r/shop", parent=None, role=2):
    """``steps`` = (offset ms, [tools]) after a user turn at ``start``."""
    msgs = [msg("user", start)] + [
        msg("assistant", start + off, role=role, tools=tools) for off, tools in steps
    ]
    return ({"session_id": sid, "directory": directory, "agent": "build", "parent_id": parent}, msgs)


def commits(*rows, repo=REPO.key):
    """rows = (at ms, files, identity)."""
    log = ParsedLog()
    for i, (at, files, who) in enumerate(rows):
        log.hashes.append(f"{i:040x}")
        log.at.append(at // 1000)
        log.names.append("n")
        log.emails.append(who)
        log.files.append(tuple(files))
    return commits_frame(repo, log)


def run(sessions, rows, *, now=None, seeds=(ME,), repos=(REPO,)):
    cut = cut_sessions(facts_frame(sessions))
    trees = fold(cut)
    res = attribute(cut, trees, commits(*rows), list(repos), seeds=seeds, now_ms=now)
    states = {
        (t.session.session_id, t.cycle.index): res.states[(t.session.key, t.cycle.index)] for t in trees
    }
    return res, states


LATE = T0 + 30 * D  # a "now" long after every cycle: nothing pending


def test_file_window_is_72_hours_after_the_edit():
    a = session("a", T0, (S, [edit("/r/shop/src/a.ts")]))
    res, st = run([a], [(T0 + 71 * H, ["src/a.ts"], ME)], now=LATE)
    assert st[("a", 0)].tship == 1
    res, st = run([a], [(T0 + 73 * H, ["src/a.ts"], ME)], now=LATE)
    assert st[("a", 0)].tship == 0 and set(res.credits["basis"]) <= {"window", "advised", "manual"}


def test_commit_grace_of_300_seconds():
    a = session("a", T0, (10 * 60 * S, [edit("/r/shop/src/a.ts")]))  # edit 10 min in
    _, st = run([a], [(T0 + 10 * 60 * S - 299 * S, ["src/a.ts"], ME)], now=LATE)
    assert st[("a", 0)].tship == 1  # the edit is within commit + 300 s
    _, st = run([a], [(T0 + 10 * 60 * S - 301 * S, ["src/a.ts"], ME)], now=LATE)
    assert st[("a", 0)].tship == 0


def test_claims_keep_an_edit_for_one_commit():
    a = session("a", T0, (S, [edit("/r/shop/src/a.ts")]))
    b = session("b", T0 + H, (S, [edit("/r/shop/src/a.ts")]))
    res, st = run([a, b], [(T0 + 30 * 60 * S, ["src/a.ts"], ME), (T0 + 2 * H, ["src/a.ts"], ME)], now=LATE)
    credits = res.credits[res.credits["share"] > 0]
    by_commit = credits.groupby("at")["session_id"].apply(list).to_dict()
    assert by_commit == {(T0 + 30 * 60 * S) // 1000: ["a"], (T0 + 2 * H) // 1000: ["b"]}
    assert st[("a", 0)].tship == st[("b", 0)].tship == 1


def test_same_second_commits_share_the_edits():
    a = session("a", T0, (S, [edit("/r/shop/src/a.ts"), edit("/r/shop/src/b.ts")]))
    at = T0 + H
    res, _ = run(
        [a],
        [(at, ["src/a.ts"], ME), (at, ["src/a.ts", "src/b.ts"], ME), (at + S, ["src/a.ts"], ME)],
        now=LATE,
    )
    files = res.credits[res.credits["basis"] == "files"]
    assert len(files) == 2  # both commits of the batch; the next second finds the edits claimed
    assert list(res.credits.loc[res.credits["at"] == (at + S) // 1000, "basis"]) == ["manual"]


def test_file_credit_is_split_by_files_touched():
    a = session("a", T0, (S, [edit("/r/shop/src/a.ts"), edit("/r/shop/src/b.ts")]))
    b = session("b", T0 + 10 * S, (S, [edit("/r/shop/src/c.ts")]))
    res, _ = run([a, b], [(T0 + H, ["src/a.ts", "src/b.ts", "src/c.ts"], ME)], now=LATE)
    shares = res.credits.set_index("session_id")["share"].to_dict()
    assert shares == {"a": 2 / 3, "b": 1 / 3}


def test_time_fallback_gives_credit_but_never_a_ship():
    # edits whose paths resolve to no repo (an apply_patch without paths, a file outside): the window decides
    a = session("a", T0, (S, [edit("/elsewhere/x.ts", directory="/r/shop")]), (60 * S, []))
    res, st = run([a], [(T0 + 2 * 60 * S, ["src/other.ts"], ME)], now=LATE)
    assert list(res.credits["basis"]) == ["window"] and res.credits["share"].iloc[0] == 1.0
    assert st[("a", 0)].tship == 0


def test_advised_and_manual_commits():
    planner = session("p", T0, (S, []), role=1)  # active in the window, no edits
    res, _ = run([planner], [(T0 + 60 * S, ["src/a.ts"], ME), (T0 + 10 * D, ["src/a.ts"], ME)], now=LATE)
    rows = res.credits.sort_values("at")
    assert list(rows["basis"]) == ["advised", "manual"]
    assert bool(rows["advisor"].iloc[0]) and rows["share"].iloc[0] == 0.0  # a zero-share advisor entry


def test_the_time_window_starts_at_the_previous_commit():
    a = session("a", T0, (S, [edit("/elsewhere/x.ts", directory="/r/shop")]))
    # the second commit's window begins at the first commit, after a's activity: no fallback credit
    res, _ = run([a], [(T0 + 2 * 60 * S, ["README"], ME), (T0 + 3 * H, ["README"], ME)], now=LATE)
    assert list(res.credits.sort_values("at")["basis"]) == ["window", "manual"]


def test_learned_identities_need_three_hits_and_a_tenth():
    edits_at = [T0 + i * D for i in range(3)]
    sessions = [session(f"s{i}", t, (S, [edit(f"/r/shop/src/f{i}.ts")])) for i, t in enumerate(edits_at)]
    other = "laptop@x"
    rows = [(t + S + 100 * S, [f"src/f{i}.ts"], other) for i, t in enumerate(edits_at)]
    res, st = run(sessions, rows, now=LATE, seeds=())
    assert other in res.identities and all(st[(f"s{i}", 0)].tship for i in range(3))
    res, st = run(sessions[:2], rows[:2], now=LATE, seeds=())
    assert other not in res.identities and not any(st[(f"s{i}", 0)].tship for i in range(2))
    assert [w.code for w in res.warnings] == [UNKNOWN_IDENTITY]
    # 3 hits out of 31 commits is under 10 %
    noise = [(T0 + 20 * D + i * H, ["docs.md"], other) for i in range(28)]
    res, _ = run(sessions, rows + noise, now=LATE, seeds=())
    assert other not in res.identities


def test_ship_state_zero_one_two():
    edited = session("edited", T0, (S, [edit("/r/shop/src/a.ts")]))
    res, st = run([edited], [(T0 + H, ["src/a.ts"], ME)], now=LATE)
    assert (st[("edited", 0)].tship, st[("edited", 0)].tshipe) == (1, 0)
    # unshipped, a commit of yours in the repo within 7 days: judged, genuinely unshipped
    _, st = run([edited], [(T0 + 5 * D, ["README"], ME)], now=LATE)
    assert (st[("edited", 0)].tship, st[("edited", 0)].tshipe) == (0, 0)
    # unshipped, your only commit after the 7 days: unshippable
    _, st = run([edited], [(T0 + 8 * D, ["README"], ME)], now=LATE)
    assert st[("edited", 0)].tshipe == 2
    # the window is still open ("now" = the latest commit by default)
    _, st = run([edited], [(T0 + 2 * D, ["README"], "someone@else")])
    assert st[("edited", 0)].tshipe == 1
    # no repository at all
    lost = session("lost", T0, (S, [edit("/tmp/x.ts", directory="/tmp")]), directory="/tmp")
    _, st = run([lost], [(T0 + 5 * D, ["README"], ME)], now=LATE)
    assert st[("lost", 0)].tshipe == 2


def test_a_ship_after_seven_days_does_not_count():
    late_edit = session("a", T0, (6 * D, [edit("/r/shop/src/a.ts")]))
    _, st = run([late_edit], [(T0 + 8 * D, ["src/a.ts"], ME)], now=LATE)
    assert st[("a", 0)].tship == 0


def test_a_shipped_child_ships_the_tree():
    parent = session("p", T0, (S, []), (20 * S, []))
    child = session(
        "c", T0 + 10 * S, (S, [edit("/r/shop-wt/src/a.ts")]), parent="p"
    )  # edited in the worktree
    res, st = run([parent, child], [(T0 + H, ["src/a.ts"], ME)], now=LATE)
    assert st == {("p", 0): st[("p", 0)]} and st[("p", 0)].tship == 1


def test_path_map_moves_recorded_paths():
    a = session(
        "a",
        T0,
        (S, [edit("/old/home/shop/src/a.ts", directory="/old/home/shop")]),
        directory="/old/home/shop",
    )
    cut = cut_sessions(facts_frame([a]))
    trees = fold(cut)
    res = attribute(
        cut,
        trees,
        commits((T0 + H, ["src/a.ts"], ME)),
        [REPO],
        seeds=[ME],
        path_map={"/old/home": "/r"},
        now_ms=LATE,
    )
    assert res.states[(("opencode", "a"), 0)].tship == 1
