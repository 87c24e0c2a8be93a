// What both floor clients share: options, the request, the reply scanner, the
// open-loop tick and the closing report (completions, CPU per connection and per
// request from getrusage). Each client (floor_epoll.c, floor_uring.c) owns only its
// I/O. See README.md.
#ifndef FLOOR_H
#define FLOOR_H
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

enum mode { CONN, KA, STREAM };

struct opts {
    enum mode mode;  // CONN: a new connection per request; KA: keep-alive; STREAM:
                     // CONN whose reply is a chunked stream (floor_epoll only)
    long n;          // requests (CONN: connections) in all
    int c;           // in flight (CONN closed loop) or connections (KA)
    double rate;     // CONN open loop: connections per second (0: closed loop)
    const char *host;
    int port;
    const char *uri;
    const char *features;  // floor_uring only: comma-separated feature names
};

static void usage(const char *prog, const char *extra) {
    fprintf(stderr,
            "usage: %s -m conn|ka|stream -n N [-c C] [-r RATE] [-H HOST] [-p PORT] [-u URI]%s\n"
            "  conn: a new connection per request; closed loop with C in flight, or\n"
            "        open loop at RATE connections/s (-r)\n"
            "  ka:   C keep-alive connections, closed loop, N requests in all\n"
            "  stream: conn, each reply a chunked stream of SSE events (rshperf serve's\n"
            "        /stream): one read per readiness, events counted, no other parsing\n",
            prog, extra);
    exit(2);
}

static struct opts parse_opts(int argc, char **argv, const char *extra) {
    struct opts o = {CONN, 0, 50, 0, "127.0.0.1", 8080, "/1k.html", ""};
    int ch;
    while ((ch = getopt(argc, argv, "m:n:c:r:H:p:u:F:")) != -1) {
        switch (ch) {
        case 'm':
            o.mode = strcmp(optarg, "ka") == 0 ? KA : strcmp(optarg, "stream") == 0 ? STREAM : CONN;
            break;
        case 'n': o.n = atol(optarg); break;
        case 'c': o.c = atoi(optarg); break;
        case 'r': o.rate = atof(optarg); break;
        case 'H': o.host = optarg; break;
        case 'p': o.port = atoi(optarg); break;
        case 'u': o.uri = optarg; break;
        case 'F': o.features = optarg; break;
        default: usage(argv[0], extra);
        }
    }
    if (o.n <= 0 || o.c <= 0) usage(argv[0], extra);
    return o;
}

static struct sockaddr_in target(const struct opts *o) {
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)o->port);
    if (inet_pton(AF_INET, o->host, &a.sin_addr) != 1) {
        fprintf(stderr, "bad host %s (an IPv4 address)\n", o->host);
        exit(2);
    }
    return a;
}

// The request (the same bytes rshperf sends for --uri, less its User-Agent).
static int request(const struct opts *o, char *buf, size_t cap) {
    return snprintf(buf, cap, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", o->uri, o->host);
}

// A reply being read: the header block is scanned for its end and Content-Length,
// then the body is counted (no chunked replies: the floor's documents have a length).
struct reply {
    int state;  // 0: in the header, 1: in the body
    long left;  // body bytes still to come
    long cl;
    char tail[4];  // the last bytes of the header seen so far (for \r\n\r\n)
    char line[64];  // the start of the current header line (for Content-Length)
    int linelen;
};

static void reply_start(struct reply *r) { memset(r, 0, sizeof *r); r->cl = -1; }

// Feeds `n` bytes; returns 1 when the reply is complete (extra bytes are an error for
// the floor: it never pipelines), -1 on a reply it cannot read.
static int reply_feed(struct reply *r, const char *p, long n) {
    for (long i = 0; i < n; i++) {
        if (r->state == 1) {
            long take = n - i < r->left ? n - i : r->left;
            r->left -= take;
            i += take - 1;
            if (r->left == 0) return i + 1 == n ? 1 : -1;
            continue;
        }
        char ch = p[i];
        memmove(r->tail, r->tail + 1, 3);
        r->tail[3] = ch;
        if (ch == '\n') {
            r->line[r->linelen < 63 ? r->linelen : 63] = 0;
            if (strncasecmp(r->line, "content-length:", 15) == 0) r->cl = atol(r->line + 15);
            r->linelen = 0;
        } else if (r->linelen < 63) {
            r->line[r->linelen++] = ch;
        }
        if (memcmp(r->tail, "\r\n\r\n", 4) == 0) {
            if (r->cl < 0) return -1;
            r->state = 1;
            r->left = r->cl;
            if (r->left == 0) return i + 1 == n ? 1 : -1;
        }
    }
    return 0;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

// A periodic timerfd ticking every 1/rate s (open loop); -1 without a rate. Each
// expiry count read from it is that many arrivals due.
static int tick_fd(double rate, int flags) {
    if (rate <= 0) return -1;
    int fd = timerfd_create(CLOCK_MONOTONIC, flags);
    long ns = (long)(1e9 / rate);
    struct itimerspec its = {{ns / 1000000000L, ns % 1000000000L},
                             {ns / 1000000000L, ns % 1000000000L}};
    if (fd < 0 || timerfd_settime(fd, 0, &its, NULL) != 0) {
        perror("timerfd");
        exit(1);
    }
    return fd;
}

struct tally {
    long ok;       // replies completed
    long errors;   // connections or requests that failed
    long conns;    // connections opened
    double t0;
};

static void report(const char *name, const struct opts *o, const struct tally *t,
                   const char *features) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
    double sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    double wall = now_s() - t->t0;
    double cpu = user + sys;
    printf("%s mode=%s features=%s n=%ld c=%d rate=%.0f\n", name, o->mode == KA ? "ka" : o->mode == STREAM ? "stream" : "conn",
           features[0] ? features : "-", o->n, o->c, o->rate);
    printf("completed=%ld errors=%ld connections=%ld wall_s=%.3f rate=%.1f/s\n", t->ok,
           t->errors, t->conns, wall, t->ok / (wall > 0 ? wall : 1));
    printf("cpu_user_s=%.3f cpu_sys_s=%.3f cpu_us_per_conn=%.2f cpu_us_per_req=%.2f\n", user,
           sys, t->conns ? cpu * 1e6 / (double)t->conns : 0.0,
           t->ok ? cpu * 1e6 / (double)t->ok : 0.0);
}
#endif
