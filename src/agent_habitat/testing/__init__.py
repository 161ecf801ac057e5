# agent_habitat.testing: helpers that ship with the package, for our tests and users' own.
#   conditions  EventRecorder, eventually — wait for something with a bound, never sleep
#   clock       FakeClock — stands still until the test advances it
#   spawner     FakeSpawner — plays scripted commands instead of starting processes
from .clock import FakeClock
from .conditions import EventRecorder, eventually
from .spawner import FakeProcess, FakeSpawner, Script

__all__ = ["EventRecorder", "FakeClock", "FakeProcess", "FakeSpawner", "Script", "eventually"]
