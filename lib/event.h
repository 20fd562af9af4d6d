/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What cgbalanced did, as one record both the daemon (which writes it, cgbalanced --events) and
 * its readers (loadgen compare's timeline) take from here: the log says the same to people, in
 * words that may change; this may not. One event is one line of JSON, one object, no newline
 * inside, ending in '\n':
 *
 *   {"version":1,"kind":"task-moved","monotonic_usec":8417265123,
 *    "realtime_usec":1764722003123456,"pid":1234,"comm":"spinner","from_node":0,"to_node":1,
 *    "reason":"node 0 load 2.00 ..."}
 *   {"version":1,"kind":"weight-changed","monotonic_usec":8418265123,
 *    "realtime_usec":1764722004123456,"cgroup":"cgbalance.slice/x","old_weight":100,
 *    "new_weight":150,"reason":"pressure 31.40% > 10.00% for 3.0s: up 50, max 1000"}
 *   {"version":1,"kind":"lever-changed","monotonic_usec":8419265123,
 *    "realtime_usec":1764722005123456,"cgroup":"cgbalance.slice/ring","lever":"idle",
 *    "old_value":0,"new_value":1,"for_cgroup":"cgbalance.slice/job","reason":"..."}
 *
 * (shown wrapped). Members, all required for their kind:
 *
 *   version          1: this schema. A change to the meaning of a member bumps it.
 *   kind             "task-moved" (a task's CPU affinity was changed), "weight-changed" (a
 *                    group's CPU weight was changed) or "lever-changed" (a lever past the
 *                    weight was set on a group contending with a protected one, or given back);
 *                    only changes that took effect, never a dry run's.
 *   monotonic_usec   when, CLOCK_MONOTONIC (the same clock for every process of the machine),
 *                    0..2^62
 *   realtime_usec    when, CLOCK_REALTIME, 0..2^62
 *   reason           why, for people: 0..EVENT_REASON_MAX bytes
 *   task-moved:      pid (1..INT_MAX), comm (1..EVENT_COMM_MAX bytes), from_node and to_node
 *                    (NUMA node ids, 0..INT_MAX; equal for a move within a node)
 *   weight-changed:  cgroup (the group's path below the hierarchy's root, no leading '/',
 *                    1..EVENT_CGROUP_MAX bytes), old_weight and new_weight (cpu.weight units,
 *                    CGROUP_WEIGHT_MIN..MAX, converted on cgroup v1)
 *   lever-changed:   cgroup (as above: the group acted on), lever ("idle": cpu.idle, values 0
 *                    or 1; "quota": a bandwidth limit in permyriad of one CPU, 0 for none, up to
 *                    EVENT_QUOTA_MAX; "partition": CPUs reserved, 0..EVENT_QUOTA_MAX),
 *                    old_value and new_value, for_cgroup (the protected group it is for, a path
 *                    as cgroup is, or "" when it is given back with no protected group left)
 *
 * Numbers are JSON integers. Strings are escaped as lib/json.h does (quotes, backslashes,
 * control characters); other bytes are copied, so a comm that is not UTF-8 comes back as it was.
 * Members may come in any order; a reader ignores members it does not know, so a later version-1
 * writer may add some. A line of an unknown version or kind, or missing a member, is rejected.
 */

#include <stdint.h>
#include <sys/types.h>

#include "policy.h"

#define EVENT_VERSION 1
#define EVENT_COMM_MAX 63 /* bytes: /proc's comm as lib/proc.h reads it */
#define EVENT_CGROUP_MAX 4095 /* bytes: PATH_MAX less the NUL */
#define EVENT_REASON_MAX 1023
#define EVENT_QUOTA_MAX 100000000u /* permyriad: ten thousand CPUs */

typedef enum EventKind {
        EVENT_TASK_MOVED = 1,
        EVENT_WEIGHT_CHANGED,
        EVENT_LEVER_CHANGED,
} EventKind;

/* A plain record: the strings are its own, so a parsed event needs no freeing. */
typedef struct Event {
        EventKind kind;
        uint64_t monotonic_usec, realtime_usec;
        char reason[EVENT_REASON_MAX + 1];
        /* EVENT_TASK_MOVED */
        pid_t pid;
        char comm[EVENT_COMM_MAX + 1];
        int from_node, to_node;
        /* EVENT_WEIGHT_CHANGED and EVENT_LEVER_CHANGED */
        char cgroup[EVENT_CGROUP_MAX + 1];
        /* EVENT_WEIGHT_CHANGED */
        uint32_t old_weight, new_weight;
        /* EVENT_LEVER_CHANGED */
        PolicyLever lever;
        uint32_t old_value, new_value;
        char for_cgroup[EVENT_CGROUP_MAX + 1];
} Event;

/* "task-moved", "weight-changed", "lever-changed"; NULL for anything else. */
const char *event_kind_to_string(EventKind k);

/*
 * Pure: e as one line (the format above, '\n' at its end) in *ret (caller frees). Only the
 * members of e's kind are written. -EINVAL when the line would not parse back: an unknown kind,
 * a value out of range, an empty comm or cgroup, a string not NUL-terminated within its array;
 * -ENOMEM.
 */
int event_format(const Event *e, char **ret);

/*
 * Pure: parses one line, with or without its '\n' (nothing else may follow the object). Fills
 * *ret (wholly, the other kind's members zero) on success; on failure *ret is untouched.
 * -EBADMSG for anything but a line of the format above (not JSON, not one object, an unknown
 * version or kind, a member missing, of the wrong type or out of range); -EINVAL for NULL
 * arguments; -ENOMEM.
 */
int event_parse(const char *line, Event *ret);
