/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup-levers.h"
#include "cpumask.h"
#include "macro.h"
#include "record.h"
#include "testutil.h"

#define W RECORD_CGROUP_WEIGHT

/* ---- parse and format */

#define HEADER "cgbalance-changes 1\n"

static Record *parse_ok(const char *text) {
        Record *rec = NULL;
        unsigned line = 99;
        int r = record_parse(text, 64, &rec, &line);

        cr_assert_eq(r, 0, "parse: %s at line %u of\n%s", strerror(-r), line, text);
        cr_assert_not_null(rec);
        return rec;
}

Test(record, parse_reads_every_field_and_sorts_by_pid) {
        _cleanup_record_ Record *rec =
                parse_ok(HEADER "task 300 18446744073709551615 0-3,8 8 1700000000000000\n"
                                "cgroup 1024 1536 cgbalance.slice/with space/ lead\n"
                                "task 12 0 1 0-1 0\n"
                                "cgroup 10000 1 a\n");

        cr_assert_eq(rec->n_tasks, 2);
        cr_expect_eq(rec->tasks[0].pid, 12);
        cr_expect_eq(rec->tasks[0].starttime_ticks, 0);
        expect_cpumask(rec->tasks[0].orig, "1", "orig of 12");
        expect_cpumask(rec->tasks[0].set, "0-1", "set of 12");
        cr_expect_eq(rec->tasks[0].when_usec, 0);
        cr_expect_eq(rec->tasks[1].pid, 300);
        cr_expect_eq(rec->tasks[1].starttime_ticks, UINT64_MAX);
        expect_cpumask(rec->tasks[1].orig, "0-3,8", "orig of 300");
        expect_cpumask(rec->tasks[1].set, "8", "set of 300");
        cr_expect_eq(rec->tasks[1].when_usec, UINT64_C(1700000000000000));
        cr_assert_eq(rec->n_cgroups, 2);
        cr_expect_str_eq(rec->cgroups[0].path, "a");
        cr_expect(rec->cgroups[0].values[W].recorded);
        cr_expect_eq(rec->cgroups[0].values[W].orig, 10000);
        cr_expect_eq(rec->cgroups[0].values[W].set, 1);
        cr_expect_str_eq(rec->cgroups[1].path, "cgbalance.slice/with space/ lead");
        cr_expect(rec->cgroups[1].values[W].recorded);
        cr_expect_eq(rec->cgroups[1].values[W].orig, 1024);
        cr_expect_eq(rec->cgroups[1].values[W].set, 1536);
}

Test(record, parse_of_only_the_header_is_an_empty_record) {
        _cleanup_record_ Record *rec = parse_ok(HEADER);

        cr_expect_eq(rec->n_tasks, 0);
        cr_expect_eq(rec->n_cgroups, 0);
}

Test(record, parse_rejects_hostile_text_and_names_the_line) {
        static const struct {
                const char *text;
                unsigned line;
        } cases[] = {
                { "", 1 },
                { "cgbalance-changes 1", 1 }, /* cut */
                { "cgbalance-changes 2\n", 1 },
                { "cgbalance-changes 1 \n", 1 },
                { "cgbalance-changes  1\n", 1 },
                { "Cgbalance-changes 1\n", 1 },
                { "cgbalance-changes 1\r\n", 1 },
                { "\n" HEADER, 1 },
                { "task 12 5 0 1 7\n", 1 }, /* no header */
                { HEADER "task 12 5 0 1 7", 2 }, /* cut */
                { HEADER "\n", 2 },
                { HEADER "task\n", 2 },
                { HEADER "task \n", 2 },
                { HEADER "tasks 12 5 0 1 7\n", 2 },
                { HEADER "# task 12 5 0 1 7\n", 2 },
                { HEADER " task 12 5 0 1 7\n", 2 },
                { HEADER "task 0 5 0 1 7\n", 2 },
                { HEADER "task -1 5 0 1 7\n", 2 },
                { HEADER "task +12 5 0 1 7\n", 2 },
                { HEADER "task 012 5 0 1 7\n", 2 },
                { HEADER "task 2147483648 5 0 1 7\n", 2 },
                { HEADER "task 12 18446744073709551616 0 1 7\n", 2 },
                { HEADER "task 12 5 0 1 18446744073709551616\n", 2 },
                { HEADER "task 12 5 0 1 0x7\n", 2 },
                { HEADER "task 12 5 0 1\n", 2 },
                { HEADER "task 12 5 0 1 7 8\n", 2 },
                { HEADER "task  12 5 0 1 7\n", 2 },
                { HEADER "task 12 5 0  1 7\n", 2 }, /* empty cpulist */
                { HEADER "task 12 5 0 1 7 \n", 2 },
                { HEADER "task 12 5 0 1 7\r\n", 2 },
                { HEADER "task 12 5 0\t1 7\n", 2 },
                { HEADER "task 12 5 0,1 1 7\n", 2 }, /* not canonical: 0-1 */
                { HEADER "task 12 5 1,0 1 7\n", 2 },
                { HEADER "task 12 5 1-1 1 7\n", 2 },
                { HEADER "task 12 5 0-1, 1 7\n", 2 },
                { HEADER "task 12 5 3-1 1 7\n", 2 },
                { HEADER "task 12 5 0 64 7\n", 2 }, /* beyond the capacity */
                { HEADER "task 12 5 0 99999999999 7\n", 2 },
                { HEADER "task 12 5 0-1x 1 7\n", 2 },
                { HEADER "task 12 5 0 1 7\ntask 13 5 0 1 7\ngarbage\n", 4 },
                { HEADER "cgroup 1024 1536\n", 2 },
                { HEADER "cgroup 1024 1536 \n", 2 },
                { HEADER "cgroup 0 1536 a\n", 2 },
                { HEADER "cgroup 1024 262145 a\n", 2 },
                { HEADER "cgroup 1024 -1 a\n", 2 },
                { HEADER "cgroup 1024 1536 /a\n", 2 },
                { HEADER "cgroup 1024 1536 a/\n", 2 },
                { HEADER "cgroup 1024 1536 a//b\n", 2 },
                { HEADER "cgroup 1024 1536 a/../b\n", 2 },
                { HEADER "cgroup 1024 1536 ..\n", 2 },
                { HEADER "cgroup 1024 1536 a\x01"
                         "b\n",
                  2 },
                { HEADER "cgroup 1024 1536 a\rb\n", 2 },
                { HEADER "cgroup 1024 1536 a\x7f\n", 2 },
                { HEADER "cgroup 1024  1536 a\n", 2 },
                /* the same pid or group twice: which one is right? */
                { HEADER "task 12 5 0 1 7\ntask 12 6 0 1 7\n", 0 },
                { HEADER "cgroup 1024 1536 a\ncgroup 1024 512 a\n", 0 },
                /* the levers past the weight: idle 0 or 1, quota usec up to 2^44-1 (0: none) */
                { HEADER "cgroup-idle 2 1 a\n", 2 },
                { HEADER "cgroup-idle 0 -1 a\n", 2 },
                { HEADER "cgroup-idle 00 1 a\n", 2 },
                { HEADER "cgroup-quota 0 17592186044416 a\n", 2 },
                { HEADER "cgroup-quota -1 50000 a\n", 2 },
                { HEADER "cgroup-quota max 50000 a\n", 2 },
                { HEADER "cgroup-quota 0 50000\n", 2 },
                { HEADER "cgroup-quotas 0 50000 a\n", 2 },
                { HEADER "cgroup-idle 0 1 a\ncgroup-idle 0 1 a\n", 0 },
                { HEADER "cgroup-quota 0 1000 a\ncgroup 1 2 b\ncgroup-quota 0 2000 a\n", 0 },
                /* a partition: a canonical, non-empty cpulist within the capacity, and a path */
                { HEADER "cgroup-partition  a\n", 2 },
                { HEADER "cgroup-partition 0\n", 2 },
                { HEADER "cgroup-partition 1,0 a\n", 2 },
                { HEADER "cgroup-partition 64 a\n", 2 },
                { HEADER "cgroup-partition 0 /a\n", 2 },
                { HEADER "cgroup-partition 0 a\ncgroup-idle 0 1 a\ncgroup-partition 1 a\n", 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                Record *rec = NULL;
                unsigned line = 99;
                int r = record_parse(cases[i].text, 64, &rec, &line);

                cr_expect_eq(r, -EBADMSG, "case %zu: got %d for \"%s\"", i, r, cases[i].text);
                cr_expect_null(rec, "case %zu: wrote the result", i);
                cr_expect_eq(line, cases[i].line, "case %zu: line %u, want %u", i, line,
                             cases[i].line);
                record_free(rec);
        }
}

Test(record, parse_refuses_bad_arguments) {
        Record *rec = NULL;

        cr_expect_eq(record_parse(NULL, 64, &rec, NULL), -EINVAL);
        cr_expect_eq(record_parse(HEADER, 0, &rec, NULL), -EINVAL);
        cr_expect_eq(record_parse(HEADER, CPUMASK_MAX_CPUS + 1, &rec, NULL), -EINVAL);
        cr_expect_null(rec);
}

Test(record, format_writes_what_parse_reads_back) {
        static const char text[] = HEADER "task 12 0 1 0-1 0\n"
                                          "task 300 18446744073709551615 0-3,8 8 17\n"
                                          "cgroup 10000 1 a\n"
                                          "cgroup 1024 1536 cgbalance.slice/with space/ lead\n";
        _cleanup_record_ Record *rec = parse_ok(text);
        _cleanup_free_ char *out = NULL;

        cr_assert_eq(record_format(rec, &out), 0);
        cr_expect_str_eq(out, text);
}

/* The levers past the weight: a line per attribute, "cgroup-quota 0" the encoding of no limit. */
Test(record, idle_and_quota_lines_round_trip_beside_the_weight) {
        static const char text[] = HEADER "cgroup 1024 1536 a\n"
                                          "cgroup-idle 0 1 a\n"
                                          "cgroup-quota 0 50000 a\n"
                                          "cgroup-idle 1 0 b c\n"
                                          "cgroup-quota 75000 17592186044415 d\n";
        _cleanup_record_ Record *rec = parse_ok(text);
        _cleanup_free_ char *out = NULL;
        uint64_t orig = 4242, set = 4242;

        cr_assert_eq(rec->n_cgroups, 3);
        cr_expect_str_eq(rec->cgroups[0].path, "a");
        cr_expect(rec->cgroups[0].values[W].recorded);
        cr_assert(record_lookup_cgroup(rec, "a", RECORD_CGROUP_IDLE, &orig, &set));
        cr_expect_eq(orig, 0);
        cr_expect_eq(set, 1);
        cr_assert(record_lookup_cgroup(rec, "a", RECORD_CGROUP_QUOTA, &orig, &set));
        cr_expect_eq(orig, CGROUP_QUOTA_NONE);
        cr_expect_eq(set, 50000);
        cr_expect_not(record_lookup_cgroup(rec, "b c", W, NULL, NULL));
        cr_expect_not(record_lookup_cgroup(rec, "b c", RECORD_CGROUP_QUOTA, NULL, NULL));
        cr_assert(record_lookup_cgroup(rec, "b c", RECORD_CGROUP_IDLE, &orig, &set));
        cr_expect_eq(orig, 1);
        cr_expect_eq(set, 0);
        cr_assert(record_lookup_cgroup(rec, "d", RECORD_CGROUP_QUOTA, &orig, &set));
        cr_expect_eq(orig, 75000);
        cr_expect_eq(set, CGROUP_QUOTA_MAX_USEC);
        cr_assert_eq(record_format(rec, &out), 0);
        cr_expect_str_eq(out, text);
}

/* A partition's line: the CPUs kept off, alone or beside a group's other levers; put and
 * lookup; an empty mask forgets it, and the entry goes with its last attribute. */
Test(record, partition_lines_round_trip_and_put_forgets_an_empty_one) {
        static const char text[] = HEADER "cgroup-idle 0 1 a\n"
                                          "cgroup-partition 0-1,8 a\n"
                                          "cgroup-partition 3 b c\n";
        _cleanup_record_ Record *rec = parse_ok(text), *copy = NULL;
        _cleanup_cpumask_ CpuMask *cpus = NULL, *none = cpumask_new(64);
        _cleanup_free_ char *out = NULL, *again = NULL, *list = NULL;

        cr_assert_eq(rec->n_cgroups, 2);
        cr_assert_not_null(record_lookup_partition(rec, "a"));
        cr_assert_eq(cpumask_format(record_lookup_partition(rec, "a"), &list), 0);
        cr_expect_str_eq(list, "0-1,8");
        cr_expect(record_lookup_cgroup(rec, "a", RECORD_CGROUP_IDLE, NULL, NULL));
        cr_expect_eq(cpumask_count(record_lookup_partition(rec, "b c")), 1);
        cr_expect_null(record_lookup_partition(rec, "d"));
        cr_assert_eq(record_format(rec, &out), 0);
        cr_expect_str_eq(out, text);

        cr_assert_eq(record_copy(rec, &copy), 0);
        cr_assert_eq(cpumask_parse("5", 64, &cpus, NULL), 0);
        cr_assert_eq(record_put_partition(copy, "d", cpus), 0);
        cr_assert_not_null(none);
        cr_assert_eq(record_put_partition(copy, "b c", none), 0);
        cr_assert_eq(record_put_partition(copy, "a", NULL), 0);
        cr_assert_eq(record_format(copy, &again), 0);
        cr_expect_str_eq(again, HEADER "cgroup-idle 0 1 a\ncgroup-partition 5 d\n");
        cr_expect_eq(cpumask_count(record_lookup_partition(rec, "b c")), 1, "the copy is deep");
        cr_expect_eq(record_put_partition(NULL, "a", cpus), -EINVAL);
        cr_expect_eq(record_put_partition(copy, NULL, cpus), -EINVAL);
}

Test(record, format_refuses_idle_and_quota_out_of_range) {
        RecordCgroup g = { .path = (char *) "a" };
        Record rec = { .cgroups = &g, .n_cgroups = 1 };
        char *out = NULL;

        g.values[RECORD_CGROUP_IDLE] = (RecordValue){ true, 0, 2 };
        cr_expect_eq(record_format(&rec, &out), -EINVAL, "idle 2");
        g.values[RECORD_CGROUP_IDLE] = (RecordValue){};
        g.values[RECORD_CGROUP_QUOTA] = (RecordValue){ true, CGROUP_QUOTA_MAX_USEC + 1, 0 };
        cr_expect_eq(record_format(&rec, &out), -EINVAL, "quota above the kernel's");
        cr_expect_null(out);
}

Test(record, format_of_an_empty_record_is_the_header) {
        Record rec = {};
        _cleanup_free_ char *out = NULL;

        cr_assert_eq(record_format(&rec, &out), 0);
        cr_expect_str_eq(out, HEADER);
}

Test(record, format_refuses_what_could_not_be_read_back) {
        _cleanup_cpumask_ CpuMask *empty = cpumask_new(64), *one = NULL;
        RecordTask t;
        RecordCgroup g;
        Record rec = { .tasks = &t, .n_tasks = 1 };
        char *out = NULL;

        cr_assert_not_null(empty);
        cr_assert_eq(cpumask_parse("1", 64, &one, NULL), 0);
        t = (RecordTask){ .pid = 12, .orig = one, .set = empty };
        cr_expect_eq(record_format(&rec, &out), -EINVAL, "empty set mask");
        t = (RecordTask){ .pid = 0, .orig = one, .set = one };
        cr_expect_eq(record_format(&rec, &out), -EINVAL, "pid 0");
        rec = (Record){ .cgroups = &g, .n_cgroups = 1 };
        g = (RecordCgroup){ .path = (char *) "a\nb", .values[W] = { true, 1, 2 } };
        cr_expect_eq(record_format(&rec, &out), -EINVAL, "newline in the path");
        g = (RecordCgroup){ .path = (char *) "", .values[W] = { true, 1, 2 } };
        cr_expect_eq(record_format(&rec, &out), -EINVAL, "root group");
        g = (RecordCgroup){ .path = (char *) "a", .values[W] = { true, 0, 2 } };
        cr_expect_eq(record_format(&rec, &out), -EINVAL, "weight 0");
        g = (RecordCgroup){ .path = (char *) "a", .values[W] = { true, 1, 262145 } };
        cr_expect_eq(record_format(&rec, &out), -EINVAL, "set weight above the range");
        g = (RecordCgroup){ .path = (char *) "a" };
        cr_expect_eq(record_format(&rec, &out), -EINVAL, "a group with no value recorded");
        cr_expect_null(out);
}

Test(record, format_leaves_the_bans_out) {
        RecordBan ban = { .pid = 12, .starttime_ticks = 5 };
        Record rec = { .bans = &ban, .n_bans = 1 };
        _cleanup_free_ char *out = NULL;

        cr_expect(record_is_empty(&rec), "bans are not changes");
        cr_assert_eq(record_format(&rec, &out), 0);
        cr_expect_str_eq(out, HEADER);
}

/* ---- entries */

static Record *new_record(void) {
        Record *r = NULL;

        cr_assert_eq(record_new(&r), 0);
        cr_assert_not_null(r);
        return r;
}

static void put_task(Record *r, pid_t pid, uint64_t starttime, const char *orig, const char *set) {
        RecordTask t = { .pid = pid, .starttime_ticks = starttime, .when_usec = 7 };

        cr_assert_eq(cpumask_parse(orig, 64, &t.orig, NULL), 0);
        cr_assert_eq(cpumask_parse(set, 64, &t.set, NULL), 0);
        cr_assert_eq(record_put_task(r, &t), 0);
        cr_expect_null(t.orig, "the masks were taken");
        cr_expect_null(t.set, "the masks were taken");
}

Test(record, put_task_keeps_pid_order_and_replaces_the_same_pid) {
        _cleanup_record_ Record *r = new_record();

        put_task(r, 30, 1, "0", "1");
        put_task(r, 10, 1, "0", "2");
        put_task(r, 20, 1, "0", "3");
        put_task(r, 10, 9, "4", "5");
        cr_assert_eq(r->n_tasks, 3);
        cr_expect_eq(r->tasks[0].pid, 10);
        cr_expect_eq(r->tasks[1].pid, 20);
        cr_expect_eq(r->tasks[2].pid, 30);
        cr_expect_eq(r->tasks[0].starttime_ticks, 9);
        expect_cpumask(r->tasks[0].orig, "4", "replaced orig");
        expect_cpumask(r->tasks[0].set, "5", "replaced set");
        cr_expect_not(record_is_empty(r));
}

Test(record, lookup_task_needs_the_identity) {
        _cleanup_record_ Record *r = new_record();
        const CpuMask *set = NULL;
        uint64_t when = 0;

        put_task(r, 10, 5, "0", "1-2");
        cr_assert(record_lookup_task(r, 10, 5, &set, &when));
        expect_cpumask(set, "1-2", "looked up");
        cr_expect_eq(when, 7);
        cr_expect_not(record_lookup_task(r, 10, 6, NULL, NULL), "recycled pid");
        cr_expect_not(record_lookup_task(r, 11, 5, NULL, NULL), "another pid");
        cr_expect_not(record_lookup_task(NULL, 10, 5, NULL, NULL), "no record");
        cr_expect_not_null(record_find_task(r, 10));
        cr_expect_null(record_find_task(r, 9));
}

Test(record, update_task_set_takes_the_mask_of_an_existing_entry_only) {
        _cleanup_record_ Record *r = new_record();
        _cleanup_cpumask_ CpuMask *m = NULL, *empty = cpumask_new(64);

        put_task(r, 10, 5, "0", "1");
        cr_assert_not_null(empty);
        cr_assert_eq(cpumask_parse("3", 64, &m, NULL), 0);
        cr_expect_eq(record_update_task_set(r, 11, &m), -ENOENT);
        cr_expect_not_null(m, "not taken on failure");
        cr_expect_eq(record_update_task_set(r, 10, &empty), -EINVAL);
        cr_expect_not_null(empty, "not taken on failure");
        cr_assert_eq(record_update_task_set(r, 10, &m), 0);
        cr_expect_null(m, "taken");
        expect_cpumask(r->tasks[0].set, "3", "updated");
        expect_cpumask(r->tasks[0].orig, "0", "orig untouched");
}

Test(record, drop_task_removes_only_that_pid) {
        _cleanup_record_ Record *r = new_record();

        put_task(r, 10, 1, "0", "1");
        put_task(r, 20, 1, "0", "1");
        record_drop_task(r, 15);
        cr_expect_eq(r->n_tasks, 2);
        record_drop_task(r, 10);
        cr_assert_eq(r->n_tasks, 1);
        cr_expect_eq(r->tasks[0].pid, 20);
        record_drop_task(r, 20);
        cr_expect_eq(r->n_tasks, 0);
        cr_expect(record_is_empty(r));
}

Test(record, cgroup_values_are_kept_per_attribute_and_path) {
        _cleanup_record_ Record *r = new_record();
        uint64_t orig = 0, set = 0;

        cr_assert_eq(record_put_cgroup(r, "b", W, 100, 150), 0);
        cr_assert_eq(record_put_cgroup(r, "a", W, 1024, 512), 0);
        cr_assert_eq(r->n_cgroups, 2);
        cr_expect_str_eq(r->cgroups[0].path, "a");
        cr_expect_str_eq(r->cgroups[1].path, "b");
        cr_assert(record_lookup_cgroup(r, "b", W, &orig, &set));
        cr_expect_eq(orig, 100);
        cr_expect_eq(set, 150);
        cr_expect_not(record_lookup_cgroup(r, "c", W, NULL, NULL));
        cr_expect_not(record_lookup_cgroup(NULL, "b", W, NULL, NULL));
        cr_expect_not(record_lookup_cgroup(r, "b", _RECORD_CGROUP_ATTR_MAX, NULL, NULL));
        cr_assert_eq(record_put_cgroup(r, "b", W, 100, 200), 0);
        cr_expect_eq(r->n_cgroups, 2, "the same path replaces");
        cr_expect_eq(record_update_cgroup_set(r, "b", W, 300), 0);
        cr_assert(record_lookup_cgroup(r, "b", W, &orig, &set));
        cr_expect_eq(orig, 100);
        cr_expect_eq(set, 300);
        cr_expect_eq(record_update_cgroup_set(r, "c", W, 1), -ENOENT);
        cr_expect_eq(record_put_cgroup(r, "c", _RECORD_CGROUP_ATTR_MAX, 1, 1), -EINVAL);
        cr_expect_eq(record_put_cgroup(r, NULL, W, 1, 1), -EINVAL);
        cr_expect_eq(r->n_cgroups, 2);
}

Test(record, a_group_goes_with_its_last_value) {
        _cleanup_record_ Record *r = new_record();

        cr_assert_eq(record_put_cgroup(r, "a", W, 1, 2), 0);
        cr_assert_eq(record_put_cgroup(r, "b", W, 1, 2), 0);
        record_drop_cgroup_value(r, "a", W);
        cr_assert_eq(r->n_cgroups, 1);
        cr_expect_str_eq(r->cgroups[0].path, "b");
        cr_expect_null(record_find_cgroup(r, "a"));
        record_drop_cgroup(r, "b");
        cr_expect_eq(r->n_cgroups, 0);
        record_drop_cgroup(r, "b"); /* nothing there: no-op */
        cr_expect(record_is_empty(r));
}

Test(record, ban_needs_the_identity_and_stays_in_memory) {
        _cleanup_record_ Record *r = new_record();

        cr_expect_not(record_task_banned(r, 10, 5));
        cr_assert_eq(record_ban_task(r, 20, 1), 0);
        cr_assert_eq(record_ban_task(r, 10, 5), 0);
        cr_expect(record_task_banned(r, 10, 5));
        cr_expect_not(record_task_banned(r, 10, 6), "recycled pid");
        cr_expect_not(record_task_banned(NULL, 10, 5));
        cr_assert_eq(record_ban_task(r, 10, 6), 0);
        cr_expect_eq(r->n_bans, 2, "the same pid replaces");
        cr_expect(record_task_banned(r, 10, 6));
        cr_expect_not(record_task_banned(r, 10, 5));
        cr_expect(record_is_empty(r), "bans are not changes");
        record_unban_task(r, 10);
        cr_expect_not(record_task_banned(r, 10, 6));
        cr_expect(record_task_banned(r, 20, 1));
}

Test(record, copy_is_deep_and_clear_keeps_the_bans) {
        _cleanup_record_ Record *r = new_record(), *c = NULL;
        _cleanup_free_ char *a = NULL, *b = NULL;

        put_task(r, 10, 5, "0", "1");
        cr_assert_eq(record_put_cgroup(r, "g", W, 1, 2), 0);
        cr_assert_eq(record_ban_task(r, 30, 3), 0);
        cr_assert_eq(record_copy(r, &c), 0);
        cr_assert_eq(record_format(r, &a), 0);
        cr_assert_eq(record_format(c, &b), 0);
        cr_expect_str_eq(a, b);
        cr_expect(record_task_banned(c, 30, 3));
        cr_expect_neq(c->tasks[0].set, r->tasks[0].set, "masks are copies");
        cr_expect_neq(c->cgroups[0].path, r->cgroups[0].path, "paths are copies");
        record_clear(r);
        cr_expect(record_is_empty(r));
        cr_expect(record_task_banned(r, 30, 3));
        cr_expect_eq(c->n_tasks, 1, "the copy is untouched");
        cr_expect_eq(c->n_cgroups, 1, "the copy is untouched");
}

/* ---- on disk */

static int open_dir(const char *path) {
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        cr_assert_geq(fd, 0, "open %s: %s", path, strerror(errno));
        return fd;
}

static bool exists_at(int dir_fd, const char *name) {
        return faccessat(dir_fd, name, F_OK, 0) == 0;
}

Test(record_file, save_then_load_gives_the_same_record) {
        _cleanup_free_ char *dir = make_tmpdir(), *a = NULL, *b = NULL, *text = NULL, *path = NULL;
        _cleanup_record_ Record *r = new_record(), *back = NULL;
        _cleanup_close_ int fd = open_dir(dir);
        RecordFileInfo info = { .line = 99 };

        put_task(r, 10, 5, "0-1", "2");
        cr_assert_eq(record_put_cgroup(r, "a b/c", W, 1024, 2048), 0);
        cr_assert_eq(record_save_at(fd, r), 0);
        cr_expect_not(exists_at(fd, "changes.tmp"), "the temporary file was renamed");
        cr_assert_eq(record_load_at(fd, 64, &back, &info), 0);
        cr_expect_eq(info.line, 0);
        cr_expect_eq(info.entries, 2);
        cr_assert_eq(record_format(r, &a), 0);
        cr_assert_eq(record_format(back, &b), 0);
        cr_expect_str_eq(a, b);
        cr_assert_gt(asprintf(&path, "%s/" RECORD_FILE, dir), 0);
        text = read_all(path);
        cr_expect_str_eq(text, a, "the file is record_format()'s text");
        rm_rf(dir);
}

Test(record_file, saving_an_empty_record_removes_the_file) {
        _cleanup_free_ char *dir = make_tmpdir();
        _cleanup_record_ Record *r = new_record(), *back = NULL;
        _cleanup_close_ int fd = open_dir(dir);

        cr_expect_eq(record_load_at(fd, 64, &back, NULL), -ENOENT, "none yet");
        put_task(r, 10, 5, "0", "1");
        cr_assert_eq(record_save_at(fd, r), 0);
        cr_expect(exists_at(fd, RECORD_FILE));
        record_clear(r);
        cr_assert_eq(record_save_at(fd, r), 0);
        cr_expect_not(exists_at(fd, RECORD_FILE));
        cr_expect_eq(record_save_at(fd, r), 0, "nothing to remove is fine");
        cr_expect_eq(record_load_at(fd, 64, &back, NULL), -ENOENT);
        cr_expect_null(back);
        rm_rf(dir);
}

Test(record_file, save_of_what_cannot_be_read_back_keeps_the_old_file) {
        _cleanup_free_ char *dir = make_tmpdir(), *path = NULL, *before = NULL, *after = NULL;
        _cleanup_record_ Record *r = new_record();
        _cleanup_close_ int fd = open_dir(dir);

        put_task(r, 10, 5, "0", "1");
        cr_assert_eq(record_save_at(fd, r), 0);
        cr_assert_gt(asprintf(&path, "%s/" RECORD_FILE, dir), 0);
        before = read_all(path);
        cr_assert_eq(record_put_cgroup(r, "/not/valid", W, 1, 2), 0);
        cr_expect_eq(record_save_at(fd, r), -EINVAL);
        after = read_all(path);
        cr_expect_str_eq(after, before);
        cr_expect_not(exists_at(fd, "changes.tmp"));
        cr_expect_eq(record_save_at(-EBADF, r), -EBADF);
        rm_rf(dir);
}

Test(record_file, load_refuses_a_nul_byte_and_names_a_bad_line) {
        _cleanup_free_ char *dir = make_tmpdir();
        _cleanup_record_ Record *back = NULL;
        _cleanup_close_ int fd = open_dir(dir), f = -EBADF;
        RecordFileInfo info = { .line = 99 };

        f = openat(fd, RECORD_FILE, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        cr_assert_geq(f, 0);
        cr_assert_eq(write(f, HEADER "task 1\0", sizeof(HEADER "task 1\0")),
                     (ssize_t) sizeof(HEADER "task 1\0"));
        cr_expect_eq(record_load_at(fd, 64, &back, &info), -EBADMSG);
        cr_expect_eq(info.line, 0, "no line is at fault for a NUL byte");
        cr_expect_null(back);
        write_file_at(fd, RECORD_FILE, HEADER "task 12 5 0 1 7\nnonsense\n");
        cr_expect_eq(record_load_at(fd, 64, &back, &info), -EBADMSG);
        cr_expect_eq(info.line, 3);
        cr_expect_null(back);
        rm_rf(dir);
}

/* dir_fd/changes: the header and n task lines of distinct pids, valid ones, with a line cut
 * short at the end when cut. */
static void write_tasks(int dir_fd, size_t n, bool cut) {
        _cleanup_fclose_ FILE *f = NULL;
        int fd = openat(dir_fd, RECORD_FILE, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        cr_assert_geq(fd, 0);
        f = fdopen(fd, "w");
        cr_assert_not_null(f);
        fputs(HEADER, f);
        for (size_t i = 0; i < n; i++)
                fprintf(f, "task %zu 17 0 1 9\n", 100000 + i);
        if (cut)
                fputs("task 99 17 0", f);
        cr_assert_eq(fflush(f), 0);
}

/* Issue 21 item 3: a record of the 64 MiB cap's 2.9 million lines took 16 s and 581 MB to
 * reconcile. Entries past RECORD_ENTRIES_MAX are counted, never parsed. */
Test(record_file, more_entries_than_the_cap_are_refused_unparsed_with_their_count) {
        _cleanup_free_ char *dir = make_tmpdir();
        _cleanup_record_ Record *back = NULL;
        _cleanup_close_ int fd = open_dir(dir);
        RecordFileInfo info = {};

        write_tasks(fd, RECORD_ENTRIES_MAX + 1, false);
        cr_expect_eq(record_load_at(fd, 64, &back, &info), -E2BIG);
        cr_expect_null(back);
        cr_expect_eq(info.entries, RECORD_ENTRIES_MAX + 1);
        cr_expect_eq(info.line, 0);
        /* a cut last line is an entry too: counted before the parser would find it cut */
        write_tasks(fd, RECORD_ENTRIES_MAX, true);
        cr_expect_eq(record_load_at(fd, 64, &back, &info), -E2BIG);
        cr_expect_eq(info.entries, RECORD_ENTRIES_MAX + 1);
        rm_rf(dir);
}

Test(record_file, a_record_at_the_entries_cap_loads_whole) {
        _cleanup_free_ char *dir = make_tmpdir();
        _cleanup_record_ Record *back = NULL;
        _cleanup_close_ int fd = open_dir(dir);
        RecordFileInfo info = {};

        write_tasks(fd, RECORD_ENTRIES_MAX, false);
        cr_assert_eq(record_load_at(fd, 64, &back, &info), 0);
        cr_expect_eq(back->n_tasks, RECORD_ENTRIES_MAX);
        cr_expect_eq(info.entries, RECORD_ENTRIES_MAX);
        cr_expect_eq(back->tasks[RECORD_ENTRIES_MAX - 1].pid, 100000 + RECORD_ENTRIES_MAX - 1);
        rm_rf(dir);
}

Test(record_file, a_record_over_the_size_cap_is_refused_by_its_size_alone) {
        _cleanup_free_ char *dir = make_tmpdir();
        _cleanup_record_ Record *back = NULL;
        _cleanup_close_ int fd = open_dir(dir), f = -EBADF;
        RecordFileInfo info = {};

        /* NUL bytes all through (a hole): refused as corrupt were a byte of it read */
        f = openat(fd, RECORD_FILE, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        cr_assert_geq(f, 0);
        cr_assert_eq(ftruncate(f, RECORD_SIZE_MAX + 1), 0);
        cr_expect_eq(record_load_at(fd, 64, &back, &info), -EFBIG);
        cr_expect_eq(info.size_bytes, RECORD_SIZE_MAX + 1);
        cr_expect_eq(info.entries, 0, "read");
        cr_assert_eq(ftruncate(f, RECORD_SIZE_MAX), 0);
        cr_expect_eq(record_load_at(fd, 64, &back, &info), -EBADMSG, "at the cap it is read");
        rm_rf(dir);
}

Test(record_file, set_aside_keeps_the_text_as_changes_corrupt) {
        _cleanup_free_ char *dir = make_tmpdir(), *path = NULL, *kept = NULL;
        _cleanup_close_ int fd = open_dir(dir);

        cr_expect_eq(record_set_aside_at(fd), -ENOENT);
        write_file_at(fd, RECORD_FILE, "garbage\n");
        cr_assert_eq(record_set_aside_at(fd), 0);
        cr_expect_not(exists_at(fd, RECORD_FILE));
        cr_assert_gt(asprintf(&path, "%s/" RECORD_CORRUPT_FILE, dir), 0);
        kept = read_all(path);
        cr_expect_str_eq(kept, "garbage\n");
        rm_rf(dir);
}
