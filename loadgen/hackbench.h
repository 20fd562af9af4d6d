/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * hackbench (Rusty Russell, 2002; seed 004) as a function, so schedbench can run it beside its
 * tasks as the disturbance the original numa_test ran.
 */

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

typedef struct HackbenchParams {
        unsigned groups;
        unsigned fds; /* senders and receivers per group (20) */
        unsigned loops; /* messages each sender sends each receiver (100) */
        unsigned datasize; /* bytes per message (100) */
        bool pipe; /* pipes instead of AF_UNIX stream socketpairs */
        bool threads; /* pthreads instead of processes */
} HackbenchParams;

/* groups 10, fds 20, loops 100, datasize 100, sockets, processes. */
void hackbench_params_init(HackbenchParams *p);

/*
 * One hackbench in the calling process: starts every sender and receiver (processes or threads),
 * releases them together, and gives the time from the release to the last one's end. Every
 * process and thread it made is reaped before it returns. Once *stop (may be NULL) is set, it
 * kills what it started and returns -EINTR. Other errors: fork's, pipe's, socketpair's.
 */
int hackbench_once(const HackbenchParams *p, volatile sig_atomic_t *stop, uint64_t *ret_usec);

/* The tasks one hackbench runs at once: groups x (senders + receivers). */
uint64_t hackbench_tasks(const HackbenchParams *p);

/*
 * The descriptors the busiest process of it holds open (beside stdio): with threads every pair
 * of every group stays open in the one process; with processes the caller holds one group's
 * pairs at a time. Plus the ready and wake pairs.
 */
uint64_t hackbench_fds(const HackbenchParams *p);

/* The seed's row, with rt-tests' truncation to milliseconds, "10 groups: Time: 1.332\n", in buf;
 * returns what snprintf() does. */
int hackbench_format_row(char *buf, size_t size, unsigned groups, uint64_t usec);
