# events/: every kind published (kinds), typed events (models), the in-process bus (bus);
# the journal lives in store/.
from .bus import EventBus, InMemoryEventBus, Subscriber, Unsubscribe
from .kinds import EVENT_KINDS, EventKind
from .models import Event

__all__ = [
    "EVENT_KINDS",
    "Event",
    "EventBus",
    "EventKind",
    "InMemoryEventBus",
    "Subscriber",
    "Unsubscribe",
]
