/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The CPU levers past the weight: here a group's cpu.idle. Same layout, group paths and error
 * contract as cgroup.h; the reader is rooted in the layout's paths (tests point a layout at a
 * fixture tree), the writer acts through libcgroup on the live hierarchy (cgroup_layout_detect()).
 *
 *   idle      v1 and v2 cpu.idle, "0" or "1" (Linux 5.15+), in the cpu hierarchy
 *
 * A group that exists without the file (a kernel before cpu.idle, a v2 group whose parent does
 * not enable the cpu controller, the v2 root group) is -EOPNOTSUPP.
 */

#include <stdbool.h>
#include <stdint.h>

#include "cgroup.h"

/* Whether the group's cpu.idle is 1. -EINVAL if the file holds anything but 0 or 1. */
int cgroup_get_cpu_idle(const CgroupLayout *l, const char *path, bool *ret_idle);
/* Sets cpu.idle. Not on the root group (-EINVAL). */
int cgroup_set_cpu_idle(const CgroupLayout *l, const char *path, bool idle);
