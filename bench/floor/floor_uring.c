// The io_uring floor: the least a client can do per connection and per request
// through io_uring (liburing, Debian's liburing-dev), with each of the kernel's
// features switchable (-F) so that what each one buys is measured:
//   direct   IORING_OP_SOCKET into a direct descriptor (registered file table, no
//            file-table entry), close with IORING_OP_CLOSE on it; without it,
//            socket(2) and close(2)
//   link     socket -> connect -> send -> recv linked, submitted together (without:
//            the send and recv wait for the connect's completion)
//   bufring  receive into a provided buffer ring (keep-alive: one multishot recv per
//            connection); without it, into the connection's own buffer
//   skip     IOSQE_CQE_SKIP_SUCCESS on the socket, connect, send and close: only
//            failures and receives complete
//   regring  the ring's descriptor registered (io_uring_register_ring_fd)
//   defer    IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN
//   sqpoll   IORING_SETUP_SQPOLL (a kernel thread polls the submission queue)
// Every submission of a loop turn goes in with the wait for its completions (one
// io_uring_submit_and_wait per turn). See README.md.
#include <liburing.h>
#include <netinet/tcp.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "floor.h"

enum op { OP_SOCKET = 1, OP_CONNECT, OP_SEND, OP_RECV, OP_CLOSE, OP_TICK };

#define BUFS 1024
#define BUFSZ 16384
#define BGID 1
#define MAXSLOTS 4096  // open loop: connections in flight at most

struct slot {
    int fd;        // descriptor (or -1); with `direct`, the slot's index is its descriptor
    int busy;
    int armed;     // a multishot recv is pending
    struct reply r;
    char *buf;     // without `bufring`
};

static struct io_uring ring;
static struct io_uring_buf_ring *br;
static char *bufmem;
static struct slot *slots;
static int nslots;
static int *freelist, nfree;
static struct opts o;
static struct sockaddr_in addr;
static char req[256];
static int reqlen;
static struct tally t;
static long started, sent;
static int f_direct, f_link, f_bufring, f_skip, f_regring, f_defer, f_sqpoll;
static int tick = -1;
static unsigned long long ticks;

static int has(const char *list, const char *name) {
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
        if ((p == list || p[-1] == ',') && (p[n] == 0 || p[n] == ',')) return 1;
    return 0;
}

static struct io_uring_sqe *sqe(void) {
    struct io_uring_sqe *s = io_uring_get_sqe(&ring);
    if (!s) {
        io_uring_submit(&ring);
        s = io_uring_get_sqe(&ring);
    }
    return s;
}

static unsigned long long tag(int slot, enum op op) { return ((unsigned long long)slot << 8) | op; }

// The descriptor argument and flags of an operation on slot `i`.
static int fd_of(int i) { return f_direct ? i : slots[i].fd; }
static unsigned fixed(void) { return f_direct ? IOSQE_FIXED_FILE : 0; }

static void prep_recv(int i, unsigned flags) {
    struct io_uring_sqe *s = sqe();
    if (f_bufring) {
        if (o.mode == KA) {
            io_uring_prep_recv_multishot(s, fd_of(i), NULL, 0, 0);
            slots[i].armed = 1;
        } else {
            io_uring_prep_recv(s, fd_of(i), NULL, BUFSZ, 0);
        }
        s->flags |= IOSQE_BUFFER_SELECT;
        s->buf_group = BGID;
    } else {
        io_uring_prep_recv(s, fd_of(i), slots[i].buf, BUFSZ, 0);
    }
    s->flags |= fixed() | flags;
    io_uring_sqe_set_data64(s, tag(i, OP_RECV));
}

static void prep_send(int i, unsigned flags) {
    struct io_uring_sqe *s = sqe();
    io_uring_prep_send(s, fd_of(i), req, reqlen, 0);
    s->flags |= fixed() | flags | (f_skip ? IOSQE_CQE_SKIP_SUCCESS : 0);
    io_uring_sqe_set_data64(s, tag(i, OP_SEND));
    sent++;
}

static void start(void) {
    if (started >= o.n) return;
    if (nfree == 0) {
        t.errors++;
        started++;
        return;
    }
    started++;
    int i = freelist[--nfree];
    struct slot *sl = &slots[i];
    sl->busy = 1;
    sl->armed = 0;
    reply_start(&sl->r);
    t.conns++;
    unsigned link = f_link ? IOSQE_IO_LINK : 0;
    unsigned skip = f_skip ? IOSQE_CQE_SKIP_SUCCESS : 0;
    if (f_direct) {
        struct io_uring_sqe *s = sqe();
        io_uring_prep_socket_direct(s, AF_INET, SOCK_STREAM, 0, i, 0);
        // Always linked: the connect needs the descriptor.
        s->flags |= IOSQE_IO_LINK | skip;
        io_uring_sqe_set_data64(s, tag(i, OP_SOCKET));
    } else {
        sl->fd = socket(AF_INET, SOCK_STREAM, 0);
        if (sl->fd < 0) {
            t.errors++;
            sl->busy = 0;
            freelist[nfree++] = i;
            return;
        }
    }
    if (o.mode == KA) {
        int one = 1;
        if (!f_direct) setsockopt(sl->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    struct io_uring_sqe *s = sqe();
    io_uring_prep_connect(s, fd_of(i), (struct sockaddr *)&addr, sizeof addr);
    s->flags |= fixed() | link | (f_link ? skip : 0);
    io_uring_sqe_set_data64(s, tag(i, OP_CONNECT));
    if (f_link) {
        prep_send(i, IOSQE_IO_LINK);
        prep_recv(i, 0);
    }
}

static void release(int i, int ok) {
    struct slot *sl = &slots[i];
    if (ok) t.ok++; else t.errors++;
    sl->busy = 0;
    if (f_direct) {
        struct io_uring_sqe *s = sqe();
        io_uring_prep_close_direct(s, i);
        s->flags |= f_skip ? IOSQE_CQE_SKIP_SUCCESS : 0;
        io_uring_sqe_set_data64(s, tag(i, OP_CLOSE));
        // The slot is free once the close has been submitted: the next socket into
        // it comes later in submission order (and would replace it anyway).
    } else {
        close(sl->fd);
        sl->fd = -1;
    }
    freelist[nfree++] = i;
    if (o.mode == CONN && o.rate <= 0) start();
}

static void on_reply(int i, const char *data, int n) {
    struct slot *sl = &slots[i];
    int st = reply_feed(&sl->r, data, n);
    if (st < 0) return release(i, 0);
    if (st == 0) {
        if (!sl->armed) prep_recv(i, 0);
        return;
    }
    if (o.mode == KA && sent < o.n) {
        t.ok++;
        reply_start(&sl->r);
        prep_send(i, 0);
        if (!sl->armed) prep_recv(i, 0);
        return;
    }
    release(i, 1);
}

static void complete(struct io_uring_cqe *c) {
    unsigned long long d = io_uring_cqe_get_data64(c);
    int i = (int)(d >> 8);
    enum op op = (enum op)(d & 0xff);
    int res = c->res;
    if (op == OP_TICK) {
        for (unsigned long long k = 0; k < ticks; k++) start();
        struct io_uring_sqe *s = sqe();
        io_uring_prep_read(s, tick, &ticks, sizeof ticks, 0);
        io_uring_sqe_set_data64(s, tag(0, OP_TICK));
        return;
    }
    struct slot *sl = &slots[i];
    if (op == OP_CLOSE) return;
    if (op == OP_RECV) {
        int more = (c->flags & IORING_CQE_F_MORE) != 0;
        if (!more) sl->armed = 0;
        if (res <= 0 || !sl->busy) {
            if (sl->busy && res != -ENOBUFS) release(i, 0);
            else if (sl->busy) prep_recv(i, 0);
            return;
        }
        if (c->flags & IORING_CQE_F_BUFFER) {
            int bid = (int)(c->flags >> IORING_CQE_BUFFER_SHIFT);
            char *b = bufmem + (size_t)bid * BUFSZ;
            on_reply(i, b, res);
            io_uring_buf_ring_add(br, b, BUFSZ, (unsigned short)bid, io_uring_buf_ring_mask(BUFS), 0);
            io_uring_buf_ring_advance(br, 1);
        } else {
            on_reply(i, sl->buf, res);
        }
        return;
    }
    if (res < 0) {
        // A failed socket, connect or send (the linked rest is cancelled: -ECANCELED
        // completions of a slot already released are ignored).
        if (sl->busy && res != -ECANCELED) release(i, 0);
        return;
    }
    if (op == OP_CONNECT && !f_link) {
        prep_send(i, 0);
        prep_recv(i, 0);
    }
}

int main(int argc, char **argv) {
    o = parse_opts(argc, argv, " [-F direct,link,bufring,skip,regring,defer,sqpoll]");
    f_direct = has(o.features, "direct");
    f_link = has(o.features, "link");
    f_bufring = has(o.features, "bufring");
    f_skip = has(o.features, "skip");
    f_regring = has(o.features, "regring");
    f_defer = has(o.features, "defer");
    f_sqpoll = has(o.features, "sqpoll");
    addr = target(&o);
    reqlen = request(&o, req, sizeof req);
    nslots = o.mode == KA || o.rate <= 0 ? o.c : MAXSLOTS;
    slots = calloc((size_t)nslots, sizeof *slots);
    freelist = malloc((size_t)nslots * sizeof *freelist);
    for (int i = nslots - 1; i >= 0; i--) {
        freelist[nfree++] = i;
        slots[i].fd = -1;
        if (!f_bufring) slots[i].buf = malloc(BUFSZ);
    }
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    if (f_defer) p.flags |= IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    if (f_sqpoll) {
        p.flags |= IORING_SETUP_SQPOLL;
        p.sq_thread_idle = 50;
    }
    p.flags |= IORING_SETUP_CQSIZE;
    p.cq_entries = 16384;
    int rc = io_uring_queue_init_params(4096, &ring, &p);
    if (rc < 0) {
        fprintf(stderr, "floor_uring: io_uring_queue_init: %s\n", strerror(-rc));
        return 1;
    }
    if (f_regring && io_uring_register_ring_fd(&ring) < 0) fprintf(stderr, "no registered ring fd\n");
    if (f_direct && (rc = io_uring_register_files_sparse(&ring, (unsigned)nslots)) < 0) {
        fprintf(stderr, "floor_uring: register_files_sparse: %s\n", strerror(-rc));
        return 1;
    }
    if (f_bufring) {
        size_t len = BUFS * sizeof(struct io_uring_buf);
        br = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
        struct io_uring_buf_reg reg = {.ring_addr = (unsigned long)br, .ring_entries = BUFS, .bgid = BGID};
        if ((rc = io_uring_register_buf_ring(&ring, &reg, 0)) < 0) {
            fprintf(stderr, "floor_uring: register_buf_ring: %s\n", strerror(-rc));
            return 1;
        }
        io_uring_buf_ring_init(br);
        bufmem = malloc((size_t)BUFS * BUFSZ);
        for (int b = 0; b < BUFS; b++)
            io_uring_buf_ring_add(br, bufmem + (size_t)b * BUFSZ, BUFSZ, (unsigned short)b,
                                  io_uring_buf_ring_mask(BUFS), b);
        io_uring_buf_ring_advance(br, BUFS);
    }
    t.t0 = now_s();
    tick = tick_fd(o.mode == CONN ? o.rate : 0, 0);
    if (tick >= 0) {
        struct io_uring_sqe *s = sqe();
        io_uring_prep_read(s, tick, &ticks, sizeof ticks, 0);
        io_uring_sqe_set_data64(s, tag(0, OP_TICK));
    } else {
        for (int i = 0; i < o.c; i++) start();
    }
    while (t.ok + t.errors < o.n) {
        struct __kernel_timespec ts = {5, 0};
        struct io_uring_cqe *c;
        rc = io_uring_submit_and_wait_timeout(&ring, &c, 1, &ts, NULL);
        if (rc == -ETIME) {
            fprintf(stderr, "floor_uring: no completion for 5 s, giving up\n");
            break;
        }
        if (rc < 0 && rc != -EINTR) {
            fprintf(stderr, "floor_uring: wait: %s\n", strerror(-rc));
            break;
        }
        unsigned head, n = 0;
        io_uring_for_each_cqe(&ring, head, c) {
            complete(c);
            n++;
        }
        io_uring_cq_advance(&ring, n);
    }
    report("floor_uring", &o, &t, o.features);
    return t.errors ? 1 : 0;
}
