"""What a debate leaves on disk, and how moot writes and reads it back.

- `transcript`: the records' vocabulary: `Transcript`, `Turn`, the journal's typed records
  (`DebateRecord`, `TurnRecord`, `ScoreRecord`, `StopRecord`, `KeptRecord`), the schema version.
- `journal`: the append-only `Journal`, the records read back and checked (`read_records`,
  `load`), and the transcript's Markdown.
- `files`: files written safely (atomic replace, create-only, private folders) and read safely
  (regular files only, under a size limit).

The events a debate tells its listeners are `moot.events`, the public module beside this one.
"""
