/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The pure half of loadgen compare and sweep (compare.h runs the rows): each suite's table
 * layout, merging the tables the rows printed into one with every configuration, a row's name,
 * a sweep's values and the config text written for a row. No I/O: strings in, strings out.
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
         * The suite prints no label (pipe, placement): each line that differs between the outputs
         * is printed once per configuration, the row's name before it.
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

/* Frees a NULL-terminated array of strings such as compare_parse_sweep()'s values; NULL is
 * fine. */
void compare_strv_free(char **v);
