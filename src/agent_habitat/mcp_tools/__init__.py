# mcp_tools/: the MCP adapters over a built `Habitat` (named so as not to shadow the `mcp` SDK).
#   primary    `habitat mcp`: shell_* tools, project_open, habitat://scene, the status prompt
#   terminal   `habitat terminal-mcp`: the escape server, terminal_* tools and terminal_host
#   server     the low-level Server subclass (listChanged advertised) and the stdio entry
#   tools      ToolDef and the tools/call path;  verbs  the verb table (agent_habitat.verbs)
#   progress   the progress throttle;  broadcast  list/resource changes to both protocol eras
#   resources  habitat://scene;  prompts  `status`;  roots  the client's roots as the project
#   render     compact text renderings of results, keyed by result type
from .primary import PrimaryServer, primary_server
from .server import HabitatServer, serve_stdio
from .terminal import TerminalServer, terminal_server

__all__ = [
    "HabitatServer",
    "PrimaryServer",
    "TerminalServer",
    "primary_server",
    "serve_stdio",
    "terminal_server",
]
