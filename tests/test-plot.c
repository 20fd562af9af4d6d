/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loadgen plot, run as a user runs it on the results files of tests/fixtures/plot/ (a real contest
 * run in two rows with a timeline, a real hackbench sweep): the PNG and SVG files it lists exist
 * and are pictures (the PNG signature and size, an <svg> root holding the figure's names), only
 * daemon rows get a timeline, and damaged files fail with exit 1 naming the file and the place.
 * Needs gnuplot (skips without it), except for the test of the message when it is missing.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "macro.h"
#include "runbin.h"
#include "testutil.h"

#define LOADGEN BUILD_DIR "/loadgen"
#define PNG_MIN_BYTES 10000 /* an empty frame of 1100x650 is well under this */
#define SVG_MIN_BYTES 5000

/* ---- helpers */

static bool have_gnuplot(void) {
        const char *path = getenv("PATH");
        _cleanup_free_ char *copy = strdup(path && *path ? path : "/usr/bin:/bin");
        char *save = NULL;

        cr_assert_not_null(copy);
        for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
                _cleanup_free_ char *p = NULL;

                cr_assert_gt(asprintf(&p, "%s/gnuplot", d), 0);
                if (access(p, X_OK) == 0)
                        return true;
        }
        return false;
}

static void require_gnuplot(void) {
        if (!have_gnuplot())
                cr_skip_test("gnuplot is not installed (apt-get install gnuplot-nox)");
}

/* loadgen plot JSON [--out PREFIX] (prefix NULL: the default). */
static Run plot(const char *json, const char *prefix) {
        const char *argv[] = { LOADGEN, "plot", json, "--out", prefix, NULL };

        if (!prefix)
                argv[3] = NULL;
        return bin_run(argv);
}

static char *path_of(const char *prefix, const char *suffix) {
        char *p;

        cr_assert_gt(asprintf(&p, "%s%s", prefix, suffix), 0);
        return p;
}

static off_t file_size(const char *path) {
        struct stat st;

        return stat(path, &st) == 0 ? st.st_size : -1;
}

/* A PNG of 1100x650: the signature, the IHDR chunk's size, a size only a drawing reaches. */
static void expect_png(const char *path) {
        static const uint8_t signature[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
        uint8_t head[24];
        FILE *f = fopen(path, "re");

        cr_assert_not_null(f, "%s: %s", path, strerror(errno));
        cr_assert_eq(fread(head, 1, sizeof head, f), sizeof head, "%s is too short", path);
        fclose(f);
        cr_expect_arr_eq(head, signature, sizeof signature, "%s is no PNG", path);
        cr_expect_arr_eq(head + 12, "IHDR", 4, "%s has no IHDR first", path);
        cr_expect_eq((head[16] << 24 | head[17] << 16 | head[18] << 8 | head[19]), 1100);
        cr_expect_eq((head[20] << 24 | head[21] << 16 | head[22] << 8 | head[23]), 650);
        cr_expect_gt(file_size(path), PNG_MIN_BYTES, "%s: %jd bytes", path,
                     (intmax_t) file_size(path));
}

/* An SVG holding each of texts (NULL-terminated): titles, ticks, keys, mark labels. */
static void expect_svg(const char *path, const char *const texts[]) {
        _cleanup_free_ char *s = read_all(path);

        cr_expect_gt(file_size(path), SVG_MIN_BYTES, "%s: %jd bytes", path,
                     (intmax_t) file_size(path));
        cr_expect_not_null(strstr(s, "<svg"), "%s has no <svg root", path);
        cr_expect_not_null(strstr(s, "</svg>"), "%s ends early", path);
        for (size_t i = 0; texts[i]; i++)
                cr_expect_not_null(strstr(s, texts[i]), "%s lacks \"%s\"", path, texts[i]);
}

/* The run listed exactly these files (prefix + each suffix), in order, and drew them cleanly. */
static void expect_listed(const Run *r, const char *prefix, const char *const suffixes[]) {
        _cleanup_free_ char *want = strdup("");

        for (size_t i = 0; suffixes[i]; i++) {
                char *w;

                cr_assert_gt(asprintf(&w, "%s%s%s\n", want, prefix, suffixes[i]), 0);
                free(want);
                want = w;
        }
        cr_expect(exited_with(r->status, 0), "loadgen plot failed: %s", r->err);
        cr_expect_str_eq(r->out, want);
        /* gnuplot's warnings reach stderr: a script it complains about is a bug */
        cr_expect_null(strstr(r->err, "warning"), "gnuplot complained: %s", r->err);
}

/* ---- pictures */

Test(plot, contest_bars_and_the_daemon_rows_timeline, .timeout = 60) {
        _cleanup_free_ char *json = fixture_path("plot/contest.json");
        _cleanup_free_ char *dir = make_tmpdir(), *prefix = path_of(dir, "/c");
        _cleanup_free_ char *sum_png = path_of(prefix, "-summary.png");
        _cleanup_free_ char *sum_svg = path_of(prefix, "-summary.svg");
        _cleanup_free_ char *tl_png = path_of(prefix, "-timeline-default.png");
        _cleanup_free_ char *tl_svg = path_of(prefix, "-timeline-default.svg");
        _cleanup_free_ char *no_daemon = path_of(prefix, "-timeline-no-daemon.png");
        static const char *const files[] = { "-summary.png", "-summary.svg",
                                             "-timeline-default.png", "-timeline-default.svg",
                                             NULL };
        static const char *const summary[] = {
                "contest: the compile's time beside each load",
                "loadgen contest --quick --runs 1 --loads no_load,process_load",
                "no_load",
                "process_load",
                "no-daemon",
                "default",
                "Ratio",
                "32.95",
                "28.17",
                NULL
        };
        static const char *const timeline[] = {
                "default: busy CPUs per NUMA node, 2 task moves, 1 weight change",
                "node 0 (1 CPU)",
                "node 1 (1 CPU)",
                "process_load 0->1",
                "cc1 1->0",
                "loadgen-job 100->150",
                NULL
        };
        Run r;

        require_gnuplot();
        r = plot(json, prefix);
        expect_listed(&r, prefix, files);
        expect_png(sum_png);
        expect_png(tl_png);
        expect_svg(sum_svg, summary);
        expect_svg(tl_svg, timeline);
        /* the no-daemon row has a timeline too, but nothing of the daemon's to show */
        cr_expect_eq(access(no_daemon, F_OK), -1, "%s drawn", no_daemon);
        bin_run_done(&r);
        rm_rf(dir);
}

Test(plot, benchmark_lines_one_per_configuration, .timeout = 60) {
        _cleanup_free_ char *json = fixture_path("plot/hackbench.json");
        _cleanup_free_ char *dir = make_tmpdir(), *prefix = path_of(dir, "/h");
        _cleanup_free_ char *sum_png = path_of(prefix, "-summary.png");
        _cleanup_free_ char *sum_svg = path_of(prefix, "-summary.svg");
        static const char *const files[] = { "-summary.png",
                                             "-summary.svg",
                                             "-timeline-node_imbalance_pct=110.png",
                                             "-timeline-node_imbalance_pct=110.svg",
                                             "-timeline-node_imbalance_pct=150.png",
                                             "-timeline-node_imbalance_pct=150.svg",
                                             NULL };
        static const char *const summary[] = { "hackbench: time to pass every message",
                                               "loadgen hackbench -g 1-3 -l 20 -f 4",
                                               "node_imbalance_pct=110",
                                               "node_imbalance_pct=150",
                                               "groups",
                                               "Time (s), lower is better",
                                               NULL };
        Run r;

        require_gnuplot();
        r = plot(json, prefix);
        expect_listed(&r, prefix, files);
        expect_png(sum_png);
        expect_svg(sum_svg, summary);
        bin_run_done(&r);
        rm_rf(dir);
}

Test(plot, default_prefix_is_the_json_path_without_json, .timeout = 60) {
        _cleanup_free_ char *dir = make_tmpdir(), *json = path_of(dir, "/run.json");
        _cleanup_free_ char *prefix = path_of(dir, "/run");
        _cleanup_free_ char *src = fixture_path("plot/contest.json"), *text = read_all(src);
        _cleanup_free_ char *png = path_of(prefix, "-summary.png");
        FILE *f;
        Run r;

        require_gnuplot();
        f = fopen(json, "we");
        cr_assert_not_null(f);
        cr_assert_gt(strlen(text), 1000u);
        fputs(text, f);
        cr_assert_eq(fclose(f), 0);
        r = plot(json, NULL);
        cr_expect(exited_with(r.status, 0), "%s", r.err);
        cr_expect_not_null(strstr(r.out, png), "%s not in: %s", png, r.out);
        expect_png(png);
        bin_run_done(&r);
        rm_rf(dir);
}

/* Row names that are no file names, or the same once made safe, get distinct safe ones. */
Test(plot, timeline_file_names_are_safe_and_distinct, .timeout = 60) {
        _cleanup_free_ char *dir = make_tmpdir(), *json = path_of(dir, "/s.json");
        _cleanup_free_ char *prefix = path_of(dir, "/s");
        static const char *const files[] = {
                "-summary.png",
                "-summary.svg",
                "-timeline-a_b.png",
                "-timeline-a_b.svg",
                "-timeline-a_b-2.png",
                "-timeline-a_b-2.svg",
                NULL,
        };
#define ROW(name)                                                                              \
        "{\"name\": \"" name "\", \"daemon\": true, \"result\": {\"loads\": [{\"load\": "      \
        "\"no_load\", \"mean\": {\"ratio\": 1.0}}]}, \"timeline\": {\"nodes\": [0], "          \
        "\"node_cpus\": [2], \"samples\": [{\"t\": 1, \"load\": [1.5]}, {\"t\": 2, \"load\": " \
        "[0.5]}], \"moves\": [], \"weights\": []}}"
        const char *text = "{\"suite\": \"contest\", \"rows\": [" ROW("a/b") ", " ROW("a_b") "]}";
#undef ROW
        FILE *f;
        Run r;

        require_gnuplot();
        f = fopen(json, "we");
        cr_assert_not_null(f);
        fputs(text, f);
        cr_assert_eq(fclose(f), 0);
        r = plot(json, prefix);
        expect_listed(&r, prefix, files);
        bin_run_done(&r);
        rm_rf(dir);
}

/* ---- bad files and arguments */

typedef struct BadCase {
        const char *text;
        const char *message; /* in stderr, after the file's name */
} BadCase;

#define OK_RESULT "{\"loads\": [{\"load\": \"no_load\", \"mean\": {\"ratio\": 1.0}}]}"
#define OK_ROW(name) "{\"name\": \"" name "\", \"daemon\": false, \"result\": " OK_RESULT "}"

static const BadCase bad_cases[] = {
        { "this is not JSON\n", ":1:2: not valid JSON" },
        { "", ": empty" },
        { "{\"suite\": \"contest\", \"rows\": [", ": the JSON ends early" },
        { "[1, 2]", ": not a JSON object" },
        { "{\"suite\": \"contest\", \"rows\": []} x", ":1:34: more after the JSON object" },
        { "{\"suite\": \"contest\"}", ": the top level: no array member \"rows\"" },
        { "{\"rows\": [" OK_ROW("a") "]}", ": the top level: no string member \"suite\"" },
        { "{\"suite\": \"contest\", \"rows\": []}", ": the top level: \"rows\" is empty" },
        { "{\"suite\": \"contest\", \"rows\": 7}",
          ": the top level: \"rows\" is integer, not array" },
        { "{\"suite\": \"contest\", \"rows\": [5]}", ": rows[0]: is integer, not an object" },
        { "{\"suite\": \"contest\", \"rows\": [" OK_ROW("no-daemon") ", {\"name\": \"default\", "
                                                                     "\"daemon\": true}]}",
          ": rows[1] (\"default\"): no object member \"result\"" },
        { "{\"suite\": \"contest\", \"rows\": [{\"name\": \"x\", \"daemon\": true, \"result\": "
          "{\"loads\": [{\"load\": \"no_load\", \"mean\": {\"ratio\": \"fast\"}}]}}]}",
          ": rows[0].result.loads[0].mean: \"ratio\" is string, not number" },
        { "{\"suite\": \"contest\", \"rows\": [{\"name\": \"x\", \"daemon\": true, \"result\": "
          "{}}]}",
          ": rows[0].result: no array member \"loads\"" },
        { "{\"suite\": \"frobnicate\", \"rows\": [" OK_ROW("a") "]}",
          ": the top level: suite \"frobnicate\" is none loadgen plot knows" },
        { "{\"suite\": \"hackbench\", \"rows\": [{\"name\": \"x\", \"daemon\": false, \"result\": "
          "{\"rows\": [{\"groups\": 1}]}}]}",
          ": rows[0].result.rows[0]: no number member \"time_s\"" },
        { "{\"suite\": \"contest\", \"rows\": [{\"name\": \"x\", \"daemon\": true, "
          "\"result\": " OK_RESULT
          ", \"timeline\": {\"nodes\": [0, 1], \"node_cpus\": [1, 1], \"samples\": "
          "[{\"t\": 1, \"load\": [0.5]}]}}]}",
          ": rows[0].timeline.samples[0]: \"load\" has 1 values for 2 nodes" },
};

/* One case: exit 1, the file and the place named on stderr, nothing written. */
static void expect_bad(const BadCase *c) {
        _cleanup_free_ char *dir = make_tmpdir(), *json = path_of(dir, "/bad.json");
        _cleanup_free_ char *want = path_of(json, c->message);
        _cleanup_free_ char *png = path_of(dir, "/bad-summary.png");
        FILE *f = fopen(json, "we");
        Run r;

        cr_assert_not_null(f);
        fputs(c->text, f);
        cr_assert_eq(fclose(f), 0);
        r = plot(json, NULL);
        cr_expect(exited_with(r.status, 1), "status %d for %s", r.status, c->text);
        cr_expect_not_null(strstr(r.err, want), "\"%s\" not in: %s", want, r.err);
        cr_expect_str_eq(r.out, "", "for %s", c->text);
        cr_expect_eq(access(png, F_OK), -1, "%s written for %s", png, c->text);
        bin_run_done(&r);
        rm_rf(dir);
}

Test(plot, bad_files_are_named_with_the_place, .timeout = 60) {
        for (size_t i = 0; i < ELEMENTSOF(bad_cases); i++)
                expect_bad(&bad_cases[i]);
}

Test(plot, a_missing_file_is_named) {
        Run r = plot("/nonexistent/results.json", "/tmp/x");

        cr_expect(exited_with(r.status, 1));
        cr_expect_not_null(strstr(r.err, "Failed to read /nonexistent/results.json"), "%s", r.err);
        bin_run_done(&r);
}

Test(plot, an_unwritable_prefix_is_named_before_gnuplot_runs) {
        _cleanup_free_ char *json = fixture_path("plot/contest.json");
        Run r = plot(json, "/nonexistent/dir/c");

        cr_expect(exited_with(r.status, 1));
        cr_expect_not_null(strstr(r.err, "Cannot write /nonexistent/dir/c-summary.png: directory "
                                         "/nonexistent/dir"),
                           "%s", r.err);
        bin_run_done(&r);
}

Test(plot, usage_errors_exit_2_and_help_names_gnuplot) {
        const char *none[] = { LOADGEN, "plot", NULL };
        const char *two[] = { LOADGEN, "plot", "a.json", "b.json", NULL };
        const char *empty_out[] = { LOADGEN, "plot", "a.json", "--out=", NULL };
        const char *help[] = { LOADGEN, "plot", "--help", NULL };
        Run r;

        r = bin_run(none);
        cr_expect(exited_with(r.status, EXIT_USAGE));
        cr_expect_not_null(strstr(r.err, "Missing RESULTS.json"), "%s", r.err);
        bin_run_done(&r);
        r = bin_run(two);
        cr_expect(exited_with(r.status, EXIT_USAGE));
        cr_expect_not_null(strstr(r.err, "Too many arguments"), "%s", r.err);
        bin_run_done(&r);
        r = bin_run(empty_out);
        cr_expect(exited_with(r.status, EXIT_USAGE));
        cr_expect_not_null(strstr(r.err, "--out"), "%s", r.err);
        bin_run_done(&r);
        r = bin_run(help);
        cr_expect(exited_with(r.status, 0));
        cr_expect_not_null(strstr(r.out, "Usage: loadgen plot RESULTS.json [--out PREFIX]"));
        cr_expect_not_null(strstr(r.out, "apt-get install gnuplot-nox"));
        bin_run_done(&r);
}

/* Without gnuplot in $PATH the file is still read (its errors come first), then the fix named. */
Test(plot, missing_gnuplot_says_what_to_install) {
        _cleanup_free_ char *json = fixture_path("plot/contest.json");
        _cleanup_free_ char *dir = make_tmpdir(), *prefix = path_of(dir, "/c");
        _cleanup_free_ char *png = path_of(prefix, "-summary.png");
        _cleanup_free_ char *path = strdup(getenv("PATH") ?: "/usr/bin:/bin");
        Run r;

        cr_assert_not_null(path);
        cr_assert_eq(setenv("PATH", "/nonexistent", 1), 0);
        r = plot(json, prefix);
        cr_assert_eq(setenv("PATH", path, 1), 0); /* rm_rf() runs rm */
        cr_expect(exited_with(r.status, 1));
        cr_expect_not_null(strstr(r.err, "apt-get install gnuplot-nox"), "%s", r.err);
        cr_expect_eq(access(png, F_OK), -1);
        bin_run_done(&r);
        rm_rf(dir);
}
