/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * loadgen compare and loadgen sweep: one suite (contest or a benchmark) run once per
 * configuration, as the seed mails ran each benchmark once per kernel or tunable value, and its
 * table printed with one row (or column) per configuration.
 *
 *   loadgen compare [--config A.conf ...] [--no-daemon] [--json=FILE] [--daemon=PATH] -- SUITE ...
 *   loadgen sweep KEY=V1,V2,... [--config BASE.conf] [--no-daemon] ... -- SUITE ...
 *
 * Each row re-executes loadgen as `loadgen SUITE [OPTIONS] --label=ROW --json=FILE` with its
 * stdout captured; a daemon row starts cgbalanced first (on a config loadgen writes, validated
 * with the daemon's own parser before the first row runs), waits for its READY=1, and stops it
 * with SIGTERM, which restores what it changed, once the suite is done. Meanwhile the row's
 * timeline (loadgen/timeline.h) samples the nodes' load every second and records the daemon's
 * moves and weight changes from its stderr.
 *
 * The tables are merged by the pure compare_merge(): how depends on the suite's layout, the way
 * the seed mails put configurations side by side.
 */

#include <stdbool.h>
#include <stddef.h>

#include "tunables.h"

typedef enum CompareLayout {
        /*
         * The suite prints its label as the first word of its data lines (contest, kernbench,
         * schedbench, reaim; seeds 001, 002, 003): each run of labelled lines becomes the runs of
         * every configuration, one after another. Unlabelled lines that are the same in every
         * output (headings) are printed once; where they differ (schedbench's residency, reaim's
         * steps) each configuration's are printed under a "ROW:" line. A run of several
         * labelled lines (kernbench's job counts) is interleaved: line j of every configuration,
         * then line j + 1, so rows of one job count stand together.
         */
        COMPARE_LAYOUT_ROWS,
        /*
         * The suite prints one value per line, last, and its label as the last word of the
         * header (hackbench, lat_ctx, reflex, chat; seeds 004, 000): one column per configuration.
         */
        COMPARE_LAYOUT_COLUMNS,
        /*
         * The suite prints no label (pipe): each line that differs between the outputs is
         * printed once per configuration, the row's name before it.
         */
        COMPARE_LAYOUT_PREFIX,
} CompareLayout;

typedef struct CompareSuite {
        const char *name; /* the loadgen subcommand */
        CompareLayout layout;
        bool takes_label; /* --label=NAME names its row or column */
        const char *column_sep; /* COMPARE_LAYOUT_COLUMNS: between the columns */
} CompareSuite;

extern const CompareSuite compare_suites[];
extern const size_t n_compare_suites;

/* The suite called name (contest or a benchmark), or NULL. */
const CompareSuite *compare_suite_find(const char *name);

/*
 * Pure: the table of n >= 1 captured outputs of suite s, the i-th run with --label=labels[i]
 * (the row name), as one table with every configuration. 0 and a malloc'ed *ret; -EBADMSG when
 * the outputs do not have the same shape (a failed or cut-short run, a label that is also a
 * number of the table): compare_table() then prints them one after another. -ENOMEM.
 */
int compare_merge(const CompareSuite *s, const char *const *labels, const char *const *outputs,
                  size_t n, char **ret);

/* Pure: compare_merge(), or, when the shapes differ, each output under a "== ROW" line. */
int compare_table(const CompareSuite *s, const char *const *labels, const char *const *outputs,
                  size_t n, char **ret);

/*
 * Pure: the row name of a --config file: its base name without ".conf" ("/etc/x/A.conf" -> "A").
 * -EINVAL for a name that would be empty, -ENOMEM.
 */
int compare_row_name(const char *config_path, char **ret);

/*
 * Pure: splits a sweep's "KEY=V1,V2,..." into the key and the values (a NULL-terminated array).
 * -EINVAL (no '=', an empty key or value), -ENOMEM. The key is not looked up here.
 */
int compare_parse_sweep(const char *arg, char **ret_key, char ***ret_values);

/*
 * The INI text of configuration t, every key set (a file the daemon loads back to t), after a
 * comment header holding `comment` ("" for none). -ENOMEM, -EIO.
 */
int compare_config_text(const Tunables *t, const char *comment, char **ret);

/* `loadgen compare ...` and `loadgen sweep ...`: argv[0] is the command. Exit codes as loadgen's:
 * 0, 1 for a failure, 2 for bad arguments, 128+signal when interrupted. */
int compare_main(int argc, char *argv[]);
int sweep_main(int argc, char *argv[]);
