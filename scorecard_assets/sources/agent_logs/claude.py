"""The Claude Code parser (``--output-format stream-json`` and ``json``)."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from scorecard_assets.sources.agent_logs.parsing import (
    BAD,
    COST_MAX,
    DURATION_MAX_MS,
    EPOCH_MS_MAX,
    EPOCH_MS_MIN,
    NON_SPACE_RE,
    STEP_LATENCY_MAX_MS,
    TOKEN_MAX,
    FormatParser,
    Problems,
    Sums,
    text_of,
    upper_median,
    valid_number,
    verify_after_edit,
)
from scorecard_assets.sources.agent_logs.slices import USAGE_TOKEN_KEYS, SliceResult
from scorecard_assets.sources.tooling import SHELL_TOOLS, classify_tool_error, is_edit_tool, is_verify_command

_CLAUDE_SYNTHETIC_MODEL = "<synthetic>"

# Claude token fields: output column -> (modelUsage camelCase, snake_case) keys.
_MODEL_USAGE_TOKEN_KEYS = {
    "input_tokens": ("inputTokens", "input_tokens"),
    "output_tokens": ("outputTokens", "output_tokens"),
    "cache_creation_tokens": ("cacheCreationInputTokens", "cache_creation_input_tokens"),
    "cache_read_tokens": ("cacheReadInputTokens", "cache_read_input_tokens"),
}
_MODEL_USAGE_COST_KEYS = ("costUSD", "totalCostUsd", "total_cost_usd")


def _join_models(models: set[str]) -> str | None:
    return ",".join(sorted(models)) if models else None


# --------------------------------------------------------------------------------------------------
# Claude Code (stream-json and json)


def _message_key(record: dict[str, Any], line: int, record_index: int) -> object:
    """An assistant record's message id (one message may span several lines), else its position."""
    message = record.get("message")
    message_id = message.get("id") if isinstance(message, dict) else None
    return message_id if isinstance(message_id, str) and message_id else (line, record_index)


class ClaudeParser(FormatParser):
    """Claude Code records of one slice, in line order.

    Every line is decoded (an object, or an array of objects: ``--output-format json --verbose``):
    ``assistant``, ``user``, ``result`` and ``system`` records are read; a record of another kind is
    ignored by design; a ``type`` or a used field of the wrong JSON type makes the line malformed
    (docs/reliability.md "Line accounting").

    Claude Code's stream carries no timestamps, so latency and end time stay unknown. When records
    do carry a ``timestamp`` (ISO text or epoch milliseconds, as in a session transcript), the end
    time is the latest timestamp, and a
    step latency is the time from the record before an assistant message to that message's first
    line (kept when 0 < latency <= 600 s, as Pragmatikos does).
    """

    def __init__(self, data: bytes, view: memoryview, problems: Problems) -> None:
        super().__init__(data, view, problems)
        self.sums = Sums(problems)
        self.result_records = 0
        self.cost_kinds: set[str] = set()
        self.models: set[str] = set()
        self.hversion: str | None = None
        self.turn_keys: set[object] = set()
        self.turn_usage: dict[object, tuple[int, dict[str, Any]]] = {}
        self.tool_ids: set[str] = set()
        self.edit_ids: set[str] = set()
        self.errored_ids: set[str] = set()
        self.tool_calls = 0
        self.edit_calls = 0
        self.edit_errors = 0
        self.aborted = 0
        self.last_edit: tuple[int, int, int] | None = None
        self.last_verify: tuple[int, int, int] | None = None
        self.verify_calls = 0
        self.last_ts: float | None = None
        self.step_from: float | None = None
        self.latencies: list[float] = []
        self.last_message: object = None

    def feed(self, start: int, end: int, line: int, kind: bytes | None) -> None:
        """Every line is decoded, so that each is read, malformed or ignored (never unseen)."""
        record = self.decode_record(start, end, line)
        if isinstance(record, dict):
            if not self._record(record, line, 0):
                self.problems.ignored(line)
        elif isinstance(record, list) and record and all(isinstance(item, dict) for item in record):
            used = False
            for index, item in enumerate(record):
                used = self._record(item, line, index) or used
            if not used:
                self.problems.ignored(line)
        elif record is BAD and NON_SPACE_RE.search(self.data, start, end) is None:
            self.problems.ignored(line)
        else:
            self.problems.malformed(line)

    def _timestamp(self, record: dict[str, Any], line: int) -> float | None:
        """The record's ``timestamp`` in epoch milliseconds (None when absent or unusable)."""
        raw = record.get("timestamp")
        if raw is None:
            return None
        value: float | None = None
        if isinstance(raw, str):
            try:
                stamp = datetime.fromisoformat(raw)
            except ValueError:
                stamp = None
            if stamp is not None:
                stamp = stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=UTC)
                value = stamp.timestamp() * 1000.0
        else:
            value = valid_number(raw, EPOCH_MS_MAX)
        if value is None or not EPOCH_MS_MIN <= value <= EPOCH_MS_MAX:
            self.problems.bad_value(line, "timestamp", raw)
            return None
        return value

    def _step_timing(self, record: dict[str, Any], kind: object, line: int, record_index: int) -> None:
        ts = self._timestamp(record, line)
        if ts is None:
            return
        self.last_ts = ts if self.last_ts is None else max(self.last_ts, ts)
        if kind != "assistant":
            self.step_from = ts
            return
        key = _message_key(record, line, record_index)
        if key != self.last_message and self.step_from is not None:
            if 0 < ts - self.step_from <= STEP_LATENCY_MAX_MS:
                self.latencies.append((ts - self.step_from) / 1000.0)
            self.step_from = None
        self.last_message = key

    def _record(self, record: dict[str, Any], line: int, record_index: int) -> bool:
        """Read one record; False when it is of a kind that carries nothing we count (ignored)."""
        kind = record.get("type")
        if not isinstance(kind, str):
            if kind is not None:
                self.problems.wrong_type(line, "type", kind)
                return True
            if "timestamp" not in record:
                return False
        if "timestamp" in record:
            self._step_timing(record, kind, line, record_index)
        if kind == "assistant":
            self._assistant(record, line, record_index)
        elif kind == "user":
            self._user(record, line)
        elif kind == "result":
            self._result(record, line)
        elif kind == "system":
            version = record.get("claude_code_version", record.get("version"))
            if isinstance(version, str) and version and self.hversion is None:
                self.hversion = version
        else:
            return "timestamp" in record
        return True

    def _add_model(self, model: object) -> None:
        if isinstance(model, str) and model and model != _CLAUDE_SYNTHETIC_MODEL:
            self.models.add(model)

    def _assistant(self, record: dict[str, Any], line: int, record_index: int) -> None:
        message = self.field(record, "message", dict, line)
        if message is None:
            return
        self._add_model(self.field(message, "message.model", str, line))
        key = _message_key(record, line, record_index)
        if record.get("parent_tool_use_id") is None:
            self.turn_keys.add(key)
        usage = message.get("usage")
        if isinstance(usage, dict):
            self.turn_usage[key] = (line, usage)
        content = message.get("content")
        if not isinstance(content, list):
            return
        for item_index, item in enumerate(content):
            if isinstance(item, dict) and item.get("type") == "tool_use":
                self._tool_use(item, (line, record_index, item_index))

    def _tool_use(self, item: dict[str, Any], pos: tuple[int, int, int]) -> None:
        line = pos[0]
        tool_id = self.field(item, "message.content.tool_use.id", str, line)
        name = self.field(item, "message.content.tool_use.name", str, line)
        if tool_id is not None:
            if tool_id in self.tool_ids:
                return
            self.tool_ids.add(tool_id)
        self.tool_calls += 1
        if is_edit_tool(name):
            self.edit_calls += 1
            self.last_edit = pos if self.last_edit is None else max(self.last_edit, pos)
            if isinstance(tool_id, str):
                self.edit_ids.add(tool_id)
        if name is not None and name in SHELL_TOOLS:
            tool_input = item.get("input")
            command = tool_input.get("command") if isinstance(tool_input, dict) else None
            if is_verify_command(command):
                self.verify_calls += 1
                self.last_verify = pos if self.last_verify is None else max(self.last_verify, pos)

    def _user(self, record: dict[str, Any], line: int) -> None:
        message = self.field(record, "message", dict, line)
        content = message.get("content") if message is not None else None
        if not isinstance(content, list):
            return
        for item in content:
            if (
                not isinstance(item, dict)
                or item.get("type") != "tool_result"
                or item.get("is_error") is not True
            ):
                continue
            tool_id = self.field(item, "message.content.tool_result.tool_use_id", str, line)
            if tool_id is not None:
                if tool_id in self.errored_ids:
                    continue
                self.errored_ids.add(tool_id)
            kind = classify_tool_error(text_of(item.get("content")))
            if kind == "abort":
                self.aborted += 1
            elif kind == "error" and isinstance(tool_id, str) and tool_id in self.edit_ids:
                self.edit_errors += 1

    def _result(self, record: dict[str, Any], line: int) -> None:
        self.result_records += 1
        self._add_model(self.field(record, "model", str, line))
        model_usage = self.field(record, "modelUsage", dict, line)
        entries = (
            [(name, entry) for name, entry in model_usage.items() if isinstance(entry, dict)]
            if model_usage is not None
            else []
        )
        if entries:
            self._model_usage_costs(entries, line)
        else:
            self._usage_costs(record, line)
        duration = self.sums.take(line, "duration_ms", record.get("duration_ms"), DURATION_MAX_MS)
        self.sums.add("duration_ms", duration)

    def _model_usage_costs(self, entries: list[tuple[str, dict[str, Any]]], line: int) -> None:
        for name, entry in entries:
            self._add_model(name)
            for column, (camel, snake) in _MODEL_USAGE_TOKEN_KEYS.items():
                raw = entry.get(camel)
                raw = raw if raw is not None else entry.get(snake)
                self.sums.add(column, self.sums.take(line, f"modelUsage.{camel}", raw, TOKEN_MAX))
            cost_raw = next((entry[k] for k in _MODEL_USAGE_COST_KEYS if entry.get(k) is not None), None)
            cost = self.sums.take(line, "modelUsage.costUSD", cost_raw, COST_MAX)
            if cost is not None:
                self.sums.add("cost_usd", cost)
                self.cost_kinds.add("modelUsage")

    def _usage_costs(self, record: dict[str, Any], line: int) -> None:
        usage = self.field(record, "usage", dict, line)
        if usage is not None:
            for column, key in USAGE_TOKEN_KEYS.items():
                self.sums.add(column, self.sums.take(line, f"usage.{key}", usage.get(key), TOKEN_MAX))
        cost_key = "total_cost_usd" if record.get("total_cost_usd") is not None else "cost_usd"
        cost = self.sums.take(line, cost_key, record.get(cost_key), COST_MAX)
        if cost is not None:
            self.sums.add("cost_usd", cost)
            self.cost_kinds.add("usage")

    def finish(self, out: SliceResult) -> None:
        sums = self.sums
        if self.result_records == 0:
            for line, usage in self.turn_usage.values():
                for column, key in USAGE_TOKEN_KEYS.items():
                    sums.add(column, sums.take(line, f"message.usage.{key}", usage.get(key), TOKEN_MAX))
        sums.fill_tokens(out)
        out.cost_usd = sums.get("cost_usd")
        if not math.isnan(out.cost_usd):
            out.cost_kind = "modelUsage" if self.cost_kinds == {"modelUsage"} else "usage"
        out.duration_ms = sums.get("duration_ms")
        out.result_records = self.result_records
        out.assistant_turns = len(self.turn_keys)
        out.tool_calls = self.tool_calls
        out.edit_calls = self.edit_calls
        out.edit_errors = self.edit_errors
        out.aborted_tool_calls = self.aborted
        out.verify_after_last_edit = verify_after_edit(self.edit_calls, self.last_edit, self.last_verify)
        out.verify_calls = self.verify_calls
        out.hversion = self.hversion
        out.models = _join_models(self.models)
        out.latency_median_s = upper_median(self.latencies)
        out.step_latencies_ms = [round(s * 1000.0) for s in self.latencies]
        out.slice_end_ns = None if self.last_ts is None else int(self.last_ts) * 1_000_000
