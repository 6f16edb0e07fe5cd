"""`moot config …`: where the file of a user's defaults is, and what it sets."""

from __future__ import annotations

import json

import typer

from moot.cli.root import Console, app
from moot.config import Defaults, config_path
from moot.debates.settings import read_defaults
from moot.render import printable, safe

config_app = typer.Typer(
    help="The config file of defaults: a model per seat, the language, the token cap.",
    no_args_is_help=True,
)
app.add_typer(config_app, name="config")

# What `moot config show` offers to copy when there is no file yet.
EXAMPLE = """\
# moot's defaults; a command-line option (or moot.debate's keyword) overrides each.
model = "smollm2-135m"     # every seat's model, when --model and --role are not given
lang = "auto"              # auto (by the motion), en or zh
max_tokens = 200           # the most tokens a speech may take

[roles]                    # a seat's model, for the formats that have that seat
opposition = "gemma3-270m"
"""


@config_app.command()
def path() -> None:
    """Print where the config file is (it need not exist yet)."""
    print(printable(str(config_path())))


@config_app.command()
def show() -> None:
    """Show what the config file sets, checked as `moot run` reads it; without a file, an
    example to copy there."""
    where = config_path()
    defaults = read_defaults()  # a bad file is refused here, as it is by moot run
    console = Console()
    if not where.exists():
        console.print(f"no config file at {safe(str(where))}; one could read:", highlight=False)
        console.print(EXAMPLE, markup=False, highlight=False)
        return
    console.print(f"# {safe(str(where))}", highlight=False)
    values = defaults.model_dump(exclude_defaults=True)
    if not values:
        console.print("# sets nothing: moot's own defaults apply", highlight=False)
    for key in Defaults.model_fields:
        if key in values and key != "roles":
            console.print(f"{key} = {_toml(values[key])}", markup=False, highlight=False)
    for role, model in values.get("roles", {}).items():
        console.print(f"roles.{printable(role)} = {_toml(model)}", markup=False, highlight=False)


def _toml(value: object) -> str:
    """A string or a number as TOML writes it (JSON's are TOML's), shown as text."""
    return printable(json.dumps(value, ensure_ascii=False))
