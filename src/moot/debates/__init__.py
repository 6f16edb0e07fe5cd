"""A debate from its settings to its saved files, above the formats (which it runs).

- `settings`: what one debate is asked to be, validated before anything loads, and the setup
  the runner runs (`moot run`, `moot.debate`, a tournament's debates all come through here).
- `runner`: one debate wired end to end (models resolved and loaded, pack checked, run, files
  saved); a journal resumed (`resume_setup`), a transcript replayed (`replay`).
- `rejudge`: a saved debate's judging steps asked again of another judge (`moot judge`).
"""
