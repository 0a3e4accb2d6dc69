"""The course server's HTTP connections, with a deadline on a request's head.

uvicorn closes a connection that stays idle between requests (``timeout_keep_alive``), but not one that sends part of
a request's line and headers and then nothing (or nothing at all): each such connection holds a socket and a task for
as long as the client likes, so that anyone who can reach the port could hold thousands. ``HeadDeadline`` is uvicorn's
h11 protocol with a deadline: from the moment a connection opens, or bytes of a new request arrive, the request's
whole head must come within ``HEAD_S`` seconds, else the connection is closed. A body that stops coming is the
application's to drop (``app.BODY_IDLE_S``)."""

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

HEAD_S = 20.0
"""Seconds a request's line and headers may take to arrive."""


class HeadDeadline(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request head is not complete ``HEAD_S`` seconds after the
    connection opened or the head's first bytes came."""

    def connection_made(self, transport):
        super().connection_made(transport)
        self._head_deadline = None
        self._arm()

    def data_received(self, data):
        super().data_received(data)
        if self.transport.is_closing():
            self._disarm()
        elif self.conn.their_state is h11.IDLE:  # bytes of a request whose head is not complete yet
            self._arm()
        else:
            self._disarm()

    def connection_lost(self, exc):
        self._disarm()
        super().connection_lost(exc)

    def _arm(self):
        if self._head_deadline is None:
            self._head_deadline = self.loop.call_later(HEAD_S, self._expired)

    def _disarm(self):
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _expired(self):
        self._head_deadline = None
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self.transport.close()
