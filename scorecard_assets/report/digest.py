"""The weekly 6-line digest (docs/report.md), for a chat message or ``digest.txt``.

Contract: :func:`render_digest` returns exactly six single-line strings, whatever the input:

1. ``📊 Model scorecard (<windowStart> → <windowEnd>)``
2. ``💰 Cheapest/delivered: `` per repo, the ``repoTotals`` row (n > 0) with the lowest
   ``costPerDeliveredUsd`` as ``<repo short name> <model> ($X.XXX, n=K)``, joined by `` · ``;
   ``no data`` when no repo has one. Ties keep the earlier row.
3. ``🎯 Best delivery rate: `` the same with the highest ``deliveryRate`` -> ``(NN%, n=K)``.
4. ``⚡ Fastest: `` the same with the lowest ``medianApiMinutes`` -> ``(X.X API-min, n=K)``.
5. ``📉 Delivery rate drop >10pt: `` up to three entries of ``drops`` (worst first) as
   ``<model> NN% → NN%`` plus `` (+k more)``, or ``none``.
6. ``🔗 <report_link>`` plus `` — ⚠️ <k> data warning(s)`` when the sidecar has k > 0 warnings (the
   lines of the report's Data warnings section).

Ours, after the six: when the sidecar carries the decisions' change alerts (``decisions.alerts``), a
seventh line ``🔔 Change alerts: `` with up to three alerts as ``<kind> <name> <metric> <before> →
<after> (week of <change week>)`` plus `` (+k more)``, or ``none (<t> series tested)``
(docs/decisions.md "Change alerts"). A sidecar without that block keeps the reference's six lines.

``K`` is the row's ``n`` (issues). Repos appear in ``repoTotals`` order (the scoring code sorts it
by repo). Names pass through ``sanitize.safe_plain`` (docs/reliability.md "Sanitiser"): control and
invisible characters (line breaks included) are replaced, so no name can add a line; links, mentions
and issue references are defanged; `](` is split (no live links); no Markdown escapes, since the
digest is plain text wherever it is shown (``digest.txt``, a chat message, the UI's code block).
Pure module, no Dagster.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scorecard_assets.report.formatters import (
    as_number,
    dict_rows,
    fmt_pct,
    fmt_usd,
    js_number_str,
    js_to_fixed,
)
from scorecard_assets.report.markdown import warning_count_text
from scorecard_assets.sanitize import safe_plain, scrub

Row = dict[str, Any]
SEPARATOR = " · "
MAX_DROPS_NAMED = 3


def render_digest(sidecar: dict, *, report_link: str) -> list[str]:
    """The digest lines for ``sidecar`` (see the module docstring), clean plain text."""
    name = _plain
    repo_rows = dict_rows(sidecar.get("repoTotals"))
    window = f"{name(sidecar.get('windowStart', '?'))} → {name(sidecar.get('windowEnd', '?'))}"
    decisions = sidecar.get("decisions") if isinstance(sidecar.get("decisions"), dict) else {}
    alerts = decisions.get("alerts") if isinstance(decisions.get("alerts"), dict) else None
    return [
        f"📊 Model scorecard ({window})",
        "💰 Cheapest/delivered: "
        + _winners_text(repo_rows, "costPerDeliveredUsd", lowest=True, show=fmt_usd, name=name),
        "🎯 Best delivery rate: "
        + _winners_text(repo_rows, "deliveryRate", lowest=False, show=fmt_pct, name=name),
        "⚡ Fastest: "
        + _winners_text(
            repo_rows,
            "medianApiMinutes",
            lowest=True,
            show=lambda v: f"{js_to_fixed(v, 1)} API-min",
            name=name,
        ),
        "📉 Delivery rate drop >10pt: " + _drops_text(sidecar.get("drops"), name),
        _link_line(report_link, sidecar.get("warnings")),
    ] + ([_alerts_line(alerts, name)] if alerts is not None else [])


def _alerts_line(alerts: Row, name: Callable[[object], str]) -> str:
    """The seventh line (module doc): the change alerts of the decisions block."""
    found = dict_rows(alerts.get("alerts"))
    if not found:
        tested = sum(1 for s in dict_rows(alerts.get("series")) if s.get("tested") is True)
        return f"🔔 Change alerts: none ({tested} series tested)"
    named = []
    for a in found[:MAX_DROPS_NAMED]:
        rate = a.get("metric") == "deliveryRate"
        show = fmt_pct if rate else fmt_usd
        what = "delivery" if rate else "cost/delivered"
        named.append(
            f"{name(a.get('kind', '?'))} {name(a.get('name', '?'))} {what} {show(a.get('before'))} → "
            f"{show(a.get('after'))} (week of {name(a.get('changeWeek', '?'))})"
        )
    more = len(found) - MAX_DROPS_NAMED
    return "🔔 Change alerts: " + SEPARATOR.join(named) + (f" (+{more} more)" if more > 0 else "")


def _plain(value: object) -> str:
    """A name in the digest, defanged for plain text (``sanitize.safe_plain``: no live link, mention
    or issue reference; no HTML entities, and names such as ``claude-opus-5[1m]`` keep their
    brackets)."""
    return safe_plain(value)


def _short_repo(repo: object) -> str:
    text = repo if isinstance(repo, str) else ""
    return text.rsplit("/", 1)[-1] or "?"


def repo_winners(rows: list[Row], metric: str, *, lowest: bool) -> list[Row]:
    """Per repo (first-appearance order), the row with n > 0 and the best non-null ``metric``.

    Strict comparison, so of equal values the earlier row wins. Repos without any measurable row
    are left out (the line then lists the others, or says ``no data``).
    """
    best: dict[object, Row] = {}
    for row in rows:
        n, value = as_number(row.get("n")), as_number(row.get(metric))
        if not n or n <= 0 or value is None:
            continue
        repo = row.get("repo")
        repo_key = repo if isinstance(repo, str) else repr(repo)
        current = best.get(repo_key)
        if current is None or _better(value, as_number(current.get(metric)), lowest):
            best[repo_key] = row
    return list(best.values())


def _better(value: float, incumbent: float | None, lowest: bool) -> bool:
    if incumbent is None:
        return True
    return value < incumbent if lowest else value > incumbent


def _winners_text(
    rows: list[Row],
    metric: str,
    *,
    lowest: bool,
    show: Callable[[float], str],
    name: Callable[[object], str] = _plain,
) -> str:
    winners = repo_winners(rows, metric, lowest=lowest)
    if not winners:
        return "no data"
    parts = []
    for row in winners:
        value = as_number(row.get(metric))
        shown = show(value) if value is not None else "N/A"
        parts.append(
            f"{name(_short_repo(row.get('repo')))} {name(row.get('model', '?'))} "
            f"({shown}, n={js_number_str(row.get('n'))})"
        )
    return SEPARATOR.join(parts)


def _drop_size(entry: Row) -> float:
    current, previous = as_number(entry.get("currentRate")), as_number(entry.get("previousRate"))
    return current - previous if current is not None and previous is not None else float("inf")


def _drops_text(drops: object, name: Callable[[object], str] = _plain) -> str:
    entries = sorted(dict_rows(drops), key=_drop_size)  # stable: worst first, unmeasurable last
    if not entries:
        return "none"
    named = [
        f"{name(e.get('model', '?'))} {fmt_pct(e.get('previousRate'))} → {fmt_pct(e.get('currentRate'))}"
        for e in entries[:MAX_DROPS_NAMED]
    ]
    more = len(entries) - MAX_DROPS_NAMED
    return SEPARATOR.join(named) + (f" (+{more} more)" if more > 0 else "")


def _link_line(report_link: str, warnings: object) -> str:
    line = f"🔗 {scrub(report_link)}"
    count = len(warnings) if isinstance(warnings, list) else 0
    return line + (f" — ⚠️ {warning_count_text(count)}" if count > 0 else "")
