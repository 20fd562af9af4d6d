/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What else steers the CPUs and the memory of this machine besides cgbalanced:
 *
 * - a sched_ext scheduler (a BPF scheduler loaded in place of the kernel's fair class):
 *   /sys/kernel/sched_ext/state is "enabled" (or "enabling", "disabling") and
 *   /sys/kernel/sched_ext/root/ops names it. Most of them ignore cpu.weight and cpu.idle, so
 *   the daemon's weight and idle levers do nothing while one is loaded; affinity and bandwidth
 *   limits still hold.
 * - the kernel's automatic NUMA balancing: /proc/sys/kernel/numa_balancing (0 off, 1 on, 2 the
 *   memory tiering mode), which moves tasks and pages towards the node their memory is on.
 * - numad, the user-space NUMA placement daemon, which pins processes to nodes by cpuset or
 *   affinity (a process whose /proc/PID/comm is "numad").
 *
 * steering_parse_*() are pure; steering_read() reads the files under a root ("" or NULL: this
 * machine), so tests give it a tree.
 */

#include <stdbool.h>
#include <stddef.h>

typedef enum SchedExtState {
        SCHED_EXT_ABSENT, /* the kernel has no sched_ext (no state file) */
        SCHED_EXT_DISABLED,
        SCHED_EXT_ENABLING,
        SCHED_EXT_ENABLED,
        SCHED_EXT_DISABLING,
} SchedExtState;

typedef struct Steering {
        SchedExtState sched_ext;
        char sched_ext_ops[64]; /* the scheduler's name, "" if unknown */
        int numa_balancing; /* 0, 1, 2; -1: the kernel has no such setting */
        bool numad; /* a numad process runs */
} Steering;

/* "disabled", "enabling", "enabled", "disabling", with or without a trailing newline.
 * -EBADMSG for anything else; -EINVAL for NULL arguments. */
int steering_parse_sched_ext(const char *text, SchedExtState *ret);
/* A number 0..2 with or without a trailing newline; -EBADMSG else. */
int steering_parse_numa_balancing(const char *text, int *ret);

/* True while a sched_ext scheduler is (or is becoming, or still is) in charge. */
bool steering_sched_ext_active(const Steering *s);

/* Reads them all under root. A file that is missing gives its "absent" value; one that is there
 * but unreadable or malformed is an error (-errno, -EBADMSG), *ret untouched. */
int steering_read(const char *root, Steering *ret);

/* One sentence for the log on what steers besides cgbalanced and how the daemon copes, into
 * buf; "" when nothing does. */
void steering_describe(const Steering *s, char *buf, size_t size);
