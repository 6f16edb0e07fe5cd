"""A person's seat at the terminal: each turn shows what is new to them (the last speeches
and the task), never the request's raw messages again with their roles."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from moot.cli.root import Console
from moot.cli.seat import DRAFT, Reader, TerminalSeat
from moot.debates.runner import DebateRun
from moot.debates.settings import prepare, settings
from moot.inference.human import Ask

MOTION = "cities should ban cars"


def one_round(text: str, motion: str = MOTION) -> str:
    """A dry-run Oxford debate of three rounds with the Opposition typed from TEXT (each
    round: its point, its speech, a decline; then the closing); what the seat showed."""
    shown = io.StringIO()
    seat = TerminalSeat(
        Console(file=shown, width=80, force_terminal=False),
        Reader(io.StringIO(text)),
        interactive=False,
    )
    chosen = settings(
        motion=motion,
        seed=1,  # the Proposition accepts each of the Opposition's points
        roles={"opposition": "human"},
        run={"dry_run": True},
        params={"max_rounds": 3},
    )
    setup = prepare(chosen)
    setup.human = seat
    DebateRun(setup).run()
    return shown.getvalue()


ROUNDS = "Who pays?\n.\nBuses first.\n.\ndecline\n" * 3 + "Closing.\n.\n"


def test_each_turn_shows_what_is_new_and_no_message_roles() -> None:
    shown = one_round(ROUNDS)
    assert "[assistant]" not in shown and "[system]" not in shown
    # The motion's line and the persona are shown at the first turn only.
    assert shown.count("An Oxford Union debate on the motion") == 1
    assert shown.count("You are a skilled Oxford Union debater speaking AGAINST") == 1
    assert "paragraphs you were shown before are left out" in shown
    # Each turn still shows its own task.
    assert shown.count("Write the one sharp, probing question") == 3
    assert "Write the Opposition's closing rebuttal" in shown


def test_in_chinese_the_seat_says_so_in_chinese() -> None:
    shown = one_round(ROUNDS.replace("decline", "拒绝"), motion="城市应该禁止汽车")
    assert "段已略去" in shown and "[你之前的回答]" not in shown


# -- a speech half typed when Ctrl-C stops the debate ------------------------------------------


class Typed(io.StringIO):
    """Lines typed at the keyboard, then Ctrl-C where the lines run out (if INTERRUPTED)."""

    def __init__(self, text: str, *, interrupted: bool) -> None:
        super().__init__(text)
        self.interrupted = interrupted

    def readline(self, size: int | None = -1) -> str:
        line = super().readline()
        if not line and self.interrupted:
            raise KeyboardInterrupt
        return line


def at_a_terminal(
    folder: Path, text: str, *, interrupted: bool
) -> tuple[TerminalSeat, io.StringIO]:
    shown = io.StringIO()
    seat = TerminalSeat(
        Console(file=shown, width=80),
        Reader(Typed(text, interrupted=interrupted)),
        interactive=True,
        folder=lambda: folder,
    )
    return seat, shown


def speech(turn: int) -> Ask:
    return Ask(
        kind="speech", role="opposition", label="🔴 Opposition", messages=(), limit=150, turn=turn
    )


def test_a_half_typed_speech_survives_ctrl_c_and_is_offered_again(tmp_path: Path) -> None:
    seat, shown = at_a_terminal(tmp_path, "Buses first,\nthen the ban.\n", interrupted=True)
    with pytest.raises(KeyboardInterrupt):
        seat.speech(speech(4))
    kept = json.loads((tmp_path / DRAFT).read_text(encoding="utf-8"))
    assert kept == {"turn": 4, "label": "🔴 Opposition", "text": "Buses first,\nthen the ban."}
    assert "your half-typed turn is kept: `moot resume` offers it again" in shown.getvalue()

    other, _ = at_a_terminal(tmp_path, "A new turn.\n.\n", interrupted=False)
    assert other.speech(speech(5)).text == "A new turn.\n"  # another turn's draft is not offered
    assert not (tmp_path / DRAFT).exists()  # a turn was submitted: the draft is gone

    with pytest.raises(KeyboardInterrupt):
        at_a_terminal(tmp_path, "Buses first,\n", interrupted=True)[0].speech(speech(4))
    again, shown = at_a_terminal(tmp_path, "night workers need a way home.\n.\n", interrupted=False)
    said = again.speech(speech(4))
    assert said.text == "Buses first,\nnight workers need a way home.\n"
    assert "kept from before Ctrl-C (2 words): type on after it" in shown.getvalue()
    assert not (tmp_path / DRAFT).exists()


def test_nothing_typed_keeps_no_draft_and_no_folder_keeps_none(tmp_path: Path) -> None:
    seat, _ = at_a_terminal(tmp_path, "", interrupted=True)
    with pytest.raises(KeyboardInterrupt):
        seat.speech(speech(4))
    assert not (tmp_path / DRAFT).exists()
    nowhere, shown = at_a_terminal(tmp_path / "never-made", "Buses first,\n", interrupted=True)
    with pytest.raises(KeyboardInterrupt):
        nowhere.speech(speech(4))
    assert not (tmp_path / "never-made").exists() and "kept" not in shown.getvalue()
