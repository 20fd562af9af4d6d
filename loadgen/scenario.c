/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "scenario.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "benchmark.h"
#include "macro.h"

#define MAX_WORDS 16u

/* ---- the table */

static const ConfigKey scenario_keys[] = {
        CONFIG_KEY_STRING("scenario", "name", ScenarioFile, name, "", SCENARIO_NAME_MAX,
                          CONFIG_EMPTY_OK,
                          "What the scenario is called, as loadgen list shows it."),
        CONFIG_KEY_STRING("scenario", "description", ScenarioFile, description, "",
                          SCENARIO_DESCRIPTION_MAX, CONFIG_EMPTY_OK,
                          "One sentence: what it shows."),
        CONFIG_KEY_DURATION("scenario", "duration", ScenarioFile, duration_usec, "10s",
                            UINT64_C(100000), UINT64_C(86400000000),
                            "How long it runs; tasks whose phases end sooner end then."),
        CONFIG_KEY_CPULIST("scenario", "cpus", ScenarioFile, cpus, "", 0, CONFIG_EMPTY_OK,
                           "The run's cpuset (empty: every CPU)."),
        CONFIG_KEY_STRING("scenario", "mem", ScenarioFile, mem, "", 32, CONFIG_EMPTY_OK,
                          "The memory limit of the run's groups, e.g. 512M (empty: none)."),
        CONFIG_KEY_STRING("scenario", "daemon_config", ScenarioFile, daemon_config, "", 0,
                          CONFIG_EMPTY_OK,
                          "A cgbalanced configuration to run it with (empty: the caller's)."),
};

static const ConfigKey group_keys[] = {
        CONFIG_KEY_UINT("group", "weight", ScenarioGroup, weight, "100", 1, 10000,
                        "The group's cpu.weight (cpu.shares, scaled, on cgroup v1)."),
        CONFIG_KEY_BOOL("group", "protected", ScenarioGroup, protected_, "no",
                        "Whether cgbalanced counts it among its protected groups."),
};

static const char *const spread_names[_SPREAD_MAX + 1] = {
        [SPREAD_NO] = "no",
        [SPREAD_CPUS] = "cpus",
        [SPREAD_NODES] = "nodes",
};

static const ConfigKey task_keys[] = {
        CONFIG_KEY_STRING("task", "group", ScenarioTask, group, "", 0, CONFIG_EMPTY_OK,
                          "The [group NAME] its instances run in."),
        CONFIG_KEY_UINT("task", "instances", ScenarioTask, instances, "1", 1,
                        SCENARIO_MAX_INSTANCES, "How many copies run."),
        CONFIG_KEY_ENUM("task", "spread", ScenarioTask, spread, "no", spread_names,
                        "no: every instance starts on all of cpus (or node); cpus: instance i "
                        "on the i-th CPU of cpus (or of the run); nodes: on the i-th node."),
        CONFIG_KEY_CPULIST("task", "cpus", ScenarioTask, cpus, "", 0, CONFIG_EMPTY_OK,
                           "Where it starts (cgbalanced may move it); not with node."),
        CONFIG_KEY_INT("task", "node", ScenarioTask, node, "-1", -1, 1023,
                       "The NUMA node it starts on (-1: anywhere); not with cpus."),
        CONFIG_KEY_BOOL("task", "pinned", ScenarioTask, pinned, "no",
                        "Whether cpus or node stay its affinity, as an admin's pin would; else "
                        "they are only where it starts."),
        CONFIG_KEY_LIST("task", "phase", ScenarioTask, phases, "", SCENARIO_PHASE_MAX,
                        "What it does, one phase a line, in order (see loadgen-scenario(5))."),
        CONFIG_KEY_BOOL("task", "loop", ScenarioTask, loop, "no",
                        "Whether its phases start again until the duration ends."),
};

/* The machine scenario_load() checks against, for the validate callbacks (loadgen is one
 * thread where it loads scenarios). */
static const Topology *check_machine;

static int validate_task(const void *instance, const char *name, ConfigContext *ctx) {
        const ScenarioTask *t = instance;

        if (!cpumask_is_empty(t->cpus) && t->node >= 0)
                return config_reject_instance(ctx, "task", name, "node",
                                              "give cpus or node, not both");
        if (t->spread == SPREAD_NODES && (!cpumask_is_empty(t->cpus) || t->node >= 0))
                return config_reject_instance(ctx, "task", name, "spread",
                                              "nodes spreads over every node: not with cpus or "
                                              "node");
        if (t->pinned && cpumask_is_empty(t->cpus) && t->node < 0 && t->spread == SPREAD_NO)
                return config_reject_instance(ctx, "task", name, "pinned",
                                              "pinned to what? give cpus, node or spread");
        if (t->phases.n == 0)
                return config_reject_instance(ctx, "task", name, NULL,
                                              "no phase: say what it does with phase = ...");
        if (!check_machine)
                return 0;
        if (!cpumask_is_empty(t->cpus) &&
            !cpumask_is_subset(t->cpus, topology_online_cpus(check_machine))) {
                _cleanup_free_ char *have = NULL;

                (void) cpumask_format(topology_online_cpus(check_machine), &have);
                return config_reject_instance(ctx, "task", name, "cpus",
                                              "names CPUs this machine does not have online "
                                              "(it has %s)",
                                              have ? have : "?");
        }
        if (t->node >= 0 && topology_node_index(check_machine, (unsigned) t->node) < 0)
                return config_reject_instance(ctx, "task", name, "node",
                                              "this machine has no node %" PRIi64 " (it has %u)",
                                              t->node, topology_n_nodes(check_machine));
        return 0;
}

static int validate_scenario(const void *config, ConfigContext *ctx) {
        const ScenarioFile *f = config;
        uint64_t bytes;

        if (f->name[0] == '\0')
                return config_reject(ctx, "scenario.name", "missing: every scenario has a name");
        if (f->mem[0] && (parse_size(f->mem, &bytes) < 0 || bytes < (UINT64_C(4) << 20)))
                return config_reject(ctx, "scenario.mem",
                                     "'%s' is not a size of at least 4M, e.g. 512M", f->mem);
        if (check_machine && !cpumask_is_empty(f->cpus) &&
            !cpumask_is_subset(f->cpus, topology_online_cpus(check_machine)))
                return config_reject(ctx, "scenario.cpus",
                                     "names CPUs this machine does not have online");
        if (f->tasks.n == 0)
                return config_reject(ctx, "scenario.name", "no [task NAME]: nothing would run");
        for (size_t i = 0; i < f->tasks.n; i++) {
                const ScenarioTask *t = (const ScenarioTask *) f->tasks.items + i;
                size_t g;

                if (t->group[0] == '\0')
                        return config_reject_instance(ctx, "task", f->tasks.names[i], NULL,
                                                      "no group: say group = NAME of a [group "
                                                      "NAME]");
                if (config_instances_find(&f->groups, t->group, &g) < 0)
                        return config_reject_instance(ctx, "task", f->tasks.names[i], "group",
                                                      "no [group %s] in the scenario", t->group);
        }
        return 0;
}

static const ConfigKind scenario_kinds[] = {
        CONFIG_KIND("group", ScenarioGroup, group_keys, ScenarioFile, groups, SCENARIO_MAX_GROUPS,
                    NULL, "A cgroup under the run's sandbox."),
        CONFIG_KIND("task", ScenarioTask, task_keys, ScenarioFile, tasks, SCENARIO_MAX_TASKS,
                    validate_task, "Processes doing the same phases."),
};

static const ConfigSchema scenario_schema =
        CONFIG_SCHEMA_WITH_KINDS(ScenarioFile, scenario_keys, scenario_kinds, validate_scenario);

/* ---- phases */

static const char *const phase_names[_PHASE_TYPE_MAX] = {
        [PHASE_RUN] = "run",           [PHASE_SLEEP] = "sleep",     [PHASE_PERIODIC] = "periodic",
        [PHASE_PINGPONG] = "pingpong", [PHASE_MEMWALK] = "memwalk", [PHASE_WRITE] = "write",
        [PHASE_READ] = "read",         [PHASE_LOAD] = "load",       [PHASE_COMPILE] = "compile",
        [PHASE_BENCH] = "bench",
};

bool phase_needs_tree(const Phase *p) {
        return p->type == PHASE_COMPILE ||
               (p->type == PHASE_LOAD && p->load &&
                (p->load->run == ctar_load_run || p->load->run == xtar_load_run ||
                 p->load->run == list_load_run));
}

const char *phase_type_to_string(PhaseType t) {
        return t < _PHASE_TYPE_MAX ? phase_names[t] : NULL;
}

static int why_(char *why, size_t size, const char *format, ...) _printf_(3, 4);
static int why_(char *why, size_t size, const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        (void) vsnprintf(why, size, format, ap);
        va_end(ap);
        return -EINVAL;
}

static int word_duration(const char *w, uint64_t *ret, char *why, size_t size) {
        if (config_parse_duration(w, ret) < 0 || *ret == 0)
                return why_(why, size, "'%s' is not a duration above 0, e.g. 200ms or 2s", w);
        return 0;
}

static int word_count(const char *w, uint64_t *ret, char *why, size_t size) {
        char *end;

        errno = 0;
        if (w[0] < '0' || w[0] > '9')
                return why_(why, size, "'%s' is not a count above 0", w);
        *ret = strtoull(w, &end, 10);
        if (errno || *end || *ret == 0)
                return why_(why, size, "'%s' is not a count above 0", w);
        return 0;
}

static int word_size(const char *w, uint64_t *ret, char *why, size_t size) {
        if (parse_size(w, ret) < 0 || *ret == 0)
                return why_(why, size, "'%s' is not a size above 0, e.g. 64M", w);
        return 0;
}

/* "for DURATION" at w[i], or a count and its unit ("N loops"): exactly one of them. */
static int timed_or_counted(char **w, size_t n, size_t i, const char *unit, Phase *p, char *why,
                            size_t size) {
        if (n == i + 2 && streq(w[i], "for"))
                return word_duration(w[i + 1], &p->duration_usec, why, size);
        if (unit && n == i + 2 && streq(w[i + 1], unit))
                return word_count(w[i], &p->count, why, size);
        if (unit)
                return why_(why, size, "want '%s ... for DURATION' or '%s ... N %s'", w[0], w[0],
                            unit);
        return why_(why, size, "want '%s ... for DURATION'", w[0]);
}

static int parse_run(char **w, size_t n, Phase *p, char *why, size_t size) {
        size_t rest;
        int r;

        if (n < 2)
                return why_(why, size, "want 'run DURATION' or 'run N loops' [duty PCT%%]");
        if (n >= 3 && streq(w[2], "loops")) {
                r = word_count(w[1], &p->count, why, size);
                rest = 3;
        } else {
                r = word_duration(w[1], &p->duration_usec, why, size);
                rest = 2;
        }
        if (r < 0)
                return r;
        p->duty_pct = 100;
        if (n == rest)
                return 0;
        if (n == rest + 2 && streq(w[rest], "duty")) {
                char *end;
                unsigned long v;

                errno = 0;
                v = strtoul(w[rest + 1], &end, 10);
                if (errno || end == w[rest + 1] || (*end && !streq(end, "%")) || v < 1 || v > 100 ||
                    w[rest + 1][0] == '-' || w[rest + 1][0] == '+')
                        return why_(why, size, "duty '%s' is not a percentage from 1%% to 100%%",
                                    w[rest + 1]);
                p->duty_pct = (unsigned) v;
                return 0;
        }
        return why_(why, size, "unexpected '%s' after the run's length (want duty PCT%%)", w[rest]);
}

/* bench NAME [OPTION...] (for DURATION | N runs): the options as one owned string. */
static int parse_bench(char **w, size_t n, Phase *p, char *why, size_t size) {
        const Benchmark *b;
        size_t len = 0;
        int r;

        if (n < 4)
                return why_(why, size,
                            "want 'bench NAME [OPTION...] for DURATION' or "
                            "'bench NAME [OPTION...] N runs'");
        b = benchmark_find(w[1]);
        if (!b)
                return why_(why, size, "no benchmark '%s' (see loadgen list)", w[1]);
        p->bench = b->name;
        r = timed_or_counted(w, n, n - 2, "runs", p, why, size);
        if (r < 0)
                return r;
        for (size_t i = 2; i < n - 2; i++) {
                /* The runner gives these itself: the run's sandbox is the scenario's. */
                if (strncmp(w[i], "--json", 6) == 0 || strncmp(w[i], "--no-sandbox", 12) == 0 ||
                    strncmp(w[i], "--dir", 5) == 0 || strncmp(w[i], "--cpus", 6) == 0)
                        return why_(why, size, "bench: %s is the scenario's to set", w[i]);
                len += strlen(w[i]) + 1;
        }
        if (len == 0)
                return 0;
        p->args = malloc(len);
        if (!p->args)
                return why_(why, size, "out of memory");
        p->args[0] = '\0';
        for (size_t i = 2; i < n - 2; i++) {
                if (i > 2)
                        strcat(p->args, " ");
                strcat(p->args, w[i]);
        }
        return 0;
}

void phase_done(Phase *p) {
        p->args = mfree(p->args);
}

int phase_parse(const char *text, const ConfigInstances *tasks, Phase *ret, char *why,
                size_t why_size) {
        _cleanup_free_ char *copy = strdup(text);
        char *w[MAX_WORDS + 1], *save = NULL;
        Phase p = { 0 };
        size_t n = 0;
        int r;

        if (!copy)
                return why_(why, why_size, "out of memory");
        for (char *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
                if (n == MAX_WORDS)
                        return why_(why, why_size, "too many words (at most %u)", MAX_WORDS);
                w[n++] = t;
        }
        if (n == 0)
                return why_(why, why_size, "empty phase");
        for (p.type = 0; p.type < _PHASE_TYPE_MAX; p.type++)
                if (streq(w[0], phase_names[p.type]))
                        break;
        switch (p.type) {
        case PHASE_RUN: r = parse_run(w, n, &p, why, why_size); break;
        case PHASE_SLEEP:
                r = n == 2 ? word_duration(w[1], &p.duration_usec, why, why_size)
                           : why_(why, why_size, "want 'sleep DURATION'");
                break;
        case PHASE_PERIODIC:
                if (n != 6 || !streq(w[2], "every") || !streq(w[4], "for")) {
                        r = why_(why, why_size, "want 'periodic RUN every PERIOD for DURATION'");
                        break;
                }
                r = word_duration(w[1], &p.run_usec, why, why_size);
                if (r >= 0)
                        r = word_duration(w[3], &p.period_usec, why, why_size);
                if (r >= 0)
                        r = word_duration(w[5], &p.duration_usec, why, why_size);
                if (r >= 0 && p.run_usec > p.period_usec)
                        r = why_(why, why_size, "runs %s every %s: longer than its period", w[1],
                                 w[3]);
                break;
        case PHASE_PINGPONG:
                if (n < 2) {
                        r = why_(why, why_size,
                                 "want 'pingpong TASK for DURATION' or "
                                 "'pingpong TASK N rounds'");
                        break;
                }
                if (tasks && config_instances_find(tasks, w[1], &p.peer) < 0) {
                        r = why_(why, why_size, "no [task %s] to ping-pong with", w[1]);
                        break;
                }
                r = timed_or_counted(w, n, 2, "rounds", &p, why, why_size);
                break;
        case PHASE_MEMWALK:
        case PHASE_WRITE:
        case PHASE_READ:
                if (n < 2) {
                        r = why_(why, why_size, "want '%s SIZE' and how long", w[0]);
                        break;
                }
                r = word_size(w[1], &p.bytes, why, why_size);
                if (r < 0)
                        break;
                if (p.type != PHASE_MEMWALK && n == 2)
                        break; /* once */
                r = timed_or_counted(w, n, 2, p.type == PHASE_MEMWALK ? "passes" : NULL, &p, why,
                                     why_size);
                break;
        case PHASE_LOAD:
                if (n < 2) {
                        r = why_(why, why_size, "want 'load NAME for DURATION'");
                        break;
                }
                p.load = load_find(w[1]);
                if (!p.load) {
                        r = why_(why, why_size, "no load '%s' (see loadgen list)", w[1]);
                        break;
                }
                /* cacherun is a way of running contest's job, not a load beside it. */
                if (p.load->run == cacherun_run) {
                        r = why_(why, why_size,
                                 "cacherun is no load: it runs contest's job again (use compile)");
                        break;
                }
                r = timed_or_counted(w, n, 2, NULL, &p, why, why_size);
                break;
        case PHASE_COMPILE: r = timed_or_counted(w, n, 1, "builds", &p, why, why_size); break;
        case PHASE_BENCH: r = parse_bench(w, n, &p, why, why_size); break;
        default:
                r = why_(why, why_size,
                         "unknown phase '%s' (run, sleep, periodic, pingpong, memwalk, write, "
                         "read, load, compile, bench)",
                         w[0]);
        }
        if (r < 0) {
                phase_done(&p);
                return r;
        }
        *ret = p;
        return 0;
}

/* ---- loading */

static int fail(ConfigError *error, const Phase *where, const char *task, const char *format, ...)
        _printf_(4, 5);
static int fail(ConfigError *error, const Phase *where, const char *task, const char *format, ...) {
        char what[CONFIG_ERROR_MAX / 2];
        va_list ap;

        va_start(ap, format);
        (void) vsnprintf(what, sizeof what, format, ap);
        va_end(ap);
        if (error) {
                error->error = -EINVAL;
                error->line = where->line;
                (void) snprintf(error->message, sizeof error->message, "%s:%u: task %s: phase: %s",
                                where->file ? where->file : "?", where->line, task, what);
        }
        return -EINVAL;
}

/* A pingpong's peer must ping-pong back, with as many instances (instance i pairs with i). */
static int check_peers(const Scenario *s, ConfigError *error) {
        for (size_t i = 0; i < s->f.tasks.n; i++)
                for (size_t k = 0; k < s->n_phases[i]; k++) {
                        const Phase *p = &s->phases[i][k];
                        bool back = false;

                        if (p->type != PHASE_PINGPONG)
                                continue;
                        if (p->peer == i)
                                return fail(error, p, s->f.tasks.names[i],
                                            "a task cannot ping-pong with itself");
                        for (size_t m = 0; m < s->n_phases[p->peer]; m++)
                                back = back || (s->phases[p->peer][m].type == PHASE_PINGPONG &&
                                                s->phases[p->peer][m].peer == i);
                        if (!back)
                                return fail(error, p, s->f.tasks.names[i],
                                            "[task %s] has no 'pingpong %s' phase to answer it",
                                            s->f.tasks.names[p->peer], s->f.tasks.names[i]);
                        if (scenario_task(s, i)->instances != scenario_task(s, p->peer)->instances)
                                return fail(error, p, s->f.tasks.names[i],
                                            "instances = %" PRIu64 " here, %" PRIu64
                                            " in [task %s]: instance i pairs with instance i",
                                            scenario_task(s, i)->instances,
                                            scenario_task(s, p->peer)->instances,
                                            s->f.tasks.names[p->peer]);
                }
        return 0;
}

static int finish(Scenario *s, ConfigError *error) {
        s->phases = calloc(s->f.tasks.n, sizeof *s->phases);
        s->n_phases = calloc(s->f.tasks.n, sizeof *s->n_phases);
        if (!s->phases || !s->n_phases)
                return -ENOMEM;
        if (s->f.mem[0] && parse_size(s->f.mem, &s->mem_bytes) < 0)
                return -EINVAL; /* validate_scenario() refused it already */
        for (size_t i = 0; i < s->f.tasks.n; i++) {
                const ConfigList *l = &scenario_task(s, i)->phases;

                s->phases[i] = calloc(l->n, sizeof **s->phases);
                if (!s->phases[i])
                        return -ENOMEM;
                for (size_t k = 0; k < l->n; k++) {
                        Phase where = { .file = l->items[k].file, .line = l->items[k].line };
                        char why[256];

                        if (phase_parse(l->items[k].value, &s->f.tasks, &s->phases[i][k], why,
                                        sizeof why) < 0)
                                return fail(error, &where, s->f.tasks.names[i], "%s", why);
                        s->phases[i][k].file = where.file;
                        s->phases[i][k].line = where.line;
                        s->n_phases[i]++;
                }
        }
        return check_peers(s, error);
}

static int load_common(const char *path, const char *name, const char *text,
                       const Topology *machine, Scenario **ret, ConfigError *error) {
        _cleanup_scenario_ Scenario *s = calloc(1, sizeof *s);
        int r;

        if (!s)
                return -ENOMEM;
        check_machine = machine;
        r = path ? config_load(&scenario_schema, path, 0, &s->f, error)
                 : config_load_string(&scenario_schema, name, text, strlen(text), &s->f, error);
        check_machine = NULL;
        if (r < 0) {
                /* config_load() wrote nothing to s->f: nothing to free there */
                free(TAKE_PTR(s));
                return r;
        }
        r = finish(s, error);
        if (r == -ENOMEM && error) {
                error->error = r;
                error->line = 0;
                (void) snprintf(error->message, sizeof error->message, "out of memory");
        }
        if (r < 0)
                return r;
        *ret = TAKE_PTR(s);
        return 0;
}

int scenario_load(const char *path, const Topology *machine, Scenario **ret, ConfigError *error) {
        return load_common(path, NULL, NULL, machine, ret, error);
}

int scenario_load_string(const char *name, const char *text, const Topology *machine,
                         Scenario **ret, ConfigError *error) {
        return load_common(NULL, name, text, machine, ret, error);
}

Scenario *scenario_free(Scenario *s) {
        if (!s)
                return NULL;
        if (s->phases)
                for (size_t i = 0; i < s->f.tasks.n; i++) {
                        for (size_t k = 0; s->phases[i] && k < s->n_phases[i]; k++)
                                phase_done(&s->phases[i][k]);
                        free(s->phases[i]);
                }
        free(s->phases);
        free(s->n_phases);
        config_free(&scenario_schema, &s->f);
        free(s);
        return NULL;
}

const char *scenario_task_name(const Scenario *s, size_t i) {
        return s->f.tasks.names[i];
}

const ScenarioTask *scenario_task(const Scenario *s, size_t i) {
        return (const ScenarioTask *) s->f.tasks.items + i;
}

size_t scenario_n_tasks(const Scenario *s) {
        return s->f.tasks.n;
}

const char *scenario_group_name(const Scenario *s, size_t i) {
        return s->f.groups.names[i];
}

const ScenarioGroup *scenario_group(const Scenario *s, size_t i) {
        return (const ScenarioGroup *) s->f.groups.items + i;
}

size_t scenario_n_groups(const Scenario *s) {
        return s->f.groups.n;
}

/* ---- finding them */

#ifndef SCENARIOS_DIR
#define SCENARIOS_DIR "/usr/local/share/cgbalance/scenarios"
#endif

static bool is_dir(const char *p) {
        struct stat st;

        return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int scenario_dir(char **ret) {
        const char *env = getenv("LOADGEN_SCENARIOS_DIR");
        char exe[4096], *slash;
        ssize_t n;

        if (env && env[0]) {
                *ret = strdup(env);
                return *ret ? 0 : -ENOMEM;
        }
        if (is_dir(SCENARIOS_DIR)) {
                *ret = strdup(SCENARIOS_DIR);
                return *ret ? 0 : -ENOMEM;
        }
        n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0)
                return -ENOENT;
        exe[n] = '\0';
        slash = strrchr(exe, '/');
        if (!slash)
                return -ENOENT;
        *slash = '\0';
        if (asprintf(ret, "%s/../conf/scenarios", exe) < 0)
                return -ENOMEM;
        if (!is_dir(*ret)) {
                *ret = mfree(*ret);
                return -ENOENT;
        }
        return 0;
}

int scenario_find(const char *what, char **ret_path) {
        _cleanup_free_ char *dir = NULL, *p = NULL;
        size_t len = strlen(what);
        int r;

        if (strchr(what, '/') || (len > 5 && streq(what + len - 5, ".conf"))) {
                *ret_path = strdup(what);
                return *ret_path ? 0 : -ENOMEM;
        }
        r = scenario_dir(&dir);
        if (r < 0)
                return r;
        if (asprintf(&p, "%s/%s.conf", dir, what) < 0)
                return -ENOMEM;
        if (access(p, F_OK) < 0)
                return -ENOENT;
        *ret_path = TAKE_PTR(p);
        return 0;
}
