"""decisions/_common.py ``adjusted_p_values``: statsmodels' adjustments, without the full garbage
collection its Holm branch runs on every call reaching the objects that exist before it."""

from __future__ import annotations

import gc

import pytest

from scorecard_assets.decisions._common import adjusted_p_values

P = [0.01, 0.04, 0.03, 0.2, 0.5]


def test_holm_and_benjamini_hochberg_give_the_textbook_values() -> None:
    # Holm: sorted p times (m - rank), running maximum, capped at 1
    assert adjusted_p_values(P, "holm") == pytest.approx([0.05, 0.12, 0.12, 0.4, 0.5])
    # BH: p times m / rank, running minimum from the top
    assert adjusted_p_values(P, "fdr_bh") == pytest.approx([0.05, 1 / 15, 1 / 15, 0.25, 0.5])
    assert adjusted_p_values([], "holm") == []


def test_no_freeze_is_left_behind_and_an_existing_freeze_is_kept() -> None:
    assert gc.get_freeze_count() == 0
    adjusted_p_values(P, "holm")
    assert gc.get_freeze_count() == 0
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert adjusted_p_values(P, "holm") == pytest.approx([0.05, 0.12, 0.12, 0.4, 0.5])
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_the_collection_inside_holm_does_not_walk_the_objects_made_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[int] = []
    real = gc.collect
    monkeypatch.setattr(gc, "collect", lambda *a: seen.append(gc.get_freeze_count()) or real(*a))
    keep = [[i] for i in range(10_000)]  # objects the collector would otherwise walk
    adjusted_p_values(P, "holm")
    assert seen and all(count >= len(keep) for count in seen)
