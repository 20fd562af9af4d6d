/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * `loadgen sweep KEY=V1,V2,... [--config BASE.conf] -- replay RECORDING`: a tunable swept over a
 * day's recording (cgbalance-record(5)) instead of a live suite. Each value is one
 * `cgbalanced --replay RECORDING [--config BASE.conf] --set KEY=VALUE --json`: the recorded ticks
 * planned with the recorded configuration (or BASE.conf) and KEY set to the value; the table has a
 * row per value with the moves, cross-node moves, weight changes and lever steps it made, and on
 * how many ticks its plans differ from the recorded configuration's. Nothing runs live: no root,
 * no daemon, seconds for a day.
 */

#include <stdbool.h>

typedef struct SweepReplay {
        const char *sweep; /* "KEY=V1,V2,..." */
        const char *recording;
        const char *base_config; /* --config, or NULL: the recorded configuration */
        const char *daemon_path;
        const char *json_path; /* --json=FILE */
        bool json_stdout; /* --json */
} SweepReplay;

/* Returns the exit code: 0, 1 for a failure (logged), EXIT_USAGE for a bad sweep. */
int sweep_replay_run(const SweepReplay *s);
