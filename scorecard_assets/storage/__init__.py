"""Storage: where asset values, incremental state and published reports live (docs/storage.md).

- ``location``  local directory or object-store prefix behind one path type; atomic writes
- ``codec``     frames <-> Arrow (typed nested columns), dicts <-> JSON; never pickles
- ``tables``    a stored table result (Parquet + manifest) and its lazy handle ``StoredTable``
- ``state``     the state store: named workspaces, local in place or checked out from an object store
- ``reports``   the report store: ``<output>/<window end>/`` and ``latest/``
- ``settings``  default locations from the environment

Pure package: no Dagster (the Dagster IO manager and resources wrap it in ``defs/``).
"""
