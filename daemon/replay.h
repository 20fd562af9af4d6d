/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * cgbalanced --replay: every plan of a recording (cgbalance-record(5)) made again, by the same
 * pure policy, from what it was given. With the recorded configuration the plans must be the
 * recorded ones, tick for tick; with another (a what-if) the two are counted side by side, per
 * minute, and the ticks where they disagree are shown with the reasons each gave.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct ReplayOptions {
        const char *path; /* the recording */
        const char *config_path; /* --config: the what-if's configuration; NULL: none */
        char **sets; /* --set KEY=VALUE...: the what-if is config_path's configuration, or the
                      * recorded one, with these keys set (NULL-terminated; NULL: none) */
        unsigned show; /* at most this many differing ticks are shown in full */
        bool json; /* one JSON object instead of the tables */
} ReplayOptions;

typedef struct ReplayCounts {
        uint64_t moves, cross_node, weights, escalations;
} ReplayCounts;

typedef struct ReplayResult {
        uint64_t ticks;
        uint64_t identical; /* ticks whose replayed plan is the recorded one */
        uint64_t differ; /* what-if: ticks where the two configurations' plans differ */
        ReplayCounts recorded, other;
        double seconds; /* from the first tick to the last */
        uint64_t task_ticks; /* the sum over ticks but the first of the tasks in each */
        uint64_t first_tick_end; /* the offset in the file after the first tick */
        uint64_t bytes; /* of the recording read */
} ReplayResult;

/*
 * Replays o->path, writing the report to out. Returns 0 (ret filled), or a negative errno with
 * the reason logged: a file that cannot be read or is malformed (the file and byte offset named),
 * a configuration that does not load (its file and line).
 */
int replay_run(const ReplayOptions *o, FILE *out, ReplayResult *ret);
