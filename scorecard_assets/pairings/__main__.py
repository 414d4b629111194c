"""``scorecard pairings verify POOL.json [--tolerance 1e-9]`` (alias: ``python -m
scorecard_assets.pairings verify …``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from scorecard_assets.pairings.constants import VERIFY_TOLERANCE

GROUP = "pairings"


def add_commands(commands: argparse._SubParsersAction) -> None:
    """``scorecard pairings verify`` (registered in ``scorecard_assets/cli.py``)."""
    verify = commands.add_parser(
        "verify",
        help="recompute every group's adjusted axes, tiers, scores and imputed tiers of a pool.json",
        description=(
            "Recompute adj, tiers, tiersAdj, score, scoreAdj and imputed of every group from its raw, ev "
            "and the view's pool. Exit 0 when all match, 1 on a mismatch, 2 when the file is unusable."
        ),
    )
    verify.add_argument("pool_file", type=Path, metavar="POOL.json")
    verify.add_argument(
        "--tolerance", type=float, default=VERIFY_TOLERANCE, help="largest accepted |difference| (1e-9)"
    )
    verify.set_defaults(func=_verify)


def _verify(args: argparse.Namespace) -> int:
    from scorecard_assets.pairings.verify import run_verify

    return run_verify(args.pool_file, tolerance=args.tolerance)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m scorecard_assets.pairings …`` = ``scorecard pairings …``."""
    from scorecard_assets.cli import main as scorecard_main

    return scorecard_main([GROUP, *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
