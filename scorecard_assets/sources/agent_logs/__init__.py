"""Per-dispatch agent logs -> one row per dispatch slice (``schemas.AGENT_LOG_USAGE``).

Layout (docs/sources.md "Agent logs"): ``<dossier_home>/sched/<slug>/runs/*.log`` per host and repo; the
issue comes from the file name (``-<digits>.log``). A log is append-only across redispatches and
report agents; each dispatch begins with a scheduler preamble line
``{"type":"sched-dispatch","ts":...,"cmd":[...]}``. A *slice* is a preamble and everything up to the
next preamble; content before the first preamble (older logs) is a slice without a start time.

Per slice the agent CLI's output format is recognised from its first records (the preamble command
is a hint, used when the records decide nothing): Claude Code ``stream-json`` / ``json`` (a single
object, or an array with ``--verbose``), opencode ``--format json`` and Codex ``exec --json``. Our
rules where the reference differs (docs/sources.md "What the reference reads, and what we read"):
every result record of every slice counts; per Claude result record ``modelUsage`` wins over the
top-level ``usage`` (never blended); opencode ``step_finish`` and Codex ``turn.completed`` usage
count too. Costs are never estimated here.

Counting rules (one slice):

- tokens/cost: Claude sums every ``result`` record (``modelUsage`` entries, else ``usage`` with
  ``total_cost_usd``/``cost_usd``); a slice without a result (killed agent) sums the usage of each
  assistant message once (by message id) and has no cost. Each value must be a finite number in
  0..1e15 tokens / 0..1e6 USD, else it alone is dropped and counted in ``bad_values``.
- ``models``: the sorted distinct model names the log gives (``modelUsage`` keys, ``message.model``,
  ``result.model``; ``<synthetic>`` ignored); the command's ``-m``/``--model`` only when the log
  names none (always the case for opencode and Codex). Raw values: sanitising happens at render.
- ``assistant_turns``: Claude top-level assistant messages (sub-agent messages excluded), opencode
  ``step_finish`` events, Codex turns (``turn.started``, else ``turn.completed`` when a log has no
  start lines). ``tool_calls`` include sub-agents'.
- failed tool calls (Claude ``is_error: true``, opencode status ``error``, Codex ``failed`` or
  ``declined``) are classified by ``tooling.classify_tool_error``: migration artefacts are ignored,
  aborts count in ``aborted_tool_calls``, other failures of edit tools in ``edit_errors``.
- ``verify_after_last_edit``: a verify command was issued after the last edit call (line order,
  then item order within a message); NA without edit calls. ``verify_calls`` counts the verify
  commands, so that a later slice of the same run can verify an earlier slice's edits.
- ``step_latencies_ms``: every valid step latency (0 < latency ≤ 600 s), kept so that a run's
  median pools the steps of all its slices; ``latency_median_s`` is the slice's own upper median.

Speed and memory: a log is read in 8 MiB windows into one reused buffer (``parse_log_file``; each
window starts at the first unfinished line), walked line by line with ``bytes.find`` (memchr speed);
a line's record type is read from its prefix (``{"type":"<kind>"``) to find preambles and Claude
result records without decoding. Every other line is decoded once by its slice's parser, so each
line is read, malformed or ignored by design (docs/reliability.md "Line accounting"); a field of
the wrong JSON type makes its line malformed and names the field. The slice's format comes from its
records (docs/sources.md "Agent logs by content"); the command is a hint.

Incremental reading (``agent_logs.cache``): because slices are parsed independently and each knows
its byte offset and first line number, a grown file is parsed again only from the start of its last
slice, with the same results as a full parse. Slices are kept in columns (``SliceTable``), in the
cache as in memory: an unchanged file costs a ``stat`` and a few lookups (its row range in the loaded
table, running totals for its directory's tally), the frame is gathered from the table's arrays, and
only the files with data-quality findings have those fields turned back into Python values, for their
warnings. Preamble times of the plain ISO 8601 form are read with ``datetime.fromisoformat`` (pandas
reads the other forms, with the same results where both read one).

Modules: ``slices`` (``SliceResult``, ``SliceTable``: one slice, and slices in columns),
``parsing`` (what the format parsers share: line kinds and shapes, decoding, number checks, the
parser base class, the opencode/Codex tool-call tally), ``claude``, ``opencode`` and ``codex`` (one
parser per CLI), ``slicing`` (preambles, format detection, ``parse_log_bytes``), ``tally`` (what a
runs/ directory contributed, its ``SourceStat``), ``log_warnings`` (the data warnings) and ``reader``
(the directory walk, the cache, the frame: ``read_agent_logs``).
"""

from scorecard_assets.sources.agent_logs.log_warnings import ASSET
from scorecard_assets.sources.agent_logs.parsing import (
    COST_MAX,
    DURATION_MAX_MS,
    STEP_LATENCY_MAX_MS,
    TOKEN_MAX,
)
from scorecard_assets.sources.agent_logs.reader import issue_from_log_name, read_agent_logs
from scorecard_assets.sources.agent_logs.slices import (
    EMPTY_TABLE,
    EXAMPLES,
    FORMAT_CLAUDE_JSON,
    FORMAT_CLAUDE_STREAM,
    FORMAT_CODEX,
    FORMAT_OPENCODE,
    FORMAT_UNKNOWN,
    NAN,
    SliceProblems,
    SliceResult,
    SliceTable,
)
from scorecard_assets.sources.agent_logs.slicing import (
    SNIFF_LINE_MAX_BYTES,
    SNIFF_LINES,
    parse_log_bytes,
    parse_log_chunks,
    parse_log_file,
)
from scorecard_assets.sources.agent_logs.tally import SOURCE

__all__ = [
    "ASSET",
    "COST_MAX",
    "DURATION_MAX_MS",
    "EMPTY_TABLE",
    "EXAMPLES",
    "FORMAT_CLAUDE_JSON",
    "FORMAT_CLAUDE_STREAM",
    "FORMAT_CODEX",
    "FORMAT_OPENCODE",
    "FORMAT_UNKNOWN",
    "NAN",
    "SNIFF_LINES",
    "SNIFF_LINE_MAX_BYTES",
    "SOURCE",
    "STEP_LATENCY_MAX_MS",
    "TOKEN_MAX",
    "SliceProblems",
    "SliceResult",
    "SliceTable",
    "issue_from_log_name",
    "parse_log_bytes",
    "parse_log_chunks",
    "parse_log_file",
    "read_agent_logs",
]
