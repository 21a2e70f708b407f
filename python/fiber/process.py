"""fiber.Process: multiprocessing.Process whose run() runs in a task process of a fiber worker.

start() cloudpickles the Process object itself (a subclass's run() and attributes travel with
it, as with multiprocessing's spawn) with the master's folder, path and variables, and a
fiber::Process runs it once as the task fiber_python_process (python/src/process_binding.cpp).
The child says its pid and host through a pipe of its own as it starts, so that pid, terminate()
and kill() signal the very process (on another host, terminate() asks the worker to end it).
Exit codes are Python's: 0, 1 when run() raised (the traceback on the child's stderr), N for
sys.exit(N) and os._exit(N), -N for signal N.
"""

import itertools
import os
import pickle
import signal
import socket
import sys
import threading
import traceback

import cloudpickle

from fiber import _calls, _fiber, _runtime, _shape, connection

# How long a wait for the child's pid waits in one call before it looks whether the child ended
# without saying it (its run never began).
_PID_WAIT_SECONDS = 0.1
# How long a sentinel's watcher thread waits in one call: each call takes the process's turn.
_WATCH_SECONDS = 0.1

_counter = itertools.count(1)
# Started and not yet seen ended, as multiprocessing's _children (active_children()).
_children = set()


class _RunFailed(Exception):
    """Raised to fiber when run() raised: the C++ task fails, and fiber reports exitcode 1."""


class _MainProcess:
    """What current_process() is in the master, as multiprocessing's MainProcess."""

    name = "MainProcess"
    daemon = False
    exitcode = None

    @property
    def pid(self):
        return os.getpid()

    ident = pid

    def is_alive(self):
        return True

    def __repr__(self):
        return f"<_MainProcess name='{self.name}' pid={self.pid}>"


class _ParentProcess:
    """What parent_process() is in a child: the master's name and pid."""

    def __init__(self, name, pid):
        self.name = name
        self.pid = self.ident = pid
        self.daemon = False

    def __repr__(self):
        return f"<_ParentProcess name='{self.name}' pid={self.pid}>"


_current = _MainProcess()
_parent = None


def current_process():
    """This process as multiprocessing's current_process(): the master's MainProcess, or in a
    child the Process it runs."""
    return _current


def parent_process():
    """The process that started this one (its name and pid), or None in the master."""
    return _parent


def active_children():
    """The Processes this process started that still run (the ended ones are dropped)."""
    for child in list(_children):
        child.is_alive()
    return list(_children)


class Process:
    """multiprocessing.Process, run once in a worker's task process (see the module's text). fiber's
    own options after the `*`: what its worker needs, as fiber.Pool's cores, memory and gpus."""

    def __init__(
        self,
        group=None,
        target=None,
        name=None,
        args=(),
        kwargs={},
        *,
        daemon=None,
        cores=0,
        memory=None,
        gpus=0,
    ):
        assert group is None, "group argument must be None for now"
        self._identity = next(_counter)
        self._parent_pid = os.getpid()
        self._process = None  # the C++ fiber::Process, in the master once started
        self._status = None  # the pipe on which the child says its pid and host
        self._child = None  # (pid, host), once said
        self._forced_exitcode = None
        self._sentinel = None
        self._watchers = []  # threads that wait for its end (sentinel, pipe ends' marks)
        self._closed = False
        self._target = target
        self._args = tuple(args)
        self._kwargs = dict(kwargs)
        self._name = name or f"{type(self).__name__}-{self._identity}"
        self._daemon = bool(daemon)
        self._shape = _shape.worker_shape(cores, memory, gpus)

    def run(self):
        """What the child runs; a subclass may override it."""
        if self._target:
            self._target(*self._args, **self._kwargs)

    def start(self):
        """Runs the process in a worker's task process; once only. The target, its arguments and the
        Process itself are pickled (cloudpickle) and sent there."""
        self._check_closed()
        assert self._process is None, "cannot start a process twice"
        assert self._parent_pid == os.getpid(), (
            "can only start a process object created by current process"
        )
        _runtime.start("a Process")
        self._status = _fiber.PipeChannel()
        with connection.collecting_pickled() as ends:
            process_bytes = cloudpickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)
        payload = pickle.dumps(
            (_calls.master_context(), (_current.name, os.getpid()), process_bytes),
            protocol=pickle.HIGHEST_PROTOCOL,
        )
        process = _fiber.Process(payload, _calls.encode_initializer(None, ()), **self._shape)
        connection.hold_read_ends(ends)
        try:
            process.start()
        except BaseException:
            connection.let_go_read_ends(ends)  # it never ran: senders are told at once
            raise
        self._process = process
        if ends:  # their peers read EOFError once it ends, a crash too
            self._watch(lambda: connection.end_for_peers(ends))
        del self._target, self._args, self._kwargs
        _children.add(self)
        _runtime.track_process(self)

    def join(self, timeout=None):
        """Waits until the process has ended, at most `timeout` seconds (None: no limit)."""
        self._check_closed()
        assert self._parent_pid == os.getpid(), "can only join a child process"
        assert self._process is not None, "can only join a started process"
        if self._process.join(timeout):
            _children.discard(self)

    def is_alive(self):
        """True from start() until the process ends."""
        self._check_closed()
        if self is _current:
            return True
        assert self._parent_pid == os.getpid(), "can only test a child process"
        if self._process is None:
            return False
        alive = self._process.is_alive()
        if not alive:
            _children.discard(self)
        return alive

    @property
    def exitcode(self):
        """None while it runs (or before start()); then 0 if run() returned, 1 if it raised, N for
        sys.exit(N), -N if signal N ended it (-9 also when its worker was lost)."""
        self._check_closed()
        if self._process is None:
            return None
        exitcode = self._process.exitcode()
        if exitcode is not None and self._forced_exitcode is not None:
            return self._forced_exitcode
        return exitcode

    @property
    def pid(self):
        """The child's pid: known once it runs, so the first read may wait for its start."""
        self._check_closed()
        if self is _current:
            return os.getpid()
        child = self._child_said()
        return child[0] if child else None

    ident = pid

    @property
    def name(self):
        """The process's name (Process-N unless given)."""
        return self._name

    @name.setter
    def name(self, name):
        assert isinstance(name, str), "name must be a string"
        self._name = name

    @property
    def daemon(self):
        """A daemonic process is terminated when the master exits; the others are waited for."""
        return self._daemon

    @daemon.setter
    def daemon(self, daemonic):
        assert self._process is None, "process has already started"
        self._daemon = bool(daemonic)

    @property
    def sentinel(self):
        """A descriptor that becomes readable when the process ends (for
        multiprocessing.connection.wait or select): a pipe that a thread closes once join sees
        the end, since the child may be on another host."""
        self._check_closed()
        if self._process is None:
            raise ValueError("process not started")
        if self._sentinel is None:
            readable, writable = os.pipe()
            self._sentinel = readable
            self._watch(lambda: os.close(writable))
        return self._sentinel

    def _watch(self, then):
        """Calls `then` on a thread of its own once the process has ended."""
        process = self._process

        def watch():
            while not process.join(_WATCH_SECONDS):
                pass
            then()

        watcher = threading.Thread(target=watch, name=f"{self._name} watcher", daemon=True)
        watcher.start()
        self._watchers.append(watcher)

    def terminate(self):
        """SIGTERM, as multiprocessing (exitcode -15 unless the child handles it)."""
        self._send_signal(signal.SIGTERM)

    def kill(self):
        """SIGKILL, as multiprocessing (exitcode -9)."""
        self._send_signal(signal.SIGKILL)

    def close(self):
        """Releases the process's resources (its worker goes back to the runtime); ValueError
        while it still runs. Most methods raise ValueError after it."""
        if self._process is not None:
            if self._process.exitcode() is None:
                raise ValueError(
                    "Cannot close a process while it is still running. "
                    "You should first call join() or terminate()."
                )
            self._process = None  # its worker goes back to the runtime
        if self._sentinel is not None:
            os.close(self._sentinel)
            self._sentinel = None
        _children.discard(self)
        self._closed = True

    def end_at_exit(self, wait):
        """The master's exit (fiber/_runtime.py): joins it, or terminates it if `wait` is
        false; nothing once it has ended or was closed."""
        if self._closed or self._process is None:
            return
        if wait:
            self._process.join(None)
        elif self._process.is_alive():
            self._process.terminate()
        for watcher in self._watchers:  # done within a slice: before the runtime ends
            watcher.join()

    def _send_signal(self, signum):
        self._check_closed()
        assert self._process is not None, "can only signal a started process"
        if not self._process.is_alive():
            return
        child = self._child_said()
        if child is not None and child[1] == socket.gethostname():
            try:
                os.kill(child[0], signum)
            except ProcessLookupError:  # it ended meanwhile
                pass
        else:  # on another host, or it never ran: its worker ends it
            self._process.terminate()
            self._forced_exitcode = -signum

    def _child_said(self):
        """(pid, host) as the child said it; None before start or if it ended without."""
        while self._child is None and self._status is not None:
            said = self._status.receive(_PID_WAIT_SECONDS)
            if said is None and self._process.exitcode() is not None:
                said = self._status.receive(0.0)  # said just before it ended?
                if said is None:
                    return None
            if said is not None:
                self._child = pickle.loads(said)
        return self._child

    def _check_closed(self):
        if self._closed:
            raise ValueError("process object is closed")

    def __getstate__(self):
        # What the child gets: everything but the master's handles on it.
        state = dict(self.__dict__)
        for master_only in ("_process", "_sentinel", "_child"):
            state[master_only] = None
        state["_watchers"] = []
        return state

    def __repr__(self):
        if self._process is None:
            status = "closed" if self._closed else "initial"
        else:
            exitcode = self._process.exitcode()
            status = "started" if exitcode is None else f"stopped exitcode={exitcode}"
        daemon = " daemon" if self._daemon else ""
        return f"<{type(self).__name__} name={self._name!r} {status}{daemon}>"

    def _bootstrap(self):
        """In the child: runs run() and returns the exitcode, as multiprocessing's
        BaseProcess._bootstrap does."""
        self._status.send(pickle.dumps((os.getpid(), socket.gethostname())))
        try:
            self.run()
            exitcode = 0
        except SystemExit as exit:
            if exit.code is None:
                exitcode = 0
            elif isinstance(exit.code, int):
                exitcode = exit.code
            else:
                sys.stderr.write(str(exit.code) + "\n")
                exitcode = 1
        except BaseException:
            exitcode = 1
            sys.stderr.write(f"Process {self.name}:\n")
            traceback.print_exc()
        finally:
            connection.close_received()  # their peers see EOFError, as at a process's end
            _fiber.flush_queues()
            _calls.flush_output()
        return exitcode


def run_in_child(payload):
    """The task fiber_python_process: a Process's run() in a task process."""
    global _current, _parent
    context, parent, process_bytes = pickle.loads(payload)
    _calls.take_master_context(context)
    _parent = _ParentProcess(*parent)
    _current = pickle.loads(process_bytes)
    exitcode = _current._bootstrap()
    if exitcode == 1:
        raise _RunFailed(f"{_current.name}'s run() raised")
    if exitcode != 0:
        os._exit(exitcode)  # the task process ends with the status, as multiprocessing's child
