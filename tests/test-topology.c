/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <hwloc.h>
#include <numa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "topology.h"

#define NUMAQ "pack:4 numa:1 core:4 pu:1"
#define TWO_SOCKET "pack:2 numa:4 core:16 pu:1"
#define SMT "pack:1 numa:2 core:4 pu:2"

static Topology *synthetic(const char *description, const char *distances) {
        _cleanup_free_ unsigned *d = NULL;
        Topology *t = NULL;
        unsigned n = 0;

        if (distances)
                cr_assert_eq(topology_parse_distances(distances, &d, &n, NULL), 0, "\"%s\"",
                             distances);
        cr_assert_eq(topology_new_from_synthetic(description, d, n, &t), 0, "\"%s\"", description);
        cr_assert_not_null(t);
        return t;
}

static Topology *from_root(const char *root) {
        Topology *t = NULL;

        cr_assert_eq(topology_new_from_root(root, &t), 0, "root %s", root);
        cr_assert_not_null(t);
        return t;
}

static Topology *from_fixture_root(const char *rel) {
        _cleanup_free_ char *root = fixture_path(rel);

        return from_root(root);
}

static void expect_cpus(const CpuMask *m, const char *expected, const char *what) {
        _cleanup_free_ char *s = NULL;

        cr_assert_not_null(m, "%s", what);
        cr_assert_eq(cpumask_format(m, &s), 0);
        cr_expect_str_eq(s, expected, "%s", what);
}

/* ---- the 4-node NUMAQ of seed 002 */

Test(topology, numaq_has_4_nodes_of_4_cpus) {
        _cleanup_topology_ Topology *t = synthetic(NUMAQ, NULL);

        cr_expect_eq(topology_n_nodes(t), 4);
        cr_expect_eq(topology_n_cpus(t), 16);
        cr_expect_eq(topology_n_packages(t), 4);
        for (unsigned i = 0; i < 4; i++) {
                cr_expect_eq(topology_node_id(t, i), (int) i);
                cr_expect_eq(topology_node_capacity(t, i), 4);
        }
        cr_expect_eq(topology_node_id(t, 4), -ERANGE);
        expect_cpus(topology_node_cpus(t, 2), "8-11", "node 2");
        cr_expect_null(topology_node_cpus(t, 4));
}

Test(topology, numaq_maps_cpus_to_nodes) {
        _cleanup_topology_ Topology *t = synthetic(NUMAQ, NULL);

        cr_expect_eq(topology_cpu_node(t, 13), 3);
        cr_expect_eq(topology_cpu_node(t, 0), 0);
        cr_expect_eq(topology_cpu_node(t, 7), 1);
        cr_expect_eq(topology_cpu_node(t, 16), -ENOENT);
        cr_expect_eq(topology_cpu_package(t, 13), 3);
}

Test(topology, synthetic_without_distances_gets_defaults) {
        _cleanup_topology_ Topology *t = synthetic(NUMAQ, NULL);

        cr_expect_eq(topology_distance_source(t), TOPOLOGY_DISTANCES_DEFAULT);
        for (unsigned a = 0; a < 4; a++)
                for (unsigned b = 0; b < 4; b++)
                        cr_expect_eq(topology_node_distance(t, a, b), a == b ? 10 : 20, "%u -> %u",
                                     a, b);
        cr_expect_eq(topology_node_distance(t, 0, 4), -ENOENT);
}

Test(topology, numaq_supplied_distances_are_reflected) {
        _cleanup_topology_ Topology *t =
                synthetic(NUMAQ, "10,20,30,40; 20,10,20,30; 30,20,10,20; 40,30,20,10");
        const unsigned *m = topology_distances(t);

        cr_expect_eq(topology_distance_source(t), TOPOLOGY_DISTANCES_USER);
        cr_expect_eq(topology_node_distance(t, 0, 3), 40);
        cr_expect_eq(topology_node_distance(t, 3, 0), 40);
        cr_expect_eq(topology_node_distance(t, 1, 2), 20);
        cr_expect_eq(topology_node_distance(t, 2, 0), 30);
        cr_expect_eq(m[0 * 4 + 3], 40);
        cr_expect_eq(m[2 * 4 + 2], 10);
}

Test(topology, asymmetric_distances_keep_their_direction) {
        _cleanup_topology_ Topology *t = synthetic("pack:2 numa:1 core:1 pu:1", "10,15;25,10");

        cr_expect_eq(topology_node_distance(t, 0, 1), 15);
        cr_expect_eq(topology_node_distance(t, 1, 0), 25);
}

Test(topology, numaq_has_no_smt) {
        _cleanup_topology_ Topology *t = synthetic(NUMAQ, NULL);

        cr_expect_not(topology_has_smt(t));
        cr_expect_eq(topology_max_cpus_per_core(t), 1);
        cr_expect_eq(topology_n_cores(t), 16);
        expect_cpus(topology_core_cpus(t, 5), "5", "core 5");
}

/* ---- a 2-socket, 8-node, 128-CPU machine */

Test(topology, two_socket_has_8_nodes_of_16_cpus) {
        _cleanup_topology_ Topology *t = synthetic(TWO_SOCKET, NULL);

        cr_expect_eq(topology_n_nodes(t), 8);
        cr_expect_eq(topology_n_cpus(t), 128);
        cr_expect_eq(topology_n_packages(t), 2);
        for (unsigned node = 0; node < 8; node++)
                cr_expect_eq(cpumask_count(topology_node_cpus(t, node)), 16, "node %u", node);
        expect_cpus(topology_node_cpus(t, 5), "80-95", "node 5");
        cr_expect_eq(topology_cpu_node(t, 127), 7);
        cr_expect_eq(topology_cpu_node(t, 16), 1);
        cr_expect_eq(topology_cpu_package(t, 63), 0);
        cr_expect_eq(topology_cpu_package(t, 64), 1);
}

Test(topology, two_socket_distances_read_back) {
        /* 10 local, 16 within a package, 32 across */
        static const char d[] = "10,16,16,16,32,32,32,32;"
                                "16,10,16,16,32,32,32,32;"
                                "16,16,10,16,32,32,32,32;"
                                "16,16,16,10,32,32,32,32;"
                                "32,32,32,32,10,16,16,16;"
                                "32,32,32,32,16,10,16,16;"
                                "32,32,32,32,16,16,10,16;"
                                "32,32,32,32,16,16,16,10";
        _cleanup_topology_ Topology *t = synthetic(TWO_SOCKET, d);

        cr_expect_eq(topology_distance_source(t), TOPOLOGY_DISTANCES_USER);
        for (unsigned a = 0; a < 8; a++)
                for (unsigned b = 0; b < 8; b++) {
                        int want = a == b ? 10 : a / 4 == b / 4 ? 16 : 32;

                        cr_expect_eq(topology_node_distance(t, a, b), want, "%u -> %u", a, b);
                }
}

/* ---- SMT */

Test(topology, smt_siblings_share_a_core) {
        _cleanup_topology_ Topology *t = synthetic(SMT, NULL);

        cr_expect(topology_has_smt(t));
        cr_expect_eq(topology_max_cpus_per_core(t), 2);
        cr_expect_eq(topology_n_cores(t), 8);
        cr_expect_eq(topology_n_cpus(t), 16);
        cr_expect_eq(topology_cpu_core(t, 5), 2);
        cr_expect_eq(topology_cpu_core(t, 4), 2);
        cr_expect_eq(topology_cpu_core(t, 6), 3);
        expect_cpus(topology_core_cpus(t, 2), "4-5", "core 2");
        cr_expect_null(topology_core_cpus(t, 8));
        expect_cpus(topology_node_cpus(t, 1), "8-15", "node 1");
}

/* ---- a fake sysfs with an offline CPU */

Test(topology, root_offline_cpu_is_never_usable) {
        _cleanup_topology_ Topology *t = from_fixture_root("topology/smt-offline");

        expect_cpus(topology_possible_cpus(t), "0-7", "possible");
        expect_cpus(topology_online_cpus(t), "0-6", "online");
        cr_expect_not(cpumask_isset(topology_usable_cpus(t), 7));
        cr_expect_not(cpumask_isset(topology_allowed_cpus(t), 7));
        cr_expect_eq(topology_n_cpus(t), 7);
        cr_expect_eq(topology_cpu_node(t, 7), -ENOENT);
        cr_expect_eq(topology_cpu_core(t, 7), -ENOENT);
        expect_cpus(topology_node_cpus(t, 1), "4-6", "node 1");
}

Test(topology, root_isolated_cpus_are_not_usable) {
        _cleanup_topology_ Topology *t = from_fixture_root("topology/smt-offline");

        expect_cpus(topology_isolated_cpus(t), "5", "isolated");
        expect_cpus(topology_nohz_full_cpus(t), "5-6", "nohz_full");
        expect_cpus(topology_usable_cpus(t), "0-4,6", "usable");
        cr_expect_eq(topology_node_capacity(t, 0), 4);
        cr_expect_eq(topology_node_capacity(t, 1), 2);
        /* Isolated CPUs still belong to their node. */
        cr_expect_eq(topology_cpu_node(t, 5), 1);
}

Test(topology, root_distances_come_from_sysfs) {
        _cleanup_topology_ Topology *t = from_fixture_root("topology/smt-offline");

        cr_expect_eq(topology_distance_source(t), TOPOLOGY_DISTANCES_OS);
        cr_expect_eq(topology_node_distance(t, 0, 1), 21);
        cr_expect_eq(topology_node_distance(t, 1, 1), 10);
}

Test(topology, root_smt_from_sibling_masks) {
        _cleanup_topology_ Topology *t = from_fixture_root("topology/smt-offline");

        cr_expect(topology_has_smt(t));
        cr_expect_eq(topology_max_cpus_per_core(t), 2);
        cr_expect_eq(topology_n_cores(t), 4);
        expect_cpus(topology_core_cpus(t, (unsigned) topology_cpu_core(t, 5)), "4-5", "cpu 5");
        /* Its sibling is offline. */
        expect_cpus(topology_core_cpus(t, (unsigned) topology_cpu_core(t, 6)), "6", "cpu 6");
}

Test(topology, root_describes_the_tree_not_the_host) {
        _cleanup_topology_ Topology *t = from_fixture_root("topology/smt-offline");

        /* Had hwloc read the host (HWLOC_FSROOT ignored), this would be its 1 node. */
        cr_expect_eq(topology_n_nodes(t), 2);
        cr_expect_eq(topology_n_packages(t), 1);
        cr_expect_eq(topology_cpu_capacity(t), 8);
}

Test(topology, root_kernel_online_list_wins) {
        _cleanup_free_ char *tmp = make_tmpdir();
        _cleanup_close_ int fd = -EBADF;
        _cleanup_topology_ Topology *t = NULL;

        copy_fixture("topology/smt-offline", tmp);
        fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(fd, 0);
        /* CPU 6 goes offline: the kernel drops it from the online list and its node. */
        write_file_at(fd, "sys/devices/system/cpu/online", "0-5\n");
        write_file_at(fd, "sys/devices/system/cpu/cpu6/online", "0\n");
        write_file_at(fd, "sys/devices/system/node/node1/cpumap", "30\n");
        t = from_root(tmp);
        expect_cpus(topology_online_cpus(t), "0-5", "online");
        expect_cpus(topology_usable_cpus(t), "0-4", "usable");
        cr_expect_eq(topology_cpu_node(t, 6), -ENOENT);
        cr_expect_eq(topology_n_cores(t), 3);
        rm_rf(tmp);
}

Test(topology, root_empty_or_missing_isolated_means_none) {
        _cleanup_free_ char *tmp = make_tmpdir();
        _cleanup_close_ int fd = -EBADF;
        _cleanup_topology_ Topology *t = NULL;

        copy_fixture("topology/smt-offline", tmp);
        fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(fd, 0);
        write_file_at(fd, "sys/devices/system/cpu/isolated", "\n");
        cr_assert_eq(unlinkat(fd, "sys/devices/system/cpu/nohz_full", 0), 0);
        t = from_root(tmp);
        cr_expect(cpumask_is_empty(topology_isolated_cpus(t)));
        cr_expect(cpumask_is_empty(topology_nohz_full_cpus(t)));
        expect_cpus(topology_usable_cpus(t), "0-6", "usable");
        rm_rf(tmp);
}

/* Debian's kernel booted without nohz_full= prints its unallocated mask as "  (null)". */
Test(topology, root_null_nohz_full_means_none) {
        _cleanup_free_ char *tmp = make_tmpdir();
        _cleanup_close_ int fd = -EBADF;
        _cleanup_topology_ Topology *t = NULL;

        copy_fixture("topology/smt-offline", tmp);
        fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(fd, 0);
        write_file_at(fd, "sys/devices/system/cpu/nohz_full", "  (null)\n");
        t = from_root(tmp);
        cr_expect(cpumask_is_empty(topology_nohz_full_cpus(t)));
        expect_cpus(topology_usable_cpus(t), "0-4,6", "usable"); /* 5 is still isolated */
        rm_rf(tmp);
}

Test(topology, root_malformed_isolated_is_an_error) {
        _cleanup_free_ char *tmp = make_tmpdir();
        _cleanup_close_ int fd = -EBADF;
        Topology *t = NULL;

        copy_fixture("topology/smt-offline", tmp);
        fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(fd, 0);
        write_file_at(fd, "sys/devices/system/cpu/isolated", "5-\n");
        cr_expect_eq(topology_new_from_root(tmp, &t), -EINVAL);
        cr_expect_null(t);
        rm_rf(tmp);
}

Test(topology, root_restores_hwloc_fsroot) {
        _cleanup_topology_ Topology *a = NULL, *b = NULL;

        cr_assert_eq(unsetenv("HWLOC_FSROOT"), 0);
        a = from_fixture_root("topology/smt-offline");
        cr_expect_null(getenv("HWLOC_FSROOT"));

        cr_assert_eq(setenv("HWLOC_FSROOT", "/sentinel", 1), 0);
        b = from_fixture_root("topology/smt-offline");
        cr_assert_not_null(getenv("HWLOC_FSROOT"));
        cr_expect_str_eq(getenv("HWLOC_FSROOT"), "/sentinel");
}

Test(topology, root_that_is_no_sysfs_is_enoent) {
        _cleanup_free_ char *tmp = make_tmpdir();
        Topology *t = NULL;

        cr_expect_eq(topology_new_from_root("/nonexistent/cgbalance", &t), -ENOENT);
        cr_expect_eq(topology_new_from_root(tmp, &t), -ENOENT);
        cr_expect_eq(topology_new_from_root("/dev/null", &t), -ENOTDIR);
        cr_expect_null(t);
        rm_rf(tmp);
}

/* ---- XML */

Test(topology, xml_fixture_nodes_come_in_os_order) {
        _cleanup_free_ char *path = fixture_path("topology/sparse-nodes.xml");
        _cleanup_topology_ Topology *t = NULL;

        /* hwloc's logical order there is node 2, then node 0. */
        cr_assert_eq(topology_new_from_xml(path, &t), 0);
        cr_expect_eq(topology_n_nodes(t), 2);
        cr_expect_eq(topology_node_id(t, 0), 0);
        cr_expect_eq(topology_node_id(t, 1), 2);
        cr_expect_eq(topology_node_index(t, 2), 1);
        cr_expect_eq(topology_node_index(t, 1), -ENOENT);
        cr_expect_eq(topology_cpu_node(t, 0), 2);
        cr_expect_eq(topology_cpu_node(t, 2), 0);
        expect_cpus(topology_node_cpus(t, 2), "0-1", "node 2");
        cr_expect_eq(topology_cpu_package(t, 2), 1);
}

Test(topology, xml_fixture_keeps_its_distances) {
        _cleanup_free_ char *path = fixture_path("topology/sparse-nodes.xml");
        _cleanup_topology_ Topology *t = NULL;

        cr_assert_eq(topology_new_from_xml(path, &t), 0);
        cr_expect_eq(topology_distance_source(t), TOPOLOGY_DISTANCES_OS);
        cr_expect_eq(topology_node_distance(t, 0, 2), 30);
        cr_expect_eq(topology_node_distance(t, 2, 0), 40);
        cr_expect_eq(topology_node_distance(t, 2, 2), 10);
        cr_expect_eq(topology_distances(t)[1 * 2 + 0], 40);
}

Test(topology, xml_fixture_offline_and_disallowed_cpus) {
        _cleanup_free_ char *path = fixture_path("topology/sparse-nodes.xml");
        _cleanup_topology_ Topology *t = NULL;

        cr_assert_eq(topology_new_from_xml(path, &t), 0);
        expect_cpus(topology_possible_cpus(t), "0-3", "possible");
        expect_cpus(topology_online_cpus(t), "0-2", "online");
        expect_cpus(topology_allowed_cpus(t), "0-1", "allowed");
        expect_cpus(topology_usable_cpus(t), "0-1", "usable");
        cr_expect_eq(topology_cpu_node(t, 3), -ENOENT);
        /* CPU 2 is online but not ours to use: it stays on its node, which gets no capacity. */
        expect_cpus(topology_node_cpus(t, 0), "2", "node 0");
        cr_expect_eq(topology_node_capacity(t, 0), 0);
        cr_expect_eq(topology_node_capacity(t, 2), 2);
}

Test(topology, xml_cpus_shared_by_memory_nodes_go_to_the_first) {
        _cleanup_free_ char *path = fixture_path("topology/shared-cpus.xml");
        _cleanup_topology_ Topology *t = NULL;

        cr_assert_eq(topology_new_from_xml(path, &t), 0);
        cr_expect_eq(topology_n_nodes(t), 2);
        expect_cpus(topology_node_cpus(t, 0), "0-1", "node 0");
        cr_expect(cpumask_is_empty(topology_node_cpus(t, 1)));
        cr_expect_eq(topology_node_capacity(t, 1), 0);
        cr_expect_eq(topology_cpu_node(t, 1), 0);
        /* No matrix in the file: the defaults. */
        cr_expect_eq(topology_distance_source(t), TOPOLOGY_DISTANCES_DEFAULT);
        cr_expect_eq(topology_node_distance(t, 0, 1), 20);
}

/* Writes what hwloc itself exports for a synthetic machine with the given distances. */
static void export_xml(const char *description, const hwloc_uint64_t *values, unsigned n,
                       const char *path) {
        hwloc_topology_t h;
        hwloc_obj_t nodes[8];
        hwloc_distances_add_handle_t handle;

        cr_assert_leq(n, ELEMENTSOF(nodes));
        cr_assert_eq(hwloc_topology_init(&h), 0);
        cr_assert_eq(hwloc_topology_set_synthetic(h, description), 0);
        cr_assert_eq(hwloc_topology_load(h), 0);
        for (unsigned i = 0; i < n; i++)
                cr_assert_not_null(nodes[i] = hwloc_get_numanode_obj_by_os_index(h, i));
        handle = hwloc_distances_add_create(
                h, "NUMALatency", HWLOC_DISTANCES_KIND_FROM_OS | HWLOC_DISTANCES_KIND_MEANS_LATENCY,
                0);
        cr_assert_not_null(handle);
        cr_assert_eq(hwloc_distances_add_values(h, handle, n, nodes, (hwloc_uint64_t *) values, 0),
                     0);
        cr_assert_eq(hwloc_distances_add_commit(h, handle, 0), 0);
        cr_assert_eq(hwloc_topology_export_xml(h, path, 0), 0);
        hwloc_topology_destroy(h);
}

Test(topology, xml_exported_by_hwloc_round_trips) {
        static const hwloc_uint64_t d[] = { 10, 12, 22, 22, 12, 10, 22, 22,
                                            22, 22, 10, 12, 22, 22, 12, 10 };
        _cleanup_free_ char *tmp = make_tmpdir(), *path = NULL;
        _cleanup_topology_ Topology *t = NULL;

        cr_assert_gt(asprintf(&path, "%s/numa.xml", tmp), 0);
        export_xml("pack:2 numa:2 core:2 pu:2", d, 4, path);
        cr_assert_eq(topology_new_from_xml(path, &t), 0);
        cr_expect_eq(topology_n_nodes(t), 4);
        cr_expect_eq(topology_n_cpus(t), 16);
        cr_expect(topology_has_smt(t));
        expect_cpus(topology_node_cpus(t, 3), "12-15", "node 3");
        cr_expect_eq(topology_distance_source(t), TOPOLOGY_DISTANCES_OS);
        for (unsigned a = 0; a < 4; a++)
                for (unsigned b = 0; b < 4; b++)
                        cr_expect_eq(topology_node_distance(t, a, b), (int) d[a * 4 + b],
                                     "%u -> %u", a, b);
        rm_rf(tmp);
}

Test(topology, xml_missing_or_malformed_is_an_error) {
        _cleanup_free_ char *tmp = make_tmpdir();
        _cleanup_close_ int fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ char *bad = NULL;
        Topology *t = NULL;

        cr_assert_geq(fd, 0);
        cr_expect_eq(topology_new_from_xml("/nonexistent/topology.xml", &t), -ENOENT);
        cr_expect_eq(topology_new_from_xml(tmp, &t), -EISDIR);
        write_file_at(fd, "bad.xml", "<topology version=\"2.0\"><object type=\"Machine\"");
        cr_assert_gt(asprintf(&bad, "%s/bad.xml", tmp), 0);
        cr_expect_eq(topology_new_from_xml(bad, &t), -EINVAL);
        cr_expect_null(t);
        rm_rf(tmp);
}

/* ---- malformed synthetic descriptions and matrices */

Test(topology, synthetic_rejects_bad_descriptions) {
        static const char *const bad[] = {
                "",
                "pack:x",
                "pack:4 numa:1 bogus:4 pu:1",
                "pack:0 pu:1",
                "pack:4 numa:1 core:4 pu:1 )",
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                Topology *t = NULL;

                cr_expect_eq(topology_new_from_synthetic(bad[i], NULL, 0, &t), -EINVAL, "\"%s\"",
                             bad[i]);
                cr_expect_null(t, "\"%s\"", bad[i]);
        }
}

Test(topology, synthetic_rejects_distances_of_the_wrong_size) {
        static const unsigned two[] = { 10, 20, 20, 10 };
        static const unsigned bad_diagonal[] = { 10, 20, 20, 10, 20, 20, 20, 20,
                                                 11, 20, 20, 20, 20, 20, 20, 10 };
        Topology *t = NULL;

        cr_expect_eq(topology_new_from_synthetic(NUMAQ, two, 2, &t), -EINVAL);
        cr_expect_eq(topology_new_from_synthetic(NUMAQ, bad_diagonal, 4, &t), -EINVAL);
        cr_expect_null(t);
}

Test(topology, parse_distances_accepts_matrices) {
        static const struct {
                const char *in;
                unsigned n;
                unsigned values[4];
        } cases[] = {
                { "10", 1, { 10 } },
                { "10,20;20,10", 2, { 10, 20, 20, 10 } },
                { " 10 , 21 ; 21 , 10\n", 2, { 10, 21, 21, 10 } },
                { "10,11;255,10", 2, { 10, 11, 255, 10 } },
                { "10,\t12;\t14,10", 2, { 10, 12, 14, 10 } },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ unsigned *d = NULL;
                unsigned n = 0;

                cr_assert_eq(topology_parse_distances(cases[i].in, &d, &n, NULL), 0, "\"%s\"",
                             cases[i].in);
                cr_expect_eq(n, cases[i].n, "\"%s\"", cases[i].in);
                for (unsigned k = 0; k < n * n; k++)
                        cr_expect_eq(d[k], cases[i].values[k], "\"%s\"[%u]", cases[i].in, k);
        }
}

Test(topology, parse_distances_rejects_malformed_with_position) {
        static const struct {
                const char *in;
                int err;
                size_t pos;
        } cases[] = {
                { "", -EINVAL, 0 },
                { ";", -EINVAL, 0 },
                { "10,20", -EINVAL, 5 }, /* one row of two: the second is due */
                { "10,20;20", -EINVAL, 8 }, /* short row */
                { "10,20,30;20,10", -EINVAL, 14 }, /* the first row sets the size */
                { "10,20;20,10,30", -EINVAL, 12 }, /* long row: at the extra value */
                { "10,20;20,10;", -EINVAL, 11 }, /* a third row */
                { "10,x;20,10", -EINVAL, 3 },
                { "10,-20;20,10", -EINVAL, 3 },
                { "10,+20;20,10", -EINVAL, 3 },
                { "10,20;20,10 x", -EINVAL, 12 },
                { "10 20;20,10", -EINVAL, 3 }, /* missing comma */
                { "10,,20;20,10", -EINVAL, 3 },
                { "10,256;20,10", -ERANGE, 3 },
                { "10,99999999999999999999999;20,10", -ERANGE, 3 },
                { "11,20;20,10", -EINVAL, 0 }, /* diagonal must be 10 */
                { "10,20;20, 0", -EINVAL, 10 },
                { "10,10;20,10", -EINVAL, 3 }, /* remote must be further than local */
                { "10,5;20,10", -EINVAL, 3 },
                { "10,20.5;20,10", -EINVAL, 5 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                unsigned *d = NULL;
                unsigned n = 999;
                size_t pos = 999;

                cr_expect_eq(topology_parse_distances(cases[i].in, &d, &n, &pos), cases[i].err,
                             "\"%s\"", cases[i].in);
                cr_expect_eq(pos, cases[i].pos, "\"%s\": error at %zu", cases[i].in, pos);
                cr_expect_null(d, "\"%s\" wrote the result on failure", cases[i].in);
                cr_expect_eq(n, 999, "\"%s\" wrote n on failure", cases[i].in);
        }
}

Test(topology, parse_distances_limits_rows) {
        /* A first row of TOPOLOGY_MAX_NODES + 1 values: "10,11,11,...". */
        size_t len = (TOPOLOGY_MAX_NODES + 1) * 3;
        _cleanup_free_ char *s = malloc(len);
        unsigned *d = NULL;
        unsigned n = 0;
        size_t pos = 999;

        cr_assert_not_null(s);
        for (size_t i = 0; i < TOPOLOGY_MAX_NODES + 1; i++)
                memcpy(s + i * 3, i == 0 ? "10," : "11,", 3);
        s[len - 1] = '\0';
        cr_expect_eq(topology_parse_distances(s, &d, &n, &pos), -ERANGE);
        cr_expect_eq(pos, 0);
        cr_expect_null(d);
}

Test(topology, check_distances_points_at_the_bad_entry) {
        static const unsigned m[] = { 10, 20, 20, 20, 10, 20, 20, 300, 10 };
        size_t bad = 99;

        cr_expect_eq(topology_check_distances(m, 3, &bad), -EINVAL);
        cr_expect_eq(bad, 7);
        cr_expect_eq(topology_check_distances(m, 2, NULL), -EINVAL); /* m[2]=20 is row 1 col 0 */
        cr_expect_eq(topology_check_distances(m, 0, NULL), -EINVAL);
}

/* ---- the running system */

Test(topology, system_online_cpus_match_sysconf) {
        _cleanup_topology_ Topology *t = NULL;

        cr_assert_eq(topology_new_from_system(&t), 0);
        cr_expect_geq(topology_n_nodes(t), 1);
        cr_expect_eq(topology_n_cpus(t), (unsigned) sysconf(_SC_NPROCESSORS_ONLN));
        cr_expect_str_eq(topology_source(t), "system");
}

Test(topology, system_every_online_cpu_has_a_node) {
        _cleanup_topology_ Topology *t = NULL;
        unsigned in_nodes = 0;

        cr_assert_eq(topology_new_from_system(&t), 0);
        CPUMASK_FOREACH(cpu, topology_online_cpus(t)) {
                int node = topology_cpu_node(t, (unsigned) cpu);

                cr_expect_geq(node, 0, "cpu %d", cpu);
                cr_expect_geq(topology_node_index(t, (unsigned) node), 0, "cpu %d", cpu);
                cr_expect(cpumask_isset(topology_node_cpus(t, (unsigned) node), (unsigned) cpu));
                cr_expect_geq(topology_cpu_core(t, (unsigned) cpu), 0, "cpu %d", cpu);
        }
        for (unsigned i = 0; i < topology_n_nodes(t); i++)
                in_nodes += cpumask_count(topology_node_cpus(t, (unsigned) topology_node_id(t, i)));
        cr_expect_eq(in_nodes, topology_n_cpus(t), "nodes partition the online CPUs");
}

/* hwloc keeps no matrix for one node, so there libnuma supplies it; it must agree anyway. */
Test(topology, system_distances_agree_with_libnuma) {
        _cleanup_topology_ Topology *t = NULL;
        TopologyDistanceSource want;
        unsigned n;

        cr_assert_eq(topology_new_from_system(&t), 0);
        n = topology_n_nodes(t);
        if (numa_available() < 0)
                want = n == 1 ? TOPOLOGY_DISTANCES_DEFAULT : TOPOLOGY_DISTANCES_OS;
        else
                want = n == 1 ? TOPOLOGY_DISTANCES_LIBNUMA : TOPOLOGY_DISTANCES_OS;
        cr_expect_eq(topology_distance_source(t), want, "source %d", topology_distance_source(t));
        for (unsigned a = 0; a < n; a++)
                for (unsigned b = 0; b < n; b++) {
                        int na = topology_node_id(t, a), nb = topology_node_id(t, b);
                        int d = topology_node_distance(t, (unsigned) na, (unsigned) nb);

                        if (a == b)
                                cr_expect_eq(d, 10, "node %d", na);
                        if (numa_available() >= 0)
                                cr_expect_eq(d, numa_distance(na, nb), "%d -> %d", na, nb);
                }
}

/* A developer may point hwloc at another machine; libnuma still describes this one. */
Test(topology, system_redirected_by_environment_gets_no_libnuma) {
        _cleanup_topology_ Topology *t = NULL;

        /* One node, so libnuma would have an answer (node 0 to node 0) if it were asked. */
        cr_assert_eq(setenv("HWLOC_SYNTHETIC", "pack:1 numa:1 core:3 pu:1", 1), 0);
        cr_assert_eq(topology_new_from_system(&t), 0);
        cr_expect_eq(topology_n_nodes(t), 1);
        cr_expect_eq(topology_n_cpus(t), 3);
        cr_expect_eq(topology_distance_source(t), TOPOLOGY_DISTANCES_DEFAULT);
        cr_expect_str_eq(topology_source(t),
                         "system, as redirected by HWLOC_* environment variables");
}

/* ---- dump */

Test(topology, dump_shows_nodes_and_distances) {
        _cleanup_topology_ Topology *t = from_fixture_root("topology/smt-offline");
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        cr_assert_not_null(f);
        cr_expect_eq(topology_dump(t, f), 0);
        cr_assert_eq(fclose(f), 0);
        cr_expect_not_null(strstr(buf, "cpus: 7 online of 8 possible\n"), "%s", buf);
        cr_expect_not_null(strstr(buf, "  isolated   5 (1)\n"), "%s", buf);
        cr_expect_not_null(strstr(buf, "  usable     0-4,6 (6)\n"), "%s", buf);
        cr_expect_not_null(strstr(buf, "cores: 4, smt: yes, up to 2 cpus per core\n"), "%s", buf);
        cr_expect_not_null(strstr(buf, "  node 1: cpus 4-6 (3), 2 usable\n"), "%s", buf);
        cr_expect_not_null(strstr(buf, "distances (os):\n"), "%s", buf);
        cr_expect_not_null(strstr(buf, "      1   21   10\n"), "%s", buf);
}

Test(topology, free_accepts_null) {
        cr_expect_null(topology_free(NULL));
}
