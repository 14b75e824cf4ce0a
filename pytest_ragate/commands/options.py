"""Argument and option types more than one command takes."""

from __future__ import annotations

from pathlib import Path

import click

UNIT = click.FloatRange(0.0, 1.0)  # a proportion: a floor's min, a rate
DIRECTORY = click.Path(exists=True, file_okay=False, path_type=Path)
RESULTS_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)
