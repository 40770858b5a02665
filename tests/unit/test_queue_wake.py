"""The wake-up hint between a local enqueue and idle workers (semgraph.queue.wake), on real
Unix datagram sockets."""

from __future__ import annotations

import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from semgraph.queue.wake import MAX_SOCKET_PATH, WakeListener, nudge_workers, wake_dir


@pytest.fixture
def state() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="wk", dir="/tmp"))  # pytest's tmp_path may be too long
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_a_nudge_ends_the_wait_early(state: Path) -> None:
    stop = threading.Event()
    with WakeListener(state, "w1") as listener:
        assert listener.listening
        assert nudge_workers(state) == 1
        started = time.monotonic()
        assert listener.wait(30.0, stop) is True
        assert time.monotonic() - started < 1.0
        # drained: the next wait runs its whole (short) timeout
        assert listener.wait(0.2, stop) is False
    assert not listener.path.exists()


def test_without_a_nudge_the_wait_is_the_poll(state: Path) -> None:
    with WakeListener(state, "w1") as listener:
        started = time.monotonic()
        assert listener.wait(0.3, threading.Event()) is False
        assert time.monotonic() - started >= 0.29


def test_stop_ends_the_wait_within_a_slice(state: Path) -> None:
    stop = threading.Event()
    with WakeListener(state, "w1") as listener:
        threading.Timer(0.2, stop.set).start()
        started = time.monotonic()
        assert listener.wait(30.0, stop) is False
        assert time.monotonic() - started < 2.0


def test_every_listening_worker_is_nudged(state: Path) -> None:
    with WakeListener(state, "a") as a, WakeListener(state, "b") as b:
        assert nudge_workers(state) == 2
        assert a.wait(5, threading.Event()) and b.wait(5, threading.Event())


def test_a_dead_workers_socket_is_removed_and_not_counted(state: Path) -> None:
    folder = wake_dir(state)
    folder.mkdir(parents=True)
    stale = folder / "gone.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(stale))
    sock.close()  # the file stays, nobody listens: a worker killed while idle
    assert stale.exists()
    assert nudge_workers(state) == 0
    assert not stale.exists()


def test_hostile_files_in_the_wake_folder_do_not_break_a_nudge(state: Path) -> None:
    folder = wake_dir(state)
    folder.mkdir(parents=True)
    (folder / "plain.sock").write_text("not a socket")
    (folder / "dir.sock").mkdir()
    (folder / "other.txt").write_text("ignored")
    with WakeListener(state, "live") as live:
        assert nudge_workers(state) == 1
        assert live.wait(5, threading.Event())
    assert (folder / "other.txt").exists()


def test_no_folder_or_no_listener_is_no_error(state: Path) -> None:
    assert nudge_workers(state / "missing") == 0
    wake_dir(state).mkdir(parents=True)
    assert nudge_workers(state) == 0


def test_a_path_too_long_for_a_socket_falls_back_to_polling(state: Path) -> None:
    deep = state / ("x" * MAX_SOCKET_PATH)
    listener = WakeListener(deep, "w1")
    assert not listener.listening
    started = time.monotonic()
    assert listener.wait(0.2, threading.Event()) is False
    assert time.monotonic() - started >= 0.19
    listener.close()


def test_an_unwritable_state_dir_falls_back_to_polling(state: Path) -> None:
    blocker = state / "file"
    blocker.write_text("a file where the state directory should be")
    listener = WakeListener(blocker, "w1")
    assert not listener.listening
    assert nudge_workers(blocker) == 0
