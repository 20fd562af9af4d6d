/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hackbench (Rusty Russell, 2002; the version in rt-tests and perf bench sched messaging): groups
 * of senders and receivers, every sender writing `loops` messages to every receiver of its group
 * through a socketpair or a pipe per receiver. The same shape as the original, step by step, so
 * the same groups and loops take the same time: receivers are made first (the caller closes
 * each read end once its receiver has it), then the senders; every worker says it is ready on
 * one pipe and waits in poll() on a wake pipe; the time runs from the wake byte to the last
 * worker reaped.
 */
#include "hackbench.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchmark.h"
#include "cli.h"
#include "load.h"
#include "log.h"
#include "macro.h"

#define DEFAULT_GROUPS "10-40:10"
#define MAX_GROUPS 1000000u /* the real limit is the machine's: bench_check_tasks() */
#define MAX_FDS 10000u
#define MAX_DATASIZE (1u << 20)
#define MAX_RUNS 1000u
#define THREAD_STACK_BYTES (256u << 10) /* workers keep their message on the heap */

void hackbench_params_init(HackbenchParams *p) {
        *p = (HackbenchParams){ .groups = 10, .fds = 20, .loops = 100, .datasize = 100 };
}

uint64_t hackbench_tasks(const HackbenchParams *p) {
        return (uint64_t) p->groups * 2 * p->fds;
}

uint64_t hackbench_fds(const HackbenchParams *p) {
        return (p->threads ? (uint64_t) p->groups : 1) * 2 * p->fds + 4;
}

int hackbench_format_row(char *buf, size_t size, unsigned groups, uint64_t usec) {
        return snprintf(buf, size, "%u groups: Time: %" PRIu64 ".%03" PRIu64 "\n", groups,
                        usec / 1000000, usec % 1000000 / 1000);
}

/* ---- the workers */

typedef struct Worker {
        const HackbenchParams *p;
        int ready_out, wake_in;
        int in_fd; /* a receiver's */
        const int *out_fds; /* a sender's: one per receiver of its group */
        int error;
} Worker;

static int fdpair(bool use_pipe, int fds[2]) {
        int r = use_pipe ? pipe2(fds, O_CLOEXEC)
                         : socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds);

        return r < 0 ? -errno : 0;
}

/* Says it is ready, then waits for the wake byte, as the original's ready(). */
static int ready(const Worker *w) {
        struct pollfd pfd = { .fd = w->wake_in, .events = POLLIN };
        char c = 0;

        if (write(w->ready_out, &c, 1) != 1)
                return -errno;
        for (;;) {
                int n = poll(&pfd, 1, -1);

                if (n == 1)
                        return 0;
                if (n < 0 && errno != EINTR)
                        return -errno;
        }
}

/* Each allocates its message after ready(): a worker that failed before it would leave the
 * caller waiting for its ready byte. */
static int sender(const Worker *w) {
        _cleanup_free_ char *buf = NULL;
        int r;

        r = ready(w);
        if (r < 0)
                return r;
        buf = calloc(1, w->p->datasize);
        if (!buf)
                return -ENOMEM;
        for (unsigned i = 0; i < w->p->loops; i++)
                for (unsigned j = 0; j < w->p->fds; j++)
                        for (size_t done = 0; done < w->p->datasize;) {
                                ssize_t n = write(w->out_fds[j], buf + done, w->p->datasize - done);

                                if (n < 0 && errno != EINTR)
                                        return -errno;
                                if (n > 0)
                                        done += (size_t) n;
                        }
        return 0;
}

static int receiver(const Worker *w) {
        _cleanup_free_ char *buf = NULL;
        uint64_t packets = (uint64_t) w->p->fds * w->p->loops;
        int r;

        r = ready(w);
        if (r < 0)
                return r;
        buf = malloc(w->p->datasize);
        if (!buf)
                return -ENOMEM;
        for (uint64_t i = 0; i < packets; i++)
                for (size_t done = 0; done < w->p->datasize;) {
                        ssize_t n = read(w->in_fd, buf + done, w->p->datasize - done);

                        if (n == 0)
                                return -EPIPE; /* a sender died */
                        if (n < 0 && errno != EINTR)
                                return -errno;
                        if (n > 0)
                                done += (size_t) n;
                }
        return 0;
}

static void *thread_main(void *userdata) {
        Worker *w = userdata;

        w->error = w->out_fds ? sender(w) : receiver(w);
        return NULL;
}

/* ---- processes */

typedef struct Procs {
        pid_t *pids;
        size_t n;
} Procs;

static void procs_kill(Procs *ps) {
        for (size_t i = 0; i < ps->n; i++)
                if (ps->pids[i] > 0)
                        (void) kill(ps->pids[i], SIGKILL);
        for (size_t i = 0; i < ps->n; i++)
                if (ps->pids[i] > 0)
                        while (waitpid(ps->pids[i], NULL, 0) < 0 && errno == EINTR)
                                ;
        ps->n = 0;
}

static int fork_worker(Procs *ps, const Worker *w) {
        pid_t ppid = getpid(), pid = fork();

        if (pid < 0)
                return -errno;
        if (pid == 0) {
                /* Nothing outlives the caller, whoever calls it (schedbench too). */
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != ppid)
                        _exit(1);
                (void) signal(SIGPIPE, SIG_IGN);
                _exit((w->out_fds ? sender(w) : receiver(w)) < 0 ? 1 : 0);
        }
        ps->pids[ps->n++] = pid;
        return 0;
}

/* One group's processes: a pair and a receiver per fd, then the senders, as group() did. */
static int group_procs(const HackbenchParams *p, Procs *ps, int ready_out, int wake_in) {
        _cleanup_free_ int *out = calloc(p->fds, sizeof *out);
        Worker w = { .p = p, .ready_out = ready_out, .wake_in = wake_in };
        unsigned made = 0;
        int r = 0;

        if (!out)
                return -ENOMEM;
        for (; made < p->fds; made++) {
                int fds[2];

                r = fdpair(p->pipe, fds);
                if (r < 0)
                        break;
                /* The pairs are close-on-exec only; forks inherit them as in the original. */
                w.in_fd = fds[0];
                r = fork_worker(ps, &w);
                out[made] = fds[1];
                (void) close(fds[0]);
                if (r < 0) {
                        made++;
                        break;
                }
        }
        w.out_fds = out;
        for (unsigned i = 0; r >= 0 && i < p->fds; i++)
                r = fork_worker(ps, &w);
        for (unsigned i = 0; i < made; i++)
                (void) close(out[i]);
        return r;
}

static bool stopped(volatile sig_atomic_t *stop) {
        return stop && *stop;
}

/* Reads one ready byte per worker. */
static int wait_ready(int ready_in, uint64_t n, volatile sig_atomic_t *stop) {
        for (uint64_t i = 0; i < n;) {
                char c;
                ssize_t k = read(ready_in, &c, 1);

                if (stopped(stop))
                        return -EINTR;
                if (k == 1)
                        i++;
                else if (k == 0)
                        return -EPIPE;
                else if (errno != EINTR)
                        return -errno;
        }
        return 0;
}

/*
 * waitpid() until pid ends, or -EINTR once *stop is set: the signal that sets it interrupts the
 * wait (stop handlers go without SA_RESTART). One that lands between the check and the wait is
 * seen when the child ends on its own.
 */
static int wait_child(pid_t pid, int *status, volatile sig_atomic_t *stop) {
        for (;;) {
                if (stopped(stop))
                        return -EINTR;
                if (waitpid(pid, status, 0) == pid)
                        return 0;
                if (errno != EINTR)
                        return -errno;
        }
}

/* Reaps every worker in order; the first that failed ends the rest (they would wait forever). */
static int reap_procs(Procs *ps, volatile sig_atomic_t *stop) {
        for (size_t i = 0; i < ps->n; i++) {
                int status, r = wait_child(ps->pids[i], &status, stop);

                if (r < 0) {
                        procs_kill(ps);
                        return r;
                }
                ps->pids[i] = 0;
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                        procs_kill(ps);
                        return -EIO;
                }
        }
        ps->n = 0;
        return 0;
}

static int run_procs(const HackbenchParams *p, volatile sig_atomic_t *stop, int ready[2],
                     int wake[2], uint64_t *ret_usec) {
        Procs ps = { .pids = calloc(hackbench_tasks(p), sizeof(pid_t)) };
        uint64_t t0;
        int r = 0;

        if (!ps.pids)
                return -ENOMEM;
        for (unsigned g = 0; r >= 0 && g < p->groups; g++) {
                r = group_procs(p, &ps, ready[1], wake[0]);
                if (r >= 0 && stopped(stop))
                        r = -EINTR;
        }
        if (r >= 0)
                r = wait_ready(ready[0], ps.n, stop);
        if (r >= 0) {
                t0 = now_usec();
                if (write(wake[1], "", 1) != 1)
                        r = -errno;
        }
        if (r >= 0)
                r = reap_procs(&ps, stop);
        if (r >= 0)
                *ret_usec = now_usec() - t0;
        procs_kill(&ps);
        free(ps.pids);
        return r;
}

/* ---- threads */

/* What the threads' process holds until it exits: no need to free or close any of it. */
typedef struct Threads {
        pthread_t *tids;
        Worker *workers; /* per group: fds receivers, then fds senders */
        int *fds; /* per group: fds read ends, then the fds write ends (the senders' out_fds) */
        size_t n_tids;
} Threads;

static int start_threads(const HackbenchParams *p, Threads *t, int ready_out, int wake_in) {
        pthread_attr_t attr;
        int r = 0;

        if (pthread_attr_init(&attr) != 0 ||
            pthread_attr_setstacksize(&attr, THREAD_STACK_BYTES) != 0)
                return -ENOMEM;
        for (unsigned g = 0; r == 0 && g < p->groups; g++) {
                int *gfds = t->fds + (size_t) g * p->fds * 2;
                Worker *gw = t->workers + (size_t) g * p->fds * 2;

                /* A group's read ends, then its write ends: the senders' out_fds. */
                for (unsigned i = 0; r == 0 && i < p->fds; i++) {
                        int pair[2];

                        r = fdpair(p->pipe, pair);
                        if (r < 0)
                                break;
                        gfds[i] = pair[0];
                        gfds[p->fds + i] = pair[1];
                        gw[i] = (Worker){
                                .p = p, .ready_out = ready_out, .wake_in = wake_in, .in_fd = pair[0]
                        };
                        r = -pthread_create(&t->tids[t->n_tids], &attr, thread_main, &gw[i]);
                        if (r == 0)
                                t->n_tids++;
                }
                for (unsigned i = 0; r == 0 && i < p->fds; i++) {
                        gw[p->fds + i] = (Worker){ .p = p,
                                                   .ready_out = ready_out,
                                                   .wake_in = wake_in,
                                                   .out_fds = gfds + p->fds };
                        r = -pthread_create(&t->tids[t->n_tids], &attr, thread_main,
                                            &gw[p->fds + i]);
                        if (r == 0)
                                t->n_tids++;
                }
        }
        (void) pthread_attr_destroy(&attr);
        return r;
}

/*
 * In a process of its own (so a stop can end threads blocked in read()): starts the threads,
 * releases them, joins them all and writes the time to out_fd.
 */
static _Noreturn void threads_child(const HackbenchParams *p, int ready[2], int wake[2],
                                    int out_fd) {
        size_t n = (size_t) hackbench_tasks(p);
        Threads t = {
                .tids = calloc(n, sizeof(pthread_t)),
                .workers = calloc(n, sizeof(Worker)),
                .fds = calloc(n, sizeof(int)),
        };
        uint64_t t0, usec;
        int r;

        if (!t.tids || !t.workers || !t.fds)
                _exit(1);
        (void) signal(SIGPIPE, SIG_IGN);
        r = start_threads(p, &t, ready[1], wake[0]);
        if (r < 0)
                _exit(1); /* the threads die with the process */
        r = wait_ready(ready[0], t.n_tids, NULL);
        if (r < 0)
                _exit(1);
        t0 = now_usec();
        if (write(wake[1], "", 1) != 1)
                _exit(1);
        for (size_t i = 0; i < t.n_tids; i++)
                (void) pthread_join(t.tids[i], NULL);
        usec = now_usec() - t0;
        for (size_t i = 0; i < t.n_tids; i++)
                if (t.workers[i].error < 0)
                        _exit(1);
        _exit(write(out_fd, &usec, sizeof usec) == sizeof usec ? 0 : 1);
}

static int run_threads(const HackbenchParams *p, volatile sig_atomic_t *stop, int ready[2],
                       int wake[2], uint64_t *ret_usec) {
        _cleanup_close_ int out_in = -EBADF;
        pid_t ppid = getpid(), pid;
        int out[2], status, r;
        uint64_t usec;

        if (stopped(stop))
                return -EINTR;
        if (pipe2(out, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                r = -errno;
                (void) close(out[0]);
                (void) close(out[1]);
                return r;
        }
        if (pid == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != ppid)
                        _exit(1);
                threads_child(p, ready, wake, out[1]);
        }
        (void) close(out[1]);
        out_in = out[0];
        r = wait_child(pid, &status, stop);
        if (r < 0) {
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                return r;
        }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
            read(out_in, &usec, sizeof usec) != sizeof usec)
                return -EIO;
        *ret_usec = usec;
        return 0;
}

int hackbench_once(const HackbenchParams *p, volatile sig_atomic_t *stop, uint64_t *ret_usec) {
        int ready[2], wake[2], r;

        if (p->groups == 0 || p->fds == 0 || p->datasize == 0)
                return -EINVAL;
        if (pipe2(ready, O_CLOEXEC) < 0)
                return -errno;
        if (pipe2(wake, O_CLOEXEC) < 0) {
                r = -errno;
                (void) close(ready[0]);
                (void) close(ready[1]);
                return r;
        }
        r = p->threads ? run_threads(p, stop, ready, wake, ret_usec)
                       : run_procs(p, stop, ready, wake, ret_usec);
        (void) close(ready[0]);
        (void) close(ready[1]);
        (void) close(wake[0]);
        (void) close(wake[1]);
        return r;
}

/* ---- loadgen hackbench */

static void help(void) {
        printf("Usage: loadgen hackbench [OPTIONS]\n"
               "\n"
               "hackbench (Rusty Russell, 2002), as rt-tests' hackbench and perf bench sched\n"
               "messaging run it: per group, FDS senders and FDS receivers (processes, or\n"
               "threads), a socketpair (or pipe) per receiver; each sender writes LOOPS messages\n"
               "of DATASIZE bytes to each receiver of its group. All start together; the time\n"
               "runs from their release to the last one's end. One line per group count, in the\n"
               "order given (seed 004):\n"
               "\n"
               "  10 groups: Time: 1.332\n"
               "\n"
               "  -g --groups=AXIS       Group counts: N, A-B, A-B:STEP, A-BxFACTOR, comma-\n"
               "                         separated (default " DEFAULT_GROUPS
               "; the seed swept 10-160:10).\n"
               "                         Each runs GROUPS x 2 x FDS tasks at once.\n"
               "  -l --loops=N           Messages each sender sends each receiver (default 100).\n"
               "  -s --datasize=BYTES    Bytes per message (default 100).\n"
               "  -f --fds=N             Senders and receivers per group (default 20).\n"
               "  -p --pipe              Pipes instead of AF_UNIX stream socketpairs.\n"
               "  -T --threads           Threads instead of processes.\n"
               "  -r --runs=N            Run each group count N times; print the mean (default\n"
               "                         1).\n"
               "     --label=NAME        Print the seed's header, \"Hackbench:<TAB>NAME\", first\n"
               "                         (NAME names the column: the kernel, the "
               "balancer).\n" CLI_HELP_CPUS CLI_HELP_NO_SANDBOX CLI_HELP_NO_HOST_RESERVE
                       CLI_HELP_JSON "  -h --help              Show this help.\n"
               "\n"
               "Time is in seconds, truncated to milliseconds as rt-tests prints it. A group\n"
               "count whose tasks or descriptors this machine cannot hold is refused up front.\n");
}

typedef struct Options {
        HackbenchParams p;
        unsigned *groups;
        size_t n_groups;
        unsigned runs;
        const char *label, *json;
        CliCommon co;
} Options;

static void options_done(Options *o) {
        free(o->groups);
        cli_common_done(&o->co);
}

/* 0, 1 for --help (printed), or -EINVAL (logged). */
static int parse_options(int argc, char *argv[], Options *o) {
        static const struct option options[] = {
                { "groups", required_argument, NULL, 'g' },
                { "loops", required_argument, NULL, 'l' },
                { "datasize", required_argument, NULL, 's' },
                { "fds", required_argument, NULL, 'f' },
                { "pipe", no_argument, NULL, 'p' },
                { "threads", no_argument, NULL, 'T' },
                { "runs", required_argument, NULL, 'r' },
                CLI_OPT_LABEL,
                CLI_OPT_CPUS,
                CLI_OPT_NO_SANDBOX,
                CLI_OPT_NO_HOST_RESERVE,
                CLI_OPT_JSON,
                CLI_OPT_HELP,
                {},
        };
        const char *groups = DEFAULT_GROUPS;
        int c, r;

        while ((c = getopt_long(argc, argv, "g:l:s:f:pTr:c:L:j::h", options, NULL)) >= 0) {
                r = cli_parse_common(c, optarg, &o->co);
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                switch (c) {
                case 'g': groups = optarg; break;
                case 'l':
                        r = cli_parse_unsigned("loops", optarg, 1, UINT32_MAX, &o->p.loops);
                        break;
                case 's':
                        r = cli_parse_unsigned("datasize", optarg, 1, MAX_DATASIZE, &o->p.datasize);
                        break;
                case 'f': r = cli_parse_unsigned("fds", optarg, 1, MAX_FDS, &o->p.fds); break;
                case 'p': o->p.pipe = true; break;
                case 'T': o->p.threads = true; break;
                case 'r': r = cli_parse_unsigned("runs", optarg, 1, MAX_RUNS, &o->runs); break;
                case 'h': help(); return 1;
                default: return -EINVAL; /* getopt said why */
                }
                if (r < 0)
                        return r;
        }
        cli_take_report(&o->co, &o->label, &o->json);
        if (optind < argc) {
                log_error("Unexpected argument \"%s\"; see loadgen hackbench --help.",
                          argv[optind]);
                return -EINVAL;
        }
        return bench_parse_axis("groups", groups, 1, MAX_GROUPS, &o->groups, &o->n_groups);
}

/* The largest group count must fit: its tasks at once, and its descriptors in one process. */
static int check_limits(const Options *o) {
        HackbenchParams p = o->p;
        char what[64];

        p.groups = 0;
        for (size_t i = 0; i < o->n_groups; i++)
                p.groups = MAX(p.groups, o->groups[i]);
        snprintf(what, sizeof what, "hackbench %u groups", p.groups);
        return bench_check_tasks(what, hackbench_tasks(&p), hackbench_fds(&p));
}

static int run_fn(void *userdata, void *out) {
        return hackbench_once(userdata, NULL, out);
}

static void json_parameters(Json *j, const Options *o) {
        json_key(j, "parameters");
        json_begin(j, '{');
        json_key(j, "groups");
        json_begin(j, '[');
        for (size_t i = 0; i < o->n_groups; i++)
                json_u64(j, NULL, o->groups[i]);
        json_end(j, ']');
        json_u64(j, "fds", o->p.fds);
        json_u64(j, "loops", o->p.loops);
        json_u64(j, "datasize", o->p.datasize);
        json_string(j, "ipc", o->p.pipe ? "pipe" : "socketpair");
        json_string(j, "mode", o->p.threads ? "threads" : "processes");
        json_u64(j, "runs", o->runs);
        if (o->label)
                json_string(j, "label", o->label);
        json_end(j, '}');
}

/* Every run of one group count; the row's time is their mean. */
static int run_row(const Options *o, Sandbox *sb, BenchReport *rep, unsigned groups) {
        HackbenchParams p = o->p;
        uint64_t sum = 0, mean;
        char line[64];
        _cleanup_free_ uint64_t *usec = calloc(o->runs, sizeof *usec);
        int r;

        if (!usec)
                return log_error_errno(ENOMEM, "Out of memory.");
        p.groups = groups;
        for (unsigned k = 0; k < o->runs; k++) {
                r = bench_run(sb, run_fn, &p, &usec[k], sizeof usec[k]);
                if (r == -EINTR)
                        return r;
                if (r < 0)
                        return log_error_errno(r, "hackbench %u groups failed: %m", groups);
                sum += usec[k];
        }
        mean = sum / o->runs;
        (void) hackbench_format_row(line, sizeof line, groups, mean);
        bench_printf(rep, "%s", line);
        if (rep->json.f) {
                json_begin(&rep->json, '{');
                json_u64(&rep->json, "groups", groups);
                json_u64(&rep->json, "tasks", hackbench_tasks(&p));
                json_key(&rep->json, "runs_usec");
                json_begin(&rep->json, '[');
                for (unsigned k = 0; k < o->runs; k++)
                        json_u64(&rep->json, NULL, usec[k]);
                json_end(&rep->json, ']');
                json_u64(&rep->json, "time_usec", mean);
                json_double(&rep->json, "time_s", (double) mean / 1e6, 6);
                json_end(&rep->json, '}');
        }
        return 0;
}

int hackbench_main(int argc, char *argv[]) {
        _cleanup_(options_done) Options o = { .runs = 1, .co = CLI_COMMON_INIT };
        _cleanup_sandbox_ Sandbox *sb = NULL;
        BenchReport rep;
        int r;

        hackbench_params_init(&o.p);
        r = parse_options(argc, argv, &o);
        if (r != 0)
                return r > 0 ? 0 : EXIT_USAGE;
        if (check_limits(&o) < 0)
                return EXIT_USAGE;
        r = cli_install_stop_handlers();
        if (r < 0)
                return log_error_errno(r, "Failed to install signal handlers: %m"), 1;
        if (cli_make_sandbox(&o.co, &sb) < 0)
                return 1;
        if (bench_report_open(&rep, o.json, "hackbench", sb) < 0)
                return 1;
        if (rep.json.f) {
                json_parameters(&rep.json, &o);
                json_key(&rep.json, "rows");
                json_begin(&rep.json, '[');
        }
        if (o.label)
                bench_printf(&rep, "Hackbench:\t%s\n", o.label);
        for (size_t i = 0; r >= 0 && i < o.n_groups && !cli_stop; i++)
                r = run_row(&o, sb, &rep, o.groups[i]);
        if (rep.json.f)
                json_end(&rep.json, ']');
        if (bench_report_close(&rep) < 0 && r >= 0)
                r = -EIO;
        if (cli_stop)
                return cli_interrupted();
        return r < 0 ? 1 : 0;
}
