"""Every constant of the Pragmatikos scoring method (docs/pairings.md "The scoring method"), in one place.

The method: ten axes grouped in six weighted tiers, each axis placed on a 0..1 scale by its log2
distance from the view's pool (log-odds for the three rates), evidence weighting with ``EVIDENCE_K``
pseudo-cycles, groups below ``MIN_JUDGED`` judged cycles left out of both ranking and pool.
"""

from __future__ import annotations

import re
from typing import Final, Literal

SCHEMA: Final = 3
MIN_JUDGED: Final = 10
EVIDENCE_K: Final = 10
SPAN: Final = 2

AxisKind = Literal["odds", "ratio", "err"]

# Axis order is the order of every axis dict in pool.json (raw, adj, ev, pool).
AXES: Final[tuple[str, ...]] = (
    "shipr",
    "oneshot",
    "ttss",
    "hps",
    "dpss",
    "eerrp",
    "abortp",
    "verp",
    "ept",
    "lat",
)

HIGHER_IS_BETTER: Final[dict[str, bool]] = {
    "shipr": True,
    "oneshot": True,
    "ttss": False,
    "hps": False,
    "dpss": False,
    "eerrp": False,
    "abortp": False,
    "verp": True,
    "ept": True,
    "lat": False,
}

AXIS_KIND: Final[dict[str, AxisKind]] = {
    "shipr": "odds",
    "oneshot": "odds",
    "ttss": "ratio",
    "hps": "ratio",
    "dpss": "ratio",
    "eerrp": "err",
    "abortp": "err",
    "verp": "odds",
    "ept": "ratio",
    "lat": "ratio",
}

# The accumulator whose count is the axis' evidence n (pool.json ``ev``).
EVIDENCE_COUNT: Final[dict[str, str]] = {
    "shipr": "hshipJudged",
    "oneshot": "hshipped",
    "ttss": "hshipped",
    "hps": "hshipped",
    "dpss": "hshippedCosted",
    "eerrp": "hjudged",
    "abortp": "hjudged",
    "verp": "hjudged",
    "ept": "hjudged",
    "lat": "hjudged",
}

# (tier name, weight, axes); order is the order of ``tiers`` in pool.json.
TIERS: Final[tuple[tuple[str, int, tuple[str, ...]], ...]] = (
    ("Outcome", 30, ("shipr", "oneshot")),
    ("Cost", 20, ("ttss", "hps", "dpss")),
    ("Precision", 15, ("eerrp", "abortp")),
    ("Discipline", 15, ("verp",)),
    ("Efficiency", 10, ("ept",)),
    ("Latency", 10, ("lat",)),
)
TIER_NAMES: Final[tuple[str, ...]] = tuple(name for name, _, _ in TIERS)
WEIGHTS_LABEL: Final = "/".join(str(w) for _, w, _ in TIERS)

# Position given to a tier that has no usable axis (it is then listed in ``imputed``).
IMPUTED_TIER_POSITION: Final = 0.5

# Views in pool.json order; the first three group session-level (prod) rows, the last three combo rows.
VIEWS: Final[tuple[str, ...]] = (
    "model",
    "family",
    "modelEffort",
    "modelCombo",
    "famCombo",
    "modelEffortCombo",
)
COMBO_VIEWS: Final[frozenset[str]] = frozenset({"modelCombo", "famCombo", "modelEffortCombo"})

# The separator inside combo keys and the one shown in their labels.
COMBO_KEY_ARROW: Final = "\u2192"
COMBO_LABEL_ARROW: Final = " \u2192 "

FAMILY_RE: Final = re.compile(
    r"^(claude-(?:opus|sonnet|haiku|fable)|grok|gpt|gemini|minimax|deepseek|muse-spark|big-pickle)"
)

FAMILY_HUES: Final[dict[str, int]] = {
    "claude-opus": 55,
    "claude-sonnet": 160,
    "claude-haiku": 120,
    "claude-fable": 320,
    "grok": 30,
    "gpt": 240,
    "gemini": 200,
    "minimax": 280,
    "deepseek": 90,
    "muse-spark": 350,
}

NO_EFFORT: Final = "(none)"

# Ship-judged states of a cycle (pooled field ``tshipe``).
SHIP_JUDGED: Final = 0
SHIP_PENDING: Final = 1
SHIP_UNSHIPPABLE: Final = 2

# Days a run has to ship before an unshipped run counts as judged (ocInsights SHIP_DAYS).
SHIP_DAYS: Final = 7

# The 25 pooled columns, in the order the site's pool generator selects them (docs/pairings.md "Cycles").
POOLED_FIELDS: Final[tuple[str, ...]] = (
    "model",
    "prov",
    "variant",
    "role",
    "pm",
    "pp",
    "pv",
    "bm",
    "bp",
    "bv",
    "harness",
    "hversion",
    "u",
    "a",
    "tedits",
    "tpaths",
    "teerr",
    "tcost",
    "tship",
    "tshipe",
    "thrs",
    "tver",
    "tabort",
    "latmed",
    "day",
)

# Bootstrap defaults (our addition, docs/pairings.md "Bootstrap intervals and ties": 90 %, ties marked).
BOOTSTRAP_RESAMPLES: Final = 400
BOOTSTRAP_MIN_RESAMPLES: Final = 200
BOOTSTRAP_SEED: Final = 20260907
BOOTSTRAP_LEVEL: Final = 0.90
# Upper bound on resample-count matrix cells held at once (resamples x cycles of one group).
BOOTSTRAP_CELLS_PER_CHUNK: Final = 2_000_000

# verify: largest absolute difference accepted between a stored and a recomputed value.
VERIFY_TOLERANCE: Final = 1e-9
