# verify/: the verification ladder (DESIGN §5).
#   models       requests and results;   config  [tool.habitat.ladder] and the policy
#   snapshot     HEAD + dirty set → snapshot id;   layout  packages and tests of a project
#   selection    import-graph impact and test selection;   parsers  tool output → diagnostics
#   environments the project's interpreter and tools;  command  one rung process via proc/
#   head         HEAD's files and export;   baseline  findings matched against HEAD's, cached
#   rungs/       one module per rung;   ladder  the climb (presentation lives in cli/)
from .config import LadderConfig, load_ladder_config, load_policy
from .ladder import run_ladder, stop_type_daemon
from .models import (
    POLICIES,
    RUNGS,
    Diagnostic,
    LadderRequest,
    LadderResult,
    LadderState,
    Policy,
    RungName,
    RungResult,
    RungState,
    Selection,
)
from .snapshot import GitError, Snapshot, take_snapshot

__all__ = [
    "POLICIES",
    "RUNGS",
    "Diagnostic",
    "GitError",
    "LadderConfig",
    "LadderRequest",
    "LadderResult",
    "LadderState",
    "Policy",
    "RungName",
    "RungResult",
    "RungState",
    "Selection",
    "Snapshot",
    "load_ladder_config",
    "load_policy",
    "run_ladder",
    "stop_type_daemon",
    "take_snapshot",
]
