/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * schedbench: numa_test (Erich Focht, 2002; seed 002). N copies of randupdt, a memory-latency
 * bound loop, with `hackbench 20` started beside them as a disturbance; reports their times and,
 * per task, on which NUMA node it spent its user time. The pure parts, for the tests.
 *
 * Residency (residency.h) is sampled every RESIDENCY_SAMPLE_USEC from each task's /proc/PID/stat:
 * the utime gained since the previous sample goes to the node of the CPU it was seen on.
 */

#include <stdio.h>

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
