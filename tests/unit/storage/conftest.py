import pytest

from kubesched.clock import VirtualClock
from kubesched.storage import MemoryStore


@pytest.fixture
def clock():
    c = VirtualClock()
    yield c
    c.close()


@pytest.fixture
def store(clock):
    return MemoryStore(clock=clock, watch_latency=0.0)
