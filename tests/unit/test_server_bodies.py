"""The course server reads a request's body only while it keeps coming: a hand-in or a form whose body stops for
``BODY_IDLE_S`` seconds is dropped (a hand-in answers 408), so that a client cannot hold the server's memory by
sending most of a body and then nothing; a body that comes whole is read whole."""

import asyncio

import pytest
from starlette.requests import Request

from grader.server import app


def _request(chunks, then_stall):
    """A POST whose body comes as ``chunks``, then ends, or (``then_stall``) never comes further."""
    queue = list(chunks)

    async def receive():
        if queue:
            return {"type": "http.request", "body": queue.pop(0), "more_body": True}
        if then_stall:
            await asyncio.sleep(3600)
        return {"type": "http.request", "body": b"", "more_body": False}

    return Request({"type": "http", "method": "POST", "headers": [], "query_string": b""}, receive)


@pytest.fixture(autouse=True)
def _short_idle(monkeypatch):
    monkeypatch.setattr(app, "BODY_IDLE_S", 0.2)


def test_a_whole_body_is_read_whole():
    assert asyncio.run(app.Server._read_body(_request([b"ab", b"cd"], False), 10)) == b"abcd"
    assert asyncio.run(app._capped_body(_request([b"ab", b"cd"], False), 10)) == b"abcd"


def test_a_body_that_stops_coming_is_dropped():
    with pytest.raises(app._Stalled):
        asyncio.run(app.Server._read_body(_request([b"ab"], True), 10))
    assert asyncio.run(app._capped_body(_request([b"ab"], True), 10)) == b""


def test_a_body_past_the_limit_is_refused():
    assert asyncio.run(app.Server._read_body(_request([b"abcdef"], False), 4)) is None
    assert asyncio.run(app._capped_body(_request([b"abcdef"], False), 4)) == b""
