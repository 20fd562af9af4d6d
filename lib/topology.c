/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "topology.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <hwloc.h>
#include <limits.h>
#include <stdarg.h>
#include <numa.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"

/* An XML topology of the largest machine we can represent is a few MiB; far more is not one. */
#define XML_MAX_BYTES (64u * 1024u * 1024u)
/* A cpulist of CPUMASK_MAX_CPUS CPUs, every other one, is under 48 KiB. */
#define CPULIST_MAX_BYTES (256u * 1024u)

struct Topology {
        char *source;

        unsigned cpu_capacity;
        CpuMask *possible, *online, *allowed, *isolated, *nohz_full, *usable;
        int *cpu_node, *cpu_core, *cpu_package; /* by CPU; -1 unless online */

        unsigned n_packages;
        unsigned n_cores;
        CpuMask **core_cpus;
        unsigned max_cpus_per_core;

        unsigned n_nodes;
        unsigned *node_ids; /* ascending */
        CpuMask **node_cpus;
        unsigned *node_capacity;
        unsigned *distances; /* n_nodes x n_nodes, by index */
        TopologyDistanceSource distance_source;
};

typedef enum SourceKind {
        SOURCE_SYSTEM,
        SOURCE_ROOT,
        SOURCE_SYNTHETIC,
        SOURCE_XML,
} SourceKind;

typedef struct Source {
        SourceKind kind;
        const char *root; /* SYSTEM, ROOT: where sysfs lives */
        const unsigned *distances; /* SYNTHETIC: the caller's matrix, or NULL */
        unsigned n_distances;
} Source;

static void hwloc_topology_destroyp(hwloc_topology_t *h) {
        if (*h)
                hwloc_topology_destroy(*h);
}
#define _cleanup_hwloc_ _cleanup_(hwloc_topology_destroyp)

static CpuMask **mask_array_free(CpuMask **a, unsigned n) {
        if (a)
                for (unsigned i = 0; i < n; i++)
                        cpumask_free(a[i]);
        free(a);
        return NULL;
}

Topology *topology_free(Topology *t) {
        if (!t)
                return NULL;
        free(t->source);
        cpumask_free(t->possible);
        cpumask_free(t->online);
        cpumask_free(t->allowed);
        cpumask_free(t->isolated);
        cpumask_free(t->nohz_full);
        cpumask_free(t->usable);
        free(t->cpu_node);
        free(t->cpu_core);
        free(t->cpu_package);
        mask_array_free(t->core_cpus, t->n_cores);
        free(t->node_ids);
        mask_array_free(t->node_cpus, t->n_nodes);
        free(t->node_capacity);
        free(t->distances);
        free(t);
        return NULL;
}

/* ---- reading files under a root */

/* A cpulist file as a mask of the given capacity; CPUs beyond it are dropped. -ENOENT if absent. */
static int read_cpulist_at(int dirfd, const char *path, unsigned capacity, CpuMask **ret) {
        _cleanup_cpumask_ CpuMask *parsed = NULL, *m = NULL;
        _cleanup_free_ char *text = NULL;
        int r;

        r = read_full_at(dirfd, path, CPULIST_MAX_BYTES, &text, NULL);
        if (r < 0)
                return r;
        /* A kernel mask never allocated prints its NULL pointer: Debian's kernel (NO_HZ_FULL,
         * CPUMASK_OFFSTACK) booted without nohz_full= has "  (null)\n" in cpu/nohz_full. */
        if (streq(text + strspn(text, " "), "(null)\n"))
                text[0] = '\0';
        r = cpumask_parse(text, CPUMASK_MAX_CPUS, &parsed, NULL);
        if (r < 0)
                return log_debug_errno(r, "Failed to parse %s \"%s\": %m", path, text);
        m = cpumask_new(capacity);
        if (!m)
                return -ENOMEM;
        cpumask_or(m, m, parsed);
        *ret = TAKE_PTR(m);
        return 0;
}

/* Like read_cpulist_at(), but a missing file is the empty set. */
static int read_optional_cpulist_at(int dirfd, const char *path, unsigned capacity, CpuMask **ret) {
        int r = read_cpulist_at(dirfd, path, capacity, ret);

        if (r != -ENOENT)
                return r;
        *ret = cpumask_new(capacity);
        return *ret ? 0 : -ENOMEM;
}

/*
 * The kernel's own lists: online narrows what hwloc found (a source that lacks the file is taken
 * at hwloc's word), isolated and nohz_full are only known here.
 */
static int read_root_files(Topology *t, const char *root) {
        _cleanup_cpumask_ CpuMask *online = NULL, *isolated = NULL, *nohz_full = NULL;
        _cleanup_close_ int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        int r;

        if (rootfd < 0)
                return negative_errno();
        r = read_cpulist_at(rootfd, "sys/devices/system/cpu/online", t->cpu_capacity, &online);
        if (r < 0 && r != -ENOENT)
                return r;
        r = read_optional_cpulist_at(rootfd, "sys/devices/system/cpu/isolated", t->cpu_capacity,
                                     &isolated);
        if (r < 0)
                return r;
        r = read_optional_cpulist_at(rootfd, "sys/devices/system/cpu/nohz_full", t->cpu_capacity,
                                     &nohz_full);
        if (r < 0)
                return r;

        if (online)
                cpumask_and(t->online, t->online, online);
        cpumask_free(t->isolated);
        t->isolated = TAKE_PTR(isolated);
        cpumask_free(t->nohz_full);
        t->nohz_full = TAKE_PTR(nohz_full);
        return 0;
}

/* ---- CPU sets */

/* CPUs at or above capacity are dropped: the allowed cpuset may be infinite. */
static CpuMask *mask_from_bitmap(hwloc_const_bitmap_t b, unsigned capacity) {
        CpuMask *m = cpumask_new(capacity);

        if (!m)
                return NULL;
        for (int i = hwloc_bitmap_first(b); i >= 0 && (unsigned) i < capacity;
             i = hwloc_bitmap_next(b, i))
                (void) cpumask_set(m, (unsigned) i);
        return m;
}

static int cpu_capacity_of(hwloc_topology_t h, unsigned *ret) {
        int last = hwloc_bitmap_last(hwloc_topology_get_complete_cpuset(h));
        int last_online = hwloc_bitmap_last(hwloc_topology_get_topology_cpuset(h));

        if (last_online > last)
                last = last_online;
        if (last < 0 || (unsigned) last >= CPUMASK_MAX_CPUS)
                return log_debug_errno(-EINVAL, "hwloc reports highest CPU %d, cannot represent it",
                                       last);
        *ret = (unsigned) last + 1;
        return 0;
}

static int *cpu_array_new(unsigned n) {
        int *a = malloc(n * sizeof *a);

        if (a)
                for (unsigned i = 0; i < n; i++)
                        a[i] = -1;
        return a;
}

static int build_cpu_sets(Topology *t, hwloc_topology_t h) {
        unsigned cap = 0;
        int r;

        r = cpu_capacity_of(h, &cap);
        if (r < 0)
                return r;
        t->cpu_capacity = cap;
        t->possible = mask_from_bitmap(hwloc_topology_get_complete_cpuset(h), cap);
        /* The topology cpuset: CPUs hwloc has a PU for, i.e. online ones (disallowed included). */
        t->online = mask_from_bitmap(hwloc_topology_get_topology_cpuset(h), cap);
        t->allowed = mask_from_bitmap(hwloc_topology_get_allowed_cpuset(h), cap);
        t->isolated = cpumask_new(cap);
        t->nohz_full = cpumask_new(cap);
        t->usable = cpumask_new(cap);
        t->cpu_node = cpu_array_new(cap);
        t->cpu_core = cpu_array_new(cap);
        t->cpu_package = cpu_array_new(cap);
        if (!t->possible || !t->online || !t->allowed || !t->isolated || !t->nohz_full ||
            !t->usable || !t->cpu_node || !t->cpu_core || !t->cpu_package)
                return -ENOMEM;
        cpumask_or(t->possible, t->possible, t->online);
        return 0;
}

/* ---- nodes */

static int cmp_os_index(const void *a, const void *b) {
        unsigned x = (*(const hwloc_obj_t *) a)->os_index, y = (*(const hwloc_obj_t *) b)->os_index;

        return (x > y) - (x < y);
}

/* hwloc's logical order follows the tree, not the OS numbering the rest of Linux uses. */
static int sorted_nodes(hwloc_topology_t h, hwloc_obj_t **ret, unsigned *ret_n) {
        _cleanup_free_ hwloc_obj_t *nodes = NULL;
        int n = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_NUMANODE);

        if (n <= 0 || (unsigned) n > TOPOLOGY_MAX_NODES)
                return log_debug_errno(-EINVAL, "hwloc reports %d NUMA nodes", n);
        nodes = calloc((size_t) n, sizeof *nodes);
        if (!nodes)
                return -ENOMEM;
        for (int i = 0; i < n; i++) {
                nodes[i] = hwloc_get_obj_by_type(h, HWLOC_OBJ_NUMANODE, (unsigned) i);
                if (!nodes[i] || nodes[i]->os_index == HWLOC_UNKNOWN_INDEX || !nodes[i]->cpuset)
                        return log_debug_errno(-EINVAL, "NUMA node L#%d lacks an OS index", i);
        }
        qsort(nodes, (size_t) n, sizeof *nodes, cmp_os_index);
        for (int i = 1; i < n; i++)
                if (nodes[i]->os_index == nodes[i - 1]->os_index)
                        return log_debug_errno(-EINVAL, "NUMA node %u appears twice",
                                               nodes[i]->os_index);
        *ret = TAKE_PTR(nodes);
        *ret_n = (unsigned) n;
        return 0;
}

/* Gives node i the online CPUs of its cpuset that no lower-numbered node took. */
static int claim_node_cpus(Topology *t, unsigned i, hwloc_const_cpuset_t cpuset) {
        t->node_cpus[i] = cpumask_new(t->cpu_capacity);
        if (!t->node_cpus[i])
                return -ENOMEM;
        for (int c = hwloc_bitmap_first(cpuset); c >= 0; c = hwloc_bitmap_next(cpuset, c)) {
                unsigned cpu = (unsigned) c;

                if (cpu >= t->cpu_capacity || !cpumask_isset(t->online, cpu) ||
                    t->cpu_node[cpu] >= 0)
                        continue;
                t->cpu_node[cpu] = (int) t->node_ids[i];
                (void) cpumask_set(t->node_cpus[i], cpu);
        }
        return 0;
}

static int build_nodes(Topology *t, hwloc_obj_t *nodes, unsigned n) {
        t->node_ids = calloc(n, sizeof *t->node_ids);
        t->node_cpus = calloc(n, sizeof *t->node_cpus);
        t->node_capacity = calloc(n, sizeof *t->node_capacity);
        t->distances = calloc((size_t) n * n, sizeof *t->distances);
        if (!t->node_ids || !t->node_cpus || !t->node_capacity || !t->distances)
                return -ENOMEM;
        t->n_nodes = n;
        for (unsigned i = 0; i < n; i++)
                t->node_ids[i] = nodes[i]->os_index;
        for (unsigned i = 0; i < n; i++) {
                int r = claim_node_cpus(t, i, nodes[i]->cpuset);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- cores and packages */

static int add_cpu_to_core(Topology *t, unsigned core, unsigned cpu) {
        if (!t->core_cpus[core]) {
                t->core_cpus[core] = cpumask_new(t->cpu_capacity);
                if (!t->core_cpus[core])
                        return -ENOMEM;
        }
        t->cpu_core[cpu] = (int) core;
        return cpumask_set(t->core_cpus[core], cpu);
}

/* Drops cores left without online CPUs, so core indexes stay dense. */
static void compact_cores(Topology *t, unsigned n_slots) {
        unsigned n = 0;

        for (unsigned old = 0; old < n_slots; old++) {
                if (!t->core_cpus[old])
                        continue;
                t->core_cpus[n] = t->core_cpus[old];
                if (old != n)
                        t->core_cpus[old] = NULL;
                CPUMASK_FOREACH(cpu, t->core_cpus[n])
                        t->cpu_core[cpu] = (int) n;
                if (cpumask_count(t->core_cpus[n]) > t->max_cpus_per_core)
                        t->max_cpus_per_core = cpumask_count(t->core_cpus[n]);
                n++;
        }
        t->n_cores = n;
}

/* A PU outside any Core (possible in XML or synthetic input) is a core of its own. */
static int build_cores(Topology *t, hwloc_topology_t h) {
        int n_pus = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PU);
        int n_cores = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_CORE);
        int n_packages = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PACKAGE);
        unsigned slots, next;

        if (n_pus <= 0 || n_cores < 0 || n_packages < 0)
                return log_debug_errno(-EINVAL, "hwloc reports %d PUs, %d cores, %d packages",
                                       n_pus, n_cores, n_packages);
        slots = (unsigned) n_cores + (unsigned) n_pus;
        next = (unsigned) n_cores;
        t->core_cpus = calloc(slots, sizeof *t->core_cpus);
        if (!t->core_cpus)
                return -ENOMEM;
        t->n_cores = slots; /* what topology_free() must walk until compact_cores() */
        for (int i = 0; i < n_pus; i++) {
                hwloc_obj_t pu = hwloc_get_obj_by_type(h, HWLOC_OBJ_PU, (unsigned) i);
                hwloc_obj_t core, package;
                int r;

                if (!pu || pu->os_index >= t->cpu_capacity ||
                    !cpumask_isset(t->online, pu->os_index))
                        continue;
                core = hwloc_get_ancestor_obj_by_type(h, HWLOC_OBJ_CORE, pu);
                r = add_cpu_to_core(t, core ? core->logical_index : next++, pu->os_index);
                if (r < 0)
                        return r;
                package = hwloc_get_ancestor_obj_by_type(h, HWLOC_OBJ_PACKAGE, pu);
                t->cpu_package[pu->os_index] = package ? (int) package->logical_index : 0;
        }
        compact_cores(t, slots);
        t->n_packages = n_packages > 0 ? (unsigned) n_packages : 1;
        return 0;
}

/* ---- distances */

static bool distance_ok(unsigned row, unsigned col, uint64_t v) {
        if (row == col)
                return v == TOPOLOGY_LOCAL_DISTANCE;
        return v > TOPOLOGY_LOCAL_DISTANCE && v <= TOPOLOGY_MAX_DISTANCE;
}

int topology_check_distances(const unsigned *distances, unsigned n, size_t *ret_bad) {
        if (n == 0 || n > TOPOLOGY_MAX_NODES)
                return -EINVAL;
        for (unsigned row = 0; row < n; row++)
                for (unsigned col = 0; col < n; col++)
                        if (!distance_ok(row, col, distances[(size_t) row * n + col])) {
                                if (ret_bad)
                                        *ret_bad = (size_t) row * n + col;
                                return -EINVAL;
                        }
        return 0;
}

/* Hands the caller's matrix to hwloc, so it is read back (and exported) like any other. */
static int add_user_distances(hwloc_topology_t h, hwloc_obj_t *nodes, unsigned n_nodes,
                              const unsigned *distances, unsigned n) {
        _cleanup_free_ hwloc_uint64_t *values = NULL;
        hwloc_distances_add_handle_t handle;
        int r;

        if (n != n_nodes)
                return log_debug_errno(-EINVAL, "%u x %u distances for %u nodes", n, n, n_nodes);
        r = topology_check_distances(distances, n, NULL);
        if (r < 0)
                return r;
        if (n < 2)
                return 0; /* hwloc keeps no matrix for one node; its only entry is 10 anyway */
        values = malloc((size_t) n * n * sizeof *values);
        if (!values)
                return -ENOMEM;
        for (size_t i = 0; i < (size_t) n * n; i++)
                values[i] = distances[i];
        handle = hwloc_distances_add_create(
                h, "NUMALatency",
                HWLOC_DISTANCES_KIND_FROM_USER | HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0);
        if (!handle)
                return negative_errno();
        /* Both functions destroy the handle on failure. */
        if (hwloc_distances_add_values(h, handle, n, nodes, values, 0) < 0)
                return negative_errno();
        if (hwloc_distances_add_commit(h, handle, 0) < 0)
                return negative_errno();
        return 0;
}

/* Copies a matrix over exactly our nodes; its objects come in no particular order. */
static int copy_hwloc_matrix(Topology *t, struct hwloc_distances_s *d, hwloc_obj_t *nodes) {
        unsigned n = t->n_nodes;
        _cleanup_free_ unsigned *m = NULL;

        if (d->nbobjs != n)
                return -EINVAL;
        m = malloc((size_t) n * n * sizeof *m);
        if (!m)
                return -ENOMEM;
        for (unsigned a = 0; a < n; a++) {
                int ia = hwloc_distances_obj_index(d, nodes[a]);

                for (unsigned b = 0; b < n; b++) {
                        int ib = hwloc_distances_obj_index(d, nodes[b]);
                        uint64_t v;

                        if (ia < 0 || ib < 0)
                                return -EINVAL;
                        v = d->values[(size_t) ia * n + (size_t) ib];
                        if (v == 0 || v > UINT_MAX)
                                return -ERANGE;
                        m[(size_t) a * n + b] = (unsigned) v;
                }
        }
        memcpy(t->distances, m, (size_t) n * n * sizeof *m);
        return 0;
}

/* Returns 1 if hwloc had a latency matrix over all nodes, 0 if not. */
static int distances_from_hwloc(Topology *t, hwloc_topology_t h, hwloc_obj_t *nodes) {
        struct hwloc_distances_s *d[16];
        unsigned nr = ELEMENTSOF(d);
        int found = 0;

        if (hwloc_distances_get_by_type(h, HWLOC_OBJ_NUMANODE, &nr, d,
                                        HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) < 0)
                return negative_errno();
        if (nr > ELEMENTSOF(d))
                nr = ELEMENTSOF(d);
        for (unsigned k = 0; k < nr; k++) {
                if (!found) {
                        int r = copy_hwloc_matrix(t, d[k], nodes);

                        if (r == 0) {
                                found = 1;
                                t->distance_source = d[k]->kind & HWLOC_DISTANCES_KIND_FROM_USER
                                                             ? TOPOLOGY_DISTANCES_USER
                                                             : TOPOLOGY_DISTANCES_OS;
                        } else
                                log_debug_errno(r, "Ignoring hwloc distance matrix %u: %m", k);
                }
                hwloc_distances_release(h, d[k]);
        }
        return found;
}

/* libnuma's view of the running machine; NULL if it has none for every pair of our nodes. */
static unsigned *libnuma_matrix(const Topology *t) {
        unsigned n = t->n_nodes;
        _cleanup_free_ unsigned *m = NULL;

        if (numa_available() < 0)
                return NULL;
        m = malloc((size_t) n * n * sizeof *m);
        if (!m)
                return NULL;
        for (unsigned a = 0; a < n; a++)
                for (unsigned b = 0; b < n; b++) {
                        int v = numa_distance((int) t->node_ids[a], (int) t->node_ids[b]);

                        if (v <= 0) {
                                log_debug("libnuma has no distance from node %u to %u",
                                          t->node_ids[a], t->node_ids[b]);
                                return NULL;
                        }
                        m[(size_t) a * n + b] = (unsigned) v;
                }
        return TAKE_PTR(m);
}

static void distances_default(Topology *t) {
        for (unsigned a = 0; a < t->n_nodes; a++)
                for (unsigned b = 0; b < t->n_nodes; b++)
                        t->distances[(size_t) a * t->n_nodes + b] =
                                a == b ? TOPOLOGY_LOCAL_DISTANCE : TOPOLOGY_DEFAULT_REMOTE_DISTANCE;
        t->distance_source = TOPOLOGY_DISTANCES_DEFAULT;
}

/* libnuma only ever describes the machine we run on: never mix it into another topology. */
static int build_distances(Topology *t, hwloc_topology_t h, hwloc_obj_t *nodes, bool this_system) {
        _cleanup_free_ unsigned *numa = NULL;
        size_t bytes = (size_t) t->n_nodes * t->n_nodes * sizeof *t->distances;
        int found;

        found = distances_from_hwloc(t, h, nodes);
        if (found < 0)
                return found;
        if (this_system)
                numa = libnuma_matrix(t);
        if (found && numa && memcmp(numa, t->distances, bytes) != 0)
                log_debug("hwloc and libnuma disagree on node distances, using hwloc's");
        if (found)
                return 0;
        if (numa) {
                memcpy(t->distances, numa, bytes);
                t->distance_source = TOPOLOGY_DISTANCES_LIBNUMA;
                return 0;
        }
        distances_default(t);
        return 0;
}

/* ---- assembling */

static void finish(Topology *t) {
        cpumask_and(t->allowed, t->allowed, t->online);
        cpumask_andnot(t->usable, t->allowed, t->isolated);
        for (unsigned i = 0; i < t->n_nodes; i++) {
                CPUMASK_FOREACH(cpu, t->node_cpus[i])
                        if (cpumask_isset(t->usable, (unsigned) cpu))
                                t->node_capacity[i]++;
        }
}

static int topology_build(hwloc_topology_t h, const Source *src, Topology **ret) {
        _cleanup_topology_ Topology *t = calloc(1, sizeof *t);
        _cleanup_free_ hwloc_obj_t *nodes = NULL;
        bool this_system = src->kind == SOURCE_SYSTEM && hwloc_topology_is_thissystem(h);
        unsigned n_nodes = 0;
        int r;

        if (!t)
                return -ENOMEM;
        r = build_cpu_sets(t, h);
        if (r < 0)
                return r;
        /* When the environment pointed hwloc elsewhere, the host's sysfs does not describe it. */
        if (src->kind == SOURCE_ROOT || this_system) {
                r = read_root_files(t, src->root);
                if (r < 0)
                        return log_debug_errno(r, "Failed to read CPU lists under %s: %m",
                                               src->root);
        }
        r = sorted_nodes(h, &nodes, &n_nodes);
        if (r < 0)
                return r;
        if (src->distances) {
                r = add_user_distances(h, nodes, n_nodes, src->distances, src->n_distances);
                if (r < 0)
                        return r;
        }
        r = build_nodes(t, nodes, n_nodes);
        if (r < 0)
                return r;
        r = build_cores(t, h);
        if (r < 0)
                return r;
        r = build_distances(t, h, nodes, this_system);
        if (r < 0)
                return r;
        if (src->distances && t->distance_source == TOPOLOGY_DISTANCES_DEFAULT)
                t->distance_source = TOPOLOGY_DISTANCES_USER; /* one node: nothing reached hwloc */
        finish(t);
        *ret = TAKE_PTR(t);
        return 0;
}

/* Sees disallowed CPUs too: the daemon's own cpuset says nothing about the machine's shape. */
static int hwloc_new(hwloc_topology_t *ret) {
        _cleanup_hwloc_ hwloc_topology_t h = NULL;

        if (hwloc_topology_init(&h) < 0)
                return negative_errno();
        if (hwloc_topology_set_flags(h, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) < 0)
                return negative_errno();
        *ret = TAKE_PTR(h);
        return 0;
}

/* hwloc 2.x reads its filesystem root from HWLOC_FSROOT only, when the Linux backend starts. */
static int load_with_fsroot(hwloc_topology_t h, const char *root) {
        _cleanup_free_ char *saved = NULL;
        const char *old = getenv("HWLOC_FSROOT");
        int r = 0;

        if (old) {
                saved = strdup(old);
                if (!saved)
                        return -ENOMEM;
        }
        if (setenv("HWLOC_FSROOT", root, /* overwrite= */ 1) < 0)
                return negative_errno();
        if (hwloc_topology_load(h) < 0)
                r = negative_errno();
        if ((saved ? setenv("HWLOC_FSROOT", saved, 1) : unsetenv("HWLOC_FSROOT")) < 0 && r == 0)
                r = negative_errno();
        return r;
}

/* Loads h from what src names, builds the Topology and names it after description (taken). */
static int load_and_build(hwloc_topology_t h, const Source *src, char *description,
                          Topology **ret) {
        _cleanup_free_ char *desc = description;
        Topology *t = NULL;
        int r;

        if (!desc)
                return -ENOMEM;
        if (src->kind == SOURCE_ROOT)
                r = load_with_fsroot(h, src->root);
        else
                r = hwloc_topology_load(h) < 0 ? negative_errno() : 0;
        if (r < 0)
                return log_debug_errno(r, "hwloc failed to load %s: %m", desc);
        if (src->kind == SOURCE_SYSTEM && !hwloc_topology_is_thissystem(h)) {
                free(desc);
                desc = strdup("system, as redirected by HWLOC_* environment variables");
                if (!desc)
                        return -ENOMEM;
        }
        r = topology_build(h, src, &t);
        if (r < 0)
                return log_debug_errno(r, "Failed to build topology from %s: %m", desc);
        t->source = TAKE_PTR(desc);
        *ret = t;
        return 0;
}

static char *strprintf(const char *format, ...) _printf_(1, 2);
static char *strprintf(const char *format, ...) {
        va_list ap;
        char *s;
        int r;

        va_start(ap, format);
        r = vasprintf(&s, format, ap);
        va_end(ap);
        return r < 0 ? NULL : s;
}

int topology_new_from_system(Topology **ret) {
        _cleanup_hwloc_ hwloc_topology_t h = NULL;
        const Source src = { .kind = SOURCE_SYSTEM, .root = "/" };
        int r;

        r = hwloc_new(&h);
        if (r < 0)
                return r;
        return load_and_build(h, &src, strdup("system"), ret);
}

int topology_new_from_root(const char *root, Topology **ret) {
        _cleanup_hwloc_ hwloc_topology_t h = NULL;
        _cleanup_close_ int rootfd = -EBADF;
        const Source src = { .kind = SOURCE_ROOT, .root = root };
        int r;

        /* Without the tree hwloc falls back to a flat machine of the host's CPU count. */
        rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (rootfd < 0)
                return negative_errno();
        if (faccessat(rootfd, "sys/devices/system/cpu", F_OK, 0) < 0)
                return negative_errno();
        r = hwloc_new(&h);
        if (r < 0)
                return r;
        /* The x86 backend reads this CPU's CPUID and would mix the host into the fake machine. */
        if (hwloc_topology_set_components(h, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86") < 0)
                return negative_errno();
        return load_and_build(h, &src, strprintf("root %s", root), ret);
}

int topology_new_from_synthetic(const char *description, const unsigned *distances, unsigned n,
                                Topology **ret) {
        _cleanup_hwloc_ hwloc_topology_t h = NULL;
        const Source src = { .kind = SOURCE_SYNTHETIC, .distances = distances, .n_distances = n };
        int r;

        r = hwloc_new(&h);
        if (r < 0)
                return r;
        if (hwloc_topology_set_synthetic(h, description) < 0)
                return log_debug_errno(negative_errno(), "hwloc rejects synthetic \"%s\": %m",
                                       description);
        return load_and_build(h, &src, strprintf("synthetic \"%s\"", description), ret);
}

/* Read here rather than by hwloc, so a missing or unreadable file says why. */
int topology_new_from_xml(const char *path, Topology **ret) {
        _cleanup_hwloc_ hwloc_topology_t h = NULL;
        _cleanup_free_ char *xml = NULL;
        const Source src = { .kind = SOURCE_XML };
        size_t len;
        int r;

        r = read_full_at(AT_FDCWD, path, XML_MAX_BYTES, &xml, &len);
        if (r < 0)
                return log_debug_errno(r, "Failed to read %s: %m", path);
        r = hwloc_new(&h);
        if (r < 0)
                return r;
        /* The length counts the terminating NUL, as hwloc_topology_export_xmlbuffer() gives it. */
        if (hwloc_topology_set_xmlbuffer(h, xml, (int) len + 1) < 0)
                return log_debug_errno(negative_errno(), "hwloc rejects XML %s: %m", path);
        return load_and_build(h, &src, strprintf("xml %s", path), ret);
}

/* ---- the distance matrix syntax */

static const char *skip_blanks(const char *p) {
        while (*p == ' ' || *p == '\t')
                p++;
        return p;
}

/* One value at *p; on error *p is left at the value. */
static int parse_distance(const char **p, unsigned long *ret) {
        const char *s = skip_blanks(*p);
        unsigned long v;
        char *end;

        *p = s;
        if (!isdigit((unsigned char) *s))
                return -EINVAL;
        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno == ERANGE || v > TOPOLOGY_MAX_DISTANCE)
                return -ERANGE;
        *p = skip_blanks(end);
        *ret = v;
        return 0;
}

/* One row of n values, checked as it goes; *p is left at the error, or after the row. */
static int parse_distance_row(const char **p, unsigned row, unsigned n, unsigned *values) {
        for (unsigned col = 0; col < n; col++) {
                const char *at;
                unsigned long v;
                int r;

                if (col > 0) {
                        if (**p != ',')
                                return -EINVAL; /* a short row: where the ',' was due */
                        (*p)++;
                }
                at = skip_blanks(*p);
                r = parse_distance(p, &v);
                if (r < 0)
                        return r;
                if (!distance_ok(row, col, v)) {
                        *p = at;
                        return -EINVAL;
                }
                values[(size_t) row * n + col] = (unsigned) v;
        }
        if (**p == ',') {
                *p = skip_blanks(*p + 1);
                return -EINVAL; /* a long row: at the first value too many */
        }
        return 0;
}

/* The first row says how many nodes there are; the matrix must be square. */
int topology_parse_distances(const char *s, unsigned **ret, unsigned *ret_n, size_t *ret_errpos) {
        _cleanup_free_ unsigned *values = NULL;
        const char *p = s;
        unsigned n = 1;
        int r = 0;

        while (isspace((unsigned char) *p))
                p++;
        for (const char *c = p; *c && *c != ';'; c++)
                if (*c == ',' && ++n > TOPOLOGY_MAX_NODES) {
                        r = -ERANGE;
                        goto fail;
                }
        values = malloc((size_t) n * n * sizeof *values);
        if (!values)
                return -ENOMEM;
        for (unsigned row = 0; row < n; row++) {
                if (row > 0) {
                        if (*p != ';') {
                                r = -EINVAL; /* too few rows, or junk after a row */
                                goto fail;
                        }
                        p++;
                }
                r = parse_distance_row(&p, row, n, values);
                if (r < 0)
                        goto fail;
        }
        while (isspace((unsigned char) *p))
                p++;
        if (*p != '\0') {
                r = -EINVAL; /* too many rows, or junk */
                goto fail;
        }
        *ret = TAKE_PTR(values);
        *ret_n = n;
        return 0;
fail:
        if (ret_errpos)
                *ret_errpos = (size_t) (p - s);
        return r;
}

/* ---- queries */

const char *topology_source(const Topology *t) {
        return t->source;
}

unsigned topology_cpu_capacity(const Topology *t) {
        return t->cpu_capacity;
}

const CpuMask *topology_possible_cpus(const Topology *t) {
        return t->possible;
}

const CpuMask *topology_online_cpus(const Topology *t) {
        return t->online;
}

const CpuMask *topology_allowed_cpus(const Topology *t) {
        return t->allowed;
}

const CpuMask *topology_isolated_cpus(const Topology *t) {
        return t->isolated;
}

const CpuMask *topology_nohz_full_cpus(const Topology *t) {
        return t->nohz_full;
}

const CpuMask *topology_usable_cpus(const Topology *t) {
        return t->usable;
}

unsigned topology_n_cpus(const Topology *t) {
        return cpumask_count(t->online);
}

static int cpu_lookup(const Topology *t, const int *table, unsigned cpu) {
        if (cpu >= t->cpu_capacity || table[cpu] < 0)
                return -ENOENT;
        return table[cpu];
}

int topology_cpu_node(const Topology *t, unsigned cpu) {
        return cpu_lookup(t, t->cpu_node, cpu);
}

int topology_cpu_core(const Topology *t, unsigned cpu) {
        return cpu_lookup(t, t->cpu_core, cpu);
}

int topology_cpu_package(const Topology *t, unsigned cpu) {
        return cpu_lookup(t, t->cpu_package, cpu);
}

unsigned topology_n_packages(const Topology *t) {
        return t->n_packages;
}

unsigned topology_n_cores(const Topology *t) {
        return t->n_cores;
}

const CpuMask *topology_core_cpus(const Topology *t, unsigned core) {
        return core < t->n_cores ? t->core_cpus[core] : NULL;
}

unsigned topology_max_cpus_per_core(const Topology *t) {
        return t->max_cpus_per_core;
}

bool topology_has_smt(const Topology *t) {
        return t->max_cpus_per_core > 1;
}

unsigned topology_n_nodes(const Topology *t) {
        return t->n_nodes;
}

int topology_node_id(const Topology *t, unsigned i) {
        return i < t->n_nodes ? (int) t->node_ids[i] : -ERANGE;
}

int topology_node_index(const Topology *t, unsigned node) {
        /* Ids are sorted: bisect, machines with hundreds of nodes exist. */
        unsigned lo = 0, hi = t->n_nodes;

        while (lo < hi) {
                unsigned mid = lo + (hi - lo) / 2;

                if (t->node_ids[mid] == node)
                        return (int) mid;
                if (t->node_ids[mid] < node)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -ENOENT;
}

const CpuMask *topology_node_cpus(const Topology *t, unsigned node) {
        int i = topology_node_index(t, node);

        return i < 0 ? NULL : t->node_cpus[i];
}

unsigned topology_node_capacity(const Topology *t, unsigned node) {
        int i = topology_node_index(t, node);

        return i < 0 ? 0 : t->node_capacity[i];
}

int topology_node_distance(const Topology *t, unsigned a, unsigned b) {
        int ia = topology_node_index(t, a), ib = topology_node_index(t, b);

        if (ia < 0 || ib < 0)
                return -ENOENT;
        return (int) t->distances[(size_t) ia * t->n_nodes + (size_t) ib];
}

const unsigned *topology_distances(const Topology *t) {
        return t->distances;
}

TopologyDistanceSource topology_distance_source(const Topology *t) {
        return t->distance_source;
}

const char *topology_distance_source_to_string(TopologyDistanceSource s) {
        static const char *const names[] = {
                [TOPOLOGY_DISTANCES_DEFAULT] = "default",
                [TOPOLOGY_DISTANCES_OS] = "os",
                [TOPOLOGY_DISTANCES_LIBNUMA] = "libnuma",
                [TOPOLOGY_DISTANCES_USER] = "user",
        };

        return (unsigned) s < ELEMENTSOF(names) ? names[s] : "unknown";
}

/* ---- dump */

/* A cpulist, "none" for the empty set; NULL only if out of memory. */
static char *format_cpus(const CpuMask *m) {
        char *s = NULL;

        if (cpumask_is_empty(m))
                return strdup("none");
        return cpumask_format(m, &s) < 0 ? NULL : s;
}

static void dump_mask(FILE *f, const char *label, const CpuMask *m) {
        _cleanup_free_ char *s = format_cpus(m);

        fprintf(f, "  %-10s %s (%u)\n", label, s ?: "?", cpumask_count(m));
}

static void dump_nodes(const Topology *t, FILE *f) {
        fprintf(f, "nodes: %u\n", t->n_nodes);
        for (unsigned i = 0; i < t->n_nodes; i++) {
                _cleanup_free_ char *s = format_cpus(t->node_cpus[i]);

                fprintf(f, "  node %u: cpus %s (%u), %u usable\n", t->node_ids[i], s ?: "?",
                        cpumask_count(t->node_cpus[i]), t->node_capacity[i]);
        }
}

static void dump_distances(const Topology *t, FILE *f) {
        fprintf(f, "distances (%s):\n  %5s", topology_distance_source_to_string(t->distance_source),
                "node");
        for (unsigned b = 0; b < t->n_nodes; b++)
                fprintf(f, " %4u", t->node_ids[b]);
        fputc('\n', f);
        for (unsigned a = 0; a < t->n_nodes; a++) {
                fprintf(f, "  %5u", t->node_ids[a]);
                for (unsigned b = 0; b < t->n_nodes; b++)
                        fprintf(f, " %4u", t->distances[(size_t) a * t->n_nodes + b]);
                fputc('\n', f);
        }
}

int topology_dump(const Topology *t, FILE *f) {
        fprintf(f, "source: %s\n", t->source);
        fprintf(f, "cpus: %u online of %u possible\n", topology_n_cpus(t),
                cpumask_count(t->possible));
        dump_mask(f, "possible", t->possible);
        dump_mask(f, "online", t->online);
        dump_mask(f, "allowed", t->allowed);
        dump_mask(f, "isolated", t->isolated);
        dump_mask(f, "nohz_full", t->nohz_full);
        dump_mask(f, "usable", t->usable);
        fprintf(f, "packages: %u\n", t->n_packages);
        fprintf(f, "cores: %u, smt: %s, up to %u cpu%s per core\n", t->n_cores,
                topology_has_smt(t) ? "yes" : "no", t->max_cpus_per_core,
                t->max_cpus_per_core == 1 ? "" : "s");
        dump_nodes(t, f);
        dump_distances(t, f);
        return fflush(f) == 0 && !ferror(f) ? 0 : -EIO;
}

/* ---- as text, for recordings */

static const char *const distance_source_keys[] = {
        [TOPOLOGY_DISTANCES_DEFAULT] = "default",
        [TOPOLOGY_DISTANCES_OS] = "os",
        [TOPOLOGY_DISTANCES_LIBNUMA] = "libnuma",
        [TOPOLOGY_DISTANCES_USER] = "user",
};

static void put_mask(FILE *f, const char *key, const CpuMask *m, bool *oom) {
        _cleanup_free_ char *s = NULL;

        if (cpumask_format(m, &s) < 0)
                *oom = true;
        else
                fprintf(f, "%s %s\n", key, s);
}

static void put_source(FILE *f, const char *source) {
        fputs("source ", f);
        for (const char *p = source; *p; p++)
                fputc(*p == '\n' ? ' ' : *p, f);
        fputc('\n', f);
}

int topology_to_text(const Topology *t, char **ret) {
        _cleanup_free_ char *buf = NULL;
        _cleanup_(cpumask_freep) CpuMask *pkg = cpumask_new(t->cpu_capacity);
        size_t size = 0;
        bool oom = !pkg;
        FILE *f;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        fputs("cgbalance-topology 1\n", f);
        put_source(f, t->source);
        fprintf(f, "capacity %u\n", t->cpu_capacity);
        put_mask(f, "possible", t->possible, &oom);
        put_mask(f, "online", t->online, &oom);
        put_mask(f, "allowed", t->allowed, &oom);
        put_mask(f, "isolated", t->isolated, &oom);
        put_mask(f, "nohz_full", t->nohz_full, &oom);
        fprintf(f, "packages %u\ndistance_source %s\n", t->n_packages,
                distance_source_keys[t->distance_source]);
        for (unsigned i = 0; i < t->n_nodes; i++) {
                char key[32];

                snprintf(key, sizeof key, "node %u", t->node_ids[i]);
                put_mask(f, key, t->node_cpus[i], &oom);
        }
        fputs("distances ", f);
        for (unsigned a = 0; a < t->n_nodes; a++)
                for (unsigned b = 0; b < t->n_nodes; b++)
                        fprintf(f, "%u%s", t->distances[(size_t) a * t->n_nodes + b],
                                b + 1 < t->n_nodes   ? ","
                                : a + 1 < t->n_nodes ? ";"
                                                     : "\n");
        for (unsigned i = 0; i < t->n_cores; i++)
                put_mask(f, "core", t->core_cpus[i], &oom);
        for (unsigned p = 0; pkg && p < t->n_packages; p++) {
                char key[32];

                cpumask_zero(pkg);
                for (unsigned cpu = 0; cpu < t->cpu_capacity; cpu++)
                        if (t->cpu_package[cpu] == (int) p)
                                (void) cpumask_set(pkg, cpu);
                snprintf(key, sizeof key, "package %u", p);
                put_mask(f, key, pkg, &oom);
        }
        if (fclose(f) != 0 || oom)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        return 0;
}

typedef struct TextParser {
        char *cursor; /* the rest of the text, lines cut in place */
        unsigned line;
        char *key, *value; /* the current line */
        char *error;
        size_t error_size;
} TextParser;

static int text_fail(TextParser *p, const char *format, ...) _printf_(2, 3);
static int text_fail(TextParser *p, const char *format, ...) {
        va_list ap;
        int n = 0;

        if (p->error && p->error_size > 0) {
                n = snprintf(p->error, p->error_size, "line %u: ", p->line);
                if (n >= 0 && (size_t) n < p->error_size) {
                        va_start(ap, format);
                        vsnprintf(p->error + n, p->error_size - (size_t) n, format, ap);
                        va_end(ap);
                }
        }
        return -EINVAL;
}

/* The next line as key and value (value "" when the line is the key alone); false at the end. */
static bool text_next(TextParser *p) {
        char *nl, *sp;

        if (!p->cursor || !*p->cursor)
                return false;
        p->line++;
        p->key = p->cursor;
        nl = strchr(p->cursor, '\n');
        if (nl) {
                *nl = '\0';
                p->cursor = nl + 1;
        } else
                p->cursor = NULL;
        sp = strchr(p->key, ' ');
        if (sp) {
                *sp = '\0';
                p->value = sp + 1;
        } else
                p->value = p->key + strlen(p->key);
        return true;
}

/* The next line, which must have this key. */
static int text_expect(TextParser *p, const char *key) {
        if (!text_next(p))
                return text_fail(p, "ends before \"%s\"", key);
        if (!streq(p->key, key))
                return text_fail(p, "\"%s\" where \"%s\" belongs", p->key, key);
        return 0;
}

static int text_uint(TextParser *p, const char *s, unsigned max, unsigned *ret) {
        char *end;
        unsigned long v;

        errno = 0;
        if (!isdigit((unsigned char) s[0]))
                return text_fail(p, "%s: \"%s\" is not a number", p->key, s);
        v = strtoul(s, &end, 10);
        if (errno != 0 || *end || v > max)
                return text_fail(p, "%s: \"%s\" is not a number up to %u", p->key, s, max);
        *ret = (unsigned) v;
        return 0;
}

static int text_mask(TextParser *p, const char *s, unsigned capacity, CpuMask **ret) {
        size_t pos = 0;
        int r = cpumask_parse(s, capacity, ret, &pos);

        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return text_fail(p, "%s: bad CPU list at \"%s\"", p->key, s + pos);
        return 0;
}

static int text_key_mask(TextParser *p, const char *key, unsigned capacity, CpuMask **ret) {
        int r = text_expect(p, key);

        return r < 0 ? r : text_mask(p, p->value, capacity, ret);
}

/* "ID CPUS" or "INDEX CPUS" */
static int text_index_mask(TextParser *p, unsigned max, unsigned *ret, CpuMask **ret_mask,
                           unsigned capacity) {
        char *sp = strchr(p->value, ' ');
        int r;

        if (sp)
                *sp = '\0';
        r = text_uint(p, p->value, max, ret);
        if (r < 0)
                return r;
        return text_mask(p, sp ? sp + 1 : "", capacity, ret_mask);
}

/* Online CPUs, each claimed once: table[cpu] is -1 until then. */
static int text_claim(TextParser *p, const Topology *t, const CpuMask *m, int *table, int value) {
        CPUMASK_FOREACH(cpu, m) {
                if (!cpumask_isset(t->online, (unsigned) cpu))
                        return text_fail(p, "%s: CPU %d is not online", p->key, cpu);
                if (table[cpu] >= 0)
                        return text_fail(p, "%s: CPU %d is in two", p->key, cpu);
                table[cpu] = value;
        }
        return 0;
}

static int text_header(TextParser *p, Topology *t) {
        unsigned v;
        int r;

        r = text_expect(p, "cgbalance-topology");
        if (r < 0)
                return r;
        if (!streq(p->value, "1"))
                return text_fail(p, "format \"%s\", this reads 1", p->value);
        r = text_expect(p, "source");
        if (r < 0)
                return r;
        t->source = strdup(p->value);
        if (!t->source)
                return -ENOMEM;
        r = text_expect(p, "capacity");
        if (r >= 0)
                r = text_uint(p, p->value, CPUMASK_MAX_CPUS, &t->cpu_capacity);
        if (r < 0)
                return r;
        if (t->cpu_capacity == 0)
                return text_fail(p, "capacity 0");
        if ((r = text_key_mask(p, "possible", t->cpu_capacity, &t->possible)) < 0 ||
            (r = text_key_mask(p, "online", t->cpu_capacity, &t->online)) < 0 ||
            (r = text_key_mask(p, "allowed", t->cpu_capacity, &t->allowed)) < 0 ||
            (r = text_key_mask(p, "isolated", t->cpu_capacity, &t->isolated)) < 0 ||
            (r = text_key_mask(p, "nohz_full", t->cpu_capacity, &t->nohz_full)) < 0)
                return r;
        if (!cpumask_is_subset(t->online, t->possible) || cpumask_is_empty(t->online))
                return text_fail(p, "online CPUs empty or not all possible");
        r = text_expect(p, "packages");
        if (r >= 0)
                r = text_uint(p, p->value, t->cpu_capacity, &t->n_packages);
        if (r < 0)
                return r;
        if (t->n_packages == 0)
                return text_fail(p, "packages 0");
        r = text_expect(p, "distance_source");
        if (r < 0)
                return r;
        for (v = 0; v < ELEMENTSOF(distance_source_keys); v++)
                if (streq(p->value, distance_source_keys[v]))
                        break;
        if (v == ELEMENTSOF(distance_source_keys))
                return text_fail(p, "unknown distance source \"%s\"", p->value);
        t->distance_source = (TopologyDistanceSource) v;
        t->usable = cpumask_new(t->cpu_capacity);
        t->cpu_node = cpu_array_new(t->cpu_capacity);
        t->cpu_core = cpu_array_new(t->cpu_capacity);
        t->cpu_package = cpu_array_new(t->cpu_capacity);
        t->node_ids = calloc(TOPOLOGY_MAX_NODES, sizeof *t->node_ids);
        t->node_cpus = calloc(TOPOLOGY_MAX_NODES, sizeof *t->node_cpus);
        t->node_capacity = calloc(TOPOLOGY_MAX_NODES, sizeof *t->node_capacity);
        if (!t->usable || !t->cpu_node || !t->cpu_core || !t->cpu_package || !t->node_ids ||
            !t->node_cpus || !t->node_capacity)
                return -ENOMEM;
        return 0;
}

static int text_nodes(TextParser *p, Topology *t) {
        _cleanup_free_ unsigned *d = NULL;
        unsigned n = 0, id;
        size_t pos = 0;
        int r;

        bool more;

        for (more = text_next(p); more && streq(p->key, "node"); more = text_next(p)) {
                CpuMask *m = NULL;

                if (t->n_nodes == TOPOLOGY_MAX_NODES)
                        return text_fail(p, "more than %u nodes", TOPOLOGY_MAX_NODES);
                r = text_index_mask(p, INT_MAX, &id, &m, t->cpu_capacity);
                if (r < 0)
                        return r;
                t->node_cpus[t->n_nodes++] = m;
                if (t->n_nodes > 1 && id <= t->node_ids[t->n_nodes - 2])
                        return text_fail(p, "node %u after node %u", id,
                                         t->node_ids[t->n_nodes - 2]);
                t->node_ids[t->n_nodes - 1] = id;
                r = text_claim(p, t, m, t->cpu_node, (int) id);
                if (r < 0)
                        return r;
        }
        if (!more)
                return text_fail(p, "ends before \"distances\"");
        if (t->n_nodes == 0)
                return text_fail(p, "no node");
        if (!streq(p->key, "distances"))
                return text_fail(p, "\"%s\" where \"distances\" belongs", p->key);
        r = topology_parse_distances(p->value, &d, &n, &pos);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || n != t->n_nodes)
                return text_fail(p, "distances: not a valid %ux%u matrix", t->n_nodes, t->n_nodes);
        t->distances = TAKE_PTR(d);
        return 0;
}

static int text_cores(TextParser *p, Topology *t) {
        unsigned slots = 0, index;
        bool more = text_next(p);
        int r;

        for (; more && streq(p->key, "core"); more = text_next(p)) {
                CpuMask *m = NULL;

                if (t->n_cores == slots) {
                        CpuMask **a = reallocarray(t->core_cpus, slots * 2 + 16, sizeof *a);

                        if (!a)
                                return -ENOMEM;
                        t->core_cpus = a;
                        slots = slots * 2 + 16;
                }
                r = text_mask(p, p->value, t->cpu_capacity, &m);
                if (r < 0)
                        return r;
                t->core_cpus[t->n_cores++] = m;
                if (cpumask_is_empty(m))
                        return text_fail(p, "an empty core");
                r = text_claim(p, t, m, t->cpu_core, (int) t->n_cores - 1);
                if (r < 0)
                        return r;
                if (cpumask_count(m) > t->max_cpus_per_core)
                        t->max_cpus_per_core = cpumask_count(m);
        }
        for (; more; more = text_next(p)) {
                _cleanup_(cpumask_freep) CpuMask *m = NULL;

                if (!streq(p->key, "package"))
                        return text_fail(p, "unknown key \"%s\"", p->key);
                r = text_index_mask(p, t->n_packages - 1, &index, &m, t->cpu_capacity);
                if (r >= 0)
                        r = text_claim(p, t, m, t->cpu_package, (int) index);
                if (r < 0)
                        return r;
        }
        return 0;
}

int topology_new_from_text(const char *text, Topology **ret, char *error, size_t error_size) {
        _cleanup_topology_ Topology *t = calloc(1, sizeof *t);
        _cleanup_free_ char *copy = strdup(text);
        TextParser p = { .cursor = copy, .error = error, .error_size = error_size };
        int r;

        if (!t || !copy)
                return -ENOMEM;
        r = text_header(&p, t);
        if (r >= 0)
                r = text_nodes(&p, t);
        if (r >= 0)
                r = text_cores(&p, t);
        if (r < 0)
                return r;
        finish(t);
        *ret = TAKE_PTR(t);
        return 0;
}
