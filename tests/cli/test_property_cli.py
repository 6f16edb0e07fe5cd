"""Generated arguments, motions and files thrown at every subcommand, in --dry-run: whatever
comes in, moot ends with 0 or a usage error (1 only where documented), never a traceback or
"unexpected", prints no control character, writes only where the command may, and neither
hangs nor balloons. A fixed budget of examples, the same ones on every run."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import Cli, Result

EXAMPLES = int(os.environ.get("MOOT_PROPERTY_EXAMPLES", "150"))  # per test: a fixed budget
SECONDS = 60  # an example still running after this has hung
GROWTH_KIB = 1024 * 1024  # an example that grows the process by a GiB has ballooned

HOSTILE = [
    "\x1b[2J",
    "\x1b]0;title\x07",
    "\x9b31m",
    "[link=file:///etc/passwd]x[/link]",
    "[blink]b[/blink]",
    "\u200b",
    "\u202e",
    "\x00",
    "\r",
    "-",
    "--seed",
    "~",
    "{{ 7 * 7 }}",
    "{% include 'x.j2' %}",
    "雨",
]
MOTIONS = ["tea is better than coffee", "城市应当禁止汽车", "cities should ban cars"]
hostile = st.lists(st.sampled_from(HOSTILE), min_size=1, max_size=4).map("".join)
text = st.one_of(
    st.text(max_size=40),
    hostile,
    st.sampled_from([*MOTIONS, "", " "]),
    st.tuples(st.sampled_from(MOTIONS), hostile).map(" ".join),  # words, and worse
    st.tuples(st.sampled_from(MOTIONS), hostile).map(" ".join),
)
number = st.one_of(
    st.sampled_from(["-1", "0", "1", "2", "3", str(10**100), str(2**63), "nan", "inf", "abc", ""]),
    st.integers(min_value=-5, max_value=5).map(str),
    st.integers(min_value=0, max_value=3).map(str),
)
FILE_KINDS = ["missing", "empty", "bytes", "json", "fifo", "dir", "symlink", "devzero"]


@dataclass
class Sandbox:
    root: Path
    home: Path  # MOOT_HOME and HOME: the command may write here
    work: Path  # the working folder: nothing may appear here but under out/

    def file(self, kind: str, data: bytes, name: str = "input") -> str:
        path = self.work / name
        if kind == "missing":
            return str(path)
        if kind == "devzero":
            return "/dev/zero"
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "dir":
            path.mkdir()
        elif kind == "symlink":
            path.symlink_to("/etc/passwd")
        elif kind == "json":
            path.write_bytes(b'{"motion": "x", "turns": [' + data + b"]}")
        else:
            path.write_bytes(b"" if kind == "empty" else data)
        return str(path)

    def models(self, *names: str) -> None:
        """Small valid GGUF files (no weights) in the working folder, for a dry run to check."""
        from gguf_samples import write_gguf

        template = "{% for m in messages %}{{ m.content }}{% endfor %}"
        for name in names:
            write_gguf(self.work / f"{name}.gguf", name=name, chat_template=template)

    def snapshot(self) -> set[str]:
        return {str(p.relative_to(self.work)) for p in self.work.rglob("*")}


@contextmanager
def sandbox() -> Iterator[Sandbox]:
    root = Path(tempfile.mkdtemp(prefix="moot-prop-"))
    (root / "home").mkdir()
    (root / "work").mkdir()
    cwd = os.getcwd()
    os.chdir(root / "work")
    try:
        yield Sandbox(root, root / "home", root / "work")
    finally:
        os.chdir(cwd)
        for folder, dirs, _ in os.walk(root):
            for d in dirs:
                p = Path(folder) / d
                if not p.is_symlink():
                    os.chmod(p, stat.S_IRWXU)
        shutil.rmtree(root, ignore_errors=True)


def _hung(signum: int, frame: object) -> None:
    raise AssertionError(f"moot ran past {SECONDS} s: it hangs")


def run(cli: Cli, box: Sandbox, args: list[str], *, may_fail: bool = False) -> Result:
    before = box.snapshot()
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    signal.signal(signal.SIGALRM, _hung)
    signal.alarm(SECONDS)
    try:
        proc = cli(*args, home=box.home)
    finally:
        signal.alarm(0)
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - grown
    shown = proc.stdout + proc.stderr
    allowed = {0, 2} | ({1} if may_fail else set())
    assert proc.returncode in allowed, (args, proc.returncode, proc.stderr[-2000:])
    assert "error: unexpected" not in shown and "意外的错误" not in shown, (
        args,
        proc.stderr[-2000:],
    )
    assert "Traceback" not in shown, (args, proc.stderr[-2000:])
    controls = [c for c in shown if (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]
    assert not controls, (args, sorted(set(controls)))
    if proc.returncode == 2:
        # A Chinese debate's own error is said in Chinese.
        assert proc.stderr.lstrip().startswith(("error:", "错误：")), (args, proc.stderr[-2000:])
    made = {p for p in box.snapshot() - before if p != "out" and not p.startswith("out/")}
    assert not made, (args, made)
    assert grown < GROWTH_KIB, (args, f"grew by {grown // 1024} MiB")
    from hypothesis import event

    event(f"exit {proc.returncode}")
    return proc


SETTINGS = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

FORMAT_OPTIONS = {
    "oxford": ["--min-score", "--max-rounds", "--judge-rubric"],
    "decision": ["--rounds", "--preset", "--positions", "--out-of-scope"],
    "challenge": ["--rounds", "--effort"],
    "adversarial": ["--rounds", "--continue", "--evidence"],
}
RUN_OPTIONS = [
    "--min-score", "--max-rounds", "--rounds", "--preset", "--positions", "--out-of-scope",
    "--effort", "--continue", "--seed", "--max-tokens", "--n-ctx", "--gpu-layers",
    "--call-timeout", "--model", "--role", "--temperature", "--lang", "--out", "--prompts",
    "--judge-rubric", "--evidence",
]  # fmt: skip
FILE_OPTIONS = {"--continue", "--prompts", "--evidence"}


@st.composite
def run_args(draw: st.DrawFn) -> tuple[list[str], str, bytes]:
    fmt = draw(st.sampled_from([*FORMAT_OPTIONS, "parliament"]))
    args = ["run", draw(text), "--format", fmt, "--dry-run", "--quiet", "--yes"]
    budget = {"oxford": ["--max-rounds", "3"], "decision": ["--rounds", "0"]}
    budget |= {"challenge": ["--rounds", "1"], "adversarial": ["--rounds", "1"]}
    names = draw(st.lists(st.sampled_from(RUN_OPTIONS), max_size=2))
    for name in names:
        if name in FILE_OPTIONS:
            args += [name, "input"]
        elif name == "--out":
            args += [name, draw(st.sampled_from(["out", "", "~/out", "/", "input"]))]
        elif name in ("--role", "--temperature"):
            role = draw(st.sampled_from(["judge", "proposition", "king", ""]))
            args += [name, f"{role}={draw(number if name == '--temperature' else text)}"]
        elif name in ("--model", "--lang", "--preset", "--effort", "--positions"):
            args += [name, draw(text)]
        elif name == "--judge-rubric":
            args += [name, draw(st.one_of(st.sampled_from(["checklist", "score"]), text))]
        else:
            args += [name, draw(number)]
    if not set(names) & {"--rounds", "--max-rounds"}:
        args += budget.get(fmt, [])
    if "--out" not in names:
        args.append("--no-save")
    return args, draw(st.sampled_from(FILE_KINDS)), draw(st.binary(max_size=200))


@SETTINGS
@given(case=run_args())
def test_run_takes_anything_without_a_traceback(cli: Cli, case: tuple[list[str], str, bytes]):
    args, kind, data = case
    with sandbox() as box:
        box.file(kind, data)
        run(cli, box, args, may_fail="--model" in args)  # 1: a file that is no GGUF


@st.composite
def tournament_args(draw: st.DrawFn) -> tuple[list[str], str, bytes]:
    args = ["tournament", "--dry-run", "--quiet", "--motions", "input"]
    args += ["--model", "a.gguf", "--model", draw(st.sampled_from(["b.gguf", "a.gguf", "", "c"]))]
    options = ["--swaps", "--bootstrap", "--seed", "--orders", "--margin"]
    for name in draw(st.lists(st.sampled_from(options), max_size=2)):
        args += [name, draw(number)]
    args += draw(st.sampled_from([[], [], ["--format", "challenge"], ["--effort", "low"]]))
    extra = [[], [], [], ["--ray-address", "127.0.0.1:1"], ["--resume", "input"]]
    args += draw(st.sampled_from(extra))
    args += ["--out", "out"]
    lines = draw(st.lists(text, min_size=0, max_size=3))
    data = "\n".join(lines).encode("utf-8", "surrogatepass")
    data += draw(st.sampled_from([b"", b"", b"\n", b"\xff\xfe", b"\x00"]))
    return args, draw(st.sampled_from([*FILE_KINDS, "bytes", "bytes", "bytes"])), data


@SETTINGS
@given(case=tournament_args())
def test_tournament_takes_anything_without_a_traceback(
    cli: Cli, case: tuple[list[str], str, bytes]
) -> None:
    args, kind, data = case
    with sandbox() as box:
        box.file(kind, data)
        box.models("a", "b")
        run(cli, box, args)


@st.composite
def record_args(draw: st.DrawFn) -> tuple[list[str], str, bytes]:
    command = draw(
        st.sampled_from(
            [
                ["replay", "input"],
                ["resume", "input"],
                ["history", "show", "input"],
                ["history", "show", "input", "--full"],
                ["history", "export", "input"],
                ["history", "export", "input", "--html"],
                ["history", "rm", "input"],
                ["history", "rm", "input", "--all"],
                ["history", "list"],
                ["models", "info", "input"],
                ["models", "add", "name", "input"],
                ["models", "rm", "input"],
                ["models", "list"],
            ]
        )
    )
    nested = draw(st.integers(min_value=0, max_value=3)) * 20_000
    data = draw(
        st.one_of(
            st.binary(max_size=300),
            st.just(b"[" * nested + b"]" * nested),
            st.sampled_from([b'{"dry_run": "yes"}', b'{"params": []}', b"GGUF\x03\x00\x00\x00"]),
        )
    )
    return command, draw(st.sampled_from(FILE_KINDS)), data


@SETTINGS
@given(case=record_args())
def test_files_given_to_any_command_are_read_safely(
    cli: Cli, case: tuple[list[str], str, bytes]
) -> None:
    args, kind, data = case
    with sandbox() as box:
        box.file(kind, data)
        if kind != "dir":  # a folder of one's own, given as a debate folder
            (box.work / "folder").mkdir()
        # replay: 1 is a replay that differs; models: a file that fails its header check.
        run(cli, box, args, may_fail=args[0] in ("replay", "models"))
