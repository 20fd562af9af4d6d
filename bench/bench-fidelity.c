/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whether loadgen's hackbench, pipe and lat_ctx do the same work as the standard tools: the same
 * sizes side by side in one run, ROUNDS rounds, every other round running the peers first. Per
 * round one line per section, with the load average (a round beside other work is worth less);
 * at the end, per pair, the medians and the median (and range) of the per-round ratios
 * loadgen/peer. Each side's figure is the one it prints itself (each times only
 * the work, from the release of its tasks), so process start-up is outside both.
 *
 *   hackbench  loadgen hackbench -g G -l L against rt-tests' hackbench -g G -l L and perf bench
 *              sched messaging -g G -l L (20 senders and 20 receivers a group, 100-byte
 *              messages: the defaults of all three), in three modes: processes over socketpairs
 *              (the default of all three), --pipe (-p, -p) and --threads (-T, -t). Metric: the
 *              time. Aim: 0.8-1.25.
 *   pipe       loadgen pipe -l N against perf bench sched pipe -l N, usecs per round trip (one
 *              perf op). perf's default leaves both tasks unpinned: that is loadgen's "none".
 *              loadgen's "same" (both pinned to one CPU) against perf under taskset -c 0 is the
 *              like-for-like pinned pair. loadgen's "cross" (one task on each CPU) has no exact
 *              peer: perf under taskset -c 0,1 may use both CPUs but the scheduler's wake_affine
 *              pulls the pair onto one, so it is shown for reference, not judged.
 *   lat_ctx    loadgen lat_ctx --tasks 2 --size 0 (usec per context switch) against perf's
 *              per-switch figure from its unpinned run: usecs/op / 2, a round trip being two
 *              hops. Neither pins its tasks (LMbench's lat_ctx does not), so both are left to the
 *              scheduler: against perf pinned to one CPU, lat_ctx's pair, which the scheduler
 *              spreads over both CPUs here, measured 3.3x (wake-ups across CPUs, not the work).
 * LMbench's lat_ctx subtracts the cost of the pipe I/O of a hop (its "ovr", the JSON's
 * overhead_usec) and perf does not, so the judged pair is lat_ctx's usec + overhead_usec against
 * perf's; lat_ctx's own figure is shown beside it, lower by design. "lat_ctx: not available" when
 * loadgen's lat_ctx does not run yet.
 *
 * The peers run in a group of this program's, cgbalance.slice/bench-fidelity-PID/peers, as deep
 * as loadgen's job group (cgbalance.slice/loadgen-PID/job) where loadgen runs its work. A
 * measurement, not a test: it exits 1 only if something could not run (a missing tool, a run that
 * failed), never on a ratio; a ratio outside 0.8-1.25 gets a WARNING line. Root only (cgroups);
 * without root it says why and exits 0. Everything it made (its group, the slice if it made it, its
 * directory, its children) is gone at the end, also on failure or SIGINT/SIGTERM.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-tree.h"
#include "cgroup.h"
#include "fileio.h"
#include "support.h"
#include "macro.h"

#ifndef BUILD_DIR
#define BUILD_DIR "build"
#endif

#define SLICE "cgbalance.slice"
#define WORK_BASE "/var/tmp"
#define ROUNDS 5 /* hackbench varies by tens of percent run to run */
#define GROUPS "20" /* ~1.3 s a run here, processes over sockets */
#define LOOPS "100"
#define PIPE_LOOPS "200000" /* 1-5 s a run here */
#define WATCHDOG_USEC (120 * USEC_PER_SEC)
#define LOADGEN_STOP_USEC (15 * USEC_PER_SEC)
#define RATIO_LO 0.8
#define RATIO_HI 1.25

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig) {
        (void) sig;
        stop_requested = 1;
}

/* ---- the runs */

typedef enum Parse {
        PARSE_LOADGEN_HACKBENCH, /* "20 groups: Time: 1.332" */
        PARSE_HACKBENCH, /* "Time: 1.332" */
        PARSE_MESSAGING, /* "Total time: 1.332 [sec]" */
        PARSE_LOADGEN_PIPE, /* "same   Total time: ... [sec]   4.19 usecs/op" */
        PARSE_PERF_PIPE, /* "       4.191175 usecs/op" */
        PARSE_LAT_CTX, /* JSON rows' "usec": 1.23 */
} Parse;

typedef enum RunId {
        HB_LOADGEN,
        HB_RT,
        HB_PERF,
        HBP_LOADGEN,
        HBP_RT,
        HBP_PERF,
        HBT_LOADGEN,
        HBT_RT,
        HBT_PERF,
        PIPE_NONE,
        PIPE_PERF,
        PIPE_SAME,
        PIPE_PERF_CPU0,
        PIPE_CROSS,
        PIPE_PERF_CPU01,
        LAT_CTX,
        LAT_CTX_HOP, /* no run of its own: lat_ctx's usec + overhead_usec, from LAT_CTX's JSON */
        _RUN_MAX,
} RunId;

typedef struct RunInfo {
        const char *name;
        Parse parse;
        bool loadgen; /* else a peer: in our group */
        bool optional; /* lat_ctx: "not available" rather than a failure */
        const char *argv[16]; /* argv[0] "loadgen": BUILD_DIR/loadgen */
} RunInfo;

static const RunInfo runs[_RUN_MAX] = {
        [HB_LOADGEN] = { "loadgen hackbench",
                         PARSE_LOADGEN_HACKBENCH,
                         true,
                         false,
                         { "loadgen", "hackbench", "-g", GROUPS, "-l", LOOPS } },
        [HB_RT] = { "hackbench",
                    PARSE_HACKBENCH,
                    false,
                    false,
                    { "hackbench", "-g", GROUPS, "-l", LOOPS } },
        [HB_PERF] = { "perf messaging",
                      PARSE_MESSAGING,
                      false,
                      false,
                      { "perf", "bench", "sched", "messaging", "-g", GROUPS, "-l", LOOPS } },
        [HBP_LOADGEN] = { "loadgen hackbench --pipe",
                          PARSE_LOADGEN_HACKBENCH,
                          true,
                          false,
                          { "loadgen", "hackbench", "--pipe", "-g", GROUPS, "-l", LOOPS } },
        [HBP_RT] = { "hackbench -p",
                     PARSE_HACKBENCH,
                     false,
                     false,
                     { "hackbench", "-p", "-g", GROUPS, "-l", LOOPS } },
        [HBP_PERF] = { "perf messaging -p",
                       PARSE_MESSAGING,
                       false,
                       false,
                       { "perf", "bench", "sched", "messaging", "-p", "-g", GROUPS, "-l", LOOPS } },
        [HBT_LOADGEN] = { "loadgen hackbench --threads",
                          PARSE_LOADGEN_HACKBENCH,
                          true,
                          false,
                          { "loadgen", "hackbench", "--threads", "-g", GROUPS, "-l", LOOPS } },
        [HBT_RT] = { "hackbench -T",
                     PARSE_HACKBENCH,
                     false,
                     false,
                     { "hackbench", "-T", "-g", GROUPS, "-l", LOOPS } },
        [HBT_PERF] = { "perf messaging -t",
                       PARSE_MESSAGING,
                       false,
                       false,
                       { "perf", "bench", "sched", "messaging", "-t", "-g", GROUPS, "-l", LOOPS } },
        [PIPE_NONE] = { "loadgen pipe none",
                        PARSE_LOADGEN_PIPE,
                        true,
                        false,
                        { "loadgen", "pipe", "-P", "none", "-l", PIPE_LOOPS } },
        [PIPE_PERF] = { "perf pipe",
                        PARSE_PERF_PIPE,
                        false,
                        false,
                        { "perf", "bench", "sched", "pipe", "-l", PIPE_LOOPS } },
        [PIPE_SAME] = { "loadgen pipe same",
                        PARSE_LOADGEN_PIPE,
                        true,
                        false,
                        { "loadgen", "pipe", "-P", "same", "-l", PIPE_LOOPS } },
        [PIPE_PERF_CPU0] = { "taskset -c 0 perf pipe",
                             PARSE_PERF_PIPE,
                             false,
                             false,
                             { "taskset", "-c", "0", "perf", "bench", "sched", "pipe", "-l",
                               PIPE_LOOPS } },
        [PIPE_CROSS] = { "loadgen pipe cross",
                         PARSE_LOADGEN_PIPE,
                         true,
                         false,
                         { "loadgen", "pipe", "-P", "cross", "-l", PIPE_LOOPS } },
        [PIPE_PERF_CPU01] = { "taskset -c 0,1 perf pipe",
                              PARSE_PERF_PIPE,
                              false,
                              false,
                              { "taskset", "-c", "0,1", "perf", "bench", "sched", "pipe", "-l",
                                PIPE_LOOPS } },
        [LAT_CTX] = { "loadgen lat_ctx",
                      PARSE_LAT_CTX,
                      true,
                      true,
                      { "loadgen", "lat_ctx", "--tasks", "2", "--size", "0", "--json" } },
        [LAT_CTX_HOP] = { "loadgen lat_ctx with its overhead", PARSE_LAT_CTX, true, true, {} },
};

typedef struct Section {
        const char *name, *unit;
        RunId first, last;
} Section;

static const Section sections[] = {
        { "hackbench " GROUPS " groups " LOOPS " loops", "s", HB_LOADGEN, HBT_PERF },
        { "pipe " PIPE_LOOPS " round trips", "usecs/op", PIPE_NONE, PIPE_PERF_CPU01 },
        { "lat_ctx 2 tasks size 0", "usec/switch", LAT_CTX, LAT_CTX_HOP },
};

typedef struct Comparison {
        RunId load, peer;
        bool judged;
        double peer_scale; /* the peer's figure times this: perf's usecs/op / 2 per switch */
} Comparison;

static const Comparison comparisons[] = {
        { HB_LOADGEN, HB_RT, true, 1 },
        { HB_LOADGEN, HB_PERF, true, 1 },
        { HBP_LOADGEN, HBP_RT, true, 1 },
        { HBP_LOADGEN, HBP_PERF, true, 1 },
        { HBT_LOADGEN, HBT_RT, true, 1 },
        { HBT_LOADGEN, HBT_PERF, true, 1 },
        { PIPE_NONE, PIPE_PERF, true, 1 },
        { PIPE_SAME, PIPE_PERF_CPU0, true, 1 },
        { PIPE_CROSS, PIPE_PERF_CPU01, false, 1 },
        { LAT_CTX, PIPE_PERF, false, 0.5 }, /* lower by design: see above */
        { LAT_CTX_HOP, PIPE_PERF, true, 0.5 },
};

typedef struct Bench {
        pid_t pid;
        CgroupLayout layout;
        char top[128], group[160];
        bool group_made, slice_existed;
        char dir[PATH_MAX], out_path[PATH_MAX + 16], err_path[PATH_MAX + 16];
        bool dir_made;
        char loadgen[PATH_MAX];
        bool lat_ctx_missing; /* it failed once: not tried again */
} Bench;

typedef struct Results {
        double v[_RUN_MAX][ROUNDS]; /* 0: not available */
} Results;

/* The number after the first `key` in text, skipping blanks. -ENOENT if none. */
static int number_after(const char *text, const char *key, double *ret) {
        const char *p = strstr(text, key);
        char *end;
        double v;

        if (!p)
                return -ENOENT;
        errno = 0;
        v = strtod(p + strlen(key), &end);
        if (errno || end == p + strlen(key))
                return -ENOENT;
        *ret = v;
        return 0;
}

/* The figure before " usecs/op" on its line. */
static int usecs_per_op(const char *text, double *ret) {
        const char *p = strstr(text, " usecs/op");
        const char *q;

        if (!p)
                return -ENOENT;
        for (q = p; q > text && q[-1] == ' '; q--)
                ;
        while (q > text && q[-1] != ' ' && q[-1] != '\n')
                q--;
        return sscanf(q, "%lf", ret) == 1 ? 0 : -ENOENT;
}

static int parse_output(Parse how, const char *out, double *ret) {
        switch (how) {
        case PARSE_LOADGEN_HACKBENCH: return number_after(out, "groups: Time:", ret);
        case PARSE_HACKBENCH: return number_after(out, "Time:", ret);
        case PARSE_MESSAGING: return number_after(out, "Total time:", ret);
        case PARSE_LOADGEN_PIPE:
        case PARSE_PERF_PIPE: return usecs_per_op(out, ret);
        case PARSE_LAT_CTX: {
                const char *rows = strstr(out, "\"rows\"");

                return rows ? number_after(rows, "\"usec\":", ret) : -ENOENT;
        }
        }
        return -EINVAL;
}

/* lat_ctx's usec plus the overhead it subtracted (LMbench's "ovr"): a hop as perf times it. */
static int lat_ctx_hop(const char *out, double usec, double *ret) {
        const char *rows = strstr(out, "\"rows\"");
        double ovr;

        if (!rows || number_after(rows, "\"overhead_usec\":", &ovr) < 0)
                return -ENOENT;
        *ret = usec + ovr;
        return 0;
}

static _Noreturn void child_exec(const Bench *b, const RunInfo *ri) {
        const char *argv[ELEMENTSOF(ri->argv) + 1] = {};

        /* SIGTERM: loadgen then removes its sandbox. */
        (void) prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != b->pid)
                _exit(BENCH_EXIT_SETUP);
        if (!ri->loadgen && cgroup_attach_pid(&b->layout, b->group, getpid()) < 0)
                _exit(BENCH_EXIT_SETUP);
        if (chdir(b->dir) < 0)
                _exit(BENCH_EXIT_SETUP);
        bench_redirect(STDIN_FILENO, "/dev/null", O_RDONLY);
        bench_redirect(STDOUT_FILENO, b->out_path, O_WRONLY | O_CREAT | O_TRUNC);
        bench_redirect(STDERR_FILENO, b->err_path, O_WRONLY | O_CREAT | O_TRUNC);
        for (size_t i = 0; i < ELEMENTSOF(ri->argv) && ri->argv[i]; i++)
                argv[i] = ri->argv[i];
        if (ri->loadgen)
                argv[0] = b->loadgen;
        execvp(argv[0], (char *const *) argv);
        _exit(127);
}

/* Ends pid: loadgen is asked first (SIGTERM) so it removes its sandbox. */
static void kill_run(Bench *b, pid_t pid, bool loadgen) {
        uint64_t deadline = now_usec() + LOADGEN_STOP_USEC;

        if (loadgen) {
                (void) kill(pid, SIGTERM);
                while (now_usec() < deadline && waitpid(pid, NULL, WNOHANG) == 0)
                        (void) usleep(20000);
        }
        (void) kill(pid, SIGKILL);
        if (!loadgen)
                (void) cgroup_kill_all(&b->layout, b->group, 5 * USEC_PER_SEC);
        (void) waitpid(pid, NULL, 0);
}

static void print_err_tail(const char *path) {
        _cleanup_free_ char *text = NULL;
        size_t n = 0;

        if (read_full_at(AT_FDCWD, path, 1 << 20, &text, &n) < 0 || n == 0)
                return;
        fprintf(stderr, "%s", text + (n > 2000 ? n - 2000 : 0));
}

/* Runs one to its end and reads its figure: 0, -EINTR, -ENOENT (optional and not there), -EIO. */
static int measure(Bench *b, RunId id, double *ret, double *ret_hop) {
        const RunInfo *ri = &runs[id];
        _cleanup_free_ char *out = NULL;
        uint64_t deadline = now_usec() + WATCHDOG_USEC;
        int status = 0;
        pid_t pid, w;

        (void) fflush(stdout);
        pid = fork();
        if (pid < 0)
                return bench_fail("fork: %s", strerror(errno)), -errno;
        if (pid == 0)
                child_exec(b, ri);
        /* The tools time their own work; polling here adds nothing to their figures. */
        while ((w = waitpid(pid, &status, WNOHANG)) == 0) {
                if (stop_requested || now_usec() > deadline) {
                        bool stop = stop_requested;

                        kill_run(b, pid, ri->loadgen);
                        if (stop)
                                return -EINTR;
                        bench_fail("%s hung (no end in %" PRIu64 " s)", ri->name,
                                   WATCHDOG_USEC / USEC_PER_SEC);
                        return -EIO;
                }
                (void) usleep(20000);
        }
        if (!ri->loadgen)
                (void) cgroup_kill_all(&b->layout, b->group, 5 * USEC_PER_SEC);
        if (w < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                if (ri->optional)
                        return -ENOENT;
                bench_fail("%s failed (status 0x%x); its stderr:", ri->name, (unsigned) status);
                print_err_tail(b->err_path);
                return -EIO;
        }
        if (read_full_at(AT_FDCWD, b->out_path, 1 << 20, &out, NULL) < 0 ||
            parse_output(ri->parse, out, ret) < 0 || !(*ret > 0) ||
            (id == LAT_CTX && lat_ctx_hop(out, *ret, ret_hop) < 0)) {
                if (ri->optional)
                        return -ENOENT;
                bench_fail("%s printed no figure: %s", ri->name, out ? out : "(nothing)");
                return -EIO;
        }
        return 0;
}

/* The 1-minute load average: a round run beside other work is worth that much less. */
static double loadavg(void) {
        double v[1] = { 0 };

        return getloadavg(v, 1) == 1 ? v[0] : 0;
}

static int run_section(Bench *b, const Section *s, unsigned round, Results *res) {
        /* rounds 2, 4, ...: the peers first */
        bool peers_first = round % 2 == 1;

        for (int pass = 0; pass < 2; pass++)
                for (RunId id = s->first; id <= s->last; id++) {
                        bool peer = !runs[id].loadgen;
                        int r;

                        if (peer != (pass == 0 ? peers_first : !peers_first))
                                continue;
                        if ((id == LAT_CTX && b->lat_ctx_missing) || id == LAT_CTX_HOP)
                                continue;
                        r = measure(b, id, &res->v[id][round], &res->v[LAT_CTX_HOP][round]);
                        if (r == -ENOENT) {
                                b->lat_ctx_missing = true;
                                continue;
                        }
                        if (r < 0)
                                return r;
                }
        printf("round %u%s %s:", round + 1, peers_first ? " (peers first)" : "", s->name);
        for (RunId id = s->first; id <= s->last; id++)
                if (res->v[id][round] > 0)
                        printf("%s %s %.3f", id == s->first ? "" : ",", runs[id].name,
                               res->v[id][round]);
                else
                        printf("%s %s: not available", id == s->first ? "" : ",", runs[id].name);
        printf(" (%s); load average %.1f\n", s->unit, loadavg());
        return 0;
}

/* ---- the report */

/* One line per comparison; returns whether it is judged and outside RATIO_LO..RATIO_HI. */
static bool report_comparison(const Results *res, const Comparison *c, bool lat_ctx_missing) {
        double ratios[ROUNDS], peer[ROUNDS], lo, hi, med;

        if ((c->load == LAT_CTX || c->load == LAT_CTX_HOP) && lat_ctx_missing) {
                if (c->load == LAT_CTX_HOP)
                        return false;
                printf("lat_ctx: not available (loadgen lat_ctx --tasks 2 --size 0 --json did "
                       "not run)\n");
                return false;
        }
        for (unsigned k = 0; k < ROUNDS; k++) {
                peer[k] = res->v[c->peer][k] * c->peer_scale;
                ratios[k] = peer[k] > 0 ? res->v[c->load][k] / peer[k] : 0;
        }
        med = bench_median(ratios, ROUNDS, &lo, &hi);
        printf("%s %.3f, %s%s %.3f: %.2fx (rounds %.2f-%.2f)%s\n", runs[c->load].name,
               bench_median(res->v[c->load], ROUNDS, NULL, NULL), runs[c->peer].name,
               c->peer_scale != 1 ? " per switch (usecs/op / 2)" : "",
               bench_median(peer, ROUNDS, NULL, NULL), med, lo, hi,
               c->judged ? "" : " [shown, not judged]");
        if (!c->judged || (med >= RATIO_LO && med <= RATIO_HI))
                return false;
        printf("WARNING: %s is %.2fx of %s, outside %.2f-%.2f\n", runs[c->load].name, med,
               runs[c->peer].name, RATIO_LO, RATIO_HI);
        return true;
}

static void report(const Bench *b, const Results *res, uint64_t elapsed_usec) {
        unsigned outside = 0, judged = 0;

        printf("\nmedians of %d rounds (hackbench: seconds; pipe: usecs per round trip; lat_ctx: "
               "usecs per switch); ratio loadgen/peer: the median of the rounds' ratios\n",
               ROUNDS);
        for (size_t i = 0; i < ELEMENTSOF(comparisons); i++) {
                const Comparison *c = &comparisons[i];

                if (report_comparison(res, c, b->lat_ctx_missing))
                        outside++;
                if (c->judged && !(c->load == LAT_CTX_HOP && b->lat_ctx_missing))
                        judged++;
        }
        printf("summary: %u judged comparisons in %.0f s; %u outside %.2f-%.2f\n", judged,
               (double) elapsed_usec / (double) USEC_PER_SEC, outside, RATIO_LO, RATIO_HI);
}

/* ---- setup and teardown */

static int check_tools(Bench *b) {
        static const BenchTool tools[] = { { "hackbench", "rt-tests" },
                                           { "perf", "linux-perf" },
                                           { "taskset", "util-linux" } };
        int r = 0;

        (void) snprintf(b->loadgen, sizeof b->loadgen, "%s/loadgen", BUILD_DIR);
        if (access(b->loadgen, X_OK) < 0) {
                bench_fail("%s not found: make all builds it", b->loadgen);
                r = -ENOENT;
        }
        if (bench_check_tools(tools, ELEMENTSOF(tools)) < 0)
                r = -ENOENT;
        if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
                bench_fail("needs two CPUs (pipe cross, taskset -c 0,1)");
                r = -EOPNOTSUPP;
        }
        return r;
}

static int setup(Bench *b) {
        int r = cgroup_layout_detect(&b->layout);

        if (r < 0)
                return bench_fail("no cgroups: %s", strerror(-r)), r;
        if (!b->layout.cpu_path[0]) {
                bench_fail("needs the cpu controller (cgroup mode %s)",
                           cgroup_mode_to_string(b->layout.mode));
                return -EOPNOTSUPP;
        }
        b->slice_existed = bench_dir_exists(b->layout.cpu_path, SLICE);
        /* as deep as loadgen's job group, cgbalance.slice/loadgen-PID/job: group scheduling
         * costs a little per level at every switch */
        (void) snprintf(b->top, sizeof b->top, SLICE "/bench-fidelity-%d", (int) b->pid);
        (void) snprintf(b->group, sizeof b->group, "%s/peers", b->top);
        r = cgroup_create(&b->layout, b->group);
        b->group_made = r >= 0;
        if (r < 0) {
                bench_fail("making the peers' group %s: %s", b->group, strerror(-r));
                return r;
        }
        (void) snprintf(b->dir, sizeof b->dir, WORK_BASE "/bench-fidelity-%d", (int) b->pid);
        if (mkdir(b->dir, 0700) < 0) {
                r = -errno;
                bench_fail("mkdir %s: %s", b->dir, strerror(-r));
                return r;
        }
        b->dir_made = true;
        (void) snprintf(b->out_path, sizeof b->out_path, "%s/run.out", b->dir);
        (void) snprintf(b->err_path, sizeof b->err_path, "%s/run.err", b->dir);
        return 0;
}

static void group_remove(Bench *b) {
        const char *bases[] = { b->layout.cpu_path, b->layout.cpuacct_path, b->layout.cpuset_path,
                                b->layout.memory_path,
                                b->layout.mode == CGROUP_MODE_V1 ? "" : b->layout.unified_path };
        const char *rel[] = { b->group, b->top, b->slice_existed ? NULL : SLICE };

        (void) cgroup_kill_all(&b->layout, b->group, 5 * USEC_PER_SEC);
        (void) cgroup_remove(&b->layout, b->group);
        for (size_t j = 0; j < ELEMENTSOF(rel) && rel[j]; j++)
                for (size_t i = 0; i < ELEMENTSOF(bases); i++) {
                        char p[CGROUP_PATH_MAX + 128];

                        if (!bases[i][0] || !bench_dir_exists(bases[i], rel[j]))
                                continue;
                        (void) snprintf(p, sizeof p, "%s/%s", bases[i], rel[j]);
                        (void) rmdir(p);
                }
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) flag;
        (void) ftw;
        (void) remove(path);
        return 0;
}

static void teardown(Bench *b) {
        if (b->group_made)
                group_remove(b);
        if (b->dir_made)
                (void) nftw(b->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

int main(void) {
        struct sigaction sa = { .sa_handler = on_stop };
        Bench b = { .pid = getpid() };
        Results res = {};
        uint64_t t0 = now_usec();
        int r;

        if (geteuid() != 0) {
                printf("bench-fidelity: skipped, needs root for loadgen's sandbox and the "
                       "peers' cgroup\n");
                return 0;
        }
        (void) sigaction(SIGINT, &sa, NULL);
        (void) sigaction(SIGTERM, &sa, NULL);
        r = check_tools(&b);
        if (r >= 0)
                r = setup(&b);
        if (r >= 0) {
                printf("bench-fidelity: loadgen's hackbench, pipe and lat_ctx against rt-tests "
                       "hackbench and perf bench sched, %d rounds, every other one peers first; "
                       "load average %.1f\n",
                       ROUNDS, loadavg());
                for (unsigned k = 0; r >= 0 && k < ROUNDS; k++)
                        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(sections); i++)
                                r = run_section(&b, &sections[i], k, &res);
        }
        if (r >= 0)
                report(&b, &res, now_usec() - t0);
        else if (r == -EINTR)
                bench_fail("interrupted");
        else if (!bench_error_reported)
                bench_fail("%s", strerror(-r));
        teardown(&b);
        return r < 0 ? 1 : 0;
}
