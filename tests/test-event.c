/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/event: the daemon's events, one JSON line each, as cgbalanced writes and loadgen reads. */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "macro.h"

#define REASON                                                                                     \
        "node 0 load 2.00 on 2 CPUs (1.00/CPU) vs node 1 0.00 on 2 (0.00/CPU): ratio inf > 125%, " \
        "gap 2.00 > 1, for 2.0s; task 1.00"
#define WREASON "pressure 31.40% > 10.00% for 3.0s: up 50, max 1000"

static Event move(pid_t pid, const char *comm, int from, int to, const char *reason) {
        Event e = { .kind = EVENT_TASK_MOVED,
                    .monotonic_usec = 8417265123,
                    .realtime_usec = 1764722003123456,
                    .pid = pid,
                    .from_node = from,
                    .to_node = to };

        (void) snprintf(e.comm, sizeof e.comm, "%s", comm);
        (void) snprintf(e.reason, sizeof e.reason, "%s", reason);
        return e;
}

static Event weight(const char *cgroup, uint32_t from, uint32_t to, const char *reason) {
        Event e = { .kind = EVENT_WEIGHT_CHANGED,
                    .monotonic_usec = 1,
                    .realtime_usec = 2,
                    .old_weight = from,
                    .new_weight = to };

        (void) snprintf(e.cgroup, sizeof e.cgroup, "%s", cgroup);
        (void) snprintf(e.reason, sizeof e.reason, "%s", reason);
        return e;
}

static Event lever(const char *cgroup, PolicyLever l, uint32_t from, uint32_t to,
                   const char *for_cgroup, const char *reason) {
        Event e = { .kind = EVENT_LEVER_CHANGED,
                    .monotonic_usec = 3,
                    .realtime_usec = 4,
                    .lever = l,
                    .old_value = from,
                    .new_value = to };

        (void) snprintf(e.cgroup, sizeof e.cgroup, "%s", cgroup);
        (void) snprintf(e.for_cgroup, sizeof e.for_cgroup, "%s", for_cgroup);
        (void) snprintf(e.reason, sizeof e.reason, "%s", reason);
        return e;
}

static void expect_same(const Event *a, const Event *b, const char *what) {
        cr_expect_eq(a->kind, b->kind, "%s: kind", what);
        cr_expect_eq(a->monotonic_usec, b->monotonic_usec, "%s", what);
        cr_expect_eq(a->realtime_usec, b->realtime_usec, "%s", what);
        cr_expect_str_eq(a->reason, b->reason, "%s", what);
        cr_expect_eq(a->pid, b->pid, "%s: pid", what);
        cr_expect_str_eq(a->comm, b->comm, "%s", what);
        cr_expect_eq(a->from_node, b->from_node, "%s", what);
        cr_expect_eq(a->to_node, b->to_node, "%s", what);
        cr_expect_str_eq(a->cgroup, b->cgroup, "%s", what);
        cr_expect_eq(a->old_weight, b->old_weight, "%s", what);
        cr_expect_eq(a->new_weight, b->new_weight, "%s", what);
        cr_expect_eq(a->lever, b->lever, "%s: lever", what);
        cr_expect_eq(a->old_value, b->old_value, "%s", what);
        cr_expect_eq(a->new_value, b->new_value, "%s", what);
        cr_expect_str_eq(a->for_cgroup, b->for_cgroup, "%s", what);
}

/* Formats e, checks it is one line, parses it back whole. */
static void round_trip(const Event *e) {
        _cleanup_free_ char *line = NULL;
        Event back;

        cr_assert_eq(event_format(e, &line), 0, "kind %d comm \"%s\" cgroup \"%s\"", e->kind,
                     e->comm, e->cgroup);
        cr_expect_eq(strchr(line, '\n'), line + strlen(line) - 1, "not one line: %s", line);
        cr_assert_eq(event_parse(line, &back), 0, "%s", line);
        expect_same(&back, e, line);
        /* without its newline too */
        line[strlen(line) - 1] = '\0';
        cr_assert_eq(event_parse(line, &back), 0, "%s", line);
        expect_same(&back, e, line);
}

Test(event, round_trips) {
        char comm63[64], longpath[EVENT_CGROUP_MAX + 1], longreason[EVENT_REASON_MAX + 1];
        Event e;

        memset(comm63, 'c', 63);
        comm63[63] = '\0';
        memset(longpath, 'p', sizeof longpath - 1);
        longpath[sizeof longpath - 1] = '\0';
        longpath[100] = '/';
        memset(longreason, '"', sizeof longreason - 1);
        longreason[sizeof longreason - 1] = '\0';

        e = move(1234, "spinner", 0, 1, REASON);
        round_trip(&e);
        e = move(5, "Web Content", 1, 0, "");
        round_trip(&e);
        /* what the old log parser had to guess at: the format inside a comm */
        e = move(5, "x) node 7 -> 8, CPUs 3: y", 0, 1, REASON);
        round_trip(&e);
        e = move(5, "a \"q\" (b) \\ {}", 0, 1, "r\n\ttab \x01\x7f");
        round_trip(&e);
        e = move(5, "\xff\xfe not utf-8 \xc3\xa9", 0, 1, "\xe2\x82\xac");
        round_trip(&e);
        e = move(2147483647, comm63, 2147483647, 0, longreason);
        e.monotonic_usec = e.realtime_usec = UINT64_C(1) << 62;
        round_trip(&e);
        e = weight("cgbalance.slice/loadgen-12/job", 100, 150, WREASON);
        round_trip(&e);
        e = weight("my group 1 -> 2: x", 1, 10000, "no longer protected: back toward base 1");
        round_trip(&e);
        e = weight(longpath, 10000, 1, "");
        e.monotonic_usec = e.realtime_usec = 0;
        round_trip(&e);
        e = lever("cgbalance.slice/ring", POLICY_LEVER_IDLE, 0, 1, "cgbalance.slice/job", WREASON);
        round_trip(&e);
        e = lever("a b", POLICY_LEVER_QUOTA, 5000, 2500, "my group 1 -> 2: x", "");
        round_trip(&e);
        e = lever(longpath, POLICY_LEVER_QUOTA, EVENT_QUOTA_MAX, 0, "", "no protected group left");
        round_trip(&e);
        e = lever("p", POLICY_LEVER_PARTITION, 0, 2, longpath, longreason);
        round_trip(&e);
}

Test(event, the_format_is_the_documented_one) {
        Event e = move(1234, "spinner", 0, 1, "busy");
        _cleanup_free_ char *line = NULL, *wline = NULL;

        cr_assert_eq(event_format(&e, &line), 0);
        cr_expect_str_eq(line, "{\"version\":1,\"kind\":\"task-moved\",\"monotonic_usec\":"
                               "8417265123,\"realtime_usec\":1764722003123456,\"pid\":1234,"
                               "\"comm\":\"spinner\",\"from_node\":0,\"to_node\":1,\"reason\":"
                               "\"busy\"}\n");
        e = weight("a/b", 100, 150, "q\"");
        cr_assert_eq(event_format(&e, &wline), 0);
        cr_expect_str_eq(wline, "{\"version\":1,\"kind\":\"weight-changed\",\"monotonic_usec\":1,"
                                "\"realtime_usec\":2,\"cgroup\":\"a/b\",\"old_weight\":100,"
                                "\"new_weight\":150,\"reason\":\"q\\\"\"}\n");
        cr_expect_str_eq(event_kind_to_string(EVENT_TASK_MOVED), "task-moved");
        cr_expect_str_eq(event_kind_to_string(EVENT_WEIGHT_CHANGED), "weight-changed");
        cr_expect_str_eq(event_kind_to_string(EVENT_LEVER_CHANGED), "lever-changed");
        cr_expect_null(event_kind_to_string(0));
        cr_expect_null(event_kind_to_string(4));
        cr_expect_str_eq(policy_lever_to_string(POLICY_LEVER_IDLE), "idle");
        cr_expect_str_eq(policy_lever_to_string(POLICY_LEVER_QUOTA), "quota");
        cr_expect_str_eq(policy_lever_to_string(POLICY_LEVER_PARTITION), "partition");
        cr_expect_null(policy_lever_to_string(POLICY_LEVER_NONE));
        cr_expect_null(policy_lever_to_string(_POLICY_LEVER_MAX));
}

Test(event, a_lever_change_is_the_documented_line) {
        Event e =
                lever("cgbalance.slice/ring", POLICY_LEVER_IDLE, 0, 1, "cgbalance.slice/job", "r");
        _cleanup_free_ char *line = NULL, *none = NULL;

        cr_assert_eq(event_format(&e, &line), 0);
        cr_expect_str_eq(line, "{\"version\":1,\"kind\":\"lever-changed\",\"monotonic_usec\":3,"
                               "\"realtime_usec\":4,\"cgroup\":\"cgbalance.slice/ring\","
                               "\"lever\":\"idle\",\"old_value\":0,\"new_value\":1,"
                               "\"for_cgroup\":\"cgbalance.slice/job\",\"reason\":\"r\"}\n");
        e = lever("r", POLICY_LEVER_QUOTA, 2500, 0, "", "back");
        cr_assert_eq(event_format(&e, &none), 0);
        cr_expect(strstr(none, "\"lever\":\"quota\",\"old_value\":2500,\"new_value\":0,"
                               "\"for_cgroup\":\"\","),
                  "%s", none);
}

/* Members in another order, unknown members, blanks between tokens: all read. */
Test(event, a_reader_takes_any_order_and_ignores_unknown_members) {
        Event e;

        cr_assert_eq(event_parse(" { \"reason\" : \"r\", \"to_node\": 3, \"from_node\":2,"
                                 "\"comm\":\"c\",\"pid\":9,\"new_member\":[1,{}],"
                                 "\"realtime_usec\":5,\"monotonic_usec\":4,\"kind\":\"task-moved\","
                                 "\"version\":1, \"cgroup\": 7 }\n",
                                 &e),
                     0);
        cr_expect_eq(e.kind, EVENT_TASK_MOVED);
        cr_expect_eq(e.pid, 9);
        cr_expect_str_eq(e.comm, "c");
        cr_expect_eq(e.from_node, 2);
        cr_expect_eq(e.to_node, 3);
        cr_expect_eq(e.monotonic_usec, 4);
        cr_expect_eq(e.realtime_usec, 5);
        cr_expect_str_eq(e.cgroup, "", "the other kind's members stay zero");
}

#define MOVE_HEAD "{\"version\":1,\"kind\":\"task-moved\",\"monotonic_usec\":1,\"realtime_usec\":2,"
#define MOVE_TAIL ",\"reason\":\"r\"}"
#define WEIGHT_HEAD \
        "{\"version\":1,\"kind\":\"weight-changed\",\"monotonic_usec\":1,\"realtime_usec\":2,"
#define LEVER_HEAD \
        "{\"version\":1,\"kind\":\"lever-changed\",\"monotonic_usec\":1,\"realtime_usec\":2,"
#define LEVER_TAIL ",\"cgroup\":\"a\",\"for_cgroup\":\"b\",\"reason\":\"r\"}"

static const char *const bad_lines[] = {
        "",
        "\n",
        "{}",
        "[]",
        "1",
        "\"task-moved\"",
        "null",
        "cgbalanced: Moved pid 1234 (spinner) node 0 -> 1, CPUs 2-3: " REASON,
        "Set the weight of a 10000 -> 1: no longer protected",
        /* a valid line, then more */
        MOVE_HEAD "\"pid\":1,\"comm\":\"c\",\"from_node\":0,\"to_node\":1" MOVE_TAIL "\n\n",
        MOVE_HEAD "\"pid\":1,\"comm\":\"c\",\"from_node\":0,\"to_node\":1" MOVE_TAIL " {}",
        MOVE_HEAD "\"pid\":1,\"comm\":\"c\",\"from_node\":0,\"to_node\":1" MOVE_TAIL "\n{}",
        /* version, kind */
        "{\"version\":2,\"kind\":\"task-moved\",\"monotonic_usec\":1,\"realtime_usec\":2,\"pid\":1,"
        "\"comm\":\"c\",\"from_node\":0,\"to_node\":1,\"reason\":\"r\"}",
        "{\"version\":\"1\",\"kind\":\"task-moved\",\"monotonic_usec\":1,\"realtime_usec\":2,"
        "\"pid\":1,\"comm\":\"c\",\"from_node\":0,\"to_node\":1,\"reason\":\"r\"}",
        "{\"kind\":\"task-moved\",\"monotonic_usec\":1,\"realtime_usec\":2,\"pid\":1,"
        "\"comm\":\"c\",\"from_node\":0,\"to_node\":1,\"reason\":\"r\"}",
        "{\"version\":1,\"kind\":\"task-killed\",\"monotonic_usec\":1,\"realtime_usec\":2,"
        "\"pid\":1,\"comm\":\"c\",\"from_node\":0,\"to_node\":1,\"reason\":\"r\"}",
        "{\"version\":1,\"kind\":\"Task-Moved\",\"monotonic_usec\":1,\"realtime_usec\":2,"
        "\"pid\":1,\"comm\":\"c\",\"from_node\":0,\"to_node\":1,\"reason\":\"r\"}",
        "{\"version\":1,\"kind\":1,\"monotonic_usec\":1,\"realtime_usec\":2,"
        "\"pid\":1,\"comm\":\"c\",\"from_node\":0,\"to_node\":1,\"reason\":\"r\"}",
        /* a member missing, of the wrong type, out of range */
        MOVE_HEAD "\"comm\":\"c\",\"from_node\":0,\"to_node\":1" MOVE_TAIL,
        MOVE_HEAD "\"pid\":1,\"from_node\":0,\"to_node\":1" MOVE_TAIL,
        MOVE_HEAD "\"pid\":1,\"comm\":\"c\",\"to_node\":1" MOVE_TAIL,
        MOVE_HEAD "\"pid\":1,\"comm\":\"c\",\"from_node\":0" MOVE_TAIL,
        MOVE_HEAD "\"pid\":1,\"comm\":\"c\",\"from_node\":0,\"to_node\":1}",
        MOVE_HEAD "\"pid\":0,\"comm\":\"c\",\"from_node\":0,\"to_node\":1" MOVE_TAIL,
        MOVE_HEAD "\"pid\":-5,\"comm\":\"c\",\"from_node\":0,\"to_node\":1" MOVE_TAIL,
        MOVE_HEAD "\"pid\":2147483648,\"comm\":\"c\",\"from_node\":0,\"to_node\":1" MOVE_TAIL,
        MOVE_HEAD
        "\"pid\":99999999999999999999999,\"comm\":\"c\",\"from_node\":0,\"to_node\":1" MOVE_TAIL,
        MOVE_HEAD "\"pid\":1.0,\"comm\":\"c\",\"from_node\":0,\"to_node\":1" MOVE_TAIL,
        MOVE_HEAD "\"pid\":1e3,\"comm\":\"c\",\"from_node\":0,\"to_node\":1" MOVE_TAIL,
        MOVE_HEAD "\"pid\":\"1\",\"comm\":\"c\",\"from_node\":0,\"to_node\":1" MOVE_TAIL,
        MOVE_HEAD "\"pid\":01,\"comm\":\"c\",\"from_node\":0,\"to_node\":1" MOVE_TAIL,
        MOVE_HEAD "\"pid\":1,\"comm\":\"\",\"from_node\":0,\"to_node\":1" MOVE_TAIL,
        MOVE_HEAD "\"pid\":1,\"comm\":null,\"from_node\":0,\"to_node\":1" MOVE_TAIL,
        MOVE_HEAD "\"pid\":1,\"comm\":\"a\\u0000b\",\"from_node\":0,\"to_node\":1" MOVE_TAIL,
        MOVE_HEAD "\"pid\":1,\"comm\":\"1234567890123456789012345678901234567890123456789012345678"
                  "901234\",\"from_node\":0,\"to_node\":1" MOVE_TAIL,
        MOVE_HEAD "\"pid\":1,\"comm\":\"c\",\"from_node\":-1,\"to_node\":1" MOVE_TAIL,
        MOVE_HEAD "\"pid\":1,\"comm\":\"c\",\"from_node\":0,\"to_node\":2147483648" MOVE_TAIL,
        MOVE_HEAD "\"pid\":1,\"comm\":\"c\",\"from_node\":0,\"to_node\":1,\"reason\":5}",
        "{\"version\":1,\"kind\":\"task-moved\",\"monotonic_usec\":-1,\"realtime_usec\":2,"
        "\"pid\":1,\"comm\":\"c\",\"from_node\":0,\"to_node\":1,\"reason\":\"r\"}",
        "{\"version\":1,\"kind\":\"task-moved\",\"monotonic_usec\":18446744073709551615,"
        "\"realtime_usec\":2,\"pid\":1,\"comm\":\"c\",\"from_node\":0,\"to_node\":1,"
        "\"reason\":\"r\"}",
        "{\"version\":1,\"kind\":\"task-moved\",\"monotonic_usec\":1,"
        "\"pid\":1,\"comm\":\"c\",\"from_node\":0,\"to_node\":1,\"reason\":\"r\"}",
        WEIGHT_HEAD "\"cgroup\":\"a\",\"old_weight\":100,\"new_weight\":150}",
        WEIGHT_HEAD "\"cgroup\":\"a\",\"old_weight\":100,\"reason\":\"r\"}",
        WEIGHT_HEAD "\"cgroup\":\"a\",\"new_weight\":150,\"reason\":\"r\"}",
        WEIGHT_HEAD "\"old_weight\":100,\"new_weight\":150,\"reason\":\"r\"}",
        WEIGHT_HEAD "\"cgroup\":\"\",\"old_weight\":100,\"new_weight\":150,\"reason\":\"r\"}",
        WEIGHT_HEAD "\"cgroup\":\"/a\",\"old_weight\":100,\"new_weight\":150,\"reason\":\"r\"}",
        WEIGHT_HEAD "\"cgroup\":\"a/../b\",\"old_weight\":100,\"new_weight\":150,\"reason\":\"r\"}",
        WEIGHT_HEAD "\"cgroup\":\"a\\nb\",\"old_weight\":100,\"new_weight\":150,\"reason\":\"r\"}",
        WEIGHT_HEAD "\"cgroup\":\"a\",\"old_weight\":0,\"new_weight\":150,\"reason\":\"r\"}",
        WEIGHT_HEAD "\"cgroup\":\"a\",\"old_weight\":100,\"new_weight\":10001,\"reason\":\"r\"}",
        WEIGHT_HEAD
        "\"cgroup\":\"a\",\"old_weight\":100,\"new_weight\":4294967296,\"reason\":\"r\"}",
        WEIGHT_HEAD "\"cgroup\":\"a\",\"old_weight\":100,\"new_weight\":-1,\"reason\":\"r\"}",
        /* lever changes: unknown lever, values out of its range, a bad or missing group */
        LEVER_HEAD "\"lever\":\"freeze\",\"old_value\":0,\"new_value\":1" LEVER_TAIL,
        LEVER_HEAD "\"lever\":\"\",\"old_value\":0,\"new_value\":1" LEVER_TAIL,
        LEVER_HEAD "\"lever\":1,\"old_value\":0,\"new_value\":1" LEVER_TAIL,
        LEVER_HEAD "\"old_value\":0,\"new_value\":1" LEVER_TAIL,
        LEVER_HEAD "\"lever\":\"idle\",\"old_value\":0,\"new_value\":2" LEVER_TAIL,
        LEVER_HEAD "\"lever\":\"idle\",\"old_value\":-1,\"new_value\":1" LEVER_TAIL,
        LEVER_HEAD "\"lever\":\"quota\",\"old_value\":0,\"new_value\":100000001" LEVER_TAIL,
        LEVER_HEAD "\"lever\":\"quota\",\"new_value\":1" LEVER_TAIL,
        WEIGHT_HEAD "\"cgroup\":\"a\",\"lever\":\"idle\",\"old_value\":0,\"new_value\":1,"
                    "\"reason\":\"r\",\"for_cgroup\":\"\"}",
        "{\"version\":1,\"kind\":\"lever-changed\",\"monotonic_usec\":1,\"realtime_usec\":2,"
        "\"cgroup\":\"a\",\"lever\":\"idle\",\"old_value\":0,\"new_value\":1,\"reason\":\"r\"}",
        "{\"version\":1,\"kind\":\"lever-changed\",\"monotonic_usec\":1,\"realtime_usec\":2,"
        "\"cgroup\":\"a\",\"lever\":\"idle\",\"old_value\":0,\"new_value\":1,\"reason\":\"r\","
        "\"for_cgroup\":\"/b\"}",
        "{\"version\":1,\"kind\":\"lever-changed\",\"monotonic_usec\":1,\"realtime_usec\":2,"
        "\"cgroup\":\"\",\"lever\":\"idle\",\"old_value\":0,\"new_value\":1,\"reason\":\"r\","
        "\"for_cgroup\":\"b\"}",
        /* a move's members do not make a weight change */
        WEIGHT_HEAD "\"pid\":1,\"comm\":\"c\",\"from_node\":0,\"to_node\":1,\"reason\":\"r\"}",
        /* broken JSON */
        MOVE_HEAD "\"pid\":1,\"comm\":\"c\",\"from_node\":0,\"to_node\":1,\"reason\":\"r\",}",
        MOVE_HEAD "\"pid\":1,\"comm\":\"c\",\"from_node\":0,\"to_node\":1,\"reason\":\"r",
        MOVE_HEAD "\"pid\":1,\"comm\":\"c\",\"from_node\":0,\"to_node\":1,\"reason\":\"r\\x\"}",
        MOVE_HEAD "\"pid\":1,\"comm\":\"c\",\"from_node\":0,\"to_node\":1,\"reason\":\"a\nb\"}",
};

Test(event, malformed_lines_are_rejected_and_leave_ret_alone) {
        for (size_t i = 0; i < ELEMENTSOF(bad_lines); i++) {
                Event e = { .pid = -42 };

                cr_expect_eq(event_parse(bad_lines[i], &e), -EBADMSG, "case %zu: %s", i,
                             bad_lines[i]);
                cr_expect_eq(e.pid, -42, "case %zu: *ret written on failure", i);
        }
        cr_expect_eq(event_parse(NULL, &(Event){}), -EINVAL);
        cr_expect_eq(event_parse("{}", NULL), -EINVAL);
}

/* Every prefix of a real line is a cut line: none parses but the whole (with or without '\n'). */
Test(event, cut_lines) {
        Event e = move(1234, "a b", 0, 1, "r");
        _cleanup_free_ char *line = NULL;
        size_t whole;

        cr_assert_eq(event_format(&e, &line), 0);
        whole = strlen(line);
        for (size_t n = 0; n <= whole; n++) {
                _cleanup_free_ char *cut = strndup(line, n);
                Event back;

                cr_assert_not_null(cut);
                cr_expect_eq(event_parse(cut, &back), n >= whole - 1 ? 0 : -EBADMSG,
                             "prefix of %zu bytes: \"%s\"", n, cut);
        }
}

Test(event, the_formatter_refuses_what_would_not_read_back) {
        char *line = NULL;
        Event bad[] = {
                move(0, "c", 0, 1, "r"),
                move(-1, "c", 0, 1, "r"),
                move(1, "", 0, 1, "r"),
                move(1, "c", -1, 1, "r"),
                move(1, "c", 0, -2, "r"),
                weight("", 100, 150, "r"),
                weight("/a", 100, 150, "r"),
                weight("a/../b", 100, 150, "r"),
                weight("a", 0, 150, "r"),
                weight("a", 100, 10001, "r"),
                lever("", POLICY_LEVER_IDLE, 0, 1, "b", "r"),
                lever("a", POLICY_LEVER_IDLE, 0, 2, "b", "r"),
                lever("a", POLICY_LEVER_NONE, 0, 1, "b", "r"),
                lever("a", _POLICY_LEVER_MAX, 0, 1, "b", "r"),
                lever("a", POLICY_LEVER_QUOTA, 0, EVENT_QUOTA_MAX + 1, "b", "r"),
                lever("a", POLICY_LEVER_QUOTA, 0, 1, "/b", "r"),
        };
        Event e = move(1, "c", 0, 1, "r");

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                cr_expect_eq(event_format(&bad[i], &line), -EINVAL, "case %zu", i);
        e.kind = 0;
        cr_expect_eq(event_format(&e, &line), -EINVAL, "no kind");
        e = move(1, "c", 0, 1, "r");
        e.monotonic_usec = (UINT64_C(1) << 62) + 1;
        cr_expect_eq(event_format(&e, &line), -EINVAL, "a time beyond 2^62");
        e = move(1, "c", 0, 1, "r");
        memset(e.comm, 'x', sizeof e.comm); /* not terminated */
        cr_expect_eq(event_format(&e, &line), -EINVAL, "a comm without its NUL");
        cr_expect_eq(event_format(NULL, &line), -EINVAL);
        cr_expect_null(line, "ret written on failure");
}
