"""The bundled sample fleet: a deterministic generator (generate.py) and its committed output (data/)."""
