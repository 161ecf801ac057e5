# events/: typed events (models), the in-process bus (bus); the journal lives in store/.
from .bus import EventBus, InMemoryEventBus, Subscriber, Unsubscribe
from .models import Event, EventKind

__all__ = ["Event", "EventBus", "EventKind", "InMemoryEventBus", "Subscriber", "Unsubscribe"]
