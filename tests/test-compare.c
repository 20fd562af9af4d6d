/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loadgen compare and sweep (the pure merge is test-compare-merge.c): json_raw, bad arguments
 * refused before anything runs; and real runs as root: the suite once per row,
 * cgbalanced really started for a daemon row and really stopped after it, the results JSON.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* json-c's typedef json_bool and lib/json.h's json_bool() share a name: rename the typedef. */
#define json_bool json_c_bool
#include <json-c/json.h>
#undef json_bool

#include "benchmark.h"
#include "compare.h"
#include "config.h"
#include "json.h"
#include "macro.h"
#include "runbin.h"
#include "testutil.h"
#include "tunables.h"

#define LOADGEN BUILD_DIR "/loadgen"

static bool starts_with(const char *s, const char *prefix) {
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---- json_raw: another program's JSON, embedded */

Test(json, raw_values_are_indented_to_their_level) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        Json j = { .f = open_memstream(&buf, &size) };

        cr_assert(j.f);
        json_begin(&j, '{');
        json_key(&j, "rows");
        json_begin(&j, '[');
        json_raw(&j, NULL, "{\n  \"a\": \"x\\ny\",\n  \"b\": [\n    1\n  ]\n}\n\n");
        json_null(&j, NULL);
        json_end(&j, ']');
        json_end(&j, '}');
        cr_assert_eq(fclose(j.f), 0);
        cr_expect_str_eq(buf, "{\n"
                              "  \"rows\": [\n"
                              "    {\n"
                              "      \"a\": \"x\\ny\",\n"
                              "      \"b\": [\n"
                              "        1\n"
                              "      ]\n"
                              "    },\n"
                              "    null\n"
                              "  ]\n"
                              "}\n");
}

/* ---- bad arguments: exit 2, naming what is wrong, before anything runs */

static void expect_refused(const char *const argv[], const char *what) {
        Run r = bin_run(argv);

        cr_expect(exited_with(r.status, 2), "%s: status %d, stderr: %s", what, r.status, r.err);
        cr_expect(strstr(r.err, what), "stderr does not name %s: %s", what, r.err);
        cr_expect_str_empty(r.out, "%s: printed %s", what, r.out);
        cr_expect_null(strstr(r.err, "Row "), "%s: a row ran: %s", what, r.err);
        bin_run_done(&r);
}

Test(args, bad_arguments_exit_2_naming_the_field) {
        _cleanup_free_ char *dir = make_tmpdir(), *bad = NULL, *same = NULL, *spaced = NULL;
        int fd;

        cr_assert_gt(asprintf(&bad, "%s/bad.conf", dir), 0);
        fd = open(bad, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        cr_assert_geq(fd, 0);
        cr_assert_gt(dprintf(fd, "[balance]\n\nimbalance_pct = 50\n"), 0);
        close(fd);
        cr_assert_gt(asprintf(&same, "%s/default.conf", dir), 0);
        fd = open(same, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        cr_assert_geq(fd, 0);
        close(fd);
        cr_assert_gt(asprintf(&spaced, "%s/a b.conf", dir), 0);
        fd = open(spaced, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        cr_assert_geq(fd, 0);
        close(fd);

        expect_refused((const char *const[]){ LOADGEN, "sweep", "no_such_key=1,2", "--",
                                              "hackbench", NULL },
                       "no_such_key");
        expect_refused((const char *const[]){ LOADGEN, "sweep", "imbalance_pct=110,50", "--",
                                              "hackbench", NULL },
                       "\"50\" for imbalance_pct");
        expect_refused((const char *const[]){ LOADGEN, "sweep", "balance.interval=1s", "--",
                                              "hackbench", NULL },
                       "balance.interval");
        expect_refused((const char *const[]){ LOADGEN, "sweep", "state_directory=/x", "--",
                                              "hackbench", NULL },
                       "state_directory");
        expect_refused((const char *const[]){ LOADGEN, "sweep", "imbalance_pct=110,,120", "--",
                                              "hackbench", NULL },
                       "imbalance_pct=110,,120");
        expect_refused((const char *const[]){ LOADGEN, "sweep", "imbalance_pct=110,110", "--",
                                              "hackbench", NULL },
                       "imbalance_pct=110");
        expect_refused((const char *const[]){ LOADGEN, "sweep", "--", "hackbench", NULL },
                       "KEY=V1,V2");
        expect_refused((const char *const[]){ LOADGEN, "compare", "hackbench", NULL }, "\"--\"");
        expect_refused((const char *const[]){ LOADGEN, "compare", "--static", "job=weight:0", "--",
                                              "hackbench", NULL },
                       "--static \"job=weight:0\": weight \"0\"");
        expect_refused((const char *const[]){ LOADGEN, "compare", "--static", "job=idle",
                                              "--static", "run=idle", "--", "hackbench", NULL },
                       "--static names the group \"run\": a run, contest or benchmark has only "
                       "job and load");
        expect_refused((const char *const[]){ LOADGEN, "compare", "--static", "job=weight:5+", "--",
                                              "hackbench", NULL },
                       "empty setting");
        expect_refused((const char *const[]){ LOADGEN, "compare", "--static", "load=idle",
                                              "--static", "load=idle", "--", "hackbench", NULL },
                       "\"static:load=idle\"");
        expect_refused((const char *const[]){ LOADGEN, "compare", "--no-default", "--", "hackbench",
                                              NULL },
                       "No rows");
        expect_refused((const char *const[]){ LOADGEN, "sweep", "imbalance_pct=110,120", "--static",
                                              "load=idle", "--", "hackbench", NULL },
                       "sweep takes no --static");
        expect_refused(
                (const char *const[]){ LOADGEN, "--static", "job=weight:x", "hackbench", NULL },
                "Invalid --static \"job=weight:x\"");
        expect_refused((const char *const[]){ LOADGEN, "--static", "job=idle", "--static",
                                              "load=idle", "hackbench", NULL },
                       "--static is given twice");
        expect_refused((const char *const[]){ LOADGEN, "--static", "job=idle", "compare", "--",
                                              "hackbench", NULL },
                       "its own --static");
        expect_refused((const char *const[]){ LOADGEN, "compare", "--", NULL }, "SUITE");
        expect_refused((const char *const[]){ LOADGEN, "compare", "--", "nosuch", NULL },
                       "\"nosuch\"");
        expect_refused((const char *const[]){ LOADGEN, "compare", "--config", "/nonexistent/A.conf",
                                              "--", "hackbench", NULL },
                       "/nonexistent/A.conf");
        expect_refused((const char *const[]){ LOADGEN, "compare", "--config", bad, "--",
                                              "hackbench", NULL },
                       "bad.conf:3: imbalance_pct");
        expect_refused((const char *const[]){ LOADGEN, "sweep", "--config", bad,
                                              "imbalance_pct=110", "--", "hackbench", NULL },
                       "bad.conf:3: imbalance_pct");
        expect_refused((const char *const[]){ LOADGEN, "compare", "--config", same, "--",
                                              "hackbench", NULL },
                       "\"default\"");
        expect_refused((const char *const[]){ LOADGEN, "compare", "--config", spaced, "--",
                                              "hackbench", NULL },
                       "\"a b\"");
        expect_refused((const char *const[]){ LOADGEN, "compare", "--", "hackbench",
                                              "--json=x.json", NULL },
                       "--json=x.json");
        expect_refused(
                (const char *const[]){ LOADGEN, "compare", "--", "contest", "--label", "x", NULL },
                "--label");
        expect_refused((const char *const[]){ LOADGEN, "compare", "--daemon=/nonexistent/cgb", "--",
                                              "hackbench", NULL },
                       "--daemon=/nonexistent/cgb");
        expect_refused(
                (const char *const[]){ LOADGEN, "compare", "extra", "--", "hackbench", NULL },
                "\"extra\"");
        rm_rf(dir);
}

Test(args, help_names_both_commands_and_the_suites) {
        Run c = bin_run((const char *const[]){ LOADGEN, "compare", "--help", NULL });
        Run s = bin_run((const char *const[]){ LOADGEN, "sweep", "--help", NULL });
        Run top = bin_run((const char *const[]){ LOADGEN, "--help", NULL });

        cr_expect(exited_with(c.status, 0));
        cr_expect(exited_with(s.status, 0));
        cr_expect(strstr(c.out, "loadgen compare [OPTIONS] -- SUITE"), "%s", c.out);
        cr_expect(strstr(s.out, "loadgen sweep KEY=V1,V2,..."), "%s", s.out);
        cr_expect(strstr(c.out, "hackbench") && strstr(c.out, "contest"), "%s", c.out);
        cr_expect(strstr(c.out, "--static=SPEC") && strstr(c.out, "--no-default"), "%s", c.out);
        cr_expect(strstr(top.out, "--static=SPEC"), "%s", top.out);
        cr_expect(strstr(top.out, "compare") && strstr(top.out, "sweep KEY=V1"), "%s", top.out);
        bin_run_done(&c);
        bin_run_done(&s);
        bin_run_done(&top);
}

/* ---- real runs */

/* bin_run(), again while compare refused because another test's cgbalanced (one managing
 * cgbalance.slice) ran meanwhile: that refusal is right, and tested on its own below. */
static Run run_compare(const char *const argv[]) {
        Run r = bin_run(argv);

        for (int i = 0; i < 30 && strstr(r.err, "is already running (pid"); i++) {
                bin_run_done(&r);
                sleep(2);
                r = bin_run(argv);
        }
        return r; /* still refused: the test fails, saying so */
}

/* The daemons compare started ("started /.../cgbalanced --config F (pid N).") are all gone. */
static void expect_daemons_gone(const char *err, size_t want) {
        size_t n = 0;

        for (const char *p = err; (p = strstr(p, "cgbalanced --config ")); p++) {
                const char *pid_at = strstr(p, " (pid ");
                _cleanup_free_ char *path = NULL, *comm = NULL;
                int pid;

                cr_assert(pid_at, "%s", err);
                pid = atoi(pid_at + 6);
                n++;
                cr_assert_gt(asprintf(&path, "/proc/%d/comm", pid), 0);
                comm = read_all(path);
                cr_expect_str_neq(comm, "cgbalanced\n", "cgbalanced %d was left running", pid);
        }
        cr_expect_eq(n, want, "%zu daemons started, not %zu: %s", n, want, err);
}

static json_object *member(json_object *o, const char *key) {
        json_object *v = NULL;

        cr_assert(json_object_object_get_ex(o, key, &v), "no \"%s\" in %s", key,
                  json_object_to_json_string(o));
        return v;
}

/* The suites the rows ran ("Row X: started loadgen SUITE (pid N).") left no cgroup behind. */
static void expect_no_suite_group_left(const char *err) {
        size_t n = 0;

        for (const char *p = err; (p = strstr(p, " (pid ")); p++) {
                _cleanup_free_ char *g = NULL;
                int pid = atoi(p + 6);

                if (p - err < 9 || strncmp(p - 9, "hackbench", 9) != 0)
                        continue;
                n++;
                g = group_left(pid);
                cr_expect_null(g, "the sandbox of loadgen %d is left: %s", pid, g);
        }
        cr_expect_gt(n, 0, "no suite pid in: %s", err);
}

Test(run, compare_runs_the_suite_without_and_with_the_daemon, .timeout = 300) {
        _cleanup_free_ char *dir = NULL, *json = NULL, *jarg = NULL, *log = NULL, *text = NULL;
        json_object *root, *rows;
        double t0 = 0, t1 = 0;
        Run r;

        skip_unless_root();
        dir = make_tmpdir();
        cr_assert_gt(asprintf(&json, "%s/r.json", dir), 0);
        cr_assert_gt(asprintf(&jarg, "--json=%s", json), 0);
        r = run_compare((const char *const[]){ LOADGEN, "compare", "--no-daemon", jarg, "--",
                                               "hackbench", "-g", "1", "-l", "5", NULL });
        cr_assert(exited_with(r.status, 0), "status %d, stderr: %s", r.status, r.err);
        cr_expect(starts_with(r.out, "Hackbench:\tno-daemon\tdefault\n1 groups: Time:\t"), "%s",
                  r.out);
        cr_expect_eq(sscanf(r.out + 45, "%lf\t%lf\n", &t0, &t1), 2, "two columns: %s", r.out);
        cr_expect(t0 > 0 && t1 > 0, "%s", r.out);
        cr_expect(session_gone(r.pid), "a process of the run is left");
        expect_daemons_gone(r.err, 1);
        expect_no_suite_group_left(r.err);

        /* The daemon really ran for "default", and was stopped by SIGTERM. */
        cr_assert_gt(asprintf(&log, "%s.daemon-default.log", json), 0);
        text = read_all(log);
        cr_expect(strstr(text, "cgbalanced 0.1.0 starting"), "log: %s", text);
        cr_expect(strstr(text, "Received Terminated, stopping."), "log: %s", text);
        cr_expect(strstr(text, "Restored "), "log: %s", text);
        cr_expect(access(log, F_OK) == 0);
        free(log);
        cr_assert_gt(asprintf(&log, "%s.daemon-no-daemon.log", json), 0);
        cr_expect_neq(access(log, F_OK), 0, "a log for the row without a daemon");

        root = json_object_from_file(json);
        cr_assert(root, "%s does not parse", json);
        cr_expect_str_eq(json_object_get_string(member(root, "command")), "compare");
        cr_expect_str_eq(json_object_get_string(member(root, "suite")), "hackbench");
        cr_expect_eq(json_object_array_length(member(root, "suite_args")), 4);
        rows = member(root, "rows");
        cr_assert_eq(json_object_array_length(rows), 2);
        for (size_t i = 0; i < 2; i++) {
                json_object *row = json_object_array_get_idx(rows, i);
                json_object *res = member(row, "result"), *tl = member(row, "timeline");
                json_object *grp = json_object_array_get_idx(member(res, "rows"), 0);

                cr_expect_str_eq(json_object_get_string(member(row, "name")),
                                 i == 0 ? "no-daemon" : "default");
                cr_expect_eq(json_object_get_boolean(member(row, "daemon")), i == 1);
                cr_expect_str_eq(json_object_get_string(member(res, "benchmark")), "hackbench");
                cr_expect_str_eq(json_object_get_string(member(member(res, "parameters"), "label")),
                                 i == 0 ? "no-daemon" : "default");
                cr_expect_eq(json_object_get_int(member(grp, "groups")), 1);
                cr_expect_gt(json_object_get_int64(member(grp, "time_usec")), 0);
                cr_expect(json_object_is_type(member(tl, "samples"), json_type_array));
                if (i == 0)
                        cr_expect(json_object_is_type(member(row, "config"), json_type_null));
                else
                        cr_expect(strstr(json_object_get_string(member(row, "config")),
                                         "\n[balance]\nimbalance_pct = 117\n"),
                                  "%s", json_object_get_string(member(row, "config")));
        }
        json_object_put(root);
        bin_run_done(&r);
        rm_rf(dir);
}

/* Row i of a static run: its name, no daemon, and the groups as the suite's JSON read them back
 * at its end: the job's weight (0: not set), whether the load group was idle. */
static void expect_static_row(json_object *rows, size_t i, const char *spec, uint64_t job_weight,
                              bool load_idle) {
        json_object *row = json_object_array_get_idx(rows, i), *st, *v;
        _cleanup_free_ char *name = NULL;

        cr_assert(row);
        cr_assert_gt(asprintf(&name, "static:%s", spec), 0);
        cr_expect_str_eq(json_object_get_string(member(row, "name")), name);
        cr_expect_not(json_object_get_boolean(member(row, "daemon")), "%s", name);
        cr_expect_str_eq(json_object_get_string(member(row, "static")), spec);
        cr_expect(json_object_is_type(member(row, "config"), json_type_null), "%s", name);
        st = member(member(row, "result"), "static");
        if (job_weight) {
                cr_expect_eq(json_object_get_int64(member(member(st, "job"), "weight")),
                             (int64_t) job_weight, "%s: %s", name, json_object_to_json_string(st));
                cr_expect_not(json_object_get_boolean(member(member(st, "job"), "idle")), "%s",
                              name);
        } else
                cr_expect_not(json_object_object_get_ex(st, "job", &v), "%s: %s", name,
                              json_object_to_json_string(st));
        if (load_idle) {
                cr_expect(json_object_get_boolean(member(member(st, "load"), "idle")), "%s: %s",
                          name, json_object_to_json_string(st));
                /* The kernel gives an idle group the least weight (cpu.shares 3). */
                cr_expect_leq(json_object_get_int64(member(member(st, "load"), "weight")), 1,
                              "%s: %s", name, json_object_to_json_string(st));
        } else
                cr_expect_not(json_object_object_get_ex(st, "load", &v), "%s", name);
}

Test(run, static_rows_set_the_groups_with_no_daemon, .timeout = 120) {
        _cleanup_free_ char *dir = NULL, *json = NULL, *jarg = NULL;
        json_object *root, *rows;
        Run r;

        skip_unless_root();
        dir = make_tmpdir();
        cr_assert_gt(asprintf(&json, "%s/st.json", dir), 0);
        cr_assert_gt(asprintf(&jarg, "--json=%s", json), 0);
        r = run_compare((const char *const[]){ LOADGEN, "compare", "--no-daemon", "--no-default",
                                               "--static", "job=weight:1000", "--static=load=idle",
                                               "--static", "job=weight:50+load=idle", jarg, "--",
                                               "hackbench", "-g", "1", "-l", "5", NULL });
        cr_assert(exited_with(r.status, 0), "status %d, stderr: %s", r.status, r.err);
        cr_expect(starts_with(r.out, "Hackbench:\tno-daemon\tstatic:job=weight:1000\t"
                                     "static:load=idle\tstatic:job=weight:50+load=idle\n"
                                     "1 groups: Time:\t"),
                  "%s", r.out);
        cr_expect(session_gone(r.pid), "a process of the run is left");
        expect_daemons_gone(r.err, 0);
        expect_no_suite_group_left(r.err);

        root = json_object_from_file(json);
        cr_assert(root, "%s does not parse", json);
        rows = member(root, "rows");
        cr_assert_eq(json_object_array_length(rows), 4);
        cr_expect_str_eq(json_object_get_string(member(json_object_array_get_idx(rows, 0), "name")),
                         "no-daemon");
        cr_expect(json_object_is_type(member(json_object_array_get_idx(rows, 0), "static"),
                                      json_type_null));
        cr_expect_not(json_object_object_get_ex(
                              member(json_object_array_get_idx(rows, 0), "result"), "static", NULL),
                      "a static member for the plain row");
        expect_static_row(rows, 1, "job=weight:1000", 1000, false);
        expect_static_row(rows, 2, "load=idle", 0, true);
        expect_static_row(rows, 3, "job=weight:50+load=idle", 50, true);
        json_object_put(root);
        bin_run_done(&r);
        rm_rf(dir);
}

Test(run, sweep_gives_a_row_per_value, .timeout = 300) {
        _cleanup_free_ char *dir = NULL, *json = NULL, *jarg = NULL;
        json_object *root, *rows;
        Run r;

        skip_unless_root();
        dir = make_tmpdir();
        cr_assert_gt(asprintf(&json, "%s/s.json", dir), 0);
        cr_assert_gt(asprintf(&jarg, "-j%s", json), 0); /* -jFILE: --json=FILE */
        r = run_compare((const char *const[]){ LOADGEN, "sweep", "imbalance_pct=110,130", jarg,
                                               "--", "hackbench", "-g", "1", "-l", "5", NULL });
        cr_assert(exited_with(r.status, 0), "status %d, stderr: %s", r.status, r.err);
        cr_expect(starts_with(r.out, "Hackbench:\timbalance_pct=110\timbalance_pct=130\n1 groups"),
                  "%s", r.out);
        expect_daemons_gone(r.err, 2);
        cr_expect(session_gone(r.pid));
        root = json_object_from_file(json);
        cr_assert(root);
        cr_expect_str_eq(json_object_get_string(member(root, "command")), "sweep");
        rows = member(root, "rows");
        cr_assert_eq(json_object_array_length(rows), 2);
        for (size_t i = 0; i < 2; i++) {
                json_object *row = json_object_array_get_idx(rows, i);
                const char *conf = json_object_get_string(member(row, "config"));
                _cleanup_free_ char *log = NULL, *text = NULL;
                const char *name = i == 0 ? "imbalance_pct=110" : "imbalance_pct=130";

                cr_expect_str_eq(json_object_get_string(member(row, "name")), name);
                cr_expect(strstr(conf, i == 0 ? "imbalance_pct = 110\n" : "imbalance_pct = 130\n"),
                          "%s", conf);
                cr_expect(strstr(conf, "state_directory = /"), "%s", conf);
                cr_assert_gt(asprintf(&log, "%s.daemon-%s.log", json, name), 0);
                text = read_all(log);
                cr_expect(strstr(text, "starting") && strstr(text, "Restored "), "%s: %s", log,
                          text);
        }
        json_object_put(root);
        bin_run_done(&r);
        rm_rf(dir);
}

static char *write_script(const char *dir, const char *name, const char *body) {
        char *path = NULL;
        int fd;

        cr_assert_gt(asprintf(&path, "%s/%s", dir, name), 0);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
        cr_assert_geq(fd, 0);
        cr_assert_gt(dprintf(fd, "#!/bin/sh\n%s\n", body), 0);
        close(fd);
        return path;
}

Test(run, a_daemon_that_fails_to_start_is_an_error_naming_the_row_and_its_log, .timeout = 300) {
        _cleanup_free_ char *dir = NULL, *daemon = NULL, *opt = NULL, *kept_dir = NULL, *log = NULL,
                            *text = NULL;
        const char *kept;
        Run r;

        skip_unless_root();
        dir = make_tmpdir();
        daemon = write_script(dir, "broken-daemon", "echo 'cannot do this: Bad thing' >&2; exit 3");
        cr_assert_gt(asprintf(&opt, "--daemon=%s", daemon), 0);
        r = run_compare((const char *const[]){ LOADGEN, "compare", opt, "--", "hackbench", "-g",
                                               "1", "-l", "5", NULL });
        cr_expect(exited_with(r.status, 1), "status %d, stderr: %s", r.status, r.err);
        cr_expect(strstr(r.err, "Row default: cgbalanced exited before it was ready: it exited "
                                "with status 3"),
                  "%s", r.err);
        cr_expect(strstr(r.err, "  cannot do this: Bad thing\n"), "%s", r.err);
        cr_expect(strstr(r.err, "Its whole log: /"), "%s", r.err);
        cr_expect_null(strstr(r.err, "started loadgen hackbench"), "the suite ran: %s", r.err);
        cr_expect_str_empty(r.out);
        cr_expect(session_gone(r.pid));
        /* Without --json the log is in the run's directory, kept for the person to read. */
        kept = strstr(r.err, "The run's files are kept in ");
        cr_assert(kept, "%s", r.err);
        kept_dir = strndup(kept + 28, strcspn(kept + 28, "\n") - 1);
        cr_assert_gt(asprintf(&log, "%s/row-0.daemon.log", kept_dir), 0);
        cr_expect(strstr(r.err, log), "%s", r.err);
        text = read_all(log);
        cr_expect(strstr(text, "] cannot do this: Bad thing\n"), "%s: %s", log, text);
        rm_rf(kept_dir);
        bin_run_done(&r);
        rm_rf(dir);
}

/* A daemon that speaks only the contract: an event on the fd of --events, and on stderr the
 * words of a move that is not one. Ready through NOTIFY_SOCKET, stopped by SIGTERM. */
#define EVENTS_DAEMON                                                                              \
        "for a; do case $a in --events=*) fd=${a#--events=};; esac; done\n"                        \
        "[ -n \"$fd\" ] || { echo 'no --events' >&2; exit 2; }\n"                                  \
        "t=$(awk '{ printf \"%d\", $1 * 1000000 }' /proc/uptime)\n"                                \
        "echo 'cgbalanced: Moved pid 4242 (decoy) node 0 -> 1, CPUs 0: r' >&2\n"                   \
        "printf '{\"version\":1,\"kind\":\"task-moved\",\"monotonic_usec\":%s,"                    \
        "\"realtime_usec\":1,\"pid\":77,\"comm\":\"fake (task)\",\"from_node\":0,\"to_node\":1,"   \
        "\"reason\":\"r\"}\\n' \"$t\" >/proc/self/fd/$fd\n"                                        \
        "printf 'not an event\\n{\"version\":1,\"kind\":\"weight-changed\",\"monotonic_usec\":%s," \
        "\"realtime_usec\":1,\"cgroup\":\"a/b\",\"old_weight\":100,\"new_weight\":150,"            \
        "\"reason\":\"w\"}\\n' \"$t\" >/proc/self/fd/$fd\n"                                        \
        "systemd-notify --ready\n"                                                                 \
        "trap 'exit 0' TERM\n"                                                                     \
        "while :; do sleep 0.1; done"

/* What the daemon's --events pipe carried is the row's timeline; its log's words are not. */
Test(run, the_timeline_is_what_the_daemon_s_events_say, .timeout = 300) {
        _cleanup_free_ char *dir = NULL, *daemon = NULL, *opt = NULL, *json = NULL, *jarg = NULL;
        json_object *root, *tl, *a, *m, *w;
        Run r;

        skip_unless_root();
        if (access("/usr/bin/systemd-notify", X_OK) < 0 && access("/bin/systemd-notify", X_OK) < 0)
                cr_skip_test("no systemd-notify for the fake daemon");
        dir = make_tmpdir();
        daemon = write_script(dir, "events-daemon", EVENTS_DAEMON);
        cr_assert_gt(asprintf(&opt, "--daemon=%s", daemon), 0);
        cr_assert_gt(asprintf(&json, "%s/r.json", dir), 0);
        cr_assert_gt(asprintf(&jarg, "--json=%s", json), 0);
        r = run_compare((const char *const[]){ LOADGEN, "compare", opt, jarg, "--", "hackbench",
                                               "-g", "1", "-l", "5", NULL });
        cr_assert(exited_with(r.status, 0), "status %d, stderr: %s", r.status, r.err);
        root = json_object_from_file(json);
        cr_assert(root, "%s does not parse", json);
        tl = member(json_object_array_get_idx(member(root, "rows"), 0), "timeline");
        a = member(tl, "moves");
        cr_assert_eq(json_object_array_length(a), 1, "%s", json_object_to_json_string(tl));
        m = json_object_array_get_idx(a, 0);
        cr_expect_eq(json_object_get_int(member(m, "pid")), 77);
        cr_expect_str_eq(json_object_get_string(member(m, "comm")), "fake (task)");
        cr_expect_eq(json_object_get_int(member(m, "from")), 0);
        cr_expect_eq(json_object_get_int(member(m, "to")), 1);
        a = member(tl, "weights");
        cr_assert_eq(json_object_array_length(a), 1, "%s", json_object_to_json_string(tl));
        w = json_object_array_get_idx(a, 0);
        cr_expect_str_eq(json_object_get_string(member(w, "cgroup")), "a/b");
        cr_expect_eq(json_object_get_int(member(w, "from")), 100);
        cr_expect_eq(json_object_get_int(member(w, "to")), 150);
        json_object_put(root);
        bin_run_done(&r);
        rm_rf(dir);
}

/* A process called cgbalanced: a shell script of that name (its comm), sleeping, with args. */
static pid_t fake_daemon(const char *dir, const char *const args[]) {
        _cleanup_free_ char *path = write_script(dir, "cgbalanced", "sleep 60");
        pid_t pid = fork();

        cr_assert_geq(pid, 0);
        if (pid == 0) {
                const char *argv[8] = { path };

                for (size_t i = 0; args[i] && i < 6; i++)
                        argv[i + 1] = args[i];
                (void) setpgid(0, 0);
                execv(path, (char *const *) argv);
                _exit(127);
        }
        (void) setpgid(pid, pid);
        for (int i = 0; i < 100; i++) {
                _cleanup_free_ char *p = NULL, *comm = NULL;

                cr_assert_gt(asprintf(&p, "/proc/%d/comm", (int) pid), 0);
                comm = read_all(p);
                if (streq(comm, "cgbalanced\n"))
                        return pid;
                usleep(50000);
        }
        cr_assert_fail("the fake cgbalanced did not start");
        return -1;
}

static void fake_daemon_stop(pid_t pid) {
        (void) kill(-pid, SIGKILL);
        (void) waitpid(pid, NULL, 0);
}

Test(run, another_cgbalanced_managing_loadgens_groups_is_refused, .timeout = 60) {
        _cleanup_free_ char *dir = NULL, *want = NULL;
        pid_t pid;
        Run r;

        skip_unless_root();
        dir = make_tmpdir();
        /* No --config: /etc/cgbalance/cgbalance.conf or the defaults, cgbalance.slice. */
        pid = fake_daemon(dir, (const char *const[]){ NULL });
        cr_assert_gt(asprintf(&want, "cgbalanced is already running (pid %d, config ", (int) pid),
                     0);
        r = bin_run((const char *const[]){ LOADGEN, "compare", "--no-daemon", "--", "hackbench",
                                           "-g", "1", "-l", "5", NULL });
        fake_daemon_stop(pid);
        cr_expect(exited_with(r.status, 1), "status %d, stderr: %s", r.status, r.err);
        /* A real daemon of another test, with a lower pid, may be named instead: refused alike. */
        cr_expect(strstr(r.err, want) || strstr(r.err, "cgbalanced is already running (pid "), "%s",
                  r.err);
        cr_expect_null(strstr(r.err, "Row "), "a row ran: %s", r.err);
        bin_run_done(&r);
        rm_rf(dir);
}

Test(run, another_cgbalanced_managing_other_groups_is_let_be, .timeout = 300) {
        _cleanup_free_ char *dir = NULL, *conf = NULL, *want = NULL;
        pid_t pid;
        Run r;
        int fd;

        skip_unless_root();
        dir = make_tmpdir();
        cr_assert_gt(asprintf(&conf, "%s/other.conf", dir), 0);
        fd = open(conf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        cr_assert_geq(fd, 0);
        cr_assert_gt(dprintf(fd, "[manage]\ncgroups = other.slice\n"), 0);
        close(fd);
        pid = fake_daemon(dir, (const char *const[]){ "--config", conf, NULL });
        cr_assert_gt(asprintf(&want, "Another cgbalanced runs (pid %d, config %s), managing none",
                              (int) pid, conf),
                     0);
        r = run_compare((const char *const[]){ LOADGEN, "compare", "--", "hackbench", "-g", "1",
                                               "-l", "5", NULL });
        fake_daemon_stop(pid);
        cr_expect(exited_with(r.status, 0), "status %d, stderr: %s", r.status, r.err);
        cr_expect(strstr(r.err, want), "%s", r.err);
        cr_expect(starts_with(r.out, "Hackbench:\tdefault\n1 groups: Time:\t"), "%s", r.out);
        expect_daemons_gone(r.err, 1);
        bin_run_done(&r);
        rm_rf(dir);
}

/* SIGINT while the suite runs beside the daemon: both end, the daemon restores, 130. */
Test(run, sigint_stops_the_suite_and_the_daemon, .timeout = 300) {
        _cleanup_free_ char *dir = NULL, *json = NULL, *jarg = NULL, *log = NULL, *text = NULL;
        Run r = { 0 };

        skip_unless_root();
        dir = make_tmpdir();
        cr_assert_gt(asprintf(&json, "%s/i.json", dir), 0);
        cr_assert_gt(asprintf(&log, "%s.daemon-default.log", json), 0);
        cr_assert_gt(asprintf(&jarg, "--json=%s", json), 0);
        for (int attempt = 0; attempt < 30; attempt++) {
                if (attempt > 0)
                        sleep(2);
                bin_start(&r, (const char *const[]){ LOADGEN, "compare", jarg, "--", "hackbench",
                                                     "-g", "1", "-l", "1000000", NULL });
                /* Until the suite runs beside the ready daemon, or compare refused. */
                for (int i = 0; i < 1200; i++) {
                        free(text);
                        text = read_all(r.err_path);
                        if (strstr(text, "started loadgen hackbench") ||
                            strstr(text, "is already running (pid"))
                                break;
                        usleep(100000);
                }
                if (!strstr(text, "is already running (pid"))
                        break;
                bin_finish(&r);
                bin_run_done(&r);
                r = (Run){ 0 };
        }
        cr_assert(strstr(text, "started loadgen hackbench"), "%s", text);
        usleep(500000);
        cr_assert_eq(kill(r.pid, SIGINT), 0);
        bin_finish(&r);
        cr_expect(exited_with(r.status, 128 + SIGINT), "status %d, stderr: %s", r.status, r.err);
        cr_expect(session_gone(r.pid), "a process of the run is left");
        expect_daemons_gone(r.err, 1);
        expect_no_suite_group_left(r.err);
        free(text);
        text = read_all(log);
        cr_expect(strstr(text, "Received Terminated") && strstr(text, "Restored "), "%s", text);
        cr_expect_neq(access(json, F_OK), 0, "an interrupted run wrote its JSON");
        bin_run_done(&r);
        rm_rf(dir);
}
