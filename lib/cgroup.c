/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libcgroup.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
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
/* cgroup control files we read (cpu.stat, cpuset.cpus, cgroup.procs of a mirror) */
#define CONTROL_FILE_SIZE_MAX (1024u * 1024)

static void lc_cgroup_freep(struct cgroup **cg) {
        if (*cg)
                cgroup_free(cg);
}
#define _cleanup_lc_cgroup_ _cleanup_(lc_cgroup_freep)

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
static int lc_error(int ecg, const char *what, const char *group) {
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

static int check_group(const char *path, bool allow_root) {
        if (!cgroup_path_is_valid(path) || (!allow_root && !*path))
                return -EINVAL;
        return 0;
}

/* base/group/file, any of group and file may be "" or NULL. -EOPNOTSUPP if base is "". */
static int build_path(char **ret, const char *base, const char *group, const char *file) {
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
static int read_file(const char *path, size_t max, char **ret) {
        return read_text_at(AT_FDCWD, path, max, ret, NULL);
}

/* One write() of text to an existing file: cgroupfs takes one value per write. */
static int write_file(const char *path, const char *text) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
        size_t n = strlen(text);
        ssize_t k;

        if (fd < 0)
                return negative_errno();
        k = write(fd, text, n);
        if (k < 0)
                return negative_errno();
        return (size_t) k == n ? 0 : -EIO;
}

/* A decimal number alone on its line, as cgroupfs prints one. */
static int parse_u64(const char *s, const char *end, uint64_t *ret) {
        return parse_u64_span(s, (size_t) (end - s), ret);
}

static int read_u64_at(const char *base, const char *group, const char *file, uint64_t *ret) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        size_t n;
        int r;

        r = build_path(&path, base, group, file);
        if (r < 0)
                return r;
        r = read_file(path, CONTROL_FILE_SIZE_MAX, &text);
        if (r < 0)
                return r;
        n = strlen(text);
        if (n > 0 && text[n - 1] == '\n')
                n--;
        return parse_u64(text, text + n, ret);
}

/* 1 if base/group is a directory, 0 if it does not exist, else -errno. */
static int group_exists(const char *base, const char *group) {
        _cleanup_free_ char *path = NULL;
        struct stat st;
        int r;

        if (!*base)
                return 0;
        r = build_path(&path, base, group, NULL);
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
        r = read_file(mi_path, MOUNTINFO_SIZE_MAX, &mi);
        if (r < 0)
                return r;
        /* First pass: where the cgroup2 mount is, to read which controllers it has. */
        r = cgroup_layout_parse(mi, NULL, root, &l);
        if (r < 0)
                return r;
        if (l.unified_path[0]) {
                r = build_path(&ctl_path, l.unified_path, NULL, "cgroup.controllers");
                if (r < 0)
                        return r;
                r = read_file(ctl_path, CONTROL_FILE_SIZE_MAX, &ctl);
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
                return lc_error(r, "mount point of", controller);
        r = cgroup_get_controller_version(controller, &v);
        if (r != 0)
                return lc_error(r, "version of", controller);
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
                return lc_error(r, "init", "");
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

typedef struct Hierarchy {
        const char *controller;
        const char *base;
} Hierarchy;

#define N_LC_HIERARCHIES 4
/* ... and the hybrid mirror */
#define N_BASES (N_LC_HIERARCHIES + 1)

/*
 * The hierarchies libcgroup handles for us, cpuset first: v1 writes a moved task to each in turn
 * and stops at the first refusal, and the cpuset is the one that refuses (empty cpus or mems).
 * unique: one entry per mount, for deleting and moving (cpu and cpuacct may be co-mounted, and
 * on v2 all are the same directory).
 */
static size_t lc_hierarchies(const CgroupLayout *l, bool unique,
                             Hierarchy out[static N_LC_HIERARCHIES]) {
        const Hierarchy all[N_LC_HIERARCHIES] = {
                { "cpuset", l->cpuset_path },
                { "cpu", l->cpu_path },
                { "cpuacct", l->cpuacct_path },
                { "memory", l->memory_path },
        };
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(all); i++) {
                bool dup = false;

                if (!all[i].base[0])
                        continue;
                for (size_t j = 0; unique && j < n; j++)
                        dup = dup || streq(out[j].base, all[i].base);
                if (!dup)
                        out[n++] = all[i];
        }
        return n;
}

/* The cgroup2 directories libcgroup cannot make, as it only knows the cgroup2 mount through
 * controllers: the hybrid mirror, or every group of a v2 mount offering none of cpu, cpuset and
 * memory. */
static bool unified_by_hand(const CgroupLayout *l) {
        return l->mode == CGROUP_MODE_HYBRID || (l->mode == CGROUP_MODE_V2 && !l->cpu_path[0] &&
                                                 !l->cpuset_path[0] && !l->memory_path[0]);
}

static int lc_new(const char *group, const Hierarchy *h, size_t n, struct cgroup **ret) {
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
        int r = build_path(&path, base, group, file);

        if (r < 0)
                return r;
        if (access(path, W_OK) < 0)
                return negative_errno();
        return -EIO;
}

/* Writes n control values of one controller of group through libcgroup, in order. */
static int lc_write(const char *base, const char *controller, const char *group, size_t n,
                    const char *const names[], const char *const values[]) {
        _cleanup_lc_cgroup_ struct cgroup *cg = NULL;
        struct cgroup_controller *c;
        int r;

        r = lc_new(group, &(Hierarchy){ controller, base }, 1, &cg);
        if (r < 0)
                return r;
        c = cgroup_get_controller(cg, controller);
        for (size_t i = 0; i < n; i++) {
                r = cgroup_add_value_string(c, names[i], values[i]);
                if (r != 0)
                        return lc_error(r, "add value to", group);
        }
        r = cgroup_modify_cgroup(cg);
        if (r == ECGROUPVALUENOTEXIST)
                for (size_t i = 0; i < n; i++) {
                        int e = explain_write_failure(base, group, names[i]);

                        if (e != -EIO)
                                return e;
                }
        return lc_error(r, "modify", group);
}

/* ---- weight and cpuset */

static bool weight_is_v2(const CgroupLayout *l) {
        return l->mode == CGROUP_MODE_V2;
}

int cgroup_set_cpu_weight_native(const CgroupLayout *l, const char *path, uint64_t native) {
        bool v2 = weight_is_v2(l);
        const char *name = v2 ? "cpu.weight" : "cpu.shares";
        char value[32];
        int r;

        r = check_group(path, true);
        if (r < 0)
                return r;
        if (!l->cpu_path[0])
                return -EOPNOTSUPP;
        if (v2 ? native < CGROUP_WEIGHT_MIN || native > CGROUP_WEIGHT_MAX
               : native < CGROUP_SHARES_MIN || native > CGROUP_SHARES_MAX)
                return -ERANGE;
        (void) snprintf(value, sizeof value, "%" PRIu64, native);
        return lc_write(l->cpu_path, "cpu", path, 1, &name, (const char *const[]){ value });
}

int cgroup_set_cpu_weight(const CgroupLayout *l, const char *path, uint64_t weight) {
        if (weight < CGROUP_WEIGHT_MIN || weight > CGROUP_WEIGHT_MAX)
                return -ERANGE;
        if (!weight_is_v2(l))
                weight = cgroup_weight_to_shares(weight);
        return cgroup_set_cpu_weight_native(l, path, weight);
}

int cgroup_get_cpu_weight_native(const CgroupLayout *l, const char *path, uint64_t *ret_native) {
        int r = check_group(path, true);

        if (r < 0)
                return r;
        if (!ret_native)
                return -EINVAL;
        if (!l->cpu_path[0])
                return -EOPNOTSUPP;
        return read_u64_at(l->cpu_path, path, weight_is_v2(l) ? "cpu.weight" : "cpu.shares",
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

int cgroup_set_cpuset(const CgroupLayout *l, const char *path, const CpuMask *cpus,
                      const CpuMask *mems) {
        static const char *const names[] = { "cpuset.cpus", "cpuset.mems" };
        _cleanup_free_ char *c = NULL, *m = NULL;
        int r;

        r = check_group(path, true);
        if (r < 0)
                return r;
        if (!cpus || cpumask_is_empty(cpus) || (mems && cpumask_is_empty(mems)))
                return -EINVAL;
        if (!l->cpuset_path[0])
                return -EOPNOTSUPP;
        r = cpumask_format(cpus, &c);
        if (r >= 0 && mems)
                r = cpumask_format(mems, &m);
        if (r < 0)
                return r;
        return lc_write(l->cpuset_path, "cpuset", path, mems ? 2 : 1, names,
                        (const char *const[]){ c, m });
}

/* ---- memory */

static bool memory_is_v2(const CgroupLayout *l) {
        return l->mode == CGROUP_MODE_V2;
}

/* 1 if base/group/file exists, 0 if not, else -errno: for control files kernels may lack. */
static int file_exists(const char *base, const char *group, const char *file) {
        _cleanup_free_ char *path = NULL;
        int r = build_path(&path, base, group, file);

        if (r < 0)
                return r;
        if (access(path, F_OK) < 0)
                return errno == ENOENT ? 0 : negative_errno();
        return 1;
}

int cgroup_set_memory_max(const CgroupLayout *l, const char *path, uint64_t bytes) {
        bool v2 = memory_is_v2(l), raising;
        const char *limit = v2 ? "memory.max" : "memory.limit_in_bytes";
        const char *swap = v2 ? "memory.swap.max" : "memory.memsw.limit_in_bytes";
        char value[32];
        uint64_t cur;
        int r;

        r = check_group(path, true);
        if (r < 0)
                return r;
        if (bytes == 0)
                return -EINVAL;
        if (!l->memory_path[0])
                return -EOPNOTSUPP;
        (void) snprintf(value, sizeof value, "%" PRIu64, bytes);
        r = file_exists(l->memory_path, path, swap);
        if (r < 0)
                return r;
        if (r == 0) /* no swap accounting; or no group, which the write then reports */
                return lc_write(l->memory_path, "memory", path, 1, &limit,
                                (const char *const[]){ value });
        if (v2)
                return lc_write(l->memory_path, "memory", path, 2,
                                (const char *const[]){ limit, swap },
                                (const char *const[]){ value, "0" });
        /* v1 wants limit <= memsw limit at every step: raise memsw first, lower it last. */
        r = read_u64_at(l->memory_path, path, limit, &cur);
        if (r < 0)
                return r;
        raising = bytes > cur;
        return lc_write(l->memory_path, "memory", path, 2,
                        (const char *const[]){ raising ? swap : limit, raising ? limit : swap },
                        (const char *const[]){ value, value });
}

int cgroup_read_memory_peak(const CgroupLayout *l, const char *path, uint64_t *ret_bytes) {
        bool v2 = memory_is_v2(l);
        uint64_t v;
        int r = check_group(path, true);

        if (r < 0)
                return r;
        if (!ret_bytes)
                return -EINVAL;
        if (!l->memory_path[0])
                return -EOPNOTSUPP;
        r = read_u64_at(l->memory_path, path, v2 ? "memory.peak" : "memory.max_usage_in_bytes", &v);
        if (r == -ENOENT && v2) {
                /* memory.peak is Linux 5.19+, and not in the root group */
                int e = group_exists(l->memory_path, path);

                if (e != 0)
                        r = e < 0 ? e : -EOPNOTSUPP;
        }
        if (r < 0)
                return r;
        *ret_bytes = v;
        return 0;
}

/* ---- create and remove */

/* The parent of a non-root group: "" for a top-level one. */
static char *parent_of(const char *group) {
        const char *slash = strrchr(group, '/');

        return strndup(group, slash ? (size_t) (slash - group) : 0);
}

/* A new v1 cpuset group starts with empty cpus and mems, which refuse tasks: give it the
 * parent's, as cgroup.clone_children would. */
static int add_parent_cpuset(const CgroupLayout *l, const char *group, struct cgroup *cg) {
        static const char *const names[] = { "cpuset.cpus", "cpuset.mems" };
        struct cgroup_controller *c = cgroup_get_controller(cg, "cpuset");
        _cleanup_free_ char *parent = parent_of(group);

        if (!parent || !c)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                _cleanup_free_ char *path = NULL, *value = NULL;
                int r;

                r = build_path(&path, l->cpuset_path, parent, names[i]);
                if (r >= 0)
                        r = read_file(path, CONTROL_FILE_SIZE_MAX, &value);
                if (r < 0)
                        return r;
                value[strcspn(value, "\n")] = '\0';
                if (!*value)
                        continue;
                r = cgroup_add_value_string(c, names[i], value);
                if (r != 0)
                        return lc_error(r, "add value to", group);
        }
        return 0;
}

static int unified_mkdir(const CgroupLayout *l, const char *group) {
        _cleanup_free_ char *path = NULL;
        int r = build_path(&path, l->unified_path, group, NULL);

        if (r < 0)
                return r;
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
                return negative_errno();
        return 0;
}

/* Creates one group whose parent exists. */
static int create_one(const CgroupLayout *l, const char *group) {
        _cleanup_lc_cgroup_ struct cgroup *cg = NULL;
        Hierarchy h[N_LC_HIERARCHIES];
        size_t n = lc_hierarchies(l, /* unique= */ false, h);
        int r;

        if (n > 0) {
                r = lc_new(group, h, n, &cg);
                if (r < 0)
                        return r;
                if (l->mode != CGROUP_MODE_V2 && l->cpuset_path[0]) {
                        r = group_exists(l->cpuset_path, group);
                        if (r == 0)
                                r = add_parent_cpuset(l, group, cg);
                        if (r < 0)
                                return r;
                }
                r = cgroup_create_cgroup(cg, /* ignore_ownership= */ 0);
                if (r != 0)
                        return lc_error(r, "create", group);
        }
        if (unified_by_hand(l))
                return unified_mkdir(l, group);
        return 0;
}

int cgroup_create(const CgroupLayout *l, const char *path) {
        _cleanup_free_ char *p = NULL;
        int r = check_group(path, false);

        if (r < 0)
                return r;
        if (l->mode == CGROUP_MODE_NONE)
                return -EOPNOTSUPP;
        p = strdup(path);
        if (!p)
                return -ENOMEM;
        /* One level at a time, so each new parent gets its cpuset too. */
        for (char *s = p;;) {
                char *slash = strchr(s, '/');

                if (slash)
                        *slash = '\0';
                r = create_one(l, p);
                if (r < 0 || !slash)
                        return r;
                *slash = '/';
                s = slash + 1;
        }
}

/* 1 if base/group has a child group, 0 if not, -ENOENT if the group does not exist. */
static int has_children(const char *base, const char *group) {
        _cleanup_free_ char *path = NULL;
        struct dirent *de;
        DIR *d;
        int r = build_path(&path, base, group, NULL);

        if (r < 0)
                return r;
        d = opendir(path);
        if (!d)
                return negative_errno();
        r = 0;
        while (r == 0 && (de = readdir(d))) {
                struct stat st;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (de->d_type == DT_DIR)
                        r = 1;
                else if (de->d_type == DT_UNKNOWN &&
                         fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
                        r = S_ISDIR(st.st_mode);
        }
        closedir(d);
        return r;
}

/* The bases where the group lives, libcgroup's then the cgroup2 directory made by hand. */
static size_t group_bases(const CgroupLayout *l, Hierarchy out[static N_BASES]) {
        size_t n = lc_hierarchies(l, /* unique= */ true, out);

        if (unified_by_hand(l))
                out[n++] = (Hierarchy){ NULL, l->unified_path };
        return n;
}

/*
 * 1 if the cgroup2 group base/group may hold processes, 0 if not. v2 keeps them out of a domain
 * group below the root that enables controllers for its children ("no internal processes"), and
 * out of an invalid one; a threaded group or the root of a threaded subtree may have both. The
 * root of the mount is taken to: only the real root is exempt, so where the mount is the root of a
 * cgroup namespace that enables controllers, the move fails (-EBUSY).
 */
static int unified_may_hold(const char *base, const char *group) {
        _cleanup_free_ char *type_path = NULL, *type = NULL, *ctl_path = NULL, *ctl = NULL;
        int r;

        if (!*group)
                return 1;
        r = build_path(&type_path, base, group, "cgroup.type");
        if (r >= 0)
                r = read_file(type_path, CONTROL_FILE_SIZE_MAX, &type);
        if (r < 0 && r != -ENOENT) /* ENOENT: before Linux 4.14 every group is a domain */
                return r;
        if (type) {
                type[strcspn(type, "\n")] = '\0';
                if (streq(type, "threaded") || streq(type, "domain threaded"))
                        return 1;
                if (streq(type, "domain invalid"))
                        return 0;
        }
        r = build_path(&ctl_path, base, group, "cgroup.subtree_control");
        if (r >= 0)
                r = read_file(ctl_path, CONTROL_FILE_SIZE_MAX, &ctl);
        if (r < 0)
                return r;
        return ctl[strspn(ctl, " \n")] == '\0';
}

/* The nearest proper ancestor of a non-root cgroup2 group that may hold processes: the root at
 * worst. */
static int unified_holder(const char *base, const char *group, char **ret) {
        _cleanup_free_ char *g = parent_of(group);

        if (!g)
                return -ENOMEM;
        for (;;) {
                int r = unified_may_hold(base, g);
                char *slash;

                if (r < 0)
                        return r;
                if (r > 0)
                        break;
                slash = strrchr(g, '/'); /* up one level; "" (the root) always may */
                *(slash ? slash : g) = '\0';
        }
        *ret = TAKE_PTR(g);
        return 0;
}

/* Moves the processes in the cgroup2 directory dir to the one at dst. */
static int unified_move_procs(const char *dir, const char *dst) {
        _cleanup_free_ char *procs = NULL;
        _cleanup_free_ pid_t *pids = NULL;
        _cleanup_close_ int fd = -EBADF;
        size_t n = 0;
        int r;

        r = build_path(&procs, dst, NULL, "cgroup.procs");
        if (r < 0)
                return r;
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        r = proc_task_ids_read_at(fd, "cgroup.procs", &pids, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                char buf[16];

                (void) snprintf(buf, sizeof buf, "%d", (int) pids[i]);
                r = write_file(procs, buf);
                if (r < 0 && r != -ESRCH) /* ESRCH: it exited meanwhile */
                        return r;
        }
        return 0;
}

/* Removes a cgroup2 group, its processes moved to the nearest ancestor that may hold them. */
static int unified_remove(const CgroupLayout *l, const char *group) {
        _cleanup_free_ char *dir = NULL, *dst = NULL, *holder = NULL;
        int r;

        r = build_path(&dir, l->unified_path, group, NULL);
        if (r >= 0)
                r = unified_holder(l->unified_path, group, &holder);
        if (r >= 0)
                r = build_path(&dst, l->unified_path, holder, NULL);
        if (r < 0)
                return r;
        /* A process forking meanwhile lands in the group again: try a few times. */
        for (int i = 0; i < 3; i++) {
                r = unified_move_procs(dir, dst);
                if (r < 0)
                        return r;
                if (rmdir(dir) >= 0)
                        return 0;
                if (errno != EBUSY)
                        return negative_errno();
        }
        return -EBUSY;
}

int cgroup_remove(const CgroupLayout *l, const char *path) {
        _cleanup_lc_cgroup_ struct cgroup *cg = NULL;
        Hierarchy b[N_BASES], h[N_LC_HIERARCHIES];
        size_t nb, nh = 0;
        bool found = false;
        int r = check_group(path, false);

        if (r < 0)
                return r;
        nb = group_bases(l, b);
        if (nb == 0)
                return -EOPNOTSUPP;
        /* libcgroup deletes hierarchy by hierarchy and goes on after a failure: refuse up front
         * what would fail, rather than leave the group half removed. */
        for (size_t i = 0; i < nb; i++) {
                r = has_children(b[i].base, path);
                if (r == -ENOENT)
                        continue;
                if (r < 0)
                        return r;
                if (r > 0)
                        return -EBUSY;
                found = true;
                if (b[i].controller)
                        h[nh++] = b[i];
        }
        if (!found)
                return -ENOENT;
        /* libcgroup moves the tasks to the parent, then removes. On v2 the parent refuses them
         * if it enables controllers for its children, as libcgroup's own groups do: there
         * unified_remove() does both, to the nearest ancestor that takes them. */
        if (nh > 0 && l->mode != CGROUP_MODE_V2) {
                r = lc_new(path, h, nh, &cg);
                if (r < 0)
                        return r;
                r = cgroup_delete_cgroup(cg, /* ignore_migration= */ 0);
                if (r != 0)
                        return lc_error(r, "delete", path);
        }
        if (l->mode == CGROUP_MODE_V2 || unified_by_hand(l)) {
                r = unified_remove(l, path);
                if (r < 0 && r != -ENOENT)
                        return r;
        }
        return 0;
}

/* ---- moving tasks */

int cgroup_attach_tid(const CgroupLayout *l, const char *path, pid_t tid) {
        _cleanup_lc_cgroup_ struct cgroup *cg = NULL;
        Hierarchy all[N_LC_HIERARCHIES], h[N_LC_HIERARCHIES];
        size_t na, n = 0;
        int r = check_group(path, true);

        if (r < 0)
                return r;
        if (tid <= 0)
                return -EINVAL;
        na = lc_hierarchies(l, /* unique= */ true, all);
        /* Memory is charged to the mm's owner: a lone thread there would mean nothing. (A memory
         * controller co-mounted with cpu moves along, as the kernel has it.) */
        for (size_t i = 0; i < na; i++)
                if (!streq(all[i].controller, "memory"))
                        h[n++] = all[i];
        if (l->mode == CGROUP_MODE_V2 || n == 0)
                return -EOPNOTSUPP;
        r = lc_new(path, h, n, &cg);
        if (r < 0)
                return r;
        r = cgroup_attach_task_pid(cg, tid);
        return lc_error(r, "attach to", path);
}

int cgroup_attach_pid(const CgroupLayout *l, const char *path, pid_t pid) {
        Hierarchy b[N_BASES];
        size_t n;
        char text[16];
        int r = check_group(path, true);

        if (r < 0)
                return r;
        if (pid <= 0)
                return -EINVAL;
        if (l->mode == CGROUP_MODE_V2)
                b[0] = (Hierarchy){ NULL, l->unified_path }, n = 1;
        else
                n = group_bases(l, b);
        if (n == 0)
                return -EOPNOTSUPP;
        (void) snprintf(text, sizeof text, "%d", (int) pid);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *procs = NULL;

                /* A hybrid group made by someone else may lack its mirror: no pressure then. */
                if (!b[i].controller && l->mode == CGROUP_MODE_HYBRID) {
                        r = group_exists(b[i].base, path);
                        if (r < 0)
                                return r;
                        if (r == 0)
                                continue;
                }
                r = build_path(&procs, b[i].base, path, "cgroup.procs");
                if (r >= 0)
                        r = write_file(procs, text);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- listing and killing processes */

typedef struct PidList {
        pid_t *ids;
        size_t n, cap;
} PidList;

static void pid_list_done(PidList *p) {
        p->ids = mfree(p->ids);
        p->n = p->cap = 0;
}

static int pid_list_append(PidList *p, const pid_t *ids, size_t n) {
        if (n == 0)
                return 0;
        if (greedy_realloc((void **) &p->ids, &p->cap, p->n + n, sizeof *p->ids, 64) < 0)
                return -ENOMEM;
        memcpy(p->ids + p->n, ids, n * sizeof *ids);
        p->n += n;
        return 0;
}

static int cmp_pid(const void *a, const void *b) {
        pid_t x = *(const pid_t *) a, y = *(const pid_t *) b;

        return x < y ? -1 : x > y;
}

/* Several lists (groups, hierarchies) into one sorted set. */
static void pid_list_sort_unique(PidList *p) {
        size_t k = 0;

        if (p->n == 0)
                return;
        qsort(p->ids, p->n, sizeof *p->ids, cmp_pid);
        for (size_t i = 1; i < p->n; i++)
                if (p->ids[i] != p->ids[k])
                        p->ids[++k] = p->ids[i];
        p->n = k + 1;
}

static bool pid_list_has(const PidList *p, pid_t pid) {
        return p->n > 0 && bsearch(&pid, p->ids, p->n, sizeof *p->ids, cmp_pid);
}

/* Appends the processes of the group open at dfd and, if recursive, of its descendants. A
 * descendant removed while we look is skipped; the group's own removal is -ENOENT or -ENODEV. */
static int collect_at(int dfd, bool recursive, PidList *out) {
        _cleanup_free_ pid_t *ids = NULL;
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        size_t n = 0;
        int fd, r;

        r = proc_task_ids_read_at(dfd, "cgroup.procs", &ids, &n);
        if (r >= 0)
                r = pid_list_append(out, ids, n);
        if (r < 0 || !recursive)
                return r;
        fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        d = fdopendir(fd);
        if (!d) {
                r = negative_errno();
                (void) close(fd);
                return r;
        }
        while ((de = readdir(d))) {
                _cleanup_close_ int cfd = -EBADF;

                if (streq(de->d_name, ".") || streq(de->d_name, "..") ||
                    (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
                        continue;
                cfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (cfd < 0) {
                        if (errno == ENOENT || errno == ENOTDIR) /* gone, or a file */
                                continue;
                        return negative_errno();
                }
                r = collect_at(cfd, true, out);
                if (r < 0 && r != -ENOENT && r != -ENODEV)
                        return r;
        }
        return 0;
}

/* Appends the processes of base/group (and descendants): 1, or 0 if the group is not there. */
static int collect(const char *base, const char *group, bool recursive, PidList *out) {
        _cleanup_free_ char *dir = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r = build_path(&dir, base, group, NULL);

        if (r < 0)
                return r;
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : negative_errno();
        r = collect_at(fd, recursive, out);
        if (r == -ENOENT || r == -ENODEV)
                return 0;
        return r < 0 ? r : 1;
}

/* Where cgroup_list_procs() reads: one hierarchy every group of ours is in. */
static const char *procs_base(const CgroupLayout *l) {
        if (l->mode == CGROUP_MODE_V2)
                return l->unified_path;
        return l->cpu_path[0] ? l->cpu_path : l->cpuset_path[0] ? l->cpuset_path : l->memory_path;
}

int cgroup_list_procs(const CgroupLayout *l, const char *path, bool recursive, pid_t **ret,
                      size_t *ret_n) {
        _cleanup_(pid_list_done) PidList p = {};
        const char *base = procs_base(l);
        int r = check_group(path, true);

        if (r < 0)
                return r;
        if (!ret || !ret_n)
                return -EINVAL;
        if (!*base)
                return -EOPNOTSUPP;
        r = collect(base, path, recursive, &p);
        if (r < 0)
                return r;
        if (r == 0)
                return -ENOENT;
        pid_list_sort_unique(&p);
        *ret_n = p.n;
        *ret = TAKE_PTR(p.ids); /* NULL if nothing was appended */
        return 0;
}

/* The processes of the group and its descendants in every hierarchy we use, sorted: 1, or 0 if
 * the group exists in none. */
static int collect_everywhere(const CgroupLayout *l, const char *group, PidList *out) {
        Hierarchy b[N_BASES];
        size_t n = group_bases(l, b);
        bool found = false;

        if (n == 0)
                return -EOPNOTSUPP;
        for (size_t i = 0; i < n; i++) {
                int r = collect(b[i].base, group, /* recursive= */ true, out);

                if (r < 0)
                        return r;
                found = found || r > 0;
        }
        pid_list_sort_unique(out);
        return found;
}

/* cgroup.kill of the group's cgroup2 directory, where there is one: the kernel kills the whole
 * subtree and fails forks racing with it. */
static int unified_kill(const CgroupLayout *l, const char *group) {
        _cleanup_free_ char *path = NULL;
        int r;

        if (l->mode != CGROUP_MODE_V2 && l->mode != CGROUP_MODE_HYBRID)
                return 0;
        r = build_path(&path, l->unified_path, group, "cgroup.kill");
        if (r >= 0)
                r = write_file(path, "1");
        /* ENOENT: before Linux 5.14, or no mirror; EOPNOTSUPP: a threaded group */
        return r == -ENOENT || r == -EOPNOTSUPP ? 0 : r;
}

#define KILL_BATCH 64

/*
 * SIGKILLs those of ids[0..n) (n <= KILL_BATCH) that are still in the group. Each is opened as a
 * pidfd before the group is read again, so a PID that was reused meanwhile is either not listed
 * any more or, if listed again, belongs to another process than the pidfd's, which then gets
 * ESRCH: nothing outside the group is hit. Where pidfd_open() fails otherwise (ENOSYS before
 * Linux 5.3), kill() after the second read: a PID reused in between could be hit.
 */
static int kill_batch(const CgroupLayout *l, const char *group, const pid_t *ids, size_t n,
                      size_t *signalled) {
        _cleanup_(pid_list_done) PidList again = {};
        int fds[KILL_BATCH], r;

        for (size_t i = 0; i < n; i++) {
                fds[i] = pidfd_open(ids[i], 0);
                if (fds[i] < 0)
                        fds[i] = negative_errno();
        }
        r = collect_everywhere(l, group, &again);
        for (size_t i = 0; i < n; i++) {
                int k = 0;

                if (r >= 0 && fds[i] != -ESRCH && pid_list_has(&again, ids[i])) {
                        k = fds[i] >= 0 ? pidfd_send_signal(fds[i], SIGKILL, NULL, 0)
                                        : kill(ids[i], SIGKILL);
                        *signalled += k >= 0;
                }
                if (k < 0 && errno != ESRCH && r >= 0)
                        r = negative_errno();
                if (fds[i] >= 0)
                        (void) close(fds[i]);
        }
        return r < 0 ? r : 0;
}

/* One round: 1 if the group is empty (or gone), 0 after signalling what is there. */
static int kill_round(const CgroupLayout *l, const char *group, bool first, size_t *signalled) {
        _cleanup_(pid_list_done) PidList p = {};
        int r = collect_everywhere(l, group, &p);

        if (r < 0)
                return r;
        if (r == 0)
                return first ? -ENOENT : 1; /* gone: removed by someone else meanwhile */
        if (p.n == 0)
                return 1;
        if (pid_list_has(&p, getpid()))
                return -EDEADLK;
        r = unified_kill(l, group);
        for (size_t i = 0; r >= 0 && i < p.n; i += KILL_BATCH)
                r = kill_batch(l, group, p.ids + i, MIN(p.n - i, (size_t) KILL_BATCH), signalled);
        return r < 0 ? r : 0;
}

int cgroup_kill_all(const CgroupLayout *l, const char *path, uint64_t timeout_usec) {
        uint64_t start = now_usec(), pause_usec = 1000;
        size_t signalled = 0;
        int r = check_group(path, false);

        if (r < 0)
                return r;
        for (unsigned round = 0;; round++) {
                uint64_t elapsed;

                r = kill_round(l, path, round == 0, &signalled);
                if (r != 0) {
                        log_debug("kill %s: %zu SIGKILLs in %u rounds: %s", path, signalled, round,
                                  r < 0 ? strerror(-r) : "empty");
                        return r < 0 ? r : 0;
                }
                elapsed = now_usec() - start;
                if (elapsed >= timeout_usec) {
                        log_debug("kill %s: %zu SIGKILLs in %u rounds, still busy", path, signalled,
                                  round + 1);
                        return -EBUSY;
                }
                /* killed processes take a moment to exit: do not spin */
                sleep_usec(MIN(pause_usec, timeout_usec - elapsed));
                pause_usec = MIN(pause_usec * 2, 16000);
        }
}

/* ---- reading usage and pressure */

/* The usage_usec line of a v2 cpu.stat. */
static int parse_cpu_stat_usage(const char *text, uint64_t *ret) {
        static const char key[] = "usage_usec ";
        bool found = false;
        uint64_t v = 0;

        for (const char *p = text; *p;) {
                const char *end = strchrnul(p, '\n');

                if ((size_t) (end - p) >= strlen(key) && memcmp(p, key, strlen(key)) == 0) {
                        int r = parse_u64(p + strlen(key), end, &v);

                        if (r < 0 || found)
                                return r < 0 ? r : -EINVAL;
                        found = true;
                }
                p = *end ? end + 1 : end;
        }
        if (!found)
                return -EINVAL;
        *ret = v;
        return 0;
}

int cgroup_read_usage(const CgroupLayout *l, const char *path, uint64_t *ret_usage_usec) {
        _cleanup_free_ char *file = NULL, *text = NULL;
        uint64_t v;
        int r = check_group(path, true);

        if (r < 0)
                return r;
        if (!ret_usage_usec)
                return -EINVAL;
        if (l->mode != CGROUP_MODE_V2) {
                if (!l->cpuacct_path[0])
                        return -EOPNOTSUPP;
                r = read_u64_at(l->cpuacct_path, path, "cpuacct.usage", &v);
                if (r < 0)
                        return r;
                *ret_usage_usec = v / 1000;
                return 0;
        }
        r = build_path(&file, l->unified_path, path, "cpu.stat");
        if (r >= 0)
                r = read_file(file, CONTROL_FILE_SIZE_MAX, &text);
        if (r >= 0)
                r = parse_cpu_stat_usage(text, &v);
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
        int r = check_group(path, true);

        if (r < 0)
                return r;
        if (!resource || !ret ||
            (!streq(resource, "cpu") && !streq(resource, "io") && !streq(resource, "memory")))
                return -EINVAL;
        if (l->mode != CGROUP_MODE_V2 && l->mode != CGROUP_MODE_HYBRID)
                return -EOPNOTSUPP;
        r = build_path(&dir, l->unified_path, path, NULL);
        if (r < 0)
                return r;
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        (void) snprintf(name, sizeof name, "%s.pressure", resource);
        return psi_read_at(fd, name, ret);
}
