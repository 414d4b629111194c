"""From rankings to decisions: frontier, routing advice, change alerts, adjusted effects, pairing
comparisons (docs/decisions.md).

Modules (pure, no Dagster; nothing is imported here, so importing the package stays cheap):

- ``config``           ``DecisionsConfig``: the ``decisions:`` section of the configuration file
- ``frontier``         cost per delivered issue vs delivery rate, Pareto frontier with bootstrap
                       intervals, per risk class x tier and overall: ``build_frontier``
- ``routing``          the cheapest option statistically no worse than the best, or no advice and
                       why: ``routing_advice``
- ``alerts``           change-point alerts per model and gateway over weekly bins, false-alarm rate
                       controlled, annotated with what changed: ``change_alerts``
- ``adjusted``         difficulty-adjusted delivery and cost effects (statsmodels GLMs):
                       ``adjusted_effects``
- ``pairing_compare``  per-axis comparison of the top pairings and tier-weight sensitivity:
                       ``compare_pairings``
- ``harness``          delivery and spend per harness (agent CLI) and version: ``harness_view``
- ``warnings``         the data-warning codes these modules raise (``DECISION_WARNING_CODES``)

Each entry point returns a frozen dataclass with ``warnings`` (``records.DataWarning``) and
``to_sidecar()`` (a JSON-ready dict with a stable key order); ``report/decisions.py`` renders them.
"""
