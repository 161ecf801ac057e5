# host/: the workspace host — one long-lived process per workspace (its server side; the
# ways to reach it from another process live in reach/).
#   server     the host process: lock, unix socket (+ TCP), uvicorn, signals, idle exit
#   app        the HTTP app (/mcp, /events, /api/status) and `build_mcp`, what it serves
#   api        the JSON API derived from the verb table;  verify_wait  a verdict's long wait
#   verify_cli `habitat status|cancel` as the terminal prints them (the light CLI's)
#   guard      Host/Origin checks on every request, the bearer token on TCP
#   credentials  browser sessions and login codes;  token_route  the token's rotation
#   tcp_limits the TCP listener's connection bounds;  tcp_address  `--tcp HOST:PORT` read
#   events_stream  /events: the journal as resumable server-sent events
#   mcp_stream /mcp as one long exchange of JSON lines (the bridge's, reach/link.py its client end)
#   stdio_handoff  stdio.sock: a bridge hands over its client's stdin and stdout (reach/handoff.py)
#   stdio_session  the MCP stdio session the host serves on them
#   stdio_outbox   its writes to stdout, through the bridge's outbox pipe
#   stdio_intake   its reads of stdin, through the bridge's inbox pipe
#   dashboard/ the browser dashboard
#   config     [tool.habitat.host];  __main__  `python -m agent_habitat.host`
