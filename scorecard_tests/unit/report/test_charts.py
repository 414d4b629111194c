"""Charts: valid, reproducible PNGs; no-data images instead of exceptions; markdown embedding."""

from __future__ import annotations

import base64
import re
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest

from scorecard_assets.report.charts import (
    DELIVERY_VS_COST,
    PAIRING_SCORES,
    PNG_MAGIC,
    chart_markdown,
    chart_pngs,
)
from scorecard_tests.factories.sidecar import (
    make_group,
    make_pool,
    make_rollup,
    make_sidecar,
    with_keys,
)


def png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """(type, payload) of every chunk, checking each CRC on the way."""
    assert data[:8] == PNG_MAGIC
    chunks, offset = [], 8
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        payload = data[offset + 8 : offset + 8 + length]
        (crc,) = struct.unpack(">I", data[offset + 8 + length : offset + 12 + length])
        assert zlib.crc32(kind + payload) == crc
        chunks.append((kind, payload))
        offset += 12 + length
    return chunks


def image_size(data: bytes) -> tuple[int, int]:
    header = png_chunks(data)[0]
    assert header[0] == b"IHDR"
    return struct.unpack(">II", header[1][:8])


@pytest.fixture(scope="module")
def sidecar() -> dict[str, Any]:
    return make_sidecar()


@pytest.fixture(scope="module")
def pngs(sidecar: dict[str, Any]) -> dict[str, bytes]:
    return chart_pngs(sidecar)


def test_both_charts_are_valid_pngs_of_a_fixed_size(pngs: dict[str, bytes]) -> None:
    assert set(pngs) == {DELIVERY_VS_COST, PAIRING_SCORES}
    for data in pngs.values():
        kinds = [kind for kind, _ in png_chunks(data)]
        assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND" and b"IDAT" in kinds
    assert image_size(pngs[DELIVERY_VS_COST]) == (800, 500)  # 8 x 5 in at 100 dpi


def test_both_charts_fit_the_ui_at_most_800_px_wide(pngs: dict[str, bytes]) -> None:
    widths = {name: image_size(data)[0] for name, data in pngs.items()}
    assert all(w <= 800 for w in widths.values()), widths


def test_same_input_gives_the_same_bytes(sidecar: dict[str, Any], pngs: dict[str, bytes]) -> None:
    assert chart_pngs(sidecar) == pngs


def test_no_software_or_time_metadata(pngs: dict[str, bytes]) -> None:
    for data in pngs.values():
        text_chunks = [
            payload for kind, payload in png_chunks(data) if kind in (b"tEXt", b"iTXt", b"zTXt", b"tIME")
        ]
        assert not any(p.startswith((b"Software", b"Creation Time")) for p in text_chunks)
        assert b"tIME" not in [kind for kind, _ in png_chunks(data)]


def test_charts_change_with_their_data(sidecar: dict[str, Any], pngs: dict[str, bytes]) -> None:
    changed = make_sidecar()
    changed["totals"][0]["costPerDeliveredUsd"] = 9.0
    other = chart_pngs(changed)
    assert other[DELIVERY_VS_COST] != pngs[DELIVERY_VS_COST]
    assert other[PAIRING_SCORES] == pngs[PAIRING_SCORES]


@pytest.mark.parametrize(
    "empty",
    [
        {},
        {"totals": [], "pairings": {"fleet": None, "imported": None}},
        {"totals": "not-a-list", "pairings": "nope"},
    ],
)
def test_empty_inputs_give_no_data_images(empty: dict[str, Any]) -> None:
    result = chart_pngs(empty)
    assert set(result) == {DELIVERY_VS_COST, PAIRING_SCORES}
    assert all(data.startswith(PNG_MAGIC) for data in result.values())


def test_models_without_cost_and_pools_below_the_floor_still_render() -> None:
    uncosted = with_keys({"model": "glm-5.3"}, make_rollup(3, 2), {"providers": []})
    below_floor = make_pool([make_group("a → b", 60.0, 1, hjudged=3)], [])
    result = chart_pngs(make_sidecar(totals=[uncosted], pairings={"fleet": below_floor, "imported": None}))
    assert all(data.startswith(PNG_MAGIC) for data in result.values())


def test_hostile_labels_do_not_break_rendering() -> None:
    # A '$' would start mathtext (and raise on bad TeX) if math parsing were on.
    hostile = "$\\frac{1}{$ \x1b[31m" + "w" * 500
    total = with_keys(
        {"model": hostile}, make_rollup(2, 2, costPerDeliveredUsd=1.0, costSamples=2), {"providers": []}
    )
    pool = make_pool(
        [make_group(hostile, 60.0, 1, tie=True, interval=[70.0, 50.0])], [make_group("x", 40.0, 1)]
    )
    result = chart_pngs(make_sidecar(totals=[total], pairings={"fleet": pool, "imported": pool}))
    assert all(data.startswith(PNG_MAGIC) for data in result.values())


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory, pngs: dict[str, bytes]) -> tuple[Path, dict[str, Path]]:
    """The charts as the report publishes them (``publish_report`` writes the bytes as they are)."""
    out = tmp_path_factory.mktemp("charts")
    paths = {name: out / name for name in pngs}
    for name, path in paths.items():
        path.write_bytes(pngs[name])
    return out, paths


def test_chart_markdown_embeds_each_png_as_a_data_uri(written: tuple[Path, dict[str, Path]]) -> None:
    _, paths = written
    pngs = {name: path.read_bytes() for name, path in paths.items()}
    text = chart_markdown(pngs)
    embedded = re.findall(r"!\[([^\]]*)\]\(data:image/png;base64,([A-Za-z0-9+/=]+)\)", text)
    assert [alt for alt, _ in embedded] == ["delivery-vs-cost", "pairing-scores"]
    for (_, encoded), data in zip(embedded, pngs.values(), strict=True):
        assert base64.b64decode(encoded) == data
    assert chart_markdown({}) == ""
