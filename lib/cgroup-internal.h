/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Shared by lib/cgroup.c (layout, readers, weights) and lib/cgroup-tree.c (the groups'
 * lifecycle) only: path checks, control file reads and the libcgroup write path. Not installed,
 * not for daemon/ or loadgen/. Same error contract as cgroup.h.
 */

#include <libcgroup.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup.h"
#include "macro.h"

/* cgroup control files we read (cpu.stat, cpuset.cpus, cgroup.procs of a mirror) */
#define CONTROL_FILE_SIZE_MAX (1024u * 1024)

static inline void lc_cgroup_freep(struct cgroup **cg) {
        if (*cg)
                cgroup_free(cg);
}
#define _cleanup_lc_cgroup_ _cleanup_(lc_cgroup_freep)

/* A controller and where its hierarchy is mounted. */
typedef struct Hierarchy {
        const char *controller;
        const char *base;
} Hierarchy;

static inline bool cg_memory_is_v2(const CgroupLayout *l) {
        return l->mode == CGROUP_MODE_V2;
}

/* Maps a libcgroup failure and says so at debug level, naming what failed. */
int cg_lc_error(int ecg, const char *what, const char *group);
/* 0 if path is a valid group path (and not "" unless allow_root), else -EINVAL. */
int cg_check_group(const char *path, bool allow_root);
/* base/group/file, any of group and file may be "" or NULL. -EOPNOTSUPP if base is "". */
int cg_build_path(char **ret, const char *base, const char *group, const char *file);
/* The whole file, NUL-terminated. -EFBIG beyond max bytes, -EBADMSG if it holds a NUL byte. */
int cg_read_file(const char *path, size_t max, char **ret);
/* The value of the line "KEY NUMBER" of a flat-keyed file (cpu.stat). -ENODATA if there is no
 * such line, -EINVAL if it is malformed or there twice. */
int cg_parse_stat_key(const char *text, const char *key, uint64_t *ret);
/* base/group/file holding one decimal number and a newline. -EINVAL if it does not. */
int cg_read_u64_at(const char *base, const char *group, const char *file, uint64_t *ret);
/* 1 if base/group is a directory, 0 if it does not exist (or base is ""), else -errno. */
int cg_group_exists(const char *base, const char *group);
/* A libcgroup group of path group with the n controllers of h. */
int cg_lc_new(const char *group, const Hierarchy *h, size_t n, struct cgroup **ret);
/* Writes n control values of one controller of group through libcgroup, in order. */
int cg_lc_write(const char *base, const char *controller, const char *group, size_t n,
                const char *const names[], const char *const values[]);
