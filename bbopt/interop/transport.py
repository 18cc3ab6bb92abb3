"""The transports of ``bbopt serve`` (:mod:`bbopt.interop.serve`): JSON lines on stdin/stdout
(one session), a Unix domain socket and TCP on 127.0.0.1 (one session per connection), served by
threads that hand each line to the one :class:`~bbopt.interop.serve.DecisionService`; SIGTERM
ends the service after the request in progress.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import socketserver
import stat
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from bbopt.errors import BboptError, InputError
from bbopt.gc_pause import collect_if_due
from bbopt.interop.serve import (
    MAX_LINE,
    SOCKET_BUFFER,
    WARM_POLICIES,
    DecisionService,
    dumps_reply,
    error_reply,
)


def _too_long() -> str:
    return dumps_reply(error_reply(None, InputError(f"longer than {MAX_LINE} bytes",
                                                    source="request")))


def serve_stdio(service: DecisionService, stdin: IO[bytes], stdout: IO[bytes]) -> int:
    """Answer request lines from ``stdin`` on ``stdout`` until end of input or SIGTERM."""
    keep: list = []
    while True:
        service.reading = True
        try:
            line = stdin.readline(MAX_LINE + 1)
        finally:
            service.reading = False
        if not line:
            break
        if line.strip():
            reply = (_too_long()
                     if len(line) > MAX_LINE else service.handle_line(line, "stdio", keep))
            stdout.write(reply.encode() + b"\n")
            stdout.flush()
            after_reply(keep)
        if service.stopping.is_set():
            break
    return 0


def after_reply(keep: list) -> None:
    """Once a reply is sent: free what its request kept, and collect if due."""
    keep.clear()
    collect_if_due()


class _Connection(socketserver.StreamRequestHandler):
    """One client: its own session, request lines answered in order. (A connection waiting
    for its next line when the service stops is closed by the process's exit.)"""

    rbufsize = 1 << 20  # (a state of 5,000 jobs is a line of 1.1 MB: read in large pieces)

    def setup(self) -> None:
        with contextlib.suppress(OSError):  # (the kernel caps it; fewer hand-overs per line)
            self.request.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SOCKET_BUFFER)
        super().setup()

    def handle(self) -> None:
        service = self.server.service  # type: ignore[attr-defined]
        session = f"connection-{id(self)}"
        keep: list = []
        try:
            while True:
                line = self.rfile.readline(MAX_LINE + 1)
                if not line:
                    return
                if not line.strip():
                    continue
                if service.stopping.is_set():
                    reply = dumps_reply(error_reply(None, BboptError("the service is stopping")))
                elif len(line) > MAX_LINE:
                    reply = _too_long()
                else:
                    reply = service.handle_line(line, session, keep)
                self.wfile.write(reply.encode() + b"\n")
                self.wfile.flush()
                del line
                after_reply(keep)
        except OSError:
            return
        finally:
            service.sessions.pop(session, None)


class _UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class _TCPServer(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


def open_servers(service: DecisionService, unix: str | None = None,
                 port: int | None = None) -> list[socketserver.BaseServer]:
    """Listening servers on a Unix socket path and/or 127.0.0.1:``port`` (0: any free port)."""
    servers: list[socketserver.BaseServer] = []
    if unix is not None:
        path = Path(unix)
        if path.exists() or path.is_symlink():
            if not stat.S_ISSOCK(path.lstat().st_mode):
                raise InputError("exists and is not a socket", source=unix, field="--socket")
            path.unlink()  # a socket left by a service that did not stop cleanly
        servers.append(_UnixServer(str(path), _Connection))
    if port is not None:
        servers.append(_TCPServer(("127.0.0.1", port), _Connection))
    for server in servers:
        server.service = service  # type: ignore[attr-defined]
    return servers


def serve_sockets(service: DecisionService, servers: list[socketserver.BaseServer]) -> int:
    """Serve until SIGTERM or SIGINT; then finish the requests in progress and remove the Unix
    socket."""
    threads = [threading.Thread(target=s.serve_forever, kwargs={"poll_interval": 0.2},
                                daemon=True) for s in servers]
    for t in threads:
        t.start()
    try:
        while not service.stopping.wait(0.5):
            pass
    finally:
        service.stopping.set()
        for s in servers:
            s.shutdown()
        with service.lock:  # the decision in progress ends before the sockets close
            for s in servers:
                s.server_close()
                if isinstance(s, _UnixServer):
                    with contextlib.suppress(OSError):
                        os.unlink(s.server_address)  # type: ignore[arg-type]
    return 0


def run(unix: str | None = None, port: int | None = None,
        warm: Iterable[str] = WARM_POLICIES, announce: IO[str] | None = None) -> int:
    """``bbopt serve``: warm the policies, then serve stdin/stdout (no socket given) or the
    sockets until SIGTERM."""
    service = DecisionService(warm)
    previous = signal.signal(signal.SIGTERM, lambda *_: _stop(service))
    try:
        if unix is None and port is None:
            return serve_stdio(service, sys.stdin.buffer, sys.stdout.buffer)
        servers = open_servers(service, unix, port)
        if announce is not None:
            where = [f"unix:{unix}"] if unix is not None else []
            where += [f"tcp:127.0.0.1:{s.server_address[1]}" for s in servers
                      if isinstance(s, _TCPServer)]
            warmed = ", ".join(f"{k} {v:.2f}s" for k, v in service.warm_times.items())
            print(f"bbopt serve: listening on {' '.join(where)} (warmed: {warmed or 'none'})",
                  file=announce, flush=True)
        return serve_sockets(service, servers)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _stop(service: DecisionService) -> None:
    service.stopping.set()
    if service.reading:  # (stdio: the wait for a line ends; a request in progress finishes)
        raise SystemExit(0)
