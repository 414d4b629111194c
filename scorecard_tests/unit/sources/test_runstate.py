"""The runstate:v1 comment grammar (docs/sources.md "Runstate grammar") against ``sources.runstate``."""

from __future__ import annotations

import pytest

from scorecard_assets.sources.runstate import (
    RUNSTATE_MARKER,
    Milestone,
    is_milestone,
    parse_milestone,
)

M = RUNSTATE_MARKER


def parsed(body: str) -> Milestone:
    milestone = parse_milestone(body)
    assert milestone is not None
    return milestone


# --- 2.2 rule 1: the marker ---


def test_marker_constant_is_the_documented_one() -> None:
    assert M == "<!-- runstate:v1 -->"


@pytest.mark.parametrize(
    "body",
    [
        " <!-- runstate:v1 -->\nphase=gate",  # leading space
        "\n<!-- runstate:v1 -->\nphase=gate",  # leading newline
        "\t<!-- runstate:v1 -->\nphase=gate",  # leading tab
        "<!--runstate:v1-->\nphase=gate",  # different spacing
        "<!-- runstate:v2 -->\nphase=gate",  # other version
        "<!-- RUNSTATE:V1 -->\nphase=gate",  # case
        "note\n<!-- runstate:v1 -->\nphase=gate",  # marker not at the start
        "",
    ],
)
def test_only_bodies_starting_exactly_with_the_marker_are_milestones(body: str) -> None:
    assert not is_milestone(body)
    assert parse_milestone(body) is None


@pytest.mark.parametrize("body", [None, 42, b"<!-- runstate:v1 -->\nphase=gate", ["<!-- runstate:v1 -->"]])
def test_non_string_bodies_are_not_milestones(body: object) -> None:
    assert parse_milestone(body) is None


def test_marker_alone_is_a_milestone_with_every_field_empty() -> None:
    m = parsed(M)
    assert (m.phase, m.status, m.run, m.at, m.next) == ("", "", "", "", "")
    assert m.keys == {}


def test_text_on_the_marker_line_is_never_read() -> None:
    # The reference drops the marker's whole line, so nothing there can pre-empt the header.
    m = parsed(M + "phase=gate status=done")
    assert (m.phase, m.status, m.keys) == ("", "", {})


def test_a_key_smuggled_onto_the_marker_line_does_not_beat_the_real_one() -> None:
    m = parsed(f"{M} model=evil\nphase=gate status=done run=r-1-aaaa\nmodel=good")
    assert m.keys["model"] == "good" and m.phase == "gate"


# --- 2.2 rule 2: trimming, blank lines, comment lines ---


def test_lines_are_trimmed_and_blank_lines_skipped() -> None:
    m = parsed(f"{M}\n\n   phase=plan status=done   \n\n\t model=glm-5.3 \t\n")
    assert (m.phase, m.status) == ("plan", "done")
    assert m.keys["model"] == "glm-5.3"


def test_crlf_line_endings_leave_no_carriage_return_in_values() -> None:
    m = parsed(f"{M}\r\nphase=gate status=done run=r-1-aaaa\r\nmodel=claude-sonnet-5\r\n")
    assert (m.phase, m.status, m.run) == ("gate", "done", "r-1-aaaa")
    assert m.keys["model"] == "claude-sonnet-5"


def test_lines_starting_with_an_html_comment_are_skipped_even_after_leading_whitespace() -> None:
    body = f"{M}\n<!-- phase=ship model=hidden -->\n   <!-- fixed=99 -->\nphase=review status=done\nfixed=3"
    m = parsed(body)
    assert m.phase == "review"
    assert m.keys["fixed"] == "3"
    assert "model" not in m.keys


def test_a_comment_opener_inside_a_line_does_not_skip_it() -> None:
    m = parsed(f"{M}\nphase=gate\nnote=see <!-- here -->")
    assert m.keys["note"] == "see <!-- here -->"


# --- 2.2 rule 3: header splitting versus one pair per line ---


def test_header_line_is_split_on_any_whitespace() -> None:
    m = parsed(f"{M}\nphase=gate\tstatus=done   run=r-9-beef  at=2026-09-01T14:02:11Z")
    assert m.keys == {"phase": "gate", "status": "done", "run": "r-9-beef", "at": "2026-09-01T14:02:11Z"}


def test_other_lines_are_one_pair_whose_value_keeps_its_spaces() -> None:
    m = parsed(f"{M}\nphase=implement status=blocked\nreason=flaky ci on main  branch")
    assert m.keys["reason"] == "flaky ci on main  branch"


def test_a_line_with_leading_whitespace_before_phase_is_still_the_header() -> None:
    m = parsed(f"{M}\n   phase=gate status=done next=setup")
    assert (m.phase, m.status, m.next) == ("gate", "done", "setup")


def test_a_line_merely_containing_phase_is_not_a_header() -> None:
    m = parsed(f"{M}\nnote=phase=gate status=done")
    assert m.phase == ""
    assert m.keys == {"note": "phase=gate status=done"}


def test_pasted_date_command_on_the_header_yields_dollar_paren_date() -> None:
    m = parsed(f"{M}\nphase=gate status=done run=r-3684-a0cf at=$(date -u +%Y-%m-%dT%H:%M:%SZ)\nnext=setup")
    assert m.at == "$(date"
    assert m.run == "r-3684-a0cf"
    # the remaining tokens ("-u", "+%Y-%m-%dT%H:%M:%SZ)") have no usable '=' and are dropped
    assert set(m.keys) == {"phase", "status", "run", "at", "next"}


def test_the_same_date_command_on_its_own_line_keeps_the_whole_value() -> None:
    m = parsed(f"{M}\nphase=gate status=done\nat=$(date -u +%Y-%m-%dT%H:%M:%SZ)")
    assert m.at == "$(date -u +%Y-%m-%dT%H:%M:%SZ)"


# --- 2.2 rule 4: splitting a pair ---


def test_a_pair_splits_at_the_first_equals_sign() -> None:
    m = parsed(f"{M}\nphase=gate opts=a=b=c\nquery=x=1&y=2")
    assert m.keys["opts"] == "a=b=c"
    assert m.keys["query"] == "x=1&y=2"


def test_tokens_without_equals_or_with_equals_first_are_ignored() -> None:
    m = parsed(f"{M}\nphase=gate oops =5 status=done\n=orphan\njust words\nmodel=x")
    assert m.keys == {"phase": "gate", "status": "done", "model": "x"}


def test_empty_values_are_kept_as_empty_strings() -> None:
    m = parsed(f"{M}\nphase=gate status= run=\nmodel=")
    assert (m.status, m.run) == ("", "")
    assert m.keys["model"] == ""
    assert "status" in m.keys and "run" in m.keys


# --- 2.2 rule 5: the first occurrence of a key wins ---


def test_first_occurrence_wins_within_the_header() -> None:
    m = parsed(f"{M}\nphase=gate status=done status=blocked")
    assert m.status == "done"


def test_first_occurrence_wins_across_lines_even_when_the_first_is_empty() -> None:
    m = parsed(f"{M}\nphase=review status=done run=\nrun=r-1-aaaa\nfixed=1\nfixed=7")
    assert m.run == ""
    assert m.keys["fixed"] == "1"


def test_a_second_phase_line_does_not_override_the_first() -> None:
    m = parsed(f"{M}\nphase=gate status=done\nphase=ship status=awaiting-merge pr=5")
    assert (m.phase, m.status) == ("gate", "done")
    assert m.keys["pr"] == "5"  # new keys of a later header line still count


def test_header_keys_after_other_lines_still_lose_to_earlier_ones() -> None:
    m = parsed(f"{M}\nmodel=first\nphase=gate model=second")
    assert m.keys["model"] == "first"
    assert m.phase == "gate"


# --- 2.2 rule 6 and 2.3 / 2.4: no validation ---


def test_the_parser_validates_nothing() -> None:
    m = parsed(f"{M}\nphase=teleport status=maybe run=not-a-run at=yesterday\nfixed=-3\nac_met=lots")
    assert (m.phase, m.status, m.run, m.at) == ("teleport", "maybe", "not-a-run", "yesterday")
    assert m.keys["fixed"] == "-3" and m.keys["ac_met"] == "lots"


def test_review_tier_is_just_another_key() -> None:
    m = parsed(f"{M}\nphase=review status=done run=r-1-aaaa tier=full")
    assert m.keys["tier"] == "full"


# --- 2.5 examples ---


def test_gate_example() -> None:
    body = (
        f"{M}\nphase=gate status=done run=r-540-429c at=2026-09-01T14:02:11Z\n"
        "base_branch=main\nwarnings=none\nmodel=claude-sonnet-5\nnext=setup"
    )
    m = parsed(body)
    assert (m.phase, m.status, m.run, m.at, m.next) == (
        "gate",
        "done",
        "r-540-429c",
        "2026-09-01T14:02:11Z",
        "setup",
    )
    assert m.keys["model"] == "claude-sonnet-5"
    assert m.keys["base_branch"] == "main"
    assert m.keys["warnings"] == "none"


def test_review_example() -> None:
    body = (
        f"{M}\nphase=review status=done run=r-540-429c at=2026-09-01T14:41:05Z\nhead=eeaf070\n"
        "fixed=12\nescalated=0\nagents_done=1,2,3,4,5\nagents_pending=none\nac_met=5\nac_total=6\nnext=ship"
    )
    m = parsed(body)
    assert m.phase == "review" and m.next == "ship"
    assert [m.keys[k] for k in ("fixed", "escalated", "ac_met", "ac_total")] == ["12", "0", "5", "6"]
    assert m.keys["agents_done"] == "1,2,3,4,5"


def test_header_only_one_liner() -> None:
    body = (
        f"{M}\nphase=gate status=done run=r-1-aaaa at=2026-08-26T00:00:00Z "
        "model=openrouter/~z-ai/glm-latest next=setup"
    )
    m = parsed(body)
    assert m.keys == {
        "phase": "gate",
        "status": "done",
        "run": "r-1-aaaa",
        "at": "2026-08-26T00:00:00Z",
        "model": "openrouter/~z-ai/glm-latest",
        "next": "setup",
    }


def test_classify_and_fence_shapes() -> None:
    classify = parsed(
        f"{M}\nphase=classify status=done run=r-540-edcf mode=slot risk=low est_files=3 areas=cli,docs "
        "confidence=0.85"
    )
    assert (classify.keys["risk"], classify.keys["mode"], classify.keys["areas"]) == (
        "low",
        "slot",
        "cli,docs",
    )
    fence = parsed(f"{M}\nphase=implement status=superseded run=r-3985-xxxx gen=1 takeover=slot-2")
    assert (fence.status, fence.keys["gen"], fence.keys["takeover"]) == ("superseded", "1", "slot-2")


def test_other_comments_are_not_milestones() -> None:
    bodies: list[object] = [
        "LGTM",
        f"{M}\nphase=gate status=done run=r-1-aaaa",
        None,
        f" {M}\nphase=plan status=done run=r-1-aaaa",
        f"{M}\nphase=setup status=done run=r-1-aaaa",
    ]
    parsed_bodies = [parse_milestone(b) for b in bodies]
    assert [m.phase if m else None for m in parsed_bodies] == [None, "gate", None, None, "setup"]


def test_js_whitespace_semantics_for_trim_and_header_split() -> None:
    # JS trim() strips U+FEFF and NBSP; JS /\s+/ does not split on the information separators 0x1c-0x1f.
    from scorecard_assets.sources.runstate import parse_milestone

    m = parse_milestone("<!-- runstate:v1 -->\n\ufeffmodel=x\u00a0\nphase=gate\u00a0status=done\x1crun=r-1")
    assert m is not None
    assert m.keys["model"] == "x"
    assert m.phase == "gate"
    assert m.status == "done\x1crun=r-1"
