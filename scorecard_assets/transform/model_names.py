"""Model-name normalisation: one canonical name per model, the gateway chain kept apart.

A trail's ``model=`` value spells the same model in many ways (``glm-5.3``, ``llmgateway/glm-5.3``,
``openrouter/~z-ai/glm-latest``). ``canonical_model`` folds those spellings into one bucket key and
``provider_of`` returns the routing prefixes that were peeled off (the gateway chain). The rules
(docs/join.md "Model names") are the reference's:

1. lower-case and strip the raw value; drop leading ``~`` (opencode's alias marker);
2. peel at most ``MAX_PEELS`` routing prefixes, trying them in configured order. When the value
   holds a ``/`` only ``prefix/`` is tried, otherwise ``prefix/`` then ``prefix-``; a prefix is
   peeled only when something follows it; leading ``~`` is dropped again after each peel;
3. the rest is looked up in the alias table (own keys of a plain dict only, so names such as
   ``constructor`` or ``__proto__`` map to themselves); a rest that is empty falls back to the
   lowered input.

An absent model (``None``, NaN, blank) is ``UNKNOWN_MODEL``. No present value can forge that key:
a value that would canonicalise to the literal ``<unknown>`` becomes ``unknown``, like ``Unknown``
and ``llmgateway/unknown`` do.

Pure module: no Dagster.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from scorecard_assets.config import ModelsConfig

UNKNOWN_MODEL = "<unknown>"
FORGED_UNKNOWN = "unknown"  # what a present value spelling "<unknown>" becomes
MAX_PEELS = 4
_ALIAS_MARKER = "~"


def is_absent(raw: object) -> bool:
    """True for values that mean "no model recorded": None, NaN/NA, non-strings and blank text."""
    if raw is None:
        return True
    if isinstance(raw, float) and math.isnan(raw):
        return True
    if not isinstance(raw, str):
        return True
    return raw.strip() == ""


def _separators(value: str) -> tuple[str, ...]:
    return ("/",) if "/" in value else ("/", "-")


def _peel_one(value: str, prefixes: Iterable[str]) -> tuple[str, str] | None:
    """(prefix, rest) for the first prefix that routes ``value``, or None."""
    seps = _separators(value)
    for prefix in prefixes:
        for sep in seps:
            head = prefix + sep
            if value.startswith(head) and len(value) > len(head):
                return prefix, value[len(head) :].lstrip(_ALIAS_MARKER)
    return None


def split_model(raw: str, prefixes: Iterable[str]) -> tuple[str, str, list[str]]:
    """(lowered input, peeled rest, gateway chain) of a present model string."""
    lowered = raw.strip().lower()
    value = lowered.lstrip(_ALIAS_MARKER)
    chain: list[str] = []
    ordered = tuple(prefixes)
    for _ in range(MAX_PEELS):
        peeled = _peel_one(value, ordered)
        if peeled is None:
            break
        chain.append(peeled[0])
        value = peeled[1]
    return lowered, value, chain


def _lookup(lowered: str, value: str, aliases: dict[str, str]) -> str:
    if value == "":
        return lowered
    return aliases.get(value, value)  # own keys of a plain dict only


def _unforged(canonical: str) -> str:
    """Keep ``UNKNOWN_MODEL`` for absent models only."""
    return FORGED_UNKNOWN if canonical == UNKNOWN_MODEL else canonical


def canonical_model(raw: object, *, aliases: Mapping[str, str], prefixes: Iterable[str]) -> str:
    """The bucket key of a raw ``model=`` value (``UNKNOWN_MODEL`` when absent).

    ``aliases`` maps lower-case peeled names to their pinned name; only its own keys are consulted.
    ``prefixes`` are lower-case routing prefixes, longest first (the config guarantees both).
    """
    if is_absent(raw):
        return UNKNOWN_MODEL
    assert isinstance(raw, str)
    lowered, value, _ = split_model(raw, prefixes)
    table = dict(aliases)  # a plain dict: membership never reaches inherited attributes
    return _unforged(_lookup(lowered, value, table))


def provider_of(raw: object, *, prefixes: Iterable[str]) -> str | None:
    """The gateway chain peeled from ``raw`` joined by ``/`` (``None`` = direct or absent)."""
    if is_absent(raw):
        return None
    assert isinstance(raw, str)
    _, _, chain = split_model(raw, prefixes)
    return "/".join(chain) if chain else None


class ModelNamer:
    """Canonical names and providers with memoisation: each distinct raw string is normalised once.

    Built from ``cfg.models`` (``ModelNamer.from_config``) or explicit aliases and prefixes. The
    cache is unbounded but keyed by distinct raw strings, whose number is bounded by the input.
    """

    def __init__(self, aliases: Mapping[str, str], prefixes: Iterable[str]) -> None:
        self._aliases: dict[str, str] = {str(k): str(v) for k, v in aliases.items()}
        self._prefixes: tuple[str, ...] = tuple(prefixes)
        self._cache: dict[str, tuple[str, str | None]] = {}

    @classmethod
    def from_config(cls, models: ModelsConfig) -> ModelNamer:
        return cls(models.aliases, models.routing_prefixes)

    @property
    def aliases(self) -> dict[str, str]:
        return dict(self._aliases)

    @property
    def prefixes(self) -> tuple[str, ...]:
        return self._prefixes

    def names(self, raw: object) -> tuple[str, str | None]:
        """(canonical model, provider) of ``raw``; ``(UNKNOWN_MODEL, None)`` when absent."""
        if is_absent(raw):
            return UNKNOWN_MODEL, None
        assert isinstance(raw, str)
        hit = self._cache.get(raw)
        if hit is None:
            lowered, value, chain = split_model(raw, self._prefixes)
            canonical = _unforged(_lookup(lowered, value, self._aliases))
            hit = (canonical, "/".join(chain) if chain else None)
            self._cache[raw] = hit
        return hit

    def canonical(self, raw: object) -> str:
        return self.names(raw)[0]

    def provider(self, raw: object) -> str | None:
        return self.names(raw)[1]
