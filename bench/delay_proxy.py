#!/usr/bin/env python3
"""A delaying TCP proxy: the "server slowed by a known amount" of bench/compare.sh and
bench/compare_power.sh.

    python3 bench/delay_proxy.py LISTEN_PORT UPSTREAM_PORT DELAY_FILE

Listens on 127.0.0.1:LISTEN_PORT and relays every connection to 127.0.0.1:UPSTREAM_PORT
(the loopback nginx). Each chunk from the client is held for the delay (milliseconds,
read from DELAY_FILE when the connection is accepted, so one listening port serves the
base and the slowed runs alike) before it goes upstream: with one request at a time on
a connection, a reply arrives the delay later. The proxy stands for an application
server in front of nginx whose handler takes DELAY ms: 50 ms for the base build,
60 ms for a build 20 % slower. Prints "listening" on stdout when ready; runs until killed.

Threads, one pair per connection, and time.sleep (nanosleep: microseconds) rather than
asyncio, whose timers go through epoll's millisecond timeout: there a 2.2-ms delay
lasted 3 ms, so a "10 % slower" server was 40 % slower.
"""

import socket
import sys
import threading
import time


def pipe(src, dst, delay_s):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            if delay_s:
                time.sleep(delay_s)
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(client, upstream_port, delay_file):
    try:
        with open(delay_file) as f:
            delay_s = float(f.read().strip() or 0) / 1000.0
    except (OSError, ValueError):
        delay_s = 0.0
    try:
        upstream = socket.create_connection(("127.0.0.1", upstream_port))
    except OSError:
        client.close()
        return
    for s in (client, upstream):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    back = threading.Thread(target=pipe, args=(upstream, client, 0.0), daemon=True)
    back.start()
    pipe(client, upstream, delay_s)
    back.join()
    client.close()
    upstream.close()


def main(listen_port, upstream_port, delay_file):
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", listen_port))
    server.listen(1024)
    print("listening", flush=True)
    while True:
        client, _ = server.accept()
        threading.Thread(
            target=serve, args=(client, upstream_port, delay_file), daemon=True
        ).start()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
