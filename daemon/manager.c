/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "manager.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>

#include "actuator.h"
#include "cgroup.h"
#include "clock.h"
#include "log.h"
#include "policy.h"
#include "proc.h"
#include "report.h"
#include "sampler.h"
#include "steering.h"
#include "topology.h"
#include "trace.h"
#include "tunables.h"

/* How late a tick may fire: the interval is the configured one, not rounded up to a grid. */
#define TICK_ACCURACY_USEC 1000u

struct Manager {
        char *config_path;
        bool config_optional; /* no --config given: a missing default file means defaults */
        char *root;
        bool dry_run_forced;

        Tunables tunables;
        PolicyParams params; /* from tunables and topo: rebuilt whenever either changes */
        int proc_fd;
        CgroupLayout layout;
        Topology *topo;
        Sampler *sampler;
        Actuator *actuator;
        PolicyState *policy;

        struct {
                ManagerObserver fn;
                void *userdata;
        } observers[MANAGER_OBSERVERS_MAX];
        size_t n_observers;
        sd_event *event;
        sd_event_source *timer;
        bool paused;
        uint64_t ticks;
        char online[1024]; /* the online CPU list the model was built for */

        /* The last full tick, for the bus: the sampler owns snap until the next sample. */
        const PolicySnapshot *snap;
        const SamplerSystem *sys;
        Plan *plan;
        uint64_t *node_loads;
        uint64_t last_tick_realtime_usec;

        Steering steering; /* what else steers the CPUs, as last read */
        uint64_t steering_usec; /* when it was read; 0: never */

        /* The recording (--record, [record] file, or cgbalancectl record start): NULL if none. */
        TraceWriter *trace;
        bool trace_fixed; /* --record or the bus started it: a reload does not change it */
        char *record_cli; /* --record PATH */

        ManagerEscalation *escalations; /* sorted by path */
        size_t n_escalations;

        ManagerAction recent[MANAGER_RECENT_MAX]; /* a ring */
        size_t n_recent, recent_next;
        uint64_t move_times[64]; /* monotonic usec of recent moves, for STATUS= (a ring) */
        size_t move_next;
        char status[256]; /* the STATUS= line last sent */
        ManagerStats stats;
        uint64_t tick_start_usec; /* CLOCK_MONOTONIC start of the last tick; 0 before the first */
        bool record_warned; /* the record of changes could not be written, and that was said */
};

/* Seconds: a tick here takes 0.1-2 ms with a few groups, 25 ms at 10,000 threads (bench-tick). */
const double manager_tick_bounds[MANAGER_TICK_BUCKETS] = {
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
};

static const int log_levels[] = {
        [TUNABLES_LOG_ERR] = LOG_ERR,       [TUNABLES_LOG_WARNING] = LOG_WARNING,
        [TUNABLES_LOG_NOTICE] = LOG_NOTICE, [TUNABLES_LOG_INFO] = LOG_INFO,
        [TUNABLES_LOG_DEBUG] = LOG_DEBUG,
};

static bool manager_dry_run(const Manager *m) {
        return m->dry_run_forced || m->tunables.dry_run || m->root;
}

static int manager_load_config(Manager *m, Tunables *ret) {
        ConfigError e = { 0 };
        int r;

        r = tunables_load(m->config_path, m->config_optional, ret, &e);
        if (r < 0)
                return log_error_errno(r, "%s", e.message);
        return 0;
}

static int manager_open_machine(Manager *m) {
        _cleanup_free_ char *proc = NULL;
        int r;

        if (asprintf(&proc, "%s/proc", m->root ? m->root : "") < 0)
                return log_error_errno(-ENOMEM, "Out of memory.");
        m->proc_fd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (m->proc_fd < 0)
                return log_error_errno(negative_errno(), "Failed to open %s: %m", proc);

        r = m->root ? cgroup_layout_load_at(m->root, &m->layout) : cgroup_layout_detect(&m->layout);
        if (r < 0) {
                /* Degrade, don't die: without cgroups there is nothing to manage, but the
                 * machine can still be observed and the bus still answered. */
                log_warning_errno(r, "No usable cgroup hierarchy found, managing nothing: %m");
                m->layout = (CgroupLayout){ .mode = CGROUP_MODE_NONE };
        }
        return 0;
}

/* The kernel's list of online CPUs, to notice hotplug: one small sysfs read a tick. */
static void manager_read_online(const Manager *m, char *buf, size_t size) {
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -EBADF;
        ssize_t n = -1;

        if (asprintf(&path, "%s/sys/devices/system/cpu/online", m->root ? m->root : "") >= 0)
                fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0)
                n = read(fd, buf, size - 1); /* sysfs hands a small file over in one read */
        buf[n > 0 ? n : 0] = '\0';
}

/* A recording that cannot be written stops, said once; the daemon goes on balancing. */
static void manager_record_failed(Manager *m, int r, const char *what) {
        m->stats.record_failures++;
        log_error_errno(r, "Failed to record %s in %s, recording stopped: %m", what,
                        trace_writer_path(m->trace));
        m->trace = trace_writer_free(m->trace);
        m->trace_fixed = false;
}

/* The configuration in force as INI text, for the recording. */
static int manager_record_config(Manager *m) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f;
        int r;

        if (!m->trace)
                return 0;
        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        r = config_write_values(&tunables_schema, &m->tunables, f);
        if (fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        if (r >= 0)
                r = trace_writer_config(m->trace, buf);
        if (r < 0)
                manager_record_failed(m, r, "the configuration");
        return r;
}

int manager_record_start(Manager *m, const char *path, bool fixed) {
        _cleanup_trace_writer_ TraceWriter *w = NULL;
        int r;

        r = trace_writer_open(path,
                              &(TraceWriterOptions){
                                      .max_size = MAX(m->tunables.record_max_size_mb << 20,
                                                      (uint64_t) TRACE_MIN_SIZE),
                                      .names = m->tunables.record_names,
                                      .program = "cgbalanced " CGBALANCE_VERSION,
                              },
                              &w);
        if (r < 0)
                return log_error_errno(r, "Failed to start recording to %s: %m", path);
        if (m->topo) {
                r = trace_writer_topology(w, m->topo);
                if (r < 0)
                        return log_error_errno(r, "Failed to record to %s: %m", path);
        }
        trace_writer_free(m->trace);
        m->trace = TAKE_PTR(w);
        m->trace_fixed = fixed;
        r = manager_record_config(m);
        if (r < 0)
                return r;
        log_info("Recording every tick to %s (at most %" PRIu64 " MiB, then rotated).", path,
                 m->tunables.record_max_size_mb);
        return 0;
}

void manager_record_stop(Manager *m) {
        if (!m->trace)
                return;
        log_info("Stopped recording to %s: %" PRIu64 " ticks, %" PRIu64 " bytes.",
                 trace_writer_path(m->trace), trace_writer_ticks(m->trace),
                 trace_writer_bytes(m->trace));
        m->trace = trace_writer_free(m->trace);
        m->trace_fixed = false;
}

const char *manager_record_path(const Manager *m) {
        return m->trace ? trace_writer_path(m->trace) : NULL;
}

/* [record] file: started, changed or stopped with the configuration, unless --record or the bus
 * chose the file. */
static void manager_record_apply(Manager *m) {
        _cleanup_free_ char *path = NULL;

        if (m->trace_fixed || m->root)
                return;
        if (!m->tunables.record_file[0]) {
                manager_record_stop(m);
                return;
        }
        if (asprintf(&path, "%s/%s", m->tunables.record_directory, m->tunables.record_file) < 0)
                return;
        if (m->trace && streq(trace_writer_path(m->trace), path)) {
                (void) manager_record_config(m);
                return;
        }
        manager_record_stop(m);
        (void) manager_record_start(m, path, false);
}

/*
 * The machine model and everything sized by it: topology, sampler, policy state. Built whole
 * before the old one is dropped, so a failed rebuild leaves the daemon running on the old one.
 * The sampler's counters start again (its first sample primes), which is right after hotplug.
 */
static int manager_load_model(Manager *m) {
        _cleanup_topology_ Topology *topo = NULL;
        _cleanup_sampler_ Sampler *sampler = NULL;
        _cleanup_policy_state_ PolicyState *policy = NULL;
        PolicyParams params;
        int r;

        r = m->root ? topology_new_from_root(m->root, &topo) : topology_new_from_system(&topo);
        if (r < 0)
                return log_error_errno(r, "Failed to load the topology of %s: %m",
                                       m->root ? m->root : "this machine");
        r = sampler_new(m->proc_fd, &m->layout, topo, m->root ? 0 : getpid(), &sampler);
        if (r < 0)
                return log_error_errno(r, "Failed to set up sampling: %m");
        if (m->root)
                sampler_set_since_boot(sampler, true);
        sampler_set_live(sampler, !m->root);
        policy = policy_state_new(topo);
        if (!policy)
                return log_error_errno(-ENOMEM, "Out of memory.");
        r = policy_params_from_tunables(&m->tunables, topo, &params);
        if (r < 0)
                return log_error_errno(r, "Failed to derive the policy's parameters: %m");

        manager_read_online(m, m->online, sizeof m->online);
        m->snap = NULL; /* the old sampler's */
        m->plan = plan_free(m->plan);
        m->node_loads = mfree(m->node_loads);
        policy_state_free(m->policy);
        sampler_free(m->sampler);
        topology_free(m->topo);
        m->policy = TAKE_PTR(policy);
        m->params = params;
        m->sampler = TAKE_PTR(sampler);
        m->topo = TAKE_PTR(topo);
        if (m->trace) {
                r = trace_writer_topology(m->trace, m->topo);
                if (r < 0)
                        manager_record_failed(m, r, "the topology");
        }
        return 0;
}

/* CPU hotplug: no mask may ever name an offline CPU, and node capacities change. */
static void manager_check_hotplug(Manager *m) {
        char now[sizeof m->online];

        manager_read_online(m, now, sizeof now);
        if (streq(now, m->online))
                return;
        log_notice("Online CPUs changed (%.*s -> %.*s), reloading the topology.",
                   (int) strcspn(m->online, "\n"), m->online, (int) strcspn(now, "\n"), now);
        (void) manager_load_model(m);
}

int manager_new(const ManagerOptions *o, Manager **ret) {
        _cleanup_manager_ Manager *m = NULL;
        int r;

        m = calloc(1, sizeof *m);
        if (!m)
                return log_error_errno(-ENOMEM, "Out of memory.");
        m->proc_fd = -EBADF;
        m->stats.tick_seconds.bounds = manager_tick_bounds;
        m->stats.tick_seconds.n_bounds = MANAGER_TICK_BUCKETS;
        m->stats.start_realtime_usec = clock_usec(CLOCK_REALTIME);
        m->config_optional = !o->config_path;
        m->config_path = strdup(o->config_path ? o->config_path : TUNABLES_DEFAULT_PATH);
        m->root = o->root ? strdup(o->root) : NULL;
        if (!m->config_path || (o->root && !m->root))
                return log_error_errno(-ENOMEM, "Out of memory.");
        m->dry_run_forced = o->dry_run;
        if (o->record_path && !(m->record_cli = strdup(o->record_path)))
                return log_error_errno(-ENOMEM, "Out of memory.");

        r = manager_load_config(m, &m->tunables);
        if (r < 0)
                return r;
        log_set_max_level(log_levels[m->tunables.log_level]);
        if (m->config_optional && access(m->config_path, F_OK) < 0)
                log_info("No %s, running on the compiled-in defaults.", m->config_path);

        r = manager_open_machine(m);
        if (r < 0)
                return r;

        r = manager_load_model(m);
        if (r < 0)
                return r;

        /* A --root replay keeps no record: it must never act on this machine. */
        r = actuator_new(m->proc_fd, &m->layout, m->root ? NULL : m->tunables.state_directory,
                         &m->actuator);
        if (r < 0)
                return log_error_errno(r, "Failed to set up %s: %m", m->tunables.state_directory);

        *ret = TAKE_PTR(m);
        return 0;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        sd_event_source_unref(m->timer);
        sd_event_unref(m->event);
        plan_free(m->plan);
        free(m->node_loads);
        for (size_t i = 0; i < m->n_escalations; i++)
                free(m->escalations[i].path);
        free(m->escalations);
        policy_state_free(m->policy);
        trace_writer_free(m->trace);
        free(m->record_cli);
        actuator_free(m->actuator);
        sampler_free(m->sampler);
        topology_free(m->topo);
        if (m->proc_fd >= 0)
                (void) close(m->proc_fd);
        tunables_free(&m->tunables);
        free(m->config_path);
        free(m->root);
        free(m);
        return NULL;
}

int manager_add_observer(Manager *m, ManagerObserver observer, void *userdata) {
        for (size_t i = 0; i < m->n_observers; i++)
                if (m->observers[i].fn == observer && m->observers[i].userdata == userdata)
                        return -EEXIST;
        if (m->n_observers == MANAGER_OBSERVERS_MAX)
                return -ENOSPC;
        m->observers[m->n_observers].fn = observer;
        m->observers[m->n_observers++].userdata = userdata;
        return 0;
}

void manager_remove_observer(Manager *m, ManagerObserver observer, void *userdata) {
        for (size_t i = 0; i < m->n_observers; i++)
                if (m->observers[i].fn == observer && m->observers[i].userdata == userdata) {
                        memmove(&m->observers[i], &m->observers[i + 1],
                                (m->n_observers - i - 1) * sizeof m->observers[0]);
                        m->n_observers--;
                        return;
                }
}

static void manager_notify(const Manager *m, const ManagerEvent *e) {
        for (size_t i = 0; i < m->n_observers; i++)
                m->observers[i].fn(e, m->observers[i].userdata);
}

static void manager_remember(Manager *m, uint64_t when, const char *subject, const char *text) {
        ManagerAction *a = &m->recent[m->recent_next];

        a->realtime_usec = when;
        (void) snprintf(a->subject, sizeof a->subject, "%s", subject);
        (void) snprintf(a->text, sizeof a->text, "%s", text);
        m->recent_next = (m->recent_next + 1) % MANAGER_RECENT_MAX;
        if (m->n_recent < MANAGER_RECENT_MAX)
                m->n_recent++;
}

static int cmp_escalation(const void *a, const void *b) {
        return strcmp(((const ManagerEscalation *) a)->path, ((const ManagerEscalation *) b)->path);
}

static ManagerEscalation *escalation_find(const Manager *m, const char *path) {
        ManagerEscalation key = { .path = (char *) path };

        return m->n_escalations ? bsearch(&key, m->escalations, m->n_escalations,
                                          sizeof *m->escalations, cmp_escalation)
                                : NULL;
}

/* path's entry, made (holding nothing yet) if it has none; NULL on ENOMEM. */
static ManagerEscalation *escalation_get(Manager *m, const char *path) {
        ManagerEscalation *e = escalation_find(m, path), *grown;
        char *copy;

        if (e)
                return e;
        copy = strdup(path);
        grown = copy ? reallocarray(m->escalations, m->n_escalations + 1, sizeof *grown) : NULL;
        if (!grown) {
                free(copy);
                return NULL;
        }
        m->escalations = grown;
        m->escalations[m->n_escalations++] = (ManagerEscalation){ .path = copy };
        qsort(m->escalations, m->n_escalations, sizeof *m->escalations, cmp_escalation);
        return escalation_find(m, path);
}

/* A partition's CPUs as a cpulist, cut to size ("" for none). */
static void partition_text(const CpuMask *m, char *buf, size_t size) {
        _cleanup_free_ char *text = NULL;

        buf[0] = '\0';
        if (m && cpumask_format(m, &text) >= 0)
                (void) snprintf(buf, size, "%s", text);
}

/* A lever change that took effect: what the group holds now, for whom and why. */
static void escalation_changed(Manager *m, const ActuatorEvent *a) {
        ManagerEscalation *e = escalation_get(m, a->cgroup);

        if (!e) {
                log_error_errno(-ENOMEM, "Out of memory.");
                return;
        }
        if (a->lever == POLICY_LEVER_IDLE)
                e->idle = a->new_value != 0;
        else if (a->lever == POLICY_LEVER_QUOTA)
                e->quota_permyriad = (uint32_t) MIN(a->new_value, (uint64_t) UINT32_MAX);
        else if (a->lever == POLICY_LEVER_PARTITION)
                partition_text(record_lookup_partition(actuator_record(m->actuator), a->cgroup),
                               e->partition, sizeof e->partition);
        (void) snprintf(e->for_cgroup, sizeof e->for_cgroup, "%s",
                        a->for_cgroup ? a->for_cgroup : "");
        (void) snprintf(e->reason, sizeof e->reason, "%s", a->reason ? a->reason : "");
        e->tick = m->ticks;
}

/* After a tick: the snapshot (sampled before this tick's changes) says what the daemon holds on
 * each group, but for the groups changed on this very tick, which the events say. Groups gone,
 * or holding nothing of the daemon's, leave the list. */
static void escalations_sync(Manager *m, const PolicySnapshot *snap) {
        size_t kept = 0;

        for (size_t i = 0; i < snap->n_cgroups; i++) {
                const PolicyCgroup *c = &snap->cgroups[i];
                ManagerEscalation *e;

                if (!(c->idle_ours && c->idle) && !(c->quota_ours && c->quota_permyriad) &&
                    !c->partition)
                        continue;
                e = escalation_find(m, c->path);
                if (!e) {
                        e = escalation_get(m, c->path);
                        if (!e)
                                break; /* ENOMEM: shown as it was; next tick again */
                        e->tick = UINT64_MAX; /* not this run's */
                }
        }
        for (size_t i = 0; i < m->n_escalations; i++) {
                ManagerEscalation *e = &m->escalations[i];
                const PolicyCgroup *c = NULL;

                for (size_t j = 0; j < snap->n_cgroups && !c; j++)
                        if (streq(snap->cgroups[j].path, e->path))
                                c = &snap->cgroups[j];
                if (c && e->tick != m->ticks) {
                        e->idle = c->idle_ours && c->idle;
                        e->quota_permyriad = c->quota_ours ? c->quota_permyriad : 0;
                        partition_text(c->partition, e->partition, sizeof e->partition);
                }
                if (!c || (!e->idle && !e->quota_permyriad && !e->partition[0])) {
                        free(e->path);
                        continue;
                }
                m->escalations[kept++] = *e;
        }
        m->n_escalations = kept;
}

size_t manager_get_escalations(const Manager *m, const ManagerEscalation **ret) {
        *ret = m->escalations;
        return m->n_escalations;
}

/* The actuator's event as the record observers get (lib/event.h), stamped now. */
static void action_to_event(const ActuatorEvent *a, Event *ret) {
        static const EventKind kinds[] = {
                [ACTUATOR_EVENT_MOVE] = EVENT_TASK_MOVED,
                [ACTUATOR_EVENT_WEIGHT] = EVENT_WEIGHT_CHANGED,
                [ACTUATOR_EVENT_ESCALATION] = EVENT_LEVER_CHANGED,
        };

        *ret = (Event){ .kind = kinds[a->kind],
                        .monotonic_usec = now_usec(),
                        .realtime_usec = clock_usec(CLOCK_REALTIME) };
        (void) snprintf(ret->reason, sizeof ret->reason, "%s", a->reason ? a->reason : "");
        if (a->kind == ACTUATOR_EVENT_MOVE) {
                ret->pid = a->pid;
                (void) snprintf(ret->comm, sizeof ret->comm, "%s", a->comm ? a->comm : "");
                ret->from_node = a->from_node;
                ret->to_node = a->to_node;
        } else if (a->kind == ACTUATOR_EVENT_ESCALATION) {
                (void) snprintf(ret->cgroup, sizeof ret->cgroup, "%s", a->cgroup ? a->cgroup : "");
                (void) snprintf(ret->for_cgroup, sizeof ret->for_cgroup, "%s",
                                a->for_cgroup ? a->for_cgroup : "");
                ret->lever = a->lever;
                ret->old_value = (uint32_t) MIN(a->old_value, (uint64_t) UINT32_MAX);
                ret->new_value = (uint32_t) MIN(a->new_value, (uint64_t) UINT32_MAX);
        } else {
                (void) snprintf(ret->cgroup, sizeof ret->cgroup, "%s", a->cgroup ? a->cgroup : "");
                ret->old_weight = (uint32_t) MIN(a->old_weight, (uint64_t) UINT32_MAX);
                ret->new_weight = (uint32_t) MIN(a->new_weight, (uint64_t) UINT32_MAX);
        }
}

/* What the actuator did (not what it was asked): the record of recent actions, STATUS= and the
 * observers. */
static void on_action(const ActuatorEvent *a, void *userdata) {
        Manager *m = userdata;
        char subject[96], text[512];
        _cleanup_free_ Event *e = malloc(sizeof *e); /* 5 KiB */

        if (!e) {
                log_error_errno(-ENOMEM, "Out of memory.");
                return;
        }
        action_to_event(a, e);
        if (a->kind == ACTUATOR_EVENT_MOVE) {
                (void) snprintf(subject, sizeof subject, "pid %d (%s)", (int) a->pid, a->comm);
                (void) snprintf(text, sizeof text, "moved node %d -> %d: %s", a->from_node,
                                a->to_node, a->reason);
                m->move_times[m->move_next] = e->monotonic_usec;
                m->move_next = (m->move_next + 1) % ELEMENTSOF(m->move_times);
        } else if (a->kind == ACTUATOR_EVENT_ESCALATION) {
                escalation_changed(m, a);
                (void) snprintf(subject, sizeof subject, "%s", a->cgroup);
                (void) snprintf(text, sizeof text, "%s %" PRIu64 " -> %" PRIu64 "%s%s: %s",
                                policy_lever_to_string(a->lever), a->old_value, a->new_value,
                                a->for_cgroup ? " for " : "", a->for_cgroup ? a->for_cgroup : "",
                                a->reason);
        } else {
                (void) snprintf(subject, sizeof subject, "%s", a->cgroup);
                (void) snprintf(text, sizeof text, "weight %" PRIu64 " -> %" PRIu64 ": %s",
                                a->old_weight, a->new_weight, a->reason);
        }
        manager_remember(m, e->realtime_usec, subject, text);
        manager_notify(m, &(const ManagerEvent){ .kind = a->kind == ACTUATOR_EVENT_MOVE
                                                                 ? MANAGER_EVENT_TASK_MOVED
                                                         : a->kind == ACTUATOR_EVENT_ESCALATION
                                                                 ? MANAGER_EVENT_LEVER_CHANGED
                                                                 : MANAGER_EVENT_WEIGHT_CHANGED,
                                                 .action = e });
}

/* STATUS= for systemctl status: nodes, managed tasks, moves in the last minute. */
static void manager_notify_status(Manager *m, uint64_t now) {
        unsigned moves = 0;
        char status[256];

        for (size_t i = 0; i < ELEMENTSOF(m->move_times); i++)
                if (m->move_times[i] && now - m->move_times[i] < 60000000ULL)
                        moves++;
        (void) snprintf(status, sizeof status,
                        "%s: %u nodes, %zu managed tasks, %u moves in the "
                        "last minute",
                        manager_state_to_string(manager_get_state(m)), topology_n_nodes(m->topo),
                        m->snap ? m->snap->n_tasks : 0, moves);
        if (streq(status, m->status))
                return;
        (void) snprintf(m->status, sizeof m->status, "%s", status);
        (void) sd_notifyf(false, "STATUS=%s", status);
}

/* Keeps the tick's results for the bus: the sampler's snapshot stays valid until the next one. */
static void manager_keep(Manager *m, const PolicySnapshot *snap, const SamplerSystem *sys,
                         Plan *plan) {
        uint64_t *loads = calloc(topology_n_nodes(m->topo) ?: 1, sizeof *loads);

        if (loads && policy_node_loads(snap, m->topo, loads) >= 0) {
                free(m->node_loads);
                m->node_loads = loads;
        } else
                free(loads);
        m->snap = snap;
        m->sys = sys;
        escalations_sync(m, snap);
        plan_free(m->plan);
        m->plan = plan;
        m->last_tick_realtime_usec = clock_usec(CLOCK_REALTIME);
}

/* The kept node loads in CPUs, in node order ("2.00/0.43"), into buf; "-" without them. */
static const char *format_node_loads(const Manager *m, char *buf, size_t size) {
        size_t len = 0;

        buf[0] = '\0';
        if (!m->node_loads)
                return "-";
        for (unsigned i = 0; i < topology_n_nodes(m->topo) && len < size; i++) {
                int n = snprintf(buf + len, size - len, "%s%" PRIu64 ".%02" PRIu64, i ? "/" : "",
                                 m->node_loads[i] / 10000, m->node_loads[i] % 10000 / 100);

                if (n < 0)
                        break;
                len += (size_t) n;
        }
        return buf;
}

#define STEERING_EVERY_USEC (10 * USEC_PER_SEC)

/* Reads what else steers the CPUs (sched_ext, numad, NUMA balancing) at start and every
 * STEERING_EVERY_USEC, and says so when it changes: loudly for a sched_ext scheduler, under which
 * the weight and idle levers do nothing. */
static void manager_check_steering(Manager *m, uint64_t now) {
        Steering s;
        char text[1024];
        bool first = m->steering_usec == 0;
        int r;

        if (!first && now - m->steering_usec < STEERING_EVERY_USEC)
                return;
        m->steering_usec = now ?: 1;
        r = steering_read(m->root, &s);
        if (r < 0) {
                if (first)
                        log_debug_errno(r, "Failed to read what else steers the CPUs: %m");
                return;
        }
        if (!first && s.sched_ext == m->steering.sched_ext && s.numad == m->steering.numad &&
            s.numa_balancing == m->steering.numa_balancing &&
            streq(s.sched_ext_ops, m->steering.sched_ext_ops))
                return;
        steering_describe(&s, text, sizeof text);
        if (steering_sched_ext_active(&s))
                log_warning("Besides cgbalanced, %s", text);
        else if (text[0])
                log_notice("Besides cgbalanced, %s", text);
        else if (!first && steering_sched_ext_active(&m->steering))
                log_notice("The sched_ext scheduler is gone: cpu.weight and cpu.idle work again.");
        m->steering = s;
}

/* The params a plan is made with: the configuration's, less the levers the scheduler in charge
 * ignores (a sched_ext one: cpu.weight and cpu.idle). */
static const PolicyParams *manager_params(const Manager *m, PolicyParams *buf) {
        if (!steering_sched_ext_active(&m->steering))
                return &m->params;
        *buf = m->params;
        policy_params_ignore_weights(buf);
        return buf;
}

/* One tick: sample, plan, act. Failures of one tick are logged; the loop goes on. */
static void manager_tick(Manager *m, uint64_t now, bool force_node_balance) {
        char loads[256];
        size_t n_moves, n_weights, n_levers;
        _cleanup_plan_ Plan *plan = NULL;
        PolicyParams params;
        const PolicySnapshot *snap;
        const SamplerSystem *sys;
        int r;

        m->ticks++;
        m->tick_start_usec = now;
        manager_check_hotplug(m);
        manager_check_steering(m, now);
        m->snap = NULL; /* sampling replaces it */
        r = sampler_sample(m->sampler, &m->tunables, actuator_record(m->actuator), now, &snap,
                           &sys);
        if (r < 0) {
                m->stats.sample_failures++;
                log_warning_errno(r, "Failed to sample, skipping this tick: %m");
                return;
        }
        r = policy_plan(m->policy, snap, m->topo, manager_params(m, &params), now,
                        force_node_balance, &plan);
        if (r < 0) {
                m->stats.plan_failures++;
                log_warning_errno(r, "Failed to plan, skipping this tick: %m");
                return;
        }
        if (m->trace) {
                r = trace_writer_tick(m->trace, now,
                                      (force_node_balance ? TRACE_TICK_FORCE_NODE_BALANCE : 0) |
                                              (steering_sched_ext_active(&m->steering)
                                                       ? TRACE_TICK_WEIGHTS_IGNORED
                                                       : 0),
                                      snap, plan);
                if (r < 0)
                        manager_record_failed(m, r, "a tick");
        }
        n_moves = plan->n_moves;
        n_weights = plan->n_weights;
        n_levers = plan->n_escalations;
        if (!m->paused) {
                r = actuator_apply(
                        m->actuator, plan, snap, manager_dry_run(m),
                        m->tunables.migrate_memory ? m->tunables.migrate_memory_max_mb : 0, now);
                if (r < 0 && !m->record_warned)
                        log_error_errno(r,
                                        "Failed to record changes in %s, changing nothing (said "
                                        "once until it works): %m",
                                        m->tunables.state_directory);
                else if (r < 0)
                        log_debug_errno(r, "Failed to record changes in %s again: %m",
                                        m->tunables.state_directory);
                else if (m->record_warned)
                        log_info("Changes are recorded in %s again.", m->tunables.state_directory);
                m->record_warned = r < 0;
        }
        manager_keep(m, snap, sys, TAKE_PTR(plan));
        log_debug("tick %" PRIu64 ": %u groups, %u tasks, %u threads (%u read), sampled in %" PRIu64
                  " us; node loads %s; %zu moves, %zu weight changes, %zu lever changes",
                  m->ticks, sys->n_cgroups, sys->n_tasks, sys->n_threads, sys->n_threads_read,
                  sys->sample_usec, format_node_loads(m, loads, sizeof loads), n_moves, n_weights,
                  n_levers);
        metrics_histogram_observe(&m->stats.tick_seconds, (double) (now_usec() - now) / 1e6);
        manager_notify_status(m, now);
        manager_notify(m, &(const ManagerEvent){ .kind = MANAGER_EVENT_TICK_DONE });
}

static int manager_arm_tick(Manager *m, uint64_t usec) {
        int r;

        r = sd_event_source_set_time_relative(m->timer, usec);
        if (r >= 0)
                r = sd_event_source_set_enabled(m->timer, SD_EVENT_ONESHOT);
        if (r < 0)
                return log_error_errno(r, "Failed to re-arm the tick: %m");
        return 0;
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        (void) s;
        (void) usec;
        /* Not usec: that is when the timer was due, and a loop that runs late (a busy or
         * stopped daemon) would read the counters over a longer span than it divides by. */
        manager_tick(m, now_usec(), /* force_node_balance= */ false);
        return manager_arm_tick(m, m->tunables.interval_usec);
}

/* The next tick when the interval changed: an interval after the last tick's start (at once if
 * that has passed). A reload or set that keeps the interval leaves the timer alone: re-arming it
 * an interval from now on every one let reloads faster than the interval stop the ticks. */
static void manager_rearm_for_interval(Manager *m) {
        uint64_t now = now_usec(), due = m->tick_start_usec + m->tunables.interval_usec;
        int r;

        r = sd_event_source_set_time(m->timer, m->tick_start_usec ? MAX(due, now) : now);
        if (r >= 0)
                r = sd_event_source_set_enabled(m->timer, SD_EVENT_ONESHOT);
        if (r < 0)
                log_error_errno(r, "Failed to re-arm the tick: %m");
}

/* Side effects of a new config that take effect at once; old_interval_usec: the interval before. */
static void manager_apply_tunables(Manager *m, uint64_t old_interval_usec) {
        int r;

        /* Cannot fail with the topology in force; if it did, the old numbers stay. */
        r = policy_params_from_tunables(&m->tunables, m->topo, &m->params);
        if (r < 0)
                log_warning_errno(r,
                                  "Failed to derive the policy's parameters, keeping the old: %m");
        log_set_max_level(log_levels[m->tunables.log_level]);
        if (m->timer && m->tunables.interval_usec != old_interval_usec)
                manager_rearm_for_interval(m);
        if (m->trace_fixed)
                (void) manager_record_config(m);
        else if (m->timer)
                manager_record_apply(m);
}

int manager_reload(Manager *m, char **ret_error) {
        uint64_t old_interval = m->tunables.interval_usec;
        ConfigError e = { 0 };
        Tunables fresh;
        int r;

        (void) sd_notifyf(false, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64, now_usec());
        r = tunables_load(m->config_path, m->config_optional, &fresh, &e);
        if (r < 0) {
                m->stats.reloads_refused++;
                log_error_errno(r, "%s", e.message);
                log_warning("Keeping the configuration in force.");
                manager_notify(m, &(const ManagerEvent){ .kind = MANAGER_EVENT_RELOADED,
                                                         .ok = false,
                                                         .message = e.message });
                if (ret_error)
                        *ret_error = strdup(e.message);
        } else {
                /* The record lives where this run began it: the directory in force stays, and
                 * Config shows it, until the next start. */
                if (!streq(fresh.state_directory, m->tunables.state_directory)) {
                        char *kept = strdup(m->tunables.state_directory);

                        if (!kept) {
                                tunables_free(&fresh);
                                (void) sd_notify(false, "READY=1");
                                return log_error_errno(-ENOMEM, "Out of memory.");
                        }
                        log_warning(
                                "state_directory %s takes effect at the next start; %s stays in "
                                "use until then.",
                                fresh.state_directory, kept);
                        free(fresh.state_directory);
                        fresh.state_directory = kept;
                }
                tunables_free(&m->tunables);
                m->tunables = fresh;
                manager_apply_tunables(m, old_interval);
                m->stats.reloads_ok++;
                log_info("Reloaded %s.", m->config_path);
                manager_notify(m, &(const ManagerEvent){ .kind = MANAGER_EVENT_RELOADED,
                                                         .ok = true,
                                                         .message = m->config_path });
        }
        (void) sd_notify(false, "READY=1");
        return r;
}

int manager_set_tunable(Manager *m, const char *key, const char *value, char **ret_error) {
        uint64_t old_interval = m->tunables.interval_usec;
        ConfigError e = { 0 };
        int r;

        if (streq(key, "state_directory") || streq(key, "daemon.state_directory")) {
                if (ret_error)
                        *ret_error = strdup("state_directory: the record's directory changes at "
                                            "the next start, not at run time");
                return -EINVAL;
        }
        /* config_set_one() leaves the struct as it was on any error. */
        r = config_set_one(&tunables_schema, &m->tunables, key, value, &e);
        if (r < 0) {
                if (ret_error)
                        *ret_error = strdup(e.message);
                return r;
        }
        manager_apply_tunables(m, old_interval);
        log_info("Set %s = %s until the next reload.", key, value);
        return 0;
}

void manager_pause(Manager *m) {
        if (!m->paused)
                log_info("Paused: sampling goes on, nothing is changed.");
        m->paused = true;
}

void manager_resume(Manager *m) {
        if (m->paused)
                log_info("Resumed.");
        m->paused = false;
}

int manager_rebalance_now(Manager *m) {
        manager_tick(m, now_usec(), /* force_node_balance= */ true);
        return manager_arm_tick(m, m->tunables.interval_usec);
}

ManagerState manager_get_state(const Manager *m) {
        return m->paused ? MANAGER_PAUSED : manager_dry_run(m) ? MANAGER_DRY_RUN : MANAGER_RUNNING;
}

const char *manager_state_to_string(ManagerState s) {
        static const char *const names[] = {
                [MANAGER_RUNNING] = "running",
                [MANAGER_PAUSED] = "paused",
                [MANAGER_DRY_RUN] = "dry-run",
        };

        return (size_t) s < ELEMENTSOF(names) ? names[s] : NULL;
}

const CgroupLayout *manager_get_layout(const Manager *m) {
        return &m->layout;
}

const Topology *manager_get_topology(const Manager *m) {
        return m->topo;
}

const Tunables *manager_get_tunables(const Manager *m) {
        return &m->tunables;
}

const PolicySnapshot *manager_get_snapshot(const Manager *m) {
        return m->snap;
}

const uint64_t *manager_get_node_loads(const Manager *m) {
        return m->snap ? m->node_loads : NULL;
}

const SamplerSystem *manager_get_system(const Manager *m) {
        return m->sys;
}

const PolicySnapshot *manager_get_current_snapshot(const Manager *m) {
        if (!m->snap || !m->topo || m->snap->n_cpus != topology_cpu_capacity(m->topo))
                return NULL;
        return m->snap;
}

void manager_node_task_stats(const Manager *m, const PolicySnapshot *snap, uint32_t *pressure,
                             uint32_t *runnable) {
        uint64_t min_demand = (uint64_t) m->tunables.min_task_load_pct * POLICY_LOAD_ONE_CPU / 100;

        for (size_t i = 0; i < snap->n_tasks; i++) {
                const PolicyTask *t = &snap->tasks[i];
                int node = t->cpu >= 0 ? topology_cpu_node(m->topo, (unsigned) t->cpu) : -ENOENT;
                int idx = node >= 0 ? topology_node_index(m->topo, (unsigned) node) : -ENOENT;

                if (idx < 0)
                        continue;
                if (t->demand_permyriad >= min_demand)
                        runnable[idx]++;
                if (t->cgroup < snap->n_cgroups && snap->cgroups[t->cgroup].has_pressure)
                        pressure[idx] =
                                MAX(pressure[idx], snap->cgroups[t->cgroup].pressure_permyriad);
        }
}

const ManagerStats *manager_get_stats(const Manager *m) {
        return &m->stats;
}

uint64_t manager_get_ticks(const Manager *m) {
        return m->ticks;
}

uint64_t manager_get_last_tick_realtime_usec(const Manager *m) {
        return m->last_tick_realtime_usec;
}

const ActuatorCounters *manager_get_counters(const Manager *m) {
        return actuator_counters(m->actuator);
}

const ManagerAction *manager_get_recent(const Manager *m, size_t i) {
        size_t first = (m->recent_next + MANAGER_RECENT_MAX - m->n_recent) % MANAGER_RECENT_MAX;

        if (i >= m->n_recent)
                return NULL;
        return &m->recent[(first + i) % MANAGER_RECENT_MAX];
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        (void) s;
        if (si->ssi_signo == SIGHUP) {
                (void) manager_reload(m, NULL);
                return 0;
        }
        log_info("Received %s, stopping.", strsignal((int) si->ssi_signo));
        return sd_event_exit(sd_event_source_get_event(s), 0);
}

static int manager_arm(Manager *m) {
        static const int signals[] = { SIGTERM, SIGINT, SIGHUP };
        sigset_t mask;
        int r;

        r = sd_event_default(&m->event);
        if (r < 0)
                return log_error_errno(r, "Failed to create the event loop: %m");
        sigemptyset(&mask);
        for (size_t i = 0; i < ELEMENTSOF(signals); i++)
                sigaddset(&mask, signals[i]);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(negative_errno(), "Failed to block signals: %m");
        for (size_t i = 0; i < ELEMENTSOF(signals); i++) {
                r = sd_event_add_signal(m->event, NULL, signals[i], on_signal, m);
                if (r < 0)
                        return log_error_errno(r, "Failed to watch signal %d: %m", signals[i]);
        }
        /* An accuracy of 0 would be sd-event's default of 250 ms: ticks of 200 ms every 250. */
        r = sd_event_add_time_relative(m->event, &m->timer, CLOCK_MONOTONIC, 0, TICK_ACCURACY_USEC,
                                       on_tick, m);
        if (r < 0)
                return log_error_errno(r, "Failed to arm the tick: %m");
        /* Heartbeat from the loop itself, so a stalled loop gets the service restarted. */
        r = sd_event_set_watchdog(m->event, true);
        if (r < 0)
                log_warning_errno(r, "Failed to enable the watchdog, going on without: %m");
        return 0;
}

static void log_start(const Manager *m) {
        log_info("cgbalanced " CGBALANCE_VERSION
                 " starting: %u CPUs in %u NUMA node%s, cgroups %s, "
                 "tick %" PRIu64 " ms%s.",
                 topology_n_cpus(m->topo), topology_n_nodes(m->topo),
                 topology_n_nodes(m->topo) == 1 ? "" : "s", cgroup_mode_to_string(m->layout.mode),
                 m->tunables.interval_usec / 1000,
                 manager_dry_run(m) ? ", dry run: nothing will be changed" : "");
}

sd_event *manager_get_event(const Manager *m) {
        return m->event;
}

int manager_start(Manager *m) {
        int r;

        log_start(m);
        if (!manager_dry_run(m)) {
                r = actuator_reconcile(m->actuator);
                if (r > 0)
                        log_notice("Put back %d changes a previous run left behind.", r);
                else if (r < 0)
                        log_warning_errno(r,
                                          "Failed to reconcile the record in %s, ignoring "
                                          "it: %m",
                                          m->tunables.state_directory);
        }
        if (m->record_cli) {
                r = manager_record_start(m, m->record_cli, true);
                if (r < 0)
                        return r;
        } else
                manager_record_apply(m);
        r = manager_arm(m);
        if (r < 0)
                return r;
        actuator_set_observer(m->actuator, on_action, m);
        return 0;
}

int manager_run(Manager *m) {
        int r;

        (void) sd_notify(false, "READY=1");
        manager_notify_status(m, now_usec());
        r = sd_event_loop(m->event);
        (void) sd_notify(false, "STOPPING=1");
        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m");
        return 0;
}

int manager_stop(Manager *m) {
        int n;

        actuator_set_observer(m->actuator, NULL, NULL);
        if (manager_dry_run(m))
                return 0;
        n = actuator_restore_all(m->actuator);
        if (n < 0)
                return log_error_errno(n, "Failed to restore what was changed: %m");
        log_info("Restored %d changed masks and weights.", n);
        return 0;
}

int manager_dump_topology(Manager *m, FILE *f) {
        return topology_dump(m->topo, f);
}

/*
 * What the daemon would do if this sample held steady: one tick alone never acts (imbalances and
 * pressure must last their hold, node balancing waits for its multiplier), so plan tick after
 * tick on the same sample, which only advances the policy's state, until the first plan that
 * does something, or until every hold and multiplier has passed.
 */
static int manager_plan_steady(Manager *m, const PolicySnapshot *snap, uint64_t now, FILE *f) {
        const Tunables *t = &m->tunables;
        uint64_t hold = MAX(MAX(t->node_imbalance_hold_usec, t->pressure_hold_usec),
                            m->params.escalate_hold_usec);
        PolicyParams params;
        uint64_t ticks =
                hold / t->interval_usec + MAX(t->idle_node_multiplier, t->busy_node_multiplier) + 1;

        for (uint64_t i = 0; i <= ticks; i++) {
                _cleanup_plan_ Plan *plan = NULL;
                int r;

                r = policy_plan(m->policy, snap, m->topo, manager_params(m, &params),
                                now + i * t->interval_usec, /* force_node_balance= */ false, &plan);
                if (r < 0)
                        return r;
                if (plan->n_moves + plan->n_weights + plan->n_escalations > 0 || i == ticks) {
                        fprintf(f, "\nplan (after %" PRIu64 " ticks of this sample):\n", i + 1);
                        report_plan(f, plan, snap);
                        if (plan->n_moves + plan->n_weights + plan->n_escalations == 0)
                                fputs("nothing to do: balanced, idle, or nothing managed\n", f);
                        return 0;
                }
        }
        return 0;
}

int manager_once(Manager *m, FILE *f) {
        const PolicySnapshot *snap;
        const SamplerSystem *sys;
        uint64_t now = now_usec();
        int r;

        manager_check_steering(m, now);
        if (!m->root) {
                /* The first sample only primes the counters: a tick needs two. */
                r = sampler_sample(m->sampler, &m->tunables, actuator_record(m->actuator), now,
                                   &snap, &sys);
                if (r < 0)
                        return log_error_errno(r, "Failed to sample: %m");
                (void) usleep((useconds_t) m->tunables.interval_usec);
                now = now_usec();
        }
        r = sampler_sample(m->sampler, &m->tunables, actuator_record(m->actuator), now, &snap,
                           &sys);
        if (r < 0)
                return log_error_errno(r, "Failed to sample: %m");
        report_snapshot(f, snap, sys, m->topo, &m->layout);
        r = manager_plan_steady(m, snap, now, f);
        if (r < 0)
                return log_error_errno(r, "Failed to plan: %m");
        return fflush(f) == 0 ? 0 : -EIO;
}

static const PolicyTask *find_task(const PolicySnapshot *snap, pid_t pid) {
        for (size_t i = 0; snap && i < snap->n_tasks; i++)
                if (snap->tasks[i].pid == pid)
                        return &snap->tasks[i];
        return NULL;
}

/* The levers past the weight cgbalanced holds on the task's group, if any. */
static void explain_escalation(const Manager *m, const PolicyTask *t, FILE *f) {
        const ManagerEscalation *e;

        if (t->cgroup >= m->snap->n_cgroups)
                return;
        e = escalation_find(m, m->snap->cgroups[t->cgroup].path);
        if (!e)
                return;
        fprintf(f, "its group is held back by cgbalanced:%s", e->idle ? " cpu.idle" : "");
        if (e->quota_permyriad)
                fprintf(f, "%s CPU limit %u.%02u%% of a CPU", e->idle ? "," : "",
                        e->quota_permyriad / 100, e->quota_permyriad % 100);
        if (e->partition[0])
                fprintf(f, "%s kept off CPUs %s", e->idle || e->quota_permyriad ? "," : "",
                        e->partition);
        if (e->for_cgroup[0])
                fprintf(f, ", for %s: %s\n", e->for_cgroup, e->reason);
        else
                fputs(", set by an earlier run (its record)\n", f);
}

static void explain_placement(const Manager *m, const PolicyTask *t, FILE *f) {
        _cleanup_free_ char *mask = NULL;
        int node = t->cpu >= 0 ? topology_cpu_node(m->topo, (unsigned) t->cpu) : -1;
        int idx = node >= 0 ? topology_node_index(m->topo, (unsigned) node) : -1;

        fprintf(f, "pid %d (%s) in %s\n", (int) t->pid, t->comm,
                t->cgroup < m->snap->n_cgroups ? m->snap->cgroups[t->cgroup].path : "-");
        fprintf(f, "runs on CPU %d, node %d; uses %u.%02u%% of a CPU and wants %u.%02u%%\n", t->cpu,
                node, t->util_permyriad / 100, t->util_permyriad % 100, t->demand_permyriad / 100,
                t->demand_permyriad % 100);
        if (idx >= 0 && m->node_loads)
                fprintf(f, "node %d: load %" PRIu64 ".%02" PRIu64 " CPUs on %u usable CPUs\n", node,
                        m->node_loads[idx] / 10000, m->node_loads[idx] % 10000 / 100,
                        topology_node_capacity(m->topo, (unsigned) node));
        if (t->mem_exact)
                fprintf(f,
                        "memory: %" PRIu64 " MiB on node %d (numa_maps): what a move leaves "
                        "behind\n",
                        (t->mem_kib + 1023) / 1024, node);
        else if (t->mem_kib > 0)
                fprintf(f,
                        "memory: %" PRIu64 " MiB resident (statm): at most what a move leaves "
                        "behind\n",
                        (t->mem_kib + 1023) / 1024);
        if (t->allowed)
                (void) cpumask_format(t->allowed, &mask);
        fprintf(f, "allowed CPUs %s: %s\n", mask ? mask : "?",
                t->ours      ? "set by cgbalanced"
                : t->foreign ? "narrowed by someone else, so cgbalanced leaves it alone"
                             : "as its cpuset allows");
        explain_escalation(m, t, f);
}

static void explain_history(const Manager *m, const PolicyTask *t, FILE *f) {
        const ManagerAction *a;
        char subject[96];
        bool any = false;

        (void) snprintf(subject, sizeof subject, "pid %d (%s)", (int) t->pid, t->comm);
        for (size_t i = 0; (a = manager_get_recent(m, i)); i++)
                if (streq(a->subject, subject)) {
                        fprintf(f, "%.1f s ago: %s\n",
                                (double) (clock_usec(CLOCK_REALTIME) - a->realtime_usec) / 1e6,
                                a->text);
                        any = true;
                }
        if (!any)
                fputs("no recent action of cgbalanced on it\n", f);
        for (size_t i = 0; m->plan && i < m->plan->n_moves; i++)
                if (m->plan->moves[i].pid == t->pid) {
                        fprintf(f, "last tick's plan: node %d -> %d: %s\n",
                                m->plan->moves[i].from_node, m->plan->moves[i].to_node,
                                m->plan->moves[i].reason);
                        return;
                }
        fputs("last tick's plan: leave it where it is\n", f);
}

int manager_explain(Manager *m, pid_t pid, char **ret) {
        const PolicyTask *t = find_task(m->snap, pid);
        char *text = NULL;
        size_t len = 0;
        FILE *f;

        if (!t) {
                TaskStat st;

                /* A kernel thread is never a task to explain: a wrong argument, not a miss. */
                if (!m->root && proc_task_stat_read_at(m->proc_fd, pid, 0, &st) >= 0 &&
                    task_stat_is_kthread(&st))
                        return -EINVAL;
                return -ESRCH;
        }
        f = open_memstream(&text, &len);
        if (!f)
                return -ENOMEM;
        explain_placement(m, t, f);
        explain_history(m, t, f);
        if (fclose(f) != 0) {
                free(text);
                return -ENOMEM;
        }
        *ret = text;
        return 0;
}

int manager_dump(Manager *m, char **ret) {
        const SamplerSystem *sys = m->sys;
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);

        if (!f)
                return -ENOMEM;
        if (m->snap && sys) {
                report_snapshot(f, m->snap, sys, m->topo, &m->layout);
                fputs("\nplan:\n", f);
                report_plan(f, m->plan, m->snap);
                if (m->plan && m->plan->n_moves + m->plan->n_weights + m->plan->n_escalations == 0)
                        fputs("nothing to do\n", f);
        } else
                fputs("no tick yet\n", f);
        if (fclose(f) != 0) {
                free(text);
                return -ENOMEM;
        }
        *ret = text;
        return 0;
}
