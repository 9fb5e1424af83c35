"""A TCP proxy on loopback that can stop forwarding: a network partition a test can make.

While frozen it accepts nothing new and forwards nothing, yet keeps every
connection open, so both kernels keep acknowledging (keepalives included):
only deadlines in the application can tell, which is what is under test.
"""

from __future__ import annotations

import selectors
import socket
import threading


class TcpProxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self._target = (target_host, target_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.setblocking(False)
        self.port = self._listener.getsockname()[1]
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._listener, selectors.EVENT_READ)
        self._peers: dict[socket.socket, socket.socket] = {}
        self._frozen = threading.Event()
        self._closed = threading.Event()
        self._wake_read, self._wake_write = socket.socketpair()
        self._selector.register(self._wake_read, selectors.EVENT_READ)
        self._thread = threading.Thread(target=self._run, name="tcp-proxy", daemon=True)
        self._thread.start()

    def url(self, database_url: str) -> str:
        """``database_url`` with its host and port replaced by the proxy's."""
        scheme, rest = database_url.split("://", 1)
        credentials, _, tail = rest.rpartition("@")
        _, _, path = tail.partition("/")
        prefix = f"{credentials}@" if credentials else ""
        return f"{scheme}://{prefix}127.0.0.1:{self.port}/{path}"

    def freeze(self) -> None:
        """Stop forwarding in both directions; connections stay open and silent."""
        self._frozen.set()
        self._wake_write.send(b"x")

    def thaw(self) -> None:
        self._frozen.clear()
        self._wake_write.send(b"x")

    def close(self) -> None:
        self._closed.set()
        self._wake_write.send(b"x")
        self._thread.join(5)
        for sock in list(self._peers):
            sock.close()
        self._listener.close()
        self._wake_read.close()
        self._wake_write.close()

    def _run(self) -> None:
        while not self._closed.is_set():
            for key, _ in self._selector.select(timeout=0.5):
                sock = key.fileobj
                if sock is self._wake_read:
                    self._wake_read.recv(64)
                    self._watch_peers()
                elif sock is self._listener:
                    self._accept()
                else:
                    self._forward(sock)  # type: ignore[arg-type]

    def _watch_peers(self) -> None:
        """Frozen: stop reading anyone (and accepting), so nothing moves; thawed: read again."""
        for sock in [self._listener, *self._peers]:
            registered = _is_registered(self._selector, sock)
            if self._frozen.is_set() and registered:
                self._selector.unregister(sock)
            elif not self._frozen.is_set() and not registered:
                self._selector.register(sock, selectors.EVENT_READ)

    def _accept(self) -> None:
        try:
            client, _ = self._listener.accept()
        except BlockingIOError:
            return
        try:
            upstream = socket.create_connection(self._target, timeout=5)
        except OSError:
            client.close()
            return
        for sock in (client, upstream):
            sock.setblocking(True)
            sock.settimeout(5)
        self._peers[client] = upstream
        self._peers[upstream] = client
        self._selector.register(client, selectors.EVENT_READ)
        self._selector.register(upstream, selectors.EVENT_READ)

    def _forward(self, sock: socket.socket) -> None:
        other = self._peers.get(sock)
        try:
            data = sock.recv(65536)
            if data and other is not None:
                other.sendall(data)
                return
        except OSError:
            pass
        self._drop(sock)

    def _drop(self, sock: socket.socket) -> None:
        other = self._peers.pop(sock, None)
        for each in (sock, other):
            if each is None:
                continue
            self._peers.pop(each, None)
            if _is_registered(self._selector, each):
                self._selector.unregister(each)
            each.close()


def _is_registered(selector: selectors.BaseSelector, sock: socket.socket) -> bool:
    try:
        selector.get_key(sock)
    except (KeyError, ValueError):  # ValueError: the socket is closed already
        return False
    return True
