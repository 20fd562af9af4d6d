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
#include "log.h"
#include "policy.h"
#include "report.h"
#include "sampler.h"
#include "topology.h"
#include "tunables.h"

struct Manager {
        char *config_path;
        bool config_optional; /* no --config given: a missing default file means defaults */
        char *root;
        bool dry_run_forced;

        Tunables tunables;
        int proc_fd;
        CgroupLayout layout;
        Topology *topo;
        Sampler *sampler;
        Actuator *actuator;
        PolicyState *policy;

        sd_event *event;
        sd_event_source *timer;
        uint64_t ticks;
        char online[1024]; /* the online CPU list the model was built for */
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

/*
 * The machine model and everything sized by it: topology, sampler, policy state. Built whole
 * before the old one is dropped, so a failed rebuild leaves the daemon running on the old one.
 * The sampler's counters start again (its first sample primes), which is right after hotplug.
 */
static int manager_load_model(Manager *m) {
        _cleanup_topology_ Topology *topo = NULL;
        _cleanup_sampler_ Sampler *sampler = NULL;
        _cleanup_policy_state_ PolicyState *policy = NULL;
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
        policy = policy_state_new(topo);
        if (!policy)
                return log_error_errno(-ENOMEM, "Out of memory.");

        manager_read_online(m, m->online, sizeof m->online);
        policy_state_free(m->policy);
        sampler_free(m->sampler);
        topology_free(m->topo);
        m->policy = TAKE_PTR(policy);
        m->sampler = TAKE_PTR(sampler);
        m->topo = TAKE_PTR(topo);
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
        m->config_optional = !o->config_path;
        m->config_path = strdup(o->config_path ? o->config_path : TUNABLES_DEFAULT_PATH);
        m->root = o->root ? strdup(o->root) : NULL;
        if (!m->config_path || (o->root && !m->root))
                return log_error_errno(-ENOMEM, "Out of memory.");
        m->dry_run_forced = o->dry_run;

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
        policy_state_free(m->policy);
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

static uint64_t now_usec(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

/* One tick: sample, plan, act. Failures of one tick are logged; the loop goes on. */
static void manager_tick(Manager *m, uint64_t now) {
        _cleanup_plan_ Plan *plan = NULL;
        const PolicySnapshot *snap;
        const SamplerSystem *sys;
        int r;

        m->ticks++;
        manager_check_hotplug(m);
        r = sampler_sample(m->sampler, &m->tunables, m->actuator, now, &snap, &sys);
        if (r < 0) {
                log_warning_errno(r, "Failed to sample, skipping this tick: %m");
                return;
        }
        r = policy_plan(m->policy, snap, m->topo, &m->tunables, now, &plan);
        if (r < 0) {
                log_warning_errno(r, "Failed to plan, skipping this tick: %m");
                return;
        }
        log_debug("tick %" PRIu64 ": %u groups, %u tasks, %u threads, sampled in %" PRIu64
                  " us; %zu moves, %zu weight changes",
                  m->ticks, sys->n_cgroups, sys->n_tasks, sys->n_threads, sys->sample_usec,
                  plan->n_moves, plan->n_weights);
        r = actuator_apply(m->actuator, plan, snap, manager_dry_run(m),
                           m->tunables.migrate_memory ? m->tunables.migrate_memory_max_mb : 0, now);
        if (r < 0)
                log_error_errno(r, "Failed to record changes in %s, changing nothing: %m",
                                m->tunables.state_directory);
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        int r;

        manager_tick(m, usec);
        r = sd_event_source_set_time_relative(s, m->tunables.interval_usec);
        if (r >= 0)
                r = sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        if (r < 0)
                return log_error_errno(r, "Failed to re-arm the tick: %m");
        return 0;
}

/* SIGHUP (and, with the D-Bus API, Reload()): a fresh struct, validated, swapped whole. */
static int manager_reload(Manager *m) {
        Tunables fresh;
        int r;

        (void) sd_notifyf(false, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64, now_usec());
        r = manager_load_config(m, &fresh);
        if (r < 0) {
                log_warning("Keeping the configuration in force.");
        } else {
                if (!streq(fresh.state_directory, m->tunables.state_directory))
                        log_warning("state_directory changes at the next start, not on reload.");
                tunables_free(&m->tunables);
                m->tunables = fresh;
                log_set_max_level(log_levels[m->tunables.log_level]);
                log_info("Reloaded %s.", m->config_path);
        }
        (void) sd_notify(false, "READY=1");
        return r;
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        (void) s;
        if (si->ssi_signo == SIGHUP) {
                (void) manager_reload(m);
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
        r = sd_event_add_time_relative(m->event, &m->timer, CLOCK_MONOTONIC, 0, 0, on_tick, m);
        if (r < 0)
                return log_error_errno(r, "Failed to arm the tick: %m");
        /* Heartbeat from the loop itself, so a stalled loop gets the service restarted. */
        r = sd_event_set_watchdog(m->event, true);
        if (r < 0)
                log_warning_errno(r, "Failed to enable the watchdog, going on without: %m");
        return 0;
}

static void log_start(const Manager *m) {
        log_info("cgbalanced " CGBALANCE_VERSION " starting: %u CPUs in %u nodes, cgroups %s, "
                 "tick %" PRIu64 " ms%s.",
                 topology_n_cpus(m->topo), topology_n_nodes(m->topo),
                 cgroup_mode_to_string(m->layout.mode), m->tunables.interval_usec / 1000,
                 manager_dry_run(m) ? ", dry run: nothing will be changed" : "");
}

int manager_run(Manager *m) {
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
        r = manager_arm(m);
        if (r < 0)
                return r;
        (void) sd_notify(false, "READY=1\nSTATUS=Balancing");
        r = sd_event_loop(m->event);
        (void) sd_notify(false, "STOPPING=1");
        if (r < 0)
                log_error_errno(r, "Event loop failed: %m");
        if (!manager_dry_run(m)) {
                int n = actuator_restore_all(m->actuator);

                if (n < 0)
                        log_error_errno(n, "Failed to restore what was changed: %m");
                else
                        log_info("Restored %d changed masks and weights.", n);
        }
        return r < 0 ? r : 0;
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
        uint64_t hold = MAX(t->node_imbalance_hold_usec, t->pressure_hold_usec);
        uint64_t ticks =
                hold / t->interval_usec + MAX(t->idle_node_multiplier, t->busy_node_multiplier) + 1;

        for (uint64_t i = 0; i <= ticks; i++) {
                _cleanup_plan_ Plan *plan = NULL;
                int r;

                r = policy_plan(m->policy, snap, m->topo, t, now + i * t->interval_usec, &plan);
                if (r < 0)
                        return r;
                if (plan->n_moves + plan->n_weights > 0 || i == ticks) {
                        fprintf(f, "\nplan (after %" PRIu64 " ticks of this sample):\n", i + 1);
                        plan_dump(plan, snap, f);
                        if (plan->n_moves + plan->n_weights == 0)
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

        if (!m->root) {
                /* The first sample only primes the counters: a tick needs two. */
                r = sampler_sample(m->sampler, &m->tunables, m->actuator, now, &snap, &sys);
                if (r < 0)
                        return log_error_errno(r, "Failed to sample: %m");
                (void) usleep((useconds_t) m->tunables.interval_usec);
                now = now_usec();
        }
        r = sampler_sample(m->sampler, &m->tunables, m->actuator, now, &snap, &sys);
        if (r < 0)
                return log_error_errno(r, "Failed to sample: %m");
        report_snapshot(f, snap, sys, m->topo, &m->layout);
        r = manager_plan_steady(m, snap, now, f);
        if (r < 0)
                return log_error_errno(r, "Failed to plan: %m");
        return fflush(f) == 0 ? 0 : -EIO;
}
