"""Scatter labels: beside their point when there is room, never over another label, a marker or the
frame; numbered instead when nothing is free."""

from __future__ import annotations

import random

import matplotlib as mpl
import pytest

from scorecard_assets.report.charts import _RC, delivery_vs_cost_figure
from scorecard_assets.report.label_layout import Box, Placement, candidate_offsets, place_labels
from scorecard_tests.factories.sidecar import make_rollup, make_sidecar, with_keys

FRAME = Box(0, 0, 400, 300)


def label_box(point: tuple[float, float], size: tuple[float, float], placement: Placement) -> Box:
    x, y = point[0] + placement.dx, point[1] + placement.dy
    return Box(x, y, x + size[0], y + size[1])


def test_a_lone_point_gets_the_first_candidate_right_of_its_marker() -> None:
    [placement] = place_labels([(100, 100)], [(60, 10)], [5], FRAME, gap=3)
    assert placement == Placement(8, 3, False)


def test_a_point_at_the_right_edge_is_labelled_on_its_left() -> None:
    [placement] = place_labels([(395, 150)], [(60, 10)], [4], FRAME)
    assert placement is not None and placement.dx < 0 and not placement.far


def test_a_point_at_the_top_edge_is_labelled_below() -> None:
    [placement] = place_labels([(100, 296)], [(60, 10)], [3], FRAME)
    assert placement is not None and placement.dy < 0


def test_coincident_points_get_distinct_labels_and_later_ones_a_leader_line() -> None:
    points = [(200.0, 150.0)] * 5
    sizes = [(80.0, 10.0)] * 5
    placements = place_labels(points, sizes, [4.0] * 5, FRAME)
    assert all(p is not None for p in placements)
    boxes = [label_box(pt, sz, p) for pt, sz, p in zip(points, sizes, placements, strict=True) if p]
    assert len({(b.x0, b.y0) for b in boxes}) == 5
    assert any(p.far for p in placements if p)  # only four near corners exist


def test_random_clusters_never_overlap_and_stay_inside() -> None:
    rng = random.Random(7)
    points = [(rng.uniform(20, 120), rng.uniform(20, 120)) for _ in range(30)]
    sizes = [(rng.uniform(30, 90), 11.0) for _ in points]
    radii = [rng.uniform(3, 12) for _ in points]
    placements = place_labels(points, sizes, radii, FRAME)
    markers = [Box(x - r, y - r, x + r, y + r) for (x, y), r in zip(points, radii, strict=True)]
    boxes = [label_box(pt, sz, p) for pt, sz, p in zip(points, sizes, placements, strict=True) if p]
    assert len(boxes) >= 10
    for i, box in enumerate(boxes):
        assert box.inside(FRAME)
        assert not any(box.overlaps(m) for m in markers)
        assert not any(box.overlaps(other) for other in boxes[i + 1 :])


def test_a_label_that_fits_nowhere_is_left_out() -> None:
    tiny = Box(0, 0, 50, 20)
    # 40 wide in a 50-wide frame: only centred above and centred below fit, so the third is left out
    placements = place_labels([(25, 10)] * 3, [(40, 8)] * 3, [1] * 3, tiny, gap=1)
    assert [p is None for p in placements] == [False, False, True]
    wide = place_labels([(25, 10)], [(80, 8)], [1], tiny)  # wider than the frame itself
    assert wide == [None]


def test_priority_order_decides_who_keeps_the_near_spot() -> None:
    first, second = place_labels([(100, 100), (100, 100)], [(50, 10), (50, 10)], [4, 4], FRAME)
    assert first == Placement(7, 3, False) and second is not None and second != first


def test_candidates_start_near_and_grow_outwards() -> None:
    offsets = candidate_offsets(50, 10, 4, 3)
    assert [far for _, _, far in offsets[:6]] == [False] * 6
    assert all(far for _, _, far in offsets[6:])
    far_dy = [abs(dy) for _, dy, _ in offsets[6:]]
    assert far_dy == sorted(far_dy)


def test_mismatched_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="same length"):
        place_labels([(1, 1)], [], [1], FRAME)


def model_total(name: str, n: int, cost: float) -> dict:
    return with_keys(
        {"model": name}, make_rollup(n, n, costPerDeliveredUsd=cost, costSamples=n), {"providers": []}
    )


def side_note(sidecar: dict) -> str:
    with mpl.rc_context(_RC):
        fig = delivery_vs_cost_figure(sidecar)
    return "\n".join(t.get_text() for t in fig.texts)


def test_chart_labels_every_point_when_there_is_room() -> None:
    note = side_note(make_sidecar(totals=[model_total("alpha", 5, 0.2), model_total("beta", 9, 0.8)]))
    assert "Numbered points" not in note


def test_a_crowd_of_identical_points_is_numbered_and_named_in_the_side_note() -> None:
    crowd = [model_total(f"model-{k:02d}-with-a-long-name", 3, 0.5) for k in range(40)]
    note = side_note(make_sidecar(totals=crowd))
    assert "Numbered points (" in note and "no room for a label" in note
    assert "1  model-" in note  # numbered by priority, named with n
    assert "(+" in note  # the side note caps the list
