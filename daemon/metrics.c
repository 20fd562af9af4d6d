/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "metrics.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "actuator.h"
#include "cgroup.h"
#include "fileio.h"
#include "log.h"
#include "manager.h"
#include "policy.h"
#include "topology.h"
#include "tunables.h"

struct Metrics {
        Manager *manager;
        uint64_t textfile_failures;
        bool textfile_warned; /* a failure was logged; the next success says so */
        char *written; /* the textfile last written, removed at the end */
};

static double permyriad(uint64_t v) {
        return (double) v / 10000.0;
}

static double seconds(uint64_t usec) {
        return (double) usec / 1e6;
}

/* A one-sample family without labels. */
static void single(MetricsWriter *w, const char *name, MetricType type, const char *unit,
                   const char *help, double value) {
        metrics_family(w, name, type, unit, help);
        metrics_sample(w, NULL, value);
}

/* /proc/self: resident bytes (statm) and open descriptors; 0 when unreadable. */
static void process_usage(uint64_t *ret_rss, uint64_t *ret_fds) {
        unsigned long long size, resident;
        char statm[128];
        int fd;
        DIR *d;

        *ret_rss = *ret_fds = 0;
        fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
        if (fd >= 0 && read_full_into(fd, statm, sizeof statm, NULL) >= 0 &&
            sscanf(statm, "%llu %llu", &size, &resident) == 2)
                *ret_rss = resident * (uint64_t) sysconf(_SC_PAGESIZE);
        if (fd >= 0)
                close(fd);
        d = opendir("/proc/self/fd");
        if (!d)
                return;
        for (struct dirent *de; (de = readdir(d));)
                if (de->d_name[0] != '.')
                        (*ret_fds)++;
        closedir(d);
        if (*ret_fds > 0)
                (*ret_fds)--; /* the directory's own descriptor */
}

static void write_counters(MetricsWriter *w, const Metrics *x) {
        const Manager *m = x->manager;
        const ActuatorCounters zero = { 0 }, *c = manager_get_counters(m) ?: &zero;
        const ManagerStats *st = manager_get_stats(m);
        static const char *const kinds[] = { "task_gone",   "mask_refused", "task_banned",
                                             "cgroup_gone", "write",        "sample",
                                             "plan",        "record",       "textfile" };
        const uint64_t errors[] = { c->tasks_gone,     c->masks_refused,    c->tasks_banned,
                                    c->cgroups_gone,   c->errors,           st->sample_failures,
                                    st->plan_failures, st->record_failures, x->textfile_failures };

        single(w, "cgbalance_ticks", METRIC_COUNTER, NULL,
               "Ticks run: each samples, plans and acts once.", (double) manager_get_ticks(m));
        metrics_family(w, "cgbalance_tick_duration_seconds", METRIC_HISTOGRAM, "seconds",
                       "Time a tick took to sample, plan and act.");
        metrics_histogram(w, NULL, &st->tick_seconds);
        single(w, "cgbalance_moves", METRIC_COUNTER, NULL,
               "Tasks whose CPU affinity cgbalanced changed.", (double) c->moves);
        single(w, "cgbalance_cross_node_moves", METRIC_COUNTER, NULL,
               "Of the moves, those to another NUMA node.", (double) c->cross_node_moves);
        single(w, "cgbalance_weight_changes", METRIC_COUNTER, NULL,
               "Changes of a group's cpu.weight (cpu.shares on cgroup v1).",
               (double) c->weight_changes);
        single(w, "cgbalance_escalations", METRIC_COUNTER, NULL,
               "Levers past the weight set or given back (cpu.idle, a CPU limit, a partition).",
               (double) c->escalations);
        single(w, "cgbalance_restores", METRIC_COUNTER, NULL,
               "Original masks and weights put back.", (double) c->restores);
        metrics_family(w, "cgbalance_reloads", METRIC_COUNTER, NULL,
                       "Config reloads (SIGHUP, Reload()), by result; a refused one keeps the "
                       "config in force.");
        metrics_sample(w, (const char *[]){ "result", "ok", NULL }, (double) st->reloads_ok);
        metrics_sample(w, (const char *[]){ "result", "refused", NULL },
                       (double) st->reloads_refused);
        metrics_family(w, "cgbalance_errors", METRIC_COUNTER, NULL,
                       "Failures by kind: a task or group gone or refusing a change, a write "
                       "that failed, a skipped tick (sample, plan), a recording or textfile "
                       "not written.");
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++)
                metrics_sample(w, (const char *[]){ "kind", kinds[i], NULL }, (double) errors[i]);
}

static void write_nodes(MetricsWriter *w, const Manager *m, const PolicySnapshot *snap) {
        const Topology *topo = manager_get_topology(m);
        const uint64_t *loads = snap ? manager_get_node_loads(m) : NULL;
        unsigned n = topo ? topology_n_nodes(topo) : 0;
        _cleanup_free_ uint32_t *pressure = calloc(n + 1, sizeof *pressure);
        _cleanup_free_ uint32_t *runnable = calloc(n + 1, sizeof *runnable);
        _cleanup_free_ char(*ids)[16] = calloc(n + 1, sizeof *ids);
        static const struct {
                const char *name, *unit, *help;
        } families[] = {
                { "cgbalance_node_load_cpus", NULL,
                  "Load of each NUMA node in CPUs: utilisation and the managed tasks' wait." },
                { "cgbalance_node_capacity_cpus", NULL, "Usable CPUs of each NUMA node." },
                { "cgbalance_node_pressure_ratio", "ratio",
                  "Highest cpu.pressure some avg10 of a managed group with a task on the node." },
                { "cgbalance_node_runnable_tasks", NULL,
                  "Managed tasks on the node whose demand is at least min_task_load." },
        };

        if (!pressure || !runnable || !ids)
                return;
        if (snap)
                manager_node_task_stats(m, snap, pressure, runnable);
        for (unsigned i = 0; i < n; i++)
                snprintf(ids[i], sizeof ids[i], "%d", topology_node_id(topo, i));
        for (size_t f = 0; f < ELEMENTSOF(families); f++) {
                metrics_family(w, families[f].name, METRIC_GAUGE, families[f].unit,
                               families[f].help);
                for (unsigned i = 0; i < n; i++) {
                        int id = topology_node_id(topo, i);
                        double v = f == 0   ? permyriad(loads ? loads[i] : 0)
                                   : f == 1 ? (double) topology_node_capacity(topo, (unsigned) id)
                                   : f == 2 ? permyriad(pressure[i])
                                            : (double) runnable[i];

                        metrics_sample(w, (const char *[]){ "node", ids[i], NULL }, v);
                }
        }
}

/* The escalation step a group is held at: the highest lever cgbalanced set on it (PolicyLever
 * order: 1 idle, 2 quota, 3 partition), 0 none. */
static unsigned escalation_step(const PolicyCgroup *c) {
        if (c->partition)
                return POLICY_LEVER_PARTITION;
        if (c->quota_ours && c->quota_permyriad > 0)
                return POLICY_LEVER_QUOTA;
        if (c->idle_ours && c->idle)
                return POLICY_LEVER_IDLE;
        return POLICY_LEVER_NONE;
}

/* Protected groups first, then the busiest, then by path: the ones exported under the cap. */
static int cmp_export(const void *a, const void *b) {
        const PolicyCgroup *x = *(const PolicyCgroup *const *) a,
                           *y = *(const PolicyCgroup *const *) b;

        if (x->protected != y->protected)
                return x->protected ? -1 : 1;
        if (x->util_permyriad != y->util_permyriad)
                return x->util_permyriad > y->util_permyriad ? -1 : 1;
        return strcmp(x->path, y->path);
}

static void write_cgroups(MetricsWriter *w, const Manager *m, const PolicySnapshot *snap) {
        size_t n = snap ? snap->n_cgroups : 0, max = manager_get_tunables(m)->metrics_max_cgroups;
        const SamplerSystem *sys = manager_get_system(m);
        _cleanup_free_ const PolicyCgroup **v = calloc(n + 1, sizeof *v);
        static const struct {
                const char *name, *unit, *help;
        } families[] = {
                { "cgbalance_cgroup_weight", NULL, "cpu.weight now (v2 units; cpu.shares on v1)." },
                { "cgbalance_cgroup_base_weight", NULL,
                  "cpu.weight before cgbalanced changed it (v2 units)." },
                { "cgbalance_cgroup_pressure_ratio", "ratio",
                  "CPU pressure of the group as pressure_measure says: cpu.pressure some avg10, "
                  "or over the last tick (absent without PSI)." },
                { "cgbalance_cgroup_usage_cpus", NULL,
                  "CPU the group used over the last tick, in CPUs." },
                { "cgbalance_cgroup_escalation_step", NULL,
                  "The highest lever cgbalanced holds the group at: 0 none, 1 cpu.idle, 2 a CPU "
                  "limit, 3 a partition." },
                { "cgbalance_cgroup_protected", NULL, "1 for a protected group." },
        };

        single(w, "cgbalance_pressure_target_ratio", METRIC_GAUGE, "ratio",
               "pressure_target: the pressure above which a protected group gets more weight.",
               (double) manager_get_tunables(m)->pressure_target_pct / 100.0);
        single(w, "cgbalance_cgroups_managed", METRIC_GAUGE, NULL,
               "Managed groups, all of them (per-group series stop at [metrics] max_cgroups).",
               (double) n);
        single(w, "cgbalance_tasks_managed", METRIC_GAUGE, NULL, "Managed tasks in the last tick.",
               (double) (snap ? snap->n_tasks : 0));
        single(w, "cgbalance_threads_managed", METRIC_GAUGE, NULL,
               "Threads of the managed tasks in the last tick.",
               (double) (sys ? sys->n_threads : 0));
        single(w, "cgbalance_threads_read", METRIC_GAUGE, NULL,
               "Threads whose files the last tick read: those that ran lately, new ones and the "
               "idle ones due a refresh (sample_refresh).",
               (double) (sys ? sys->n_threads_read : 0));
        if (!v)
                return;
        for (size_t i = 0; i < n; i++)
                v[i] = &snap->cgroups[i];
        qsort(v, n, sizeof *v, cmp_export);
        n = MIN(n, max);
        for (size_t f = 0; f < ELEMENTSOF(families); f++) {
                metrics_family(w, families[f].name, METRIC_GAUGE, families[f].unit,
                               families[f].help);
                for (size_t i = 0; i < n; i++) {
                        const PolicyCgroup *c = v[i];
                        const char *const labels[] = { "cgroup", c->path, NULL };

                        switch (f) {
                        case 0: metrics_sample(w, labels, c->weight); break;
                        case 1: metrics_sample(w, labels, c->base_weight); break;
                        case 2:
                                if (c->has_pressure)
                                        metrics_sample(w, labels, permyriad(c->pressure_permyriad));
                                break;
                        case 3: metrics_sample(w, labels, permyriad(c->util_permyriad)); break;
                        case 4: metrics_sample(w, labels, escalation_step(c)); break;
                        default: metrics_sample(w, labels, c->protected); break;
                        }
                }
        }
}

int metrics_render(const Metrics *x, MetricsFormat format, char **ret) {
        const Manager *m = x->manager;
        const char *mode = cgroup_mode_to_string(manager_get_layout(m)->mode);
        ManagerState state = manager_get_state(m);
        _cleanup_free_ char *buf = NULL;
        uint64_t rss, fds;
        size_t size = 0;
        FILE *f;
        int r;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        MetricsWriter w = { .f = f, .format = format };

        metrics_family(&w, "cgbalance_build", METRIC_INFO, NULL,
                       "The cgbalanced version and the cgroup mode it runs on.");
        metrics_sample(&w,
                       (const char *[]){ "version", CGBALANCE_VERSION, "cgroup_mode",
                                         mode ? mode : "none", NULL },
                       1);
        metrics_family(&w, "cgbalance_state", METRIC_GAUGE, NULL,
                       "1 for the state cgbalanced is in: running, paused (samples, changes "
                       "nothing) or dry-run.");
        for (ManagerState s = MANAGER_RUNNING; s <= MANAGER_DRY_RUN; s++)
                metrics_sample(&w, (const char *[]){ "state", manager_state_to_string(s), NULL },
                               s == state);
        single(&w, "cgbalance_start_time_seconds", METRIC_GAUGE, "seconds",
               "When cgbalanced started, seconds since the epoch.",
               seconds(manager_get_stats(m)->start_realtime_usec));
        single(&w, "cgbalance_last_tick_timestamp_seconds", METRIC_GAUGE, "seconds",
               "When the last tick ran, seconds since the epoch (0 before the first).",
               seconds(manager_get_last_tick_realtime_usec(m)));
        write_counters(&w, x);
        write_nodes(&w, m, manager_get_current_snapshot(m));
        write_cgroups(&w, m, manager_get_current_snapshot(m));
        process_usage(&rss, &fds);
        single(&w, "cgbalance_process_resident_memory_bytes", METRIC_GAUGE, "bytes",
               "Resident memory of cgbalanced.", (double) rss);
        single(&w, "cgbalance_process_open_fds", METRIC_GAUGE, NULL,
               "Open file descriptors of cgbalanced (one per sampled thread is kept).",
               (double) fds);
        r = metrics_end(&w);
        if (fclose(f) != 0 && r >= 0)
                r = -EIO;
        if (r < 0)
                return r;
        *ret = TAKE_PTR(buf);
        return 0;
}

/* text to path by way of path.tmp (not *.prom: the collector never reads it half written). */
static int write_atomic(const char *path, const char *text) {
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = -EBADF;
        size_t len = strlen(text);
        int r = 0;

        if (asprintf(&tmp, "%s.tmp", path) < 0)
                return -ENOMEM;
        /* A leftover of a crash, or something planted: never written through. */
        if (unlink(tmp) < 0 && errno != ENOENT)
                return -errno;
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        if (fchmod(fd, 0644) < 0)
                r = -errno;
        if (r >= 0)
                r = write_full(fd, text, len);
        if (close(TAKE_FD(fd)) < 0 && r >= 0)
                r = -errno;
        if (r >= 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0)
                (void) unlink(tmp);
        return r;
}

/* The file of an earlier config, or of this run at its end. */
static void remove_written(Metrics *x) {
        if (!x->written)
                return;
        if (unlink(x->written) < 0 && errno != ENOENT)
                log_warning_errno(-errno, "Failed to remove %s: %m", x->written);
        x->written = mfree(x->written);
}

int metrics_write_textfile(Metrics *x) {
        const char *path = manager_get_tunables(x->manager)->metrics_textfile;
        _cleanup_free_ char *text = NULL;
        int r;

        if (x->written && !streq(x->written, path))
                remove_written(x);
        if (!path[0])
                return 0;
        r = metrics_render(x, METRICS_PROMETHEUS, &text);
        if (r >= 0)
                r = write_atomic(path, text);
        if (r < 0) {
                x->textfile_failures++;
                if (!x->textfile_warned)
                        log_warning_errno(r,
                                          "Failed to write the metrics to %s (said once until it "
                                          "works): %m",
                                          path);
                x->textfile_warned = true;
                return r;
        }
        if (x->textfile_warned)
                log_info("Metrics written to %s again.", path);
        x->textfile_warned = false;
        if (!x->written && !(x->written = strdup(path)))
                return -ENOMEM;
        return 0;
}

static void on_event(const ManagerEvent *e, void *userdata) {
        Metrics *x = userdata;
        uint64_t every = manager_get_tunables(x->manager)->metrics_textfile_every;

        if (e->kind == MANAGER_EVENT_TICK_DONE &&
            manager_get_ticks(x->manager) % MAX(every, 1u) == 0)
                (void) metrics_write_textfile(x);
        else if (e->kind == MANAGER_EVENT_RELOADED && e->ok)
                (void) metrics_write_textfile(x); /* at once: the path may have changed */
}

int metrics_new(Manager *m, Metrics **ret) {
        _cleanup_metrics_ Metrics *x = calloc(1, sizeof *x);
        int r;

        if (!x)
                return -ENOMEM;
        x->manager = m;
        r = manager_add_observer(m, on_event, x);
        if (r < 0) {
                x->manager = NULL;
                return r;
        }
        *ret = TAKE_PTR(x);
        return 0;
}

Metrics *metrics_free(Metrics *x) {
        if (!x)
                return NULL;
        if (x->manager)
                manager_remove_observer(x->manager, on_event, x);
        remove_written(x);
        free(x);
        return NULL;
}
