"""`moot serve`: the same debates in a browser, served from this machine to this machine.

`server` binds the socket and runs the ASGI app of `app`; `guard` keeps every request to
the token, the bound host and the page's own origin; `jobs` runs debates and tournaments
in worker threads, one per model at a time, and keeps each one's events for whoever opens
it later; `forms` (and `tournament` for its own form) turns the page's form into the
settings `moot run` would build; `runs` is the work of a debate job, through `moot.Debate`;
`wire` turns events, saved debates and documents into what the page reads. The page itself
is in `static/`: HTML, ES modules and CSS, nothing fetched from anywhere else.
"""
