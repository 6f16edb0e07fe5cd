"""The options that choose how judges' ballots are read, shared by `moot tournament` and
`moot calibrate`: each made from its declaration in tournaments/settings.py, so the two
commands offer the same option with the same help, range and default."""

from __future__ import annotations

from typing import Annotated

import typer

from moot.tournaments.settings import BallotSettings, help_of, option_of

# The defaults a command line gives: the declarations' own.
DEFAULT = BallotSettings()

# Their help says the range and the default, "(1 or 2; 2)", as the format parameters' does:
# typer's "[default: 2]" would say it twice.
Orders = Annotated[
    int,
    typer.Option(option_of("orders"), help=help_of("orders"), metavar="1|2", show_default=False),
]
Ballot = Annotated[
    str,
    typer.Option(option_of("method"), help=help_of("method"), metavar="METHOD", show_default=False),
]
Margin = Annotated[
    float,
    typer.Option(option_of("margin"), help=help_of("margin"), metavar="M", show_default=False),
]
Reasons = Annotated[bool, typer.Option(help=help_of("reasons"))]
