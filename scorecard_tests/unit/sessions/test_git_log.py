"""git facts from real repositories made in tmp_path (isolated from the caller's git config):
renames, worktrees, clones, incremental reads and identity seeds."""

from __future__ import annotations

import pandas as pd
import pytest

from scorecard_assets.sessions.git_log import commits_frame, find_repos, global_seeds, parse_log, read_git
from scorecard_tests.factories.sessions import commit_files, git_env, init_repo, run_git

WHEN = 1_772_445_600


def setup(tmp_path):
    env = git_env(tmp_path / "home")
    dev = tmp_path / "dev"
    shop = init_repo(dev / "shop", env)
    commit_files(
        shop, {"src/util/round.ts": "a\n", "a.txt": "x\n", "src/lib/x.ts": "y\n"}, "one", env=env, when=WHEN
    )
    run_git(shop, "mv", "src/util/round.ts", "src/lib/round.ts", env=env)
    (shop / "docs").mkdir()
    run_git(shop, "mv", "a.txt", "docs/b.txt", env=env)
    run_git(shop, "mv", "src/lib/x.ts", "src/x.ts", env=env)
    run_git(shop, "commit", "-q", "-m", "renames", env=env, when=WHEN + 60)
    run_git(shop, "worktree", "add", "-q", "-b", "feature", str(dev / "shop-wt"), env=env)
    commit_files(dev / "shop-wt", {"src/feature.ts": "f\n"}, "feature", env=env, when=WHEN + 120)
    return env, dev, shop


def test_renames_worktrees_and_clones(tmp_path):
    env, dev, shop = setup(tmp_path)
    run_git(dev, "clone", "-q", str(shop), str(dev / "nested" / "shop-clone"), env=env)
    (dev / ".hidden").mkdir()
    repos, warnings = find_repos([dev], env=env)
    assert warnings == []
    keys = [r.key for r in repos]
    assert len(keys) == 2  # shop (+ its worktree) and the clone
    main = next(r for r in repos if r.key.endswith("shop/.git"))
    assert sorted(main.worktrees) == sorted([str(shop), str(dev / "shop-wt")])
    _, commits, states, warnings, stats, counters = read_git([dev], env=env)
    assert warnings == [] and counters["full"] == 2
    # every hash once, though the clone holds the same commits
    assert commits["hash"].is_unique and len(commits) == 3
    renames = commits.loc[commits["at"] == WHEN + 60, "files"].iloc[0]
    assert sorted(renames) == ["docs/b.txt", "src/lib/round.ts", "src/x.ts"]
    assert set(commits.loc[commits["at"] == WHEN + 120, "files"].iloc[0]) == {
        "src/feature.ts"
    }  # the worktree branch
    assert set(commits["identity"]) == {"dev@example.com"}
    assert all(s.tips for s in states.values())


def test_incremental_reads_only_the_repo_that_moved(tmp_path):
    env, dev, shop = setup(tmp_path)
    api = init_repo(dev / "api", env)
    commit_files(api, {"app.py": "1\n"}, "api one", env=env, when=WHEN)
    repos, first, states, *_ = read_git([dev], env=env)
    _, same, states2, _, _, counters = read_git([dev], env=env, states=states, previous=first)
    assert counters["same"] == 2 and counters["commits_read"] == 0
    pd.testing.assert_frame_equal(same, first)
    commit_files(api, {"app.py": "2\n"}, "api two", env=env, when=WHEN + 500)
    _, after, states3, _, _, counters = read_git([dev], env=env, states=states2, previous=same)
    assert (counters["same"], counters["incremental"], counters["commits_read"]) == (1, 1, 1)
    _, fresh, *_ = read_git([dev], env=env)
    pd.testing.assert_frame_equal(after.reset_index(drop=True), fresh.reset_index(drop=True))
    assert states3[next(k for k in states3 if k.endswith("api/.git"))].commits == 2


def test_seeds_from_global_and_local_config(tmp_path):
    env, dev, shop = setup(tmp_path)
    run_git(shop, "config", "user.email", "Local@Example.COM", env=env)
    assert global_seeds(env) == {"dev@example.com", "dev example"}
    repos, _ = find_repos([dev], env=env)
    assert "local@example.com" in next(r for r in repos if r.key.endswith("shop/.git")).seeds


def test_a_broken_repo_is_reported(tmp_path):
    env = git_env(tmp_path / "home")
    broken = tmp_path / "dev" / "broken"
    broken.mkdir(parents=True)
    (broken / ".git").write_text("gitdir: /nowhere\n")
    repos, warnings = find_repos([tmp_path / "dev"], env=env)
    assert repos == [] and len(warnings) == 1


def test_parse_log_edge_cases():
    text = (
        "\x1eabc|100|Name | With Pipe|e@x\n\n"  # a '|' in the author name
        "\x1edef|101|N|\n"  # no email, no files
        "\x1ebad header\n"
        '\x1eghi|102|N|m@x\n\n1\t1\t"tab\\there.txt"\n2\t0\n'
    )
    log = parse_log(text)
    assert log.hashes == ["abc", "def", "ghi"]
    assert log.names[0] == "Name | With Pipe" and log.emails[1] == ""
    assert log.files == [(), (), ("tab\there.txt",)]
    assert log.malformed == ["bad header"]


# Found by the git log fuzz target (docs/reliability.md "Fuzz targets"): each once raised.
@pytest.mark.parametrize("at", ["--5", "²", "٣", "9" * 30, "1e9", "+5", ""])
def test_an_author_time_that_is_not_an_int64_makes_the_record_malformed(at: str) -> None:
    parsed = parse_log(f"\x1e{'a' * 40}|{at}|Ann|ann@x.org\n1\t1\tsrc/a.py\n\x1e{'b' * 40}|-5|Bo|bo@x.org\n")
    assert parsed.malformed == [f"{'a' * 40}|{at}|Ann|ann@x.org"[:80]]
    assert parsed.hashes == ["b" * 40] and parsed.at == [-5]
    assert len(commits_frame("/r/.git", parsed)) == 1


def test_bytes_that_are_not_utf8_in_names_emails_and_paths_become_replacement_characters() -> None:
    # git_log.git decodes git's output with surrogate escapes: a Latin-1 name arrives as \udce9
    parsed = parse_log(f"\x1e{'c' * 40}|1772445600|Ren\udce9|r\udce9@x.org\n1\t1\tcaf\udce9.py\n")
    frame = commits_frame("/r/.git", parsed)
    assert frame["author_name"].tolist() == ["Ren\ufffd"]
    assert frame["identity"].tolist() == ["r\ufffd@x.org"]
    assert frame["files"].tolist() == [("caf\ufffd.py",)]


def test_a_rename_to_nothing_adds_no_empty_path() -> None:
    parsed = parse_log(f"\x1e{'d' * 40}|1772445600|Ann|ann@x.org\n1\t1\t{{ => }}\n2\t0\tsrc/a.py\n")
    assert parsed.files == [("src/a.py",)]
