# verify/runner/: the background verify runner and the service a host holds of it.
#   runner       VerifyRunner: queue, coalesce, cancel, follow the tree
#   chain        one chain of climbs;   chain_report  what a chain says on the bus, its timing
#   coalesce     requests that cover each other;   epochs  snapshot-bound runs and stale ones
#   staleness    stale on write, the checks on arrival and at status;   watch  the project watcher
#   substrate    a fresh temp dir, SQLite db and ports per test task
#   accounting   where a verify's time went;   warmup  the warm-up when a server opens a project
#   warmup_node  the warm-up's step for a Node project (tsc, eslint and jest started side by side)
#   warmup_checkers  its type-check step for pyright, ty or pyrefly (their language servers)
#   warm_status  the warm-up as `habitat status` tells it now (warm.json and the live daemons)
#   give_way     the warm-up's dmypy start, stopped while a verify runs
#   recorder     the background recording of per-test dependencies the slot starts after it
#   config       [tool.habitat.verify] (RunnerConfig);   models  tickets, status, progress
#   args         what the verify verbs take (VerifyRunArgs, VerifyStatusArgs, VerifyCancelArgs)
#   slot         the runner a host holds per project (VerifySlot), which answers the verify
#                verbs;   record  an epoch's record
#   report       what a verify answers the agent;   text  the verify answers as text
#   cli_text     what `habitat status` / `habitat cancel` print (the CLI's and the host's)
#   cancel_text  the cancel's words that need no model (its first line; nothing serves verify)
#   as_of_now    a recorded epoch against the tree now (lost, stale, back), without a model
#   report_shape the reports' JSON shape, for reading a record without pydantic (the CLI)
# Nothing is imported here: callers name the module they need.
