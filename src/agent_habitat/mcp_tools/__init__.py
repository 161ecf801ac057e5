# mcp_tools/: the MCP adapters over a built `Habitat` (named so as not to shadow the `mcp` SDK).
#   primary    `habitat mcp`: shell_* tools, project_open, habitat://scene, the status prompt
#   terminal   `habitat terminal-mcp`: the escape server, terminal_* tools and terminal_host
#   server     the low-level Server subclass (listChanged advertised) and the stdio entry
#   handshake  `initialize` answered on a thread while the SDK is still being imported
#   tools      ToolDef and the tools/call path;  verbs  the verb table (agent_habitat.verbs)
#   progress   the progress throttle;  broadcast  list/resource changes to both protocol eras
#   resources  habitat://scene;  prompts  `status`;  roots  the client's roots as the project
#   render     compact text renderings of results, keyed by result type
#   wire       a result's structured content as it goes on the wire;  schema  tools/list's
#   confirm    a person's yes through the client;  accounting  time per agent session
#   status_prompt  the `status` prompt's text
# Names load from their module on first use (PEP 562): a stdio server starts its handshake
# (`mcp_tools.handshake`, no SDK) before anything here imports the SDK.
from typing import TYPE_CHECKING

from ..lazy import lazy_attributes

if TYPE_CHECKING:
    from .primary import PrimaryServer, primary_server
    from .server import HabitatServer, serve_stdio
    from .terminal import TerminalServer, terminal_server

__getattr__ = lazy_attributes(
    __name__,
    {
        "HabitatServer": "server",
        "PrimaryServer": "primary",
        "TerminalServer": "terminal",
        "primary_server": "primary",
        "serve_stdio": "server",
        "terminal_server": "terminal",
    },
)

__all__ = [
    "HabitatServer",
    "PrimaryServer",
    "TerminalServer",
    "primary_server",
    "serve_stdio",
    "terminal_server",
]
