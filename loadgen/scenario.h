/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * loadgen scenarios: a workload described as an INI file (loadgen-scenario(5)), so an imbalance,
 * a pressure pattern or a benchmark mix can be reproduced exactly and run against cgbalanced.
 * Parsed with the project's config machinery (lib/config: one table of keys, [KIND NAME]
 * sections, errors with FILE:LINE):
 *
 *   [scenario]        name, description, duration, the sandbox (cpus, mem), daemon_config
 *   [group NAME]      a cgroup under the run's sandbox: weight, protected
 *   [task NAME]       group, instances, where it starts (cpus or node, and whether the
 *                     instances are spread over them), its phases in order (phase = ..., one
 *                     per line), and whether they loop
 *
 * A phase is one line of words:
 *
 *   run DURATION [duty PCT%]            busy for DURATION, at PCT% of each 10 ms (default 100%)
 *   run N loops [duty PCT%]             busy for N loops of SCENARIO_LOOP_WORK (phases.h)
 *   sleep DURATION
 *   periodic RUN every PERIOD for DURATION   busy RUN at the start of each PERIOD (its wake-up
 *                                       latency is measured)
 *   pingpong TASK for DURATION | pingpong TASK N rounds
 *                                       a token over pipes with instance i of TASK (which must
 *                                       have a pingpong phase naming this task back)
 *   memwalk SIZE for DURATION | memwalk SIZE N passes
 *                                       write every cache line of SIZE, on the node it runs on
 *   write SIZE [for DURATION] | read SIZE [for DURATION]
 *                                       a file of SIZE in the run's directory, once or repeatedly
 *   load NAME for DURATION              one of the contest loads (loadgen list) but cacherun;
 *                                       ctar, xtar and list work on the instance's own tree
 *   bench NAME [OPTION...] (for DURATION | N runs)
 *                                       one of loadgen's benchmarks (loadgen list), its own
 *                                       process, again and again
 *   compile for DURATION | compile N builds
 *                                       contest's job: make clean, then make -j (4 x CPUs) of
 *                                       a quick generated tree of the instance's own, again
 *                                       and again
 *
 * Everything is checked before anything starts: unknown sections and keys, bad values, a phase
 * that does not parse, a task naming a missing group or pingpong peer, both cpus and node, CPUs
 * or a node this machine lacks. Each error names the file and line.
 */

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "cpumask.h"
#include "load.h"
#include "topology.h"

#define SCENARIO_MAX_GROUPS 64u
#define SCENARIO_MAX_TASKS 256u
#define SCENARIO_MAX_INSTANCES 1024u /* of one task */
#define SCENARIO_NAME_MAX 64u
#define SCENARIO_DESCRIPTION_MAX 512u
#define SCENARIO_PHASE_MAX 256u /* bytes of one phase line */
#define SCENARIO_DUTY_PERIOD_USEC 10000u /* run ... duty: busy this share of each 10 ms */

typedef enum PhaseType {
        PHASE_RUN,
        PHASE_SLEEP,
        PHASE_PERIODIC,
        PHASE_PINGPONG,
        PHASE_MEMWALK,
        PHASE_WRITE,
        PHASE_READ,
        PHASE_LOAD,
        PHASE_COMPILE,
        PHASE_BENCH,
        _PHASE_TYPE_MAX,
} PhaseType;

typedef struct Phase {
        PhaseType type;
        uint64_t duration_usec; /* how long; 0 when a count (loops, rounds, passes, once) ends it */
        uint64_t count; /* run: loops; pingpong: rounds; memwalk: passes; compile: builds;
                           bench: runs; 0 when timed */
        unsigned duty_pct; /* run: 1..100 */
        uint64_t run_usec, period_usec; /* periodic */
        uint64_t bytes; /* memwalk, write, read */
        size_t peer; /* pingpong: index of the task in Scenario.tasks */
        const Load *load; /* load */
        const char *bench; /* bench: the benchmark's name (loadgen BENCHMARK) */
        char *args; /* bench: its options, space-separated, owned; NULL for none */
        const char *file; /* where the phase was written (owned by the Scenario) */
        unsigned line;
} Phase;

typedef struct ScenarioGroup {
        uint64_t weight; /* cpu.weight, 1..10000 (cpu.shares scaled on cgroup v1) */
        bool protected_; /* a protected class for cgbalanced */
} ScenarioGroup;

typedef enum ScenarioSpread {
        SPREAD_NO, /* every instance starts on all of cpus / node */
        SPREAD_CPUS, /* instance i starts on the i-th CPU of cpus (or of the run), round robin */
        SPREAD_NODES, /* instance i starts on the i-th node (of the machine), round robin */
        _SPREAD_MAX,
} ScenarioSpread;

typedef struct ScenarioTask {
        char *group; /* the [group NAME] it runs in */
        uint64_t instances;
        ScenarioSpread spread;
        CpuMask *cpus; /* where it starts; empty: anywhere (or node) */
        int64_t node; /* where it starts, a NUMA node; -1: anywhere (or cpus) */
        /* Whether the start placement stays, as an administrator's pin would (cgbalanced calls
         * such a task foreign and leaves it); otherwise it is released to the run's CPUs once
         * the instance has started there. */
        bool pinned;
        ConfigList phases; /* the text; Scenario.phases[i] holds them parsed */
        bool loop; /* phases start again until the scenario's duration ends */
} ScenarioTask;

typedef struct ScenarioFile {
        char *name, *description;
        uint64_t duration_usec;
        CpuMask *cpus; /* the sandbox's cpuset; empty: all */
        char *mem; /* the sandbox's memory limit, a size; "": none */
        char *daemon_config; /* a cgbalanced config to run with; "": none */
        ConfigInstances groups; /* of ScenarioGroup */
        ConfigInstances tasks; /* of ScenarioTask */
} ScenarioFile;

typedef struct Scenario {
        ScenarioFile f;
        uint64_t mem_bytes; /* f.mem parsed; 0: none */
        Phase **phases; /* per task (index as f.tasks), n_phases[i] of them */
        size_t *n_phases;
} Scenario;

/*
 * Parses the scenario at path and checks it against machine (its online CPUs and nodes; NULL:
 * not checked). On success *ret is a new Scenario; on failure *error says what and where, and
 * *ret is untouched. -EINVAL for bad contents, -ERANGE for a value out of range, the errors of
 * reading the file, -ENOMEM.
 */
int scenario_load(const char *path, const Topology *machine, Scenario **ret, ConfigError *error);

/* The same from text; name labels the messages. */
int scenario_load_string(const char *name, const char *text, const Topology *machine,
                         Scenario **ret, ConfigError *error);

Scenario *scenario_free(Scenario *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Scenario *, scenario_free);
#define _cleanup_scenario_ _cleanup_(scenario_freep)

/* The task's and the group's names, by index. */
const char *scenario_task_name(const Scenario *s, size_t i);
const ScenarioTask *scenario_task(const Scenario *s, size_t i);
size_t scenario_n_tasks(const Scenario *s);
const char *scenario_group_name(const Scenario *s, size_t i);
const ScenarioGroup *scenario_group(const Scenario *s, size_t i);
size_t scenario_n_groups(const Scenario *s);

/*
 * One phase line, parsed; peer names are looked up in tasks (may be NULL: then any name is
 * taken as index 0). Returns 0, or -EINVAL with a message in why (at least 128 bytes).
 */
int phase_parse(const char *text, const ConfigInstances *tasks, Phase *ret, char *why,
                size_t why_size);

/* Whether the phase needs a source tree of contest's job (compile, and the loads that read
 * one): the runner then generates one for each instance. */
bool phase_needs_tree(const Phase *p);

/* Frees what phase_parse() allocated in p (a bench phase's args). */
void phase_done(Phase *p);

/* "run", "sleep", ...; NULL for a bad type. */
const char *phase_type_to_string(PhaseType t);

/*
 * Where the shipped scenarios are: $LOADGEN_SCENARIOS_DIR if set, else SCENARIOS_DIR (installed
 * by make install) if it exists, else conf/scenarios beside the binary's directory (a build in
 * the source tree: build/loadgen finds conf/scenarios). The string is malloc'ed; -ENOENT if
 * none exists.
 */
int scenario_dir(char **ret);

/*
 * A scenario by what a user typed: a path (it has a '/' or ends in ".conf") as it is, else the
 * shipped scenario of that name, scenario_dir()/NAME.conf. -ENOENT if there is none.
 */
int scenario_find(const char *what, char **ret_path);
