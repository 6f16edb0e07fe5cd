"""The turn engine every format runs on: what a format asks of a seat and how the seat is
called, below the formats (which import it) and above the models and records.

- `turns`: `Engine` and `Role`: one speaker turn at a time (seeds, sampling, grammar, re-asks,
  streamed events, the journal), the listeners and the rule keeping a turn is held to.
- `stream`: what of a streamed reply is shown, and when its model is stopped.
- `rules`: the deterministic checks of a speech (length, voice, on the motion).
- `audit`: a saved debate checked again against those rules (`moot check`).
"""
