"""`moot config …`: where the file of a user's defaults is, and what it sets."""

from __future__ import annotations

import json

from moot.cli.helpview import App
from moot.cli.root import Console, app
from moot.config import Defaults, config_path
from moot.debates.settings import read_defaults
from moot.render import printable

config_app = App(
    help="The config file of defaults: a model per seat, the language, the token cap.",
    no_args_is_help=True,
)
app.add_typer(config_app, name="config")

# What `moot config show` offers to copy when there is no file yet: every line within 80
# columns, so that it is copied from a terminal as it is written.
EXAMPLE = """\
# moot's defaults; a command-line option (or moot.debate's keyword)
# overrides each.
model = "smollm2-135m"  # every seat's model, without --model or --role
lang = "auto"           # auto (by the motion), en or zh
max_tokens = 200        # the most tokens a speech may take

[roles]                 # a seat's model, in the formats that have that seat
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

    def line(text: str) -> None:
        # Never wrapped: what is printed is TOML, whole as copied (a line wider than the
        # terminal runs past its edge rather than into a line that does not parse).
        console.print(text, markup=False, highlight=False, soft_wrap=True)

    if not where.exists():
        line(f"# no config file at {printable(str(where))}; one could read:")
        line(EXAMPLE)
        return
    line(f"# {printable(str(where))}")
    values = defaults.model_dump(exclude_defaults=True)
    if not values:
        line("# sets nothing: moot's own defaults apply")
    for key in Defaults.model_fields:
        if key in values and key != "roles":
            line(f"{key} = {_toml(values[key])}")
    for role, model in values.get("roles", {}).items():
        line(f"roles.{printable(role)} = {_toml(model)}")


def _toml(value: object) -> str:
    """A string or a number as TOML writes it (JSON's are TOML's), shown as text."""
    return printable(json.dumps(value, ensure_ascii=False))
