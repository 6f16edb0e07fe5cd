"""benchmarks/bench_terse.py: its pack is one moot takes, and its summary says what ran."""

from __future__ import annotations

import bench_terse


def test_the_terse_pack_renders_every_oxford_step() -> None:
    from moot.formats.oxford import flow
    from moot.prompts import PromptPack

    pack = PromptPack(bench_terse.PACK, "en", "oxford")
    pack.validate(flow.STEPS, flow.sample_variables())
    # A few words a step: the instructions after the record are the lever it measures.
    speech = pack.render("speech", **flow.sample_variables()["speech"])
    assert len(speech.split()) < 20, speech


def test_the_summary_names_each_model_and_its_ratios() -> None:
    results = {
        "terse": {"smollm2-135m": {"spt_ratio_to_peer": 0.59, "evaluated_per_generated": 1.2}}
    }
    (line,) = bench_terse.summary(results)
    assert line.startswith("terse pack, smollm2-135m: spt ratio to peer 0.59")
    assert "evaluated per generated 1.2" in line
    assert bench_terse.summary({}) == []
