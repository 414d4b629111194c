"""The publish guard's rule (report/guard.py)."""

from __future__ import annotations

import pytest

from scorecard_assets.report import guard


@pytest.mark.parametrize(
    ("rows", "previous", "published_rows", "refused"),
    [
        (0, 12, None, True),  # the previous window had rows
        (0, 0, 133, True),  # both windows empty (a silent source failure) but a real report exists
        (0, 0, None, False),  # nothing to protect: a genuinely quiet fleet
        (0, 0, 0, False),  # the published report was empty too
        (5, 12, 133, False),  # rows: publish
    ],
)
def test_guard_refuses_only_an_empty_window_that_replaces_evidence(
    rows: int, previous: int, published_rows: int | None, refused: bool
) -> None:
    assert guard.guard_refuses(rows, previous, published_rows) is refused


# ------------------------------------------------------------------------- the guard grows up


def _sidecar(
    n: int = 10,
    repos: dict[str, int] | None = None,
    sources: list[dict] | None = None,
    cost: int = 4,
    tier: str = "T2",
    escalations: int = 2,
) -> dict:
    repos = repos if repos is not None else {"acme/api": n}
    return {
        "grandTotal": {"n": n, "costSamples": cost, "escalations": escalations},
        "repoTotals": [{"repo": r, "model": "m", "n": k} for r, k in repos.items()],
        "buckets": [{"repo": r, "tier": tier, "n": k} for r, k in repos.items()],
        "sources": sources if sources is not None else [{"source": "trails", "repo": "acme/api", "rows": 50}],
    }


def _inputs(now: dict, published: dict | None, **kw: object) -> dict:
    profile = guard.profile_of(now)
    assert profile is not None
    return guard.guard_inputs(
        profile,
        previous_rows=int(kw.pop("previous_rows", 5)),  # type: ignore[call-overload]
        published=published,
        window="2026-10-24 → 2026-11-22",
        repos=kw.pop("repos", ["acme/api", "acme/web"]),  # type: ignore[arg-type]
        hosts=["b1"],
        **kw,  # type: ignore[arg-type]
    )


def test_nothing_vanished_passes() -> None:
    inputs = _inputs(_sidecar(), _sidecar())
    assert guard.vanished(inputs) == [] and guard.guard_failure(inputs) is None


def test_a_repo_that_vanished_is_named_and_blocks() -> None:
    before = _sidecar(20, {"acme/api": 10, "acme/web": 10})
    now = _sidecar(10, {"acme/api": 10})
    failure = guard.guard_failure(_inputs(now, before, max_drop=0.9))
    assert failure is not None
    assert "repo acme/web had 10 issue row(s) in the published report and has none now" in failure
    assert "force: true" in failure and "the last good one stays in place" in failure


def test_a_repo_no_longer_configured_is_not_a_loss() -> None:
    before = _sidecar(20, {"acme/api": 10, "acme/old": 10})
    assert guard.vanished(_inputs(_sidecar(10), before, max_drop=0.9)) == []


@pytest.mark.parametrize(
    ("now_rows", "max_drop", "blocked"), [(7, 0.3, False), (6, 0.3, True), (6, 0.5, False)]
)
def test_a_drop_beyond_the_configured_fraction_blocks(now_rows: int, max_drop: float, blocked: bool) -> None:
    lost = guard.vanished(_inputs(_sidecar(now_rows), _sidecar(10), max_drop=max_drop))
    assert bool(lost) is blocked
    if blocked:
        assert lost == [
            f"issue rows dropped from 10 (published) to {now_rows}, by {(10 - now_rows) / 10:.0%}, "
            f"more than guard.max_issue_row_drop ({max_drop:.0%})"
        ]


def test_a_source_and_columns_that_vanished_are_named() -> None:
    src = [
        {"source": "trails", "repo": "acme/api", "rows": 50},
        {"source": "runs.jsonl", "host": "b1", "rows": 30, "path": "a"},
        {"source": "runs.jsonl", "host": "b1", "rows": 3, "path": "b"},
        {"source": "runs.jsonl", "host": "gone-host", "rows": 9},
        {"source": "cycles import", "rows": 7},  # not an input of model_scorecard: never compared
    ]
    now_src = [
        {"source": "trails", "repo": "acme/api", "rows": 50},
        {"source": "runs.jsonl", "host": "b1", "rows": 0, "notes": "dossier home is empty"},
    ]
    lost = guard.vanished(
        _inputs(_sidecar(sources=now_src, cost=0, tier="<unknown>", escalations=0), _sidecar(sources=src))
    )
    assert lost == [
        "source runs.jsonl on host b1 had 33 row(s) in the published report and has none now",
        "issue rows with a cost: 4 in the published report, none now",
        "issue rows with a known tier: 10 in the published report, none now",
        "event counts (escalations, stalls, unverified exits): 2 in the published report, none now",
    ]


def test_silent_trails_block_even_without_a_published_report() -> None:
    now_src = [
        {"source": "trails", "repo": "acme/api", "rows": 0},
        {"source": "events.jsonl", "host": "b1", "repo": "acme/api", "rows": 25},
        {"source": "trails", "repo": "acme/web", "rows": 0},  # no activity either: a quiet repo
    ]
    inputs = _inputs(_sidecar(sources=now_src), None)
    assert guard.vanished(inputs) == [
        "repo acme/api has no trail comments while events.jsonl has 25 row(s) for it"
    ]
    assert guard.guard_failure(inputs) is not None


def test_force_lets_it_through_and_says_what_was_forced() -> None:
    inputs = _inputs(_sidecar(3), _sidecar(10), force=True)
    assert guard.guard_failure(inputs) is None
    note = guard.forced_note(inputs)
    assert note is not None and note.startswith("Published with force although: Window 2026-10-24")
    assert guard.guard_metadata(inputs)["forced"] is True
    assert guard.forced_note(_inputs(_sidecar(10), _sidecar(10), force=True)) is None  # nothing to force


@pytest.mark.parametrize(
    "damaged", [{}, {"grandTotal": "x", "repoTotals": 3, "sources": [1, {"rows": 2}]}, None]
)
def test_a_damaged_published_report_protects_nothing_beyond_its_rows(damaged: dict | None) -> None:
    inputs = _inputs(_sidecar(), damaged)
    assert guard.vanished(inputs) == [] and guard.guard_failure(inputs) is None


def test_the_report_asset_rereads_the_published_report() -> None:
    inputs = _inputs(_sidecar(3, {"acme/api": 3}), None)
    assert guard.guard_failure(inputs) is None
    assert guard.guard_failure(guard.with_published(inputs, _sidecar(10))) is not None


def test_inputs_stored_in_the_first_shape_still_evaluate() -> None:
    old = {
        "windowStart": "a",
        "windowEnd": "b",
        "grandTotal": {"n": 0},
        "_guard": {"rows": 0, "previous_rows": 4, "published_rows": None, "window": "a → b"},
    }
    inputs = guard.stored_guard_inputs(old)
    assert (inputs["rows"], inputs["previous_rows"], inputs["window"]) == (0, 4, "a → b")
    assert "the previous window had 4" in (guard.guard_failure(inputs) or "")
