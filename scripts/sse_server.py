#!/usr/bin/env python3
"""A real streaming server to aim `rshperf --stream` at: an ASGI app (Starlette, with
sse-starlette's EventSourceResponse for text/event-stream) run by uvicorn. Started by
scripts/sse.sh behind nginx (HTTP/1.1, h2c, h2) and caddy (HTTP/3); the target of
tests/integration/sse_real.rs, bench/stream_accuracy.sh and docs/streaming.md's LLM
session. Versions pinned in scripts/sse-requirements.txt.

    python3 scripts/sse_server.py --port 22100 [--host 127.0.0.1] [--event-log FILE]

Endpoints (a bad parameter gets 400 naming it and the parameters that exist):

  GET /stream?events=N&gap_ms=G&first_ms=F&size=B&format=sse|ndjson&done=1&cut_after=K
      N events (10), the first F ms after the request's receipt (0), then one every G
      ms (0), on an absolute schedule (receipt + F + i*G: a late write does not delay
      the next). Each event's data is {"event":i,"text":"aaa"} padded with "a" to B
      bytes (no padding). format=sse (default): text/event-stream, `data: ...` and a
      blank line, `data: [DONE]` one gap after the last event with done=1; ndjson:
      application/x-ndjson, one line per event. cut_after=K: K events, then half of
      the next, then the connection is closed with no end of body (a cut stream).

  POST /v1/chat/completions
      An OpenAI-shaped answer. With "stream": true in the JSON body: max_tokens (or
      max_completion_tokens, 16) events `data: {"id":...,"object":
      "chat.completion.chunk","choices":[{"index":0,"delta":{"content":"tok "}}]}`,
      then `data: [DONE]`; without it one "chat.completion" object. Timing from the
      query, else the body, else the default: first_ms (0), gap_ms (0, per token),
      per_active_ms (0): the first token comes first_ms + per_active_ms x (streams in
      flight when the request arrived, itself not counted) after receipt, the way an
      LLM server slows under load. cut_after=K as above.

--event-log FILE (or SSE_EVENT_LOG): the server's own clock for each stream, kept in
memory and written at exit (SIGTERM, SIGINT): CSV `stream,event,monotonic_ns,time_ns,
tag`, one line per request received (event `request`: when the read that brought its
first bytes returned, in the HTTP protocol's data_received, before uvicorn parses it), per event written (its index from 0), per `[DONE]` (`done`) and
per cut (`cut`); time.monotonic_ns() and time.time_ns() taken just before the bytes
are handed to uvicorn, which writes them to the socket in the same step of the event
loop. `tag` is the request's `tag` query
parameter (empty without one), so one log can hold several runs.
"""

import argparse
import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
import time

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, StreamingResponse
from starlette.routing import Route

# The event log's rows, (stream, event, monotonic_ns, time_ns, tag), written at exit.
LOG_ROWS = []
# Where the rows go (None: no log).
LOG_PATH = None
# Streams begun and not yet ended (the LLM endpoint's load).
ACTIVE = 0
# The next stream's number.
NEXT_STREAM = 0

STREAM_PARAMS = ("events", "gap_ms", "first_ms", "size", "format", "done", "cut_after", "tag")
CHAT_PARAMS = ("first_ms", "gap_ms", "per_active_ms", "cut_after", "tag")


class Cut(Exception):
    """Raised inside a stream to close its connection with no end of body."""


class BadParam(Exception):
    """A query parameter or body field that is not a valid value."""


def record(stream, event, tag, at=None):
    """Appends one row of the event log, by the server's clocks (now, or `at`: a
    (monotonic_ns, time_ns) pair taken earlier), when logging."""
    if LOG_PATH is not None:
        mono, wall = at if at is not None else (time.monotonic_ns(), time.time_ns())
        LOG_ROWS.append((stream, event, mono, wall, tag))


def write_log():
    """Writes the event log's rows to LOG_PATH (once; later calls write nothing new)."""
    if LOG_PATH is None:
        return
    rows = LOG_ROWS[:]
    del LOG_ROWS[: len(rows)]
    new = not os.path.exists(LOG_PATH) or os.path.getsize(LOG_PATH) == 0
    with open(LOG_PATH, "a", encoding="utf-8") as f:
        if new:
            f.write("stream,event,monotonic_ns,time_ns,tag\n")
        f.writelines(f"{s},{e},{m},{w},{t}\n" for s, e, m, w, t in rows)


def number(name, raw, allowed, kind=float, lo=0, hi=3_600_000):
    """The query value `raw` of parameter `name` as a `kind` in [lo, hi]."""
    try:
        v = kind(raw)
    except (TypeError, ValueError):
        raise BadParam(f"{name}={raw!r} is not a number ({', '.join(allowed)} exist)")
    if not lo <= v <= hi:
        raise BadParam(f"{name}={raw!r} is out of range ({lo} to {hi})")
    return v


def check_names(query, allowed):
    """Refuses a query parameter that does not exist."""
    for k in query.keys():
        if k not in allowed:
            raise BadParam(f"unknown parameter {k!r} (parameters: {', '.join(allowed)})")


async def sleep_until(deadline):
    """Sleeps until loop time `deadline` (s), if it is still ahead."""
    loop = asyncio.get_running_loop()
    delay = deadline - loop.time()
    if delay > 0:
        await asyncio.sleep(delay)


def payload(i, size):
    """Event i's data: {"event":i,"text":"..."} padded with "a" to `size` bytes."""
    base = json.dumps({"event": i, "text": ""}, separators=(",", ":"))
    pad = max(0, size - len(base))
    return json.dumps({"event": i, "text": "a" * pad}, separators=(",", ":"))


def begin(request, tag):
    """A new stream's number, counted in flight, its receipt logged (when `receipt`
    saw the request); returns (stream, streams already in flight)."""
    global ACTIVE, NEXT_STREAM
    stream = NEXT_STREAM
    NEXT_STREAM += 1
    before = ACTIVE
    ACTIVE += 1
    record(stream, "request", tag, request.scope.get("sse_receipt"))
    return stream, before


def end():
    """A stream is no longer in flight."""
    global ACTIVE
    ACTIVE -= 1


HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


async def stream(request: Request):
    """GET /stream: N events on a schedule (see the module's header)."""
    q = request.query_params
    try:
        check_names(q, STREAM_PARAMS)
        n = number("events", q.get("events", "10"), STREAM_PARAMS, int, 0, 10_000_000)
        gap = number("gap_ms", q.get("gap_ms", "0"), STREAM_PARAMS) / 1000
        first = number("first_ms", q.get("first_ms", "0"), STREAM_PARAMS) / 1000
        size = number("size", q.get("size", "0"), STREAM_PARAMS, int, 0, 16 << 20)
        cut = q.get("cut_after")
        cut = None if cut is None else number("cut_after", cut, STREAM_PARAMS, int, 0, n)
        fmt = q.get("format", "sse")
        if fmt not in ("sse", "ndjson"):
            raise BadParam(f"format={fmt!r}: sse or ndjson")
        done = q.get("done", "0")
        if done not in ("0", "1"):
            raise BadParam(f"done={done!r}: 0 or 1")
    except BadParam as e:
        return PlainTextResponse(f"{e}\n", status_code=400)
    tag = q.get("tag", "")
    sid, _ = begin(request, tag)
    t0 = asyncio.get_running_loop().time()

    async def items():
        try:
            for i in range(n):
                await sleep_until(t0 + first + i * gap)
                data = payload(i, size)
                if cut is not None and i == cut:
                    line = f"data: {data}" if fmt == "sse" else data
                    record(sid, "cut", tag)
                    yield line[: len(line) // 2].encode()
                    raise Cut()
                record(sid, i, tag)
                yield (f"data: {data}\r\n\r\n" if fmt == "sse" else data + "\n").encode()
            if fmt == "sse" and done == "1":
                await sleep_until(t0 + first + n * gap)
                record(sid, "done", tag)
                yield b"data: [DONE]\r\n\r\n"
        finally:
            end()

    headers = dict(HEADERS, **{"X-Stream-Id": str(sid)})
    if fmt == "sse":
        return EventSourceResponse(items(), headers=headers)
    return StreamingResponse(items(), headers=headers, media_type="application/x-ndjson")


async def chat(request: Request):
    """POST /v1/chat/completions: an OpenAI-shaped stream of tokens (module header)."""
    q = request.query_params
    try:
        check_names(q, CHAT_PARAMS)
        raw = await request.body()
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            raise BadParam("the body is not JSON")
        if not isinstance(body, dict):
            raise BadParam("the body is not a JSON object")

        def field(name, default, kind=float, hi=3_600_000):
            raw = q.get(name, body.get(name, default))
            return number(name, raw, CHAT_PARAMS + ("max_tokens",), kind, 0, hi)

        tokens = field("max_tokens", body.get("max_completion_tokens", 16), int, 1_000_000)
        first = field("first_ms", 0) / 1000
        gap = field("gap_ms", 0) / 1000
        per_active = field("per_active_ms", 0) / 1000
        cut = q.get("cut_after", body.get("cut_after"))
        cut = None if cut is None else number("cut_after", cut, CHAT_PARAMS, int, 0, tokens)
    except BadParam as e:
        return PlainTextResponse(f"{e}\n", status_code=400)
    tag = q.get("tag", "")
    sid, before = begin(request, tag)
    t0 = asyncio.get_running_loop().time()
    first += per_active * before
    cid = f"chatcmpl-{sid}"
    model = body.get("model", "rshperf-sse")
    created = int(time.time())

    def chunk(delta, finish=None):
        return json.dumps(
            {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            },
            separators=(",", ":"),
        )

    if body.get("stream") is not True:
        try:
            await sleep_until(t0 + first + (tokens - 1) * gap)
            record(sid, "done", tag)
        finally:
            end()
        return JSONResponse(
            {
                "id": cid,
                "object": "chat.completion",
                "created": created,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "tok " * tokens},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"completion_tokens": tokens},
            }
        )

    async def items():
        try:
            for i in range(tokens):
                await sleep_until(t0 + first + i * gap)
                delta = {"content": "tok "}
                if i == 0:
                    delta = {"role": "assistant", "content": "tok "}
                line = f"data: {chunk(delta, 'stop' if i == tokens - 1 else None)}"
                if cut is not None and i == cut:
                    record(sid, "cut", tag)
                    yield line[: len(line) // 2].encode()
                    raise Cut()
                record(sid, i, tag)
                yield (line + "\r\n\r\n").encode()
            record(sid, "done", tag)
            yield b"data: [DONE]\r\n\r\n"
        finally:
            end()

    return EventSourceResponse(items(), headers=dict(HEADERS, **{"X-Stream-Id": str(sid)}))


async def health(_request: Request):
    """GET /: one line, for scripts/sse.sh's readiness check."""
    return PlainTextResponse("sse_server ok\n")


class QuietCut(logging.Filter):
    """Drops uvicorn's traceback of a deliberate cut (the Cut exception)."""

    def filter(self, rec):
        exc = rec.exc_info[1] if rec.exc_info else None
        while exc is not None:
            if isinstance(exc, Cut):
                return False
            group = getattr(exc, "exceptions", None)
            if group and all(isinstance(e, Cut) for e in group):
                return False
            exc = exc.__cause__ or exc.__context__
        return True


@contextlib.asynccontextmanager
async def lifespan(_app):
    """Writes the event log when uvicorn shuts down (SIGTERM, SIGINT)."""
    yield
    write_log()


class Stamped(H11Protocol):
    """uvicorn's h11 protocol (the one it picks without httptools), noting in each new
    request's scope when the read that brought it returned: the server's clock for
    the request's receipt, before parsing and the app's task (which run after it in
    the same or a later turn of the event loop)."""

    def data_received(self, data):
        at = (time.monotonic_ns(), time.time_ns())
        cycle = self.cycle
        super().data_received(data)
        if self.cycle is not cycle and self.cycle is not None:
            self.cycle.scope.setdefault("sse_receipt", at)


def receipt(inner):
    """The ASGI app uvicorn runs: a request's receipt is the socket read's
    (`Stamped`), else now (a protocol without it), then runs `inner`."""

    async def outer(scope, receive, send):
        if scope["type"] == "http":
            scope.setdefault("sse_receipt", (time.monotonic_ns(), time.time_ns()))
        await inner(scope, receive, send)

    return outer


starlette_app = Starlette(
    lifespan=lifespan,
    routes=[
        Route("/", health),
        Route("/stream", stream),
        Route("/v1/chat/completions", chat, methods=["POST"]),
    ]
)
app = receipt(starlette_app)


def main():
    global LOG_PATH
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=22100)
    p.add_argument("--event-log", default=os.environ.get("SSE_EVENT_LOG") or None)
    a = p.parse_args()
    LOG_PATH = a.event_log
    if LOG_PATH is not None:
        open(LOG_PATH, "w").close()
    logging.getLogger("uvicorn.error").addFilter(QuietCut())
    config = uvicorn.Config(
        app,
        host=a.host,
        port=a.port,
        log_level="warning",
        access_log=False,
        http=Stamped,
        backlog=4096,
        timeout_keep_alive=120,
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    # uvicorn takes SIGTERM and SIGINT while it serves, shuts down (the lifespan
    # writes the log) and then raises the signal again under these handlers: a clean
    # exit, status 0.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: sys.exit(0))
    try:
        server.run()
    finally:
        write_log()
    return 0


if __name__ == "__main__":
    sys.exit(main())
