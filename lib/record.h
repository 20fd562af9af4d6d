/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The record of what the daemon changed, so that it can put back what it found: for each task
 * whose affinity it set, the identity (pid + starttime), the original mask and the one it set;
 * for each cgroup it changed, per attribute (the CPU weight, cpu.idle, the bandwidth quota), the
 * original value and the one it set. The actuator writes it to state_dir/changes before each change
 * and restores from it; the sampler asks it what the daemon owns (a mask it set, a group's weight
 * before it).
 *
 * A plain struct: tests and the fuzz target read the arrays; the functions below keep them
 * sorted (tasks by pid, groups by path) and at most one entry per pid and per path. Everything
 * here is pure except record_load_at(), record_save_at() and record_set_aside_at(), thin
 * wrappers around a directory fd. No daemon dependency: lib/, so the fuzz target and tests link
 * it without the actuator.
 *
 * The record also holds the bans, tasks the daemon gave up on (EPERM on setting their
 * affinity): in memory only, never written (a new run tries them again).
 *
 * The file, state_dir/changes: text, one object a line, every line ending in '\n':
 *
 *   cgbalance-changes 1
 *   task PID STARTTIME ORIG_CPULIST SET_CPULIST WHEN_USEC
 *   cgroup ORIG_NATIVE SET_NATIVE PATH
 *   cgroup-idle ORIG SET PATH
 *   cgroup-quota ORIG_USEC SET_USEC PATH
 *   cgroup-partition CPULIST PATH
 *
 * Fields are separated by one space. Numbers are decimal without sign or leading zero; PID is
 * 1..INT_MAX, natives (cpu.shares or cpu.weight, as the host has) 1..262144, idle (cpu.idle) 0 or
 * 1, quotas (the bandwidth limit per period: v2 cpu.max's first field, v1 cpu.cfs_quota_us) in
 * usec 0..2^44-1, where 0 is no limit (v2 "max", v1 -1; the kernel takes no quota below 1000
 * usec, so 0 names nothing else). The period is never recorded: the daemon does not change it.
 * Cpulists are
 * non-empty and canonical, as cpumask_format() writes them ("0-3,8"). SET is the affinity the
 * kernel reported after the change. PATH (cgroup_path_is_valid(), not the root) is the rest of the
 * line taken verbatim: group names may hold spaces, never control characters, so nothing needs
 * escaping. At most one line per PID and per PATH. Anything else is a corrupt record.
 *
 * Each cgroup attribute has its own line keyword ("cgroup" is the weight's, for version 1),
 * with the same shape: KEYWORD ORIG SET PATH. A new attribute adds a RecordCgroupAttr and a row
 * in record.c's table (keyword, range); a group then has one line per attribute changed, at most
 * one per PATH and keyword. Files without the new keyword stay valid version 1 files.
 * cgroup-partition is the one group line of another shape: the CPUs (a cpulist, as for tasks) the
 * daemon keeps the group's tasks off, with nothing to put back at the group itself (each task's
 * own line has its mask from before); at most one per PATH.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpumask.h"
#include "macro.h"

#define RECORD_PARTITION_KEYWORD "cgroup-partition"
#define RECORD_FILE "changes"
#define RECORD_CORRUPT_FILE "changes.corrupt"

/*
 * What record_load_at() takes: far beyond any record the daemon writes, and a bound on what a
 * reconcile costs. The daemon records only the tasks it moved that are still alive (pruned at
 * each write) and the groups it changed, a line each (a group one per attribute): 10,000 managed
 * tasks, issue 22's scale, are 0.45 MB; the largest machine modelled (loadgen simulate's 16
 * nodes) runs 100,096 tasks. Reconciling costs about 5 us of CPU and 200 bytes at peak an entry,
 * most of it asking /proc whether each task is still there. Measured here (2 CPUs): at
 * RECORD_ENTRIES_MAX 1.3-1.5 s and 55-61 MB at peak, 2.2 s and 80 MB with lines of 120 bytes
 * (fragmented masks) up to RECORD_SIZE_MAX; the 2.9 million short lines that fit in the 64 MiB
 * allowed before took 16.7 s and 575 MB. The size leaves 128 bytes a line at RECORD_ENTRIES_MAX,
 * room for the long masks of large machines.
 */
#define RECORD_SIZE_MAX (32u * 1024u * 1024u)
#define RECORD_ENTRIES_MAX (256u * 1024u)

typedef struct RecordTask {
        pid_t pid;
        uint64_t starttime_ticks;
        CpuMask *orig; /* the affinity before the daemon's first change */
        CpuMask *set; /* the affinity the daemon set, as the kernel reported it */
        uint64_t when_usec;
} RecordTask;

/* What the daemon may change on a group; each has its own line in the file. */
typedef enum RecordCgroupAttr {
        RECORD_CGROUP_WEIGHT, /* cpu.weight (v2) or cpu.shares (v1), native units, 1..262144 */
        RECORD_CGROUP_IDLE, /* cpu.idle, 0 or 1 */
        RECORD_CGROUP_QUOTA, /* the bandwidth limit in usec per period, 0: none (CGROUP_QUOTA_NONE)
                              */
        _RECORD_CGROUP_ATTR_MAX,
} RecordCgroupAttr;

typedef struct RecordValue {
        bool recorded; /* false: the daemon did not change this attribute */
        uint64_t orig; /* before the daemon's first change */
        uint64_t set; /* what the daemon set, as read back */
} RecordValue;

typedef struct RecordCgroup {
        char *path;
        RecordValue values[_RECORD_CGROUP_ATTR_MAX]; /* at least one recorded, or a partition */
        /* A partition step: the CPUs the daemon keeps the group's tasks off (reserved for a
         * protected group); NULL: none. What each task had before is in its task line. */
        CpuMask *partition;
} RecordCgroup;

typedef struct RecordBan {
        pid_t pid;
        uint64_t starttime_ticks;
} RecordBan;

typedef struct Record {
        RecordTask *tasks; /* sorted by pid */
        size_t n_tasks;
        RecordCgroup *cgroups; /* sorted by path (strcmp) */
        size_t n_cgroups;
        RecordBan *bans; /* sorted by pid; never written */
        size_t n_bans;
} Record;

/* An empty record. -EINVAL for a NULL ret, -ENOMEM. */
int record_new(Record **ret);
Record *record_free(Record *r); /* accepts NULL, returns NULL */
DEFINE_TRIVIAL_CLEANUP_FUNC(Record *, record_free);
#define _cleanup_record_ _cleanup_(record_freep)
/* A deep copy, bans included. -ENOMEM. */
int record_copy(const Record *r, Record **ret);
/* True without any change (bans do not count: they are not written). */
bool record_is_empty(const Record *r);
/* Drops every change; the bans stay. */
void record_clear(Record *r);

/* Frees an entry's masks and zeroes it. */
void record_task_done(RecordTask *t);
/* A deep copy of t into *ret. -ENOMEM. */
int record_task_copy(const RecordTask *t, RecordTask *ret);

/* pid's entry, whatever its starttime, or NULL. */
const RecordTask *record_find_task(const Record *r, pid_t pid);
/* True if the daemon set this task's mask (pid and starttime match): its mask and when. */
bool record_lookup_task(const Record *r, pid_t pid, uint64_t starttime_ticks,
                        const CpuMask **ret_set, uint64_t *ret_when_usec);
/* Stores *t, replacing pid's entry if any. Takes t's masks on success (*t is zeroed); on
 * failure *t is untouched. -ENOMEM. */
int record_put_task(Record *r, RecordTask *t);
/* Replaces the set mask of pid's entry with *set, taken on success (*set is NULL then).
 * -ENOENT without an entry, -EINVAL for a NULL or empty mask. */
int record_update_task_set(Record *r, pid_t pid, CpuMask **set);
/* Drops pid's entry, if any. */
void record_drop_task(Record *r, pid_t pid);

/* path's entry, or NULL. */
const RecordCgroup *record_find_cgroup(const Record *r, const char *path);
/* True if the daemon changed attr of path: the original and the set values (either may be
 * NULL). */
bool record_lookup_cgroup(const Record *r, const char *path, RecordCgroupAttr attr,
                          uint64_t *ret_orig, uint64_t *ret_set);
/* Records attr of path, replacing what was recorded for that attribute. -EINVAL for an invalid
 * attribute or a NULL path, -ENOMEM. Ranges are checked by record_format(), not here. */
int record_put_cgroup(Record *r, const char *path, RecordCgroupAttr attr, uint64_t orig,
                      uint64_t set);
/* Replaces the set value of attr of path. -ENOENT if not recorded, -EINVAL. */
int record_update_cgroup_set(Record *r, const char *path, RecordCgroupAttr attr, uint64_t set);
/* The CPUs a partition keeps path's tasks off, or NULL. */
const CpuMask *record_lookup_partition(const Record *r, const char *path);
/* Records (a copy of) cpus as path's partition; NULL or empty forgets it (the entry goes with
 * its last attribute). -EINVAL for a NULL record or path, -ENOMEM. */
int record_put_partition(Record *r, const char *path, const CpuMask *cpus);
/* Forgets attr of path; the entry goes with its last attribute. */
void record_drop_cgroup_value(Record *r, const char *path, RecordCgroupAttr attr);
/* Drops path's entry, every attribute. */
void record_drop_cgroup(Record *r, const char *path);

/* Bans pid (with this starttime; a ban of the same pid with another starttime is replaced).
 * -ENOMEM. */
int record_ban_task(Record *r, pid_t pid, uint64_t starttime_ticks);
/* True if this very task (pid and starttime) is banned. r may be NULL (nothing banned). */
bool record_task_banned(const Record *r, pid_t pid, uint64_t starttime_ticks);
/* Lifts pid's ban, if any. */
void record_unban_task(Record *r, pid_t pid);

/*
 * Pure: parses a record's text (NUL-terminated). Masks get the given capacity; a CPU beyond it
 * is corrupt. -EBADMSG for anything but the format above (ret_line, when not NULL, gets the
 * 1-based line at fault; 0 for a pid or path recorded twice), -EINVAL for a NULL text or a bad
 * capacity, -ENOMEM. The result has no bans. Any number of entries: record_load_at() bounds
 * them (RECORD_ENTRIES_MAX) before it parses.
 */
int record_parse(const char *text, unsigned capacity, Record **ret, unsigned *ret_line);
/* Pure: the text of a record, which record_parse() reads back (bans are left out). -EINVAL for
 * an entry it could not read back (empty mask, bad path, a group with no value recorded, value
 * out of range), -ENOMEM. */
int record_format(const Record *r, char **ret);

/* What record_load_at() found of the file, for the log: as far as it got, also on failure. */
typedef struct RecordFileInfo {
        uint64_t size_bytes; /* its size (0 until it is looked at) */
        size_t entries; /* its lines after the header, a cut last one too (0 until it is read) */
        unsigned line; /* of a corrupt record, the 1-based line at fault (record_parse()), or 0 */
} RecordFileInfo;

/*
 * Reads and parses dir_fd/changes (record_parse()). -ENOENT when there is none; -EFBIG over
 * RECORD_SIZE_MAX, by its size before a byte is read; -E2BIG for more than RECORD_ENTRIES_MAX
 * entries, counted before any is parsed; -EBADMSG when it is corrupt (a NUL byte, or
 * record_parse() refuses it); -EISDIR for a directory and -ENOTSUP for anything else that is
 * not a regular file (a FIFO is opened without blocking and never read); other -errno from
 * reading it. ret_info may be NULL.
 */
int record_load_at(int dir_fd, unsigned capacity, Record **ret, RecordFileInfo *ret_info);
/*
 * Replaces dir_fd/changes with r atomically: a temporary file (changes.tmp, mode 0600) written
 * and fsync'ed, renamed over it, then the directory fsync'ed. An empty record removes the file
 * (and fsyncs the directory). On failure the old file stays whole. -EBADF for a negative
 * dir_fd, -EINVAL from record_format(), other -errno from the calls.
 */
int record_save_at(int dir_fd, const Record *r);
/* Renames dir_fd/changes to changes.corrupt (replacing an older one), to keep a corrupt record
 * for a human without ever reading it again. -errno of renameat(). */
int record_set_aside_at(int dir_fd);
