"""A seeded Oxford debate at the sizes people use: 1.5B, 3B and 8B shapes (`shapes.py`).

Per shape, in a process of its own (so each peak RSS is that shape's alone): a seeded
3-round Oxford debate with short speeches, timed; every turn priced at llama.cpp's raw
rates for that shape (the roofline of `bench_roofline.py`); the prompt tokens evaluated
per prompt token; the speakers' KV snapshots the session cache dropped (least recently
used, or too large to keep) or spilled to disk; the process's peak RSS beside what moot's
memory plan predicted for the debate; and the raw rates themselves. The shapes' words are
random tokens, so moot's rules redraw and cut: the work is priced, the words are not.

    python benchmarks/bench_sizes.py                      # every shape, then SmolLM2
    python benchmarks/bench_sizes.py qwen2.5-1.5b         # one shape
    python benchmarks/bench_sizes.py --max-tokens 32 smollm2-135m llama-3.2-3b
    python benchmarks/bench_sizes.py --models 2 --turns 2 --no-rates --max-tokens 8 llama-3.2-3b

`--models 2` seats two models of the shape (its file and a hard link to it under another
name: moot loads each apart, as two models), the proposition on one and the opposition
on the other. `--turns N` ends the debate after its first N turns, `--no-rates` skips
the raw rates (and so the roofline share): what is left is the memory the models and the
turns took against the plan, and what the session caches dropped, in the least time.

Slow: minutes a shape on two cores (the 8B shape's file alone is 4.2 GiB, written once and
kept in the cache of `shapes.py`). Not part of `make bench` or `make test`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import shapes

MiB = 1 << 20
MAX_TOKENS = 48  # a short speech: the debate's cost is its prompts and its turns' count
CONTEXTS = (0, 1024, 2048)  # the raw rates' ladder: a short debate's prompts stay below 3k
REPEATS = 2
CALL_TIMEOUT_S = 3600.0
TINY = "smollm2-135m"  # the installed model every other figure comes from, to compare with
NAMES = (*shapes.SHAPES, TINY)


# -- counting what the session cache does ------------------------------------------------


class Counts:
    """What the speakers' session caches did during the debate: snapshots kept, dropped as
    the least recently used, refused as larger than the whole budget, spilled to disk; and
    the most bytes they held at once."""

    def __init__(self) -> None:
        self.kept = self.dropped = self.too_large = self.spilled = 0
        self.peak_bytes = 0

    def figures(self) -> dict[str, int | float]:
        return {
            "snapshots_kept": self.kept,
            "snapshots_dropped": self.dropped,
            "snapshots_too_large": self.too_large,
            "snapshots_spilled": self.spilled,
            "snapshots_peak_mb": round(self.peak_bytes / MiB, 1),
        }


def count_sessions(counts: Counts) -> None:
    """Wrap moot's SessionCache so every put and spill is counted in COUNTS (this process
    only: the bench's own instrument, nothing of moot changes)."""
    from moot.inference.decoding import SessionCache

    put, spill = SessionCache.put, SessionCache.spill

    def counted_put(self: Any, name: str, snap: Any) -> None:
        dropped, spilled = self.dropped, self.spilled
        too_large = snap.nbytes > self.budget
        put(self, name, snap)
        counts.spilled += self.spilled - spilled  # out of memory to disk: kept, not dropped
        lost = self.dropped - dropped
        if too_large and name not in self._items:
            counts.too_large += 1
            lost -= 1
        else:
            counts.kept += 1
        counts.dropped += lost
        counts.peak_bytes = max(counts.peak_bytes, self.nbytes)

    def counted_spill(self: Any, directory: Path) -> Any:
        counts.spilled += sum(s.path is None for s in self._items.values())
        return spill(self, directory)

    SessionCache.put = counted_put  # type: ignore[method-assign]
    SessionCache.spill = counted_spill  # type: ignore[method-assign]


def replayed(turns: Sequence[Any], shape: shapes.Shape, *, budget: int) -> dict[str, int]:
    """What a session cache of BUDGET bytes would drop had TURNS been spoken at SHAPE: after
    each turn its speaker's snapshot (its prompt and completion, and the last logits) put
    in, the least recently put dropped first, as SessionCache.put does. An estimate: it
    leaves out which snapshot each turn restored from (which also counts as a use)."""
    held: OrderedDict[str, int] = OrderedDict()
    dropped = too_large = 0
    for turn in turns:
        size = (turn.prompt_tokens + turn.completion_tokens) * shape.kv_per_token
        size += 4 * shape.vocab
        held.pop(turn.role, None)
        if size > budget:
            too_large += 1
            continue
        held[turn.role] = size
        while sum(held.values()) > budget:
            held.popitem(last=False)
            dropped += 1
    return {"dropped": dropped, "too_large": too_large}


# -- one shape, in its own process -------------------------------------------------------


def planned(paths: Sequence[Path], *, n_ctx: int, speakers: int) -> dict[str, Any]:
    """What moot's memory plan predicts for this debate (as the runner plans it: its models,
    a snapshot per seat, the snapshots' budget sized to the memory free now)."""
    from moot.config import SESSION_CACHE_MB
    from moot.models import memory

    plan = memory.plan([(p.stem, p) for p in paths], n_ctx, snapshots=speakers)
    free = memory.free_memory(gpu=False).ram
    budget = memory.snapshot_budget(plan, free, fallback=SESSION_CACHE_MB * MiB)
    plan = memory.replace(plan, snapshot_budget=budget)
    model = plan.models[0]
    return {
        "n_ctx": n_ctx,
        "plan_mb": round(plan.host / MiB),
        # The models alone (weights, KV caches, compute buffers): what a debate cut short,
        # whose speakers hold little of a full context, is measured against.
        "plan_models_mb": round((plan.host - plan.snapshot_total) / MiB),
        "plan_weights_mb": round(sum(m.weights for m in plan.models) / MiB),
        "plan_kv_cache_mb": round(sum(m.kv_cache for m in plan.models) / MiB),
        "plan_compute_mb": round(sum(m.compute for m in plan.models) / MiB),
        "plan_snapshots_mb": round(plan.snapshot_total / MiB),
        "snapshot_budget_mb": round(budget / MiB),
        "kv_kib_per_token": model.shape.kv_per_token / 1024,
    }


class Enough(Exception):
    """The turns asked for (`--turns`) have been spoken: the debate ends here."""


def second(path: Path) -> Path:
    """A second model of PATH's shape: a hard link to its file under another name, which
    moot loads apart from the first (its own weights, context and snapshots)."""
    other = path.with_name(f"{path.stem}-second{path.suffix}")
    if not other.exists():
        os.link(path, other)
    return other


def one(
    ref: str, *, max_tokens: int, models: int = 1, turns: int | None = None, rates: bool = True
) -> dict[str, Any]:
    """The figures of REF (a .gguf path or a catalog id), MODELS of it, measured in this
    process: the debate to its end, or its first TURNS turns; the raw rates unless not
    RATES."""
    from bench_memory import peak_snapshot_tokens, rulebook_n_ctx
    from bench_peer import resolved_model, seeded_debate
    from bench_roofline import efficiency, ladder, measure, work
    from moot.config import SESSION_CACHE_MB
    from moot.events import TurnFinished

    counts = Counts()
    count_sessions(counts)
    finished: list[Any] = []  # the turns so far, should the debate fail before its end

    def listen(event: Any) -> None:
        if isinstance(event, TurnFinished):
            finished.append(event.turn)
            if turns is not None and len(finished) >= turns:
                raise Enough(f"stopped after {turns} turns")

    refs = [ref] if models == 1 else [ref, str(second(Path(ref)))]
    seats = {} if models == 1 else {"roles": {"proposition": refs[0], "opposition": refs[1]}}
    began = time.perf_counter()
    failed = None
    try:
        # A slow machine's structured turn (a judge's JSON of random words) may take
        # minutes: the call timeout would end the debate, not measure it.
        settings = {"max_tokens": max_tokens, "call_timeout_s": CALL_TIMEOUT_S}
        spoken = seeded_debate(ref, run=settings, progress=True, on_event=listen, **seats).turns
    except Exception as exc:  # the figures of the turns that finished, and why it stopped
        spoken = tuple(finished)
        cut = turns is not None and len(spoken) >= turns  # --turns: not a failure
        failed = None if cut else f"{type(exc).__name__}: {exc}"
    wall = time.perf_counter() - began
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    resolved = [resolved_model(r) for r in refs]
    n_ctx = rulebook_n_ctx(resolved[0].context_length)
    seated = len({t.role for t in spoken})
    plan = planned([r.path for r in resolved], n_ctx=n_ctx, speakers=seated)
    measured = measure(ref, contexts=CONTEXTS, repeats=REPEATS) if rates else None
    done = work(spoken)
    return {
        "failed": failed,
        "models": models,
        "turns_asked": turns,
        "wall_s": round(wall, 1),
        "turns": len(spoken),
        **(efficiency(spoken, measured) if measured is not None else {}),
        "prompt_tokens": done["prompt_tokens"],
        "prompt_evaluated": done["prompt_evaluated"],
        "evaluated_per_prompt_token": (
            round(done["prompt_evaluated"] / done["prompt_tokens"], 3)
            if done["prompt_tokens"]
            else None
        ),
        "completion_tokens": done["completion_tokens"],
        "refused_draws_completion_tokens": done["refused_draws_completion_tokens"],
        **counts.figures(),
        "peak_rss_mb": round(peak_rss / MiB),
        **plan,
        "rss_over_plan": round(peak_rss / (plan["plan_mb"] * MiB), 3),
        "rss_over_plan_models": round(peak_rss / (plan["plan_models_mb"] * MiB), 3),
        "rates": ladder(measured, CONTEXTS) if measured is not None else None,
        # This debate's turns replayed into a session cache sized as each shape's would be.
        "replayed_snapshots": {
            s.name: replayed(spoken, s, budget=SESSION_CACHE_MB * MiB)
            for s in (shapes.SMOLLM2_135M, *shapes.SHAPES.values())
        },
        "peak_snapshot_tokens": peak_snapshot_tokens(spoken),
    }


# -- every shape -------------------------------------------------------------------------


def target(name: str) -> str:
    """What a child process runs NAME as: the shape's file (written first, once), or the
    installed model's id."""
    return name if name == TINY else str(shapes.cached(shapes.SHAPES[name]))


def child(ref: str, *, max_tokens: int, options: Sequence[str] = ()) -> dict[str, Any]:
    """REF's figures from a process of its own (its progress, a line a turn, on stderr as it
    goes; OPTIONS: --models, --turns, --no-rates); a failure is reported, not raised."""
    began = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, __file__, "--one", ref, "--max-tokens", str(max_tokens), *options],
        stdout=subprocess.PIPE,
        text=True,
        check=False,
    )
    if proc.returncode:
        return {"error": f"exit {proc.returncode} (its stderr above)"}
    figures: dict[str, Any] = json.loads(proc.stdout)
    figures["process_s"] = round(time.perf_counter() - began, 1)
    return figures


def run(
    results: dict[str, Any], *, names: Sequence[str], max_tokens: int, options: Sequence[str] = ()
) -> None:
    table: dict[str, Any] = results.setdefault("sizes", {})
    for name in names:
        print(f"sizes: {name}", file=sys.stderr)
        figures = child(target(name), max_tokens=max_tokens, options=options)
        table[name] = {"max_tokens": max_tokens, **figures}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="SHAPE", help=", ".join(NAMES))
    parser.add_argument("--max-tokens", type=int, default=MAX_TOKENS)
    parser.add_argument("--models", type=int, choices=(1, 2), default=1)
    parser.add_argument("--turns", type=int, help="end the debate after its first N turns")
    parser.add_argument("--no-rates", action="store_true", help="skip the raw rates")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a child: one shape, this process
    args = parser.parse_args(argv)
    if args.turns is not None and args.turns < 1:
        parser.error("--turns takes a number of turns, 1 or more")
    if args.one:
        figures = one(
            args.one,
            max_tokens=args.max_tokens,
            models=args.models,
            turns=args.turns,
            rates=not args.no_rates,
        )
        print(json.dumps(figures))
        return
    unknown = [name for name in args.names if name not in NAMES]
    if unknown:
        parser.error(f"no shape {unknown[0]!r}: choose from {', '.join(NAMES)}")
    if args.models == 2 and TINY in (args.names or NAMES):
        parser.error(f"--models 2 takes the shapes ({', '.join(shapes.SHAPES)}), not {TINY}")
    options = ["--models", str(args.models)] + (["--no-rates"] if args.no_rates else [])
    options += ["--turns", str(args.turns)] if args.turns is not None else []
    out: dict[str, Any] = {}
    run(out, names=args.names or NAMES, max_tokens=args.max_tokens, options=options)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
