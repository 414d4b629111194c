"""Cell formatters: the reference's JS semantics (docs/report.md, and cases of the reference's tests).

Expected strings come from documented examples (docs/report.md) or are worked out by hand from JS rules:
``toFixed`` rounds half away from zero on the exact binary value, ``Math.round`` rounds halves up.
"""

from __future__ import annotations

import math

import pytest

from scorecard_assets.report.formatters import (
    as_number,
    code_cell,
    fmt_agent_clis,
    fmt_count,
    fmt_delta,
    fmt_min,
    fmt_pct,
    fmt_per_issue,
    fmt_ratio,
    fmt_seconds,
    fmt_tokens,
    fmt_usd,
    js_number_str,
    js_round,
    js_to_fixed,
    text_cell,
)


@pytest.mark.parametrize(
    ("value", "digits", "expected"),
    [
        (12.5, 0, "13"),  # spec: 12.5 -> 13 (Python's round gives 12)
        (2.5, 0, "3"),
        (-2.5, 0, "-3"),  # away from zero
        (0.125, 2, "0.13"),  # exact binary tie; format(0.125, ".2f") == "0.12"
        (0.0625, 3, "0.063"),
        (1.005, 2, "1.00"),  # 1.005 is stored as 1.00499999999999989...
        (-0.4, 0, "-0"),
        (-0.0, 0, "0"),  # JS prints negative zero as 0
        (103.875, 1, "103.9"),
        (42.1, 1, "42.1"),
        (7, 3, "7.000"),
    ],
)
def test_js_to_fixed(value: float, digits: int, expected: str) -> None:
    assert js_to_fixed(value, digits) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(2.5, 3), (-2.5, -2), (0.5, 1), (-0.5, 0), (1.4999, 1), (0.49999999999999994, 0), (159278.25, 159278)],
)
def test_js_round_halves_go_up(value: float, expected: int) -> None:
    assert js_round(value) == expected


def test_js_number_str_prints_integral_numbers_without_fraction() -> None:
    assert js_number_str(7) == "7"
    assert js_number_str(7.0) == "7"
    assert js_number_str(2.5) == "2.5"
    assert js_number_str(None) == "null"


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0.88, "88%"), (0.125, "13%"), (1, "100%"), (0, "0%"), (0.35294117647058826, "35%"), (None, "N/A")],
)
def test_fmt_pct(value: object, expected: str) -> None:
    assert fmt_pct(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "—"),
        (0.03, "+3pt"),
        (0.0, "+0pt"),
        (0.004, "+0pt"),
        (-0.14, "-14pt"),
        (-0.004, "-0pt"),  # small negative keeps its sign (reference quirk 7)
        (-0.5, "-50pt"),  # reference test case
    ],
)
def test_fmt_delta(value: object, expected: str) -> None:
    assert fmt_delta(value) == expected


def test_fmt_ratio() -> None:
    assert fmt_ratio(0.97, 29) == "97% (n=29)"
    assert fmt_ratio(2 / 9, 2) == "22% (n=2)"  # reference test case: criteria-weighted 2/9
    assert fmt_ratio(None, 3) == "N/A"


def test_fmt_usd_table_and_digest_forms() -> None:
    assert fmt_usd(17.703, 13) == "$17.703 (n=13)"
    assert fmt_usd(52.14336617499997, 2) == "$52.143 (n=2)"
    assert fmt_usd(4.173) == "$4.173"  # the digest omits (n=)
    assert fmt_usd(0.0625, 1) == "$0.063 (n=1)"  # exact tie rounds away from zero
    assert fmt_usd(None, 4) == "N/A"


def test_fmt_tokens() -> None:
    assert fmt_tokens(66579732, 1) == "66,579,732 (n=1)"
    assert fmt_tokens(13672118, 1) == "13,672,118 (n=1)"  # the #540 billable total
    assert fmt_tokens(159278.25, 12) == "159,278 (n=12)"
    assert fmt_tokens(2.5, 1) == "3 (n=1)"  # Math.round, not banker's rounding
    assert fmt_tokens(65, 2) == "65 (n=2)"  # reference test case: (10+20+30+40 + 10+20) / 2
    assert fmt_tokens(None, 0) == "N/A"


def test_fmt_min_and_per_issue() -> None:
    assert fmt_min(42.1) == "42.1"
    assert fmt_min(118.21666666666667) == "118.2"
    assert fmt_min(0.25) == "0.3"  # exact tie
    assert fmt_min(None) == "N/A"
    assert fmt_per_issue(13.0, 30) == "13.0 (n=30)"
    assert fmt_per_issue(6, 2) == "6.0 (n=2)"  # reference test case: fixed 10 and 2 -> 6 per issue
    assert fmt_per_issue(None, 0) == "N/A"


@pytest.mark.parametrize(
    ("total", "per_issue", "expected"),
    [
        (7, 1.0, "7 (1.00/issue)"),
        (4, 2.0, "4 (2.00/issue)"),  # reference test case: escalations 3 + 1 over 2 issues
        (1, 0.5, "1 (0.50/issue)"),  # unverified 1 + 0 over 2 issues
        (1, 1 / 448, "1 (0.00/issue)"),
        (0, 0.0, "0"),
        (5, None, "5"),
        (3.0, 1.5, "3 (1.50/issue)"),
        (None, 1.0, "N/A"),
    ],
)
def test_fmt_count(total: object, per_issue: object, expected: str) -> None:
    assert fmt_count(total, per_issue) == expected


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [(1948, "32.5m"), (53, "53s"), (60, "1.0m"), (59.4, "59s"), (820, "13.7m"), (140, "2.3m"), (None, "N/A")],
)
def test_fmt_seconds(seconds: object, expected: str) -> None:
    assert fmt_seconds(seconds) == expected


def test_agent_cli_cell() -> None:
    assert fmt_agent_clis(["claude"]) == "claude"
    assert fmt_agent_clis(["claude", "opencode"]) == "claude,opencode"
    assert fmt_agent_clis([]) == "unknown"
    assert fmt_agent_clis(None) == "unknown"
    assert fmt_agent_clis("claude") == "unknown"  # not a list: no names
    assert fmt_agent_clis(["ev|il"]) == "ev\\|il"


@pytest.mark.parametrize("bad", [None, math.nan, math.inf, True, "12", [1]])
def test_missing_or_non_numeric_values_render_na(bad: object) -> None:
    assert as_number(bad) is None
    assert fmt_pct(bad) == "N/A"
    assert fmt_usd(bad, 1) == "N/A"
    assert fmt_tokens(bad, 1) == "N/A"
    assert fmt_seconds(bad) == "N/A"


def test_text_cell_neutralises_pipes_backticks_links_html_and_controls() -> None:
    cell = text_cell("sneaky`](https://phish.example) | <b>x</b>\x1b[31m")
    assert "`" not in cell
    assert "](" not in cell
    assert "\\|" in cell and " | " not in cell
    assert "<b>" not in cell
    assert "\x1b" not in cell


def test_code_cell_keeps_angle_brackets_but_escapes_pipes_and_backticks() -> None:
    assert code_cell("<unknown>") == "<unknown>"
    assert code_cell("evil | 100%`") == "evil \\| 100%'"
    assert len(code_cell("x" * 5000)) == 121  # 120 characters + the ellipsis
