import pytest

from kubesched.clock import VirtualClock


@pytest.fixture
def clock():
    c = VirtualClock()
    yield c
    c.close()
