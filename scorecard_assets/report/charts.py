"""PNG charts of the report, rendered with matplotlib's Agg canvas (no pyplot, no global backend).

Two charts, both always produced (an explanatory "no data" image replaces an empty chart):

- ``delivery-vs-cost.png``: one point per model of ``totals`` (n > 0) with a cost figure:
  x = cost per delivered issue (USD), y = delivery rate (%), area proportional to ``n``, labelled
  with the model and n beside the point where there is room (``label_layout``), else numbered and
  named in the side note. Models without a cost figure are listed in the side note too.
- ``pairing-scores.png``: the ranked family (``famCombo``) and model (``modelCombo``) pairings of
  the fleet pool - and of the imported pool when there is one - as the evidence-weighted score
  (``scoreAdj``) with the 90 % interval as an error bar, one panel under the other; tied ranks are
  drawn hollow and prefixed ``≈``; a dashed line marks the pool (50). Both charts are at most
  800 px wide, so the UI shows them whole.

Reproducibility: fixed figure sizes and dpi, a fixed rc context (font, no math text, so a ``$`` in
a model id cannot start a formula) and ``metadata={"Software": None}``, so the same sidecar gives
byte-identical PNGs. Labels are untrusted and pass through ``sanitize.scrub`` and a length cap.
Pure module, no Dagster.
"""

from __future__ import annotations

import base64
import io
import math
import textwrap
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scorecard_assets.report.formatters import as_number, dict_rows
from scorecard_assets.report.label_layout import Box, place_labels
from scorecard_assets.report.markdown import DELIVERY_CHART, PAIRING_CHART
from scorecard_assets.sanitize import cap, scrub

if TYPE_CHECKING:  # matplotlib is imported when a chart is drawn, not when the code location loads
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

Row = dict[str, Any]

# the file names the report links (markdown.py places each beside its section)
DELIVERY_VS_COST = DELIVERY_CHART
PAIRING_SCORES = PAIRING_CHART
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

DPI = 100
# Sized to fit the Dagster UI's metadata pane and a GitHub page (at most 800 px wide at 100 dpi).
SCATTER_SIZE = (8.0, 5.0)
PAIRING_WIDTH = 8.0  # the panels are stacked, one per view and pool
PAIRING_PANEL_BASE = 1.1  # inches of title and axis per panel
PAIRING_BAR_HEIGHT = 0.3  # inches per ranked pairing
PAIRING_PANEL_SIZE = (PAIRING_WIDTH, 4.0)  # the "no data" image
LABEL_CAP = 48
LABEL_FONT_SIZE = 8.0
MAX_BARS = 20
MAX_SIDE_NOTE_NAMES = 14
SIDE_NOTE_WIDTH = 40  # characters per name line of the side note
DEFAULT_MIN_JUDGED = 10
POOL_SCORE = 50.0
_VIEWS = (("famCombo", "family pairings"), ("modelCombo", "model pairings"))

_RC: dict[str, Any] = {
    "font.family": "DejaVu Sans",
    "font.size": 9.0,
    "text.usetex": False,
    "text.parse_math": False,
    "axes.unicode_minus": True,
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "path.simplify": True,
}
_POINT_COLOUR = "#2b6cb0"
_TIE_COLOUR = "#dd6b20"


def chart_pngs(sidecar: dict) -> dict[str, bytes]:
    """The PNG bytes of every chart, keyed by file name (for ``publish_report``)."""
    import matplotlib as mpl

    with mpl.rc_context(_RC), warnings.catch_warnings():
        # A model id may hold characters the font lacks; matplotlib warns and draws a box.
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        return {
            DELIVERY_VS_COST: _png(delivery_vs_cost_figure(sidecar)),
            PAIRING_SCORES: _png(_pairing_scores_figure(sidecar)),
        }


def chart_data_uris(pngs: dict[str, bytes]) -> dict[str, str]:
    """Each PNG (name -> bytes) as a base64 data URI, for a report shown where its files are not."""
    return {
        name: f"data:image/png;base64,{base64.b64encode(data).decode('ascii')}" for name, data in pngs.items()
    }


def chart_markdown(pngs: dict[str, bytes]) -> str:
    """Markdown embedding each PNG (name -> bytes) as a base64 data URI (for ``MetadataValue.md``)."""
    blocks: list[str] = []
    for name, data in pngs.items():
        alt = cap(scrub(Path(name).stem), LABEL_CAP).replace("[", "(").replace("]", ")")
        blocks.append(f"![{alt}](data:image/png;base64,{base64.b64encode(data).decode('ascii')})")
    return "\n\n".join(blocks) + ("\n" if blocks else "")


# ---------------------------------------------------------------------------------------- helpers


def _png(fig: Figure) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    return buffer.getvalue()


def _label(value: object) -> str:
    return cap(scrub(value), LABEL_CAP)


def _window_text(sidecar: dict) -> str:
    start, end = sidecar.get("windowStart"), sidecar.get("windowEnd")
    return f"{_label(start)} → {_label(end)}" if start and end else "window not recorded"


def _no_data_figure(size: tuple[float, float], title: str, reason: str) -> Figure:
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, dpi=DPI)
    ax = fig.add_subplot()
    ax.set_axis_off()
    ax.set_title(title)
    ax.text(0.5, 0.5, reason, ha="center", va="center", fontsize=12, color="#555555", wrap=True)
    return fig


# ------------------------------------------------------------------------------ delivery vs cost


def delivery_vs_cost_figure(sidecar: dict) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    title = f"Delivery rate vs cost per delivered issue ({_window_text(sidecar)})"
    models = [r for r in dict_rows(sidecar.get("totals")) if (as_number(r.get("n")) or 0) > 0]
    plotted = [
        r
        for r in models
        if as_number(r.get("costPerDeliveredUsd")) is not None
        and as_number(r.get("deliveryRate")) is not None
    ]
    uncosted = [_label(r.get("model", "?")) for r in models if r not in plotted]
    if not models:
        return _no_data_figure(SCATTER_SIZE, title, "No model has an issue in this window.")
    fig = Figure(figsize=SCATTER_SIZE, dpi=DPI)
    FigureCanvasAgg(fig)  # a renderer to measure the labels with
    ax = fig.add_axes((0.09, 0.1, 0.6, 0.8))
    ax.set_title(title)
    ax.set_ylim(-5, 108)
    crowded: list[str] = []
    if plotted:
        crowded = _scatter_models(ax, plotted)
    else:
        ax.text(0.5, 0.5, "No model has a cost figure in this window.", ha="center", va="center")
        ax.set_xticks([])
    ax.set_xlabel("Cost per delivered issue (USD)")
    ax.set_ylabel("Delivery rate (%)")
    ax.grid(True, color="#dddddd", linewidth=0.6)
    # wrapped here, not by matplotlib: its wrapping measures text as math and fails on a "$" in a name
    fig.text(0.71, 0.88, _side_note(uncosted, crowded), va="top", ha="left", fontsize=8.5)
    return fig


def _scatter_models(ax: Axes, rows: list[Row]) -> list[str]:
    """Plot one point per model and label it beside its point where there is room; a point whose
    label cannot go anywhere free is numbered instead. Returns the numbered labels, in number order."""
    from matplotlib.font_manager import FontProperties

    costs = [float(as_number(r["costPerDeliveredUsd"]) or 0.0) for r in rows]
    rates = [100.0 * float(as_number(r["deliveryRate"]) or 0.0) for r in rows]
    counts = [int(as_number(r.get("n")) or 0) for r in rows]
    largest = max(counts) or 1
    sizes = [40.0 + 460.0 * c / largest for c in counts]
    ax.scatter(costs, rates, s=sizes, alpha=0.55, color=_POINT_COLOUR, edgecolors="#1a365d", linewidths=0.8)
    ax.set_xlim(left=0, right=max(costs) * 1.25 if max(costs) > 0 else 1.0)

    texts = [f"{_label(row.get('model', '?'))} (n={n})" for row, n in zip(rows, counts, strict=True)]
    order = sorted(range(len(rows)), key=lambda i: (-counts[i], texts[i]))  # the best-evidenced first
    renderer = ax.figure.canvas.get_renderer()  # type: ignore[union-attr]
    font = FontProperties(size=LABEL_FONT_SIZE)
    measured = [renderer.get_text_width_height_descent(texts[i], font, ismath=False) for i in order]
    frame = ax.get_window_extent(renderer)
    placements = place_labels(
        [tuple(ax.transData.transform((costs[i], rates[i]))) for i in order],
        [(w, h) for w, h, _ in measured],
        [math.sqrt(sizes[i]) / 2 * DPI / 72 for i in order],
        Box(frame.x0, frame.y0, frame.x1, frame.y1),
    )
    crowded: list[str] = []
    for i, placement in zip(order, placements, strict=True):
        if placement is None:
            crowded.append(texts[i])
            ax.annotate(
                str(len(crowded)),
                (costs[i], rates[i]),
                ha="center",
                va="center",
                fontsize=LABEL_FONT_SIZE - 1,
                fontweight="bold",
                color="#1a365d",
            )
            continue
        ax.annotate(
            texts[i],
            (costs[i], rates[i]),
            xytext=(placement.dx, placement.dy),
            textcoords="offset pixels",
            ha="left",
            va="bottom",
            fontsize=LABEL_FONT_SIZE,
            arrowprops={"arrowstyle": "-", "color": "#888888", "linewidth": 0.6} if placement.far else None,
        )
    return crowded


def _side_note(uncosted: list[str], crowded: list[str] | None = None) -> str:
    lines = ["Point area ∝ n (issues)."]
    if crowded:
        lines += ["", f"Numbered points ({len(crowded)}, no room for a label):"]
        lines += _capped([f"{k}  {name}" for k, name in enumerate(crowded, start=1)])
    lines += ["", f"No cost figure ({len(uncosted)}):" if uncosted else "No cost figure: none."]
    lines += _capped([f"• {name}" for name in uncosted])
    wrapped = [
        part
        for line in lines
        for part in (
            textwrap.wrap(line, SIDE_NOTE_WIDTH, subsequent_indent="   ")
            if line.startswith(("•", *"0123456789"))
            else [line]
        )
    ]
    return "\n".join(wrapped)


def _capped(lines: list[str]) -> list[str]:
    shown = lines[:MAX_SIDE_NOTE_NAMES]
    more = len(lines) - len(shown)
    return shown + ([f"(+{more} more)"] if more > 0 else [])


# -------------------------------------------------------------------------------- pairing scores


def _ranked_groups(pool: Row, view: str) -> list[Row]:
    """The view's groups at or above the judged-cycle floor with a score, in rank order."""
    meta = pool.get("meta") if isinstance(pool.get("meta"), dict) else {}
    floor = int(as_number(meta.get("minJudged")) or DEFAULT_MIN_JUDGED)
    views = pool.get("views") if isinstance(pool.get("views"), dict) else {}
    body = views.get(view) if isinstance(views.get(view), dict) else {}
    groups = [
        g
        for g in dict_rows(body.get("groups"))
        if (as_number(g.get("hjudged")) or 0) >= floor and as_number(g.get("scoreAdj")) is not None
    ]
    order = sorted(
        range(len(groups)),
        key=lambda i: (as_number(groups[i].get("rank")) is None, as_number(groups[i].get("rank")) or 0.0, i),
    )
    return [groups[i] for i in order]


def _pairing_panels(sidecar: dict) -> list[tuple[str, list[Row]]]:
    pairings = sidecar.get("pairings") if isinstance(sidecar.get("pairings"), dict) else {}
    panels: list[tuple[str, list[Row]]] = []
    for origin, origin_title in (("fleet", "Fleet"), ("imported", "Imported")):
        pool = pairings.get(origin)
        if not isinstance(pool, dict):
            continue
        row = [(f"{origin_title} — {title}", _ranked_groups(pool, view)) for view, title in _VIEWS]
        if origin == "fleet" or any(groups for _, groups in row):
            panels.extend(row)
    return panels


def _pairing_scores_figure(sidecar: dict) -> Figure:
    from matplotlib.figure import Figure

    title = f"Pairing scores with 90 % intervals ({_window_text(sidecar)})"
    panels = _pairing_panels(sidecar)
    if not any(groups for _, groups in panels):
        return _no_data_figure(
            PAIRING_PANEL_SIZE, title, "No pairing reaches the judged-cycle floor in this window."
        )
    heights = [PAIRING_PANEL_BASE + PAIRING_BAR_HEIGHT * max(1, min(len(g), MAX_BARS)) for _, g in panels]
    fig = Figure(figsize=(PAIRING_WIDTH, sum(heights) + 0.4), dpi=DPI, layout="constrained")
    fig.suptitle(title)
    axes = fig.subplots(len(panels), 1, squeeze=False, height_ratios=heights)
    for ax, (panel_title, groups) in zip(axes.flat, panels, strict=True):
        _draw_pairing_panel(ax, panel_title, groups)
    return fig


def _draw_pairing_panel(ax: Axes, title: str, groups: list[Row]) -> None:
    ax.set_title(title)
    ax.set_xlim(0, 100)
    ax.axvline(POOL_SCORE, color="#888888", linestyle="--", linewidth=1.0, label="pool = 50")
    if not groups:
        ax.text(50, 0.5, "no ranked pairing", ha="center", va="center", color="#555555")
        ax.set_yticks([])
        return
    shown = groups[:MAX_BARS]
    for position, group in enumerate(shown):
        _draw_pairing(ax, position, group)
    ax.set_yticks(range(len(shown)), [_pairing_label(g) for g in shown])
    ax.set_ylim(len(shown) - 0.5, -0.5)
    ax.set_xlabel("Evidence-weighted score (0–100; the pool of all pairings is 50)")
    ax.grid(True, axis="x", color="#eeeeee", linewidth=0.6)
    if len(groups) > len(shown):
        ax.text(99, len(shown) - 0.6, f"+{len(groups) - len(shown)} more not shown", ha="right", fontsize=7.5)
    handles = [
        ax.scatter([], [], color=_POINT_COLOUR, label="distinct rank"),
        ax.scatter([], [], facecolors="white", edgecolors=_TIE_COLOUR, label="≈ tied with a neighbour"),
    ]
    ax.legend(handles=[*handles, ax.get_lines()[0]], loc="lower right", fontsize=7.5)


def _draw_pairing(ax: Axes, position: int, group: Row) -> None:
    score = float(as_number(group.get("scoreAdj")) or 0.0)
    tied = group.get("tie") is True
    colour = _TIE_COLOUR if tied else _POINT_COLOUR
    low, high = _interval(group.get("interval"))
    if low is not None and high is not None:
        errors = [[max(score - low, 0.0)], [max(high - score, 0.0)]]
        ax.errorbar([score], [position], xerr=errors, fmt="none", ecolor=colour, elinewidth=1.4, capsize=3)
    face = "white" if tied else colour
    ax.scatter([score], [position], s=36, facecolors=face, edgecolors=colour, linewidths=1.4, zorder=3)


def _interval(value: object) -> tuple[float | None, float | None]:
    if isinstance(value, list | tuple) and len(value) == 2:
        return as_number(value[0]), as_number(value[1])
    return None, None


def _pairing_label(group: Row) -> str:
    rank = as_number(group.get("rank"))
    prefix = "≈ " if group.get("tie") is True else ""
    rank_text = f"{int(rank)}. " if rank is not None else ""
    return f"{prefix}{rank_text}{_label(group.get('label', '?'))}"
