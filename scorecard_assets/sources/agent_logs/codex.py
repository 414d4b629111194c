"""The Codex parser (``codex exec --json``)."""

from __future__ import annotations

from typing import Any

from scorecard_assets.sources.agent_logs.parsing import (
    TOKEN_MAX,
    FormatParser,
    Problems,
    Sums,
    ToolCall,
    remember_call,
    tally_tools,
    text_of,
)
from scorecard_assets.sources.agent_logs.slices import NAN, SliceResult

_CODEX_TOOL_ITEMS = frozenset({"command_execution", "file_change", "mcp_tool_call", "web_search"})
_CODEX_ABORT_STATUSES = frozenset({"declined", "cancelled", "canceled", "aborted", "interrupted"})


# --------------------------------------------------------------------------------------------------
# Codex exec --json


class CodexParser(FormatParser):
    """Codex thread events (docs/sources.md "Codex CLI"): usage per ``turn.completed``, tools per item.

    An assistant turn begins with ``turn.started``; a turn that ends in ``turn.failed`` (or a log
    cut short) still counts, so a dispatch whose last turn failed after editing files keeps its
    turns. Logs that carry only ``turn.completed`` lines are counted by those.
    """

    def __init__(self, data: bytes, view: memoryview, problems: Problems) -> None:
        super().__init__(data, view, problems)
        self.sums = Sums(problems)
        self.turns_started = 0
        self.turns_completed = 0
        self.calls: dict[object, ToolCall] = {}

    def feed(self, start: int, end: int, line: int, kind: bytes | None) -> None:
        record = self.decode_object(start, end, line)
        if record is None:
            return
        event = record.get("type")
        if event == "turn.started":
            self.turns_started += 1
        elif event == "turn.completed":
            self.turns_completed += 1
            self._usage(line, self.field(record, "usage", dict, line))
        elif event in ("item.started", "item.updated", "item.completed"):
            item = self.field(record, "item", dict, line)
            if item is not None:
                self._item(item, line)
        elif event not in ("thread.started", "turn.failed", "error"):
            self.problems.ignored(line)

    def _usage(self, line: int, usage: dict[str, Any] | None) -> None:
        if usage is None:
            return
        sums = self.sums
        total_in = sums.take(line, "usage.input_tokens", usage.get("input_tokens"), TOKEN_MAX)
        cached = sums.take(line, "usage.cached_input_tokens", usage.get("cached_input_tokens"), TOKEN_MAX)
        sums.add(
            "output_tokens", sums.take(line, "usage.output_tokens", usage.get("output_tokens"), TOKEN_MAX)
        )
        sums.add("cache_read_tokens", cached)
        if total_in is None:
            return
        if cached is not None and cached > total_in:
            self.problems.bad_value(line, "usage.cached_input_tokens (above input_tokens)", cached)
            return
        sums.add("input_tokens", total_in - (cached or 0.0))

    def _item(self, item: dict[str, Any], line: int) -> None:
        item_type = self.field(item, "item.type", str, line)
        if item_type not in _CODEX_TOOL_ITEMS:
            return
        item_id = self.field(item, "item.id", str, line)
        key: object = item_id if item_id is not None else ("line", line)
        status = self.field(item, "item.status", str, line)
        if item_type == "file_change":
            # Only a finished change (completed or failed) is an edit call.
            tool = "apply_patch" if status in ("completed", "failed") else "file_change"
            text = ""
        else:
            tool = "shell" if item_type == "command_execution" else item_type
            text = text_of(item.get("aggregated_output")) or text_of(item.get("error"))
        if status in _CODEX_ABORT_STATUSES:
            status, text = "error", f"Tool execution aborted ({status})"
        elif status == "failed":
            status = "error"
        remember_call(self.calls, key, ToolCall(tool, status, item.get("command"), text, line))

    def finish(self, out: SliceResult) -> None:
        self.sums.fill_tokens(out)
        out.cache_creation_tokens = NAN
        out.assistant_turns = max(self.turns_started, self.turns_completed)
        tally_tools(self.calls, out)
