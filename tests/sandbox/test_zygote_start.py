"""Starting the zygote ahead of need: ``start_soon`` in the background, ``shared_client`` waits."""

from __future__ import annotations

import os
import threading

import pytest

from rnngrade.sandbox.zygote import client as zygote


class FakeClient:
    """Stands in for ZygoteClient: counts its starts; fails while ``failures`` lasts."""

    started: list[FakeClient] = []
    failures = 0
    gate = threading.Event()

    def __init__(self) -> None:
        FakeClient.gate.wait(5)
        if FakeClient.failures:
            FakeClient.failures -= 1
            raise zygote.SandboxUnavailable("the zygote did not start (test)")
        self.owner = os.getpid()
        self.alive = True
        FakeClient.started.append(self)

    def close(self) -> None:
        self.alive = False


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setattr(zygote, "ZygoteClient", FakeClient)
    monkeypatch.setattr(zygote, "_CLIENT", None)
    monkeypatch.setattr(zygote, "_STARTING", None)
    FakeClient.started, FakeClient.failures = [], 0
    FakeClient.gate.set()
    yield FakeClient
    zygote._await_start()


def test_the_client_started_in_the_background_is_the_one_handed_out(fake):
    fake.gate.clear()  # the start is still under way when the grader asks for the client
    zygote.start_soon()
    zygote.start_soon()  # already starting: no second one
    assert zygote._STARTING is not None and zygote._STARTING.is_alive()
    fake.gate.set()
    client = zygote.shared_client()
    assert fake.started == [client]
    assert zygote._STARTING is None
    zygote.start_soon()  # one is running: nothing to start
    assert zygote._STARTING is None and zygote.shared_client() is client


def test_a_failed_background_start_is_tried_again_and_its_reason_reported(fake):
    fake.failures = 1
    zygote.start_soon()
    client = zygote.shared_client()  # the background start failed: started here instead
    assert fake.started == [client]
    zygote._CLIENT = None
    fake.failures = 2
    zygote.start_soon()
    with pytest.raises(zygote.SandboxUnavailable, match="did not start"):
        zygote.shared_client()
