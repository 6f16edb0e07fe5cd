"""Hostile input to `moot tournament` and moot.tournament: every count has a bound, every
check comes before any output or file, crafted files are refused in one line, and what
motions and model names hold never reaches the terminal as control codes or markup."""

from __future__ import annotations

import io
import json
import os
import shutil
import socket
import sys
from pathlib import Path

import pytest
from rich.console import Console
from rich.progress import Progress
from rich.text import Text

import moot
from conftest import Cli, Result
from moot import models
from moot.errors import UsageError
from moot.events import Notice
from moot.tournaments.plan import Pairing

# Tournaments of placeholder model names: how a reference is checked is tested elsewhere.
pytestmark = pytest.mark.usefixtures("any_model_name")

MOTION = "cats are better than dogs\n"
HOSTILE = ["\x1b[2J", "\x1b]0;t\x07", "[link=file:///etc/passwd]x[/link]"]


def motions(tmp_path: Path, text: str | bytes = MOTION) -> Path:
    path = tmp_path / "m.txt"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def refused(proc: Result, *needles: str) -> None:
    """Exit 2: one error line naming NEEDLES, one hint, nothing on stdout."""
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2, proc.stderr
    assert lines[0].startswith("error:") and lines[1].startswith("hint:"), proc.stderr
    for needle in needles:
        assert needle in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr and "unexpected" not in proc.stderr
    assert "validation error" not in proc.stderr
    assert proc.stdout == ""


def nothing_written(home: Path) -> None:
    assert not home.exists() or list(home.rglob("*")) == []


def tournament(cli: Cli, home: Path, *args: str) -> Result:
    """A dry-run tournament, short: three rounds, ten bootstrap samples unless ARGS say."""
    short = [] if "--bootstrap" in args else ["--bootstrap", "10"]
    return cli("tournament", "--dry-run", "--max-rounds", "3", *short, *args, home=home)


# -- every count has a bound, checked before anything runs ------------------------------------


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--swaps", str(10**100)], ["--swaps", "50"]),
        (["--swaps", "0"], ["--swaps"]),
        (["--bootstrap", str(10**8)], ["--bootstrap", "100000"]),
        (["--bootstrap", str(10**100)], ["--bootstrap"]),
        (["--bootstrap", "-1"], ["--bootstrap"]),
        (["--seed", "-1"], ["--seed"]),
        (["--seed", str(2**32)], ["--seed"]),
        (["--seed", str(10**100)], ["--seed"]),
        ([f"--model=m{i}" for i in range(101)], ["--model", "100"]),
        (["--judge=j"] * 21, ["--judge", "20"]),
        (["--model=a", "--model="], ["--model", "empty"]),
        (["--model=a", "--model=" + "b" * 1001], ["--model", "1,001 characters"]),
        (["--judge=j", "--judge=j"], ["--judge j", "same model"]),
    ],
)
def test_a_count_out_of_bounds_is_refused_before_anything_runs(
    tmp_path: Path, cli: Cli, args: list[str], needles: list[str]
) -> None:
    home = tmp_path / "home"
    models = [] if any(a.startswith("--model") for a in args) else ["--model", "a", "--model", "b"]
    proc = tournament(cli, home, "--motions", str(motions(tmp_path)), *models, *args)
    refused(proc, *needles)
    nothing_written(home)


def test_more_than_a_thousand_motions_are_refused(tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "home"
    path = motions(tmp_path, "".join(f"motion number {i}\n" for i in range(1001)))
    proc = tournament(cli, home, "--motions", str(path), "--model", "a", "--model", "b")
    refused(proc, "1,001 motions", "1,000")
    nothing_written(home)


def test_a_plan_of_too_many_debates_says_how_many_it_would_be(tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "home"
    path = motions(tmp_path, "".join(f"motion number {i}\n" for i in range(500)))
    models = [f"--model=m{i}" for i in range(4)]  # 6 pairs × 500 motions × 2 swaps × 2
    proc = tournament(cli, home, "--motions", str(path), *models, "--swaps", "2")
    refused(proc, "12,000 debates", "10,000")
    nothing_written(home)


def test_the_library_checks_its_counts_before_it_writes(tmp_path: Path) -> None:
    for kw, needle in (({"seed": -1}, "seed"), ({"swaps": 51}, "swaps"),
                       ({"bootstrap": 10**9}, "bootstrap")):  # fmt: skip
        out = tmp_path / "t"
        with pytest.raises(UsageError, match=needle):
            moot.tournament(["a", "b"], ["cats are better"], run={"dry_run": True}, out=out,
                            max_rounds=3, **kw)  # type: ignore[arg-type]  # fmt: skip
        assert not out.exists()


# -- the motions file ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        (b"cats \xff are\n", ["UTF-8"]),
        ("cats are better\n" + "x" * 1001 + "\n", ["line 2", "1000"]),
        ("cats are better\n\n-\n", ["line 3", "no letters or digits"]),
        ("# a comment\n\u200b\u200b\u200b\n", ["line 2", "no letters or digits"]),
        ("# only a comment\n\n", ["no motion"]),
    ],
)
def test_a_motions_file_that_is_not_motions_is_refused_naming_the_line(
    tmp_path: Path, cli: Cli, text: str | bytes, needles: list[str]
) -> None:
    home = tmp_path / "home"
    proc = tournament(cli, home, "--motions", str(motions(tmp_path, text)), "--model", "a",
                      "--model", "b")  # fmt: skip
    refused(proc, "--motions", *needles)
    nothing_written(home)


def test_a_motions_file_that_is_not_a_file_is_refused(tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "home"
    sparse = tmp_path / "sparse.txt"
    with sparse.open("wb") as fh:
        fh.truncate(200 * 1024 * 1024)
    (tmp_path / "folder").mkdir()
    for path, needle in ((Path("/dev/zero"), "not a regular file"), (sparse, "limit"),
                         (tmp_path / "folder", "folder")):  # fmt: skip
        proc = tournament(cli, home, "--motions", str(path), "--model", "a", "--model", "b")
        refused(proc, "--motions", needle)
    nothing_written(home)


def test_a_fifo_as_the_motions_file_is_refused_without_blocking(tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "home"
    fifo = tmp_path / "m.fifo"
    os.mkfifo(fifo)
    proc = cli.subprocess("tournament", "--dry-run", "--motions", str(fifo), "--model", "a",
                          "--model", "b", home=home, timeout=60)  # fmt: skip
    refused(proc, "--motions", "not a regular file")
    nothing_written(home)


# -- options that do not apply ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--ray-address", "127.0.0.1:6379"], ["--ray-address", "--executor ray"]),
        (["--effort", "high"], ["--effort", "oxford"]),
        (["--format", "challenge", "--min-score", "7"], ["--min-score", "challenge"]),
        (["--format", "challenge", "--max-rounds", "4"], ["--max-rounds", "challenge"]),
    ],
)
def test_an_option_that_does_not_apply_is_refused(
    tmp_path: Path, cli: Cli, args: list[str], needles: list[str]
) -> None:
    home = tmp_path / "home"
    proc = cli("tournament", "--dry-run", "--motions", str(motions(tmp_path)), "--model", "a",
               "--model", "b", *args, home=home)  # fmt: skip
    refused(proc, *needles)
    nothing_written(home)


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished dry-run tournament of two debates, copied by the tests that craft it."""
    base = tmp_path_factory.mktemp("finished")
    out = base / "t"
    (base / "m.txt").write_text(MOTION)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(models, "check", lambda ref: None)  # placeholder names, as any_model_name
        result = Cli()("tournament", "--dry-run", "--max-rounds", "3", "--bootstrap", "10",
                       "--model", "a", "--model", "b", "--motions", str(base / "m.txt"),
                       "--out", str(out), "--seed", "5", home=base / "home")  # fmt: skip
    assert result.returncode == 0, result.stderr
    return out


def copy_of(finished: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "t"
    shutil.copytree(finished, folder, symlinks=True)
    return folder


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--seed", "3"], "--seed"),
        (["--format", "oxford"], "--format"),
        (["--lang", "en"], "--lang"),
        (["--n-ctx", "8192"], "--n-ctx"),
        (["--dry-run"], "--dry-run"),
        (["--max-tokens", "30"], "--max-tokens"),
        (["--rounds", "2"], "--rounds"),
        (["--swaps", "1"], "--swaps"),
    ],
)
def test_resume_refuses_every_option_its_plan_fixes(
    finished: Path, tmp_path: Path, cli: Cli, args: list[str], needle: str
) -> None:
    folder = copy_of(finished, tmp_path)
    proc = cli("tournament", "--resume", str(folder), *args, home=tmp_path / "home")
    refused(proc, "--resume", needle)


def test_resume_takes_the_options_the_plan_does_not_fix(
    finished: Path, tmp_path: Path, cli: Cli
) -> None:
    folder = copy_of(finished, tmp_path)
    proc = cli("tournament", "--resume", str(folder), "--bootstrap", "20", "--quiet",
               "--executor", "local", home=tmp_path / "home")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads((folder / "ratings.json").read_text())["bootstrap_samples"] == 20


# -- Ray: not installed, or an address where nothing answers -----------------------------------


def test_ray_not_installed_is_one_line_before_anything_is_written(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray: ImportError
    home = tmp_path / "home"
    proc = cli("tournament", "--dry-run", "--executor", "ray", "--motions",
               str(motions(tmp_path)), "--model", "a", "--model", "b", home=home)  # fmt: skip
    refused(proc, "Ray", "not installed")
    nothing_written(home)


class Ray:
    """Stands in for the ray module; records whether it was asked to connect."""

    def __init__(self) -> None:
        self.inits: list[dict[str, object]] = []

    def init(self, **kw: object) -> None:
        self.inits.append(kw)

    def shutdown(self) -> None:
        pass


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port  # nothing listens on it now: a connection is refused


def test_a_ray_address_that_refuses_connections_fails_at_once_naming_it(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = Ray()
    monkeypatch.setitem(sys.modules, "ray", fake)
    home = tmp_path / "home"
    address = f"127.0.0.1:{closed_port()}"
    proc = cli("tournament", "--dry-run", "--executor", "ray", "--ray-address", address,
               "--motions", str(motions(tmp_path)), "--model", "a", "--model", "b",
               home=home, env={"RAY_ADDRESS": None})  # fmt: skip
    refused(proc, address, "refused")
    assert fake.inits == []  # Ray itself would retry it for many minutes
    nothing_written(home)


def test_the_ray_address_check_connects_with_a_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    from moot.tournaments import ray

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        ray.check_address(f"127.0.0.1:{port}")  # something listens: no error
        ray.check_address(f"ray://127.0.0.1:{port}")
    ray.check_address("auto")  # Ray finds it itself
    with pytest.raises(UsageError, match="HOST:PORT"):
        ray.check_address("no-port-here")
    with pytest.raises(UsageError, match="HOST:PORT"):
        ray.check_address("host:99999999")
    timeouts: list[float] = []

    def hangs(address: tuple[str, int], timeout: float) -> socket.socket:
        timeouts.append(timeout)
        raise TimeoutError

    monkeypatch.setattr(socket, "create_connection", hangs)
    with pytest.raises(UsageError, match=r"10\.0\.0\.5:6379 did not answer"):
        ray.check_address("10.0.0.5:6379")
    assert timeouts and 0 < timeouts[0] <= 30


def test_the_library_refuses_a_ray_address_without_the_ray_executor(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="ray_address"):
        moot.tournament(["a", "b"], ["cats are better"], ray_address="127.0.0.1:1",
                        run={"dry_run": True}, out=tmp_path / "t")  # fmt: skip
    assert not (tmp_path / "t").exists()


# -- crafted tournament folders ---------------------------------------------------------------


def plan_of(folder: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((folder / "tournament.json").read_text())
    return data


def crafted_plans() -> list[tuple[str, str | None, str]]:
    """(name, the text of tournament.json or None for a special file, what the error names)"""
    return [
        ("bad json", "{", "not valid JSON"),
        ("a list", "[]", "tournament plan"),
        ("deep", "[" * 100_000 + "]" * 100_000, "tournament plan"),
        ("wrong types", None, "format"),
        ("seed", None, "seed"),
        ("escaping id", None, "id"),
        ("motion index", None, "motion"),
        ("unknown model", None, "model"),
        ("params", None, "max_rounds"),
        ("options", None, "n_ctx"),
        ("too many debates", None, "debates"),
        ("huge name", None, "models.0"),
    ]


def craft(plan: dict[str, object], name: str) -> dict[str, object]:
    debates = plan["debates"]
    assert isinstance(debates, list)
    if name == "wrong types":
        plan["format"] = 3
    elif name == "seed":
        plan["seed"] = -1
    elif name == "escaping id":
        debates[0]["id"] = "../../escaped"
    elif name == "motion index":
        debates[0]["motion"] = 7
    elif name == "unknown model":
        debates[0]["opposition"] = "nobody"
    elif name == "params":
        plan["params"] = {"max_rounds": 99}
    elif name == "options":
        plan["options"] = {"n_ctx": -5}
    elif name == "huge name":
        plan["models"] = ["a" * 100_000, "b"]
    elif name == "too many debates":
        plan["debates"] = [dict(debates[0], id=f"{i:05d}-x") for i in range(10_001)]
    return plan


@pytest.mark.parametrize(("name", "text", "needle"), crafted_plans())
def test_a_crafted_plan_is_refused_in_one_line(
    finished: Path, tmp_path: Path, cli: Cli, name: str, text: str | None, needle: str
) -> None:
    folder = copy_of(finished, tmp_path)
    plan_file = folder / "tournament.json"
    if text is None:
        text = json.dumps(craft(plan_of(folder), name))
    plan_file.write_text(text)
    proc = cli("tournament", "--resume", str(folder), home=tmp_path / "home")
    refused(proc, "tournament.json", needle)
    assert not (tmp_path / "escaped").exists()


def test_a_plan_that_is_a_symlink_a_folder_or_a_fifo_is_refused(
    finished: Path, tmp_path: Path, cli: Cli
) -> None:
    folder = copy_of(finished, tmp_path)
    plan_file = folder / "tournament.json"
    outside = tmp_path / "outside.json"
    plan_file.rename(outside)
    plan_file.symlink_to(outside)
    refused(cli("tournament", "--resume", str(folder), home=tmp_path / "home"), "symlink")
    plan_file.unlink()
    plan_file.mkdir()
    refused(cli("tournament", "--resume", str(folder), home=tmp_path / "home"), "folder")
    plan_file.rmdir()
    os.mkfifo(plan_file)
    proc = cli.subprocess("tournament", "--resume", str(folder), home=tmp_path / "home",
                          timeout=60)  # fmt: skip
    refused(proc, "not a regular file")
    refused(cli("tournament", "--resume", str(outside), home=tmp_path / "home"), "folder")


@pytest.mark.parametrize(
    ("what", "needle"),
    [
        ("bad json", "not valid JSON"),
        ("a list", "verdict"),
        ("deep", "verdict"),
        ("wrong types", "winner"),
        ("symlink", "symlink"),
        ("folder", "folder"),
        ("fifo", "not a regular file"),
    ],
)
def test_a_crafted_verdict_is_refused_naming_its_file(
    finished: Path, tmp_path: Path, cli: Cli, what: str, needle: str
) -> None:
    folder = copy_of(finished, tmp_path)
    first = sorted((folder / "debates").iterdir())[0]
    verdict = first / "verdict.json"
    good = json.loads(verdict.read_text())
    verdict.unlink()
    if what == "bad json":
        verdict.write_text("{")
    elif what == "a list":
        verdict.write_text("[]")
    elif what == "deep":
        verdict.write_text("[" * 100_000)
    elif what == "wrong types":
        verdict.write_text(json.dumps(dict(good, winner="everyone")))
    elif what == "symlink":
        (tmp_path / "elsewhere.json").write_text(json.dumps(good))
        verdict.symlink_to(tmp_path / "elsewhere.json")
    elif what == "folder":
        verdict.mkdir()
    else:
        os.mkfifo(verdict)
    proc = cli.subprocess("tournament", "--resume", str(folder), home=tmp_path / "home",
                          timeout=60)  # fmt: skip
    refused(proc, "verdict.json", needle)


def test_a_debate_folder_that_is_a_symlink_is_not_written_through(
    finished: Path, tmp_path: Path, cli: Cli
) -> None:
    folder = copy_of(finished, tmp_path)
    first = sorted((folder / "debates").iterdir())[0]
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.rmtree(first)
    first.symlink_to(outside)
    proc = cli("tournament", "--resume", str(folder), home=tmp_path / "home")
    refused(proc, "symlink")
    assert list(outside.iterdir()) == []


def test_a_crafted_transcript_of_a_debate_is_refused(
    finished: Path, tmp_path: Path, cli: Cli
) -> None:
    folder = copy_of(finished, tmp_path)
    first = sorted((folder / "debates").iterdir())[0]
    (first / "verdict.json").unlink()  # so that it is judged again from its transcript
    (first / "transcript.json").write_text("[" * 100_000)
    proc = cli("tournament", "--resume", str(folder), home=tmp_path / "home")
    assert proc.returncode == 1, proc.stderr  # that debate fails; the report still comes
    assert "transcript.json" in proc.stdout and "Traceback" not in proc.stdout + proc.stderr


# -- the terminal -------------------------------------------------------------------------------


def no_control(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text, repr(text)


def test_what_motions_and_model_names_hold_reaches_the_terminal_as_text(
    tmp_path: Path, cli: Cli
) -> None:
    path = motions(tmp_path, "".join(f"cats {h} are better\n" for h in HOSTILE))
    home = tmp_path / "home"
    proc = tournament(cli, home, "--motions", str(path), "--model", HOSTILE[1], "--model",
                      HOSTILE[2])  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    no_control(proc.stdout + proc.stderr)
    assert "\\x1b]0;t\\x07" in proc.stdout  # the model's name, shown as what it is
    # A name with a slash reads as a path: shown by its label, as text (no link is made),
    # and kept whole in the records.
    assert "link]" in proc.stdout and "[link=" not in proc.stdout
    saved = next(ln for ln in proc.stdout.splitlines() if ln.endswith("ratings.json"))
    rated = json.loads(Path(saved.split(None, 1)[1]).read_text(encoding="utf-8"))
    assert HOSTILE[2] in [m["model"] for m in rated["models"]]


def pairing() -> Pairing:
    return Pairing(id="001-motion1-a-vs-b", motion=0, proposition=HOSTILE[2],
                   opposition=HOSTILE[1], swap="m1-1-2", seed=1, judges=["j"],
                   self_judged=False)  # fmt: skip


def test_progress_lines_show_untrusted_text_as_text() -> None:
    from moot.cli.tournament import _Shower
    from moot.events import TurnStarted
    from moot.tournaments.run import DebateBegun, DebateFailed, InDebate

    buffer = io.StringIO()
    console = Console(file=buffer, width=200, force_terminal=False)
    with Progress(console=console) as progress:
        bar = progress.add_task("debates", total=3)
        show = _Shower(progress, bar)
        show(DebateBegun(pairing(), HOSTILE[0]))
        started = TurnStarted(
            index=0, round=1, role="proposition", step="speech", label=HOSTILE[2], streams=True
        )
        show(InDebate(pairing(), started))
        described = progress.tasks[0].description  # the bar's, while the debate runs
        show(InDebate(pairing(), Notice(level="warn", message=f"odd {HOSTILE[2]}")))
        show(DebateFailed(pairing(), f"failed {HOSTILE[0]} {HOSTILE[2]}", "a hint"))
    out = buffer.getvalue()
    no_control(out)
    assert f"odd {HOSTILE[2]}" in out and f"failed \\x1b[2J {HOSTILE[2]}" in out
    no_control(described)  # and its markup escaped: it reads as the names were given
    assert Text.from_markup(described).plain == f"{HOSTILE[2]} vs \\x1b]0;t\\x07 · {HOSTILE[2]}"
    assert progress.tasks[0].description == "debates"  # none running once it failed


def test_a_dollar_in_a_model_name_is_drawn_as_itself(tmp_path: Path, cli: Cli) -> None:
    path = motions(tmp_path)
    proc = tournament(cli, tmp_path / "home", "--motions", str(path), "--model", "$\\foo$",
                      "--model", "b", "--out", str(tmp_path / "t"))  # fmt: skip
    assert proc.returncode == 0, proc.stderr  # no formula to parse: the chart is drawn
    assert (tmp_path / "t" / "ratings.png").stat().st_size > 0
    assert "$\\foo$" in proc.stdout


def test_the_chart_is_not_written_through_a_file_planted_beside_it(
    finished: Path, tmp_path: Path, cli: Cli
) -> None:
    folder = copy_of(finished, tmp_path)
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    (folder / ".ratings.png.tmp").symlink_to(victim)
    proc = cli("tournament", "--resume", str(folder), home=tmp_path / "home")
    assert proc.returncode == 0, proc.stderr
    assert victim.read_text() == "keep me"
    assert (folder / "ratings.png").read_bytes().startswith(b"\x89PNG")


def test_joining_an_address_that_is_no_ray_cluster_gives_up_after_one_try(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moot.formats import get_format
    from moot.tournaments.plan import make_plan, word_motions
    from moot.tournaments.ray import RayExecutor
    from moot.tournaments.run import Tournament

    class NoCluster(Ray):
        def init(self, **kw: object) -> None:
            super().init(**kw)
            raise ConnectionError("Failed to connect to Ray cluster\n  and more besides")

    fake = NoCluster()
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setenv("RAY_gcs_server_port_wait_time_s", "")
    monkeypatch.delenv("RAY_gcs_server_port_wait_time_s")
    fmt = get_format("oxford")
    plan = make_plan(fmt, ["a", "b"], word_motions(["cats win"], fmt), params=fmt.params_type(),
                     seed=1)  # fmt: skip
    t = Tournament.create(plan, tmp_path / "t")
    with socket.socket() as server:  # something answers, and it is no Ray
        server.bind(("127.0.0.1", 0))
        server.listen()
        address = f"127.0.0.1:{server.getsockname()[1]}"
        with pytest.raises(UsageError) as caught:
            RayExecutor(address=address).run(t, t.pending(), lambda e: None)
    assert caught.value.message.startswith(f"could not join the Ray cluster at {address}")
    assert "\n" not in caught.value.message
    assert fake.inits and os.environ["RAY_gcs_server_port_wait_time_s"] == "1"


def test_the_library_resumes_only_as_planned_and_takes_lists_of_models(
    finished: Path, tmp_path: Path
) -> None:
    folder = copy_of(finished, tmp_path)
    with pytest.raises(UsageError, match="fixes seed"):
        moot.tournament(resume=folder, seed=3)
    with pytest.raises(UsageError, match="fixes max_rounds"):
        moot.tournament(resume=folder, max_rounds=4)
    done = moot.tournament(resume=folder, bootstrap=20)
    assert done.report.bootstrap_samples == 20 and done.failed == []
    with pytest.raises(UsageError, match="models is one string"):
        moot.tournament("ab", ["cats are better"], run={"dry_run": True}, out=tmp_path / "x")
    assert not (tmp_path / "x").exists()
