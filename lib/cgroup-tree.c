/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cgroup-tree.h"

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
#include <unistd.h>

#include "cgroup-internal.h"
#include "clock.h"
#include "log.h"
#include "macro.h"
#include "proc.h"

/* ---- hierarchies and writes */

#define N_LC_HIERARCHIES 4
/* ... and the hybrid mirror */
#define N_BASES (N_LC_HIERARCHIES + 1)

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

/* 1 if base/group/file exists, 0 if not, else -errno: for control files kernels may lack. */
static int file_exists(const char *base, const char *group, const char *file) {
        _cleanup_free_ char *path = NULL;
        int r = cg_build_path(&path, base, group, file);

        if (r < 0)
                return r;
        if (access(path, F_OK) < 0)
                return errno == ENOENT ? 0 : negative_errno();
        return 1;
}

/* ---- confining: cpuset and memory limit */

int cgroup_set_cpuset(const CgroupLayout *l, const char *path, const CpuMask *cpus,
                      const CpuMask *mems) {
        static const char *const names[] = { "cpuset.cpus", "cpuset.mems" };
        _cleanup_free_ char *c = NULL, *m = NULL;
        int r;

        r = cg_check_group(path, true);
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
        return cg_lc_write(l->cpuset_path, "cpuset", path, mems ? 2 : 1, names,
                           (const char *const[]){ c, m });
}

int cgroup_set_memory_max(const CgroupLayout *l, const char *path, uint64_t bytes) {
        bool v2 = cg_memory_is_v2(l), raising;
        const char *limit = v2 ? "memory.max" : "memory.limit_in_bytes";
        const char *swap = v2 ? "memory.swap.max" : "memory.memsw.limit_in_bytes";
        char value[32];
        uint64_t cur;
        int r;

        r = cg_check_group(path, true);
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
                return cg_lc_write(l->memory_path, "memory", path, 1, &limit,
                                   (const char *const[]){ value });
        if (v2)
                return cg_lc_write(l->memory_path, "memory", path, 2,
                                   (const char *const[]){ limit, swap },
                                   (const char *const[]){ value, "0" });
        /* v1 wants limit <= memsw limit at every step: raise memsw first, lower it last. */
        r = cg_read_u64_at(l->memory_path, path, limit, &cur);
        if (r < 0)
                return r;
        raising = bytes > cur;
        return cg_lc_write(l->memory_path, "memory", path, 2,
                           (const char *const[]){ raising ? swap : limit, raising ? limit : swap },
                           (const char *const[]){ value, value });
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

                r = cg_build_path(&path, l->cpuset_path, parent, names[i]);
                if (r >= 0)
                        r = cg_read_file(path, CONTROL_FILE_SIZE_MAX, &value);
                if (r < 0)
                        return r;
                value[strcspn(value, "\n")] = '\0';
                if (!*value)
                        continue;
                r = cgroup_add_value_string(c, names[i], value);
                if (r != 0)
                        return cg_lc_error(r, "add value to", group);
        }
        return 0;
}

static int unified_mkdir(const CgroupLayout *l, const char *group) {
        _cleanup_free_ char *path = NULL;
        int r = cg_build_path(&path, l->unified_path, group, NULL);

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
                r = cg_lc_new(group, h, n, &cg);
                if (r < 0)
                        return r;
                if (l->mode != CGROUP_MODE_V2 && l->cpuset_path[0]) {
                        r = cg_group_exists(l->cpuset_path, group);
                        if (r == 0)
                                r = add_parent_cpuset(l, group, cg);
                        if (r < 0)
                                return r;
                }
                r = cgroup_create_cgroup(cg, /* ignore_ownership= */ 0);
                if (r != 0)
                        return cg_lc_error(r, "create", group);
        }
        if (unified_by_hand(l))
                return unified_mkdir(l, group);
        return 0;
}

int cgroup_create(const CgroupLayout *l, const char *path) {
        _cleanup_free_ char *p = NULL;
        int r = cg_check_group(path, false);

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
        int r = cg_build_path(&path, base, group, NULL);

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
        r = cg_build_path(&type_path, base, group, "cgroup.type");
        if (r >= 0)
                r = cg_read_file(type_path, CONTROL_FILE_SIZE_MAX, &type);
        if (r < 0 && r != -ENOENT) /* ENOENT: before Linux 4.14 every group is a domain */
                return r;
        if (type) {
                type[strcspn(type, "\n")] = '\0';
                if (streq(type, "threaded") || streq(type, "domain threaded"))
                        return 1;
                if (streq(type, "domain invalid"))
                        return 0;
        }
        r = cg_build_path(&ctl_path, base, group, "cgroup.subtree_control");
        if (r >= 0)
                r = cg_read_file(ctl_path, CONTROL_FILE_SIZE_MAX, &ctl);
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

        r = cg_build_path(&procs, dst, NULL, "cgroup.procs");
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

        r = cg_build_path(&dir, l->unified_path, group, NULL);
        if (r >= 0)
                r = unified_holder(l->unified_path, group, &holder);
        if (r >= 0)
                r = cg_build_path(&dst, l->unified_path, holder, NULL);
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
        int r = cg_check_group(path, false);

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
                r = cg_lc_new(path, h, nh, &cg);
                if (r < 0)
                        return r;
                r = cgroup_delete_cgroup(cg, /* ignore_migration= */ 0);
                if (r != 0)
                        return cg_lc_error(r, "delete", path);
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
        int r = cg_check_group(path, true);

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
        r = cg_lc_new(path, h, n, &cg);
        if (r < 0)
                return r;
        r = cgroup_attach_task_pid(cg, tid);
        return cg_lc_error(r, "attach to", path);
}

int cgroup_attach_pid(const CgroupLayout *l, const char *path, pid_t pid) {
        Hierarchy b[N_BASES];
        size_t n;
        char text[16];
        int r = cg_check_group(path, true);

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
                        r = cg_group_exists(b[i].base, path);
                        if (r < 0)
                                return r;
                        if (r == 0)
                                continue;
                }
                r = cg_build_path(&procs, b[i].base, path, "cgroup.procs");
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
        int r = cg_build_path(&dir, base, group, NULL);

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
        int r = cg_check_group(path, true);

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
        r = cg_build_path(&path, l->unified_path, group, "cgroup.kill");
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
        int r = cg_check_group(path, false);

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
