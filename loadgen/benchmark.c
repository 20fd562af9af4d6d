/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "benchmark.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "cli.h"
#include "fileio.h"
#include "load.h"
#include "log.h"
#include "macro.h"
#include "parse.h"

const Benchmark benchmarks[] = {
        { "hackbench", "004", "groups of 20 senders and 20 receivers over sockets or pipes: Time",
          hackbench_main },
        { "lat_ctx", "000", "LMbench's ring of N processes passing a token: usec per switch",
          lat_ctx_main },
        { "reflex", "000", "T threads in T/2 active sets handing tokens: round-trip usec",
          reflex_main },
        { "chat", "000", "VolanoMark's chat rooms over loopback TCP: messages per second",
          chat_main },
        { "kernbench", "002, 004", "the generated tree compiled at several -j: mean (stddev)",
          kernbench_main },
        { "schedbench", "002", "N memory-bound randupdt tasks, hackbench beside: time per node",
          schedbench_main },
        { "reaim", "003", "AIM7's users stepped to a crossover: jobs per minute", reaim_main },
        { "pipe", "modern", "two tasks ping-pong over pipes, as perf bench sched pipe: usecs/op",
          pipe_main },
        { "placement", "modern",
          "tasks started on one node: cross-node moves, distance, wait, memory local",
          placement_main },
};
const size_t n_benchmarks = ELEMENTSOF(benchmarks);

const Benchmark *benchmark_find(const char *name) {
        for (size_t i = 0; i < n_benchmarks; i++)
                if (streq(benchmarks[i].name, name))
                        return &benchmarks[i];
        return NULL;
}

/* ---- axes */

/* A decimal number at *p (no sign), advancing *p; -EINVAL if there is none, -ERANGE if huge. */
static int parse_number(const char **p, unsigned long *ret) {
        uint64_t v;
        int r = parse_u64_prefix(p, UINT32_MAX, &v);

        if (r < 0)
                return r;
        *ret = (unsigned long) v;
        return 0;
}

int axis_parse(const char *s, unsigned min, unsigned max, unsigned **ret, size_t *ret_n,
               size_t *ret_errpos) {
        _cleanup_free_ unsigned *v = NULL;
        const char *p = s;
        size_t n = 0;
        int r;

        v = malloc(AXIS_MAX_VALUES * sizeof *v);
        if (!v)
                return -ENOMEM;
        for (;;) {
                const char *item = p;
                unsigned long a, b, step = 1;
                bool doubling = false;

                r = parse_number(&p, &a);
                if (r < 0)
                        goto fail;
                b = a;
                if (*p == '-') {
                        p++;
                        r = parse_number(&p, &b);
                        if (r < 0)
                                goto fail;
                        if (*p == ':' || *p == 'x') {
                                doubling = *p == 'x';
                                p++;
                                r = parse_number(&p, &step);
                                if (r < 0)
                                        goto fail;
                                if (step < (doubling ? 2u : 1u)) {
                                        r = -EINVAL;
                                        p--;
                                        goto fail;
                                }
                        }
                        if (b < a) {
                                r = -ERANGE;
                                p = item;
                                goto fail;
                        }
                }
                for (unsigned long x = a; x <= b;) {
                        if (x < min || x > max || n >= AXIS_MAX_VALUES) {
                                r = -ERANGE;
                                p = item;
                                goto fail;
                        }
                        v[n++] = (unsigned) x;
                        if (doubling ? x > b / step : x > b - step)
                                break;
                        x = doubling ? x * step : x + step;
                }
                if (*p == '\0')
                        break;
                if (*p != ',') {
                        r = -EINVAL;
                        goto fail;
                }
                p++;
        }
        *ret = TAKE_PTR(v);
        *ret_n = n;
        return 0;
fail:
        if (ret_errpos)
                *ret_errpos = (size_t) (p - s);
        return r;
}

int bench_parse_axis(const char *name, const char *arg, unsigned min, unsigned max, unsigned **ret,
                     size_t *ret_n) {
        size_t pos = 0;
        int r;

        r = axis_parse(arg, min, max, ret, ret_n, &pos);
        if (r == -ENOMEM)
                return log_error_errno(r, "Out of memory.");
        if (r == -ERANGE) {
                log_error("Invalid --%s \"%s\": \"%s\" is outside %u..%u (or makes more than %u "
                          "values).",
                          name, arg, arg + pos, min, max, AXIS_MAX_VALUES);
                return -EINVAL;
        }
        if (r < 0) {
                log_error("Invalid --%s \"%s\" at \"%s\": want numbers, ranges A-B, stepped "
                          "ranges A-B:STEP or doubling ranges A-BxFACTOR, comma-separated.",
                          name, arg, arg + pos);
                return -EINVAL;
        }
        return 0;
}

unsigned axis_max(const unsigned *v, size_t n) {
        unsigned m = 0;

        for (size_t i = 0; i < n; i++)
                m = MAX(m, v[i]);
        return m;
}

void bench_json_axis(Json *j, const char *key, const unsigned *v, size_t n) {
        json_key(j, key);
        json_begin(j, '[');
        for (size_t i = 0; i < n; i++)
                json_u64(j, NULL, v[i]);
        json_end(j, ']');
}

/* ---- limits */

static int read_sysctl(const char *path, uint64_t *ret) {
        _cleanup_free_ char *s = NULL;
        int r;

        r = read_full_at(AT_FDCWD, path, 4096, &s, NULL);
        if (r < 0)
                return r;
        errno = 0;
        *ret = strtoull(s, NULL, 10);
        return errno ? -errno : 0;
}

/* Tasks alive now: the last figure of /proc/loadavg's "running/total". */
static uint64_t tasks_now(void) {
        _cleanup_free_ char *s = NULL;
        unsigned long running, total;

        if (read_full_at(AT_FDCWD, "/proc/loadavg", 4096, &s, NULL) < 0 ||
            sscanf(s, "%*s %*s %*s %lu/%lu", &running, &total) != 2)
                return 0;
        return total;
}

int bench_check_tasks(const char *what, uint64_t tasks, uint64_t fds) {
        static const struct {
                const char *path, *name;
        } sysctls[] = {
                { "/proc/sys/kernel/threads-max", "kernel.threads-max" },
                { "/proc/sys/kernel/pid_max", "kernel.pid_max" },
        };
        uint64_t now = tasks_now(), limit;
        struct rlimit rl;

        for (size_t i = 0; i < ELEMENTSOF(sysctls); i++)
                if (read_sysctl(sysctls[i].path, &limit) >= 0 && now + tasks > limit) {
                        log_error("%s needs %" PRIu64 " tasks beside the %" PRIu64
                                  " running: more than %s (%" PRIu64 ").",
                                  what, tasks, now, sysctls[i].name, limit);
                        return -E2BIG;
                }
        if (geteuid() != 0 && getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
            now + tasks > rl.rlim_cur) {
                log_error("%s needs %" PRIu64 " tasks: more than this user's RLIMIT_NPROC (%" PRIu64
                          "; see ulimit -u).",
                          what, tasks, (uint64_t) rl.rlim_cur);
                return -E2BIG;
        }
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return log_error_errno(errno, "Failed to read RLIMIT_NOFILE: %m");
        if (rl.rlim_cur != RLIM_INFINITY && fds + 16 > rl.rlim_cur) {
                if (rl.rlim_max != RLIM_INFINITY && fds + 16 > rl.rlim_max) {
                        log_error("%s needs %" PRIu64 " open files in one process: more than "
                                  "RLIMIT_NOFILE allows (%" PRIu64 "; see ulimit -Hn).",
                                  what, fds, (uint64_t) rl.rlim_max);
                        return -E2BIG;
                }
                rl.rlim_cur = rl.rlim_max;
                if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                        return log_error_errno(errno, "Failed to raise RLIMIT_NOFILE: %m");
        }
        return 0;
}

/* ---- running */

typedef struct Shared {
        int error;
        bool returned;
        max_align_t out[]; /* out_size bytes */
} Shared;

typedef struct BenchChild {
        const Sandbox *sb;
        BenchFn fn;
        void *userdata;
        Shared *sh;
} BenchChild;

/* The benchmark's process (child_spawn() set its group, death signal and signals). */
static int bench_child(void *userdata) {
        const BenchChild *bc = userdata;
        Shared *sh = bc->sh;
        int r;

        r = sandbox_enter(bc->sb, SANDBOX_JOB);
        if (r < 0) {
                sh->error = r;
                sh->returned = true;
                return 1;
        }
        sh->error = bc->fn(bc->userdata, sh->out);
        sh->returned = true;
        (void) fflush(NULL);
        return 0;
}

/* What the benchmark's process left: -EINTR after a stop, fn's result (with out filled), or
 * -EIO (logged) if it died or exited before fn returned. */
static int bench_result(const Shared *sh, int status, void *out, size_t out_size) {
        if (cli_stop)
                return -EINTR;
        if (!sh->returned) {
                if (WIFSIGNALED(status))
                        log_error("The benchmark process died of signal %s.",
                                  strsignal(WTERMSIG(status)));
                else
                        log_error("The benchmark process exited (status %d) before it finished.",
                                  WIFEXITED(status) ? WEXITSTATUS(status) : -1);
                return -EIO;
        }
        if (sh->error >= 0 && out_size > 0)
                memcpy(out, sh->out, out_size);
        return sh->error;
}

int bench_run(const Sandbox *sb, BenchFn fn, void *userdata, void *out, size_t out_size) {
        size_t len = sizeof(Shared) + out_size;
        BenchChild bc = { .sb = sb, .fn = fn, .userdata = userdata };
        ChildSpec spec = {
                .fn = bench_child, .userdata = &bc, .pdeathsig = SIGKILL, .new_pgrp = true
        };
        Child c = CHILD_NULL;
        pid_t pgid;
        int r;

        bc.sh = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (bc.sh == MAP_FAILED)
                return log_error_errno(errno, "Failed to map the benchmark's results: %m");
        (void) fflush(NULL); /* nothing buffered may be written twice */
        r = child_spawn(&spec, &c);
        if (r < 0) {
                (void) munmap(bc.sh, len);
                return log_error_errno(r, "Failed to fork the benchmark: %m");
        }
        pgid = c.pid;
        /* A signal landing between a check of cli_stop and the wait cuts the wait short. */
        r = child_wait(&c, UINT64_MAX, &cli_stop);
        if (r == -EINTR) {
                (void) kill(-pgid, SIGKILL);
                (void) sandbox_kill(sb);
                child_kill(&c);
        } else if (r < 0) {
                r = log_error_errno(r, "Failed to wait for the benchmark: %m");
                child_done(&c);
                (void) munmap(bc.sh, len);
                return r;
        }
        child_done(&c);
        (void) kill(-pgid, SIGKILL); /* what it left in its process group */
        (void) sandbox_kill(sb); /* and in the groups */
        r = bench_result(bc.sh, c.status, out, out_size);
        (void) munmap(bc.sh, len);
        return r;
}

/* ---- a command's run */

int bench_main(const char *name, const char *json_arg, const CliCommon *co, BenchSweep sweep,
               void *userdata) {
        _cleanup_sandbox_ Sandbox *sb = NULL;
        BenchReport rep;
        int r;

        r = cli_install_stop_handlers();
        if (r < 0)
                return log_error_errno(r, "Failed to install signal handlers: %m"), 1;
        if (cli_make_sandbox(co, &sb) < 0)
                return 1;
        if (bench_report_open(&rep, json_arg, name, sb) < 0)
                return 1;
        r = sweep(userdata, sb, &rep);
        if (r == -EINTR || cli_stop) {
                (void) bench_report_close(&rep);
                return cli_interrupted();
        }
        if (bench_report_close(&rep) < 0 || r < 0)
                return 1;
        return 0;
}

/* ---- the report */

int bench_report_open(BenchReport *r, const char *json_arg, const char *name, const Sandbox *sb) {
        bool owned;
        int k;

        *r = (BenchReport){ .table = stdout };
        k = cli_json_open(json_arg, &r->json.f, &owned);
        if (k < 0)
                return k;
        if (!r->json.f)
                return 0;
        if (owned)
                r->json_file = r->json.f;
        else
                r->table = NULL;
        json_begin(&r->json, '{');
        json_string(&r->json, "loadgen", CGBALANCE_VERSION);
        json_string(&r->json, "benchmark", name);
        sandbox_json_machine(&r->json, sb);
        return 0;
}

void bench_printf(BenchReport *r, const char *fmt, ...) {
        va_list ap;

        if (!r->table)
                return;
        va_start(ap, fmt);
        (void) vfprintf(r->table, fmt, ap);
        va_end(ap);
        (void) fflush(r->table);
}

int bench_report_close(BenchReport *r) {
        int ret = 0;

        if (r->json.f) {
                json_end(&r->json, '}');
                if (fflush(r->json.f) != 0 || ferror(r->json.f))
                        ret = -EIO;
        }
        if (r->json_file && fclose(r->json_file) != 0)
                ret = -EIO;
        r->json_file = NULL;
        r->json.f = NULL;
        if (r->table && (fflush(r->table) != 0 || ferror(r->table)))
                ret = -EIO;
        if (ret < 0)
                log_error("Failed to write the report.");
        return ret;
}
