/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The machine's CPUs, cores, packages and NUMA nodes, read once with hwloc and kept as plain
 * data, so the policy can ask about them without hwloc types (or hwloc itself) in sight.
 *
 * Numbering:
 *   - A CPU is its OS index (the N of /sys/devices/system/cpu/cpuN). Every CpuMask returned here
 *     has capacity topology_cpu_capacity().
 *   - A node is its OS index (the N of /sys/devices/system/node/nodeN), which may be sparse. Node
 *     indexes 0..topology_n_nodes()-1 list the nodes in ascending id order; they index the
 *     distance matrix. Parameters named `node` are ids, parameters named `i` are indexes.
 *   - Cores and packages are dense indexes 0..n-1 in hwloc's logical order (the kernel's core_id
 *     repeats in each package, so it is no identifier).
 *
 * CPU sets, from widest to narrowest:
 *   possible  every CPU the source knows of, online or not (hwloc's complete cpuset)
 *   online    possible CPUs that are online (hwloc found them, and the kernel's cpu/online
 *             agrees when the source has one); only these have a node, a core and a package
 *   allowed   online CPUs this process may use (its cpuset cgroup); all of them for synthetic
 *             and XML sources unless the XML says otherwise
 *   usable    allowed CPUs that are not isolated: where the balancer may place tasks
 * isolated and nohz_full are read from <root>/sys/devices/system/cpu/{isolated,nohz_full}; a
 * missing or empty file means none. Synthetic and XML sources have none. Offline CPUs are never
 * online, allowed or usable, even if a source file lists them.
 *
 * Every online CPU belongs to exactly one node: the lowest-numbered node hwloc places it under.
 * (Where several memory nodes share CPUs, e.g. high-bandwidth or CXL memory, the others show no
 * CPUs.) A node may have no CPUs.
 *
 * Distances are SLIT-style (10 = local), one per ordered pair of nodes, from, in order: the
 * distances hwloc has for the source (sysfs nodeN/distance, the XML's matrix, or the caller's
 * matrix for a synthetic topology); for the running system only, libnuma; otherwise 10 local and
 * TOPOLOGY_DEFAULT_REMOTE_DISTANCE remote. A matrix need not be symmetric.
 *
 * Constructors return 0 or a negative errno and write *ret only on success; they log at debug
 * level at most. topology_new_from_root() changes the process environment while it loads, so it
 * must not run while other threads read or write the environment. A Topology is immutable once
 * built: its queries are pure and may run from any thread.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cpumask.h"
#include "macro.h"

#define TOPOLOGY_LOCAL_DISTANCE 10u
#define TOPOLOGY_DEFAULT_REMOTE_DISTANCE 20u
/* The kernel's limits for a SLIT entry; 255 means unreachable. */
#define TOPOLOGY_MAX_DISTANCE 255u
/* More nodes than any kernel configuration allows (MAX_NUMNODES is at most 1024). */
#define TOPOLOGY_MAX_NODES 1024u

typedef struct Topology Topology;

typedef enum TopologyDistanceSource {
        TOPOLOGY_DISTANCES_DEFAULT, /* none known: 10 local, 20 remote */
        TOPOLOGY_DISTANCES_OS, /* the kernel's (sysfs), via hwloc, or an XML's from its OS */
        TOPOLOGY_DISTANCES_LIBNUMA, /* the running system, via libnuma: hwloc had none */
        TOPOLOGY_DISTANCES_USER, /* given by a caller (synthetic, or an XML that carries them) */
} TopologyDistanceSource;

/*
 * The running system. Returns -errno from hwloc (e.g. -ENOMEM), -EINVAL if hwloc describes a
 * machine this module cannot represent (more than CPUMASK_MAX_CPUS CPUs, a node without an OS
 * index), or an error from reading /sys/devices/system/cpu/{online,isolated,nohz_full}.
 * hwloc honours HWLOC_XMLFILE, HWLOC_SYNTHETIC and HWLOC_FSROOT in the environment (a way to
 * run the daemon against another machine's description): then neither libnuma nor the host's
 * sysfs lists are consulted, since they describe the real machine, and topology_source() says
 * "system, as redirected by HWLOC_* environment variables".
 */
int topology_new_from_system(Topology **ret);

/*
 * A Linux filesystem tree under root (a fake sysfs for tests, or a copy of another machine's):
 * hwloc reads root/sys/devices/system/{cpu,node}. hwloc 2.x takes the root only from the
 * HWLOC_FSROOT environment variable, so it is set for the load and then restored; hwloc's x86
 * backend is disabled so the host's CPUID does not leak into the fake machine. Returns -ENOENT if
 * root or root/sys/devices/system/cpu does not exist, -ENOTDIR, -EACCES, or as above.
 */
int topology_new_from_root(const char *root, Topology **ret);

/*
 * An hwloc synthetic description, e.g. "pack:4 numa:1 core:4 pu:1" (numa:N counts per parent, so
 * that is 4 nodes of 4 CPUs). distances is NULL (then the defaults apply), or an n x n row-major
 * matrix whose row i is the node with index i, as topology_parse_distances() gives. Returns
 * -EINVAL for a description hwloc rejects, -EINVAL if n is not the number of nodes or
 * topology_check_distances() rejects the matrix, -ENOMEM.
 */
int topology_new_from_synthetic(const char *description, const unsigned *distances, unsigned n,
                                Topology **ret);

/*
 * An hwloc XML file (lstopo --of xml, hwloc_topology_export_xml()); its distances are kept.
 * Returns -ENOENT, -EACCES, -EISDIR... from reading it, -EFBIG above 64 MiB, -EINVAL if hwloc
 * cannot parse it, or as above.
 */
int topology_new_from_xml(const char *path, Topology **ret);

Topology *topology_free(Topology *t); /* accepts NULL, returns NULL */
DEFINE_TRIVIAL_CLEANUP_FUNC(Topology *, topology_free);
#define _cleanup_topology_ _cleanup_(topology_freep)

/*
 * Parses a distance matrix: rows separated by ';', values in a row by ',', spaces and tabs around
 * values allowed: "10,20;20,10". Returns the n x n row-major matrix in *ret (caller frees) and n
 * in *ret_n. Returns -EINVAL for a syntax error, a row whose length differs from the number of
 * rows, or a matrix topology_check_distances() rejects; -ERANGE for a value above
 * TOPOLOGY_MAX_DISTANCE or more than TOPOLOGY_MAX_NODES rows; -ENOMEM. On error, if ret_errpos
 * is not NULL, it receives the offset in s of the bad value or row.
 */
int topology_parse_distances(const char *s, unsigned **ret, unsigned *ret_n, size_t *ret_errpos);

/*
 * Checks a row-major n x n matrix as the kernel checks a SLIT: 10 on the diagonal, 11..255
 * elsewhere; asymmetric matrices are allowed. Returns 0, or -EINVAL (n == 0 or too large, a bad
 * entry) and the index of the first bad entry in *ret_bad if that is not NULL.
 */
int topology_check_distances(const unsigned *distances, unsigned n, size_t *ret_bad);

/* Where it came from, for messages: "system", "root /path", "synthetic \"...\"", "xml /path". */
const char *topology_source(const Topology *t);

/* CPUs: capacity of every mask (highest possible CPU + 1), and the sets described above. */
unsigned topology_cpu_capacity(const Topology *t);
const CpuMask *topology_possible_cpus(const Topology *t);
const CpuMask *topology_online_cpus(const Topology *t);
const CpuMask *topology_allowed_cpus(const Topology *t);
const CpuMask *topology_isolated_cpus(const Topology *t);
const CpuMask *topology_nohz_full_cpus(const Topology *t);
const CpuMask *topology_usable_cpus(const Topology *t);
/* The number of online CPUs. */
unsigned topology_n_cpus(const Topology *t);

/* The node id, core index or package index of an online CPU; -ENOENT for any other CPU. */
int topology_cpu_node(const Topology *t, unsigned cpu);
int topology_cpu_core(const Topology *t, unsigned cpu);
int topology_cpu_package(const Topology *t, unsigned cpu);

unsigned topology_n_packages(const Topology *t);
unsigned topology_n_cores(const Topology *t);
/* The online CPUs of a core (its SMT siblings, itself included); NULL if core >= n_cores. */
const CpuMask *topology_core_cpus(const Topology *t, unsigned core);
/* The most online CPUs any core has (1 without SMT), and whether that is more than one. */
unsigned topology_max_cpus_per_core(const Topology *t);
bool topology_has_smt(const Topology *t);

unsigned topology_n_nodes(const Topology *t);
/* The id of the node with index i; -ERANGE if i >= n_nodes. */
int topology_node_id(const Topology *t, unsigned i);
/* The index of node; -ENOENT if there is no such node. */
int topology_node_index(const Topology *t, unsigned node);
/* The online CPUs of node, isolated ones included; NULL if there is no such node. */
const CpuMask *topology_node_cpus(const Topology *t, unsigned node);
/* How many of node's CPUs are usable: what the balancer can spread load over. 0 if no node. */
unsigned topology_node_capacity(const Topology *t, unsigned node);

/* The distance from node a to node b (ids); -ENOENT if either is not a node. */
int topology_node_distance(const Topology *t, unsigned a, unsigned b);
/* The whole matrix, n_nodes x n_nodes row-major, by node index. Valid while t lives. */
const unsigned *topology_distances(const Topology *t);
TopologyDistanceSource topology_distance_source(const Topology *t);
const char *topology_distance_source_to_string(TopologyDistanceSource s);

/*
 * A human-readable summary: source, CPU sets, packages, cores and SMT, each node's CPUs, and the
 * distance matrix. For --dump-topology. Returns 0, or -EIO if writing to f failed.
 */
int topology_dump(const Topology *t, FILE *f);

/*
 * The machine as text a recording keeps (cgbalance-record(5)): lines of "KEY VALUE", CPU sets as
 * cpulists ("" empty), in this order: "cgbalance-topology 1", source, capacity, possible, online,
 * allowed, isolated, nohz_full, packages, distance_source (default, os, libnuma, user), then per
 * node "node ID CPUS" (ascending ids), "distances" (rows ';', values ','), per core "core CPUS"
 * (index order), per package "package INDEX CPUS". Every set is within capacity; nodes and cores
 * hold online CPUs, each in at most one. topology_new_from_text() of that text is a topology equal
 * to t in everything the accessors above return. *ret is the text (caller frees); -ENOMEM.
 */
int topology_to_text(const Topology *t, char **ret);

/*
 * Parses topology_to_text()'s format. Returns -EINVAL for anything else (an unknown or missing key,
 * a bad set or number, an inconsistent machine: a node CPU offline or in two nodes, a matrix
 * topology_check_distances() rejects, ...), with "line N: why" in error (of size error_size, if not
 * NULL); -ENOMEM. The source is "recorded SOURCE".
 */
int topology_new_from_text(const char *text, Topology **ret, char *error, size_t error_size);
