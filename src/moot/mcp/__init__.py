"""`moot mcp`: moot's debates as tools of the Model Context Protocol, over stdio.

`schemas` makes each tool's input schema from moot's own declarations (a debate's settings,
every format's parameters); `tools` does each tool's work, checking its arguments as
`moot run` checks its options; `desk` runs the debates in worker threads of the server's
process, saved where `moot run` saves them; `server` speaks the protocol (the `mcp` SDK,
imported only when the server runs).
"""
