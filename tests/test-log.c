/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "testutil.h"

/* Runs fn with stderr sent to a temporary file and returns what it wrote. */
static char *capture_stderr(void (*fn)(void)) {
        char path[] = "/tmp/cgbalance-log.XXXXXX";
        int fd = mkstemp(path), saved = dup(STDERR_FILENO);
        static char buf[4096];
        ssize_t n;

        cr_assert_geq(fd, 0);
        cr_assert_geq(saved, 0);
        fflush(stderr);
        cr_assert_geq(dup2(fd, STDERR_FILENO), 0);
        fn();
        fflush(stderr);
        cr_assert_geq(dup2(saved, STDERR_FILENO), 0);
        close(saved);
        n = pread(fd, buf, sizeof buf - 1, 0);
        cr_assert_geq(n, 0);
        buf[n] = '\0';
        close(fd);
        unlink(path);
        return buf;
}

Test(log, level_names_parse_both_ways) {
        cr_expect_eq(log_level_from_string("debug"), LOG_DEBUG);
        cr_expect_eq(log_level_from_string("warning"), LOG_WARNING);
        cr_expect_eq(log_level_from_string("error"), LOG_ERR);
        cr_expect_eq(log_level_from_string("err"), LOG_ERR);
        cr_expect_eq(log_level_from_string("6"), LOG_INFO);
        cr_expect_eq(log_level_from_string("verbose"), -EINVAL);
        cr_expect_eq(log_level_from_string("8"), -EINVAL);
        cr_expect_eq(log_level_from_string(""), -EINVAL);
        cr_expect_eq(log_level_from_string(NULL), -EINVAL);
        cr_expect_str_eq(log_level_to_string(LOG_NOTICE), "notice");
        cr_expect_null(log_level_to_string(42));
}

static int errno_result;
static void log_enoent(void) {
        log_set_target(LOG_TARGET_STDERR);
        log_set_ident("cgtest");
        errno_result = log_error_errno(ENOENT, "Failed to open %s: %m", "/x");
}

Test(log, errno_variant_prints_m_and_returns_negative_errno) {
        char *out = capture_stderr(log_enoent);

        cr_expect_str_eq(out, "cgtest: Failed to open /x: No such file or directory\n");
        cr_expect_eq(errno_result, -ENOENT);
}

static void log_below_max(void) {
        log_set_target(LOG_TARGET_STDERR);
        log_set_ident(NULL);
        log_set_max_level(LOG_INFO);
        log_debug("hidden");
        errno_result = log_debug_errno(-EPERM, "hidden too");
        log_info("shown %d", 1);
}

Test(log, messages_above_max_level_are_dropped_but_return_the_error) {
        char *out = capture_stderr(log_below_max);

        cr_expect_str_eq(out, "shown 1\n");
        cr_expect_eq(errno_result, -EPERM);
}

Test(log, auto_target_is_journal_only_when_stderr_is_the_journal_stream) {
        struct stat st;
        char v[64];

        cr_assert_eq(fstat(STDERR_FILENO, &st), 0);
        snprintf(v, sizeof v, "%llu:%llu", (unsigned long long) st.st_dev,
                 (unsigned long long) st.st_ino);
        cr_assert_eq(setenv("JOURNAL_STREAM", v, 1), 0);
        log_set_target(LOG_TARGET_AUTO);
        cr_expect_eq(log_get_target(), LOG_TARGET_JOURNAL);

        snprintf(v, sizeof v, "%llu:%llu", (unsigned long long) st.st_dev,
                 (unsigned long long) st.st_ino + 1);
        cr_assert_eq(setenv("JOURNAL_STREAM", v, 1), 0);
        log_set_target(LOG_TARGET_AUTO);
        cr_expect_eq(log_get_target(), LOG_TARGET_STDERR);

        cr_assert_eq(unsetenv("JOURNAL_STREAM"), 0);
        log_set_target(LOG_TARGET_AUTO);
        cr_expect_eq(log_get_target(), LOG_TARGET_STDERR);
}

static void log_struct_to_stderr(void) {
        static const char *const fields[] = { "CGBALANCE_PID=42", "CGBALANCE_REASON=why" };

        log_set_target(LOG_TARGET_STDERR);
        log_set_ident("cgtest");
        log_set_max_level(LOG_INFO);
        log_struct(LOG_INFO, fields, 2, "Moved pid %d: %s", 42, "why");
        log_struct(LOG_DEBUG, fields, 2, "hidden");
}

/* On stderr a structured message is its message alone (the fields are for the journal), and
 * the level still filters it. */
Test(log, struct_on_stderr_prints_the_message_not_the_fields) {
        char *out = capture_stderr(log_struct_to_stderr);

        cr_expect_str_eq(out, "cgtest: Moved pid 42: why\n");
}
