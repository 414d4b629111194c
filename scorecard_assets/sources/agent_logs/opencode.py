"""The opencode parser (``opencode run --format json``)."""

from __future__ import annotations

import math
from typing import Any

from scorecard_assets.sources.agent_logs.parsing import (
    COST_MAX,
    EPOCH_MS_MAX,
    EPOCH_MS_MIN,
    STEP_LATENCY_MAX_MS,
    TOKEN_MAX,
    FormatParser,
    Problems,
    Sums,
    ToolCall,
    remember_call,
    tally_tools,
    text_of,
    upper_median,
    valid_number,
)
from scorecard_assets.sources.agent_logs.slices import SliceResult

# --------------------------------------------------------------------------------------------------
# opencode --format json


# Events read but carrying nothing we count (a line of an unknown kind is ignored by design).
_OTHER_EVENTS = frozenset({"text", "reasoning", "error"})


class OpenCodeParser(FormatParser):
    """opencode events: usage and cost per ``step_finish``, tools per ``tool_use``, step latencies."""

    def __init__(self, data: bytes, view: memoryview, problems: Problems) -> None:
        super().__init__(data, view, problems)
        self.sums = Sums(problems)
        self.steps = 0
        self.latencies: list[float] = []
        self.step_started: float | None = None
        self.last_ts: float | None = None
        self.calls: dict[object, ToolCall] = {}

    def _timestamp(self, line: int, raw: object) -> float | None:
        if raw is None:
            return None
        value = valid_number(raw, EPOCH_MS_MAX)
        if value is None or value < EPOCH_MS_MIN:
            self.problems.bad_value(line, "timestamp", raw)
            return None
        return value

    def feed(self, start: int, end: int, line: int, kind: bytes | None) -> None:
        record = self.decode_object(start, end, line)
        if record is None:
            return
        ts = self._timestamp(line, record.get("timestamp"))
        if ts is not None:
            self.last_ts = ts if self.last_ts is None else max(self.last_ts, ts)
        event = record.get("type")
        part = self.field(record, "part", dict, line) or {}
        if event == "step_start":
            self.step_started = ts
        elif event == "step_finish":
            self._step_finish(part, line, ts)
        elif event == "tool_use":
            self._tool_use(part, line)
        elif event not in _OTHER_EVENTS:
            self.problems.ignored(line)

    def _step_finish(self, part: dict[str, Any], line: int, ts: float | None) -> None:
        self.steps += 1
        sums = self.sums
        tokens = part.get("tokens")
        if isinstance(tokens, dict):
            sums.add("input_tokens", sums.take(line, "tokens.input", tokens.get("input"), TOKEN_MAX))
            sums.add("output_tokens", sums.take(line, "tokens.output", tokens.get("output"), TOKEN_MAX))
            cache = tokens.get("cache")
            if isinstance(cache, dict):
                write = sums.take(line, "tokens.cache.write", cache.get("write"), TOKEN_MAX)
                read = sums.take(line, "tokens.cache.read", cache.get("read"), TOKEN_MAX)
                sums.add("cache_creation_tokens", write)
                sums.add("cache_read_tokens", read)
        sums.add("cost_usd", sums.take(line, "cost", part.get("cost"), COST_MAX))
        started = self.step_started
        if started is not None and ts is not None and 0 < ts - started <= STEP_LATENCY_MAX_MS:
            self.latencies.append((ts - started) / 1000.0)
        self.step_started = None

    def _tool_use(self, part: dict[str, Any], line: int) -> None:
        state = self.field(part, "part.state", dict, line) or {}
        tool = self.field(part, "part.tool", str, line)
        status = self.field(state, "part.state.status", str, line)
        tool_input = state.get("input")
        command = tool_input.get("command") if isinstance(tool_input, dict) else None
        error = state.get("error")
        error_text = error if isinstance(error, str) else text_of(state.get("output"))
        call_id = self.field(part, "part.callID", str, line) or self.field(part, "part.id", str, line)
        key: object = call_id if call_id is not None else ("line", line)
        remember_call(self.calls, key, ToolCall(tool, status, command, error_text, line))

    def finish(self, out: SliceResult) -> None:
        self.sums.fill_tokens(out)
        out.cost_usd = self.sums.get("cost_usd")
        out.cost_kind = None if math.isnan(out.cost_usd) else "step_finish"
        out.assistant_turns = self.steps
        out.latency_median_s = upper_median(self.latencies)
        out.step_latencies_ms = [round(s * 1000.0) for s in self.latencies]
        out.slice_end_ns = None if self.last_ts is None else int(self.last_ts) * 1_000_000
        tally_tools(self.calls, out)
