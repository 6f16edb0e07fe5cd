"""A GGUF's embedded chat template is code from the internet: moot checks it before llama.cpp
ever sees the file, refuses a broken or hostile one by name, and never runs it."""

from __future__ import annotations

import struct
from pathlib import Path

import jinja2
import pytest

from conftest import Cli, Result, real_model_path
from gguf_samples import ARRAY, STRING, UINT32, gguf_string, kv, make_gguf, write_gguf
from moot import prompts
from moot.errors import ModelIntegrityError
from moot.inference.chat_template import chat_template_problem, render_chat_template
from moot.models import gguf_check, store

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
BROKEN = "{% for m in messages %}{{ m['content'] }"  # the block is never closed


def payload(marker: Path) -> str:
    """A template that creates MARKER when rendered outside a sandbox."""
    return "{{ lipsum.__globals__['os'].mkdir('" + str(marker) + "') }}" + CHATML


# -- the check itself --------------------------------------------------------------------


def test_the_payload_is_live_outside_a_sandbox(tmp_path: Path) -> None:
    # What the tests below refuse would really run: plain jinja2 executes it.
    marker = tmp_path / "ran"
    jinja2.Environment().from_string(payload(marker)).render(messages=[])
    assert marker.is_dir()


@pytest.mark.parametrize(
    "template",
    [
        CHATML,
        "{{ bos_token }}{% for m in messages %}{% if m.role == 'system' %}"
        "{{ raise_exception('System role not supported') }}{% endif %}"
        "{{ m.content }}{% endfor %}",  # refuses a persona on purpose: not a failure
        "{% for m in messages %}{% generation %}{{ m.content }}{% endgeneration %}"
        "{% if loop.last %}{% break %}{% endif %}{% endfor %}{{ '-' * 3 }}{{ 2 ** 8 }}",
        "{{ messages | tojson(indent=2) }}{{ strftime_now('%Y') }}",
    ],
)
def test_ordinary_templates_pass(template: str) -> None:
    assert chat_template_problem(template) is None


@pytest.mark.real
def test_a_real_models_own_template_passes() -> None:
    info = gguf_check.check(real_model_path("smollm2-135m"))
    assert set(info.chat_templates) == {"tokenizer.chat_template"}
    assert chat_template_problem(info.chat_template or "") is None


@pytest.mark.parametrize("template", [BROKEN, "{{ x", "{% if %}", "{% endfor %}"])
def test_a_template_that_does_not_parse_is_broken(template: str) -> None:
    problem = chat_template_problem(template)
    assert problem is not None and problem.kind == "broken"


@pytest.mark.parametrize(
    ("template", "says"),
    [
        ("{{ ''.__class__.__mro__ }}", "private attribute"),
        ("{% if false %}{{ cycler.__init__ }}{% endif %}", "'__init__'"),  # never reached
        ("{{ messages[0]['__dict__'] }}", "'__dict__'"),
        ("{{ ''|attr('__class__') }}", "'__class__'"),
        ("{{ ''|attr('__cla' ~ 'ss__') }}", "computes"),
        # Past the static scan, the sandbox stops it while rendering a sample chat.
        ("{% set n = '__cla' ~ 'ss__' %}{{ (''[n]).mro }}", "sandbox"),
        ("{{ 'a' * 1000000 * 1000000 }}", "repeated"),
        ("{{ 9 ** 999999 }}", "exponent"),
    ],
)
def test_a_template_reaching_for_internals_is_unsafe(template: str, says: str) -> None:
    problem = chat_template_problem(template)
    assert problem is not None and problem.kind == "unsafe" and says in problem.detail


def test_a_template_that_cannot_format_a_chat_fails() -> None:
    problem = chat_template_problem("{{ nothing.here }}")
    assert problem is not None and problem.kind == "fails"
    assert chat_template_problem("{{ nothing.here }}", rendered=False) is None


# -- bounded rendering of a model's chat template ----------------------------------------


def test_a_chat_template_with_nested_loops_is_stopped_without_ballooning() -> None:
    bomb = (
        "{% for i in range(100000) %}{% for j in range(100000) %}xxxxxxxxxxxxxxxxxxxx"
        "{% endfor %}{% endfor %}" + CHATML
    )
    problem = chat_template_problem(bomb)
    assert problem is not None and problem.kind == "unsafe"
    assert "rendered more than" in problem.detail


def test_a_chat_template_that_spins_is_stopped_in_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prompts, "RENDER_SECONDS", 0.05)
    spin = "{% set s = 'x' * 100000 %}{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}"
    problem = chat_template_problem(spin + CHATML)
    assert problem is not None and "ran past moot's limit of 0.05 s" in problem.detail


@pytest.mark.parametrize(
    "template",
    [
        "{{" + "(" * 5000 + "1" + ")" * 5000 + "}}",
        "{% for x in [1] %}" * 30 + "{% endfor %}" * 30,
    ],
    ids=["deep-expression", "deep-blocks"],
)
def test_a_chat_template_too_deep_to_compile_is_broken(template: str) -> None:
    problem = chat_template_problem(template)
    assert problem is not None and problem.kind == "broken"


def test_strftime_now_cannot_be_asked_for_a_huge_field() -> None:
    problem = chat_template_problem("{{ strftime_now('%1000000000Y') }}" + CHATML)
    assert problem is not None and "strftime_now" in problem.detail


def test_render_chat_template_renders_and_bounds() -> None:
    text = render_chat_template(CHATML, [{"role": "user", "content": "hi"}])
    assert text == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    with pytest.raises(ModelIntegrityError, match="rendered more than"):
        render_chat_template(
            "{% for i in range(100000) %}{{ messages[0].content * 1000 }}{% endfor %}",
            [{"role": "user", "content": "hi"}],
        )


# -- the header keeps every template ---------------------------------------------------


def _gguf_with(extra: list[bytes], tmp_path: Path) -> Path:
    base = make_gguf(arch="qwen2", chat_template=CHATML)
    n_kv = struct.unpack_from("<Q", base, 16)[0]
    data = base[:16] + struct.pack("<Q", n_kv + len(extra)) + base[24:] + b"".join(extra)
    path = tmp_path / "variants.gguf"
    path.write_bytes(data)
    return path


def test_the_header_keeps_every_template_and_flags_unreadable_ones(tmp_path: Path) -> None:
    bad_utf8 = gguf_string("x").replace(b"x", b"\xff")
    path = _gguf_with(
        [
            kv("tokenizer.chat_template.tool_use", STRING, gguf_string("{{ tools }}")),
            kv("tokenizer.chat_template.rag", STRING, bad_utf8),
            kv("tokenizer.chat_template.count", UINT32, struct.pack("<I", 5)),
            kv(
                "tokenizer.chat_template.list",
                ARRAY,
                struct.pack("<IQ", STRING, 1) + gguf_string("{{ x }}"),
            ),
        ],
        tmp_path,
    )
    info = gguf_check.check(path)
    assert info.chat_templates == {
        "tokenizer.chat_template": CHATML,
        "tokenizer.chat_template.tool_use": "{{ tools }}",
        "tokenizer.chat_template.rag": None,
        "tokenizer.chat_template.count": None,
        "tokenizer.chat_template.list": None,
    }
    with pytest.raises(ModelIntegrityError, match="cannot check it"):
        store.resolve(str(path))


# -- resolving refuses before llama.cpp sees the file ------------------------------------


def test_resolve_refuses_a_malicious_or_broken_template(tmp_path: Path, moot_home: Path) -> None:
    marker = tmp_path / "ran"
    evil = write_gguf(tmp_path / "evil.gguf", arch="qwen2", chat_template=payload(marker))
    with pytest.raises(ModelIntegrityError, match="malicious") as caught:
        store.resolve(str(evil))
    assert str(evil) in caught.value.message and "--chat-format" in caught.value.hint
    broken = write_gguf(tmp_path / "broken.gguf", arch="qwen2", chat_template=BROKEN)
    with pytest.raises(ModelIntegrityError, match="broken") as caught:
        store.resolve(str(broken))
    assert str(broken) in caught.value.message and "intact copy" in caught.value.hint
    assert not marker.exists()


def test_a_broken_named_variant_is_refused_too(tmp_path: Path, moot_home: Path) -> None:
    # llama-cpp-python compiles every embedded template on load, used or not.
    path = _gguf_with(
        [kv("tokenizer.chat_template.tool_use", STRING, gguf_string(BROKEN))], tmp_path
    )
    with pytest.raises(ModelIntegrityError, match=r"tool_use is broken"):
        store.resolve(str(path))


# -- through the command line ------------------------------------------------------------


def assert_one_line_error(proc: Result, *needles: str) -> None:
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2, proc.stderr
    assert lines[0].startswith("error:") and lines[1].startswith("hint:")
    for needle in needles:
        assert needle in proc.stderr


def test_the_cli_refuses_a_malicious_template_and_never_runs_it(tmp_path: Path, cli: Cli) -> None:
    home, marker = tmp_path / "home", tmp_path / "ran"
    hub = {"HF_HOME": str(home / "hf")}
    evil = write_gguf(tmp_path / "evil.gguf", arch="qwen2", chat_template=payload(marker))

    added = cli("models", "add", "evil", str(evil), home=home, env=hub)
    assert_one_line_error(added, str(evil), "malicious", "--chat-format")
    listed = cli("models", "list", "--json", home=home, env=hub)
    assert '"evil"' not in listed.stdout  # nothing was registered

    ran = cli("run", "tea is better than coffee", "--model", str(evil), "--yes", home=home, env=hub)
    assert_one_line_error(ran, str(evil), "malicious")
    assert not marker.exists()

    # Named explicitly, a chat format replaces the file's template, which is then never used.
    trusted = cli("models", "add", "evil", str(evil), "--chat-format", "chatml", home=home, env=hub)
    assert trusted.returncode == 0, trusted.stderr
    info = cli("models", "info", "evil", "--json", home=home, env=hub)
    assert info.returncode == 0 and '"chat_format": "chatml"' in info.stdout
    assert not marker.exists()


def test_the_cli_refuses_a_broken_template(tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "home"
    hub = {"HF_HOME": str(home / "hf")}
    broken = write_gguf(tmp_path / "broken.gguf", arch="qwen2", chat_template=BROKEN)
    for args in (
        ("models", "add", "broken", str(broken)),
        # llama.cpp could not even load it: no chat format gets past a template that fails to parse
        ("models", "add", "broken", str(broken), "--chat-format", "chatml"),
        ("run", "tea is better than coffee", "--model", str(broken), "--yes"),
    ):
        proc = cli(*args, home=home, env=hub)
        assert_one_line_error(proc, str(broken), "broken", "intact copy")
