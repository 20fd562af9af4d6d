/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "actuator.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <numa.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup-levers.h"
#include "log.h"
#include "proc.h"

struct Actuator {
        int proc_fd;
        int state_fd; /* -EBADF: no record kept */
        char *state_dir;
        unsigned capacity; /* of every mask we read: enough for the kernel's nr_cpu_ids */
        bool numa;
        CgroupLayout layout;
        Record *record; /* never NULL; what state_dir/changes says, and the bans */
        char **warned; /* groups whose write errors were logged already */
        size_t n_warned;
        bool warned_migrate_eperm; /* a refused memory move was logged already */
        ActuatorCounters counters;
        ActuatorObserver observer;
        void *observer_data;
};

/* ---- affinity and tasks */

/* sched_getaffinity() refuses a buffer smaller than the kernel's CPU count: find one it takes. */
static unsigned affinity_capacity(void) {
        for (unsigned cap = 64; cap <= CPUMASK_MAX_CPUS; cap *= 2) {
                _cleanup_cpumask_ CpuMask *m = cpumask_new(cap);

                if (!m)
                        break;
                if (sched_getaffinity(0, cpumask_cpu_set_size(m), cpumask_cpu_set(m)) >= 0)
                        return cap;
                if (errno != EINVAL)
                        break;
        }
        return CPUMASK_MAX_CPUS;
}

static int affinity_get(const Actuator *a, pid_t tid, CpuMask **ret) {
        _cleanup_cpumask_ CpuMask *m = cpumask_new(a->capacity);

        if (!m)
                return -ENOMEM;
        if (sched_getaffinity(tid, cpumask_cpu_set_size(m), cpumask_cpu_set(m)) < 0)
                return negative_errno();
        *ret = TAKE_PTR(m);
        return 0;
}

static int affinity_set(pid_t tid, const CpuMask *m) {
        if (cpumask_is_empty(m)) /* never, whatever a caller computed */
                return -EINVAL;
        if (sched_setaffinity(tid, cpumask_cpu_set_size(m), cpumask_cpu_set(m)) < 0)
                return negative_errno();
        return 0;
}

/* The online CPUs: those with a line in proc_fd/stat. Should that fail, every CPU: the kernel
 * intersects a mask with its online CPUs and the task's cpuset anyway. */
static int online_cpus(const Actuator *a, CpuMask **ret) {
        _cleanup_proc_stat_ ProcStat *s = NULL;
        _cleanup_cpumask_ CpuMask *m = cpumask_new(a->capacity);
        int r;

        if (!m)
                return -ENOMEM;
        r = proc_stat_read_at(a->proc_fd, &s);
        if (r >= 0)
                for (unsigned c = 0; c < s->n_cpus && c < a->capacity; c++)
                        if (s->cpus[c].present)
                                (void) cpumask_set(m, c);
        if (r < 0 || cpumask_is_empty(m)) {
                log_debug_errno(r, "Cannot tell the online CPUs, assuming all: %m");
                (void) cpumask_set_range(m, 0, a->capacity - 1);
        }
        *ret = TAKE_PTR(m);
        return 0;
}

/* pid 1, the daemon itself: never ours to move, whatever a plan or a record says. */
static bool pid_is_untouchable(pid_t pid) {
        return pid <= 1 || pid == getpid();
}

/* 0 if pid is still the task that started at starttime, -ESRCH if it is gone (or the pid was
 * recycled), -EPERM for a kernel thread, or the reader's error. */
static int task_identify(const Actuator *a, pid_t pid, uint64_t starttime, TaskStat *ret) {
        TaskStat st;
        int r = proc_task_stat_read_at(a->proc_fd, pid, 0, &st);

        if (r < 0)
                return r;
        if (st.starttime_ticks != starttime)
                return -ESRCH;
        if (task_stat_is_kthread(&st))
                return -EPERM;
        *ret = st;
        return 0;
}

/* The mask every thread of pid has; -EXDEV if they differ (someone pinned them apart). */
static int threads_common_mask(const Actuator *a, pid_t pid, CpuMask **ret) {
        _cleanup_free_ pid_t *tids = NULL;
        _cleanup_cpumask_ CpuMask *common = NULL;
        size_t n = 0;
        int r;

        r = affinity_get(a, pid, &common);
        if (r < 0)
                return r;
        r = proc_task_list_at(a->proc_fd, pid, &tids, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                _cleanup_cpumask_ CpuMask *m = NULL;

                if (tids[i] == pid)
                        continue;
                r = affinity_get(a, tids[i], &m);
                if (r == -ESRCH) /* exited meanwhile */
                        continue;
                if (r < 0)
                        return r;
                if (!cpumask_equal(m, common))
                        return -EXDEV;
        }
        *ret = TAKE_PTR(common);
        return 0;
}

/* Moves pid's pages from node from to node to, if its RSS fits what is left of this tick's
 * budget (*budget_kib, which it then takes). 0 when done or when the task does not fit (said at
 * debug level). */
static int migrate_memory(const Actuator *a, pid_t pid, int from, int to, uint64_t *budget_kib) {
        struct bitmask *fm = NULL, *tm = NULL;
        uint64_t rss_kib;
        int r, nodes;

        if (!a->numa)
                return -EOPNOTSUPP;
        nodes = numa_num_possible_nodes();
        if (from < 0 || to < 0 || from >= nodes || to >= nodes)
                return -EINVAL;
        r = proc_task_rss_read_at(a->proc_fd, pid, &rss_kib);
        if (r < 0)
                return r;
        if (rss_kib > *budget_kib) {
                log_debug("pid %d: RSS %" PRIu64 " MiB above the %" PRIu64
                          " MiB left of this tick's migrate_memory_max_mb, memory stays",
                          (int) pid, rss_kib / 1024, *budget_kib / 1024);
                return 0;
        }
        *budget_kib -= rss_kib;
        fm = numa_allocate_nodemask();
        tm = numa_allocate_nodemask();
        if (!fm || !tm)
                r = -ENOMEM;
        else {
                numa_bitmask_setbit(fm, (unsigned) from);
                numa_bitmask_setbit(tm, (unsigned) to);
                r = numa_migrate_pages(pid, fm, tm);
                r = r < 0 ? negative_errno() : 0;
        }
        if (fm)
                numa_bitmask_free(fm);
        if (tm)
                numa_bitmask_free(tm);
        return r;
}

/* ---- logging once per group */

static bool warned_about(const Actuator *a, const char *path) {
        for (size_t i = 0; i < a->n_warned; i++)
                if (streq(a->warned[i], path))
                        return true;
        return false;
}

static void warned_forget(Actuator *a, const char *path) {
        for (size_t i = 0; i < a->n_warned; i++)
                if (streq(a->warned[i], path)) {
                        free(a->warned[i]);
                        a->warned[i] = a->warned[--a->n_warned];
                        return;
                }
}

/*
 * What the actuator changes on a group, per attribute of the record, in the record's units:
 * native weight, cpu.idle 0 or 1, quota usec (0: no limit). name is for the log.
 */
typedef struct Knob {
        const char *name;
        int (*get)(const CgroupLayout *l, const char *path, uint64_t *ret);
        int (*set)(const CgroupLayout *l, const char *path, uint64_t v);
} Knob;

static int idle_get(const CgroupLayout *l, const char *path, uint64_t *ret) {
        bool idle;
        int r = cgroup_get_cpu_idle(l, path, &idle);

        if (r >= 0)
                *ret = idle;
        return r;
}

static int idle_set(const CgroupLayout *l, const char *path, uint64_t v) {
        return v > 1 ? -ERANGE : cgroup_set_cpu_idle(l, path, v == 1);
}

static int quota_get(const CgroupLayout *l, const char *path, uint64_t *ret) {
        return cgroup_get_cpu_quota(l, path, ret, NULL);
}

static const Knob knobs[_RECORD_CGROUP_ATTR_MAX] = {
        [RECORD_CGROUP_WEIGHT] = { "CPU weight", cgroup_get_cpu_weight_native,
                                   cgroup_set_cpu_weight_native },
        [RECORD_CGROUP_IDLE] = { "cpu.idle", idle_get, idle_set },
        [RECORD_CGROUP_QUOTA] = { "CPU quota", quota_get, cgroup_set_cpu_quota },
};

/* A value of attr as the log shows it: a quota of 0 is "max" (no limit), as cpu.max says. */
static const char *knob_value(RecordCgroupAttr attr, uint64_t v, char buf[static 32]) {
        if (attr == RECORD_CGROUP_QUOTA && v == CGROUP_QUOTA_NONE)
                return "max";
        (void) snprintf(buf, 32, "%" PRIu64, v);
        return buf;
}

/* A group's attr could not be read or written: counted; logged once until it works again. */
static void cgroup_failed(Actuator *a, const char *path, RecordCgroupAttr attr, int r,
                          const char *what) {
        const char *name = knobs[attr].name;
        char **w;
        char *p;

        if (r == -ENOENT || r == -ENODEV) {
                a->counters.cgroups_gone++;
                log_debug("Group %s is gone, skipping", path);
                return;
        }
        a->counters.errors++;
        if (warned_about(a, path)) {
                log_debug_errno(r, "Failed to %s the %s of %s again: %m", what, name, path);
                return;
        }
        if (r == -EROFS)
                /* The service unit's ProtectControlGroups= leaves only its ReadWritePaths=
                 * writable. */
                log_warning_errno(r,
                                  "Failed to %s the %s of %s, ignoring: %m; under "
                                  "systemd the unit's ReadWritePaths= must include the group "
                                  "(see cgbalanced(8), SERVICE)",
                                  what, name, path);
        else
                log_warning_errno(r, "Failed to %s the %s of %s, ignoring: %m", what, name, path);
        p = strdup(path);
        w = p ? reallocarray(a->warned, a->n_warned + 1, sizeof *w) : NULL;
        if (!w) {
                free(p);
                return;
        }
        a->warned = w;
        a->warned[a->n_warned++] = p;
}

/* ---- new, free, lookups */

static Actuator *actuator_alloc(void) {
        return calloc(1, sizeof(Actuator));
}

int actuator_new(int proc_fd, const CgroupLayout *layout, const char *state_dir, Actuator **ret) {
        _cleanup_actuator_ Actuator *a = NULL;
        int r;

        if (proc_fd < 0 || !layout || !ret)
                return -EINVAL;
        a = actuator_alloc();
        if (!a)
                return -ENOMEM;
        a->proc_fd = proc_fd;
        a->state_fd = -EBADF;
        a->layout = *layout;
        a->capacity = affinity_capacity();
        a->numa = numa_available() >= 0;
        r = record_new(&a->record);
        if (r < 0)
                return r;
        if (state_dir) {
                if (mkdir(state_dir, 0700) < 0 && errno != EEXIST)
                        return negative_errno();
                a->state_fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (a->state_fd < 0)
                        return negative_errno();
                a->state_dir = strdup(state_dir);
                if (!a->state_dir)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(a);
        return 0;
}

Actuator *actuator_free(Actuator *a) {
        if (!a)
                return NULL;
        if (a->state_fd >= 0)
                (void) close(a->state_fd);
        for (size_t i = 0; i < a->n_warned; i++)
                free(a->warned[i]);
        free(a->warned);
        free(a->state_dir);
        record_free(a->record);
        free(a);
        return NULL;
}

static uint64_t weight_to_native(const Actuator *a, uint64_t weight) {
        return a->layout.mode == CGROUP_MODE_V2 ? weight : cgroup_weight_to_shares(weight);
}

const Record *actuator_record(const Actuator *a) {
        return a->record;
}

void actuator_set_observer(Actuator *a, ActuatorObserver observer, void *userdata) {
        a->observer = observer;
        a->observer_data = userdata;
}

const ActuatorCounters *actuator_counters(const Actuator *a) {
        return &a->counters;
}

/* ---- apply: dry run */

static const char *lever_name(PolicyLever lever) {
        switch (lever) {
        case POLICY_LEVER_IDLE: return "idle";
        case POLICY_LEVER_QUOTA: return "quota";
        case POLICY_LEVER_PARTITION: return "partition";
        default: return "none";
        }
}

static const char *snapshot_comm(const PolicySnapshot *snap, pid_t pid, uint64_t starttime) {
        for (size_t i = 0; i < snap->n_tasks; i++)
                if (snap->tasks[i].pid == pid && snap->tasks[i].starttime_ticks == starttime)
                        return snap->tasks[i].comm;
        return "?";
}

static const char *snapshot_cgroup_path(const PolicySnapshot *snap, size_t i) {
        const char *p = i < snap->n_cgroups ? snap->cgroups[i].path : NULL;

        return p && *p && cgroup_path_is_valid(p) ? p : NULL;
}

static void log_dry_run(const Plan *plan, const PolicySnapshot *snap) {
        for (size_t i = 0; i < plan->n_moves; i++) {
                const PlanMove *m = &plan->moves[i];
                _cleanup_free_ char *mask = NULL;

                if (m->mask)
                        (void) cpumask_format(m->mask, &mask);
                log_info("Would move pid %d (%s) node %d -> %d mask %s: %s", (int) m->pid,
                         snapshot_comm(snap, m->pid, m->starttime_ticks), m->from_node, m->to_node,
                         mask ? mask : "?", m->reason);
        }
        for (size_t i = 0; i < plan->n_weights; i++) {
                const PlanWeight *w = &plan->weights[i];
                const char *path = snapshot_cgroup_path(snap, w->cgroup);

                log_info("Would set the weight of %s %" PRIu32 " -> %" PRIu32 ": %s",
                         path ? path : "?", w->from, w->to, w->reason);
        }
        for (size_t i = 0; i < plan->n_escalations; i++) {
                const PlanEscalation *e = &plan->escalations[i];
                const char *path = snapshot_cgroup_path(snap, e->cgroup),
                           *for_path = snapshot_cgroup_path(snap, e->for_cgroup);

                log_info("Would set the %s lever of %s %" PRIu32 " -> %" PRIu32 " for %s: %s",
                         lever_name(e->lever), path ? path : "?", e->from, e->to,
                         for_path ? for_path : "no group", e->reason);
        }
}

/* ---- apply: moves */

typedef struct PendingMove {
        bool ready;
        char comm[PROC_COMM_SIZE];
        CpuMask *want; /* the plan's mask on online CPUs */
        CpuMask *before; /* what every thread had */
} PendingMove;

static void pending_moves_free(PendingMove *p, size_t n) {
        for (size_t i = 0; p && i < n; i++) {
                cpumask_free(p[i].want);
                cpumask_free(p[i].before);
        }
        free(p);
}

/* Counts a task that cannot be moved: gone, refused or an error. */
static void move_skipped(Actuator *a, const PlanMove *m, int r, const char *why) {
        if (r == -ESRCH) {
                a->counters.tasks_gone++;
                log_debug("pid %d is gone, not moved", (int) m->pid);
        } else if (r == -EINVAL || r == -EXDEV) {
                a->counters.masks_refused++;
                log_debug_errno(r, "pid %d: %s, not moved", (int) m->pid, why);
        } else {
                a->counters.errors++;
                log_warning_errno(r, "pid %d: %s, not moved: %m", (int) m->pid, why);
        }
}

/* Notes in next the change about to be made: the original stays the one first recorded while
 * the task still has the mask the daemon set; if someone else set another since, that is the
 * original now. */
static int note_task(Record *next, const PlanMove *m, const CpuMask *before, const CpuMask *want,
                     uint64_t now_usec) {
        const RecordTask *old = record_find_task(next, m->pid);
        bool ours = old && old->starttime_ticks == m->starttime_ticks &&
                    cpumask_equal(before, old->set);
        RecordTask c = {
                .pid = m->pid,
                .starttime_ticks = m->starttime_ticks,
                .orig = cpumask_copy(ours ? old->orig : before),
                .set = cpumask_copy(want),
                .when_usec = now_usec,
        };
        int r = c.orig && c.set ? record_put_task(next, &c) : -ENOMEM;

        record_task_done(&c);
        return r;
}

/* Checks a move and notes it in next. 1 if ready, 0 if skipped (counted), -ENOMEM. */
static int prepare_move(Actuator *a, Record *next, const CpuMask *online, const PlanMove *m,
                        uint64_t now_usec, PendingMove *p) {
        _cleanup_cpumask_ CpuMask *want = NULL, *before = NULL;
        TaskStat st;
        int r;

        if (pid_is_untouchable(m->pid) || !m->mask) {
                a->counters.errors++;
                log_warning("Plan moves pid %d, which is never moved: ignoring", (int) m->pid);
                return 0;
        }
        if (record_task_banned(a->record, m->pid, m->starttime_ticks))
                return 0;
        r = task_identify(a, m->pid, m->starttime_ticks, &st);
        if (r == -EPERM) {
                a->counters.errors++;
                log_warning("Plan moves pid %d, a kernel thread: ignoring", (int) m->pid);
                return 0;
        }
        if (r < 0) {
                move_skipped(a, m, r, "cannot read its stat");
                return 0;
        }
        want = cpumask_new(a->capacity);
        if (!want)
                return -ENOMEM;
        cpumask_and(want, m->mask, online);
        if (cpumask_is_empty(want)) {
                move_skipped(a, m, -EINVAL, "the mask names no online CPU");
                return 0;
        }
        r = threads_common_mask(a, m->pid, &before);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                move_skipped(a, m, r,
                             r == -EXDEV ? "its threads have different masks"
                                         : "cannot read its affinity");
                return 0;
        }
        r = note_task(next, m, before, want, now_usec);
        if (r < 0)
                return r;
        (void) snprintf(p->comm, sizeof p->comm, "%s", st.comm);
        p->want = TAKE_PTR(want);
        p->before = TAKE_PTR(before);
        p->ready = true;
        return 1;
}

/* Puts pid's entry back as it was before this apply (or drops it). */
static int revert_task(Actuator *a, const Record *old, pid_t pid) {
        const RecordTask *o = record_find_task(old, pid);
        RecordTask c = {};
        int r;

        if (!o) {
                record_drop_task(a->record, pid);
                return 0;
        }
        r = record_task_copy(o, &c);
        if (r >= 0)
                r = record_put_task(a->record, &c);
        record_task_done(&c);
        return r;
}

/* Sets want on every thread; ESRCH (a thread exited) does not stop the others. On another
 * error, the threads already changed get their mask back. Returns the threads changed, or the
 * error and, in *ret_first, the first thread that took the mask. */
static int set_all_threads(const Actuator *a, pid_t pid, const CpuMask *want, const CpuMask *before,
                           pid_t *ret_first) {
        _cleanup_free_ pid_t *tids = NULL;
        size_t n = 0, changed = 0;
        pid_t first = 0;
        int r;

        r = proc_task_list_at(a->proc_fd, pid, &tids, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                r = affinity_set(tids[i], want);
                if (r == -ESRCH)
                        continue;
                if (r < 0) {
                        for (size_t j = 0; j < i; j++)
                                (void) affinity_set(tids[j], before);
                        return r;
                }
                if (changed++ == 0)
                        first = tids[i];
        }
        *ret_first = first;
        return (int) (changed > INT_MAX ? INT_MAX : changed);
}

/* Journal message IDs of the daemon's decisions, for journalctl MESSAGE_ID= and monitors. */
#define MESSAGE_ID_MOVE "MESSAGE_ID=0d3a8ccb7771443ab0a2a2e9d1e380da"
#define MESSAGE_ID_WEIGHT "MESSAGE_ID=526a28b80f94490a9e25ef4419e17be6"
#define MESSAGE_ID_ESCALATION "MESSAGE_ID=f9c794cc957041cdb2696aff4c0b5434"

/* "Moved pid ...", with the task, both nodes, its new CPUs and the reason as journal fields. */
static void log_move(const PlanMove *m, const char *comm, const char *cpus) {
        char pid[32], c[96], from[32], to[32], set[512], why[sizeof m->reason + 32];
        const char *const fields[] = { MESSAGE_ID_MOVE, pid, c, from, to, set, why };

        (void) snprintf(pid, sizeof pid, "CGBALANCE_PID=%d", (int) m->pid);
        (void) snprintf(c, sizeof c, "CGBALANCE_COMM=%s", comm);
        (void) snprintf(from, sizeof from, "CGBALANCE_FROM_NODE=%d", m->from_node);
        (void) snprintf(to, sizeof to, "CGBALANCE_TO_NODE=%d", m->to_node);
        (void) snprintf(set, sizeof set, "CGBALANCE_CPUS=%s", cpus);
        (void) snprintf(why, sizeof why, "CGBALANCE_REASON=%s", m->reason);
        log_struct(LOG_INFO, fields, ELEMENTSOF(fields),
                   "Moved pid %d (%s) node %d -> %d, CPUs %s: %s", (int) m->pid, comm, m->from_node,
                   m->to_node, cpus, m->reason);
}

/* "Set the weight of ...", with the group, both weights and the reason as journal fields. */
static void log_weight(const PlanWeight *w, const char *path) {
        char group[PATH_MAX + 32], from[48], to[48], why[sizeof w->reason + 32];
        const char *const fields[] = { MESSAGE_ID_WEIGHT, group, from, to, why };

        (void) snprintf(group, sizeof group, "CGBALANCE_CGROUP=%s", path);
        (void) snprintf(from, sizeof from, "CGBALANCE_FROM_WEIGHT=%" PRIu32, w->from);
        (void) snprintf(to, sizeof to, "CGBALANCE_TO_WEIGHT=%" PRIu32, w->to);
        (void) snprintf(why, sizeof why, "CGBALANCE_REASON=%s", w->reason);
        log_struct(LOG_INFO, fields, ELEMENTSOF(fields),
                   "Set the weight of %s %" PRIu32 " -> %" PRIu32 ": %s", path, w->from, w->to,
                   w->reason);
}

/* Carries out a prepared move. Sets *dirty when the record must be written again. */
static int execute_move(Actuator *a, const Record *old, const PlanMove *m, const PendingMove *p,
                        uint64_t *migrate_budget_kib, bool *dirty) {
        _cleanup_cpumask_ CpuMask *now = NULL;
        _cleanup_free_ char *text = NULL;
        const RecordTask *c;
        pid_t first = 0;
        int r;

        r = set_all_threads(a, m->pid, p->want, p->before, &first);
        if (r <= 0) {
                if (r == -EPERM) {
                        a->counters.tasks_banned++;
                        log_info("pid %d (%s): not permitted to set its affinity, no longer "
                                 "managed",
                                 (int) m->pid, p->comm);
                        if (record_ban_task(a->record, m->pid, m->starttime_ticks) < 0)
                                a->counters.errors++;
                } else
                        move_skipped(a, m, r == 0 ? -ESRCH : r, "cannot set its affinity");
                *dirty = true;
                return revert_task(a, old, m->pid);
        }
        /* The kernel narrows a mask to the task's cpuset: record what it actually has, which
         * is what a restore compares with. */
        c = record_find_task(a->record, m->pid);
        if (c && affinity_get(a, first, &now) >= 0 && !cpumask_equal(now, c->set) &&
            record_update_task_set(a->record, m->pid, &now) >= 0)
                *dirty = true;
        a->counters.moves++;
        if (m->to_node != m->from_node)
                a->counters.cross_node_moves++;
        if (c && cpumask_format(c->set, &text) >= 0)
                log_move(m, p->comm, text);
        if (a->observer)
                a->observer(&(const ActuatorEvent){ .kind = ACTUATOR_EVENT_MOVE,
                                                    .pid = m->pid,
                                                    .comm = p->comm,
                                                    .from_node = m->from_node,
                                                    .to_node = m->to_node,
                                                    .reason = m->reason },
                            a->observer_data);
        if (*migrate_budget_kib > 0 && m->to_node != m->from_node) {
                r = migrate_memory(a, m->pid, m->from_node, m->to_node, migrate_budget_kib);
                if (r == -EPERM && !a->warned_migrate_eperm) {
                        /* The kernel asks for ptrace access to another user's task as well as
                         * CAP_SYS_NICE: say so once, not at every move. */
                        a->warned_migrate_eperm = true;
                        a->counters.errors++;
                        log_warning_errno(r,
                                          "pid %d: failed to move its memory to node %d: %m; "
                                          "moving another user's memory needs CAP_SYS_PTRACE "
                                          "too (see cgbalanced(8), SERVICE)",
                                          (int) m->pid, m->to_node);
                } else if (r < 0) {
                        a->counters.errors++;
                        log_debug_errno(r, "pid %d: failed to move its memory to node %d: %m",
                                        (int) m->pid, m->to_node);
                }
        }
        return 0;
}

/* ---- apply: weights and levers */

/* Notes in next that attr of path is about to be set to want, reading what it is now. The first
 * original stays while the group has the value the daemon set; if someone else set another since,
 * that is the original now. 1 if ready, 0 if skipped (counted), -ENOMEM. */
static int note_cgroup(Actuator *a, Record *next, const char *path, RecordCgroupAttr attr,
                       uint64_t want) {
        uint64_t orig, set, now;
        int r;

        r = knobs[attr].get(&a->layout, path, &now);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                cgroup_failed(a, path, attr, r, "read");
                return 0;
        }
        if (!record_lookup_cgroup(next, path, attr, &orig, &set) || set != now)
                orig = now;
        r = record_put_cgroup(next, path, attr, orig, want);
        return r < 0 ? r : 1;
}

/* Checks a weight change and notes it in next. 1 if ready, 0 if skipped (counted), -ENOMEM. */
static int prepare_weight(Actuator *a, Record *next, const PolicySnapshot *snap,
                          const PlanWeight *w) {
        const char *path = snapshot_cgroup_path(snap, w->cgroup);

        if (!path || w->to < CGROUP_WEIGHT_MIN || w->to > CGROUP_WEIGHT_MAX) {
                a->counters.errors++;
                log_warning("Plan sets weight %" PRIu32 " on group #%zu (%s): ignoring", w->to,
                            w->cgroup, path ? path : "no such group");
                return 0;
        }
        return note_cgroup(a, next, path, RECORD_CGROUP_WEIGHT, weight_to_native(a, w->to));
}

/* Puts attr of path's entry back as it was before this apply (or drops it). */
static int revert_value(Actuator *a, const Record *old, const char *path, RecordCgroupAttr attr) {
        uint64_t orig, set;

        if (!record_lookup_cgroup(old, path, attr, &orig, &set)) {
                record_drop_cgroup_value(a->record, path, attr);
                return 0;
        }
        return record_put_cgroup(a->record, path, attr, orig, set);
}

/* Sets attr of path to the value noted in the record, and records what the kernel made of it.
 * 1 if done; 0 if it failed (counted, the record entry reverted, *dirty set); -ENOMEM. */
static int set_value(Actuator *a, const Record *old, const char *path, RecordCgroupAttr attr,
                     bool *dirty) {
        uint64_t want = 0, now;
        int r;

        (void) record_lookup_cgroup(a->record, path, attr, NULL, &want);
        r = knobs[attr].set(&a->layout, path, want);
        if (r < 0) {
                cgroup_failed(a, path, attr, r, "set");
                *dirty = true;
                r = revert_value(a, old, path, attr);
                return r < 0 ? r : 0;
        }
        warned_forget(a, path);
        if (knobs[attr].get(&a->layout, path, &now) >= 0 && now != want &&
            record_update_cgroup_set(a->record, path, attr, now) >= 0)
                *dirty = true;
        return 1;
}

static int execute_weight(Actuator *a, const Record *old, const PlanWeight *w, const char *path,
                          bool *dirty) {
        int r = set_value(a, old, path, RECORD_CGROUP_WEIGHT, dirty);

        if (r <= 0)
                return r;
        a->counters.weight_changes++;
        log_weight(w, path);
        if (a->observer)
                a->observer(&(const ActuatorEvent){ .kind = ACTUATOR_EVENT_WEIGHT,
                                                    .cgroup = path,
                                                    .old_weight = w->from,
                                                    .new_weight = w->to,
                                                    .reason = w->reason },
                            a->observer_data);
        return 0;
}

/* The record's attribute a lever is kept in; _RECORD_CGROUP_ATTR_MAX for none (yet). */
static RecordCgroupAttr lever_attr(PolicyLever lever) {
        switch (lever) {
        case POLICY_LEVER_IDLE: return RECORD_CGROUP_IDLE;
        case POLICY_LEVER_QUOTA: return RECORD_CGROUP_QUOTA;
        default: return _RECORD_CGROUP_ATTR_MAX;
        }
}

/* A quota step in permyriad of one CPU as usec of the group's period; 0 is no limit. The
 * kernel takes nothing below 1 ms: a smaller share of a short period is rounded up to that. */
static uint64_t quota_usec_of(uint32_t permyriad, uint64_t period_usec) {
        unsigned __int128 q;

        if (permyriad == 0)
                return CGROUP_QUOTA_NONE;
        q = (unsigned __int128) permyriad * period_usec / POLICY_LOAD_ONE_CPU;
        return q < CGROUP_QUOTA_MIN_USEC   ? CGROUP_QUOTA_MIN_USEC
               : q > CGROUP_QUOTA_MAX_USEC ? CGROUP_QUOTA_MAX_USEC
                                           : (uint64_t) q;
}

/* Checks an escalation step and notes it in next. 1 if ready, 0 if skipped (counted), -ENOMEM. */
static int prepare_escalation(Actuator *a, Record *next, const PolicySnapshot *snap,
                              const PlanEscalation *e) {
        const char *path = snapshot_cgroup_path(snap, e->cgroup);
        RecordCgroupAttr attr = lever_attr(e->lever);
        uint64_t want = e->to, period;
        int r;

        if (e->lever == POLICY_LEVER_PARTITION) {
                /* Nothing to write at the group: the plan's moves narrow its tasks' masks (each
                 * recorded with what it had), a step back puts them back. */
                if (!path ||
                    (plan_escalation_is_up(e) && (!e->cpus || cpumask_is_empty(e->cpus)))) {
                        a->counters.errors++;
                        log_warning("Plan partitions group #%zu (%s) with no CPUs: ignoring",
                                    e->cgroup, path ? path : "no such group");
                        return 0;
                }
                r = record_put_partition(next, path, plan_escalation_is_up(e) ? e->cpus : NULL);
                return r < 0 ? r : 1;
        }
        if (!path || attr == _RECORD_CGROUP_ATTR_MAX || (attr == RECORD_CGROUP_IDLE && e->to > 1)) {
                a->counters.errors++;
                log_warning("Plan sets %s %" PRIu32 " on group #%zu (%s): ignoring",
                            lever_name(e->lever), e->to, e->cgroup, path ? path : "no such group");
                return 0;
        }
        if (attr == RECORD_CGROUP_QUOTA) {
                r = cgroup_get_cpu_quota(&a->layout, path, NULL, &period);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        cgroup_failed(a, path, attr, r, "read");
                        return 0;
                }
                want = quota_usec_of(e->to, period);
        }
        return note_cgroup(a, next, path, attr, want);
}

/* "Set cpu.idle of ..." / "Set the CPU quota of ...", with the group, the lever, the plan's
 * values, what was written, the protected group and the reason as journal fields. */
static void log_escalation(const PlanEscalation *e, const char *path, const char *for_path,
                           uint64_t written) {
        char group[PATH_MAX + 32], lever[48], from[48], to[48], set[64], for_group[PATH_MAX + 48],
                why[sizeof e->reason + 32], v[32];
        const char *const fields[] = {
                MESSAGE_ID_ESCALATION, group, lever, from, to, set, for_group, why
        };
        RecordCgroupAttr attr = lever_attr(e->lever);

        (void) snprintf(group, sizeof group, "CGBALANCE_CGROUP=%s", path);
        (void) snprintf(lever, sizeof lever, "CGBALANCE_LEVER=%s", lever_name(e->lever));
        (void) snprintf(from, sizeof from, "CGBALANCE_FROM=%" PRIu32, e->from);
        (void) snprintf(to, sizeof to, "CGBALANCE_TO=%" PRIu32, e->to);
        (void) snprintf(set, sizeof set, "CGBALANCE_SET=%s", knob_value(attr, written, v));
        (void) snprintf(for_group, sizeof for_group, "CGBALANCE_FOR_CGROUP=%s",
                        for_path ? for_path : "");
        (void) snprintf(why, sizeof why, "CGBALANCE_REASON=%s", e->reason);
        if (e->lever == POLICY_LEVER_PARTITION) {
                _cleanup_free_ char *cpus = NULL;

                if (e->cpus)
                        (void) cpumask_format(e->cpus, &cpus);
                if (plan_escalation_is_up(e))
                        log_struct(LOG_INFO, fields, ELEMENTSOF(fields),
                                   "Kept %s off CPUs %s (partition %" PRIu32 " -> %" PRIu32
                                   ") for %s: %s",
                                   path, cpus ? cpus : "?", e->from, e->to,
                                   for_path ? for_path : "no group", e->reason);
                else
                        log_struct(LOG_INFO, fields, ELEMENTSOF(fields),
                                   "Gave %s its CPUs back (partition %" PRIu32 " -> %" PRIu32
                                   ", %" PRIu64 " masks put back) for %s: %s",
                                   path, e->from, e->to, written, for_path ? for_path : "no group",
                                   e->reason);
        } else if (attr == RECORD_CGROUP_QUOTA)
                log_struct(LOG_INFO, fields, ELEMENTSOF(fields),
                           "Set the CPU quota of %s %" PRIu32 " -> %" PRIu32
                           " permyriad of a CPU (%s usec) for %s: %s",
                           path, e->from, e->to, knob_value(attr, written, v),
                           for_path ? for_path : "no group", e->reason);
        else
                log_struct(LOG_INFO, fields, ELEMENTSOF(fields),
                           "Set cpu.idle of %s %" PRIu32 " -> %" PRIu32 " for %s: %s", path,
                           e->from, e->to, for_path ? for_path : "no group", e->reason);
}

static int online_cpus(const Actuator *a, CpuMask **ret);
static int restore_task(Actuator *a, const RecordTask *c, const CpuMask *online);

/* A partition's step back: every task of the group in the snapshot that has the mask the daemon
 * set gets its mask from before back, and leaves the record. Returns how many, or -ENOMEM. */
static int partition_give_back(Actuator *a, const PolicySnapshot *snap, size_t g, bool *dirty) {
        _cleanup_cpumask_ CpuMask *online = NULL;
        int r, n = 0;

        r = online_cpus(a, &online);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        for (size_t i = 0; i < snap->n_tasks; i++) {
                const PolicyTask *k = &snap->tasks[i];
                const RecordTask *c = k->cgroup == g ? record_find_task(a->record, k->pid) : NULL;

                if (!c || c->starttime_ticks != k->starttime_ticks)
                        continue;
                r = restore_task(a, c, online); /* reads c, changes no record */
                if (r < 0)
                        return r;
                n += r;
                record_drop_task(a->record, k->pid);
                *dirty = true;
        }
        return n;
}

static int execute_escalation(Actuator *a, const Record *old, const PolicySnapshot *snap,
                              const PlanEscalation *e, bool *dirty) {
        const char *path = snapshot_cgroup_path(snap, e->cgroup);
        const char *for_path = snapshot_cgroup_path(snap, e->for_cgroup);
        RecordCgroupAttr attr = lever_attr(e->lever);
        uint64_t written = 0;
        int r;

        if (e->lever == POLICY_LEVER_PARTITION) {
                /* up: the plan's moves, made before this, kept the tasks off */
                r = plan_escalation_is_up(e) ? 0 : partition_give_back(a, snap, e->cgroup, dirty);
                if (r < 0)
                        return r;
                written = (uint64_t) r;
        } else {
                r = set_value(a, old, path, attr, dirty);
                if (r <= 0)
                        return r;
                (void) record_lookup_cgroup(a->record, path, attr, NULL, &written);
        }
        a->counters.escalations++;
        log_escalation(e, path, for_path, written);
        if (a->observer)
                a->observer(&(const ActuatorEvent){ .kind = ACTUATOR_EVENT_ESCALATION,
                                                    .cgroup = path,
                                                    .lever = e->lever,
                                                    .old_value = e->from,
                                                    .new_value = e->to,
                                                    .for_cgroup = for_path,
                                                    .reason = e->reason },
                            a->observer_data);
        return 0;
}

/* ---- apply */

/* Writes r to state_dir/changes (record_save_at()); nothing to do without a state_dir. */
static int save_record(const Actuator *a, const Record *r) {
        return a->state_fd < 0 ? 0 : record_save_at(a->state_fd, r);
}

static bool task_is_gone(const Actuator *a, pid_t pid, uint64_t starttime) {
        TaskStat st;
        int k = proc_task_stat_read_at(a->proc_fd, pid, 0, &st);

        return k == -ESRCH || (k >= 0 && st.starttime_ticks != starttime);
}

/* Drops entries of tasks that are gone and groups that were removed (every attribute: nothing
 * to restore there), and the bans of tasks that are gone. Done before each write, which is rare
 * (only when something changes). */
static void prune_record(const Actuator *a, Record *r) {
        for (size_t i = r->n_tasks; i-- > 0;)
                if (task_is_gone(a, r->tasks[i].pid, r->tasks[i].starttime_ticks))
                        record_drop_task(r, r->tasks[i].pid);
        for (size_t i = r->n_cgroups; i-- > 0;) {
                uint64_t v;
                int k = cgroup_get_cpu_weight_native(&a->layout, r->cgroups[i].path, &v);

                if (k == -ENOENT || k == -ENODEV)
                        record_drop_cgroup(r, r->cgroups[i].path);
        }
        for (size_t i = r->n_bans; i-- > 0;)
                if (task_is_gone(a, r->bans[i].pid, r->bans[i].starttime_ticks))
                        record_unban_task(r, r->bans[i].pid);
}

/* Checks every action of the plan and notes those to do in *ret_next. Returns how many. */
static int prepare_plan(Actuator *a, const Plan *plan, const PolicySnapshot *snap,
                        uint64_t now_usec, PendingMove *pm, bool *pw, bool *pe, Record **ret_next) {
        _cleanup_record_ Record *next = NULL;
        _cleanup_cpumask_ CpuMask *online = NULL;
        int r, n = 0;

        r = record_copy(a->record, &next);
        if (r >= 0 && plan->n_moves > 0)
                r = online_cpus(a, &online);
        for (size_t i = 0; r >= 0 && i < plan->n_moves; i++) {
                r = prepare_move(a, next, online, &plan->moves[i], now_usec, &pm[i]);
                n += r > 0;
        }
        for (size_t i = 0; r >= 0 && i < plan->n_weights; i++) {
                r = prepare_weight(a, next, snap, &plan->weights[i]);
                pw[i] = r > 0;
                n += r > 0;
        }
        for (size_t i = 0; r >= 0 && i < plan->n_escalations; i++) {
                r = prepare_escalation(a, next, snap, &plan->escalations[i]);
                pe[i] = r > 0;
                n += r > 0;
        }
        if (r < 0)
                return r;
        *ret_next = TAKE_PTR(next);
        return n;
}

int actuator_apply(Actuator *a, const Plan *plan, const PolicySnapshot *snap, bool dry_run,
                   uint64_t migrate_memory_max_mb, uint64_t now_usec) {
        _cleanup_record_ Record *next = NULL, *old = NULL;
        PendingMove *pm = NULL;
        _cleanup_free_ bool *pw = NULL, *pe = NULL;
        uint64_t budget_kib = migrate_memory_max_mb < UINT64_MAX / 1024
                                      ? migrate_memory_max_mb * 1024
                                      : UINT64_MAX;
        bool dirty = false;
        int r;

        if (!a || !plan || !snap)
                return -EINVAL;
        if (dry_run) {
                log_dry_run(plan, snap);
                return 0;
        }
        if (plan->n_moves == 0 && plan->n_weights == 0 && plan->n_escalations == 0)
                return 0;
        pm = calloc(plan->n_moves + 1, sizeof *pm);
        pw = calloc(plan->n_weights + 1, sizeof *pw);
        pe = calloc(plan->n_escalations + 1, sizeof *pe);
        r = pm && pw && pe ? prepare_plan(a, plan, snap, now_usec, pm, pw, pe, &next) : -ENOMEM;
        if (r <= 0)
                goto finish;

        /* The originals are on disk before anything changes: a crash from here on leaves a
         * record the next start reconciles. */
        prune_record(a, next);
        r = save_record(a, next);
        if (r < 0) {
                log_debug_errno(r, "Failed to write the record in %s, changing nothing: %m",
                                a->state_dir);
                goto finish;
        }
        old = a->record;
        a->record = TAKE_PTR(next);
        for (size_t i = 0; r >= 0 && i < plan->n_moves; i++)
                if (pm[i].ready)
                        r = execute_move(a, old, &plan->moves[i], &pm[i], &budget_kib, &dirty);
        for (size_t i = 0; r >= 0 && i < plan->n_weights; i++)
                if (pw[i])
                        r = execute_weight(a, old, &plan->weights[i],
                                           snapshot_cgroup_path(snap, plan->weights[i].cgroup),
                                           &dirty);
        for (size_t i = 0; r >= 0 && i < plan->n_escalations; i++)
                if (pe[i])
                        r = execute_escalation(a, old, snap, &plan->escalations[i], &dirty);
        if (dirty) {
                int k = save_record(a, a->record);

                if (k < 0 && r >= 0)
                        r = log_debug_errno(k, "Failed to update the record in %s: %m",
                                            a->state_dir);
        }
finish:
        pending_moves_free(pm, plan->n_moves);
        return r < 0 ? r : 0;
}

/* ---- restore */

/* Puts want back on every thread of c's task that still has the mask the daemon set (a thread
 * someone pinned since keeps its mask). Returns the number of threads restored, or -ENOMEM. */
static int restore_threads(Actuator *a, const RecordTask *c, const CpuMask *online) {
        _cleanup_cpumask_ CpuMask *want = cpumask_new(a->capacity);
        _cleanup_free_ pid_t *tids = NULL;
        size_t n = 0;
        int r, done = 0;

        if (!want)
                return -ENOMEM;
        /* The original may name CPUs gone offline since: keep the rest, or give it every
         * online CPU (the kernel narrows that to its cpuset); never an empty mask. */
        cpumask_and(want, c->orig, online);
        if (cpumask_is_empty(want))
                cpumask_or(want, want, online);
        if (proc_task_list_at(a->proc_fd, c->pid, &tids, &n) < 0)
                return 0;
        for (size_t i = 0; i < n; i++) {
                _cleanup_cpumask_ CpuMask *m = NULL;

                r = affinity_get(a, tids[i], &m);
                if (r < 0 || !cpumask_equal(m, c->set)) /* gone, or pinned by someone else */
                        continue;
                r = affinity_set(tids[i], want);
                if (r == -EINVAL) /* none of them in its cpuset any more */
                        r = affinity_set(tids[i], online);
                if (r == -ESRCH)
                        continue;
                if (r < 0) {
                        a->counters.errors++;
                        log_warning_errno(
                                r, "Failed to restore the affinity of thread %d of pid %d: %m",
                                (int) tids[i], (int) c->pid);
                        continue;
                }
                done++;
        }
        return done;
}

/* Puts the original back, if c's task is still there with the mask the daemon set. 1 if done. */
static int restore_task(Actuator *a, const RecordTask *c, const CpuMask *online) {
        _cleanup_cpumask_ CpuMask *now = NULL;
        _cleanup_free_ char *text = NULL;
        TaskStat st;
        int r;

        if (pid_is_untouchable(c->pid)) {
                a->counters.errors++;
                log_warning("Record names pid %d, which is never touched: ignoring", (int) c->pid);
                return 0;
        }
        r = task_identify(a, c->pid, c->starttime_ticks, &st);
        if (r >= 0)
                r = affinity_get(a, c->pid, &now);
        if (r == -ESRCH) {
                a->counters.tasks_gone++;
                log_debug("pid %d is gone, nothing to restore", (int) c->pid);
                return 0;
        }
        if (r < 0) {
                a->counters.errors++;
                log_warning_errno(r, "pid %d: cannot restore its affinity: %m", (int) c->pid);
                return 0;
        }
        if (!cpumask_equal(now, c->set)) {
                if (cpumask_format(now, &text) >= 0)
                        log_info("pid %d (%s): affinity is %s, not the one we set: leaving it",
                                 (int) c->pid, st.comm, text);
                return 0;
        }
        r = restore_threads(a, c, online);
        if (r <= 0)
                return r;
        a->counters.restores++;
        /* What the kernel made of it (the cpuset may have narrowed it), not what we asked. */
        now = cpumask_free(now);
        if (affinity_get(a, c->pid, &now) >= 0 && cpumask_format(now, &text) >= 0)
                log_info("Restored the affinity of pid %d (%s): %s", (int) c->pid, st.comm, text);
        return 1;
}

/* Puts attr of path back to v's original if it still has the value the daemon set. 1 if done. */
static int restore_value(Actuator *a, const char *path, RecordCgroupAttr attr,
                         const RecordValue *v) {
        const char *name = attr == RECORD_CGROUP_WEIGHT ? "weight" : knobs[attr].name;
        char b1[32], b2[32];
        uint64_t now;
        int r;

        r = knobs[attr].get(&a->layout, path, &now);
        if (r == -ENOENT || r == -ENODEV) {
                /* Said where a restore is looked for: the group went while the daemon ran (or
                 * was down), so there is nothing to put back. */
                a->counters.cgroups_gone++;
                log_info("Group %s is gone: its %s needs no restoring", path, name);
                return 0;
        }
        if (r < 0) {
                cgroup_failed(a, path, attr, r, "read");
                return 0;
        }
        if (now != v->set) {
                log_info("Group %s: %s %s is not the %s we set: leaving it", path, name,
                         knob_value(attr, now, b1), knob_value(attr, v->set, b2));
                return 0;
        }
        r = knobs[attr].set(&a->layout, path, v->orig);
        if (r < 0) {
                cgroup_failed(a, path, attr, r, "restore");
                return 0;
        }
        a->counters.restores++;
        log_info("Restored the %s of %s to %s", name, path, knob_value(attr, v->orig, b1));
        return 1;
}

/* Puts back each attribute of the group the daemon changed. Returns how many. */
static int restore_cgroup(Actuator *a, const RecordCgroup *c) {
        int n = 0;

        for (RecordCgroupAttr attr = 0; attr < _RECORD_CGROUP_ATTR_MAX; attr++)
                if (c->values[attr].recorded)
                        n += restore_value(a, c->path, attr, &c->values[attr]);
        return n;
}

int actuator_restore_all(Actuator *a) {
        _cleanup_cpumask_ CpuMask *online = NULL;
        bool empty;
        int r, n = 0;

        if (!a)
                return -EINVAL;
        /* Nothing changed: the record on disk is already empty (absent), nothing to remove, which
         * a read-only state directory would refuse. */
        empty = a->record->n_tasks == 0 && a->record->n_cgroups == 0;
        if (a->record->n_tasks > 0) {
                r = online_cpus(a, &online);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < a->record->n_tasks; i++) {
                r = restore_task(a, &a->record->tasks[i], online);
                if (r < 0)
                        return r;
                n += r;
        }
        for (size_t i = 0; i < a->record->n_cgroups; i++)
                n += restore_cgroup(a, &a->record->cgroups[i]);
        record_clear(a->record); /* the bans stay */
        if (empty)
                return n;
        r = save_record(a, a->record);
        if (r < 0)
                /* What was changed is back: only the record stays behind, and the next start
                 * finds every value it names as it was before (it then leaves them). */
                log_warning_errno(r, "Failed to remove the record in %s after restoring: %m",
                                  a->state_dir);
        return n;
}

/* The record a previous run left, refused by record_load_at() with r: said, and set aside
 * unless it is not a regular file. Returns what actuator_reconcile() does. */
static int record_refused(Actuator *a, int r, const RecordFileInfo *info) {
        int k;

        if (r == -EISDIR || r == -ENOTSUP)
                /* Not a record the daemon wrote, never read: a FIFO would block a reader until a
                 * writer came. Saving the next record replaces anything but a directory. */
                return log_warning_errno(r,
                                         "%s/" RECORD_FILE " is not a regular file (%s), nothing "
                                         "restored",
                                         a->state_dir,
                                         r == -EISDIR ? "a directory" : "a FIFO, socket or device");
        if (r != -EBADMSG && r != -EFBIG && r != -E2BIG)
                return log_debug_errno(r, "Failed to read %s/" RECORD_FILE ": %m", a->state_dir);
        k = record_set_aside_at(a->state_fd);
        if (k < 0)
                log_warning_errno(k, "Failed to rename %s/" RECORD_FILE ": %m", a->state_dir);
        /* Over a bound no record of this daemon reaches: refused before it is parsed. */
        if (r == -EFBIG)
                log_warning_errno(
                        r,
                        "%s/" RECORD_FILE ": %" PRIu64 " bytes, more than %u MiB: not a record "
                        "this daemon wrote, kept as " RECORD_CORRUPT_FILE ", nothing restored",
                        a->state_dir, info->size_bytes, RECORD_SIZE_MAX / (1024u * 1024u));
        else if (r == -E2BIG)
                log_warning_errno(r,
                                  "%s/" RECORD_FILE
                                  ": %zu entries, more than %u: not a record this "
                                  "daemon wrote, kept as " RECORD_CORRUPT_FILE ", nothing restored",
                                  a->state_dir, info->entries, RECORD_ENTRIES_MAX);
        else if (info->line > 0)
                log_warning_errno(r,
                                  "%s/" RECORD_FILE
                                  ":%u: corrupt record, kept as " RECORD_CORRUPT_FILE
                                  ", nothing restored",
                                  a->state_dir, info->line);
        else
                log_warning_errno(r,
                                  "%s/" RECORD_FILE ": corrupt record, kept as " RECORD_CORRUPT_FILE
                                  ", nothing restored",
                                  a->state_dir);
        return -EBADMSG;
}

int actuator_reconcile(Actuator *a) {
        _cleanup_record_ Record *rec = NULL;
        RecordFileInfo info = {};
        int r;

        if (!a)
                return -EINVAL;
        if (a->state_fd < 0)
                return 0;
        r = record_load_at(a->state_fd, a->capacity, &rec, &info);
        if (r == -ENOENT)
                return 0;
        if (r < 0) {
                r = record_refused(a, r, &info);
                (void) malloc_trim(0); /* what a large record's parse took, back to the system */
                return r;
        }
        log_info("Found the record of a previous run with %zu tasks and %zu groups, restoring",
                 rec->n_tasks, rec->n_cgroups);
        /* The bans are this run's, never in the file: they stay. */
        rec->bans = TAKE_PTR(a->record->bans);
        rec->n_bans = a->record->n_bans;
        a->record->n_bans = 0;
        record_free(a->record);
        a->record = TAKE_PTR(rec);
        r = actuator_restore_all(a);
        /* glibc would keep the heap the entries took for the process's life: 36 MB resident
         * after a record of RECORD_ENTRIES_MAX, 3.4 MB with the trim */
        (void) malloc_trim(0);
        return r;
}
