"""How ``serve`` and ``worker`` count their stops (entrypoints/stop_signals.py), in this process:
their own SIGINT and SIGTERM, and a supervisor's orders down the pipe it leaves them.

A signal sent to every process reaches a supervised child twice, directly and as the
supervisor's order: the phase is the larger count, never the sum. The processes
themselves: tests/e2e/test_supervisor.py.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator

import pytest

from jobtable.entrypoints.stop_signals import StopSignals
from jobtable.entrypoints.supervisor import ORDERS_FD_ENV, STOP_SIGNALS
from tests.e2e.conftest import wait_until


@pytest.fixture(autouse=True)
def handlers_put_back() -> Iterator[None]:
    saved = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


class Supervisor:
    """The test's hand on the write end of the pipe, as a supervisor holds it."""

    def __init__(self, write_end: int) -> None:
        self.write_end: int | None = write_end

    def order(self, phase: int) -> None:
        assert self.write_end is not None
        os.write(self.write_end, str(phase).encode())

    def die(self) -> None:
        if self.write_end is not None:
            os.close(self.write_end)
            self.write_end = None


@pytest.fixture
def supervised(monkeypatch) -> Iterator[Callable[[], tuple[StopSignals, Supervisor]]]:
    """Stop signals installed as in a child a supervisor started, and that supervisor."""
    made: list[Supervisor] = []

    def make() -> tuple[StopSignals, Supervisor]:
        read_end, write_end = os.pipe()
        monkeypatch.setenv(ORDERS_FD_ENV, str(read_end))
        made.append(Supervisor(write_end))
        return StopSignals().install(), made[-1]

    yield make
    for supervisor in made:
        supervisor.die()
    wait_until(lambda: not orders_threads(), 10, "every orders thread ended")  # none outlives it


def orders_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "jobtable-supervisor"]


def gone_noticed(caplog) -> bool:
    """The orders thread read the end of the pipe (so every order before it, too)."""
    return caplog.text.count("the supervisor is gone") == 1


def test_alone_a_second_signal_stops_now():
    signals = StopSignals().install()
    signal.raise_signal(signal.SIGTERM)
    assert signals.graceful.is_set() and not signals.now.is_set()
    signal.raise_signal(signal.SIGINT)
    assert signals.now.is_set()
    assert (signals.first, signals.second) == ("received SIGTERM", "received SIGINT again")


def test_a_signal_and_the_supervisors_order_for_it_are_one_stop_whichever_comes_first(
    supervised, caplog
):
    signals, supervisor = supervised()
    supervisor.order(1)  # the order first
    wait_until(signals.graceful.is_set, 10, "the order heard")
    signal.raise_signal(signal.SIGINT)  # then the same Ctrl-C, directly
    assert not signals.now.is_set()

    signals, supervisor = supervised()  # the other way round
    signal.raise_signal(signal.SIGINT)
    supervisor.order(1)
    supervisor.die()
    wait_until(lambda: gone_noticed(caplog), 10, "the pipe read to its end")
    assert signals.graceful.is_set() and not signals.now.is_set()


def test_a_second_ctrl_c_stops_now_directly_or_through_the_supervisor(supervised):
    signals, supervisor = supervised()
    signal.raise_signal(signal.SIGINT)
    supervisor.order(1)
    signal.raise_signal(signal.SIGINT)  # the second, directly: now, without waiting for it
    assert signals.now.is_set()
    assert signals.second == "received SIGINT again"

    signals, supervisor = supervised()
    supervisor.order(1)
    supervisor.order(2)  # a second signal to the supervisor alone
    wait_until(signals.now.is_set, 10, "the second order heard")


def test_a_supervisor_that_dies_is_a_graceful_stop_never_a_second_one(supervised, caplog):
    signals, supervisor = supervised()
    supervisor.order(1)  # stopping gracefully when the supervisor is killed
    supervisor.die()
    wait_until(lambda: gone_noticed(caplog), 10, "the pipe read to its end")
    assert signals.graceful.is_set() and not signals.now.is_set()

    signals, supervisor = supervised()
    supervisor.die()  # killed before it asked anything
    wait_until(signals.graceful.is_set, 10, "a stop")
    assert signals.first == "the supervisor died" and not signals.now.is_set()


def test_once_stopped_a_supervised_process_ignores_further_signals(supervised):
    signals, _ = supervised()
    signals.stopped()
    assert {signal.getsignal(signum) for signum in STOP_SIGNALS} == {signal.SIG_IGN}


@pytest.mark.parametrize("named", [None, "not a descriptor"])
def test_a_process_no_supervisor_started_keeps_taking_signals_once_stopped(monkeypatch, named):
    if named is None:
        monkeypatch.delenv(ORDERS_FD_ENV, raising=False)
    else:
        monkeypatch.setenv(ORDERS_FD_ENV, named)
    signals = StopSignals().install()
    signals.stopped()
    signal.raise_signal(signal.SIGINT)
    assert signals.graceful.is_set()
