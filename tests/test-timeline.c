/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* json-c's typedef json_bool and lib/json.h's function json_bool() share a name: rename the
 * typedef here (a type name is no symbol, so nothing changes at link time). */
#define json_bool json_c_bool
#include <json-c/json.h>
#undef json_bool

#include "clock.h"
#include "testutil.h"
#include "timeline.h"

/* ---- the line parser */

typedef struct LineCase {
        const char *line;
        TimelineEventKind kind;
        const char *name; /* the comm or cgroup expected */
        int64_t pid, from, to;
} LineCase;

#define REASON                                                                                     \
        "node 0 load 2.00 on 2 CPUs (1.00/CPU) vs node 1 0.00 on 2 (0.00/CPU): ratio inf > 125%, " \
        "gap 2.00 > 1, for 2.0s; task 1.00"
#define WREASON "pressure 31.40% > 10.00% for 3.0s: up 50, max 1000"

static const LineCase line_cases[] = {
        /* what cgbalanced writes on stderr */
        { "cgbalanced: Moved pid 1234 (spinner) node 0 -> 1, CPUs 2-3: " REASON "\n",
          TIMELINE_EVENT_MOVE, "spinner", 1234, 0, 1 },
        { "Moved pid 1234 (spinner) node 0 -> 1, CPUs 2-3: " REASON, TIMELINE_EVENT_MOVE, "spinner",
          1234, 0, 1 },
        { "cgbalanced: Moved pid 7 (cc1) node 3 -> 0, CPUs 0,2,4-5: mask 4-7 is part of node 1 "
          "(4-7): CPU 4 at 1.00 vs CPU 5 at 0.00 > 125%",
          TIMELINE_EVENT_MOVE, "cc1", 7, 3, 0 },
        { "cgbalanced: Set the weight of cgbalance.slice/loadgen-12/job 100 -> 150: " WREASON "\n",
          TIMELINE_EVENT_WEIGHT, "cgbalance.slice/loadgen-12/job", 0, 100, 150 },
        { "Set the weight of a 10000 -> 1: no longer protected: back toward base 1",
          TIMELINE_EVENT_WEIGHT, "a", 0, 10000, 1 },
        /* comms and paths that look like the format */
        { "cgbalanced: Moved pid 99 (Web Content) node 1 -> 0, CPUs 0-1: " REASON,
          TIMELINE_EVENT_MOVE, "Web Content", 99, 1, 0 },
        { "cgbalanced: Moved pid 5 ((sd-pam)) node 0 -> 1, CPUs 1: " REASON, TIMELINE_EVENT_MOVE,
          "(sd-pam)", 5, 0, 1 },
        { "cgbalanced: Moved pid 5 (x) node 7 -> 8, CPUs 3: y) node 0 -> 1, CPUs 0-1: " REASON,
          TIMELINE_EVENT_MOVE, "x) node 7 -> 8, CPUs 3: y", 5, 0, 1 },
        { "cgbalanced: Moved pid 5 (a) node 9) node 1 -> 0, CPUs 0: " REASON, TIMELINE_EVENT_MOVE,
          "a) node 9", 5, 1, 0 },
        { "cgbalanced: Moved pid 5 ()) node 1 -> 0, CPUs 0:", TIMELINE_EVENT_MOVE, ")", 5, 1, 0 },
        { "Moved pid 5 (x) node 0 -> 1, CPUs 0-1:\n", TIMELINE_EVENT_MOVE, "x", 5, 0, 1 },
        { "Moved pid 2147483647 (x) node 2147483647 -> 0, CPUs 0: r", TIMELINE_EVENT_MOVE, "x",
          2147483647, 2147483647, 0 },
        { "cgbalanced: Set the weight of my group 1 -> 2: x 100 -> 150: " WREASON,
          TIMELINE_EVENT_WEIGHT, "my group 1 -> 2: x", 0, 100, 150 },
        { "cgbalanced: Set the weight of a (b) 1 -> 4294967295:", TIMELINE_EVENT_WEIGHT, "a (b)", 0,
          1, 4294967295 },
        /* 63 bytes of comm is the most the daemon prints */
        { "Moved pid 1 (123456789012345678901234567890123456789012345678901234567890123) node 0 "
          "-> 1, CPUs 0: r",
          TIMELINE_EVENT_MOVE, "123456789012345678901234567890123456789012345678901234567890123", 1,
          0, 1 },
        /* not a move or weight line, or a broken one */
        { "Moved pid 1 (1234567890123456789012345678901234567890123456789012345678901234) node 0 "
          "-> 1, CPUs 0: r",
          TIMELINE_EVENT_NONE },
        { NULL, TIMELINE_EVENT_NONE },
        { "", TIMELINE_EVENT_NONE },
        { "\n", TIMELINE_EVENT_NONE },
        { "cgbalanced: ", TIMELINE_EVENT_NONE },
        { "cgbalanced: Moved pid ", TIMELINE_EVENT_NONE },
        { "cgbalanced: Moved pid 12 (x) node 0 -> ", TIMELINE_EVENT_NONE },
        { "cgbalanced: Moved pid 12 (x) node 0 -> 1, CPUs ", TIMELINE_EVENT_NONE },
        { "cgbalanced: Moved pid 12 (x) node 0 -> 1, CPUs 0-1", TIMELINE_EVENT_NONE },
        { "cgbalanced: Moved pid 12 (x) node 0 -> 1, CPUs : r", TIMELINE_EVENT_NONE },
        { "cgbalanced: Moved pid 12 (x) node 0 -> 1, CPUs 0-1:r", TIMELINE_EVENT_NONE },
        { "cgbalanced: Moved pid 12 (x) node 0 -> 1 CPUs 0-1: r", TIMELINE_EVENT_NONE },
        { "cgbalanced: Moved pid 12 (x) node -1 -> 1, CPUs 0-1: r", TIMELINE_EVENT_NONE },
        { "cgbalanced: Moved pid 12 (x) node 0 -> 2147483648, CPUs 0-1: r", TIMELINE_EVENT_NONE },
        { "cgbalanced: Moved pid 0 (x) node 0 -> 1, CPUs 0-1: r", TIMELINE_EVENT_NONE },
        { "cgbalanced: Moved pid -5 (x) node 0 -> 1, CPUs 0-1: r", TIMELINE_EVENT_NONE },
        { "cgbalanced: Moved pid 2147483648 (x) node 0 -> 1, CPUs 0-1: r", TIMELINE_EVENT_NONE },
        { "cgbalanced: Moved pid 99999999999999999999999 (x) node 0 -> 1, CPUs 0: r",
          TIMELINE_EVENT_NONE },
        { "cgbalanced: Moved pid 12 x) node 0 -> 1, CPUs 0-1: r", TIMELINE_EVENT_NONE },
        { "cgbalanced: Moved pid 12 () node 0 -> 1, CPUs 0-1: r", TIMELINE_EVENT_NONE },
        { "cgbalanced: Moved pid 12 (x node 0 -> 1, CPUs 0-1: r", TIMELINE_EVENT_NONE },
        { "cgbalanced: moved pid 12 (x) node 0 -> 1, CPUs 0-1: r", TIMELINE_EVENT_NONE },
        { "cg balanced: Moved pid 12 (x) node 0 -> 1, CPUs 0-1: r", TIMELINE_EVENT_NONE },
        { "cgbalanced:Moved pid 12 (x) node 0 -> 1, CPUs 0-1: r", TIMELINE_EVENT_NONE },
        { " Moved pid 12 (x) node 0 -> 1, CPUs 0-1: r", TIMELINE_EVENT_NONE },
        { "cgbalanced: move pid 1234 (comm) node 0 -> 1 mask 4-7: " REASON, TIMELINE_EVENT_NONE },
        { "cgbalanced: pid 5 (x): not permitted to set its affinity, no longer managed",
          TIMELINE_EVENT_NONE },
        { "cgbalancectl: TaskMoved pid 123 node 0 -> node 1: node 0 busy", TIMELINE_EVENT_NONE },
        { "cgbalanced: Set the weight of  -> 150: r", TIMELINE_EVENT_NONE },
        { "cgbalanced: Set the weight of ", TIMELINE_EVENT_NONE },
        { "cgbalanced: Set the weight of x 100 -> 150", TIMELINE_EVENT_NONE },
        { "cgbalanced: Set the weight of x 100 -> -1: r", TIMELINE_EVENT_NONE },
        { "cgbalanced: Set the weight of x 100 -> 4294967296: r", TIMELINE_EVENT_NONE },
        { "cgbalanced: Set the weight of  100 -> 150: r", TIMELINE_EVENT_NONE },
        { "cgbalanced: Set the weight of x100 -> 150: r", TIMELINE_EVENT_NONE },
        { "cgbalanced: Plan sets weight 150 on group #3 (x): ignoring", TIMELINE_EVENT_NONE },
};

Test(timeline_parse, table) {
        for (size_t i = 0; i < sizeof line_cases / sizeof *line_cases; i++) {
                const LineCase *c = &line_cases[i];
                TimelineEvent e = { .pid = -42 };
                TimelineEventKind k = timeline_parse_daemon_line(c->line, &e);

                cr_expect_eq(k, c->kind, "case %zu \"%s\": kind %d, want %d", i,
                             c->line ? c->line : "(null)", k, c->kind);
                if (k != c->kind)
                        continue;
                if (k == TIMELINE_EVENT_NONE) {
                        cr_expect_eq(e.pid, -42, "case %zu: *ret written on no match", i);
                        continue;
                }
                cr_expect_eq(e.kind, k, "case %zu", i);
                cr_expect_eq(e.name_len, strlen(c->name), "case %zu: name length %zu, want %zu", i,
                             e.name_len, strlen(c->name));
                cr_expect(strncmp(e.name, c->name, e.name_len) == 0, "case %zu: name \"%.*s\"", i,
                          (int) e.name_len, e.name);
                cr_expect_eq(e.from, c->from, "case %zu: from %" PRId64, i, e.from);
                cr_expect_eq(e.to, c->to, "case %zu: to %" PRId64, i, e.to);
                if (k == TIMELINE_EVENT_MOVE)
                        cr_expect_eq((int64_t) e.pid, c->pid, "case %zu: pid %d", i, (int) e.pid);
        }
}

/* Every prefix of a real line is a cut line: none is a move but the whole (and its reason's
 * prefixes past the ':' and blank). */
Test(timeline_parse, cut_lines) {
        const char *line = "cgbalanced: Moved pid 1234 (a b) node 0 -> 1, CPUs 2-3: r";
        size_t whole = strlen(line), fixed = strlen("cgbalanced: Moved pid 1234 (a b) node 0 -> "
                                                    "1, CPUs 2-3:");

        for (size_t n = 0; n <= whole; n++) {
                char *cut = strndup(line, n);
                TimelineEvent e;

                cr_assert_not_null(cut);
                cr_expect_eq(timeline_parse_daemon_line(cut, &e),
                             n >= fixed ? TIMELINE_EVENT_MOVE : TIMELINE_EVENT_NONE,
                             "prefix of %zu bytes: \"%s\"", n, cut);
                free(cut);
        }
}

/* ---- sampling: a fixture /proc written into a temporary directory, stat by stat */

typedef struct Fake {
        char *dir;
        int fd;
        Topology *topo;
        Timeline *tl;
} Fake;

static void fake_stat(Fake *f, const char *fixture) {
        _cleanup_free_ char *path = fixture_path(fixture), *text = read_all(path);

        cr_assert_gt(strlen(text), 0, "fixture %s is empty or missing", fixture);
        write_file_at(f->fd, "stat", text);
}

/* Two nodes of two CPUs: 0-1 on node 0, 2-3 on node 1. */
static Fake fake_new(void) {
        Fake f = { .dir = make_tmpdir() };

        f.fd = open(f.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(f.fd, 0);
        cr_assert_eq(topology_new_from_synthetic("node:2 pu:2", NULL, 0, &f.topo), 0);
        cr_assert_eq(timeline_new(f.fd, f.topo, &f.tl), 0);
        return f;
}

static void fake_done(Fake *f) {
        f->tl = timeline_free(f->tl);
        f->topo = topology_free(f->topo);
        (void) close(f->fd);
        rm_rf(f->dir);
        free(f->dir);
}

/* The timeline as JSON text (a member "timeline" of an object), parsed back by json-c. */
static json_object *timeline_to_json(const Timeline *tl) {
        char *buf = NULL;
        size_t size = 0;
        FILE *m = open_memstream(&buf, &size);
        Json j = { .f = m };
        json_object *root, *o = NULL;

        cr_assert_not_null(m);
        json_begin(&j, '{');
        timeline_write_json(tl, &j, "timeline");
        json_end(&j, '}');
        cr_assert_eq(fclose(m), 0);
        root = json_tokener_parse(buf);
        cr_assert_not_null(root, "not JSON:\n%s", buf);
        cr_assert(json_object_object_get_ex(root, "timeline", &o), "no \"timeline\" in\n%s", buf);
        json_object_get(o);
        json_object_put(root);
        free(buf);
        return o;
}

static json_object *member(json_object *o, const char *key, json_type type) {
        json_object *v = NULL;

        cr_assert(json_object_object_get_ex(o, key, &v), "no member \"%s\" in %s", key,
                  json_object_to_json_string(o));
        cr_assert(json_object_is_type(v, type), "\"%s\" is %s", key,
                  json_type_to_name(json_object_get_type(v)));
        return v;
}

static double load_at(json_object *samples, size_t i, size_t node) {
        json_object *load = member(json_object_array_get_idx(samples, i), "load", json_type_array);

        cr_assert_eq(json_object_array_length(load), 2);
        return json_object_get_double(json_object_array_get_idx(load, node));
}

Test(timeline_sample, fixture_loads_per_node) {
        Fake f = fake_new();
        json_object *o, *samples;

        fake_stat(&f, "timeline/stat-0");
        cr_assert_eq(timeline_sample(f.tl, 5000000), 0);
        cr_expect_eq(timeline_n_samples(f.tl), 0, "the first call is only the baseline");
        fake_stat(&f, "timeline/stat-1");
        cr_assert_eq(timeline_sample(f.tl, 6000000), 0);
        /* the same counters again: within a tick, nothing to record */
        cr_assert_eq(timeline_sample(f.tl, 6005000), 0);
        cr_expect_eq(timeline_n_samples(f.tl), 1);
        fake_stat(&f, "timeline/stat-2");
        cr_assert_eq(timeline_sample(f.tl, 7000000), 0);
        cr_assert_eq(timeline_n_samples(f.tl), 2);

        o = timeline_to_json(f.tl);
        samples = member(o, "samples", json_type_array);
        cr_assert_eq(json_object_array_length(samples), 2);
        cr_expect_float_eq(json_object_get_double(member(json_object_array_get_idx(samples, 0), "t",
                                                         json_type_double)),
                           1.0, 1e-9);
        cr_expect_float_eq(json_object_get_double(member(json_object_array_get_idx(samples, 1), "t",
                                                         json_type_double)),
                           2.0, 1e-9);
        cr_expect_float_eq(load_at(samples, 0, 0), 1.50, 1e-9, "node 0: cpu0 busy, cpu1 half");
        cr_expect_float_eq(load_at(samples, 0, 1), 0.29, 1e-9, "node 1: cpu3 20 of 70 ticks");
        cr_expect_float_eq(load_at(samples, 1, 0), 0.0, 1e-9);
        cr_expect_float_eq(load_at(samples, 1, 1), 1.0, 1e-9, "cpu2 busy, cpu3 offline");
        cr_expect_eq(json_object_get_int64(member(o, "interval_usec", json_type_int)), 1000000);
        json_object_put(o);
        fake_done(&f);
}

Test(timeline_sample, errors_leave_it_unchanged) {
        Fake f = fake_new();

        cr_expect_eq(timeline_sample(f.tl, 1000), -ENOENT, "no stat file yet");
        write_file_at(f.fd, "stat", "cpu  1 2 3\n");
        cr_expect_eq(timeline_sample(f.tl, 1000), -EBADMSG);
        fake_stat(&f, "timeline/stat-0");
        cr_assert_eq(timeline_sample(f.tl, 1000000), 0);
        fake_stat(&f, "timeline/stat-1");
        cr_expect_eq(timeline_sample(f.tl, 999999), -EINVAL, "time went backwards");
        cr_expect_eq(timeline_n_samples(f.tl), 0);
        cr_expect_eq(timeline_sample(f.tl, 2000000), 0);
        cr_expect_eq(timeline_n_samples(f.tl), 1);
        fake_done(&f);
}

Test(timeline_new, bad_arguments) {
        _cleanup_topology_ Topology *t = NULL;
        Timeline *tl = NULL;

        cr_assert_eq(topology_new_from_synthetic("node:2 pu:2", NULL, 0, &t), 0);
        cr_expect_eq(timeline_new(-1, t, &tl), -EBADF);
        cr_expect_eq(timeline_new(0, NULL, &tl), -EINVAL);
        cr_expect_null(tl);
        cr_expect_null(timeline_free(NULL));
}

/* The JSON of the interface: every member, the node ids and CPUs of the topology, the events
 * relative to the baseline (a line read before it is negative), comms escaped. */
Test(timeline_json, shape) {
        Fake f = fake_new();
        json_object *o, *a, *m, *w;

        cr_expect_eq(timeline_note_daemon_line(f.tl, 500000,
                                               "cgbalanced: Set the weight of cgbalance.slice/x "
                                               "100 -> 150: " WREASON),
                     1);
        fake_stat(&f, "timeline/stat-0");
        cr_assert_eq(timeline_sample(f.tl, 1000000), 0);
        cr_expect_eq(timeline_note_daemon_line(f.tl, 1250000, "cgbalanced: Started."), 0);
        cr_expect_eq(timeline_note_daemon_line(
                             f.tl, 4210000,
                             "cgbalanced: Moved pid 1234 (a \"q\" (b)) node 0 -> 1, CPUs 2-3: r\n"),
                     1);
        cr_expect_eq(timeline_n_moves(f.tl), 1);
        cr_expect_eq(timeline_n_weights(f.tl), 1);

        o = timeline_to_json(f.tl);
        cr_expect_eq(json_object_get_int64(member(o, "interval_usec", json_type_int)), 0,
                     "no sample: no interval");
        a = member(o, "nodes", json_type_array);
        cr_assert_eq(json_object_array_length(a), 2);
        cr_expect_eq(json_object_get_int(json_object_array_get_idx(a, 0)), 0);
        cr_expect_eq(json_object_get_int(json_object_array_get_idx(a, 1)), 1);
        a = member(o, "node_cpus", json_type_array);
        cr_assert_eq(json_object_array_length(a), 2);
        cr_expect_eq(json_object_get_int(json_object_array_get_idx(a, 0)), 2);
        cr_expect_eq(json_object_get_int(json_object_array_get_idx(a, 1)), 2);
        cr_expect_eq(json_object_array_length(member(o, "samples", json_type_array)), 0);

        a = member(o, "moves", json_type_array);
        cr_assert_eq(json_object_array_length(a), 1);
        m = json_object_array_get_idx(a, 0);
        cr_expect_float_eq(json_object_get_double(member(m, "t", json_type_double)), 3.21, 1e-9);
        cr_expect_eq(json_object_get_int(member(m, "pid", json_type_int)), 1234);
        cr_expect_str_eq(json_object_get_string(member(m, "comm", json_type_string)),
                         "a \"q\" (b)");
        cr_expect_eq(json_object_get_int(member(m, "from", json_type_int)), 0);
        cr_expect_eq(json_object_get_int(member(m, "to", json_type_int)), 1);

        a = member(o, "weights", json_type_array);
        cr_assert_eq(json_object_array_length(a), 1);
        w = json_object_array_get_idx(a, 0);
        cr_expect_float_eq(json_object_get_double(member(w, "t", json_type_double)), -0.5, 1e-9);
        cr_expect_str_eq(json_object_get_string(member(w, "cgroup", json_type_string)),
                         "cgbalance.slice/x");
        cr_expect_eq(json_object_get_int(member(w, "from", json_type_int)), 100);
        cr_expect_eq(json_object_get_int(member(w, "to", json_type_int)), 150);
        json_object_put(o);
        fake_done(&f);
}

/* ---- this machine's /proc */

/* While this process spins on one CPU, the machine is at least ~1 busy CPU and at most all. */
Test(timeline_sample, real_proc) {
        _cleanup_topology_ Topology *t = NULL;
        _cleanup_timeline_ Timeline *tl = NULL;
        _cleanup_close_ int fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        json_object *o, *samples, *load;
        double sum = 0;
        uint64_t start;
        volatile uint64_t spin = 0;

        cr_assert_geq(fd, 0);
        cr_assert_eq(topology_new_from_system(&t), 0);
        cr_assert_eq(timeline_new(fd, t, &tl), 0);
        start = now_usec();
        cr_assert_eq(timeline_sample(tl, start), 0);
        while (now_usec() - start < 200000)
                spin++;
        cr_assert_eq(timeline_sample(tl, now_usec()), 0);
        cr_assert_eq(timeline_n_samples(tl), 1);
        o = timeline_to_json(tl);
        samples = member(o, "samples", json_type_array);
        load = member(json_object_array_get_idx(samples, 0), "load", json_type_array);
        cr_assert_eq(json_object_array_length(load), topology_n_nodes(t));
        for (size_t i = 0; i < json_object_array_length(load); i++)
                sum += json_object_get_double(json_object_array_get_idx(load, i));
        cr_expect_geq(sum, 0.6, "a spinning process, yet %.2f busy CPUs", sum);
        cr_expect_leq(sum, topology_n_cpus(t) + 0.01, "%.2f busy CPUs of %u", sum,
                      topology_n_cpus(t));
        json_object_put(o);
}
