"""Model-name normalisation (docs/join.md "Model names", and the reference's canonicalModel test cases)."""

from __future__ import annotations

import math

import pytest

from scorecard_assets.config import DEFAULT_ALIASES, DEFAULT_ROUTING_PREFIXES, ModelsConfig
from scorecard_assets.transform import model_names
from scorecard_assets.transform.model_names import (
    UNKNOWN_MODEL,
    ModelNamer,
    canonical_model,
    provider_of,
)


def canon(raw: object) -> str:
    return canonical_model(raw, aliases=DEFAULT_ALIASES, prefixes=DEFAULT_ROUTING_PREFIXES)


def prov(raw: object) -> str | None:
    return provider_of(raw, prefixes=DEFAULT_ROUTING_PREFIXES)


# Every spelling the reference's normalisation documents: raw model= -> (canonical, provider; None = direct).
SECTION_12_TABLE = [
    ("glm-5.3", "glm-5.3", None),
    ("llmgateway/glm-5.3", "glm-5.3", "llmgateway"),
    ("zai-coding-plan/glm-5.3", "glm-5.3", "zai-coding-plan"),
    ("openrouter/~z-ai/glm-latest", "glm-5.3", "openrouter/z-ai"),
    ("~z-ai/GLM-5.3", "glm-5.3", "z-ai"),
    ("z-ai/glm-latest", "glm-5.3", "z-ai"),
    ("llmgateway/glm-latest", "glm-5.3", "llmgateway"),
    ("openrouter-kimi-latest", "kimi-latest", "openrouter"),
    ("moonshotai/kimi-latest", "kimi-latest", "moonshotai"),
    ("llmgateway/openrouter-kimi-latest", "kimi-latest", "llmgateway/openrouter"),
    ("openai/gpt-5.6-luna", "gpt-5.6-luna", "openai"),
    ("zai-coding-plan/glm-5.3-flash", "glm-5.3-flash", "zai-coding-plan"),
    ("claude-opus-5[1m]", "claude-opus-5[1m]", None),
    ("openrouter", "openrouter", None),
    ("openrouter/", "openrouter/", None),
    ("acme/glm-5.3", "acme/glm-5.3", None),
    ("constructor", "constructor", None),
]


@pytest.mark.parametrize(("raw", "canonical", "provider"), SECTION_12_TABLE)
def test_section_12_table(raw: str, canonical: str, provider: str | None) -> None:
    assert canon(raw) == canonical
    assert prov(raw) == provider


@pytest.mark.parametrize(("raw", "canonical", "provider"), SECTION_12_TABLE)
def test_model_namer_agrees_with_the_functions(raw: str, canonical: str, provider: str | None) -> None:
    namer = ModelNamer(DEFAULT_ALIASES, DEFAULT_ROUTING_PREFIXES)
    assert namer.names(raw) == (canonical, provider)


@pytest.mark.parametrize(
    "raw",
    [
        "claude-haiku-4-5-20251001",  # date suffix kept
        "alibaba-token-plan/deepseek-v4-flash",  # alibaba only matches alibaba/ when a / is present
        "sonnet",
        "opus",
        "fable",
        "claude-opus-5[1m]",
    ],
)
def test_names_that_are_not_normalised(raw: str) -> None:
    assert canon(raw) == raw
    assert prov(raw) is None


@pytest.mark.parametrize(
    "raw", ["constructor", "__proto__", "toString", "__class__", "get", "keys", "__init__"]
)
def test_alias_lookup_never_reaches_inherited_attributes(raw: str) -> None:
    assert canon(raw) == raw.lower()
    assert canon(f"llmgateway/{raw}") == raw.lower()


@pytest.mark.parametrize(
    "raw", ["llmgateway/unknown", "~~~Unknown", "Unknown", "<UNKNOWN>", "llmgateway/<unknown>"]
)
def test_no_input_can_forge_the_unknown_bucket(raw: str) -> None:
    assert canon(raw) != UNKNOWN_MODEL


def test_unknown_spellings_fold_to_plain_unknown() -> None:
    assert canon("llmgateway/unknown") == "unknown"
    assert canon("~~~Unknown") == "unknown"


@pytest.mark.parametrize("raw", [None, "", "   ", float("nan"), 42])
def test_absent_model_is_the_unknown_bucket(raw: object) -> None:
    assert canon(raw) == UNKNOWN_MODEL
    assert prov(raw) is None


def test_only_tildes_fall_back_to_the_lowered_input() -> None:
    # The peeled rest is empty, so the lowered raw value is kept (not <unknown>).
    assert canon("~~~") == "~~~"


def test_case_and_surrounding_space_are_ignored() -> None:
    assert canon("  LLMGateway/GLM-5.3  ") == "glm-5.3"
    assert prov("  LLMGateway/GLM-5.3  ") == "llmgateway"


def test_at_most_four_prefixes_are_peeled() -> None:
    raw = "openrouter/llmgateway/openai/google/anthropic/claude-opus-5"
    assert canon(raw) == "anthropic/claude-opus-5"
    assert prov(raw) == "openrouter/llmgateway/openai/google"


def test_dash_separator_is_not_tried_when_a_slash_is_present() -> None:
    # 'openrouter-' would match, but the value holds a '/', so only 'prefix/' is tried.
    assert canon("openrouter-x/kimi-latest") == "openrouter-x/kimi-latest"
    assert prov("openrouter-x/kimi-latest") is None


def test_tilde_is_dropped_again_after_each_peel() -> None:
    assert canon("llmgateway/~~openrouter/~glm-latest") == "glm-5.3"
    assert prov("llmgateway/~~openrouter/~glm-latest") == "llmgateway/openrouter"


def test_aliases_apply_after_peeling_only() -> None:
    aliases = {"glm-latest": "glm-5.3"}
    # a routed spelling reaches the alias; a prefix that is not configured does not
    assert canonical_model("zai/glm-latest", aliases=aliases, prefixes=["zai"]) == "glm-5.3"
    assert canonical_model("acme/glm-latest", aliases=aliases, prefixes=["zai"]) == "acme/glm-latest"


def test_default_prefixes_respect_the_ordering_invariant() -> None:
    """No prefix is listed after a prefix of itself (else the shorter one would always win)."""
    for i, later in enumerate(DEFAULT_ROUTING_PREFIXES):
        for earlier in DEFAULT_ROUTING_PREFIXES[:i]:
            assert not (later != earlier and later.startswith(earlier)), (earlier, later)


def test_the_ordering_invariant_matters() -> None:
    raw = "zai-coding-plan-glm-5.3"
    assert canon(raw) == "glm-5.3"
    assert prov(raw) == "zai-coding-plan"
    # With the shorter prefix first, 'zai-' would be peeled and the bucket would be wrong.
    assert canonical_model(raw, aliases={}, prefixes=["zai", "zai-coding-plan"]) == "coding-plan-glm-5.3"


def test_namer_from_config_uses_declared_aliases_and_prefixes() -> None:
    models = ModelsConfig(aliases={"Kimi-Latest": "kimi-k3"}, routing_prefixes=["qwen", "llmgateway"])
    namer = ModelNamer.from_config(models)
    assert namer.names("llmgateway/kimi-latest") == ("kimi-k3", "llmgateway")
    assert namer.names("qwen/qwen3-coder") == ("qwen3-coder", "qwen")
    # the default alias is replaced, not merged, when aliases are declared
    assert namer.canonical("glm-latest") == "glm-latest"


def test_namer_normalises_each_raw_string_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = model_names.split_model

    def counting(raw: str, prefixes: object) -> tuple[str, str, list[str]]:
        calls.append(raw)
        return real(raw, prefixes)  # type: ignore[arg-type]

    monkeypatch.setattr(model_names, "split_model", counting)
    namer = ModelNamer(DEFAULT_ALIASES, DEFAULT_ROUTING_PREFIXES)
    for _ in range(50):
        assert namer.canonical("openrouter/~z-ai/glm-latest") == "glm-5.3"
        assert namer.provider("openrouter/~z-ai/glm-latest") == "openrouter/z-ai"
        assert namer.canonical("sonnet") == "sonnet"
    assert calls == ["openrouter/~z-ai/glm-latest", "sonnet"]


def test_namer_absent_values_are_unknown_without_being_normalised(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    monkeypatch.setattr(model_names, "split_model", lambda raw, prefixes: calls.append(raw))
    namer = ModelNamer(DEFAULT_ALIASES, DEFAULT_ROUTING_PREFIXES)
    assert namer.names(None) == (UNKNOWN_MODEL, None)
    assert namer.names(math.nan) == (UNKNOWN_MODEL, None)
    assert calls == []


def test_a_literal_unknown_value_becomes_plain_unknown() -> None:
    assert canon("<unknown>") == "unknown"
    assert canon("llmgateway/<UNKNOWN>") == "unknown"
    assert ModelNamer(DEFAULT_ALIASES, DEFAULT_ROUTING_PREFIXES).canonical("<unknown>") == "unknown"
    # an alias pointing at the literal cannot forge it either
    assert canonical_model("x", aliases={"x": "<unknown>"}, prefixes=[]) == "unknown"
