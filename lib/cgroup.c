/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <libcgroup.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup-internal.h"
#include "fileio.h"
#include "log.h"
#include "macro.h"
#include "parse.h"
#include "proc.h"

/* Exported by libcgroup 2.0.2 but missing from its installed headers. */
enum cg_version_t {
        CGROUP_UNK = 0,
        CGROUP_V1,
        CGROUP_V2,
};
int cgroup_get_controller_version(const char *controller, enum cg_version_t *version);

/* mountinfo of a large container host is some 100 KiB; beyond this it is not mountinfo. */
#define MOUNTINFO_SIZE_MAX (16u * 1024 * 1024)

/* ---- libcgroup errors */

int cgroup_ecg_to_errno(int ecg) {
        if (ecg == ECGOTHER) {
                int e = cgroup_get_last_errno();

                return e > 0 ? -e : -EIO;
        }
        switch (ecg) {
        case 0: return 0;
        case ECGROUPNOTEXIST:
        case ECGROUPVALUENOTEXIST: return -ENOENT;
        case ECGROUPNOTMOUNTED: return -ENOMEDIUM;
        case ECGROUPNOTCOMPILED:
        case ECGROUPSUBSYSNOTMOUNTED:
        case ECGROUPUNSUPP: return -EOPNOTSUPP;
        case ECGROUPNOTOWNER:
        case ECGROUPNOTALLOWED: return -EPERM;
        case ECGROUPNOTINITIALIZED: return -ENXIO;
        case ECGINVAL: return -EINVAL;
        case ECGMAXVALUESEXCEEDED: return -E2BIG;
        case ECGCONTROLLEREXISTS:
        case ECGVALUEEXISTS: return -EEXIST;
        case ECGNONEMPTY: return -EBUSY;
        default: return -EIO;
        }
}

const char *cgroup_ecg_to_string(int ecg) {
        /* cgroup_strerror() is right up to ECGMOUNTFAIL; above, its table is shifted by one. */
        static const char *const above[] = {
                [ECGEOF - ECGEOF] = "End of file or iterator",
                [ECGCONFIGPARSEFAIL - ECGEOF] = "Failed to parse config file",
                [ECGNAMESPACEPATHS - ECGEOF] = "Multiple paths for the same namespace",
                [ECGNAMESPACECONTROLLER - ECGEOF] = "Controller in namespace does not exist",
                [ECGMOUNTNAMESPACE - ECGEOF] = "Mount or namespace keyword missing in config",
                [ECGROUPUNSUPP - ECGEOF] = "Not supported by this kernel",
                [ECGCANTSETVALUE - ECGEOF] = "Value setting does not succeed",
                [ECGNONEMPTY - ECGEOF] = "Failed to remove a non-empty group",
        };

        if (ecg >= ECGROUPNOTCOMPILED && ecg <= ECGMOUNTFAIL) {
                const char *s = cgroup_strerror(ecg);

                return s ? s : "Unknown libcgroup error";
        }
        if (ecg >= ECGEOF && ecg <= ECGNONEMPTY)
                return above[ecg - ECGEOF];
        return "Unknown libcgroup error";
}

/* Maps a libcgroup failure and says so at debug level, naming what failed. */
int cg_lc_error(int ecg, const char *what, const char *group) {
        int r = cgroup_ecg_to_errno(ecg);

        if (r < 0)
                log_debug("libcgroup: %s %s: %s (%d, errno %d)", what, group,
                          cgroup_ecg_to_string(ecg), ecg, -r);
        return r;
}

/* ---- paths and small files */

const char *cgroup_mode_to_string(CgroupMode mode) {
        static const char *const names[_CGROUP_MODE_MAX] = {
                [CGROUP_MODE_NONE] = "none",
                [CGROUP_MODE_V1] = "v1",
                [CGROUP_MODE_HYBRID] = "hybrid",
                [CGROUP_MODE_V2] = "v2",
        };

        if ((unsigned) mode >= _CGROUP_MODE_MAX)
                return NULL;
        return names[mode];
}

bool cgroup_path_is_valid(const char *path) {
        if (!path)
                return false;
        if (!*path)
                return true;
        if (strlen(path) >= CGROUP_PATH_MAX)
                return false;
        for (const char *p = path;;) {
                size_t n = strcspn(p, "/");

                if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
                        return false;
                for (size_t i = 0; i < n; i++)
                        if ((unsigned char) p[i] < ' ' || p[i] == 0x7f)
                                return false;
                if (!p[n])
                        return true;
                p += n + 1;
        }
}

int cg_check_group(const char *path, bool allow_root) {
        if (!cgroup_path_is_valid(path) || (!allow_root && !*path))
                return -EINVAL;
        return 0;
}

/* base/group/file, any of group and file may be "" or NULL. -EOPNOTSUPP if base is "". */
int cg_build_path(char **ret, const char *base, const char *group, const char *file) {
        const char *sep1 = group && *group ? "/" : "", *sep2 = file && *file ? "/" : "";
        char *p;

        if (!*base)
                return -EOPNOTSUPP;
        if (asprintf(&p, "%s%s%s%s%s", base, sep1, group ? group : "", sep2, file ? file : "") < 0)
                return -ENOMEM;
        if (strlen(p) >= CGROUP_PATH_MAX) {
                free(p);
                return -ENAMETOOLONG;
        }
        *ret = p;
        return 0;
}

/* The whole file, NUL-terminated. -EFBIG beyond max bytes, -EBADMSG if it holds a NUL byte. */
int cg_read_file(const char *path, size_t max, char **ret) {
        return read_text_at(AT_FDCWD, path, max, ret, NULL);
}

/* A decimal number alone on its line, as cgroupfs prints one. */
static int parse_u64(const char *s, const char *end, uint64_t *ret) {
        return parse_u64_span(s, (size_t) (end - s), ret);
}

int cg_read_u64_at(const char *base, const char *group, const char *file, uint64_t *ret) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        size_t n;
        int r;

        r = cg_build_path(&path, base, group, file);
        if (r < 0)
                return r;
        r = cg_read_file(path, CONTROL_FILE_SIZE_MAX, &text);
        if (r < 0)
                return r;
        n = strlen(text);
        if (n > 0 && text[n - 1] == '\n')
                n--;
        return parse_u64(text, text + n, ret);
}

/* 1 if base/group is a directory, 0 if it does not exist, else -errno. */
int cg_group_exists(const char *base, const char *group) {
        _cleanup_free_ char *path = NULL;
        struct stat st;
        int r;

        if (!*base)
                return 0;
        r = cg_build_path(&path, base, group, NULL);
        if (r < 0)
                return r;
        if (stat(path, &st) < 0)
                return errno == ENOENT ? 0 : negative_errno();
        return S_ISDIR(st.st_mode) ? 1 : -ENOTDIR;
}

/* ---- layout */

/* Copies a mountinfo field into buf, decoding the kernel's \ooo escapes (space, tab, newline,
 * backslash). */
static int unescape_field(const char *s, size_t n, char *buf, size_t size) {
        size_t o = 0;

        for (size_t i = 0; i < n; i++) {
                char c = s[i];

                if (c == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' &&
                    s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
                        c = (char) ((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 +
                                    (s[i + 3] - '0'));
                        i += 3;
                }
                if (c == '\0' || o + 1 >= size)
                        return c == '\0' ? -EINVAL : -ENAMETOOLONG;
                buf[o++] = c;
        }
        buf[o] = '\0';
        return 0;
}

/* root + mount point, into a layout path. A root of "/" or "" adds nothing. */
static int set_mount_path(char *dst, const char *root, const char *field, size_t n) {
        char mnt[CGROUP_PATH_MAX];
        size_t rlen = root ? strlen(root) : 0;
        int r;

        while (rlen > 0 && root[rlen - 1] == '/')
                rlen--;
        r = unescape_field(field, n, mnt, sizeof mnt);
        if (r < 0)
                return r;
        if (rlen + strlen(mnt) >= CGROUP_PATH_MAX)
                return -ENAMETOOLONG;
        memcpy(dst, root ? root : "", rlen);
        strcpy(dst + rlen, mnt);
        return 0;
}

/* Whether the separated list s of length n has word w. */
static bool list_has(const char *s, size_t n, const char *seps, const char *w) {
        size_t wl = strlen(w);

        for (size_t i = 0; i < n;) {
                size_t k = 0;

                while (i + k < n && !strchr(seps, s[i + k]))
                        k++;
                if (k == wl && memcmp(s + i, w, wl) == 0)
                        return true;
                i += k + 1;
        }
        return false;
}

typedef struct Field {
        const char *s;
        size_t n;
} Field;

static bool field_is(Field f, const char *w) {
        return f.n == strlen(w) && memcmp(f.s, w, f.n) == 0;
}

/* The mount point, file system type and super options of one mountinfo line [p, end):
 * "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS". */
static int split_mountinfo_line(const char *p, const char *end, Field *mnt, Field *fstype,
                                Field *superopts) {
        Field f[32];
        size_t n = 0, dash = 0;

        while (p < end) {
                const char *s = p;

                while (p < end && *p != ' ')
                        p++;
                if (p == s || n == ELEMENTSOF(f))
                        return -EINVAL;
                f[n] = (Field){ s, (size_t) (p - s) };
                if (n >= 6 && !dash && field_is(f[n], "-"))
                        dash = n;
                n++;
                if (p < end)
                        p++;
        }
        if (!dash || n != dash + 4)
                return -EINVAL;
        *mnt = f[4];
        *fstype = f[dash + 1];
        *superopts = f[dash + 3];
        return 0;
}

/* Records the first mount of each controller and the first cgroup2 mount. */
static int apply_mount(CgroupLayout *l, const char *root, Field mnt, Field fstype, Field opts) {
        static const struct {
                const char *name;
                size_t offset;
        } v1[] = {
                { "cpu", offsetof(CgroupLayout, cpu_path) },
                { "cpuacct", offsetof(CgroupLayout, cpuacct_path) },
                { "cpuset", offsetof(CgroupLayout, cpuset_path) },
                { "memory", offsetof(CgroupLayout, memory_path) },
        };

        if (field_is(fstype, "cgroup2"))
                return l->unified_path[0] ? 0 : set_mount_path(l->unified_path, root, mnt.s, mnt.n);
        if (!field_is(fstype, "cgroup"))
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(v1); i++) {
                char *dst = (char *) l + v1[i].offset;
                int r;

                if (dst[0] || !list_has(opts.s, opts.n, ",", v1[i].name))
                        continue;
                r = set_mount_path(dst, root, mnt.s, mnt.n);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Sets the mode from what was found and keeps only the paths that mode uses. l holds the v1
 * mounts and the cgroup2 mount; v2_cpu, v2_cpuset and v2_memory say which controllers the cgroup2
 * mount has. */
static void layout_finish(CgroupLayout *l, bool v2_cpu, bool v2_cpuset, bool v2_memory) {
        if (l->cpu_path[0]) {
                l->mode = l->unified_path[0] ? CGROUP_MODE_HYBRID : CGROUP_MODE_V1;
                return;
        }
        if (!l->unified_path[0]) {
                l->mode = CGROUP_MODE_NONE;
                return;
        }
        l->mode = CGROUP_MODE_V2;
        l->cpuacct_path[0] = '\0'; /* cpu.stat has the usage */
        strcpy(l->cpu_path, v2_cpu ? l->unified_path : "");
        strcpy(l->cpuset_path, v2_cpuset ? l->unified_path : "");
        strcpy(l->memory_path, v2_memory ? l->unified_path : "");
}

int cgroup_layout_parse(const char *mountinfo, const char *v2_controllers, const char *root,
                        CgroupLayout *ret) {
        CgroupLayout l = {};
        const char *c = v2_controllers ? v2_controllers : "";

        if (!mountinfo || !ret)
                return -EINVAL;
        for (const char *p = mountinfo; *p;) {
                const char *end = strchrnul(p, '\n');
                Field mnt, fstype, opts;
                int r;

                if (end > p) {
                        r = split_mountinfo_line(p, end, &mnt, &fstype, &opts);
                        if (r < 0)
                                return r;
                        r = apply_mount(&l, root, mnt, fstype, opts);
                        if (r < 0)
                                return r;
                }
                p = *end ? end + 1 : end;
        }
        layout_finish(&l, list_has(c, strlen(c), " \n", "cpu"),
                      list_has(c, strlen(c), " \n", "cpuset"),
                      list_has(c, strlen(c), " \n", "memory"));
        *ret = l;
        return 0;
}

int cgroup_layout_load_at(const char *root, CgroupLayout *ret) {
        _cleanup_free_ char *mi_path = NULL, *mi = NULL, *ctl_path = NULL, *ctl = NULL;
        CgroupLayout l;
        int r;

        if (!ret)
                return -EINVAL;
        if (asprintf(&mi_path, "%s/proc/self/mountinfo", root ? root : "") < 0)
                return -ENOMEM;
        r = cg_read_file(mi_path, MOUNTINFO_SIZE_MAX, &mi);
        if (r < 0)
                return r;
        /* First pass: where the cgroup2 mount is, to read which controllers it has. */
        r = cgroup_layout_parse(mi, NULL, root, &l);
        if (r < 0)
                return r;
        if (l.unified_path[0]) {
                r = cg_build_path(&ctl_path, l.unified_path, NULL, "cgroup.controllers");
                if (r < 0)
                        return r;
                r = cg_read_file(ctl_path, CONTROL_FILE_SIZE_MAX, &ctl);
                if (r < 0 && r != -ENOENT)
                        return r;
                r = cgroup_layout_parse(mi, ctl, root, &l);
                if (r < 0)
                        return r;
        }
        *ret = l;
        return 0;
}

/* Where libcgroup has controller mounted: 1 and its version, 0 if nowhere. */
static int lc_mount_point(const char *controller, char *buf, enum cg_version_t *ret_version) {
        _cleanup_free_ char *mp = NULL;
        enum cg_version_t v = CGROUP_UNK;
        int r;

        r = cgroup_get_subsys_mount_point(controller, &mp);
        if (r == ECGROUPNOTEXIST || r == ECGROUPSUBSYSNOTMOUNTED)
                return 0;
        if (r != 0)
                return cg_lc_error(r, "mount point of", controller);
        r = cgroup_get_controller_version(controller, &v);
        if (r != 0)
                return cg_lc_error(r, "version of", controller);
        if (!mp || strlen(mp) >= CGROUP_PATH_MAX)
                return -ENAMETOOLONG;
        strcpy(buf, mp);
        *ret_version = v;
        return 1;
}

/* Fills the v1 path of controller, or flags it as present on the cgroup2 mount (on_v2 may be
 * NULL for a controller that has no v2 form). */
static int detect_controller(const char *controller, char *v1_path, bool *on_v2) {
        char mp[CGROUP_PATH_MAX];
        enum cg_version_t v = CGROUP_UNK;
        int r = lc_mount_point(controller, mp, &v);

        if (r <= 0)
                return r;
        if (v == CGROUP_V1)
                strcpy(v1_path, mp);
        else if (v == CGROUP_V2 && on_v2)
                *on_v2 = true;
        return 0;
}

int cgroup_layout_detect(CgroupLayout *ret) {
        CgroupLayout l = {}, mi;
        bool cpu_v2 = false, cpuset_v2 = false, memory_v2 = false;
        int r;

        if (!ret)
                return -EINVAL;
        /* libcgroup lists mounts by controller: an empty cgroup2 mount is only in mountinfo. */
        r = cgroup_layout_load_at(NULL, &mi);
        if (r < 0)
                return r;
        strcpy(l.unified_path, mi.unified_path);
        r = cgroup_init();
        if (r != 0 && r != ECGROUPNOTMOUNTED)
                return cg_lc_error(r, "init", "");
        if (r == 0) {
                r = detect_controller("cpu", l.cpu_path, &cpu_v2);
                if (r >= 0)
                        r = detect_controller("cpuacct", l.cpuacct_path, NULL);
                if (r >= 0)
                        r = detect_controller("cpuset", l.cpuset_path, &cpuset_v2);
                if (r >= 0)
                        r = detect_controller("memory", l.memory_path, &memory_v2);
                if (r < 0)
                        return r;
        }
        layout_finish(&l, cpu_v2, cpuset_v2, memory_v2);
        *ret = l;
        return 0;
}

/* ---- weight conversion */

static uint64_t clamp_u64(uint64_t v, uint64_t lo, uint64_t hi) {
        return v < lo ? lo : v > hi ? hi : v;
}

/* The kernel's DIV_ROUND_CLOSEST_ULL(): rounding, not truncating, lets weights survive a round
 * trip through shares. */
static uint64_t div_round_closest(uint64_t a, uint64_t b) {
        return (a + b / 2) / b;
}

uint64_t cgroup_weight_to_shares(uint64_t weight) {
        uint64_t w = clamp_u64(weight, CGROUP_WEIGHT_MIN, CGROUP_WEIGHT_MAX);

        return clamp_u64(div_round_closest(w * CGROUP_SHARES_DEFAULT, CGROUP_WEIGHT_DEFAULT),
                         CGROUP_SHARES_MIN, CGROUP_SHARES_MAX);
}

uint64_t cgroup_shares_to_weight(uint64_t shares) {
        uint64_t s = clamp_u64(shares, CGROUP_SHARES_MIN, CGROUP_SHARES_MAX);

        return clamp_u64(div_round_closest(s * CGROUP_WEIGHT_DEFAULT, CGROUP_SHARES_DEFAULT),
                         CGROUP_WEIGHT_MIN, CGROUP_WEIGHT_MAX);
}

/* ---- writing through libcgroup */

int cg_lc_new(const char *group, const Hierarchy *h, size_t n, struct cgroup **ret) {
        _cleanup_lc_cgroup_ struct cgroup *cg = cgroup_new_cgroup(*group ? group : "/");

        if (!cg)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (!cgroup_add_controller(cg, h[i].controller))
                        return -ENOMEM;
        *ret = TAKE_PTR(cg);
        return 0;
}

/*
 * libcgroup reports any failure to open a control file for writing as ECGROUPVALUENOTEXIST and
 * drops errno; ask the file system what is wrong (no group, read-only cgroupfs, permission).
 */
static int explain_write_failure(const char *base, const char *group, const char *file) {
        _cleanup_free_ char *path = NULL;
        int r = cg_build_path(&path, base, group, file);

        if (r < 0)
                return r;
        if (access(path, W_OK) < 0)
                return negative_errno();
        return -EIO;
}

/* Writes n control values of one controller of group through libcgroup, in order. */
int cg_lc_write(const char *base, const char *controller, const char *group, size_t n,
                const char *const names[], const char *const values[]) {
        _cleanup_lc_cgroup_ struct cgroup *cg = NULL;
        struct cgroup_controller *c;
        int r;

        r = cg_lc_new(group, &(Hierarchy){ controller, base }, 1, &cg);
        if (r < 0)
                return r;
        c = cgroup_get_controller(cg, controller);
        for (size_t i = 0; i < n; i++) {
                r = cgroup_add_value_string(c, names[i], values[i]);
                if (r != 0)
                        return cg_lc_error(r, "add value to", group);
        }
        r = cgroup_modify_cgroup(cg);
        if (r == ECGROUPVALUENOTEXIST)
                for (size_t i = 0; i < n; i++) {
                        int e = explain_write_failure(base, group, names[i]);

                        if (e != -EIO)
                                return e;
                }
        return cg_lc_error(r, "modify", group);
}

/* ---- weight */

static bool weight_is_v2(const CgroupLayout *l) {
        return l->mode == CGROUP_MODE_V2;
}

int cgroup_set_cpu_weight_native(const CgroupLayout *l, const char *path, uint64_t native) {
        bool v2 = weight_is_v2(l);
        const char *name = v2 ? "cpu.weight" : "cpu.shares";
        char value[32];
        int r;

        r = cg_check_group(path, true);
        if (r < 0)
                return r;
        if (!l->cpu_path[0])
                return -EOPNOTSUPP;
        if (v2 ? native < CGROUP_WEIGHT_MIN || native > CGROUP_WEIGHT_MAX
               : native < CGROUP_SHARES_MIN || native > CGROUP_SHARES_MAX)
                return -ERANGE;
        (void) snprintf(value, sizeof value, "%" PRIu64, native);
        return cg_lc_write(l->cpu_path, "cpu", path, 1, &name, (const char *const[]){ value });
}

int cgroup_set_cpu_weight(const CgroupLayout *l, const char *path, uint64_t weight) {
        if (weight < CGROUP_WEIGHT_MIN || weight > CGROUP_WEIGHT_MAX)
                return -ERANGE;
        if (!weight_is_v2(l))
                weight = cgroup_weight_to_shares(weight);
        return cgroup_set_cpu_weight_native(l, path, weight);
}

int cgroup_get_cpu_weight_native(const CgroupLayout *l, const char *path, uint64_t *ret_native) {
        int r = cg_check_group(path, true);

        if (r < 0)
                return r;
        if (!ret_native)
                return -EINVAL;
        if (!l->cpu_path[0])
                return -EOPNOTSUPP;
        return cg_read_u64_at(l->cpu_path, path, weight_is_v2(l) ? "cpu.weight" : "cpu.shares",
                              ret_native);
}

int cgroup_get_cpu_weight(const CgroupLayout *l, const char *path, uint64_t *ret_weight) {
        uint64_t v;
        int r = cgroup_get_cpu_weight_native(l, path, ret_weight ? &v : NULL);

        if (r < 0)
                return r;
        *ret_weight = weight_is_v2(l) ? v : cgroup_shares_to_weight(v);
        return 0;
}

/* ---- memory peak */

int cgroup_read_memory_peak(const CgroupLayout *l, const char *path, uint64_t *ret_bytes) {
        bool v2 = cg_memory_is_v2(l);
        uint64_t v;
        int r = cg_check_group(path, true);

        if (r < 0)
                return r;
        if (!ret_bytes)
                return -EINVAL;
        if (!l->memory_path[0])
                return -EOPNOTSUPP;
        r = cg_read_u64_at(l->memory_path, path, v2 ? "memory.peak" : "memory.max_usage_in_bytes",
                           &v);
        if (r == -ENOENT && v2) {
                /* memory.peak is Linux 5.19+, and not in the root group */
                int e = cg_group_exists(l->memory_path, path);

                if (e != 0)
                        r = e < 0 ? e : -EOPNOTSUPP;
        }
        if (r < 0)
                return r;
        *ret_bytes = v;
        return 0;
}

/* ---- reading usage and pressure */

int cg_parse_stat_key(const char *text, const char *key, uint64_t *ret) {
        size_t klen = strlen(key);
        bool found = false;
        uint64_t v = 0;

        for (const char *p = text; *p;) {
                const char *end = strchrnul(p, '\n');

                if ((size_t) (end - p) > klen && memcmp(p, key, klen) == 0 && p[klen] == ' ') {
                        int r = parse_u64(p + klen + 1, end, &v);

                        if (r < 0 || found)
                                return r < 0 ? r : -EINVAL;
                        found = true;
                }
                p = *end ? end + 1 : end;
        }
        if (!found)
                return -ENODATA;
        *ret = v;
        return 0;
}

int cgroup_read_usage(const CgroupLayout *l, const char *path, uint64_t *ret_usage_usec) {
        _cleanup_free_ char *file = NULL, *text = NULL;
        uint64_t v;
        int r = cg_check_group(path, true);

        if (r < 0)
                return r;
        if (!ret_usage_usec)
                return -EINVAL;
        if (l->mode != CGROUP_MODE_V2) {
                if (!l->cpuacct_path[0])
                        return -EOPNOTSUPP;
                r = cg_read_u64_at(l->cpuacct_path, path, "cpuacct.usage", &v);
                if (r < 0)
                        return r;
                *ret_usage_usec = v / 1000;
                return 0;
        }
        r = cg_build_path(&file, l->unified_path, path, "cpu.stat");
        if (r >= 0)
                r = cg_read_file(file, CONTROL_FILE_SIZE_MAX, &text);
        if (r >= 0)
                r = cg_parse_stat_key(text, "usage_usec", &v);
        if (r == -ENODATA)
                r = -EINVAL;
        if (r < 0)
                return r;
        *ret_usage_usec = v;
        return 0;
}

int cgroup_read_pressure(const CgroupLayout *l, const char *path, const char *resource,
                         PsiStats *ret) {
        _cleanup_free_ char *dir = NULL;
        _cleanup_close_ int fd = -EBADF;
        char name[32];
        int r = cg_check_group(path, true);

        if (r < 0)
                return r;
        if (!resource || !ret ||
            (!streq(resource, "cpu") && !streq(resource, "io") && !streq(resource, "memory")))
                return -EINVAL;
        if (l->mode != CGROUP_MODE_V2 && l->mode != CGROUP_MODE_HYBRID)
                return -EOPNOTSUPP;
        r = cg_build_path(&dir, l->unified_path, path, NULL);
        if (r < 0)
                return r;
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        (void) snprintf(name, sizeof name, "%s.pressure", resource);
        return psi_read_at(fd, name, ret);
}

/* ---- effective cpuset */

/* A cpuset file of base/group as a mask of capacity CPUs. */
static int read_cpuset_file(const char *base, const char *group, const char *file,
                            unsigned capacity, CpuMask **ret) {
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -EBADF;
        char buf[CGROUP_CPUSET_FILE_SIZE_MAX];
        int r;

        r = cg_build_path(&path, base, group, file);
        if (r < 0)
                return r;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        r = read_text_into(fd, buf, sizeof buf, NULL);
        if (r < 0)
                return r;
        return cpumask_parse(buf, capacity, ret, NULL);
}

int cgroup_read_cpuset_cpus(const CgroupLayout *l, const char *path, unsigned capacity,
                            CpuMask **ret) {
        bool v2 = l->mode == CGROUP_MODE_V2;
        _cleanup_free_ char *group = NULL;
        int r = cg_check_group(path, true);

        if (r < 0)
                return r;
        if (!ret)
                return -EINVAL;
        if (!l->cpuset_path[0])
                return -EOPNOTSUPP;
        group = strdup(path);
        if (!group)
                return -ENOMEM;
        for (;;) {
                char *slash;

                r = read_cpuset_file(l->cpuset_path, group,
                                     v2 ? "cpuset.cpus.effective" : "cpuset.effective_cpus",
                                     capacity, ret);
                if (r == -ENOENT && !v2)
                        r = read_cpuset_file(l->cpuset_path, group, "cpuset.cpus", capacity, ret);
                if (r != -ENOENT || !*group)
                        return r;
                slash = strrchr(group, '/');
                *(slash ? slash : group) = '\0';
        }
}

int cgroup_read_task_cpuset_cpus(const CgroupLayout *l, int proc_fd, pid_t pid, unsigned capacity,
                                 CpuMask **ret) {
        _cleanup_free_ char *group = NULL;
        int r;

        if (!l->cpuset_path[0])
                return -EOPNOTSUPP;
        r = proc_task_cgroup_read_at(proc_fd, pid, l->mode == CGROUP_MODE_V2 ? NULL : "cpuset",
                                     &group);
        if (r < 0)
                return r;
        return cgroup_read_cpuset_cpus(l, group, capacity, ret);
}

/* ---- walking the tree of groups */

const char *cgroup_walk_root(const CgroupLayout *l) {
        switch (l->mode) {
        case CGROUP_MODE_V1:
        case CGROUP_MODE_HYBRID: return l->cpu_path;
        case CGROUP_MODE_V2: return l->unified_path;
        default: return "";
        }
}

static bool entry_is_dir(DIR *d, const struct dirent *de) {
        struct stat st;

        if (de->d_type != DT_UNKNOWN)
                return de->d_type == DT_DIR;
        return fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

typedef struct Walk {
        CgroupWalkFn fn;
        CgroupWalkSkipFn skipped; /* or NULL */
        void *userdata;
        /* A group's path is below CGROUP_PATH_MAX; one passed over for its length is named with
         * one name (NAME_MAX) more. */
        char path[CGROUP_PATH_MAX + 1 + NAME_MAX + 1];
} Walk;

/* Why the group at w->path (a directory at depth, below a group at the limit when deep) is
 * passed over, or -1 if it is not. */
static int walk_skip_reason(const Walk *w, unsigned depth, size_t len) {
        if (depth > CGROUP_WALK_DEPTH_MAX)
                return CGROUP_WALK_SKIP_TOO_DEEP;
        if (len >= CGROUP_PATH_MAX)
                return CGROUP_WALK_SKIP_TOO_LONG;
        if (!cgroup_path_is_valid(w->path)) /* a directory's name: only a control character */
                return CGROUP_WALK_SKIP_CONTROL_CHAR;
        return -1;
}

/* The groups below fd (taken), whose path is w->path[0..len) at depth components. At the depth
 * limit only to tell skipped of the children. */
static int walk_below(Walk *w, int fd, size_t len, unsigned depth) {
        _cleanup_closedir_ DIR *d = fdopendir(fd);
        struct dirent *de;

        if (!d) {
                (void) close(fd);
                return 0;
        }
        while ((de = readdir(d))) {
                size_t n = strlen(de->d_name), sep = len > 0;
                int sub, why, r;

                if (streq(de->d_name, ".") || streq(de->d_name, "..") || !entry_is_dir(d, de))
                        continue;
                if (sep)
                        w->path[len] = '/';
                memcpy(w->path + len + sep, de->d_name, n + 1);
                why = walk_skip_reason(w, depth + 1, len + sep + n);
                if (why >= 0) {
                        r = w->skipped ? w->skipped(w->path, depth + 1, (CgroupWalkSkip) why,
                                                    w->userdata)
                                       : 0;
                        w->path[len] = '\0';
                        if (r < 0)
                                return r;
                        continue;
                }
                sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (sub < 0) { /* removed meanwhile, or not ours to read */
                        w->path[len] = '\0';
                        continue;
                }
                r = w->fn(w->path, depth + 1, sub, w->userdata);
                if (r > 0 && (depth + 1 < CGROUP_WALK_DEPTH_MAX || w->skipped))
                        r = walk_below(w, sub, len + sep + n, depth + 1);
                else
                        (void) close(sub);
                w->path[len] = '\0';
                if (r < 0)
                        return r;
        }
        return 0;
}

int cgroup_walk_at(const char *root, CgroupWalkFn fn, CgroupWalkSkipFn skipped, void *userdata) {
        _cleanup_free_ Walk *w = NULL;
        int fd;

        if (!root || !fn)
                return -EINVAL;
        if (!*root)
                return -EOPNOTSUPP;
        w = calloc(1, sizeof *w);
        if (!w)
                return -ENOMEM;
        *w = (Walk){ .fn = fn, .skipped = skipped, .userdata = userdata };
        fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        return walk_below(w, fd, 0, 0);
}

int cgroup_walk(const CgroupLayout *l, CgroupWalkFn fn, CgroupWalkSkipFn skipped, void *userdata) {
        return cgroup_walk_at(cgroup_walk_root(l), fn, skipped, userdata);
}
