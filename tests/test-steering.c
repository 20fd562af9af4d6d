/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/steering: what else steers the CPUs (sched_ext, NUMA balancing, numad), over trees made
 * here, and the sentence the daemon logs about it. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "steering.h"
#include "testutil.h"

Test(steering, sched_ext_states_parse_with_or_without_newline) {
        static const struct {
                const char *text;
                SchedExtState want;
        } ok[] = {
                { "disabled", SCHED_EXT_DISABLED },
                { "enabled\n", SCHED_EXT_ENABLED },
                { "enabling\n", SCHED_EXT_ENABLING },
                { "disabling", SCHED_EXT_DISABLING },
        };
        static const char *const bad[] = { "",          "\n",       "enabled\n\n", "Enabled",
                                           "enabled x", " enabled", "enable",      "enabledd" };
        SchedExtState s;

        for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
                cr_assert_eq(steering_parse_sched_ext(ok[i].text, &s), 0, "%s", ok[i].text);
                cr_expect_eq(s, ok[i].want, "%s", ok[i].text);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                s = SCHED_EXT_ABSENT;
                cr_expect_eq(steering_parse_sched_ext(bad[i], &s), -EBADMSG, "\"%s\"", bad[i]);
                cr_expect_eq(s, SCHED_EXT_ABSENT, "*ret written on failure");
        }
        cr_expect_eq(steering_parse_sched_ext(NULL, &s), -EINVAL);
        cr_expect_eq(steering_parse_sched_ext("enabled", NULL), -EINVAL);
}

Test(steering, numa_balancing_is_0_1_or_2) {
        static const char *const bad[] = { "", "3", "-1", "01", "1 ", "on", "1\n\n" };
        int v;

        cr_assert_eq(steering_parse_numa_balancing("0\n", &v), 0);
        cr_expect_eq(v, 0);
        cr_assert_eq(steering_parse_numa_balancing("1", &v), 0);
        cr_expect_eq(v, 1);
        cr_assert_eq(steering_parse_numa_balancing("2\n", &v), 0);
        cr_expect_eq(v, 2);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                cr_expect_eq(steering_parse_numa_balancing(bad[i], &v), -EBADMSG, "\"%s\"", bad[i]);
}

/* A root with what is given (NULL: the file is missing). */
static char *tree(const char *state, const char *ops, const char *numa, const char *numad_comm) {
        char *root = make_tmpdir();
        int fd = open(root, O_DIRECTORY | O_RDONLY | O_CLOEXEC);

        cr_assert_geq(fd, 0);
        write_file_at(fd, "proc/1/comm", "init\n");
        write_file_at(fd, "proc/self/comm", "numad\n"); /* not a pid: never read */
        if (state)
                write_file_at(fd, "sys/kernel/sched_ext/state", state);
        if (ops)
                write_file_at(fd, "sys/kernel/sched_ext/root/ops", ops);
        if (numa)
                write_file_at(fd, "proc/sys/kernel/numa_balancing", numa);
        if (numad_comm)
                write_file_at(fd, "proc/4242/comm", numad_comm);
        (void) close(fd);
        return root;
}

Test(steering, a_plain_machine_has_nothing_else_steering) {
        _cleanup_free_ char *root = tree(NULL, NULL, "0\n", NULL);
        char text[512];
        Steering s;

        cr_assert_eq(steering_read(root, &s), 0);
        cr_expect_eq(s.sched_ext, SCHED_EXT_ABSENT);
        cr_expect_str_empty(s.sched_ext_ops);
        cr_expect_eq(s.numa_balancing, 0);
        cr_expect_not(s.numad);
        cr_expect_not(steering_sched_ext_active(&s));
        steering_describe(&s, text, sizeof text);
        cr_expect_str_empty(text);
        rm_rf(root);
}

Test(steering, a_loaded_scheduler_numad_and_numa_balancing_are_all_named) {
        _cleanup_free_ char *root = tree("enabled\n", "rusty_1.0.4\n", "1\n", "numad\n");
        char text[1024];
        Steering s;

        cr_assert_eq(steering_read(root, &s), 0);
        cr_expect_eq(s.sched_ext, SCHED_EXT_ENABLED);
        cr_expect_str_eq(s.sched_ext_ops, "rusty_1.0.4");
        cr_expect_eq(s.numa_balancing, 1);
        cr_expect(s.numad);
        cr_expect(steering_sched_ext_active(&s));
        steering_describe(&s, text, sizeof text);
        cr_expect(strstr(text, "the sched_ext scheduler 'rusty_1.0.4' is enabled"), "%s", text);
        cr_expect(strstr(text, "ignore cpu.weight and cpu.idle"), "%s", text);
        cr_expect(strstr(text, "numad runs"), "%s", text);
        cr_expect(strstr(text, "numa_balancing=1"), "%s", text);
        /* a buffer too short is cut, never overrun */
        steering_describe(&s, text, 16);
        cr_expect_eq(strlen(text), 15);
        rm_rf(root);
}

Test(steering, a_disabled_scheduler_and_another_comm_are_nothing) {
        _cleanup_free_ char *root = tree("disabled\n", NULL, NULL, "numadx\n");
        char text[256];
        Steering s;

        cr_assert_eq(steering_read(root, &s), 0);
        cr_expect_eq(s.sched_ext, SCHED_EXT_DISABLED);
        cr_expect_eq(s.numa_balancing, -1, "no such setting");
        cr_expect_not(s.numad);
        cr_expect_not(steering_sched_ext_active(&s));
        steering_describe(&s, text, sizeof text);
        cr_expect_str_empty(text);
        rm_rf(root);
}

Test(steering, malformed_files_are_errors_and_leave_ret_alone) {
        _cleanup_free_ char *a = tree("on\n", NULL, "0\n", NULL),
                            *b = tree(NULL, NULL, "9\n", NULL);
        Steering s = { .numa_balancing = 77 };

        cr_expect_eq(steering_read(a, &s), -EBADMSG);
        cr_expect_eq(steering_read(b, &s), -EBADMSG);
        cr_expect_eq(s.numa_balancing, 77);
        cr_expect_eq(steering_read(a, NULL), -EINVAL);
        rm_rf(a);
        rm_rf(b);
}

Test(steering, this_machine_reads) {
        Steering s;

        /* whatever it has, reading it works: the files are there or missing, not malformed */
        cr_expect_eq(steering_read(NULL, &s), 0);
        cr_expect(s.numa_balancing >= -1 && s.numa_balancing <= 2);
}
