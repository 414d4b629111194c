"""The configuration's shared pieces: the error type and the price table entry.

Kept apart from ``config.py`` so that the ``sessions:`` section's model (``sessions/config.py``),
which ``config.py`` imports, can use them without an import cycle. ``config.py`` re-exports both.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ConfigError(ValueError):
    """The configuration file is missing, unreadable or invalid; the message says where and why."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


PRICE_MAX = 10_000.0  # USD per million tokens: far above any real price, and finite


class PriceConfig(_Strict):
    """USD per million tokens, used only to estimate cost where a log has tokens but no cost."""

    input: float = Field(ge=0, le=PRICE_MAX)
    output: float = Field(ge=0, le=PRICE_MAX)
    cached_input: float | None = Field(default=None, ge=0, le=PRICE_MAX)
    cache_write: float | None = Field(default=None, ge=0, le=PRICE_MAX)
