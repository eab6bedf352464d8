"""Subcommands of the dataset builders: ``build`` and ``fetch-raw``."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    pass
