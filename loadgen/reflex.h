/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * reflex (IBM LSE; seed 000): the arithmetic, the --active parser and the table rows, apart from
 * the threads and pipes, so the tests can check them with numbers they choose.
 */

#include <stddef.h>
#include <stdint.h>

/* --active: a count of sets for every task count, or a fraction of the task count. */
typedef struct ReflexActive {
        unsigned count; /* > 0: this many sets whatever the task count */
        unsigned num, den; /* else num/den of the tasks, at least 1 */
} ReflexActive;

/* The seed's "# active tasks is 1/2 total number of tasks". */
#define REFLEX_ACTIVE_DEFAULT ((ReflexActive){ .num = 1, .den = 2 })

/*
 * "N" (1 to 1000000) or a fraction "P/Q" (0 < P <= Q <= 1000000) into *ret. Returns 0, or
 * -EINVAL for anything else (a sign, junk, zero, a fraction above 1).
 */
int reflex_parse_active(const char *s, ReflexActive *ret);

/* The number of active sets for `tasks` threads: the count, or tasks * num / den rounded down but
 * at least 1; never more than tasks. */
unsigned reflex_active_sets(const ReflexActive *a, unsigned tasks);

/* How many threads set i of `sets` gets when `tasks` are dealt out as evenly as possible (the
 * first tasks % sets sets one more); 0 for i >= sets. */
unsigned reflex_set_size(unsigned tasks, unsigned sets, unsigned i);

/* Microseconds per round trip: elapsed_usec over the round trips every set made together; NAN
 * for none. */
double reflex_round_trip_usec(uint64_t elapsed_usec, uint64_t round_trips);

/* Spin loops in work_usec, given that trial_loops took trial_usec (a 0 us trial counts as 1 us);
 * at least 1. */
uint64_t reflex_loops_for(uint64_t trial_loops, uint64_t trial_usec, unsigned work_usec);

/* One row, "2 6.521\n": tasks and round-trip usec. Returns what snprintf returns. */
int reflex_format_row(char *buf, size_t size, unsigned tasks, double usec);
