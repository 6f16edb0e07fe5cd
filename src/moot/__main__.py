"""`python -m moot` runs the command-line interface."""

from moot.cli import main

main()
