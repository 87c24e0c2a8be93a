// The epoll floor: the least a client can do per connection, per request (and per
// streamed event, -m stream) with non-blocking sockets and edge-triggered epoll, the
// way rshperf's epoll backend does it (socket, connect, epoll_ctl, write once
// connected, read the reply, close), and nothing else: no statistics, no timers but
// the open loop's tick. See README.md.
#define _GNU_SOURCE  // memmem
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "floor.h"

#define MAXFD 65536
#define TICK_TAG (-1)

struct conn {
    int connecting;
    struct reply r;
    char tail[7];  // STREAM: the last bytes read (the chunked body's end)
};

static struct conn *conns;
static struct opts o;
static struct sockaddr_in addr;
static char req[256];
static int reqlen;
static int ep;
static struct tally t;
static long started;
static long sent;  // requests written
static long events;  // STREAM: SSE events read

static void fail(int fd) {
    t.errors++;
    close(fd);
}

static void start(void) {
    if (started >= o.n) return;
    started++;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0 || fd >= MAXFD) {
        t.errors++;
        if (fd >= 0) close(fd);
        return;
    }
    t.conns++;
    if (o.mode == KA) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, 1 /* TCP_NODELAY */, &one, sizeof one);
    }
    struct conn *c = &conns[fd];
    reply_start(&c->r);
    c->connecting = 1;
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0 && errno != EINPROGRESS) {
        fail(fd);
        return;
    }
    struct epoll_event ev = {EPOLLIN | EPOLLOUT | EPOLLET, {.fd = fd}};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) fail(fd);
}

// One finished request on `fd`: the next one (keep-alive) or a new connection.
static void done(int fd) {
    t.ok++;
    if (o.mode == KA) {
        if (sent < o.n) {
            reply_start(&conns[fd].r);
            sent++;
            if (write(fd, req, reqlen) != reqlen) fail(fd);
        } else {
            close(fd);
        }
        return;
    }
    close(fd);
    if (o.rate <= 0) start();
}

// STREAM: one read per readiness (a short read empties the socket, as rshperf
// assumes too); the events counted by their "data: " fields; the reply ends with the
// chunked body's last chunk.
static void stream_readable(int fd) {
    static char buf[65536];
    static const char end[7] = {'\r', '\n', '0', '\r', '\n', '\r', '\n'};
    struct conn *c = &conns[fd];
    for (;;) {
        ssize_t k = read(fd, buf, sizeof buf);
        if (k < 0 && errno == EAGAIN) return;
        if (k <= 0) return fail(fd);
        for (const char *p = buf; (p = memmem(p, buf + k - p, "data: ", 6)) != NULL; p += 6)
            events++;
        if (k >= 7) {
            memcpy(c->tail, buf + k - 7, 7);
        } else {
            memmove(c->tail, c->tail + k, 7 - k);
            memcpy(c->tail + 7 - k, buf, k);
        }
        if (memcmp(c->tail, end, 7) == 0) return done(fd);
        if (k < (ssize_t)sizeof buf) return;
    }
}

static void readable(int fd) {
    static char buf[65536];
    if (o.mode == STREAM) return stream_readable(fd);
    for (;;) {
        ssize_t k = read(fd, buf, sizeof buf);
        if (k > 0) {
            int st = reply_feed(&conns[fd].r, buf, k);
            if (st == 1) return done(fd);
            if (st < 0) return fail(fd);
            continue;
        }
        if (k < 0 && errno == EAGAIN) return;
        return fail(fd);
    }
}

int main(int argc, char **argv) {
    o = parse_opts(argc, argv, "");
    addr = target(&o);
    reqlen = request(&o, req, sizeof req);
    conns = calloc(MAXFD, sizeof *conns);
    ep = epoll_create1(0);
    int tick = tick_fd(o.mode != KA ? o.rate : 0, TFD_NONBLOCK);
    if (tick >= 0) {
        struct epoll_event ev = {EPOLLIN, {.fd = TICK_TAG}};
        epoll_ctl(ep, EPOLL_CTL_ADD, tick, &ev);
    }
    t.t0 = now_s();
    if (tick < 0)
        for (int i = 0; i < o.c; i++) start();
    struct epoll_event evs[1024];
    while (t.ok + t.errors < o.n) {
        int n = epoll_wait(ep, evs, 1024, 5000);
        if (n == 0) {
            fprintf(stderr, "floor_epoll: no event for 5 s, giving up\n");
            break;
        }
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            unsigned e = evs[i].events;
            if (fd == TICK_TAG) {
                unsigned long long due;
                if (read(tick, &due, sizeof due) == sizeof due)
                    while (due-- > 0) start();
                continue;
            }
            struct conn *c = &conns[fd];
            if (c->connecting) {
                if (e & (EPOLLERR | EPOLLHUP)) {
                    fail(fd);
                    if (o.rate <= 0 && o.mode != KA) start();
                    continue;
                }
                if (!(e & EPOLLOUT)) continue;
                c->connecting = 0;
                sent++;
                if (write(fd, req, reqlen) != reqlen) {
                    fail(fd);
                    continue;
                }
            }
            if (e & (EPOLLIN | EPOLLERR | EPOLLHUP)) readable(fd);
        }
    }
    report("floor_epoll", &o, &t, "");
    if (o.mode == STREAM) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
        printf("events=%ld cpu_us_per_event=%.2f\n", events, events ? cpu * 1e6 / events : 0.0);
    }
    return t.errors ? 1 : 0;
}
