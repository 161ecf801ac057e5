# agent_habitat: shell tabs and a verification ladder shared by a coding agent and a person.
#   proc/    supervised processes: spawn into a spool, wait, kill the whole tree, re-adopt
#   shell/   tabs, history, shells, caps — built on proc/
#   events/  typed events and the in-process bus;  store/  SQLite state and the journal
#   config   [tool.habitat] + HABITAT_* + flags;   workspace  where state lives
#   state_place  where a workspace's state lives, as plain strings (the CLI's light path)
#   limits   field types for what the OS takes in an argument, a path, an env value
#   project  which project is open (project_folder: which folders may be one, every door)
#   habitat  the composition root (Habitat.open)
#   verbs    every verb once: the MCP tools and CLI commands are derived from it
#   reach/   the way to a workspace host from another process (find, start, call, bridge)
#   mcp_tools, cli   the adapters: they take a built Habitat (docs/architecture.md)
#   host/    the workspace host's server side: HTTP API, SSE, dashboard, MCP endpoint
#   verify/  the verification ladder and its runner (its service face in verify/runner/);
#            files/  file_write, file_edit
#   trust    whether a project's code may run yet;  project_scene  where the project stands
#   trust_check  which checkout a path holds and whether a trust entry is for it (no model)
#   project_scene_text  that scene as text from its JSON, standard library alone
#   project_scene_git  that scene's git facts as plain data, standard library alone
#   terminal_words  the CLI's words for a next step the verify text names in MCP terms
#   git_env  the habitat's own git calls' environment, without a hook's GIT_DIR / GIT_INDEX_FILE
#   rules    the habit rules for an agent (rules_file: merged into a client's file, `--write`)
#   client_config  `habitat init`'s client configs
#   testing/ fakes for the seams (spawner, clock) and open_fake_habitat
#   errors, regular, secrets, clock, lazy   errors a caller can act on, regular files only,
#            secrets kept out, the clock seam, attributes loaded on first use
__version__ = "0.1.0"

__all__ = ["__version__"]
