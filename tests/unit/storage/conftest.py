import pytest

from kubesched.storage import MemoryStore


@pytest.fixture
def store(clock):  # `clock` is tests/unit/conftest.py's
    return MemoryStore(clock=clock, watch_latency=0.0)
