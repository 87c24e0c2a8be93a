#!/usr/bin/env python3
"""A delaying TCP proxy: the "server slowed by a known amount" of bench/compare.sh.

    python3 bench/delay_proxy.py LISTEN_PORT UPSTREAM_PORT DELAY_FILE

Listens on 127.0.0.1:LISTEN_PORT and relays every connection to 127.0.0.1:UPSTREAM_PORT
(the loopback nginx). Each chunk from the client is held for the delay (milliseconds,
read from DELAY_FILE when the connection is accepted, so one listening port serves the
base and the slowed runs alike) before it goes upstream: with one request per
connection, a reply arrives the delay later. The proxy stands for an application
server in front of nginx whose handler takes DELAY ms: 50 ms for the base build,
60 ms for a build 20 % slower. Prints "listening" on stdout when ready; runs until killed.
"""

import asyncio
import sys


async def pipe(reader, writer, delay_s):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            if delay_s:
                await asyncio.sleep(delay_s)
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        try:
            writer.close()
        except Exception:
            pass


async def main(listen_port, upstream_port, delay_file):
    async def handle(c_reader, c_writer):
        try:
            with open(delay_file) as f:
                delay_s = float(f.read().strip() or 0) / 1000.0
        except (OSError, ValueError):
            delay_s = 0.0
        try:
            u_reader, u_writer = await asyncio.open_connection("127.0.0.1", upstream_port)
        except OSError:
            c_writer.close()
            return
        await asyncio.gather(
            pipe(c_reader, u_writer, delay_s), pipe(u_reader, c_writer, 0.0)
        )

    server = await asyncio.start_server(handle, "127.0.0.1", listen_port, backlog=1024)
    print("listening", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]))
