"""Tables of figures that stay readable and copyable at any terminal width: a model is shown
by its short label (`models.labels`), whole; where the labels do not fit beside the figures,
each is listed once on a line of its own under a key, and the tables show the key instead."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from moot.models.labels import model_labels
from moot.render import safe

UNLIMITED = 10**6  # a table measured as wide as it would be, wrapping nothing


def labels(refs: Iterable[str]) -> dict[str, str]:
    """Each model reference by its short label, unique among REFS, as rich markup: shown as
    text, never obeyed (`render.safe`)."""
    return {ref: safe(shown) for ref, shown in model_labels(refs).items()}


def fits(console: Console, *tables: Table) -> bool:
    """Whether each of TABLES fits the console with no word broken and no column that must
    stay whole (`no_wrap`) cut."""
    wide = console.options.update_width(UNLIMITED)
    return all(console.measure(t, options=wide).minimum <= console.width for t in tables)


def name_column(table: Table, header: str) -> None:
    """The column of the models' labels: never wrapped, never cut."""
    table.add_column(header, no_wrap=True, overflow="ignore")


def keep_words(table: Table) -> Table:
    """TABLE with each column at least as wide as the longest word of its header and cells:
    short of room, rich would otherwise narrow a column below it and break the word (a
    header read as `st…`, a figure cut in two). Called once its rows are added."""
    for column in table.columns:
        cells = [column.header, *column.cells]
        words = [w for cell in cells for w in _plain(cell).split()]
        widest = max((cell_len(w) for w in words), default=1)
        column.min_width = max(column.min_width or 0, widest)
    return table


def _plain(cell: object) -> str:
    if isinstance(cell, Text):
        return cell.plain
    return Text.from_markup(cell).plain if isinstance(cell, str) else ""


def legend(console: Console, keys: Mapping[str, str]) -> None:
    """Each key and the label (markup) it stands for, one a line, never wrapped (a label is copied
    from here; one wider than the terminal runs past its edge)."""
    width = max((cell_len(k) for k in keys), default=0)
    for key, shown in keys.items():
        pad = " " * (width - cell_len(key))
        console.print(f"{pad}{key}  {shown}", soft_wrap=True, highlight=False)


@dataclass(frozen=True)
class Names:
    """How the tables of one view name its models: LABELS (markup, by reference) in a column
    of their own, or, `by_key`, the KEYS they are listed under (`legend`)."""

    labels: Mapping[str, str]
    keys: Mapping[str, str]
    by_key: bool = False

    @property
    def shown(self) -> Mapping[str, str] | None:
        """The labels where a table has a column for them; None where it shows keys."""
        return None if self.by_key else self.labels

    def keyed(self) -> Names:
        return replace(self, by_key=True)

    def cells(self, ref: str, first: str | None = None) -> list[str]:
        """A row's first cells for REF: FIRST (a rank, say) and its label, or its key."""
        if self.by_key:
            return [self.keys[ref]]
        return [*([first] if first is not None else []), self.labels[ref]]

    def print_legend(self, console: Console) -> None:
        legend(console, {key: self.labels[ref] for ref, key in self.keys.items()})
