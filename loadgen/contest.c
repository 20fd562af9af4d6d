/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "contest.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "job.h"
#include "json.h"
#include "log.h"
#include "macro.h"
#include "runner.h"

/* What one contest needs while it runs. */
typedef struct Contest {
        const ContestOptions *o;
        Sandbox *sb;
        char *tree; /* the job's tree */
        char *copy; /* the same tree for ctar, xtar and list: the job's changes as it builds */
        char *work; /* the load's own files */
        unsigned jobs;
        uint64_t start_usec, runs_start_usec; /* the contest's, the first timed run's */
        unsigned done, total; /* runs, for the progress line */
} Contest;

static bool stopped(const Contest *c) {
        return c->o->stop && *c->o->stop;
}

static int enter_job(void *userdata) {
        return sandbox_enter(userdata, SANDBOX_JOB);
}

/* One make in the job group: 0, -EINTR, or -EIO (the job failed; its errors logged). */
static int run_make(Contest *c, const char *target, JobResult *ret) {
        JobResult jr;
        int r;

        r = job_make(c->tree, target, c->jobs, enter_job, c->sb, c->o->stop, &jr);
        if (r < 0)
                return r == -EINTR ? r : log_error_errno(r, "Failed to run make: %m");
        if (!WIFEXITED(jr.exit_status) || WEXITSTATUS(jr.exit_status) != 0) {
                _cleanup_free_ char *errors = job_last_errors(c->tree);

                log_error("The job failed: make%s%s -j %u in %s:\n%s", target ? " " : "",
                          target ? target : "", c->jobs, c->tree, errors ? errors : "(no output)");
                return -EIO;
        }
        if (ret)
                *ret = jr;
        return 0;
}

static void progress(const Contest *c, const Load *l, unsigned run) {
        uint64_t elapsed = (now_usec() - c->start_usec) / 1000000;

        if (c->o->quiet)
                return;
        if (c->done == 0) {
                fprintf(stderr, "loadgen: %s run %u of %u, %" PRIu64 ":%02" PRIu64 " elapsed\n",
                        l->name, run, c->o->runs, elapsed / 60, elapsed % 60);
                return;
        }
        /* Every run so far took about as long as the next ones will (the warm-up aside). */
        uint64_t left =
                (now_usec() - c->runs_start_usec) / 1000000 * (c->total - c->done) / c->done;
        fprintf(stderr,
                "loadgen: %s run %u of %u, %" PRIu64 ":%02" PRIu64 " elapsed, about %" PRIu64
                ":%02" PRIu64 " left\n",
                l->name, run, c->o->runs, elapsed / 60, elapsed % 60, left / 60, left % 60);
}

/* The load's files start from nothing each run. */
static int fresh_work_dir(const Contest *c) {
        int r = load_remove_tree(c->work);

        if (r < 0)
                return r;
        return mkdir(c->work, 0700) < 0 ? negative_errno() : 0;
}

static void nap(const Contest *c, uint64_t usec) {
        uint64_t deadline = now_usec() + usec;

        while (!stopped(c) && now_usec() < deadline)
                load_nap(deadline, 100000);
}

static bool load_is_idle(const Load *l) {
        return l->run == no_load_run || l->run == cacherun_run;
}

/* One timed run of the job beside l. */
static int run_once(Contest *c, const Load *l, ContestRun *ret) {
        _cleanup_load_run_ LoadRun *lr = NULL;
        LoadOptions lo;
        LoadResult res;
        JobResult jr;
        uint64_t w0, w1, c0 = 0, c1 = 0, total_cpu;
        int r;

        r = run_make(c, "clean", NULL);
        if (r >= 0 && l->run != cacherun_run)
                r = tree_evict(c->tree);
        if (r >= 0)
                r = fresh_work_dir(c);
        if (r < 0)
                return r;
        load_options_init(&lo);
        lo.ncpus = sandbox_ncpus(c->sb);
        lo.ram_bytes = c->o->ram_bytes;
        lo.work_dir = c->work;
        lo.other_dir = c->o->other_dir;
        lo.tree_dir = c->copy;
        lo.duration_usec = 0; /* until stopped */
        r = load_run_start(l, &lo, c->sb, c->o->stop, &lr);
        if (r < 0)
                return r == -EINTR ? r : log_error_errno(r, "%s failed to start: %m", l->name);
        if (!load_is_idle(l))
                nap(c, c->o->lead_usec);
        if (stopped(c))
                return -EINTR;
        w0 = load_run_progress(lr);
        (void) load_run_cpu_usec(lr, &c0);
        r = run_make(c, NULL, &jr);
        if (r < 0)
                return r;
        w1 = load_run_progress(lr);
        (void) load_run_cpu_usec(lr, &c1);
        r = load_run_stop(lr, &res, &total_cpu);
        if (r < 0)
                return log_error_errno(r, "%s failed: %m", l->name);
        *ret = (ContestRun){
                .time_usec = jr.elapsed_usec,
                .job_cpu_usec = jr.user_usec + jr.sys_usec,
                .load_work = w1 - w0,
                .load_cpu_usec = c1 > c0 ? c1 - c0 : 0,
        };
        return 0;
}

static int prepare(Contest *c) {
        int r;

        c->tree = sandbox_path(c->sb, "tree");
        c->copy = sandbox_path(c->sb, "tree-copy");
        c->work = sandbox_path(c->sb, "load");
        if (!c->tree || !c->copy || !c->work)
                return -ENOMEM;
        if (mkdir(c->tree, 0700) < 0 || mkdir(c->copy, 0700) < 0)
                return negative_errno();
        r = tree_generate(c->tree, &c->o->tree);
        if (r >= 0)
                r = tree_generate(c->copy, &c->o->tree);
        if (r < 0)
                return log_error_errno(r, "Failed to generate the job's tree: %m");
        if (!c->o->quiet)
                fprintf(stderr, "loadgen: warming up: one build of %u files with make -j %u\n",
                        c->o->tree.files, c->jobs);
        /* As kernbench does: the compiler and the tree in the page cache for every run alike. */
        r = run_make(c, NULL, NULL);
        c->runs_start_usec = now_usec();
        return r;
}

static void contest_done(Contest *c) {
        free(c->tree);
        free(c->copy);
        free(c->work);
}

int contest_run(const ContestOptions *o, Sandbox *sb, ContestResults *ret) {
        _cleanup_(contest_results_done) ContestResults res = { 0 };
        _cleanup_(contest_done) Contest c = {
                .o = o,
                .sb = sb,
                .jobs = o->jobs ? o->jobs : 4 * sandbox_ncpus(sb),
                .start_usec = now_usec(),
                .total = (unsigned) o->n_loads * o->runs,
        };
        int r;

        res.loads = calloc(o->n_loads, sizeof *res.loads);
        if (!res.loads)
                return -ENOMEM;
        res.n_loads = o->n_loads;
        res.jobs = c.jobs;
        res.ncpus = sandbox_ncpus(sb);
        res.ram_bytes = o->ram_bytes;
        r = prepare(&c);
        if (r < 0)
                return r;
        for (size_t i = 0; i < o->n_loads; i++) {
                ContestLoad *cl = &res.loads[i];

                cl->load = o->loads[i];
                cl->runs = calloc(o->runs, sizeof *cl->runs);
                if (!cl->runs)
                        return -ENOMEM;
                for (unsigned k = 0; k < o->runs; k++) {
                        progress(&c, cl->load, k + 1);
                        r = run_once(&c, cl->load, &cl->runs[k]);
                        if (r < 0)
                                return r;
                        cl->n_runs++;
                        c.done++;
                }
        }
        *ret = res;
        res = (ContestResults){ 0 };
        return 0;
}

void contest_results_done(ContestResults *r) {
        for (size_t i = 0; i < r->n_loads; i++)
                free(r->loads[i].runs);
        free(r->loads);
        *r = (ContestResults){ 0 };
}

ContestRow contest_row(const ContestRun *runs, unsigned n, uint64_t contest_scale,
                       double no_load_time_s) {
        ContestRow row = { .runs = n };

        if (n == 0)
                return row;
        for (unsigned i = 0; i < n; i++) {
                double t = (double) runs[i].time_usec;

                row.time_s += t / 1e6;
                row.cpu_pct += t > 0 ? 100.0 * (double) runs[i].job_cpu_usec / t : 0;
                row.loads += (double) runs[i].load_work / (double) MAX(contest_scale, 1u);
                row.lcpu_pct += t > 0 ? 100.0 * (double) runs[i].load_cpu_usec / t : 0;
        }
        row.time_s /= n;
        row.cpu_pct /= n;
        row.loads /= n;
        row.lcpu_pct /= n;
        row.ratio = no_load_time_s > 0 ? row.time_s / no_load_time_s : NAN;
        return row;
}

void contest_format_row(FILE *f, const char *label, const ContestRow *row) {
        fprintf(f, "%s [%u] %.1f %.0f %.0f %.0f %.2f\n", label, row->runs, row->time_s,
                row->cpu_pct, row->loads, row->lcpu_pct, row->ratio);
}

/* The mean no_load time of the results: the denominator of every Ratio. */
static double no_load_time(const ContestResults *r) {
        for (size_t i = 0; i < r->n_loads; i++)
                if (r->loads[i].load->run == no_load_run)
                        return contest_row(r->loads[i].runs, r->loads[i].n_runs, 1, 0).time_s;
        return 0;
}

void contest_print_tables(FILE *f, const ContestResults *r, const char *label) {
        double t0 = no_load_time(r);

        for (size_t i = 0; i < r->n_loads; i++) {
                const ContestLoad *cl = &r->loads[i];
                ContestRow row = contest_row(cl->runs, cl->n_runs, cl->load->contest_scale, t0);

                fprintf(f, "%s%s:\nKernel [runs] Time CPU%% Loads LCPU%% Ratio\n", i ? "\n" : "",
                        cl->load->name);
                contest_format_row(f, label, &row);
        }
}

static void json_parameters(Json *j, const ContestResults *r, const ContestOptions *o) {
        json_key(j, "parameters");
        json_begin(j, '{');
        json_string(j, "label", o->label);
        json_u64(j, "runs", o->runs);
        json_u64(j, "ncpus", r->ncpus);
        json_u64(j, "jobs", r->jobs);
        json_u64(j, "ram_bytes", r->ram_bytes);
        json_u64(j, "lead_usec", o->lead_usec);
        json_string(j, "other_dir", o->other_dir);
        json_key(j, "tree");
        json_begin(j, '{');
        json_u64(j, "files", o->tree.files);
        json_u64(j, "funcs_per_file", o->tree.funcs_per_file);
        json_u64(j, "seed", o->tree.seed);
        json_end(j, '}');
        json_end(j, '}');
}

static void json_load(Json *j, const ContestLoad *cl, double t0) {
        ContestRow row = contest_row(cl->runs, cl->n_runs, cl->load->contest_scale, t0);

        json_begin(j, '{');
        json_string(j, "load", cl->load->name);
        json_string(j, "unit", cl->load->unit);
        json_u64(j, "contest_scale", cl->load->contest_scale);
        json_key(j, "runs");
        json_begin(j, '[');
        for (unsigned k = 0; k < cl->n_runs; k++) {
                json_begin(j, '{');
                json_u64(j, "time_usec", cl->runs[k].time_usec);
                json_u64(j, "job_cpu_usec", cl->runs[k].job_cpu_usec);
                json_u64(j, "load_work", cl->runs[k].load_work);
                json_u64(j, "load_cpu_usec", cl->runs[k].load_cpu_usec);
                json_end(j, '}');
        }
        json_end(j, ']');
        json_key(j, "mean");
        json_begin(j, '{');
        json_double(j, "time_s", row.time_s, 3);
        json_double(j, "cpu_pct", row.cpu_pct, 1);
        json_double(j, "loads", row.loads, 2);
        json_double(j, "lcpu_pct", row.lcpu_pct, 1);
        json_double(j, "ratio", row.ratio, 3);
        json_end(j, '}');
        json_end(j, '}');
}

void contest_write_json(Json *j, const ContestResults *r, const ContestOptions *o,
                        const Sandbox *sb) {
        double t0 = no_load_time(r);

        json_begin(j, '{');
        json_string(j, "loadgen", CGBALANCE_VERSION);
        json_string(j, "benchmark", "contest");
        sandbox_json_machine(j, sb);
        json_parameters(j, r, o);
        json_key(j, "loads");
        json_begin(j, '[');
        for (size_t i = 0; i < r->n_loads; i++)
                json_load(j, &r->loads[i], t0);
        json_end(j, ']');
        json_end(j, '}');
}
