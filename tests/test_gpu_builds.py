"""GPU builds that say what they are: `make install GPU=…` builds llama.cpp's backend or
refuses one it does not know; a --gpu-layers this build cannot honour is said, once (by a
debate and by a tournament); and `moot models list` names the build (its --json too)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, Cli
from gguf_samples import write_gguf
from moot.events import Notice
from moot.inference.llama import build as builds
from moot.inference.llama.build import Build

GPUS = {
    "cpu": "",
    "cuda": "-DGGML_CUDA=on",
    "metal": "-DGGML_METAL=on",
    "vulkan": "-DGGML_VULKAN=on",
}


def make(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`make -n ARGS` on a copy of the Makefile in a folder with no .venv: what it would run."""
    assert shutil.which("make"), "these tests need GNU make"
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(REPO / name, tmp_path / name)
    return subprocess.run(
        ["make", "-n", *args], cwd=tmp_path, capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize("gpu", ["nonsense", "CUDA", "cuda metal"])
def test_make_refuses_a_backend_it_does_not_build_with_the_list(tmp_path: Path, gpu: str) -> None:
    done = make(tmp_path, f"GPU={gpu}", "install")
    assert done.returncode == 2, done.stdout
    assert f"GPU={gpu} is not a backend" in done.stderr
    assert "use one of: cpu cuda metal vulkan" in done.stderr
    assert "pip" not in done.stdout  # refused before anything would run


@pytest.mark.parametrize("gpu", list(GPUS))
def test_each_backend_is_built_with_its_cmake_flag(tmp_path: Path, gpu: str) -> None:
    done = make(tmp_path, f"GPU={gpu}", ".venv/.installed-stamp")
    assert done.returncode == 0, done.stderr
    builds_llama = [line for line in done.stdout.splitlines() if "CMAKE_ARGS=" in line]
    assert builds_llama and all(f'CMAKE_ARGS="$CMAKE_ARGS {GPUS[gpu]}"' in x for x in builds_llama)
    # What was built is recorded, so that another GPU= rebuilds it.
    assert f"echo {gpu} > .venv/.llama-built" in done.stdout
    # A GPU build is never taken from (or left in) pip's wheel cache: that wheel is the CPU's.
    fresh = "--no-cache-dir" in done.stdout.split("installing moot")[0]
    assert fresh == (gpu != "cpu")


def test_the_default_is_the_cpu_build(tmp_path: Path) -> None:
    done = make(tmp_path, ".venv/.installed-stamp")
    assert done.returncode == 0 and "echo cpu > .venv/.llama-built" in done.stdout


def test_the_backends_are_read_from_llama_cpps_system_information() -> None:
    cpu = "CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | "
    cuda = "CUDA : ARCHS = 890 | USE_GRAPHS = 1 | PEER_MAX_BATCH_SIZE = 128 | " + cpu
    assert builds.backends(cpu) == ("CPU",)
    assert builds.backends(cuda) == ("CUDA", "CPU")
    assert Build("0.3.36", True, ("CUDA", "CPU")).backend == "cuda"
    assert Build("0.3.36", True, ("Metal", "BLAS", "CPU")).backend == "metal"
    assert Build("0.3.36", False, ("CPU",)).backend == "cpu"
    assert Build(None, False, ()).backend == "none"


def notices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, motion: str, layers: int
) -> list[str]:
    """The notices a debate with --gpu-layers LAYERS says before any model loads."""
    from moot.debates.runner import DebateRun
    from moot.debates.settings import prepare, settings
    from moot.inference import pool

    template = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    path = write_gguf(tmp_path / "m.gguf", chat_template=template)
    monkeypatch.setattr(pool.ModelPool, "get", lambda self, ref: None)
    chosen = settings(motion=motion, models=(str(path),), run={"gpu_layers": layers})
    said: list[str] = []
    debate = DebateRun(
        prepare(chosen, out_dir=None),
        listeners=[lambda e: said.append(e.message) if isinstance(e, Notice) else None],
    )
    debate._machines(debate.refs())
    return said


def test_gpu_layers_on_a_build_that_cannot_offload_is_said_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert not builds.build().gpu_offload  # this machine's build: no GPU
    [said] = notices(tmp_path, monkeypatch, motion="Cities should ban cars", layers=-1)
    assert said.startswith("--gpu-layers -1 does nothing here: this llama.cpp build (")
    assert "every layer runs on the CPU" in said and "make install GPU=cuda" in said
    [zh] = notices(tmp_path, monkeypatch, motion="城市应该禁止汽车吗", layers=8)
    assert zh.startswith("--gpu-layers 8 在此无效") and "CPU" in zh
    assert notices(tmp_path, monkeypatch, motion="Cities should ban cars", layers=0) == []
    monkeypatch.setattr(builds, "build", lambda: Build("0.3.36", True, ("CUDA", "CPU")))
    assert notices(tmp_path, monkeypatch, motion="Cities should ban cars", layers=-1) == []


def test_models_list_names_the_build(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    built = builds.build()
    listed = cli("models", "list")
    assert listed.returncode == 0, listed.stderr
    last = listed.stdout.strip().splitlines()[-1]
    if built.version is None:
        assert last == "llama.cpp: llama-cpp-python is not installed (`make install`)"
    else:
        assert last == f"llama.cpp: cpu build (no GPU offload), llama-cpp-python {built.version}"
    monkeypatch.setattr(builds, "build", lambda: Build("0.3.36", True, ("CUDA", "CPU")))
    shown = cli("models", "list").stdout.strip().splitlines()[-1]
    assert shown == "llama.cpp: cuda build (GPU offload), llama-cpp-python 0.3.36"


def test_moot_run_json_reports_the_build(cli: Cli, tmp_path: Path) -> None:
    done = cli(
        "run", "Cities should ban cars", "--dry-run", "--json", "--yes", "--out",
        str(tmp_path / "debate"), home=tmp_path / "home",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)  # stdout is the JSON alone
    assert result["llama_cpp"] == builds.build().as_dict()
    assert result["llama_cpp"]["gpu_offload"] is False
    assert result["saved"] == str(tmp_path / "debate" / "transcript.json")
    saved = json.loads(Path(result["saved"]).read_text(encoding="utf-8"))
    assert result["transcript"]["turns"] == saved["turns"] and saved["format"] == "oxford"
    unsaved = json.loads(
        cli("run", "Cities should ban cars", "--dry-run", "--json", "--no-save", "--yes").stdout
    )
    assert unsaved["saved"] is None and unsaved["transcript"]["motion"]


def test_models_list_json_reports_the_build_beside_the_models(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed = cli("models", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    data = json.loads(listed.stdout)
    assert set(data) == {"models", "llama_cpp"}
    assert any(row["id"] == "smollm2-135m" for row in data["models"])  # the catalog's rows
    built = builds.build()
    assert data["llama_cpp"] == {
        "backend": "cpu" if built.version else "none",
        "gpu_offload": False,
        "backends": list(built.backends),
        "llama_cpp_python": built.version,
    }
    # What llama.cpp reports is what is said: a CUDA build as one.
    monkeypatch.setattr(builds, "build", lambda: Build("0.3.36", True, ("CUDA", "CPU")))
    cuda = json.loads(cli("models", "list", "--json").stdout)["llama_cpp"]
    assert cuda == {
        "backend": "cuda",
        "gpu_offload": True,
        "backends": ["CUDA", "CPU"],
        "llama_cpp_python": "0.3.36",
    }


def scripted_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Two model files a tournament plans with as it would with any (the plan reads their
    headers), each debate played by scripted stand-ins for them: no layer is loaded, so
    what is said of --gpu-layers is said before any model would load."""
    from moot.inference.scripted import EchoModel
    from moot.tournaments import run as tournament_run

    template = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    paths = [write_gguf(tmp_path / f"{n}.gguf", chat_template=template) for n in "ab"]
    echo = lambda ref: EchoModel(model_id=f"echo:{ref}")  # noqa: E731
    monkeypatch.setattr(tournament_run, "echo_models", lambda plan: echo)
    return [str(p) for p in paths]


def test_a_tournament_says_once_that_gpu_layers_does_nothing_here(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert not builds.build().gpu_offload  # this machine's build: no GPU
    a, b = scripted_files(tmp_path, monkeypatch)

    def tournament(motion: str, name: str, *args: str) -> str:
        (tmp_path / f"{name}.txt").write_text(f"{motion}\n", encoding="utf-8")
        done = cli("tournament", "--model", a, "--model", b, "--motions",
                   str(tmp_path / f"{name}.txt"), "--max-rounds", "3", "--seed", "4",
                   "--bootstrap", "20", "--out", str(tmp_path / name), *args,
                   home=tmp_path / "home")  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert len(list((tmp_path / name).glob("debates/*/verdict.json"))) == 2  # both played
        return done.stdout + done.stderr

    # Two debates, said once: before the first, not by each.
    said = tournament("Cities should ban cars", "en", "--gpu-layers", "-1")
    assert said.count("--gpu-layers -1 does nothing here: this llama.cpp build (cpu)") == 1
    assert "every layer runs on the CPU" in said and "make install GPU=cuda" in said
    assert said.index("does nothing here") < said.index("✓ 00")
    zh = tournament("城市应该禁止汽车吗", "zh", "--gpu-layers", "8")
    assert zh.count("--gpu-layers 8 在此无效") == 1 and "does nothing" not in zh
    assert "在此无效" not in tournament("Cities should ban cars", "none", "--gpu-layers", "0")
    quiet = tournament("Cities should ban cars", "quiet", "--gpu-layers", "4", "--quiet")
    assert quiet.count("--gpu-layers 4 does nothing here") == 1  # with --quiet too, on stderr
    assert "✓ 00" not in quiet
    monkeypatch.setattr(builds, "build", lambda: Build("0.3.36", True, ("CUDA", "CPU")))
    assert "does nothing" not in tournament("Cities should ban cars", "cuda", "--gpu-layers", "-1")


def test_the_python_tournament_tells_its_listener_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import moot
    from moot.tournaments.run import DebateDone

    models = scripted_files(tmp_path, monkeypatch)
    heard: list[object] = []
    result = moot.tournament(models, ["城市应该禁止汽车吗"], max_rounds=3, seed=4, bootstrap=20,
                             run={"gpu_layers": -1}, out=tmp_path / "t",
                             on_event=heard.append)  # fmt: skip
    assert not result.failed and sum(isinstance(e, DebateDone) for e in heard) == 2
    notices = [e for e in heard if isinstance(e, Notice)]
    assert len(notices) == 1 and notices[0].level == "warn"
    assert notices[0].message.startswith("--gpu-layers -1 在此无效：这个 llama.cpp 构建（cpu）")
    assert heard.index(notices[0]) == 0  # before the first debate begins
