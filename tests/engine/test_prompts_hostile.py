"""A prompt pack is a folder a user names: moot reads only the pack's own regular files, and
every render is bounded in time, work and size, so a hostile template is refused by name
instead of hanging or filling memory (a model's chat template, rendered in the same bounds:
tests/inference/test_chat_templates.py)."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from conftest import Cli
from moot import prompts
from moot.errors import PromptPackError
from moot.formats.oxford import flow as oxford
from moot.prompts import builtin_root, load_pack


def _pack(tmp_path: Path) -> Path:
    root = tmp_path / "pack"
    shutil.copytree(builtin_root() / "en" / "oxford", root / "en" / "oxford")
    return root


def _validate(root: Path) -> None:
    load_pack("en", "oxford", root=root).validate(oxford.STEPS, oxford.sample_variables())


def _judge(root: Path) -> Path:
    return root / "en" / "oxford" / "judge.j2"


# -- what a pack may read ----------------------------------------------------------------


def test_a_symlinked_template_is_refused_by_name(tmp_path: Path) -> None:
    root = _pack(tmp_path)
    _judge(root).unlink()
    _judge(root).symlink_to("/etc/passwd")
    with pytest.raises(PromptPackError, match=r"judge\.j2 is a symlink") as caught:
        _validate(root)
    assert caught.value.exit_code == 2


def test_a_symlinked_template_is_not_sent_through_the_command_line(
    tmp_path: Path, moot_home: Path, cli: Cli
) -> None:
    root = _pack(tmp_path)
    _judge(root).unlink()
    _judge(root).symlink_to("/etc/passwd")
    done = cli("run", "cats are better than dogs", "--dry-run", "--prompts", str(root))
    assert done.returncode == 2
    assert "judge.j2 is a symlink" in done.stderr
    assert "root:" not in done.stdout + done.stderr


@pytest.mark.parametrize("inside", [False, True])
def test_a_symlinked_folder_in_the_pack_is_refused(tmp_path: Path, inside: bool) -> None:
    root = _pack(tmp_path)
    real = root / "en" / "oxford"
    moved = tmp_path / "elsewhere" if not inside else root / "en" / "kept"
    shutil.move(real, moved)
    real.symlink_to(moved, target_is_directory=True)
    with pytest.raises(PromptPackError, match=r"oxford is a symlink"):
        _validate(root)


def test_an_include_through_a_symlinked_subfolder_is_refused(tmp_path: Path) -> None:
    root = _pack(tmp_path)
    (root / "en" / "oxford" / "sub").mkdir()
    (root / "en" / "oxford" / "sub" / "etc").symlink_to("/etc", target_is_directory=True)
    _judge(root).write_text('{% include "sub/etc/passwd" %}')
    with pytest.raises(PromptPackError, match=r"sub/etc is a symlink"):
        _validate(root)


def test_an_include_cannot_climb_out_of_the_pack(tmp_path: Path) -> None:
    root = _pack(tmp_path)
    _judge(root).write_text('{% include "../../../../../../etc/passwd" %}')
    with pytest.raises(PromptPackError, match="not in the pack"):
        _validate(root)


def test_a_fifo_template_does_not_block(tmp_path: Path) -> None:
    root = _pack(tmp_path)
    _judge(root).unlink()
    os.mkfifo(_judge(root))
    outcome: list[BaseException | None] = []

    def validate() -> None:
        try:
            _validate(root)
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=validate, daemon=True)
    worker.start()
    worker.join(timeout=20)
    if worker.is_alive():  # blocked on the FIFO: let it go, then fail
        os.close(os.open(_judge(root), os.O_WRONLY | os.O_NONBLOCK))
        worker.join(timeout=5)
        pytest.fail("reading a FIFO in a prompt pack blocked")
    assert isinstance(outcome[0], PromptPackError)
    assert "judge.j2 is not a regular file" in outcome[0].message


def test_a_template_that_is_not_utf8_is_a_clean_error(tmp_path: Path) -> None:
    root = _pack(tmp_path)
    _judge(root).write_bytes(b"\xff\xfe{{ motion }}")
    with pytest.raises(PromptPackError, match=r"judge\.j2 is not UTF-8 text"):
        _validate(root)


def test_an_oversized_template_is_refused(tmp_path: Path) -> None:
    root = _pack(tmp_path)
    _judge(root).write_text("x" * (2 << 20))
    with pytest.raises(PromptPackError, match="over moot's limit"):
        _validate(root)


@pytest.mark.parametrize(
    "files",
    [
        {"judge.j2": '{% include "judge.j2" %}'},
        {"judge.j2": '{% include "x.j2" %}', "x.j2": '{% include "judge.j2" %}'},
        {"judge.j2": '{% include "x.j2" %}', "x.j2": '{% include "x.j2" %}{% include "x.j2" %}'},
        {"judge.j2": "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"},
    ],
    ids=["itself", "mutual", "doubling", "macro"],
)
def test_a_template_that_includes_itself_is_a_clean_error(
    tmp_path: Path, files: dict[str, str]
) -> None:
    root = _pack(tmp_path)
    for name, text in files.items():
        (root / "en" / "oxford" / name).write_text(text)
    with pytest.raises(PromptPackError, match="recurses without end"):
        _validate(root)


def test_a_template_error_of_python_is_a_clean_error(tmp_path: Path) -> None:
    root = _pack(tmp_path)
    _judge(root).write_text("{{ 1 / 0 }}")
    with pytest.raises(PromptPackError, match="ZeroDivisionError"):
        _validate(root)


def test_the_digest_does_not_follow_a_symlink(tmp_path: Path) -> None:
    root = _pack(tmp_path)
    (root / "en" / "oxford" / "extra.j2").symlink_to("/etc/passwd")
    pack = load_pack("en", "oxford", root=root)
    with pytest.raises(PromptPackError, match=r"extra\.j2 is a symlink"):
        pack.digest  # noqa: B018


# -- bounded rendering of a pack -----------------------------------------------------------


def test_a_template_that_writes_too_much_is_stopped(tmp_path: Path) -> None:
    root = _pack(tmp_path)
    _judge(root).write_text("{% for i in range(10000) %}{{ 'x' * 1000 }}{% endfor %}")
    with pytest.raises(PromptPackError, match=r"judge\.j2 was stopped: it rendered more than"):
        _validate(root)


def test_a_template_that_loops_too_long_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(prompts, "RENDER_SECONDS", 0.05)
    root = _pack(tmp_path)
    _judge(root).write_text(
        "{% for a in range(3000) %}{% for b in range(3000) %}{% endfor %}{% endfor %}"
    )
    with pytest.raises(PromptPackError, match=r"ran past moot's limit of 0\.05 s"):
        _validate(root)


def test_a_template_that_builds_a_huge_value_silently_is_stopped(tmp_path: Path) -> None:
    root = _pack(tmp_path)
    _judge(root).write_text(
        "{% set s = 'x' * 1000000 %}{% set big %}{% for i in range(200) %}{{ s }}"
        "{% endfor %}{% endset %}{{ big | length }}"
    )
    with pytest.raises(PromptPackError, match="was stopped"):
        _validate(root)


@pytest.mark.parametrize(
    "template",
    [
        "{{ '' | center(1000000000) }}",
        "{{ ''.ljust(1000000000) }}",
        "{{ '%999999999d' % 1 }}",
        "{{ '{:>999999999}'.format(1) }}",
        "{% set a = 'x' * 1000 %}{{ a | replace('x', a) | replace('x', a) }}",
        "{% set a = 'x' * 1000000 %}{{ a ~ a ~ a ~ a ~ a }}",
        "{% set a = 'x' * 1000000 %}{% set a = a + a + a + a + a %}",
        "{% set a = 10 ** 64 %}{% set a = a ** 64 %}{{ a ** 64 }}",
    ],
)
def test_a_template_cannot_build_gigabytes_in_one_step(tmp_path: Path, template: str) -> None:
    root = _pack(tmp_path)
    _judge(root).write_text(template)
    with pytest.raises(PromptPackError, match="was stopped"):
        _validate(root)


def test_ordinary_formatting_of_numbers_is_kept(tmp_path: Path) -> None:
    root = _pack(tmp_path)
    _judge(root).write_text(
        "{{ '%d' % 1700000000 }} {{ '{}'.format(1700000000) }} {{ '%5.1f' | format(2.5) }}"
        "{% macro n(x) %}{{ x }}{% endmacro %} {{ n(1700000000) }} {{ '**bold** %s' % 'x' }}"
    )
    pack = load_pack("en", "oxford", root=root)
    assert pack.render("judge") == "1700000000 1700000000   2.5 1700000000 **bold** x"


def test_the_builtin_packs_still_render_within_the_bounds() -> None:
    pack = load_pack("en", "oxford")
    pack.validate(oxford.STEPS, oxford.sample_variables())
    assert "motion" in pack.render("judge", **oxford.sample_variables()["judge"]).lower()
