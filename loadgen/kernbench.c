/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "kernbench.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchmark.h"
#include "cli.h"
#include "load.h"
#include "log.h"
#include "macro.h"
#include "tree.h"

/* ---- pure parts */

static const struct {
        const char *name;
        unsigned mul, div; /* jobs = ncpus * mul / div; mul 0: unbounded */
} jobs_keywords[] = {
        { "half", 1, 2 },
        { "cpus", 1, 1 },
        { "4xcpus", 4, 1 },
        { "unbounded", 0, 1 },
};

/* One --jobs item [s, s+len): 0, -EINVAL or -ERANGE. */
static int parse_jobs_item(const char *s, size_t len, unsigned ncpus, unsigned *ret) {
        unsigned long v = 0;

        for (size_t i = 0; i < ELEMENTSOF(jobs_keywords); i++)
                if (strlen(jobs_keywords[i].name) == len &&
                    strncmp(s, jobs_keywords[i].name, len) == 0) {
                        v = (unsigned long) ncpus * jobs_keywords[i].mul / jobs_keywords[i].div;
                        *ret = jobs_keywords[i].mul == 0 ? 0 : (unsigned) MAX(v, 1ul);
                        return 0;
                }
        if (len == 0)
                return -EINVAL;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                v = v * 10 + (unsigned long) (s[i] - '0');
                if (v > KERNBENCH_MAX_JOBS)
                        return -ERANGE;
        }
        *ret = (unsigned) v;
        return 0;
}

int kernbench_parse_jobs(const char *s, unsigned ncpus, unsigned **ret, size_t *ret_n,
                         size_t *ret_errpos) {
        _cleanup_free_ unsigned *v = NULL;
        const char *p = s;
        size_t n = 0;

        v = malloc(AXIS_MAX_VALUES * sizeof *v);
        if (!v)
                return -ENOMEM;
        for (;;) {
                size_t len = strcspn(p, ",");
                int r;

                if (n >= AXIS_MAX_VALUES)
                        r = -ERANGE;
                else
                        r = parse_jobs_item(p, len, ncpus, &v[n]);
                if (r < 0) {
                        if (ret_errpos)
                                *ret_errpos = (size_t) (p - s);
                        return r;
                }
                n++;
                if (p[len] == '\0')
                        break;
                p += len + 1;
        }
        *ret = TAKE_PTR(v);
        *ret_n = n;
        return 0;
}

void kernbench_mean_stddev(const double *v, size_t n, double *ret_mean, double *ret_stddev) {
        double sum = 0, sq = 0, mean;

        for (size_t i = 0; i < n; i++)
                sum += v[i];
        mean = n > 0 ? sum / (double) n : 0;
        for (size_t i = 0; i < n; i++)
                sq += (v[i] - mean) * (v[i] - mean);
        *ret_mean = mean;
        *ret_stddev = n > 1 ? sqrt(sq / (double) (n - 1)) : 0;
}

static KernbenchStat stat_of(const double *v, size_t n) {
        KernbenchStat s;

        kernbench_mean_stddev(v, n, &s.mean, &s.stddev);
        return s;
}

void kernbench_row(const JobResult *runs, unsigned n, unsigned jobs, KernbenchRow *ret) {
        double e[KERNBENCH_MAX_RUNS], u[KERNBENCH_MAX_RUNS], s[KERNBENCH_MAX_RUNS],
                c[KERNBENCH_MAX_RUNS], x[KERNBENCH_MAX_RUNS];

        n = MIN(n, KERNBENCH_MAX_RUNS);
        for (unsigned i = 0; i < n; i++) {
                e[i] = (double) runs[i].elapsed_usec / 1e6;
                u[i] = (double) runs[i].user_usec / 1e6;
                s[i] = (double) runs[i].sys_usec / 1e6;
                c[i] = e[i] > 0 ? 100.0 * (u[i] + s[i]) / e[i] : 0;
                x[i] = (double) (runs[i].vol_ctxsw + runs[i].invol_ctxsw);
        }
        *ret = (KernbenchRow){
                .jobs = jobs,
                .runs = n,
                .elapsed_s = stat_of(e, n),
                .user_s = stat_of(u, n),
                .sys_s = stat_of(s, n),
                .cpu_pct = stat_of(c, n),
                .ctxsw = stat_of(x, n),
        };
}

void kernbench_format_header(FILE *f) {
        fprintf(f, "%20s %9s %17s %17s %17s %15s %17s\n", "", "Jobs", "Elapsed", "User", "System",
                "CPU", "ctx-switches");
}

void kernbench_format_row(FILE *f, const char *label, const KernbenchRow *row) {
        char jobs[16], e[64], u[64], s[64], c[64], x[64];

        if (row->jobs == 0)
                snprintf(jobs, sizeof jobs, "unbounded");
        else
                snprintf(jobs, sizeof jobs, "%u", row->jobs);
        snprintf(e, sizeof e, "%.3fs (%.2f)", row->elapsed_s.mean, row->elapsed_s.stddev);
        snprintf(u, sizeof u, "%.3fs (%.2f)", row->user_s.mean, row->user_s.stddev);
        snprintf(s, sizeof s, "%.3fs (%.2f)", row->sys_s.mean, row->sys_s.stddev);
        snprintf(c, sizeof c, "%.1f%% (%.1f)", row->cpu_pct.mean, row->cpu_pct.stddev);
        snprintf(x, sizeof x, "%.0f (%.0f)", row->ctxsw.mean, row->ctxsw.stddev);
        fprintf(f, "%20s %9s %17s %17s %17s %15s %17s\n", label, jobs, e, u, s, c, x);
}

/* ---- the run */

typedef struct Kernbench {
        const Sandbox *sb;
        const char *tree;
        unsigned warmup_jobs;
        unsigned jobs; /* of the run bench_run() is doing */
} Kernbench;

static int enter_job(void *userdata) {
        return sandbox_enter(userdata, SANDBOX_JOB);
}

/* One make in the job group: 0, or a negative errno with what failed logged. */
static int run_make(const Kernbench *k, const char *target, unsigned jobs, JobResult *ret) {
        JobResult jr;
        int r;

        r = job_make(k->tree, target, jobs, enter_job, (void *) k->sb, NULL, &jr);
        if (r < 0)
                return log_error_errno(r, "Failed to run make: %m");
        if (!WIFEXITED(jr.exit_status) || WEXITSTATUS(jr.exit_status) != 0) {
                _cleanup_free_ char *errors = job_last_errors(k->tree);

                log_error("The build failed: make%s%s -j %u in %s:\n%s", target ? " " : "",
                          target ? target : "", jobs, k->tree, errors ? errors : "(no output)");
                return -EIO;
        }
        if (ret)
                *ret = jr;
        return 0;
}

/* nftw() callback: reads a regular file to the end, so it is in the page cache. */
static int warm_file(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        _cleanup_close_ int fd = -EBADF;
        char buf[65536];
        ssize_t n;

        (void) ftw;
        if (type != FTW_F || !S_ISREG(st->st_mode))
                return 0;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        while ((n = read(fd, buf, sizeof buf)) > 0)
                ;
        return n < 0 ? -errno : 0;
}

/* As kernbench: make clean, the tree into the page cache, one build that is not measured. */
static int warm_up(void *userdata, void *out) {
        const Kernbench *k = userdata;
        int r;

        (void) out;
        r = run_make(k, "clean", k->warmup_jobs, NULL);
        if (r < 0)
                return r;
        r = nftw(k->tree, warm_file, 16, FTW_PHYS | FTW_MOUNT);
        if (r != 0)
                return log_error_errno(r < 0 ? r : EIO, "Failed to read the tree %s: %m", k->tree);
        return run_make(k, NULL, k->warmup_jobs, NULL);
}

/* One measured run: make clean; sync; make -j J. out is a JobResult. */
static int one_run(void *userdata, void *out) {
        const Kernbench *k = userdata;
        int r;

        r = run_make(k, "clean", k->jobs ? k->jobs : 1, NULL);
        if (r < 0)
                return r;
        sync();
        return run_make(k, NULL, k->jobs, out);
}

/* ---- the command */

typedef struct Args {
        CliCommon co;
        const char *jobs_arg, *label, *json;
        unsigned runs;
        bool quiet;
        unsigned *jobs;
        size_t n_jobs;
} Args;

static void args_done(Args *a) {
        cli_common_done(&a->co);
        free(a->jobs);
}

static void help(void) {
        printf("Usage: loadgen kernbench [OPTIONS]\n"
               "\n"
               "kernbench (Con Kolivas after Martin Bligh; seeds 002, 004): compiles the tree\n"
               "loadgen contest compiles (a generated C program) in the run's job group. make\n"
               "clean, the tree read into the page cache, one warm-up build with make -j (4 x\n"
               "CPUs), then for each job count --runs times: make clean; sync; make -j J.\n"
               "Prints one row per job count as it completes, each figure the mean (sample\n"
               "standard deviation) over the runs:\n"
               "\n"
               "  Kernbench:\n"
               "                            Jobs           Elapsed              User ...\n"
               "               default         2    2.611s (0.02)     4.471s (0.01) ...\n"
               "\n"
               "Elapsed: seconds of make, from fork to exit; User, System: CPU seconds of make\n"
               "and every compiler it waited for; CPU: (User+System)/Elapsed; ctx-switches:\n"
               "their voluntary + involuntary context switches.\n"
               "\n"
               "  -J --jobs=LIST         Comma-separated make -j values: numbers (0 is an\n"
               "                         unbounded -j), half (CPUs/2), cpus, 4xcpus, unbounded\n"
               "                         (default half,cpus,4xcpus,unbounded; CPUs: the run's).\n"
               "  -n --runs=N            Measured builds per job count, 1 to %u (default 5).\n"
               "  -L --label=NAME        The first column (default \"default\").\n"
               "     --quiet             No progress lines on stderr.\n" CLI_HELP_JSON CLI_HELP_CPUS
                       CLI_HELP_DIR
               "  -q --quick             The small tree (%u files instead of %u), for "
               "tests.\n" CLI_HELP_TREE_FILES CLI_HELP_NO_SANDBOX CLI_HELP_NO_HOST_RESERVE
               "  -h --help              Show this help.\n",
               KERNBENCH_MAX_RUNS, TREE_QUICK_FILES, TREE_DEFAULT_FILES);
}

/* The CPUs the run will have: --cpus, or this process's affinity. */
static unsigned run_ncpus(const CliCommon *co) {
        cpu_set_t set;

        if (co->cpus)
                return cpumask_count(co->cpus);
        if (sched_getaffinity(0, sizeof set, &set) < 0)
                return 1;
        return (unsigned) MAX(CPU_COUNT(&set), 1);
}

/* 0 to run, 1 after --help, -EINVAL (logged) for bad arguments. */
static int parse_args(int argc, char *argv[], Args *a) {
        enum { ARG_QUIET = 0x100 };
        static const struct option options[] = {
                { "jobs", required_argument, NULL, 'J' },
                { "runs", required_argument, NULL, 'n' },
                CLI_OPT_LABEL,
                { "quiet", no_argument, NULL, ARG_QUIET },
                CLI_OPT_JSON,
                CLI_OPT_CPUS,
                CLI_OPT_DIR,
                CLI_OPT_QUICK,
                CLI_OPT_TREE_FILES,
                CLI_OPT_NO_SANDBOX,
                CLI_OPT_NO_HOST_RESERVE,
                CLI_OPT_HELP,
                {},
        };
        size_t pos = 0;
        int c, r;

        while ((c = getopt_long(argc, argv, "J:n:L:j::c:qh", options, NULL)) >= 0) {
                r = cli_parse_common(c, optarg, &a->co);
                if (r < 0)
                        return -EINVAL;
                if (r > 0)
                        continue;
                switch (c) {
                case 'J': a->jobs_arg = optarg; break;
                case 'n':
                        if (cli_parse_unsigned("runs", optarg, 1, KERNBENCH_MAX_RUNS, &a->runs) < 0)
                                return -EINVAL;
                        break;
                case ARG_QUIET: a->quiet = true; break;
                case 'h': help(); return 1;
                default: return -EINVAL;
                }
        }
        cli_take_report(&a->co, &a->label, &a->json);
        if (optind != argc) {
                log_error("Unexpected argument \"%s\"; see loadgen kernbench --help.",
                          argv[optind]);
                return -EINVAL;
        }
        r = kernbench_parse_jobs(a->jobs_arg, run_ncpus(&a->co), &a->jobs, &a->n_jobs, &pos);
        if (r == -ENOMEM)
                return log_error_errno(r, "Out of memory.");
        if (r < 0) {
                log_error("Invalid --jobs \"%s\" at \"%s\": want numbers from 0 (unbounded) to "
                          "%u or half, cpus, 4xcpus, unbounded, comma-separated (at most %u).",
                          a->jobs_arg, a->jobs_arg + pos, KERNBENCH_MAX_JOBS, AXIS_MAX_VALUES);
                return -EINVAL;
        }
        return 0;
}

/* Refuses a -j this machine cannot run: make, and per job a compiler driver, cc1 and as. */
static int check_limits(const Args *a, const TreeOptions *t) {
        unsigned most = 0;
        bool unbounded = false;
        char what[64];

        for (size_t i = 0; i < a->n_jobs; i++) {
                unbounded = unbounded || a->jobs[i] == 0;
                most = MAX(most, a->jobs[i]);
        }
        if (unbounded)
                most = MAX(most, t->files + 1);
        snprintf(what, sizeof what, "kernbench -j %u", most);
        return bench_check_tasks(what, 1 + 3 * (uint64_t) most, 64);
}

static void json_parameters(Json *j, const Args *a, const TreeOptions *t, const Sandbox *sb,
                            unsigned warmup_jobs) {
        if (!j->f)
                return;
        json_key(j, "parameters");
        json_begin(j, '{');
        json_string(j, "label", a->label);
        json_u64(j, "runs", a->runs);
        json_u64(j, "ncpus", sandbox_ncpus(sb));
        json_u64(j, "warmup_jobs", warmup_jobs);
        json_key(j, "jobs");
        json_begin(j, '[');
        for (size_t i = 0; i < a->n_jobs; i++)
                json_u64(j, NULL, a->jobs[i]);
        json_end(j, ']');
        json_key(j, "tree");
        json_begin(j, '{');
        json_u64(j, "files", t->files);
        json_u64(j, "funcs_per_file", t->funcs_per_file);
        json_u64(j, "seed", t->seed);
        json_end(j, '}');
        json_end(j, '}');
}

static void json_stat(Json *j, const char *key, const KernbenchStat *s, unsigned decimals) {
        json_key(j, key);
        json_begin(j, '{');
        json_double(j, "mean", s->mean, decimals);
        json_double(j, "stddev", s->stddev, decimals);
        json_end(j, '}');
}

static void json_row(Json *j, const char *label, const KernbenchRow *row, const JobResult *runs) {
        if (!j->f)
                return;
        json_begin(j, '{');
        json_string(j, "label", label);
        json_u64(j, "jobs", row->jobs);
        json_bool(j, "unbounded", row->jobs == 0);
        json_key(j, "runs");
        json_begin(j, '[');
        for (unsigned k = 0; k < row->runs; k++) {
                json_begin(j, '{');
                json_u64(j, "elapsed_usec", runs[k].elapsed_usec);
                json_u64(j, "user_usec", runs[k].user_usec);
                json_u64(j, "sys_usec", runs[k].sys_usec);
                json_u64(j, "vol_ctxsw", runs[k].vol_ctxsw);
                json_u64(j, "invol_ctxsw", runs[k].invol_ctxsw);
                json_end(j, '}');
        }
        json_end(j, ']');
        json_stat(j, "elapsed_s", &row->elapsed_s, 6);
        json_stat(j, "user_s", &row->user_s, 6);
        json_stat(j, "sys_s", &row->sys_s, 6);
        json_stat(j, "cpu_pct", &row->cpu_pct, 4);
        json_stat(j, "ctxsw", &row->ctxsw, 3);
        json_end(j, '}');
}

static void progress(const Args *a, unsigned jobs, unsigned run) {
        if (a->quiet)
                return;
        if (jobs == 0)
                fprintf(stderr, "loadgen: kernbench make -j (unbounded) run %u of %u\n", run,
                        a->runs);
        else
                fprintf(stderr, "loadgen: kernbench make -j %u run %u of %u\n", jobs, run, a->runs);
}

/* The tree, the warm-up, then each job count's runs and row. 0, -EINTR or -errno (logged). */
static int kernbench_sweep(const Args *a, const TreeOptions *t, Sandbox *sb, BenchReport *rep) {
        _cleanup_free_ char *tree = sandbox_path(sb, "tree");
        Kernbench k = { .sb = sb, .warmup_jobs = 4 * sandbox_ncpus(sb) };
        JobResult runs[KERNBENCH_MAX_RUNS];
        char warm_out = 0;
        int r;

        if (!tree)
                return log_error_errno(ENOMEM, "Out of memory.");
        k.tree = tree;
        if (mkdir(tree, 0700) < 0)
                return log_error_errno(errno, "Failed to create %s: %m", tree);
        r = tree_generate(tree, t);
        if (r < 0)
                return log_error_errno(r, "Failed to generate the tree in %s: %m", tree);
        json_parameters(&rep->json, a, t, sb, k.warmup_jobs);
        if (rep->json.f) {
                json_key(&rep->json, "rows");
                json_begin(&rep->json, '[');
        }
        if (!a->quiet)
                fprintf(stderr,
                        "loadgen: kernbench warm-up: one build of %u files with make -j %u\n",
                        t->files, k.warmup_jobs);
        /* bench_run() copies out back even at size 0: memcpy() wants a real pointer */
        r = bench_run(sb, warm_up, &k, &warm_out, sizeof warm_out);
        if (r < 0)
                return r;
        bench_printf(rep, "Kernbench:\n");
        if (rep->table)
                kernbench_format_header(rep->table);
        for (size_t i = 0; i < a->n_jobs; i++) {
                KernbenchRow row;

                k.jobs = a->jobs[i];
                for (unsigned n = 0; n < a->runs; n++) {
                        progress(a, k.jobs, n + 1);
                        r = bench_run(sb, one_run, &k, &runs[n], sizeof runs[n]);
                        if (r < 0)
                                return r;
                }
                kernbench_row(runs, a->runs, k.jobs, &row);
                if (rep->table) {
                        kernbench_format_row(rep->table, a->label, &row);
                        (void) fflush(rep->table);
                }
                json_row(&rep->json, a->label, &row, runs);
        }
        if (rep->json.f)
                json_end(&rep->json, ']');
        return 0;
}

typedef struct Sweep {
        const Args *a;
        const TreeOptions *t;
} Sweep;

static int sweep(void *userdata, Sandbox *sb, BenchReport *rep) {
        const Sweep *w = userdata;

        return kernbench_sweep(w->a, w->t, sb, rep);
}

int kernbench_main(int argc, char *argv[]) {
        _cleanup_(args_done) Args a = {
                .co = CLI_COMMON_INIT,
                .jobs_arg = "half,cpus,4xcpus,unbounded",
                .label = "default",
                .runs = 5,
        };
        TreeOptions t;
        int r;

        r = parse_args(argc, argv, &a);
        if (r != 0)
                return r > 0 ? 0 : EXIT_USAGE;
        cli_tree_options(&a.co, &t);
        if (check_limits(&a, &t) < 0)
                return EXIT_USAGE;
        return bench_main("kernbench", a.json, &a.co, sweep, &(Sweep){ &a, &t });
}
