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
#include "event.h"
#include "timeline.h"

/* ---- the daemon's events (lib/event.h lines; test-event.c tests the parser itself) */

#define REASON                                                                                     \
        "node 0 load 2.00 on 2 CPUs (1.00/CPU) vs node 1 0.00 on 2 (0.00/CPU): ratio inf > 125%, " \
        "gap 2.00 > 1, for 2.0s; task 1.00"
#define WREASON "pressure 31.40% > 10.00% for 3.0s: up 50, max 1000"

/* The line cgbalanced --events writes for a move (formatted by the same lib/event.c). */
static char *move_line(uint64_t usec, pid_t pid, const char *comm, int from, int to) {
        Event e = { .kind = EVENT_TASK_MOVED,
                    .monotonic_usec = usec,
                    .realtime_usec = usec + 1000000,
                    .pid = pid,
                    .from_node = from,
                    .to_node = to };
        char *line = NULL;

        (void) snprintf(e.comm, sizeof e.comm, "%s", comm);
        (void) snprintf(e.reason, sizeof e.reason, "%s", REASON);
        cr_assert_eq(event_format(&e, &line), 0);
        return line;
}

static char *weight_line(uint64_t usec, const char *cgroup, uint32_t from, uint32_t to) {
        Event e = { .kind = EVENT_WEIGHT_CHANGED,
                    .monotonic_usec = usec,
                    .realtime_usec = usec + 1000000,
                    .old_weight = from,
                    .new_weight = to };
        char *line = NULL;

        (void) snprintf(e.cgroup, sizeof e.cgroup, "%s", cgroup);
        (void) snprintf(e.reason, sizeof e.reason, "%s", WREASON);
        cr_assert_eq(event_format(&e, &line), 0);
        return line;
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
 * at their own times relative to the baseline (one before it is negative), comms escaped. */
Test(timeline_json, shape) {
        _cleanup_free_ char *wl = weight_line(500000, "cgbalance.slice/x", 100, 150),
                            *ml = move_line(4210000, 1234, "a \"q\" (b)", 0, 1);
        Fake f = fake_new();
        json_object *o, *a, *m, *w;

        cr_expect_eq(timeline_note_event_line(f.tl, wl), 0);
        fake_stat(&f, "timeline/stat-0");
        cr_assert_eq(timeline_sample(f.tl, 1000000), 0);
        cr_expect_eq(timeline_note_event_line(f.tl, "cgbalanced: Started."), -EBADMSG);
        cr_expect_eq(timeline_note_event_line(f.tl, "cgbalanced: Moved pid 1234 (a) node 0 -> 1, "
                                                    "CPUs 2-3: r\n"),
                     -EBADMSG, "the log's words are no event");
        cr_expect_eq(timeline_note_event_line(f.tl, ml), 0);
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

/* A model's timeline (loadgen simulate): samples as given, times from 0, its name, no /proc. */
Test(timeline_model, samples_given_count_from_zero) {
        _cleanup_topology_ Topology *t = NULL;
        Timeline *tl = NULL;
        const uint64_t a[] = { 20000, 5000 }, b[] = { 10000, 15000 };
        json_object *o, *s;

        cr_assert_eq(topology_new_from_synthetic("node:2 pu:2", NULL, 0, &t), 0);
        cr_assert_eq(timeline_new_model(t, &tl), 0);
        cr_expect_eq(timeline_sample(tl, 1), -EINVAL, "no /proc to read");
        cr_assert_eq(timeline_set_name(tl, "cgbalanced on numaq"), 0);
        cr_assert_eq(timeline_add_sample(tl, 1000000, a), 0);
        cr_assert_eq(timeline_add_sample(tl, 2000000, b), 0);
        o = timeline_to_json(tl);
        cr_expect_str_eq(json_object_get_string(member(o, "name", json_type_string)),
                         "cgbalanced on numaq");
        cr_expect_eq(json_object_get_int64(member(o, "interval_usec", json_type_int)), 1000000);
        s = member(o, "samples", json_type_array);
        cr_assert_eq(json_object_array_length(s), 2);
        cr_expect_float_eq(json_object_get_double(
                                   member(json_object_array_get_idx(s, 1), "t", json_type_double)),
                           2.0, 1e-9);
        cr_expect_float_eq(
                json_object_get_double(json_object_array_get_idx(
                        member(json_object_array_get_idx(s, 0), "load", json_type_array), 0)),
                2.0, 1e-9);
        json_object_put(o);
        timeline_free(tl);
}

/* A comm or path that looks like the old log format is just a name now. */
Test(timeline_events, names_are_taken_whole) {
        _cleanup_free_ char *ml = move_line(1, 5, "x) node 7 -> 8, CPUs 3: y", 0, 1),
                            *wl = weight_line(2, "my group 1 -> 2: x", 100, 150);
        Fake f = fake_new();
        json_object *o, *m, *w;

        cr_assert_eq(timeline_note_event_line(f.tl, ml), 0);
        cr_assert_eq(timeline_note_event_line(f.tl, wl), 0);
        o = timeline_to_json(f.tl);
        m = json_object_array_get_idx(member(o, "moves", json_type_array), 0);
        cr_expect_str_eq(json_object_get_string(member(m, "comm", json_type_string)),
                         "x) node 7 -> 8, CPUs 3: y");
        cr_expect_eq(json_object_get_int(member(m, "pid", json_type_int)), 5);
        w = json_object_array_get_idx(member(o, "weights", json_type_array), 0);
        cr_expect_str_eq(json_object_get_string(member(w, "cgroup", json_type_string)),
                         "my group 1 -> 2: x");
        json_object_put(o);
        fake_done(&f);
}

Test(timeline_events, bad_arguments) {
        Fake f = fake_new();
        Event e = { .kind = 7 };
        int fd;

        cr_expect_eq(timeline_note_event(f.tl, &e), -EINVAL, "an unknown kind");
        cr_expect_eq(timeline_note_event(NULL, &e), -EINVAL);
        cr_expect_eq(timeline_note_event_line(f.tl, NULL), -EINVAL);
        cr_expect_eq(timeline_read_events(f.tl), 0, "no pipe, nothing to read");
        cr_assert_eq(timeline_open_events(f.tl, &fd), 0);
        cr_expect_eq(timeline_open_events(f.tl, &(int){ -1 }), -EBUSY);
        cr_expect_eq(timeline_n_moves(f.tl) + timeline_n_weights(f.tl), 0);
        (void) close(fd);
        fake_done(&f);
}

/* The pipe the daemon writes: lines in pieces, a line that is no event, EOF. */
Test(timeline_events, pipe_lines_are_read_as_they_come) {
        _cleanup_free_ char *m1 = move_line(2000000, 10, "one", 0, 1),
                            *m2 = move_line(3000000, 11, "two", 1, 0),
                            *w1 = weight_line(2500000, "a/b", 100, 200);
        size_t half = strlen(m2) / 2;
        Fake f = fake_new();
        int fd, flags;

        cr_assert_eq(timeline_open_events(f.tl, &fd), 0);
        flags = fcntl(fd, F_GETFD);
        cr_expect(flags >= 0 && !(flags & FD_CLOEXEC), "the daemon's end must survive its exec");
        cr_expect_eq(timeline_read_events(f.tl), 0, "nothing written yet: no wait either");

        cr_assert_eq(write(fd, m1, strlen(m1)), (ssize_t) strlen(m1));
        cr_assert_eq(write(fd, m2, half), (ssize_t) half);
        cr_expect_eq(timeline_read_events(f.tl), 1, "one whole line, half of the next");
        cr_expect_eq(timeline_n_moves(f.tl), 1);

        cr_assert_gt(dprintf(fd, "%scgbalanced: Moved pid 1 (x) node 0 -> 1, CPUs 0: r\n%s",
                             m2 + half, w1),
                     0);
        cr_expect_eq(timeline_read_events(f.tl), 2);
        cr_expect_eq(timeline_n_moves(f.tl), 2);
        cr_expect_eq(timeline_n_weights(f.tl), 1);
        cr_expect_eq(timeline_n_rejected(f.tl), 1, "the log line");

        /* The daemon's last line, cut short by its end, still counts if it is whole JSON. */
        cr_assert_eq(write(fd, m1, strlen(m1) - 1), (ssize_t) strlen(m1) - 1);
        (void) close(fd);
        cr_expect_eq(timeline_read_events(f.tl), 1);
        cr_expect_eq(timeline_n_moves(f.tl), 3);
        cr_expect_eq(timeline_read_events(f.tl), 0, "closed at EOF");
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
