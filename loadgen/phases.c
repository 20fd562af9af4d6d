/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "phases.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "job.h"
#include "load.h"
#include "macro.h"

#define MIB (UINT64_C(1) << 20)
#define LINE 64u /* bytes of a cache line */
#define SPIN_CHUNK 1024u /* busy steps between looks at the clock: about 2 us */
#define TOKEN 'p'
#define END 'e'

typedef struct Exec {
        const PhaseContext *c;
        TaskStats *s;
        uint64_t spin_carry; /* busy steps not yet a whole SCENARIO_LOOP_WORK */
        bool *peer_gone; /* per phase: its pingpong peer has gone */
} Exec;

static volatile uint64_t spin_sink;

static void add(_Atomic uint64_t *counter, uint64_t n) {
        atomic_fetch_add_explicit(counter, n, memory_order_relaxed);
}

static bool stopped(const Exec *e) {
        return e->c->stop && *e->c->stop;
}

/* True once the phase should end: *stop, or now past end. */
static bool over(const Exec *e, uint64_t end) {
        return stopped(e) || now_usec() >= end;
}

static uint64_t phase_end(const Exec *e, uint64_t start, uint64_t duration_usec) {
        if (duration_usec == 0 ||
            duration_usec > e->c->deadline_usec - MIN(start, e->c->deadline_usec))
                return e->c->deadline_usec;
        return start + duration_usec;
}

static struct timespec timespec_of(uint64_t usec) {
        return (struct timespec){ .tv_sec = (time_t) (usec / 1000000),
                                  .tv_nsec = (long) (usec % 1000000) * 1000 };
}

/* Sleeps until until (CLOCK_MONOTONIC, absolute), in slices so a stop is seen. True if it got
 * there, false if *stop ended it. */
static bool sleep_until(const Exec *e, uint64_t until) {
        for (;;) {
                uint64_t now = now_usec();
                struct timespec ts;

                if (stopped(e))
                        return false;
                if (now >= until)
                        return true;
                ts = timespec_of(MIN(until, now + PHASE_STOP_SLICE_USEC));
                (void) clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL); /* EINTR: look */
        }
}

/* Busy for up to max_steps steps, until until or *stop; counts them. Returns the steps done. */
static uint64_t spin(Exec *e, uint64_t max_steps, uint64_t until) {
        uint64_t x = spin_sink | 1, done = 0, loops;

        while (done < max_steps && !over(e, until)) {
                uint64_t n = MIN(max_steps - done, SPIN_CHUNK);

                for (uint64_t i = 0; i < n; i++) {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                }
                done += n;
        }
        spin_sink = x;
        e->spin_carry += done;
        loops = e->spin_carry / SCENARIO_LOOP_WORK;
        if (loops > 0) {
                add(&e->s->run_loops, loops);
                e->spin_carry -= loops * SCENARIO_LOOP_WORK;
        }
        return done;
}

/* ---- run, sleep, periodic */

static int run_phase(Exec *e, const Phase *p) {
        uint64_t t0 = now_usec(), end = phase_end(e, t0, p->duration_usec);
        uint64_t busy = (uint64_t) SCENARIO_DUTY_PERIOD_USEC * p->duty_pct / 100, todo, done = 0;

        todo = p->count == 0                                ? UINT64_MAX
               : p->count > UINT64_MAX / SCENARIO_LOOP_WORK ? UINT64_MAX
                                                            : p->count * SCENARIO_LOOP_WORK;
        if (p->duty_pct >= 100) {
                (void) spin(e, todo, end);
                return 0;
        }
        /* Windows on an absolute timeline: one that a preemption overran is not made up for. */
        while (done < todo && !over(e, end)) {
                uint64_t w = t0 + (now_usec() - t0) / SCENARIO_DUTY_PERIOD_USEC *
                                          SCENARIO_DUTY_PERIOD_USEC;

                done += spin(e, todo - done, MIN(w + busy, end));
                if (done < todo && !sleep_until(e, MIN(w + SCENARIO_DUTY_PERIOD_USEC, end)))
                        break;
        }
        return 0;
}

static void latency_add(PhaseLatency *l, uint64_t usec) {
        unsigned b = usec == 0 ? 0 : (unsigned) (64 - __builtin_clzll(usec));

        add(&l->count, 1);
        add(&l->sum_usec, usec);
        add(&l->buckets[MIN(b, PHASE_LATENCY_BUCKETS - 1)], 1);
        /* One writer: no compare-and-swap needed. */
        if (usec > atomic_load_explicit(&l->max_usec, memory_order_relaxed))
                atomic_store_explicit(&l->max_usec, usec, memory_order_relaxed);
}

static int periodic_phase(Exec *e, const Phase *p) {
        uint64_t planned = now_usec(), end = phase_end(e, planned, p->duration_usec);
        uint64_t period = p->period_usec;

        while (planned < end) {
                uint64_t woke, now, next, lim;

                if (!sleep_until(e, planned))
                        break;
                woke = now_usec();
                latency_add(&e->s->periodic_latency, woke - planned);
                (void) spin(e, UINT64_MAX, MIN(woke + p->run_usec, end));
                add(&e->s->periodic_periods, 1);
                if (stopped(e))
                        break;

                /* Starts already past are missed: counted up to the end, skipped. */
                now = now_usec();
                next = planned + period;
                lim = MIN(now, end);
                if (lim > next)
                        add(&e->s->periodic_missed, (lim - next + period - 1) / period);
                if (now > next)
                        next += (now - next + period - 1) / period * period;
                planned = next;
        }
        /* The phase lasts its duration even when no period starts in its last stretch. */
        (void) sleep_until(e, end);
        return 0;
}

/* ---- pingpong */

/* Waits until fd can be read (or has hung up): 1; 0 if *stop or the deadline came first. */
static int wait_readable(const Exec *e, int fd) {
        for (;;) {
                struct pollfd pfd = { .fd = fd, .events = POLLIN };
                uint64_t now = now_usec();
                struct timespec ts;
                int n;

                if (stopped(e) || now >= e->c->deadline_usec)
                        return 0;
                ts = timespec_of(MIN(e->c->deadline_usec - now, PHASE_STOP_SLICE_USEC));
                n = ppoll(&pfd, 1, &ts, NULL);
                if (n < 0 && errno != EINTR)
                        return negative_errno();
                if (n > 0)
                        return 1;
        }
}

/* One byte from fd into *ret: 1; 0 at EOF; -EAGAIN when *stop or the deadline came first. */
static int read_byte(const Exec *e, int fd, char *ret) {
        for (;;) {
                int r = wait_readable(e, fd);
                ssize_t n;

                if (r <= 0)
                        return r < 0 ? r : -EAGAIN;
                n = read(fd, ret, 1);
                if (n >= 0)
                        return (int) n;
                if (errno != EINTR && errno != EAGAIN)
                        return negative_errno();
        }
}

/* 1 when written, 0 when the reader has gone (EPIPE). */
static int write_byte(int fd, char b) {
        for (;;) {
                if (write(fd, &b, 1) == 1)
                        return 1;
                if (errno == EPIPE)
                        return 0;
                if (errno != EINTR)
                        return negative_errno();
        }
}

static int pingpong_lead(Exec *e, const Phase *p, int rfd, int wfd) {
        uint64_t t0 = now_usec(), end = phase_end(e, t0, p->duration_usec), rounds = 0;
        char b;
        int r;

        while (!over(e, e->c->deadline_usec) && (p->count ? rounds < p->count : now_usec() < end)) {
                uint64_t sent = now_usec();

                r = write_byte(wfd, TOKEN);
                if (r > 0)
                        r = read_byte(e, rfd, &b);
                if (r == -EAGAIN)
                        break; /* stopped or the deadline: the end byte below still goes */
                if (r <= 0)
                        return r; /* 0: the peer has gone */
                latency_add(&e->s->pingpong_rtt, now_usec() - sent);
                add(&e->s->pingpong_rounds, 1);
                rounds++;
        }
        r = write_byte(wfd, END);
        return r < 0 ? r : 1;
}

static int pingpong_answer(Exec *e, int rfd, int wfd) {
        for (;;) {
                char b;
                int r = read_byte(e, rfd, &b);

                if (r == -EAGAIN)
                        return 1;
                if (r <= 0)
                        return r; /* 0: EOF, the leader has gone */
                if (b == END)
                        return 1;
                r = write_byte(wfd, b);
                if (r <= 0)
                        return r;
                add(&e->s->pingpong_rounds, 1);
        }
}

static int pingpong_phase(Exec *e, const Phase *p, size_t i) {
        int rfd, wfd, r;

        if (!e->c->pingpong_fds || !e->c->pingpong_leads)
                return -EINVAL;
        rfd = e->c->pingpong_fds[i][0];
        wfd = e->c->pingpong_fds[i][1];
        if (rfd < 0 || wfd < 0)
                return -EBADF;
        if (e->peer_gone[i])
                return 0;
        r = e->c->pingpong_leads[i] ? pingpong_lead(e, p, rfd, wfd) : pingpong_answer(e, rfd, wfd);
        if (r == 0)
                e->peer_gone[i] = true;
        return MIN(r, 0);
}

/* ---- memwalk */

typedef struct Mapping {
        void *addr;
        size_t len;
} Mapping;

static void mappingp(Mapping *m) {
        if (m->addr && m->addr != MAP_FAILED)
                (void) munmap(m->addr, m->len);
}

/* One pass, every cache line of each page, from another line each pass. False if cut short. */
static bool walk_pass(Exec *e, volatile unsigned char *buf, uint64_t npages, size_t pagesize,
                      uint64_t pass, uint64_t end) {
        uint64_t step = load_page_step(npages), page = 0, lines = 0;
        size_t first = (size_t) (pass * LINE) % pagesize;
        bool done = true;

        for (uint64_t i = 0; i < npages; i++) {
                volatile unsigned char *pg = buf + page * pagesize;

                for (size_t l = first; l < pagesize; l += LINE)
                        pg[l]++;
                for (size_t l = first % LINE; l < first; l += LINE)
                        pg[l]++;
                lines += pagesize / LINE;
                page += step;
                if (page >= npages)
                        page -= npages;
                if ((i & 255) == 255) {
                        add(&e->s->memwalk_lines, lines);
                        lines = 0;
                        if (i + 1 < npages && over(e, end)) {
                                done = false;
                                break;
                        }
                }
        }
        add(&e->s->memwalk_lines, lines);
        return done;
}

static int memwalk_phase(Exec *e, const Phase *p) {
        long ps = sysconf(_SC_PAGESIZE);
        size_t pagesize = ps > 0 ? (size_t) ps : 4096;
        uint64_t t0 = now_usec(), end = phase_end(e, t0, p->duration_usec), npages;
        _cleanup_(mappingp) Mapping m = { 0 };

        npages = p->bytes / pagesize + (p->bytes % pagesize != 0);
        if (npages == 0 || npages > SIZE_MAX / pagesize)
                return -ENOMEM;
        m.len = (size_t) npages * pagesize;
        m.addr = mmap(NULL, m.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m.addr == MAP_FAILED)
                return negative_errno();

        for (uint64_t pass = 0; p->count == 0 || pass < p->count; pass++) {
                if (over(e, end) || !walk_pass(e, m.addr, npages, pagesize, pass, end))
                        break;
                add(&e->s->memwalk_passes, 1);
        }
        return 0;
}

/* ---- write, read */

typedef struct PhaseFile {
        char *path;
        int fd;
} PhaseFile;

static void phase_filep(PhaseFile *f) {
        if (f->fd >= 0)
                (void) close(f->fd);
        if (f->path)
                (void) unlink(f->path);
        free(f->path);
}

static int phase_file_open(const Exec *e, size_t i, int flags, PhaseFile *f) {
        if (!e->c->work_dir)
                return -EINVAL;
        if (asprintf(&f->path, "%s/phase-%zu.dat", e->c->work_dir, i) < 0) {
                f->path = NULL;
                return -ENOMEM;
        }
        f->fd = open(f->path, flags | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        return f->fd < 0 ? negative_errno() : 0;
}

/* bytes of zeroes from the start of fd, in 1 MiB writes; counted in *counter when not NULL.
 * 1 when all written, 0 when cut short. */
static int write_pass(Exec *e, int fd, uint64_t bytes, uint64_t end, _Atomic uint64_t *counter) {
        if (ftruncate(fd, 0) < 0 || lseek(fd, 0, SEEK_SET) < 0)
                return negative_errno();
        for (uint64_t done = 0; done < bytes;) {
                size_t n = (size_t) MIN(bytes - done, MIB);
                int r;

                if (over(e, end))
                        return 0;
                r = load_write_zeroes(fd, n);
                if (r < 0)
                        return r;
                done += n;
                if (counter)
                        add(counter, n);
        }
        return 1;
}

static int write_phase(Exec *e, const Phase *p, size_t i) {
        uint64_t t0 = now_usec(), end = phase_end(e, t0, p->duration_usec);
        _cleanup_(phase_filep) PhaseFile f = { .fd = -EBADF };
        int r;

        r = phase_file_open(e, i, O_WRONLY, &f);
        if (r < 0)
                return r;
        do
                r = write_pass(e, f.fd, p->bytes, end, &e->s->write_bytes);
        while (r > 0 && p->duration_usec > 0 && !over(e, end));
        return MIN(r, 0);
}

static int read_phase(Exec *e, const Phase *p, size_t i) {
        _cleanup_(phase_filep) PhaseFile f = { .fd = -EBADF };
        _cleanup_free_ char *buf = malloc(MIB);
        uint64_t end;
        int r;

        if (!buf)
                return -ENOMEM;
        r = phase_file_open(e, i, O_RDWR, &f);
        if (r < 0)
                return r;
        /* Synced, so its writeback is over before the reading starts, as read_load does. */
        r = write_pass(e, f.fd, p->bytes, e->c->deadline_usec, /* counter= */ NULL);
        if (r <= 0)
                return r;
        if (fdatasync(f.fd) < 0)
                return negative_errno();

        end = phase_end(e, now_usec(), p->duration_usec);
        do {
                if (lseek(f.fd, 0, SEEK_SET) < 0)
                        return negative_errno();
                for (;;) {
                        ssize_t n;

                        if (over(e, end))
                                return 0;
                        n = read(f.fd, buf, MIB);
                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n < 0)
                                return negative_errno();
                        if (n == 0)
                                break;
                        add(&e->s->read_bytes, (uint64_t) n);
                }
        } while (p->duration_usec > 0);
        return 0;
}

/* ---- load */

static int load_phase(Exec *e, const Phase *p) {
        uint64_t now = now_usec();
        LoadOptions o;
        LoadResult res;
        size_t idx;

        if (!p->load || p->load < loads || p->load >= loads + n_loads)
                return -EINVAL;
        idx = (size_t) (p->load - loads);
        if (idx >= PHASE_MAX_LOADS)
                return -EINVAL;
        if (now >= e->c->deadline_usec || stopped(e))
                return 0;
        load_options_init(&o);
        o.duration_usec = MIN(p->duration_usec, e->c->deadline_usec - now);
        if (e->c->ncpus > 0)
                o.ncpus = e->c->ncpus;
        if (e->c->ram_bytes > 0)
                o.ram_bytes = e->c->ram_bytes;
        o.work_dir = e->c->work_dir;
        o.other_dir = e->c->work_dir; /* io_other makes a directory of its own in it */
        o.tree_dir = e->c->tree_dir;
        o.stop = e->c->stop;
        o.progress = &e->s->load_work[idx];
        return p->load->run(&o, &res);
}

/* ---- compile */

/* Cuts the build job_make() runs at the phase's end or on a stop: job_make() watches a flag
 * another thread may set, and the signal handler's flag is not the only reason to end. */
typedef struct Cutter {
        const Exec *e;
        uint64_t end;
        volatile sig_atomic_t cut;
        volatile sig_atomic_t quit;
} Cutter;

static void *cutter_main(void *arg) {
        Cutter *c = arg;

        while (!c->quit) {
                if (over(c->e, c->end)) {
                        c->cut = 1;
                        break;
                }
                (void) usleep(20000);
        }
        return NULL;
}

static int compile_phase(Exec *e, const Phase *p) {
        Cutter cut = { .e = e, .end = phase_end(e, now_usec(), p->duration_usec) };
        unsigned jobs = 4 * (e->c->ncpus ? e->c->ncpus : 1);
        pthread_t t;
        int r = 0;

        if (!e->c->tree_dir)
                return -EINVAL;
        if (over(e, cut.end))
                return 0;
        r = -pthread_create(&t, NULL, cutter_main, &cut);
        if (r < 0)
                return r;
        for (uint64_t builds = 0; !cut.cut && (p->count == 0 || builds < p->count); builds++) {
                JobResult res;

                r = job_make(e->c->tree_dir, "clean", 1, NULL, NULL, &cut.cut, &res);
                if (r >= 0)
                        r = job_make(e->c->tree_dir, NULL, jobs, NULL, NULL, &cut.cut, &res);
                if (r == -EINTR) {
                        r = 0; /* cut: not counted */
                        break;
                }
                if (r < 0)
                        break;
                if (!WIFEXITED(res.exit_status) || WEXITSTATUS(res.exit_status) != 0) {
                        r = -EIO;
                        break;
                }
                add(&e->s->compile_builds, 1);
        }
        cut.quit = 1;
        (void) pthread_join(t, NULL);
        return r;
}

/* ---- bench */

#define BENCH_TERM_USEC (5 * SEC_USEC)
#define SEC_USEC 1000000u

/* loadgen BENCH [ARGS] --no-sandbox, stdio on /dev/null, in a process group of its own. */
static int bench_spawn(const Exec *e, const Phase *p, Child *ret) {
        _cleanup_free_ char *copy = p->args ? strdup(p->args) : NULL;
        const char *argv[32];
        size_t n = 0;
        char *save = NULL;
        ChildSpec spec = { .exec_path = e->c->loadgen_path,
                           .argv = argv,
                           .pdeathsig = SIGKILL,
                           .new_pgrp = true,
                           .stdin_fd = CHILD_FD_NULL,
                           .stdout_fd = CHILD_FD_NULL,
                           .stderr_fd = CHILD_FD_NULL };

        if (p->args && !copy)
                return -ENOMEM;
        argv[n++] = "loadgen";
        argv[n++] = p->bench;
        for (char *w = copy ? strtok_r(copy, " ", &save) : NULL; w && n < 26;
             w = strtok_r(NULL, " ", &save))
                argv[n++] = w;
        argv[n++] = "--no-sandbox";
        argv[n] = NULL;
        return child_spawn(&spec, ret);
}

/* Waits for the run; at end or a stop, SIGTERM, then SIGKILL to its group after
 * BENCH_TERM_USEC. True in *ret_ok if it ended by itself with 0. */
static int bench_wait(const Exec *e, Child *c, uint64_t end, bool *ret_ok) {
        pid_t pgid = c->pid;
        uint64_t term_at = 0;
        int r;

        for (;;) {
                r = child_wait(c, now_usec() + 20000, NULL);
                if (r == 0)
                        break;
                if (r != -ETIME)
                        return r;
                if (!term_at && over(e, end)) {
                        (void) child_signal(c, SIGTERM);
                        term_at = now_usec();
                } else if (term_at && now_usec() - term_at > BENCH_TERM_USEC)
                        (void) kill(-pgid, SIGKILL);
        }
        (void) kill(-pgid, SIGKILL); /* what it left in its process group */
        *ret_ok = !term_at && WIFEXITED(c->status) && WEXITSTATUS(c->status) == 0;
        return 0;
}

static int bench_phase(Exec *e, const Phase *p) {
        uint64_t end = phase_end(e, now_usec(), p->duration_usec);

        if (!e->c->loadgen_path || !p->bench)
                return -EINVAL;
        for (uint64_t runs = 0; !over(e, end) && (p->count == 0 || runs < p->count); runs++) {
                Child c = CHILD_NULL;
                bool ok = false;
                int r;

                r = bench_spawn(e, p, &c);
                if (r < 0)
                        return r;
                r = bench_wait(e, &c, end, &ok);
                child_done(&c); /* kills it only if the wait failed */
                if (r < 0)
                        return r;
                if (ok)
                        add(&e->s->bench_runs, 1);
                else if (!over(e, end))
                        return -EIO; /* it failed by itself: a bad option, say */
        }
        return 0;
}

/* ---- the phases */

static int phase_run(Exec *e, size_t i) {
        const Phase *p = &e->c->phases[i];

        switch (p->type) {
        case PHASE_RUN: return run_phase(e, p);
        case PHASE_SLEEP:
                (void) sleep_until(e, phase_end(e, now_usec(), p->duration_usec));
                return 0;
        case PHASE_PERIODIC: return periodic_phase(e, p);
        case PHASE_PINGPONG: return pingpong_phase(e, p, i);
        case PHASE_MEMWALK: return memwalk_phase(e, p);
        case PHASE_WRITE: return write_phase(e, p, i);
        case PHASE_READ: return read_phase(e, p, i);
        case PHASE_LOAD: return load_phase(e, p);
        case PHASE_COMPILE: return compile_phase(e, p);
        case PHASE_BENCH: return bench_phase(e, p);
        default: return -EINVAL;
        }
}

/* One pass over the phases, counted in passes if it did anything and the deadline or a stop did
 * not cut it. 1 if a phase did anything, 0 if each was a pingpong whose peer had gone (the pass
 * took no time: looping again would spin), or an error. */
static int pass_run(Exec *e) {
        bool any = false;
        size_t i;

        for (i = 0; i < e->c->n_phases && !over(e, e->c->deadline_usec); i++) {
                const Phase *p = &e->c->phases[i];
                uint64_t start = now_usec();
                int r;

                atomic_store_explicit(&e->s->phase, i, memory_order_relaxed);
                any = any || p->type != PHASE_PINGPONG || !e->peer_gone[i];
                r = phase_run(e, i);
                if (p->type < _PHASE_TYPE_MAX)
                        add(&e->s->phase_usec[p->type], now_usec() - start);
                if (r < 0)
                        return r;
        }
        if (any && i == e->c->n_phases && !over(e, e->c->deadline_usec))
                add(&e->s->passes, 1);
        return any;
}

int phases_run(const PhaseContext *c) {
        struct sigaction ign = { .sa_handler = SIG_IGN }, old;
        _cleanup_free_ bool *gone = NULL;
        Exec e = { .c = c, .s = c ? c->stats : NULL };
        int r = 0;

        if (!c || !c->stats || (c->n_phases > 0 && !c->phases))
                return -EINVAL;
        gone = calloc(MAX(c->n_phases, 1u), sizeof(bool));
        if (!gone)
                return -ENOMEM;
        e.peer_gone = gone;
        if (sigaction(SIGPIPE, &ign, &old) < 0)
                return negative_errno();

        while (!over(&e, c->deadline_usec)) {
                r = pass_run(&e);
                if (r <= 0)
                        break;
                if (!c->loop)
                        break;
        }
        atomic_store_explicit(&c->stats->phase, c->n_phases, memory_order_relaxed);
        (void) sigaction(SIGPIPE, &old, NULL);
        return MIN(r, 0);
}

uint64_t phase_latency_percentile_usec(const PhaseLatency *l, unsigned pct) {
        uint64_t n = atomic_load_explicit(&l->count, memory_order_relaxed), want, seen = 0;
        uint64_t max = atomic_load_explicit(&l->max_usec, memory_order_relaxed);

        if (n == 0)
                return 0;
        pct = MIN(MAX(pct, 1u), 100u);
        want = (n * pct + 99) / 100; /* the rank of the sample wanted, 1..n */
        for (unsigned b = 0; b < PHASE_LATENCY_BUCKETS; b++) {
                seen += atomic_load_explicit(&l->buckets[b], memory_order_relaxed);
                if (seen >= want && b + 1 < PHASE_LATENCY_BUCKETS)
                        return b == 0 ? 0 : MIN((UINT64_C(1) << b) - 1, max);
        }
        return max;
}
