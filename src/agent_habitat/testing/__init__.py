# agent_habitat.testing: helpers that ship with the package, for our tests and users' own.
#   conditions  EventRecorder, eventually — wait for something with a bound, never sleep
#   clock       FakeClock — stands still until the test advances it
#   spawner     FakeSpawner — plays scripted commands instead of starting processes
#   habitat     open_fake_habitat — a whole Habitat over those fakes (loaded on first use)
from typing import TYPE_CHECKING

from ..lazy import lazy_attributes
from .clock import FakeClock
from .conditions import EventRecorder, eventually
from .spawner import FakeProcess, FakeSpawner, Script

if TYPE_CHECKING:
    from .habitat import open_fake_habitat

# The Habitat and all it builds load only for a test that opens one.
__getattr__ = lazy_attributes(__name__, {"open_fake_habitat": "habitat"})

__all__ = [
    "EventRecorder",
    "FakeClock",
    "FakeProcess",
    "FakeSpawner",
    "Script",
    "eventually",
    "open_fake_habitat",
]
