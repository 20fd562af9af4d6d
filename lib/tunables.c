/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "tunables.h"

#include <errno.h>
#include <inttypes.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#define USEC_PER_MSEC 1000ULL
#define USEC_PER_SEC 1000000ULL
#define USEC_PER_HOUR (3600ULL * USEC_PER_SEC)

static const char *const log_level_names[] = { "err", "warning", "notice", "info", "debug", NULL };
static const char *const pressure_measure_names[] = { "avg10", "interval", NULL };

static const ConfigKey tunables_keys[] = {
        /* [daemon] */
        CONFIG_KEY_DURATION("daemon", "interval", Tunables, interval_usec, "1s",
                            100 * USEC_PER_MSEC, USEC_PER_HOUR,
                            "How often cgbalanced samples the machine and plans (one tick)."),
        CONFIG_KEY_BOOL("daemon", "dry_run", Tunables, dry_run, "no",
                        "Decide and log, but change no affinity and no weight."),
        CONFIG_KEY_ENUM("daemon", "log_level", Tunables, log_level, "info", log_level_names,
                        "Most detailed messages logged: err, warning, notice, info or debug."),
        CONFIG_KEY_STRING("daemon", "state_directory", Tunables, state_directory, "/run/cgbalance",
                          200, 0,
                          "Where the record of every change is kept, so that a restart after a "
                          "crash can put back what the daemon changed. Read at start: a reload "
                          "keeps the directory in use until the next start."),
        CONFIG_KEY_DURATION("daemon", "sample_refresh", Tunables, sample_refresh_usec, "30s", 0,
                            USEC_PER_HOUR,
                            "How stale what is not read each tick may get. Each tick reads every "
                            "managed group's usage and pressure, every managed process's CPU "
                            "time, and the threads of those that ran; an idle thread is read "
                            "again, and a quiet group's processes listed again, at least this "
                            "often. 0 reads every thread every tick."),

        /* [manage] */
        CONFIG_KEY_STRV("manage", "cgroups", Tunables, cgroups, "cgbalance.slice", 200,
                        CONFIG_EMPTY_OK,
                        "Cgroups whose tasks are managed: paths relative to the cgroup root, "
                        "shell globs allowed; a group that matches brings every group below it."),
        CONFIG_KEY_STRV("manage", "exclude_cgroups", Tunables, exclude_cgroups, "", 200,
                        CONFIG_EMPTY_OK,
                        "Cgroups never managed, even below a managed one (globs, and below)."),
        CONFIG_KEY_STRV("manage", "exclude_comms", Tunables, exclude_comms, "", 64, CONFIG_EMPTY_OK,
                        "Task names (comm, globs) never touched."),
        CONFIG_KEY_BOOL("manage", "override_foreign_affinity", Tunables, override_foreign_affinity,
                        "no",
                        "Manage tasks whose affinity someone else narrowed (taskset, "
                        "CPUAffinity=). By default they are left alone."),
        CONFIG_KEY_BOOL("manage", "use_isolated_cpus", Tunables, use_isolated_cpus, "no",
                        "Place tasks on isolated and nohz_full CPUs too."),
        CONFIG_KEY_PERCENT("manage", "min_task_load", Tunables, min_task_load_pct, "10", 0, 100,
                           "A task using less than this share of one CPU is never moved."),

        /* [balance] */
        CONFIG_KEY_PERCENT("balance", "imbalance_pct", Tunables, imbalance_pct, "117", 101, 1000,
                           "Inside a node: the busiest CPU's load over the idlest's, in percent, "
                           "before a task the daemon confined is given its whole node back."),
        CONFIG_KEY_PERCENT("balance", "node_imbalance_pct", Tunables, node_imbalance_pct, "125",
                           101, 1000,
                           "Across nodes: the busiest node's load per CPU over the least busy "
                           "one's, in percent, before a task moves. Scaled up with the node "
                           "distance: this value applies to the nearest remote node."),
        CONFIG_KEY_STRING("balance", "node_min_imbalance", Tunables, node_min_imbalance, "auto", 16,
                          0,
                          "Cross-node migrate resistance: the load difference, in tasks, that "
                          "two nodes must also exceed. \"auto\" is the CPUs per node, or 0 when "
                          "nodes are SMT siblings."),
        CONFIG_KEY_DURATION("balance", "node_imbalance_hold", Tunables, node_imbalance_hold_usec,
                            "2s", 0, USEC_PER_HOUR,
                            "How long a node imbalance must last before tasks move."),
        CONFIG_KEY_UINT("balance", "idle_node_multiplier", Tunables, idle_node_multiplier, "2", 1,
                        1000,
                        "Node balancing runs every this many ticks while some node has an idle "
                        "CPU (seed 002's IDLE_NODE_REBALANCE_TICK multiplier)."),
        CONFIG_KEY_UINT("balance", "busy_node_multiplier", Tunables, busy_node_multiplier, "10", 1,
                        1000,
                        "Node balancing runs every this many ticks while every CPU is busy "
                        "(seed 002's BUSY_NODE_REBALANCE_TICK multiplier)."),
        CONFIG_KEY_DURATION("balance", "migrate_cooldown", Tunables, migrate_cooldown_usec, "10s",
                            0, USEC_PER_HOUR, "A task moved is not moved again for this long."),
        CONFIG_KEY_UINT("balance", "max_moves_per_tick", Tunables, max_moves_per_tick, "2", 0, 1024,
                        "At most this many tasks move in one tick (0: none)."),
        CONFIG_KEY_BOOL("balance", "migrate_memory", Tunables, migrate_memory, "no",
                        "Move a task's memory to its new node too (libnuma)."),
        CONFIG_KEY_UINT("balance", "migrate_memory_max_mb", Tunables, migrate_memory_max_mb, "256",
                        1, 1048576,
                        "At most this much memory moves in one tick, all moved tasks together: "
                        "a task with more resident memory than is left keeps its memory where "
                        "it is, so moves never stall the tasks (or the daemon) for long."),

        /* [weights] */
        CONFIG_KEY_STRV("weights", "protected_cgroups", Tunables, protected_cgroups, "", 200,
                        CONFIG_EMPTY_OK,
                        "Managed cgroups (globs, and below) whose CPU weight rises while their "
                        "cpu.pressure stays above pressure_target. The service may write weights "
                        "below cgbalance.slice only: a group elsewhere needs a ReadWritePaths= "
                        "drop-in (cgbalanced(8), SERVICE)."),
        CONFIG_KEY_PERCENT("weights", "pressure_target", Tunables, pressure_target_pct, "10", 1,
                           100,
                           "CPU pressure (as pressure_measure says), in percent, above which a "
                           "protected group gets more weight; below half of it, once the group "
                           "has gone quiet, the weight decays."),
        CONFIG_KEY_ENUM("weights", "pressure_measure", Tunables, pressure_measure, "avg10",
                        pressure_measure_names,
                        "What a group's pressure is: avg10, cpu.pressure's own 10 s average "
                        "(it takes seconds to rise when a burst starts, and to fall after), or "
                        "interval, the share of the last interval the group stalled (cpu.pressure "
                        "\"some total\"), which follows a burst within a tick and is noisier: "
                        "pressure_hold smooths it."),
        CONFIG_KEY_DURATION("weights", "pressure_hold", Tunables, pressure_hold_usec, "3s", 0,
                            USEC_PER_HOUR,
                            "How long pressure must stay above (or below) its mark before each "
                            "weight step."),
        CONFIG_KEY_UINT("weights", "weight_step", Tunables, weight_step, "50", 1, 10000,
                        "Weight added or taken back per step, in cgroup v2 units."),
        CONFIG_KEY_UINT("weights", "weight_min", Tunables, weight_min, "100", 1, 10000,
                        "A protected group's weight is never set below this."),
        CONFIG_KEY_UINT("weights", "weight_max", Tunables, weight_max, "1000", 1, 10000,
                        "A protected group's weight is never raised above this."),
        CONFIG_KEY_DURATION("weights", "latency_target", Tunables, latency_target_usec, "0", 0,
                            USEC_PER_SEC,
                            "A protected group whose tasks wait longer than this per wake-up "
                            "(schedstat run delay) counts as above pressure_target for its "
                            "weight and the escalation; under half of it, as below. 0: none."),

        /* [escalation] */
        CONFIG_KEY_BOOL("escalation", "escalate", Tunables, escalate, "yes",
                        "Past weight_max, act on the groups that contend with a protected group "
                        "still under pressure: a protected group is a promise (ESCALATION "
                        "in cgbalance.conf(5))."),
        CONFIG_KEY_STRV("escalation", "escalate_steps", Tunables, escalate_steps,
                        "idle quota partition", 16, CONFIG_EMPTY_OK,
                        "The steps allowed, of idle (cpu.idle), quota (a bandwidth limit) and "
                        "partition (CPUs kept for the protected group: the contenders' tasks' "
                        "affinity leaves them out). The ladder's order is fixed; empty is as "
                        "escalate = no."),
        CONFIG_KEY_DURATION("escalation", "escalate_hold", Tunables, escalate_hold_usec, "3s", 0,
                            USEC_PER_HOUR,
                            "How long a protected group's pressure must stay above (or below) "
                            "its mark before each step up (or back)."),
        CONFIG_KEY_DURATION("escalation", "escalate_memory", Tunables, escalate_memory_usec, "1min",
                            0, USEC_PER_HOUR,
                            "A protected group pressed again within this long of its last step "
                            "given back gets back the steps it gave back at once, one a tick, "
                            "without waiting escalate_hold for each (a job that works in bursts); "
                            "0: always wait."),
        CONFIG_KEY_PERCENT("escalation", "quota_floor", Tunables, quota_floor_pct, "10", 1, 10000,
                           "The lowest bandwidth limit set on a contending group, in percent of "
                           "one CPU."),
        CONFIG_KEY_UINT("escalation", "partition_max_cpus", Tunables, partition_max_cpus, "1", 0,
                        8192,
                        "The most CPUs a partition keeps for a protected group, of those its "
                        "tasks ran on (never every CPU); 0 takes no partition step."),

        /* [record] */
        CONFIG_KEY_STRING("record", "directory", Tunables, record_directory, "/var/lib/cgbalance",
                          200, 0,
                          "Where recordings are written (cgbalance-record(5)): `file` and "
                          "`cgbalancectl record start NAME` name a file in it."),
        CONFIG_KEY_STRING("record", "file", Tunables, record_file, "", 64, CONFIG_EMPTY_OK,
                          "Record every tick (what the policy was given and what it planned) to "
                          "this file in the directory, a name without '/'. Empty: no recording."),
        CONFIG_KEY_UINT("record", "max_size_mb", Tunables, record_max_size_mb, "256", 1, 1u << 20,
                        "A recording past this many MiB becomes FILE.1 (replacing an older one) "
                        "and recording goes on in a new FILE."),
        CONFIG_KEY_BOOL("record", "names", Tunables, record_names, "yes",
                        "Record task names (comm); no leaves them out."),

        /* [metrics] */
        CONFIG_KEY_STRING("metrics", "textfile", Tunables, metrics_textfile, "", 255,
                          CONFIG_EMPTY_OK,
                          "Write the metrics (`cgbalancectl metrics`) to this file for "
                          "node_exporter's textfile collector, replaced whole by a rename; a path "
                          "ending in .prom, such as "
                          "/var/lib/prometheus/node-exporter/cgbalance.prom (the directory the "
                          "unit may write). Empty: none."),
        CONFIG_KEY_UINT("metrics", "textfile_every", Tunables, metrics_textfile_every, "5", 1,
                        86400, "Write the textfile every this many ticks."),
        CONFIG_KEY_UINT("metrics", "max_cgroups", Tunables, metrics_max_cgroups, "100", 0, 100000,
                        "Export per-group series for at most this many managed groups: the "
                        "protected ones first, then the busiest. Bounds the label cardinality; "
                        "cgbalance_cgroups_managed counts them all."),

        /* [bus] */
        CONFIG_KEY_STRING("bus", "control_group", Tunables, control_group, "", 32, CONFIG_EMPTY_OK,
                          "Members of this Unix group may call the D-Bus methods that change "
                          "things (Reload, Pause, SetTunable...), besides root. Empty: root "
                          "only. The bus policy file must allow the group too."),
};

static int parse_min_imbalance(const char *s, unsigned *ret) {
        char *end;
        unsigned long v;

        if (streq(s, "auto"))
                return -ENOENT;
        if (s[0] < '0' || s[0] > '9')
                return -EINVAL;
        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno != 0 || *end != '\0' || v > 4096)
                return -EINVAL;
        *ret = (unsigned) v;
        return 0;
}

/* A file name in the record directory: no '/', not "." or "..". */
bool tunables_record_name_ok(const char *name) {
        return name[0] && !strchr(name, '/') && !streq(name, ".") && !streq(name, "..");
}

static bool endswith(const char *s, const char *suffix) {
        size_t n = strlen(s), k = strlen(suffix);

        return n >= k && streq(s + n - k, suffix);
}

static int tunables_validate(const void *config, ConfigContext *ctx) {
        const Tunables *t = config;

        if (t->record_file[0] && !tunables_record_name_ok(t->record_file))
                return config_reject(ctx, "record.file",
                                     "\"%s\" is not a file name (no '/', not . or ..)",
                                     t->record_file);
        if (t->record_directory[0] != '/')
                return config_reject(ctx, "record.directory", "\"%s\" is not an absolute path",
                                     t->record_directory);
        if (t->metrics_textfile[0] &&
            (t->metrics_textfile[0] != '/' || !endswith(t->metrics_textfile, ".prom")))
                return config_reject(ctx, "metrics.textfile",
                                     "\"%s\" is not an absolute path ending in .prom (the "
                                     "textfile collector reads *.prom only)",
                                     t->metrics_textfile);
        unsigned n;

        if (parse_min_imbalance(t->node_min_imbalance, &n) == -EINVAL)
                return config_reject(ctx, "node_min_imbalance",
                                     "\"%s\" is neither \"auto\" nor a number of tasks 0..4096",
                                     t->node_min_imbalance);
        for (size_t i = 0; t->escalate_steps && t->escalate_steps[i]; i++)
                if (policy_lever_from_string(t->escalate_steps[i]) == POLICY_LEVER_NONE)
                        return config_reject(
                                ctx, "escalate_steps",
                                "\"%s\" is not a step: idle, quota or partition%s",
                                t->escalate_steps[i],
                                strchr(t->escalate_steps[i], ',') ? " (separated by blanks)" : "");
        if (t->weight_min > t->weight_max)
                return config_reject(ctx, "weight_min", "%" PRIu64 " is above weight_max %" PRIu64,
                                     t->weight_min, t->weight_max);
        return 0;
}

const ConfigSchema tunables_schema = CONFIG_SCHEMA(Tunables, tunables_keys, tunables_validate);

int tunables_load(const char *path, bool optional, Tunables *ret, ConfigError *error) {
        return config_load(&tunables_schema, path, optional ? CONFIG_LOAD_MAIN_OPTIONAL : 0, ret,
                           error);
}

int tunables_defaults(Tunables *ret) {
        return config_load_string(&tunables_schema, "defaults", "", 0, ret, NULL);
}

void tunables_free(Tunables *t) {
        if (t)
                config_free(&tunables_schema, t);
}

int tunables_write_default_file(FILE *f) {
        fputs("# cgbalance.conf: configuration of cgbalanced(8); see cgbalance.conf(5).\n"
              "#\n"
              "# Every key is shown commented out at its default. Drop-ins in\n"
              "# cgbalance.conf.d/*.conf are read after this file, in name order, and override\n"
              "# it key by key. Reload with: systemctl reload cgbalance (or SIGHUP).\n\n",
              f);
        return config_write_defaults(&tunables_schema, f, CONFIG_WRITE_COMMENT_VALUES);
}

unsigned tunables_node_min_imbalance(const Tunables *t, unsigned cpus_per_node,
                                     unsigned cpus_per_core) {
        unsigned n;

        if (parse_min_imbalance(t->node_min_imbalance, &n) >= 0)
                return n;
        return cpus_per_core >= cpus_per_node ? 0 : cpus_per_node;
}

int policy_params_from_tunables(const Tunables *t, const Topology *topo, PolicyParams *ret) {
        unsigned n_nodes, cpc;

        if (!t || !topo || !ret)
                return -EINVAL;
        n_nodes = topology_n_nodes(topo);
        if (n_nodes > TOPOLOGY_MAX_NODES)
                return -EINVAL;
        cpc = topology_max_cpus_per_core(topo);
        *ret = (PolicyParams){
                .use_isolated_cpus = t->use_isolated_cpus,
                .override_foreign_affinity = t->override_foreign_affinity,
                .min_task_load_pct = t->min_task_load_pct,
                .migrate_cooldown_usec = t->migrate_cooldown_usec,
                .max_moves_per_tick = t->max_moves_per_tick,
                .imbalance_pct = t->imbalance_pct,
                .node_imbalance_pct = t->node_imbalance_pct,
                .node_imbalance_hold_usec = t->node_imbalance_hold_usec,
                .idle_node_multiplier = t->idle_node_multiplier,
                .busy_node_multiplier = t->busy_node_multiplier,
                .n_nodes = n_nodes,
                .pressure_target_pct = t->pressure_target_pct,
                .pressure_hold_usec = t->pressure_hold_usec,
                .weight_step = t->weight_step,
                .weight_min = t->weight_min,
                .weight_max = t->weight_max,
                .escalate_hold_usec = t->escalate_hold_usec,
                .escalate_memory_usec = t->escalate_memory_usec,
                .quota_floor_pct = t->quota_floor_pct,
                .partition_max_cpus = (unsigned) t->partition_max_cpus,
                .latency_target_usec = t->latency_target_usec,
        };
        for (size_t i = 0; t->escalate && t->escalate_steps && t->escalate_steps[i]; i++)
                ret->escalate_lever[policy_lever_from_string(t->escalate_steps[i])] = true;
        ret->escalate_lever[POLICY_LEVER_NONE] = false;
        for (unsigned i = 0; i < n_nodes; i++)
                ret->node_min_imbalance[i] = tunables_node_min_imbalance(
                        t, policy_node_capacity(topo, i, t->use_isolated_cpus), cpc);
        return 0;
}

static bool glob_matches(const char *glob, const char *path) {
        size_t len = strlen(path);
        _cleanup_free_ char *prefix = NULL;

        if (fnmatch(glob, path, FNM_PATHNAME) == 0)
                return true;
        /* "and below": try every ancestor of path */
        prefix = strdup(path);
        if (!prefix)
                return false;
        while (len > 0) {
                char *slash = strrchr(prefix, '/');

                if (!slash)
                        break;
                *slash = '\0';
                len = (size_t) (slash - prefix);
                if (fnmatch(glob, prefix, FNM_PATHNAME) == 0)
                        return true;
        }
        return false;
}

bool tunables_cgroup_matches(char *const *globs, const char *path) {
        if (!globs)
                return false;
        for (size_t i = 0; globs[i]; i++)
                if (glob_matches(globs[i], path))
                        return true;
        return false;
}

void policy_params_ignore_weights(PolicyParams *p) {
        p->weights_ignored = true;
        p->escalate_lever[POLICY_LEVER_IDLE] = false;
}
