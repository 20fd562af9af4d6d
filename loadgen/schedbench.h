/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * schedbench: numa_test (Erich Focht, 2002; seed 002). N copies of randupdt, a memory-latency
 * bound loop, with `hackbench 20` started beside them as a disturbance; reports their times and,
 * per task, on which NUMA node it spent its user time. The pure parts, for the tests.
 *
 * Residency is sampled, not inferred from affinity: every SCHEDBENCH_SAMPLE_USEC the parent reads
 * each task's /proc/PID/stat (field 39, the CPU it last ran on, and field 14, utime in clock
 * ticks) and attributes the utime gained since the previous sample to the node of that CPU. What
 * a task gains after its last sample (up to its final rusage) goes to the last node seen.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SCHEDBENCH_MAX_NODES 64u
#define SCHEDBENCH_SAMPLE_USEC 10000u

/* Where one task's user time went, in clock ticks per node index. */
typedef struct Residency {
        uint64_t ticks[SCHEDBENCH_MAX_NODES];
        uint64_t last_utime; /* at the last sample */
        int last_node; /* node index seen at the last sample; -1 before the first */
} Residency;

/* A Residency with no samples. */
void residency_init(Residency *r);

/*
 * One sample: the task's utime (ticks, monotonic) and the index of the node of the CPU it was
 * seen on (-1: unknown, nothing attributed but the utime is taken as seen). The utime since the
 * previous sample, or since 0 for the first, goes to node.
 */
void residency_sample(Residency *r, uint64_t utime, int node);

/* The task ended with final_utime ticks: what the samples missed goes to the last node seen. */
void residency_finish(Residency *r, uint64_t final_utime);

/* All ticks attributed. */
uint64_t residency_total(const Residency *r);

/* Percent of the attributed ticks on node index i (0 when there are none). */
double residency_pct(const Residency *r, unsigned i);

/* The node index with the most ticks among the first n (the lowest on a tie); -1 if none has
 * any. */
int residency_most(const Residency *r, unsigned n);

/*
 * Parses a /proc/PID/stat line: utime (field 14), stime (15), processor (39). The comm field may
 * hold spaces and parentheses: fields are counted after the last ')'. 0 or -EINVAL.
 */
int schedbench_parse_stat(const char *buf, uint64_t *ret_utime, uint64_t *ret_stime, int *ret_cpu);

/* The "Schedbench N:" header and its row, as seed 002:
 *   "                        AvgUser    Elapsed  TotalUser   TotalSys\n"
 *   "          ingoI50B10      22.49      37.04      90.00       0.86\n" */
void schedbench_format_summary(FILE *f, unsigned tasks, const char *label, double avg_user_s,
                               double elapsed_s, double total_user_s, double total_sys_s);

/* numa_test's per-task header: "Job  node00 node01 | iSched MSched | UserTime(s)". node_ids are
 * the nodes' OS ids in index order. */
void schedbench_format_residency_header(FILE *f, const int *node_ids, unsigned n_nodes);

/* One task's row: its number (from 1), percent per node index, initial and most-used node ids
 * (-1 prints "-"), a '*' between them and the user time where they differ. */
void schedbench_format_residency_row(FILE *f, unsigned job, const double *pct, unsigned n_nodes,
                                     int isched, int msched, double user_s);
