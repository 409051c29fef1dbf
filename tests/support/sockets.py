"""Endpoints on loopback that speak raw TCP, for receivers that misbehave below HTTP (hang,
reset, answer in chunks): `SocketEndpoint` accepts connections and hands each to its
`handle` on a thread of its own."""

import socket
import struct
import threading
import time


class SocketEndpoint:
    """One listening socket on 127.0.0.1 (a free port); `url` is a webhook URL on it."""

    path = "/hook"

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}{self.path}"

    def handle(self, connection: socket.socket) -> None:
        """What the endpoint does with one accepted connection (it closes it)."""
        connection.close()

    def close(self) -> None:
        self.listener.close()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return  # closed
            self.connections += 1
            threading.Thread(target=self.handle, args=(connection,), daemon=True).start()


def reset_after(data: bytes, port: int) -> None:
    """Sends `data` to the loopback port and hangs up with a TCP reset, as a killed client does."""
    connection = socket.create_connection(("127.0.0.1", port), timeout=5)
    connection.sendall(data)
    time.sleep(0.1)
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    connection.close()
