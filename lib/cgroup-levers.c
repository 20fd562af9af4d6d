/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cgroup-levers.h"

#include <errno.h>

#include "cgroup-internal.h"

/* The arguments every reader and writer takes. */
static int check_cpu(const CgroupLayout *l, const char *path, bool allow_root) {
        int r = cg_check_group(path, allow_root);

        if (r < 0)
                return r;
        return l->cpu_path[0] ? 0 : -EOPNOTSUPP;
}

/* A file missing from a group that is there: the kernel (or the group's place in a v2 tree)
 * has no such lever. */
static int missing_file(const CgroupLayout *l, const char *path, int r) {
        int e;

        if (r != -ENOENT)
                return r;
        e = cg_group_exists(l->cpu_path, path);
        return e < 0 ? e : e > 0 ? -EOPNOTSUPP : -ENOENT;
}

int cgroup_get_cpu_idle(const CgroupLayout *l, const char *path, bool *ret_idle) {
        uint64_t v;
        int r = check_cpu(l, path, true);

        if (r < 0)
                return r;
        if (!ret_idle)
                return -EINVAL;
        r = missing_file(l, path, cg_read_u64_at(l->cpu_path, path, "cpu.idle", &v));
        if (r < 0)
                return r;
        if (v > 1)
                return -EINVAL;
        *ret_idle = v == 1;
        return 0;
}

int cgroup_set_cpu_idle(const CgroupLayout *l, const char *path, bool idle) {
        const char *file = "cpu.idle", *value = idle ? "1" : "0";
        int r = check_cpu(l, path, false);

        if (r < 0)
                return r;
        return missing_file(l, path, cg_lc_write(l->cpu_path, "cpu", path, 1, &file, &value));
}
