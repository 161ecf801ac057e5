# mcp_tools/: the MCP adapters over the shell habitat (named so as not to shadow the `mcp` SDK).
#   primary    `habitat mcp`: shell_* tools, project_open, habitat://scene, the status prompt
#   terminal   `habitat terminal-mcp`: the escape server, terminal_* tools and terminal_host
#   server     the low-level Server subclass (listChanged advertised) and the stdio entry
#   tools      tool definitions from the shell models and the tools/call path;  verbs  the ten verbs
#   progress   the progress throttle;  broadcast  list/resource changes to both protocol eras
#   resources  habitat://scene;  prompts  `status`;  project  which project is open
#   render     compact text renderings of results;  service  what we need from the shell habitat
from .primary import PrimaryServer, open_primary
from .server import HabitatServer, serve_stdio
from .terminal import TerminalServer, open_terminal

__all__ = [
    "HabitatServer",
    "PrimaryServer",
    "TerminalServer",
    "open_primary",
    "open_terminal",
    "serve_stdio",
]
