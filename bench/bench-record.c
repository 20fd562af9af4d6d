/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What recording costs and what a recording replays at, on recordings of simulated hours (loadgen
 * simulate's model, loadgen/simulate.h, with cgbalanced's policy in the loop, 1 s ticks):
 *   100 tasks     the sn2 server of 64 CPUs in 4 nodes: 24 busy tasks bound to node 0 (moved by the
 *                 policy), 76 bursty ones (busy 0.3 s of every 2 s) spread
 *   10,000 tasks  the same machine: 24 bound busy ones and 9,976 busy a tick in 250
 * Per case: the bytes the hour took (per task and tick, and per hour per 100 tasks: the budget is
 * 1 MB), trace_writer_tick()'s CPU time against the model's and the policy's in the same ticks,
 * then the replay (daemon/replay.c, what cgbalanced --replay runs: every plan made again and
 * compared) against its floor, reading the file alone (trace_reader_next() to the end): wall
 * seconds, the target under 30 s for the 10,000 tasks' hour. The replay must find every plan the
 * same; the bench says so, or fails.
 *
 * A measurement, not a test: exits 0 unless a case cannot be set up or its replay differs.
 * Options: --ticks N (default 3600) for a shorter run.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "parse.h"
#include "policy.h"
#include "replay.h"
#include "simulate.h"
#include "support.h"
#include "topology.h"
#include "trace.h"
#include "tunables.h"

typedef struct Case {
        const char *name;
        const char *specs[3];
} Case;

static const Case cases[] = {
        { "100 tasks",
          { "24:busy,mem=512,node=0,bind,group=bound", "76:burst=0.3/2,mem=128,group=bursty",
            NULL } },
        { "10,000 tasks",
          { "24:busy,mem=512,node=0,bind,group=bound", "9976:random=0.004,mem=64,group=many",
            NULL } },
};

static double cpu_s(void) {
        return (double) clock_nsec(CLOCK_PROCESS_CPUTIME_ID) / 1e9;
}

static double wall_s(void) {
        return (double) now_usec() / 1e6;
}

static int record_case(const Case *c, const Topology *topo, uint64_t ticks, const char *path,
                       double *ret_sim_s, double *ret_rec_s, uint64_t *ret_bytes,
                       size_t *ret_tasks) {
        _cleanup_sim_ Sim *sim = NULL;
        _cleanup_policy_state_ PolicyState *state = policy_state_new(topo);
        _cleanup_trace_writer_ TraceWriter *w = NULL;
        _cleanup_free_ char *ini = NULL;
        SimTaskSpec specs[3];
        size_t n = 0, size = 0, tasks = 0;
        PolicyParams params;
        Tunables tun;
        double sim_s = 0, rec_s = 0;
        FILE *f;
        int r;

        for (; c->specs[n]; n++) {
                char why[128];

                if (sim_parse_tasks(c->specs[n], &specs[n], why, sizeof why) < 0)
                        return log_error_errno(EINVAL, "%s: %s", c->specs[n], why);
                tasks += specs[n].count;
        }
        r = tunables_defaults(&tun);
        if (r < 0)
                return r;
        tun.override_foreign_affinity = true;
        f = open_memstream(&ini, &size);
        r = f ? config_write_values(&tunables_schema, &tun, f) : -ENOMEM;
        if (f && fclose(f) != 0)
                r = -ENOMEM;
        if (r >= 0)
                r = policy_params_from_tunables(&tun, topo, &params);
        tunables_free(&tun);
        if (r >= 0 && !state)
                r = -ENOMEM;
        if (r >= 0)
                r = sim_new(topo, specs, n, 1, 1000000, &sim);
        if (r >= 0)
                r = trace_writer_open(path,
                                      &(TraceWriterOptions){ .max_size = UINT64_C(1) << 40,
                                                             .names = true,
                                                             .program = "bench-record" },
                                      &w);
        if (r >= 0)
                r = trace_writer_topology(w, topo);
        if (r >= 0)
                r = trace_writer_config(w, ini);
        for (uint64_t k = 1; r >= 0 && k <= ticks; k++) {
                _cleanup_plan_ Plan *plan = NULL;
                const PolicySnapshot *snap;
                double t0 = cpu_s(), t1;

                r = sim_step(sim, k * 1000000, &snap, NULL);
                if (r >= 0)
                        r = policy_plan(state, snap, topo, &params, k * 1000000, false, &plan);
                t1 = cpu_s();
                sim_s += t1 - t0;
                if (r >= 0)
                        r = trace_writer_tick(w, k * 1000000, 0, snap, plan);
                rec_s += cpu_s() - t1;
                if (r >= 0)
                        r = sim_apply(sim, plan, k * 1000000, false);
        }
        if (r < 0)
                return log_error_errno(r, "%s: recording failed: %m", c->name);
        *ret_sim_s = sim_s;
        *ret_rec_s = rec_s;
        *ret_bytes = trace_writer_bytes(w);
        *ret_tasks = tasks;
        return 0;
}

/* The floor: the file read to its end, nothing planned. */
static int read_all_ticks(const char *path, uint64_t *ret_ticks) {
        _cleanup_trace_reader_ TraceReader *r = NULL;
        char why[256];
        TraceEvent e;
        int k;

        *ret_ticks = 0;
        k = trace_reader_open(path, &r, why, sizeof why);
        while (k >= 0 && (k = trace_reader_next(r, &e, why, sizeof why)) > 0)
                *ret_ticks += e.kind == TRACE_EVENT_TICK;
        if (k < 0)
                return log_error_errno(k, "%s: %s", path, why);
        return 0;
}

int main(int argc, char *argv[]) {
        _cleanup_topology_ Topology *topo = NULL;
        const SimMachine *m = sim_machine_find("snc");
        _cleanup_free_ unsigned *d = NULL;
        uint64_t ticks = 3600;
        unsigned n = 0;
        char dir[] = "/tmp/bench-record-XXXXXX";
        int r;

        log_set_ident("bench-record");
        if (argc == 3 && streq(argv[1], "--ticks")) {
                if (parse_u64_span(argv[2], strlen(argv[2]), &ticks) < 0)
                        ticks = 0; /* refused below */
        } else if (argc != 1) {
                fprintf(stderr, "usage: bench-record [--ticks N]\n");
                return 2;
        }
        if (ticks == 0) {
                fprintf(stderr,
                        "usage: bench-record [--ticks N]: N a number of ticks, 1 or more\n");
                return 2;
        }
        if (!mkdtemp(dir))
                return 1;
        if (topology_parse_distances(m->distances, &d, &n, NULL) < 0 ||
            topology_new_from_synthetic(m->synthetic, d, n, &topo) < 0)
                return 1;
        printf("bench-record: %" PRIu64 " ticks of 1 s on the simulated %s (%s)\n", ticks, m->name,
               m->about);
        printf("  %-13s %10s %11s %9s %9s %9s %9s %9s %8s\n", "case", "bytes", "B/task/tick",
               "MB/h/100", "record s", "of tick", "read s", "replay s", "ratio");
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *path = NULL;
                double sim_s, rec_s, t0, read_s, replay_s;
                uint64_t bytes, read_ticks;
                size_t tasks;
                ReplayResult res;
                FILE *null = fopen("/dev/null", "we");

                if (!null || asprintf(&path, "%s/rec", dir) < 0)
                        return 1;
                r = record_case(&cases[i], topo, ticks, path, &sim_s, &rec_s, &bytes, &tasks);
                if (r < 0)
                        return 1;
                t0 = wall_s();
                r = read_all_ticks(path, &read_ticks);
                read_s = wall_s() - t0;
                t0 = wall_s();
                if (r >= 0)
                        r = replay_run(&(const ReplayOptions){ .path = path }, null, &res);
                replay_s = wall_s() - t0;
                fclose(null);
                (void) unlink(path);
                if (r < 0)
                        return 1;
                printf("  %-13s %10" PRIu64 " %11.2f %9.3f %9.3f %8.2f%% %9.2f %9.2f %7.2fx\n",
                       cases[i].name, bytes, (double) bytes / (double) tasks / (double) ticks,
                       (double) bytes / ((double) tasks / 100.0) / (double) ticks * 3600.0 / 1e6,
                       rec_s, 100.0 * rec_s / sim_s, read_s, replay_s, replay_s / read_s);
                if (res.identical != res.ticks || read_ticks != ticks) {
                        fprintf(stderr,
                                "bench-record: %s: the replay found %" PRIu64 " of %" PRIu64
                                " plans the same, read %" PRIu64 " ticks\n",
                                cases[i].name, res.identical, res.ticks, read_ticks);
                        return 1;
                }
        }
        printf("  (of tick: the recording's CPU time against the model's and the policy's in the "
               "same ticks; ratio: the replay against reading the file alone)\n");
        (void) rmdir(dir);
        return 0;
}
