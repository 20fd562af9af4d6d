/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loadgen chat, the VolanoMark simulator (seed 000): the arithmetic, the message framing and the
 * rows as pure functions; then the real binary at tiny sizes as root in its sandbox: the seed's
 * rows in the seed's order, the JSON holding the table's figures, nothing left behind (threads,
 * sockets, cgroups, files), SIGINT in the middle, and sizes or values refused up front.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chat.h"
#include "load.h"
#include "macro.h"
#include "runbin.h"
#include "sandbox.h"
#include "testutil.h"

#define LOADGEN BUILD_DIR "/loadgen"

/* ---- pure functions */

Test(chat, delivered_needs_and_rate) {
        ChatParams seed = { .rooms = 10, .users = 20, .messages = 100, .size = 100 };
        ChatParams one = { .rooms = 3, .users = 1, .messages = 100, .size = 100 };
        uint64_t tasks = 0, fds = 0;

        /* Every message goes to the other 19 of the room. */
        cr_expect_eq(chat_delivered(&seed), UINT64_C(10) * 20 * 100 * 19);
        cr_expect_eq(chat_delivered(&one), 0, "a user alone delivers nothing");
        chat_needs(&(ChatParams){ .rooms = 30, .users = 20 }, &tasks, &fds);
        cr_expect_eq(tasks, 2400);
        cr_expect_eq(fds, 1201);
        cr_expect_float_eq(chat_rate(380000, 5000000), 76000.0, 1e-9);
        cr_expect_float_eq(chat_rate(3, 2), 1.5e6, 1e-6);
        cr_expect_eq(chat_rate(380000, 0), 0);
}

Test(chat, a_message_checks_out_and_damage_is_caught) {
        uint8_t m[100], bad[100];
        unsigned sender = 99, seq = 99;

        chat_message_encode(m, sizeof m, 7, 3, 41);
        cr_assert_eq(chat_message_check(m, sizeof m, 7, 5, 20, &sender, &seq), 0);
        cr_expect_eq(sender, 3);
        cr_expect_eq(seq, 41);
        /* Another room, its own message, a sender beyond the room, a short message. */
        cr_expect_eq(chat_message_check(m, sizeof m, 6, 5, 20, &sender, &seq), -EBADMSG);
        cr_expect_eq(chat_message_check(m, sizeof m, 7, 3, 20, &sender, &seq), -EBADMSG);
        cr_expect_eq(chat_message_check(m, sizeof m, 7, 0, 3, &sender, &seq), -EBADMSG);
        cr_expect_eq(chat_message_check(m, CHAT_MESSAGE_MIN - 1, 7, 5, 20, &sender, &seq),
                     -EBADMSG);
        /* A byte of the header, and the last byte of the filler. */
        memcpy(bad, m, sizeof m);
        bad[0] ^= 1;
        cr_expect_eq(chat_message_check(bad, sizeof bad, 7, 5, 20, &sender, &seq), -EBADMSG);
        memcpy(bad, m, sizeof m);
        bad[99] ^= 0x80;
        cr_expect_eq(chat_message_check(bad, sizeof bad, 7, 5, 20, &sender, &seq), -EBADMSG);
        /* The smallest message is all header. */
        chat_message_encode(m, CHAT_MESSAGE_MIN, 0, 1, 2);
        cr_expect_eq(chat_message_check(m, CHAT_MESSAGE_MIN, 0, 0, 2, &sender, &seq), 0);
        cr_expect(sender == 1 && seq == 2);
}

Test(chat, rows_are_the_seeds) {
        char b[128];

        chat_format_header(b, sizeof b, "Vanilla");
        cr_expect_str_eq(b, "Configuration Parms Vanilla\n");
        chat_format_row(b, sizeof b, 10, 100, 69464.6);
        cr_expect_str_eq(b, "10 rooms, 100 messages 69465\n");
        chat_format_row(b, sizeof b, 30, 400, 6564.2);
        cr_expect_str_eq(b, "30 rooms, 400 messages 6564\n");
}

/* ---- the binary */

typedef struct Row {
        unsigned rooms, messages;
        double rate;
} Row;

/* The table: the header with its label, then "R rooms, M messages RATE" rows. */
static size_t parse_table(const char *out, const char *label, Row *rows, size_t max) {
        _cleanup_free_ char *header = NULL;
        const char *p;
        size_t n = 0;

        cr_assert_gt(asprintf(&header, "Configuration Parms %s\n", label), 0);
        cr_assert_eq(strncmp(out, header, strlen(header)), 0, "not the seed's header: %s", out);
        p = out + strlen(header);
        while (*p) {
                cr_assert_lt(n, max, "too many rows: %s", out);
                cr_assert_eq(sscanf(p, "%u rooms, %u messages %lf", &rows[n].rooms,
                                    &rows[n].messages, &rows[n].rate),
                             3, "not a row: %s", p);
                p = strchr(p, '\n');
                cr_assert(p, "a row without its newline");
                p++;
                n++;
        }
        return n;
}

/* The number after "key": in [from, to). */
static double json_value(const char *from, const char *to, const char *key) {
        _cleanup_free_ char *k = NULL;
        const char *p;
        double v;

        cr_assert_gt(asprintf(&k, "\"%s\": ", key), 0);
        p = strstr(from, k);
        cr_assert(p && p < to, "no %s in %.*s", key, (int) (to - from), from);
        cr_assert_eq(sscanf(p + strlen(k), "%lf", &v), 1);
        return v;
}

/* The n-th object of the JSON's "rows" array: [*ret_from, *ret_to). */
static bool json_row(const char *json, size_t n, const char **ret_from, const char **ret_to) {
        const char *p = strstr(json, "\"rows\": [");

        cr_assert(p, "no rows: %s", json);
        for (size_t i = 0;; i++) {
                const char *open = strchr(p, '{'), *close = strchr(p, '}'), *end = strchr(p, ']');

                if (!open || (end && end < open))
                        return false;
                cr_assert(close, "unterminated row");
                if (i == n) {
                        *ret_from = open;
                        *ret_to = close;
                        return true;
                }
                p = close + 1;
        }
}

/* No socket with `port` at either end is held by a process any more (a TIME_WAIT one is the
 * kernel's: its inode is 0). */
static void expect_no_socket(unsigned port) {
        _cleanup_free_ char *tcp = read_all("/proc/net/tcp");
        const char *line = strchr(tcp, '\n');

        cr_assert(line, "/proc/net/tcp: %s", tcp);
        while ((line = strchr(line, '\n')) && line[1]) {
                unsigned lport, rport;
                unsigned long inode;

                line++;
                if (sscanf(line, "%*d: %*x:%x %*x:%x %*x %*x:%*x %*x:%*x %*x %*u %*d %lu", &lport,
                           &rport, &inode) != 3)
                        continue;
                cr_expect(!((lport == port || rport == port) && inode != 0),
                          "a socket of port %u is still open: %.120s", port, line);
        }
}

/* Nothing of a run without --dir (chat writes no files): no process of its session, no cgroup,
 * no run directory in the sandbox's default place. */
static void expect_clean_default_dir(const Run *r) {
        _cleanup_free_ char *g = group_left(r->pid), *dir = NULL;

        cr_expect(session_gone(r->pid), "a process of the run is left");
        cr_expect_null(g, "a cgroup of the run is left: %s", g);
        cr_assert_gt(asprintf(&dir, SANDBOX_DEFAULT_DIR "/loadgen-%d", (int) r->pid), 0);
        cr_expect(access(dir, F_OK) < 0 && errno == ENOENT, "%s is left", dir);
}

/* Runs chat with args and --json=FILE; returns the run, the JSON in *ret_json. */
static Run run_chat(const char *const *args, char **ret_json) {
        _cleanup_free_ char *dir = make_tmpdir(), *path = NULL, *opt = NULL;
        const char *argv[32] = { LOADGEN, "chat" };
        size_t n = 2;
        Run r;

        cr_assert_gt(asprintf(&path, "%s/chat.json", dir), 0);
        cr_assert_gt(asprintf(&opt, "--json=%s", path), 0);
        for (; *args; args++)
                argv[n++] = *args;
        argv[n++] = opt;
        argv[n] = NULL;
        r = bin_run(argv);
        *ret_json = read_all(path);
        rm_rf(dir);
        return r;
}

Test(chat, one_room_ten_messages_matches_its_json_and_leaves_nothing, .timeout = 60) {
        _cleanup_free_ char *json = NULL;
        const char *from, *to;
        Row rows[4];
        Run r;
        size_t n;
        double rate, elapsed;

        skip_unless_root();
        r = run_chat((const char *const[]){ "--rooms", "1", "--messages", "10", NULL }, &json);
        cr_assert(exited_with(r.status, 0), "stderr: %s", r.err);
        cr_log_info("%s", r.out);
        n = parse_table(r.out, "default", rows, ELEMENTSOF(rows));
        cr_assert_eq(n, 1, "%s", r.out);
        cr_expect(rows[0].rooms == 1 && rows[0].messages == 10, "%s", r.out);
        cr_expect_gt(rows[0].rate, 0);
        cr_expect(!json_row(json, 1, &from, &to), "two rows in %s", json);
        cr_assert(json_row(json, 0, &from, &to), "no row in %s", json);
        /* 20 users each hear the other 19 send 10. */
        cr_expect_eq(json_value(from, to, "delivered"), 20 * 19 * 10);
        cr_expect_eq(json_value(from, to, "users"), 20);
        cr_expect_eq(json_value(from, to, "size"), 100);
        elapsed = json_value(from, to, "elapsed_usec");
        rate = json_value(from, to, "messages_per_sec");
        cr_expect(elapsed > 0 && elapsed < 30e6, "elapsed %.0f us", elapsed);
        cr_expect(fabs(rate - 3800 * 1e6 / elapsed) < 0.01 * rate, "rate %.3f, elapsed %.0f", rate,
                  elapsed);
        cr_expect(fabs(rate - rows[0].rate) <= 0.5, "JSON %.3f, table %.0f", rate, rows[0].rate);
        cr_expect(strstr(json, "\"benchmark\": \"chat\""), "%s", json);
        cr_expect(strstr(json, "\"metric\": \"delivered messages per second\""), "%s", json);
        expect_no_socket((unsigned) json_value(from, to, "port"));
        expect_clean_default_dir(&r);
        bin_run_done(&r);
}

Test(chat, a_two_by_two_axis_runs_rooms_outer_messages_inner, .timeout = 60) {
        static const unsigned want[][2] = { { 1, 5 }, { 1, 12 }, { 2, 5 }, { 2, 12 } };
        _cleanup_free_ char *json = NULL;
        Row rows[8];
        Run r;
        size_t n;

        skip_unless_root();
        r = run_chat((const char *const[]){ "--rooms", "1,2", "--messages", "5,12", "--users", "3",
                                            "--size", "40", "--label", "mq", NULL },
                     &json);
        cr_assert(exited_with(r.status, 0), "stderr: %s", r.err);
        cr_log_info("%s", r.out);
        n = parse_table(r.out, "mq", rows, ELEMENTSOF(rows));
        cr_assert_eq(n, 4, "%s", r.out);
        for (size_t i = 0; i < n; i++) {
                const char *from, *to;

                cr_expect(rows[i].rooms == want[i][0] && rows[i].messages == want[i][1],
                          "row %zu: %u rooms, %u messages", i, rows[i].rooms, rows[i].messages);
                cr_expect_gt(rows[i].rate, 0);
                cr_assert(json_row(json, i, &from, &to), "no JSON row %zu", i);
                cr_expect_eq(json_value(from, to, "rooms"), want[i][0]);
                cr_expect_eq(json_value(from, to, "messages"), want[i][1]);
                cr_expect_eq(json_value(from, to, "delivered"), want[i][0] * 3 * 2 * want[i][1]);
                cr_expect_eq(json_value(from, to, "size"), 40);
                cr_expect(fabs(json_value(from, to, "messages_per_sec") - rows[i].rate) <= 0.5,
                          "row %zu: JSON and table differ", i);
                expect_no_socket((unsigned) json_value(from, to, "port"));
        }
        cr_expect(strstr(json, "\"label\": \"mq\""), "%s", json);
        expect_clean_default_dir(&r);
        bin_run_done(&r);
}

Test(chat, json_on_stdout_replaces_the_table, .timeout = 60) {
        Run r;

        skip_unless_root();
        r = bin_run((const char *const[]){ LOADGEN, "chat", "--rooms", "1", "--messages", "3",
                                           "--users", "2", "--json", NULL });
        cr_assert(exited_with(r.status, 0), "stderr: %s", r.err);
        cr_expect(r.out[0] == '{' && strstr(r.out, "\"rows\": ["), "%s", r.out);
        cr_expect_null(strstr(r.out, "Configuration Parms"), "%s", r.out);
        cr_expect(strstr(r.out, "\"delivered\": 6,"), "%s", r.out);
        bin_run_done(&r);
}

/* The number of threads of the first child of pid (the benchmark's process), or 0. */
static unsigned bench_threads(pid_t pid) {
        _cleanup_free_ char *path = NULL, *children = NULL, *status = NULL, *spath = NULL;
        const char *t;
        int child;
        unsigned n = 0;

        cr_assert_gt(asprintf(&path, "/proc/%d/task/%d/children", (int) pid, (int) pid), 0);
        children = read_all(path);
        if (sscanf(children, "%d", &child) != 1)
                return 0;
        cr_assert_gt(asprintf(&spath, "/proc/%d/status", child), 0);
        status = read_all(spath);
        t = strstr(status, "Threads:");
        if (t)
                (void) sscanf(t, "Threads: %u", &n);
        return n;
}

Test(chat, sigint_in_the_middle_ends_every_thread_and_leaves_nothing, .timeout = 60) {
        uint64_t t0 = now_usec();
        unsigned threads = 0;
        Run r = { 0 };

        skip_unless_root();
        /* 4 rooms of 10 users: 160 threads, 36 million messages, far more than the test waits. */
        bin_start(&r, (const char *const[]){ LOADGEN, "chat", "--rooms", "4", "--messages",
                                             "100000", "--users", "10", NULL });
        while (now_usec() - t0 < 20000000 && (threads = bench_threads(r.pid)) < 4 * 10 * 4 + 1)
                usleep(20000);
        cr_assert_geq(threads, 161, "the chat's threads never all ran (%u)", threads);
        usleep(300000);
        cr_assert_eq(kill(r.pid, SIGINT), 0);
        t0 = now_usec();
        bin_finish(&r);
        cr_expect_lt(now_usec() - t0, 10000000, "SIGINT took %" PRIu64 " us", now_usec() - t0);
        cr_expect(exited_with(r.status, 128 + SIGINT), "status %d, stderr: %s", r.status, r.err);
        cr_expect(strstr(r.err, "Interrupted"), "stderr: %s", r.err);
        cr_expect_str_eq(r.out, "Configuration Parms default\n");
        expect_clean_default_dir(&r);
        bin_run_done(&r);
}

Test(chat, bad_values_exit_2_before_anything_starts) {
        static const char *const bad[][3] = {
                { "--rooms", "0", "--rooms" },       { "--rooms", "x", "--rooms" },
                { "--rooms", "3-1", "--rooms" },     { "--rooms", "10001", "--rooms" },
                { "--messages", "0", "--messages" }, { "--messages", "1,", "--messages" },
                { "--users", "1", "--users" },       { "--users", "-3", "--users" },
                { "--size", "15", "--size" },        { "--size", "1025", "--size" },
                { "--cpus", "4000", "--cpus 4000" }, { "--no-such-option", NULL, "no-such" },
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                Run r = bin_run(
                        (const char *const[]){ LOADGEN, "chat", bad[i][0], bad[i][1], NULL });

                cr_expect(exited_with(r.status, 2), "%s %s: status %d", bad[i][0], bad[i][1],
                          r.status);
                cr_expect(strstr(r.err, bad[i][2]), "%s %s: %s", bad[i][0], bad[i][1], r.err);
                cr_expect_str_empty(r.out, "%s %s started: %s", bad[i][0], bad[i][1], r.out);
                bin_run_done(&r);
        }
}

Test(chat, a_size_beyond_this_machines_limits_is_refused_up_front) {
        /* 40 million threads: above any kernel.pid_max (at most 4194304). */
        uint64_t t0 = now_usec();
        Run r = bin_run((const char *const[]){ LOADGEN, "chat", "--rooms", "10,10000", "--users",
                                               "1000", NULL });

        cr_expect(exited_with(r.status, 2), "status %d, stderr: %s", r.status, r.err);
        cr_expect(strstr(r.err, "--rooms 10000 of 1000 users"), "stderr: %s", r.err);
        cr_expect(strstr(r.err, "kernel.") || strstr(r.err, "RLIMIT") ||
                          strstr(r.err, "max_map_count"),
                  "no limit named: %s", r.err);
        cr_expect_str_empty(r.out);
        cr_expect_lt(now_usec() - t0, 5000000, "it ran something first");
        bin_run_done(&r);
}

Test(chat, help_names_every_option_and_the_metric) {
        static const char *const want[] = {
                "--rooms", "--messages", "--users",     "--size",
                "--label", "--json",     "--cpus",      "--no-sandbox",
                "--help",  "10-30:10",   "100-400:100", "delivered messages per second"
        };
        Run r = bin_run((const char *const[]){ LOADGEN, "chat", "--help", NULL });

        cr_expect(exited_with(r.status, 0));
        for (size_t i = 0; i < ELEMENTSOF(want); i++)
                cr_expect(strstr(r.out, want[i]), "no %s in: %s", want[i], r.out);
        bin_run_done(&r);
}
