/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cgroup-levers.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup-internal.h"
#include "macro.h"
#include "parse.h"

static bool cpu_is_v2(const CgroupLayout *l) {
        return l->mode == CGROUP_MODE_V2;
}

/* Checks the arguments every reader and writer takes. */
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

/* cpu_path/path/file, whole. */
static int read_cpu_file(const CgroupLayout *l, const char *path, const char *file, char **ret) {
        _cleanup_free_ char *p = NULL;
        int r = cg_build_path(&p, l->cpu_path, path, file);

        if (r >= 0)
                r = cg_read_file(p, CONTROL_FILE_SIZE_MAX, ret);
        return missing_file(l, path, r);
}

/* One value to one file of the cpu controller, through libcgroup. */
static int write_cpu_file(const CgroupLayout *l, const char *path, const char *file,
                          const char *value) {
        int r = cg_lc_write(l->cpu_path, "cpu", path, 1, &file, &value);

        return missing_file(l, path, r);
}

/* ---- cpu.idle */

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
        int r = check_cpu(l, path, false);

        if (r < 0)
                return r;
        return write_cpu_file(l, path, "cpu.idle", idle ? "1" : "0");
}

/* ---- bandwidth */

/* A field of a cpu.max line: [s, end) up to the next space or newline. */
static const char *field_end(const char *s) {
        return s + strcspn(s, " \n");
}

int cgroup_cpu_max_parse(const char *text, uint64_t *ret_quota_usec, uint64_t *ret_period_usec) {
        const char *q, *qe, *p, *pe;
        uint64_t quota = CGROUP_QUOTA_NONE, period;

        if (!text)
                return -EINVAL;
        q = text;
        qe = field_end(q);
        if (*qe != ' ')
                return -EINVAL;
        p = qe + 1;
        pe = field_end(p);
        if (*pe != '\n' || pe[1] != '\0')
                return -EINVAL;
        if (!(qe - q == 3 && memcmp(q, "max", 3) == 0) &&
            (parse_u64_span(q, (size_t) (qe - q), &quota) < 0 || quota == 0))
                return -EINVAL;
        if (parse_u64_span(p, (size_t) (pe - p), &period) < 0 || period == 0)
                return -EINVAL;
        if (ret_quota_usec)
                *ret_quota_usec = quota;
        if (ret_period_usec)
                *ret_period_usec = period;
        return 0;
}

/* v1 cpu.cfs_quota_us: "-1\n" (no limit) or a number of usec. */
static int read_cfs_quota(const CgroupLayout *l, const char *path, uint64_t *ret) {
        _cleanup_free_ char *text = NULL;
        int r = read_cpu_file(l, path, "cpu.cfs_quota_us", &text);

        size_t n;
        uint64_t v;

        if (r < 0)
                return r;
        n = strlen(text);
        if (n > 0 && text[n - 1] == '\n')
                n--;
        if (n == 2 && memcmp(text, "-1", 2) == 0) {
                *ret = CGROUP_QUOTA_NONE;
                return 0;
        }
        if (parse_u64_span(text, n, &v) < 0 || v == 0)
                return -EINVAL;
        *ret = v;
        return 0;
}

int cgroup_get_cpu_quota(const CgroupLayout *l, const char *path, uint64_t *ret_quota_usec,
                         uint64_t *ret_period_usec) {
        _cleanup_free_ char *text = NULL;
        uint64_t quota, period;
        int r = check_cpu(l, path, true);

        if (r < 0)
                return r;
        if (cpu_is_v2(l)) {
                r = read_cpu_file(l, path, "cpu.max", &text);
                if (r >= 0)
                        r = cgroup_cpu_max_parse(text, &quota, &period);
        } else {
                r = read_cfs_quota(l, path, &quota);
                if (r >= 0)
                        r = missing_file(
                                l, path,
                                cg_read_u64_at(l->cpu_path, path, "cpu.cfs_period_us", &period));
                if (r >= 0 && period == 0)
                        r = -EINVAL;
        }
        if (r < 0)
                return r;
        if (ret_quota_usec)
                *ret_quota_usec = quota;
        if (ret_period_usec)
                *ret_period_usec = period;
        return 0;
}

int cgroup_set_cpu_quota(const CgroupLayout *l, const char *path, uint64_t quota_usec) {
        char value[32];
        int r = check_cpu(l, path, false);

        if (r < 0)
                return r;
        if (quota_usec != CGROUP_QUOTA_NONE &&
            (quota_usec < CGROUP_QUOTA_MIN_USEC || quota_usec > CGROUP_QUOTA_MAX_USEC))
                return -ERANGE;
        /* v2 takes "QUOTA" alone and keeps the period; so does v1's quota file. */
        if (quota_usec == CGROUP_QUOTA_NONE)
                (void) snprintf(value, sizeof value, "%s", cpu_is_v2(l) ? "max" : "-1");
        else
                (void) snprintf(value, sizeof value, "%" PRIu64, quota_usec);
        return write_cpu_file(l, path, cpu_is_v2(l) ? "cpu.max" : "cpu.cfs_quota_us", value);
}

int cgroup_set_cpu_limit(const CgroupLayout *l, const char *path, uint64_t quota_usec,
                         uint64_t period_usec) {
        char value[64];
        int r = check_cpu(l, path, false);

        if (r < 0)
                return r;
        if (quota_usec < CGROUP_QUOTA_MIN_USEC || quota_usec > CGROUP_QUOTA_MAX_USEC ||
            period_usec < CGROUP_PERIOD_MIN_USEC || period_usec > CGROUP_PERIOD_MAX_USEC)
                return -ERANGE;
        if (cpu_is_v2(l)) {
                (void) snprintf(value, sizeof value, "%" PRIu64 " %" PRIu64, quota_usec,
                                period_usec);
                return write_cpu_file(l, path, "cpu.max", value);
        }
        (void) snprintf(value, sizeof value, "%" PRIu64, period_usec);
        r = write_cpu_file(l, path, "cpu.cfs_period_us", value);
        if (r < 0)
                return r;
        (void) snprintf(value, sizeof value, "%" PRIu64, quota_usec);
        return write_cpu_file(l, path, "cpu.cfs_quota_us", value);
}

int cgroup_read_cpu_throttled(const CgroupLayout *l, const char *path,
                              uint64_t *ret_throttled_usec) {
        _cleanup_free_ char *text = NULL;
        bool v2 = cpu_is_v2(l);
        uint64_t v;
        int r = check_cpu(l, path, true);

        if (r < 0)
                return r;
        if (!ret_throttled_usec)
                return -EINVAL;
        r = read_cpu_file(l, path, "cpu.stat", &text);
        if (r >= 0)
                r = cg_parse_stat_key(text, v2 ? "throttled_usec" : "throttled_time", &v);
        /* v2 lists bandwidth only where the cpu controller is enabled; v1 always */
        if (r == -ENODATA)
                r = v2 ? -EOPNOTSUPP : -EINVAL;
        if (r < 0)
                return r;
        *ret_throttled_usec = v2 ? v : v / 1000;
        return 0;
}
