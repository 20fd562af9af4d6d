/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cgroup-levers.h"
#include "fileio.h"
#include "load.h"
#include "macro.h"
#include "topology.h"

#define KILL_TIMEOUT_USEC (5 * 1000000u)
#define RUN_PREFIX "loadgen-"

struct Sandbox {
        bool cgroups;
        CgroupLayout layout;
        char *group[_SANDBOX_PART_MAX];
        char *dir;
        CpuMask *cpus;
        bool made_group, made_dir;
        char *extra[SANDBOX_MAX_GROUPS]; /* sandbox_add_group()'s */
        size_t n_extra;
        SandboxStatic statics; /* what was set on the groups, for the report */
        SandboxStatic want; /* what to set on a scenario's groups as they are made */
        int reserve_r; /* sandbox_host_reserve()'s answer */
        uint64_t reserve_quota_usec, reserve_period_usec;
};

static const char *const part_names[_SANDBOX_PART_MAX] = {
        [SANDBOX_RUN] = NULL,
        [SANDBOX_JOB] = "job",
        [SANDBOX_LOAD] = "load",
};

const char *sandbox_part_name(SandboxPart part) {
        return part > SANDBOX_RUN && part < _SANDBOX_PART_MAX ? part_names[part] : NULL;
}

bool sandbox_static_is_set(const SandboxStatic *s) {
        for (int p = 0; s && p < _SANDBOX_PART_MAX; p++)
                if (s->part[p].weight || s->part[p].idle)
                        return true;
        return s && s->n_named > 0;
}

bool sandbox_static_has_idle(const SandboxStatic *s) {
        for (int p = 0; s && p < _SANDBOX_PART_MAX; p++)
                if (s->part[p].idle)
                        return true;
        for (size_t i = 0; s && i < s->n_named; i++)
                if (s->named[i].set.idle)
                        return true;
        return false;
}

const SandboxSetting *sandbox_static_named(const SandboxStatic *s, const char *name) {
        for (size_t i = 0; s && i < s->n_named; i++)
                if (streq(s->named[i].name, name))
                        return &s->named[i].set;
        return NULL;
}

/* The hierarchy the sandbox's groups are listed from: every layout that has groups has one. */
static const char *list_base(const CgroupLayout *l) {
        if (l->cpu_path[0])
                return l->cpu_path;
        if (l->cpuset_path[0])
                return l->cpuset_path;
        return l->unified_path;
}

/* Kills and removes group and every group below it, deepest first. */
static int remove_group_tree(const CgroupLayout *l, const char *group) {
        _cleanup_free_ char *dir = NULL;
        DIR *d;
        int r;

        r = cgroup_kill_all(l, group, KILL_TIMEOUT_USEC);
        if (r < 0 && r != -ENOENT)
                return r;
        if (asprintf(&dir, "%s/%s", list_base(l), group) < 0)
                return -ENOMEM;
        d = opendir(dir);
        if (d) {
                struct dirent *de;

                while ((de = readdir(d))) {
                        _cleanup_free_ char *child = NULL;

                        if (de->d_type != DT_DIR || de->d_name[0] == '.')
                                continue;
                        if (asprintf(&child, "%s/%s", group, de->d_name) < 0) {
                                closedir(d);
                                return -ENOMEM;
                        }
                        r = remove_group_tree(l, child);
                        if (r < 0) {
                                closedir(d);
                                return r;
                        }
                }
                closedir(d);
        }
        r = cgroup_remove(l, group);
        return r == -ENOENT ? 0 : r;
}

/* "loadgen-PID" of a loadgen that is gone: PID is dead, or now some other program. */
static bool is_stale_run(const char *name) {
        _cleanup_free_ char *comm_path = NULL, *comm = NULL;
        unsigned long pid;
        char *end;
        int r;

        if (strncmp(name, RUN_PREFIX, strlen(RUN_PREFIX)) != 0)
                return false;
        name += strlen(RUN_PREFIX);
        errno = 0;
        pid = strtoul(name, &end, 10);
        if (errno != 0 || end == name || *end || pid == 0 || pid > INT32_MAX)
                return false;
        if ((pid_t) pid == getpid())
                return true; /* a dead run that had our PID: we have not made ours yet */
        if (asprintf(&comm_path, "/proc/%lu/comm", pid) < 0)
                return false;
        r = read_full_at(AT_FDCWD, comm_path, 64, &comm, NULL);
        if (r < 0)
                return r == -ENOENT || r == -ESRCH; /* gone; any other error: leave it alone */
        return !streq(comm, "loadgen\n");
}

/* Removes the groups and directories of runs whose loadgen died without cleaning up. */
static void reap_stale(const CgroupLayout *l, const char *dir) {
        const char *bases[2] = { dir, NULL };
        _cleanup_free_ char *slice = NULL;

        if (l && asprintf(&slice, "%s/" SANDBOX_SLICE, list_base(l)) >= 0)
                bases[1] = slice;
        for (size_t b = 0; b < ELEMENTSOF(bases); b++) {
                struct dirent *de;
                DIR *d;

                if (!bases[b] || !(d = opendir(bases[b])))
                        continue;
                while ((de = readdir(d))) {
                        _cleanup_free_ char *p = NULL;

                        if (!is_stale_run(de->d_name))
                                continue;
                        if (b == 0) {
                                if (asprintf(&p, "%s/%s", dir, de->d_name) >= 0)
                                        (void) load_remove_tree(p);
                        } else if (asprintf(&p, SANDBOX_SLICE "/%s", de->d_name) >= 0)
                                (void) remove_group_tree(l, p);
                }
                closedir(d);
        }
}

static int online_cpus(CpuMask **ret) {
        _cleanup_cpumask_ CpuMask *m = NULL;
        cpu_set_t *set;
        size_t size;

        m = cpumask_new(CPUMASK_MAX_CPUS);
        if (!m)
                return -ENOMEM;
        set = cpumask_cpu_set(m);
        size = cpumask_cpu_set_size(m);
        if (sched_getaffinity(0, size, set) < 0)
                return negative_errno();
        *ret = TAKE_PTR(m);
        return 0;
}

uint64_t sandbox_host_reserve_quota(unsigned ncpus, uint64_t period_usec) {
        uint64_t n = MAX(ncpus, 1u);

        if (period_usec > CGROUP_QUOTA_MAX_USEC / n)
                return CGROUP_QUOTA_MAX_USEC;
        return MAX(n * period_usec - period_usec / 2, CGROUP_QUOTA_MIN_USEC);
}

/* Caps the run's group, before any task is in it, so the rest of the machine keeps half a CPU
 * of all it has (not of --cpus: a run on fewer CPUs leaves the others whole, and halving a
 * one-CPU run would change what it measures). Over a short period: the run may use its whole
 * quota at the start of each period, and the host then waits for the rest of it (the default
 * 100 ms let a root-group sleeper wait 75-83 ms beside process_load; 20 ms, about 15). */
static int set_host_reserve(Sandbox *sb) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        uint64_t period = SANDBOX_RESERVE_PERIOD_USEC, quota;
        int r;

        quota = sandbox_host_reserve_quota(online > 0 ? (unsigned) online : 1u, period);
        r = cgroup_set_cpu_limit(&sb->layout, sb->group[SANDBOX_RUN], quota, period);
        if (r < 0)
                return r;
        sb->reserve_quota_usec = quota;
        sb->reserve_period_usec = period;
        return 0;
}

/* Part's static setting, if statics has one, before any task is in the group: the operator's
 * "set once and left". */
static int set_static(Sandbox *sb, int part, const SandboxStatic *statics) {
        const SandboxSetting *s = statics ? &statics->part[part] : NULL;
        int r;

        if (!s || (!s->weight && !s->idle))
                return 0;
        if (s->weight) {
                r = cgroup_set_cpu_weight(&sb->layout, sb->group[part], s->weight);
                if (r < 0)
                        return r;
        }
        if (s->idle) {
                r = cgroup_set_cpu_idle(&sb->layout, sb->group[part], /* idle= */ true);
                if (r < 0)
                        return r;
        }
        sb->statics.part[part] = *s;
        return 0;
}

static int make_groups(Sandbox *sb, const SandboxOptions *o) {
        int r;

        r = cgroup_layout_detect(&sb->layout);
        if (r < 0)
                return r;
        if (sb->layout.mode == CGROUP_MODE_NONE || !sb->layout.cpu_path[0])
                return -EOPNOTSUPP;
        if (o->mem_bytes && !sb->layout.memory_path[0])
                return -EOPNOTSUPP;
        reap_stale(&sb->layout, NULL);
        if (asprintf(&sb->group[SANDBOX_RUN], SANDBOX_SLICE "/" RUN_PREFIX "%d", (int) getpid()) <
            0)
                return -ENOMEM;
        for (int p = SANDBOX_RUN + 1; p < _SANDBOX_PART_MAX; p++)
                if (asprintf(&sb->group[p], "%s/%s", sb->group[SANDBOX_RUN], part_names[p]) < 0)
                        return -ENOMEM;
        r = cgroup_create(&sb->layout, sb->group[SANDBOX_RUN]);
        if (r < 0)
                return r;
        sb->made_group = true;
        if (!o->no_host_reserve)
                sb->reserve_r = set_host_reserve(sb); /* not fatal: the caller says so */
        /* The cpuset before the children, which start with their parent's. */
        if (o->cpus) {
                r = cgroup_set_cpuset(&sb->layout, sb->group[SANDBOX_RUN], o->cpus, NULL);
                if (r < 0)
                        return r;
        }
        for (int p = SANDBOX_RUN + 1; p < _SANDBOX_PART_MAX; p++) {
                r = cgroup_create(&sb->layout, sb->group[p]);
                if (r < 0)
                        return r;
                r = set_static(sb, p, o->statics);
                if (r < 0)
                        return r;
        }
        if (o->mem_bytes)
                return cgroup_set_memory_max(&sb->layout, sb->group[SANDBOX_LOAD], o->mem_bytes);
        return 0;
}

int sandbox_new(const SandboxOptions *o, Sandbox **ret) {
        _cleanup_sandbox_ Sandbox *sb = NULL;
        const char *dir = o->dir ? o->dir : SANDBOX_DEFAULT_DIR;
        int r;

        sb = calloc(1, sizeof *sb);
        if (!sb)
                return -ENOMEM;
        sb->cgroups = o->cgroups;
        sb->reserve_r = -ENODATA;
        if (!sb->cgroups && sandbox_static_is_set(o->statics))
                return -EOPNOTSUPP; /* no groups to set them on */
        if (o->statics)
                sb->want = *o->statics;
        r = o->cpus ? ((sb->cpus = cpumask_copy(o->cpus)) ? 0 : -ENOMEM) : online_cpus(&sb->cpus);
        if (r < 0)
                return r;
        if (sb->cgroups) {
                r = make_groups(sb, o);
                if (r < 0)
                        return r;
        }
        reap_stale(NULL, dir);
        if (asprintf(&sb->dir, "%s/" RUN_PREFIX "%d", dir, (int) getpid()) < 0)
                return -ENOMEM;
        if (mkdir(sb->dir, 0700) < 0)
                return negative_errno();
        sb->made_dir = true;
        *ret = TAKE_PTR(sb);
        return 0;
}

Sandbox *sandbox_free(Sandbox *sb) {
        if (!sb)
                return NULL;
        if (sb->made_group)
                (void) remove_group_tree(&sb->layout, sb->group[SANDBOX_RUN]);
        if (sb->made_dir)
                (void) load_remove_tree(sb->dir);
        for (int p = 0; p < _SANDBOX_PART_MAX; p++)
                free(sb->group[p]);
        for (size_t i = 0; i < sb->n_extra; i++)
                free(sb->extra[i]);
        free(sb->dir);
        cpumask_free(sb->cpus);
        return mfree(sb);
}

char *sandbox_path(const Sandbox *sb, const char *name) {
        char *p;

        return asprintf(&p, "%s/%s", sb->dir, name) < 0 ? NULL : p;
}

const char *sandbox_group(const Sandbox *sb, SandboxPart part) {
        return sb->cgroups ? sb->group[part] : NULL;
}

int sandbox_host_reserve(const Sandbox *sb, uint64_t *ret_quota_usec, uint64_t *ret_period_usec) {
        if (sb->reserve_r < 0)
                return sb->reserve_r;
        if (ret_quota_usec)
                *ret_quota_usec = sb->reserve_quota_usec;
        if (ret_period_usec)
                *ret_period_usec = sb->reserve_period_usec;
        return 0;
}

const CgroupLayout *sandbox_layout(const Sandbox *sb) {
        return sb->cgroups ? &sb->layout : NULL;
}

const CpuMask *sandbox_cpus(const Sandbox *sb) {
        return sb->cpus;
}

unsigned sandbox_ncpus(const Sandbox *sb) {
        return MAX(cpumask_count(sb->cpus), 1u);
}

int sandbox_enter(const Sandbox *sb, SandboxPart part) {
        if (!sb->cgroups)
                return sched_setaffinity(0, cpumask_cpu_set_size(sb->cpus),
                                         cpumask_cpu_set(sb->cpus)) < 0
                               ? negative_errno()
                               : 0;
        return cgroup_attach_pid(&sb->layout, sb->group[part], getpid());
}

int sandbox_add_group(Sandbox *sb, const char *name, uint64_t weight, uint64_t mem_bytes,
                      const char **ret_path) {
        _cleanup_free_ char *path = NULL;
        const SandboxSetting *set;
        const char *g;
        int r;

        if (!sb->cgroups)
                return -EOPNOTSUPP;
        for (int p = SANDBOX_RUN + 1; p < _SANDBOX_PART_MAX; p++)
                if (streq(name, part_names[p]))
                        return -EEXIST;
        if (sb->n_extra >= SANDBOX_MAX_GROUPS)
                return -ENOSPC;
        if (asprintf(&path, "%s/%s", sb->group[SANDBOX_RUN], name) < 0)
                return -ENOMEM;
        r = cgroup_create(&sb->layout, path);
        if (r < 0)
                return r;
        g = sb->extra[sb->n_extra++] = TAKE_PTR(path); /* removed with the run's tree now */
        set = sandbox_static_named(&sb->want, name);
        r = cgroup_set_cpu_weight(&sb->layout, g, set && set->weight ? set->weight : weight);
        if (r < 0)
                return r;
        if (set && set->idle) {
                r = cgroup_set_cpu_idle(&sb->layout, g, /* idle= */ true);
                if (r < 0)
                        return r;
        }
        if (set && sb->statics.n_named < SANDBOX_STATIC_MAX_NAMED) {
                SandboxNamedSetting *done = &sb->statics.named[sb->statics.n_named++];

                (void) snprintf(done->name, sizeof done->name, "%s", name);
                done->set = *set;
        }
        if (mem_bytes) {
                if (!sb->layout.memory_path[0])
                        return -EOPNOTSUPP;
                r = cgroup_set_memory_max(&sb->layout, g, mem_bytes);
                if (r < 0)
                        return r;
        }
        if (ret_path)
                *ret_path = g;
        return 0;
}

int sandbox_enter_group(const Sandbox *sb, const char *path) {
        if (!sb->cgroups)
                return sandbox_enter(sb, SANDBOX_RUN);
        return cgroup_attach_pid(&sb->layout, path, getpid());
}

int sandbox_cpu_usec(const Sandbox *sb, SandboxPart part, uint64_t *ret) {
        if (!sb->cgroups)
                return -EOPNOTSUPP;
        return cgroup_read_usage(&sb->layout, sb->group[part], ret);
}

int sandbox_memory_peak(const Sandbox *sb, SandboxPart part, uint64_t *ret) {
        if (!sb->cgroups || !sb->layout.memory_path[0])
                return -EOPNOTSUPP;
        return cgroup_read_memory_peak(&sb->layout, sb->group[part], ret);
}

int sandbox_kill(const Sandbox *sb) {
        if (!sb->cgroups)
                return 0;
        return cgroup_kill_all(&sb->layout, sb->group[SANDBOX_RUN], KILL_TIMEOUT_USEC);
}

/* name: {"weight": W, "idle": B} as group holds them now. */
static void json_static_group(Json *j, const Sandbox *sb, const char *name, const char *group) {
        uint64_t weight;
        bool idle;

        json_key(j, name);
        json_begin(j, '{');
        if (cgroup_get_cpu_weight(&sb->layout, group, &weight) >= 0)
                json_u64(j, "weight", weight);
        else
                json_null(j, "weight");
        if (cgroup_get_cpu_idle(&sb->layout, group, &idle) >= 0)
                json_bool(j, "idle", idle);
        else
                json_null(j, "idle");
        json_end(j, '}');
}

/* The "static" member: each set group's weight and cpu.idle as the group holds them now. */
static void json_static(Json *j, const Sandbox *sb) {
        json_key(j, "static");
        json_begin(j, '{');
        for (int p = SANDBOX_RUN + 1; p < _SANDBOX_PART_MAX; p++)
                if (sb->statics.part[p].weight || sb->statics.part[p].idle)
                        json_static_group(j, sb, part_names[p], sb->group[p]);
        for (size_t i = 0; i < sb->statics.n_named; i++) {
                _cleanup_free_ char *path = NULL;

                if (asprintf(&path, "%s/%s", sb->group[SANDBOX_RUN], sb->statics.named[i].name) < 0)
                        continue;
                json_static_group(j, sb, sb->statics.named[i].name, path);
        }
        json_end(j, '}');
}

void sandbox_json_machine(Json *j, const Sandbox *sb) {
        _cleanup_topology_ Topology *t = NULL;
        _cleanup_free_ char *cpus = NULL;
        const CgroupLayout *l = sandbox_layout(sb);
        struct utsname u;

        json_key(j, "machine");
        json_begin(j, '{');
        if (uname(&u) == 0) {
                json_string(j, "kernel", u.release);
                json_string(j, "arch", u.machine);
        }
        json_u64(j, "online_cpus", (uint64_t) MAX(sysconf(_SC_NPROCESSORS_ONLN), 0L));
        if (topology_new_from_system(&t) >= 0)
                json_u64(j, "numa_nodes", topology_n_nodes(t));
        json_string(j, "cgroup_mode", l ? cgroup_mode_to_string(l->mode) : "none");
        if (cpumask_format(sandbox_cpus(sb), &cpus) >= 0)
                json_string(j, "run_cpus", cpus);
        json_end(j, '}');
        if (l && sandbox_static_is_set(&sb->statics))
                json_static(j, sb);
}
