"""Sanitising of untrusted strings (docs/architecture.md "Untrusted strings"; cases of the reference's tests)."""

from __future__ import annotations

import pytest

from scorecard_assets.sanitize import ELLIPSIS, REPLACEMENT, render_value, safe_cell, safe_warning


def test_safe_cell_escapes_pipes_so_columns_cannot_be_forged() -> None:
    assert safe_cell("evil | 100% | $0.001") == "evil \\| 100% \\| $0.001"


def test_safe_cell_replaces_backticks_so_code_spans_cannot_be_escaped() -> None:
    out = safe_cell("sneaky`](https://phish.example", code=True)
    assert "`" not in out and out == "sneaky'](https://phish.example"


def test_safe_cell_scrubs_controls_and_caps_length() -> None:
    assert safe_cell("a\x1b[31mb\x7f") == f"a{REPLACEMENT}&#91;31mb{REPLACEMENT}"
    long = "x" * 500
    assert safe_cell(long) == "x" * 120 + ELLIPSIS


def test_safe_cell_neutralises_html_outside_code_spans_only() -> None:
    assert safe_cell("<unknown>") == "&lt;unknown&gt;"
    assert safe_cell("<unknown>", code=True) == "<unknown>"


def test_bidi_and_zero_width_characters_are_replaced() -> None:
    assert safe_cell("a\u202eb\u200bc") == f"a{REPLACEMENT}b{REPLACEMENT}c"


def test_safe_warning_defuses_links_and_escape_sequences() -> None:
    out = safe_warning("o/r: [click here](https://evil.example)\u001b[31m boom")
    assert "[click here](" not in out and "\u001b" not in out
    assert "&#91;click here&#93;" in out


def test_safe_warning_caps_long_lines() -> None:
    out = safe_warning("w" * 5000)
    assert len(out) < 320 and out.endswith(ELLIPSIS)


def test_render_value_caps_at_120_and_scrubs() -> None:
    assert render_value("v" * 500) == "v" * 120 + ELLIPSIS
    assert render_value("\r\x00") == REPLACEMENT * 2
    assert render_value(None) == ""


def test_safe_cell_defuses_links_outside_code_spans() -> None:
    assert safe_cell("[x](http://evil.example)") == "&#91;x&#93;(http&#58;//evil.example)"


@pytest.mark.parametrize(
    ("raw", "safe"),
    [
        ("re-login at https://evil.example/login", "re-login at https&#58;//evil.example/login"),
        ("or WWW.evil.example now", "or WWW&#46;evil.example now"),
        ("ftp://a.b and www.c.d", "ftp&#58;//a.b and www&#46;c.d"),
        ("awww.example is not www", "awww.example is not www"),  # only a word starting with www.
    ],
)
def test_bare_urls_cannot_become_autolinks(raw: str, safe: str) -> None:
    # GitHub's markdown links bare scheme:// and www. text; an entity keeps it readable and inert
    assert safe_cell(raw) == safe
    assert safe_warning(raw) == safe
    assert safe_cell(raw, code=True) == raw  # inside a code span nothing links, entities would show


def test_safe_warning_stays_short_even_when_full_of_brackets() -> None:
    out = safe_warning("[" * 5000)
    assert len(out) < 320 and out.endswith(ELLIPSIS)
    assert out[:-1].endswith("&#91;")  # no entity cut in half
