/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The CPU levers past the weight, for the escalation ladder (policy.h, PolicyLever): a group's
 * cpu.idle, its bandwidth limit (quota per period), and the time its own limit held it back.
 * Same layout, group paths and error contract as cgroup.h; readers are rooted in the layout's
 * paths (tests point a layout at a fixture tree), writers act through libcgroup on the live
 * hierarchy (cgroup_layout_detect()).
 *
 * Where the files are: in the cpu hierarchy, v1 (and hybrid) and v2 alike.
 *   idle      v1 and v2 cpu.idle, "0" or "1" (Linux 5.15+)
 *   quota     v2 cpu.max "QUOTA PERIOD" ("max 100000": no limit); v1 cpu.cfs_quota_us (-1: no
 *             limit) and cpu.cfs_period_us, in usec
 *   throttled v2 cpu.stat throttled_usec; v1 cpu.stat throttled_time (ns, rounded down to usec)
 * A group that exists without the file (a kernel before cpu.idle, a v2 group whose parent does
 * not enable the cpu controller, the v2 root group) is -EOPNOTSUPP.
 */

#include <stdbool.h>
#include <stdint.h>

#include "cgroup.h"

/* A quota of no limit: v2 "max", v1 -1. Everywhere a quota is passed in usec, 0 is this. */
#define CGROUP_QUOTA_NONE UINT64_C(0)
/* The kernel's bounds on a quota: 1 ms, and its largest runtime (2^44 - 1 usec, MAX_BW). */
#define CGROUP_QUOTA_MIN_USEC UINT64_C(1000)
#define CGROUP_QUOTA_MAX_USEC ((UINT64_C(1) << 44) - 1)

/* Whether the group's cpu.idle is 1. -EINVAL if the file holds anything but 0 or 1. */
int cgroup_get_cpu_idle(const CgroupLayout *l, const char *path, bool *ret_idle);
/* Sets cpu.idle. Not on the root group (-EINVAL). */
int cgroup_set_cpu_idle(const CgroupLayout *l, const char *path, bool idle);

/*
 * Pure: a v2 cpu.max text, "QUOTA PERIOD\n" or "max PERIOD\n" (quota CGROUP_QUOTA_NONE).
 * -EINVAL for anything else: a missing period, a period of 0, a quota of 0, extra fields.
 */
int cgroup_cpu_max_parse(const char *text, uint64_t *ret_quota_usec, uint64_t *ret_period_usec);

/*
 * The group's bandwidth limit: its quota (CGROUP_QUOTA_NONE for none) and the period it is
 * counted over, in usec. -EINVAL for a malformed file. Either ret_ may be NULL.
 */
int cgroup_get_cpu_quota(const CgroupLayout *l, const char *path, uint64_t *ret_quota_usec,
                         uint64_t *ret_period_usec);
/*
 * Sets the quota, leaving the period as it is (the daemon keeps the period it found).
 * quota_usec is CGROUP_QUOTA_NONE or CGROUP_QUOTA_MIN_USEC..CGROUP_QUOTA_MAX_USEC (-ERANGE
 * otherwise). Not on the root group (-EINVAL). On v1 the kernel refuses (-EINVAL) a quota above
 * a limited parent's.
 */
int cgroup_set_cpu_quota(const CgroupLayout *l, const char *path, uint64_t quota_usec);
/*
 * A new limit, quota and period together (a group with no limit yet: loadgen's sandbox). v2
 * writes "QUOTA PERIOD" to cpu.max; v1 the period, then the quota. period_usec is
 * CGROUP_PERIOD_MIN_USEC..CGROUP_PERIOD_MAX_USEC and quota_usec as above but not NONE (-ERANGE).
 */
#define CGROUP_PERIOD_MIN_USEC 1000u
#define CGROUP_PERIOD_MAX_USEC 1000000u
int cgroup_set_cpu_limit(const CgroupLayout *l, const char *path, uint64_t quota_usec,
                         uint64_t period_usec);

/* The time the group was throttled by its bandwidth limit since it was made, in usec.
 * -EINVAL for a malformed cpu.stat. */
int cgroup_read_cpu_throttled(const CgroupLayout *l, const char *path,
                              uint64_t *ret_throttled_usec);
