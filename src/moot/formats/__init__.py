"""The debate formats: each a params model and a `run(engine, …)` that reads like its rulebook."""
