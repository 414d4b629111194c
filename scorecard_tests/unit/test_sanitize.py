"""Sanitising of untrusted strings (docs/architecture.md "Untrusted strings"; cases of the reference's tests)."""

from __future__ import annotations

import pytest

from scorecard_assets.sanitize import (
    ELLIPSIS,
    REPLACEMENT,
    render_value,
    safe_cell,
    safe_plain,
    safe_warning,
    scrub,
    scrub_json_text,
)


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


# --- issue 15: the sanitiser's gaps (docs/reliability.md "Sanitiser") ---


def test_an_entity_in_a_value_cannot_smuggle_a_character() -> None:
    cell = safe_cell("mid&#x202E;x")
    assert cell == "mid&amp;#x202E;x"  # renders as the literal text, not a right-to-left override
    assert "&amp;" in safe_warning("a & b")


def test_every_invisible_or_reordering_character_is_neutralised_everywhere() -> None:
    import sys
    import unicodedata

    invisible = [
        chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) in ("Cf", "Zl", "Zp", "Cc")
    ]
    invisible += ["\u034f", "\u115f", "\u3164", "\ufe0f"]
    for ch in invisible:
        raw = f"a{ch}b"
        assert ch not in safe_cell(raw) and ch not in safe_cell(raw, code=True), hex(ord(ch))
        assert ch not in safe_warning(raw) and ch not in render_value(raw), hex(ord(ch))
        assert ch not in safe_plain(raw), hex(ord(ch))
        if ch not in "\t\n":
            assert ch not in scrub_json_text(raw), hex(ord(ch))
    for ch in ("\u2028", "\u2029", "\u061c", "\u2060", "\ufeff", "\u00ad", "\U000e0041"):
        assert scrub(f"x{ch}y") == "x\ufffdy"


def test_the_sidecar_text_keeps_lines_but_no_hidden_characters() -> None:
    from scorecard_assets.scoring.sidecar.model import dump_sidecar

    text = dump_sidecar({"tier": "a\u202eb\nc", "m\u2066": 1})
    assert "\u202e" not in text and "\u2066" not in text and "\\n" in text


def test_emails_mentions_and_issue_references_are_inert_outside_code_spans() -> None:
    cell = safe_cell("mail bob@example.com, ping @alice and @org/team about #123 and acme/api#7, GH-9")
    for token in ("bob@example.com", "@alice", "@org/team", "#123", "acme/api#7", "GH-9"):
        assert f"`{token}`" in cell, token
    assert safe_cell("&#91;") == "&amp;#91;"  # our own entities are not taken for references
    warning = safe_warning("`@bob` and @carol")
    assert "`@carol`" in warning and "``" not in warning
    plain = safe_plain("see https://evil.example/x and www.evil.example, @bob, x@y.io, #12 ](u)")
    assert "://" not in plain and "www." not in plain and "@" not in plain.replace("[@]", "")
    assert "[#]12" in plain and "](" not in plain


def test_a_capped_warning_never_leaves_an_open_code_span() -> None:
    text = safe_warning("x" * 290 + " @someone-with-a-long-name")
    assert text.count("`") % 2 == 0
