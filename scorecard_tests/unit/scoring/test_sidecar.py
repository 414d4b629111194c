"""The sidecar contract: pydantic validation, key order, and the serialiser (builders in
``scorecard_tests/factories/sidecar.py``)."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from scorecard_assets.records import DataWarning
from scorecard_assets.scoring.sidecar.keys import REFERENCE_KEYS, ROLLUP_KEYS, SIDECAR_KEYS
from scorecard_assets.scoring.sidecar.model import (
    PoolResult,
    dump_sidecar,
    sidecar_key_order_problems,
    sidecar_problems,
    validate_reference_part,
    validate_sidecar,
)
from scorecard_tests.factories.sidecar import make_sidecar

# ----------------------------------------------------------------------------------- validation


def test_a_valid_sidecar_passes_with_no_problem() -> None:
    sidecar = make_sidecar()
    assert list(sidecar) == list(SIDECAR_KEYS)
    parsed = validate_sidecar(sidecar)
    assert parsed.grandTotal.n == 5
    assert parsed.pairings.fleet is not None
    assert sidecar_problems(sidecar) == []


def test_reference_sidecar_passes_the_reference_part(reference_dir: Path) -> None:
    reference = json.loads((reference_dir / "reference-sidecar-2026-09-07.json").read_text(encoding="utf-8"))
    assert list(reference) == list(REFERENCE_KEYS)
    part = validate_reference_part(reference)
    assert part.grandTotal.n == 187
    assert [t.model for t in part.totals][:2] == ["<unknown>", "claude-opus-5"]
    assert sidecar_key_order_problems(reference, reference_only=True) == []


def test_reference_sidecar_is_not_a_whole_sidecar(reference_dir: Path) -> None:
    reference = json.loads((reference_dir / "reference-sidecar-2026-09-07.json").read_text(encoding="utf-8"))
    with pytest.raises(ValidationError):
        validate_sidecar(reference)  # our keys and the later rollup fields are missing
    problems = sidecar_key_order_problems(reference)
    assert "(top level): missing key 'windowMode'" in problems


def test_reference_part_of_our_sidecar_validates_too() -> None:
    assert validate_reference_part(make_sidecar()).windowDays == 30


def test_reference_pool_validates_once_ranked(reference_dir: Path) -> None:
    pool = json.loads((reference_dir / "pragmatikos-pool-115382dd.json").read_text(encoding="utf-8"))
    for view in pool["views"].values():
        for rank, group in enumerate(view["groups"], start=1):
            group.update(rank=rank, interval=[group["scoreAdj"] - 3, group["scoreAdj"] + 3], tie=False)
    parsed = PoolResult.model_validate(pool)
    assert parsed.meta.minJudged == 10
    assert len(parsed.views["famCombo"].groups) == 7


@pytest.mark.parametrize(
    ("path", "bad_value"),
    [
        (("buckets", 0, "n"), "3"),  # a string is not a count
        (("buckets", 0, "n"), 3.0),  # nor is a float: JS would print 3, we would print 3.0
        (("buckets", 0, "deliveryRate"), 1.5),  # a rate lies in 0..1
        (("buckets", 0, "agentClis"), "claude"),
        (("totals", 0, "providers"), {}),
        (("grandTotal", "model"), "ALL"),
        (("windowMode",), "weeks"),
        (("windowStart",), "22/08/2026"),
        (("windowDays",), 0),
        (("warnings",), [1]),
        (("pairings", "fleet", "views", "famCombo", "groups", 0, "tie"), "yes"),
        (("pairings", "fleet", "views", "famCombo", "groups", 0, "interval"), [70.0, 60.0]),
        (("pairings", "fleet", "views", "famCombo", "groups", 0, "imputed"), ["Speed"]),
        (("drops", 0, "currentRate"), 0.95),  # 1.0 -> 0.95 is not a drop of more than 10 points
        (("buckets", 0, "costSamples"), 3),  # more costed issues than delivered ones
    ],
)
def test_wrong_types_and_values_fail(path: tuple[Any, ...], bad_value: object) -> None:
    sidecar = make_sidecar()
    target: Any = sidecar
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = bad_value
    with pytest.raises(ValidationError):
        validate_sidecar(sidecar)
    assert sidecar_problems(sidecar) != []


def test_unknown_keys_and_unknown_views_fail() -> None:
    sidecar = make_sidecar()
    sidecar["buckets"][0]["surprise"] = 1
    with pytest.raises(ValidationError):
        validate_sidecar(sidecar)
    sidecar = make_sidecar()
    sidecar["pairings"]["fleet"]["views"]["vibes"] = sidecar["pairings"]["fleet"]["views"]["famCombo"]
    with pytest.raises(ValidationError):
        validate_sidecar(sidecar)


def test_later_rollup_fields_are_required_in_our_sidecar() -> None:
    sidecar = make_sidecar()
    del sidecar["buckets"][0]["cacheTokenSamples"]
    with pytest.raises(ValidationError, match="cacheTokenSamples"):
        validate_sidecar(sidecar)
    validate_reference_part(sidecar)  # the reference part tolerates older rollups


# ------------------------------------------------------------------------------------ key order


def test_swapped_top_level_keys_are_reported() -> None:
    sidecar = make_sidecar()
    reordered = {"windowEnd": sidecar["windowEnd"], **{k: v for k, v in sidecar.items() if k != "windowEnd"}}
    validate_sidecar(reordered)  # pydantic does not see order ...
    problems = sidecar_key_order_problems(reordered)  # ... the helper does
    assert problems and problems[0].startswith("(top level): key 'windowEnd' at position 0")


def test_swapped_rollup_fields_are_reported_with_their_place() -> None:
    sidecar = make_sidecar()
    bucket = sidecar["buckets"][1]
    sidecar["buckets"][1] = {
        "delivered": bucket["delivered"],
        **{k: v for k, v in bucket.items() if k != "delivered"},
    }
    problems = sidecar_key_order_problems(sidecar)
    assert len(problems) == 1 and problems[0].startswith("buckets[1]: key 'delivered'")


def test_optional_total_tail_and_our_rollup_extra_keep_their_place() -> None:
    sidecar = make_sidecar()
    total = sidecar["totals"][0]
    assert list(total)[-2:] == ["providers", "deliveryRateDelta"]
    assert sidecar_key_order_problems(sidecar) == []
    # costEstimateSamples (ours) goes after agentClis, before providers
    sidecar["totals"][0] = {**{k: total[k] for k in ("model", *ROLLUP_KEYS)}, "costEstimateSamples": 0}
    sidecar["totals"][0].update(providers=total["providers"])
    assert sidecar_key_order_problems(sidecar) == []
    validate_sidecar(sidecar)
    moved = {
        "costEstimateSamples": 0,
        **{k: v for k, v in sidecar["totals"][0].items() if k != "costEstimateSamples"},
    }
    sidecar["totals"][0] = moved
    assert any(
        p.startswith("totals[0]: key 'costEstimateSamples'") for p in sidecar_key_order_problems(sidecar)
    )


def test_pairing_group_order_is_checked() -> None:
    sidecar = make_sidecar()
    group = sidecar["pairings"]["fleet"]["views"]["famCombo"]["groups"][0]
    sidecar["pairings"]["fleet"]["views"]["famCombo"]["groups"][0] = {"tie": group["tie"], **group}
    problems = sidecar_key_order_problems(sidecar)
    assert problems == [
        "pairings.fleet.views.famCombo.groups[0]: "
        "key 'tie' at position 0 (among the contract's keys), expected 'id'"
    ]


def test_key_order_helper_tolerates_non_objects() -> None:
    assert sidecar_key_order_problems([]) == ["(top level): not an object"]  # type: ignore[arg-type]
    sidecar = make_sidecar(buckets=["not a row"])
    assert sidecar_key_order_problems(sidecar) == []


# ---------------------------------------------------------------------------------- serialising


def test_dump_is_two_space_json_with_a_final_newline_and_unrounded_floats() -> None:
    text = dump_sidecar({"a": 0.35294117647058826, "b": "2026-08-22 → 2026-09-21", "c": [1, 2]})
    assert (
        text == '{\n  "a": 0.35294117647058826,\n  "b": "2026-08-22 → 2026-09-21",\n'
        '  "c": [\n    1,\n    2\n  ]\n}\n'
    )


def test_dump_turns_nan_and_infinity_into_null() -> None:
    data = json.loads(
        dump_sidecar({"nan": math.nan, "inf": math.inf, "ninf": -math.inf, "np": np.float64("nan")})
    )
    assert data == {"nan": None, "inf": None, "ninf": None, "np": None}


def test_dump_prints_integral_floats_like_javascript_and_unwraps_numpy() -> None:
    text = dump_sidecar({"rate": 1.0, "zero": -0.0, "median": 572.5, "i": np.int64(3), "f": np.float64(0.5)})
    assert json.loads(text) == {"rate": 1, "zero": 0, "median": 572.5, "i": 3, "f": 0.5}
    assert '"rate": 1,' in text and '"zero": 0,' in text


def test_dump_accepts_records_and_rejects_unknown_types() -> None:
    warning = DataWarning(code="model_missing", asset="run_table", message="m")
    assert json.loads(dump_sidecar({"w": [warning]}))["w"][0]["code"] == "model_missing"
    with pytest.raises(TypeError, match=r"\$\.x"):
        dump_sidecar({"x": object()})


def test_dump_reproduces_the_reference_sidecar_byte_for_byte(reference_dir: Path) -> None:
    text = (reference_dir / "reference-sidecar-2026-09-07.json").read_text(encoding="utf-8")
    assert dump_sidecar(json.loads(text)) == text


def test_dumped_sidecar_round_trips_and_still_validates() -> None:
    sidecar = make_sidecar()
    again = json.loads(dump_sidecar(sidecar))
    assert list(again) == list(SIDECAR_KEYS)
    assert sidecar_problems(again) == []
    assert again["windowStart"] == "2026-08-22" and again["totals"][0]["model"] == "claude-sonnet-5"


def test_builders_do_not_share_state() -> None:
    first = make_sidecar()
    second = copy.deepcopy(first)
    first["buckets"][0]["n"] = 99
    assert second["buckets"][0]["n"] == 3


def test_our_group_keys_follow_the_reference_keys_in_any_order() -> None:
    sidecar = make_sidecar()
    groups = sidecar["pairings"]["fleet"]["views"]["famCombo"]["groups"]
    group = groups[0]
    groups[0] = {**{k: v for k, v in group.items() if k not in ("rank", "interval", "tie")}}
    groups[0].update(interval=group["interval"], tie=group["tie"], rank=group["rank"])
    assert sidecar_key_order_problems(sidecar) == []
    del groups[0]["tie"]
    assert sidecar_key_order_problems(sidecar) == [
        "pairings.fleet.views.famCombo.groups[0]: missing key 'tie'"
    ]
