/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The options every loadgen command shares (cli.h), through getopt_long() as the commands call
 * it: --json means one thing everywhere (alone: stdout; =FILE or -jFILE: that file), --label,
 * --duration and the placement options, and bad values refused. Pure: nothing runs.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "macro.h"
#include "testutil.h"

/* The argv of a command that takes every shared option but --cpus; 0, or -EINVAL. */
static int parse(const char *const *args, CliCommon *co, int *ret_optind) {
        static const struct option options[] = {
                CLI_OPT_JSON,
                CLI_OPT_LABEL,
                CLI_OPT_DURATION,
                CLI_OPT_MEM,
                CLI_OPT_DIR,
                CLI_OPT_OTHER_DIR,
                CLI_OPT_NO_SANDBOX,
                CLI_OPT_QUICK,
                CLI_OPT_HELP,
                CLI_OPT_TREE_FILES,
                {},
        };
        char *argv[16];
        int argc = 0, c, r;

        argv[argc++] = (char *) "cmd";
        for (size_t i = 0; args[i]; i++)
                argv[argc++] = (char *) args[i];
        argv[argc] = NULL;
        optind = 0;
        opterr = 0;
        while ((c = getopt_long(argc, argv,
                                CLI_SHORT_JSON CLI_SHORT_LABEL CLI_SHORT_DURATION "m:qh", options,
                                NULL)) >= 0) {
                r = cli_parse_common(c, optarg, co);
                if (r < 0)
                        return r;
                if (r == 0)
                        return -EINVAL;
        }
        *ret_optind = optind;
        return 0;
}

typedef struct JsonCase {
        const char *args[4];
        const char *json; /* what CliCommon.json holds */
        CliJsonTo to;
        int rest; /* arguments left after the options */
} JsonCase;

Test(cli, json_means_one_thing_in_every_spelling) {
        static const JsonCase cases[] = {
                { { NULL }, NULL, CLI_JSON_NONE, 0 },
                { { "--json" }, "", CLI_JSON_STDOUT, 0 },
                { { "-j" }, "", CLI_JSON_STDOUT, 0 },
                { { "--json=-" }, "-", CLI_JSON_STDOUT, 0 },
                { { "--json=out.json" }, "out.json", CLI_JSON_FILE, 0 },
                { { "-jout.json" }, "out.json", CLI_JSON_FILE, 0 },
                /* A separate word is no value of --json: the command refuses it as an argument. */
                { { "--json", "out.json" }, "", CLI_JSON_STDOUT, 1 },
                { { "--json=a", "--json" }, "", CLI_JSON_STDOUT, 0 }, /* the last one wins */
                { { "--json", "--json=b" }, "b", CLI_JSON_FILE, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                CliCommon co = CLI_COMMON_INIT;
                int rest = -1, n = 0;

                while (n < 4 && cases[i].args[n])
                        n++;
                cr_assert_eq(parse(cases[i].args, &co, &rest), 0, "case %zu", i);
                if (cases[i].json)
                        cr_expect_str_eq(co.json, cases[i].json, "case %zu", i);
                else
                        cr_expect_null(co.json, "case %zu", i);
                cr_expect_eq(cli_json_to(co.json), cases[i].to, "case %zu", i);
                cr_expect_eq(n + 1 - rest, cases[i].rest, "case %zu", i);
        }
}

Test(cli, label_duration_and_placement) {
        const char *const args[] = { "-L",    "mine", "--duration=2.5", "--mem", "64M",
                                     "--dir", "/d",   "--other-dir=/o", "-q",    "--no-sandbox",
                                     NULL };
        CliCommon co = CLI_COMMON_INIT;
        int rest;

        cr_assert_eq(parse(args, &co, &rest), 0);
        cr_expect_str_eq(co.label, "mine");
        cr_expect_eq(co.duration_usec, 2500000u);
        cr_expect_eq(co.ram_bytes, UINT64_C(64) << 20);
        cr_expect_str_eq(co.dir, "/d");
        cr_expect_str_eq(co.other_dir, "/o");
        cr_expect(co.quick && co.no_sandbox);
        cr_expect_null(co.json);
}

/* The job tree: --quick's size, or the default, with --tree-files' files on either. */
Test(cli, tree_files_sizes_the_job_tree) {
        static const struct {
                const char *args[4];
                bool quick;
                unsigned files;
        } cases[] = {
                { { "-q", "--tree-files", "2", NULL }, true, 2 },
                { { "--tree-files=500", NULL }, false, 500 },
                { { NULL }, false, TREE_DEFAULT_FILES },
        };
        TreeOptions t, want;
        int rest;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                CliCommon co = CLI_COMMON_INIT;

                cr_assert_eq(parse(cases[i].args, &co, &rest), 0);
                cli_tree_options(&co, &t);
                tree_options_init(&want, cases[i].quick);
                cr_expect_eq(t.files, cases[i].files, "case %zu", i);
                cr_expect_eq(t.funcs_per_file, want.funcs_per_file, "case %zu", i);
                cr_expect_eq(t.seed, want.seed, "case %zu", i);
        }
}

Test(cli, defaults_stand_until_given) {
        const char *const none[] = { NULL };
        CliCommon co = CLI_COMMON_INIT;
        const char *label = "default", *json = "stale";
        int rest;

        cr_assert_eq(parse(none, &co, &rest), 0);
        cr_expect_str_eq(co.other_dir, DEFAULT_OTHER_DIR);
        cr_expect_eq(co.duration_usec, 0u);
        cli_take_report(&co, &label, &json);
        cr_expect_str_eq(label, "default", "no --label keeps the command's default");
        cr_expect_null(json);

        co.label = "x";
        co.json = "";
        cli_take_report(&co, &label, &json);
        cr_expect_str_eq(label, "x");
        cr_expect_str_eq(json, "");
        cli_take_report(&co, NULL, &json); /* a command without --label */
}

Test(cli, bad_values_are_refused) {
        static const char *const bad[][3] = {
                { "--duration", "0" },   { "--duration", "abc" },     { "-d", "-1" },
                { "--mem", "1M" },       { "--mem", "12Q" },          { "--duration", "1.x" },
                { "--tree-files", "0" }, { "--tree-files", "10001" }, { "--tree-files", "-2" },
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                CliCommon co = CLI_COMMON_INIT;
                int rest;

                cr_expect_eq(parse(bad[i], &co, &rest), -EINVAL, "%s %s", bad[i][0], bad[i][1]);
        }
}

Test(cli, json_to_names_the_destination) {
        cr_expect_eq(cli_json_to(NULL), CLI_JSON_NONE);
        cr_expect_eq(cli_json_to(""), CLI_JSON_STDOUT);
        cr_expect_eq(cli_json_to("-"), CLI_JSON_STDOUT);
        cr_expect_eq(cli_json_to("--"), CLI_JSON_FILE);
        cr_expect_eq(cli_json_to("x.json"), CLI_JSON_FILE);
}

static void table(FILE *f, void *userdata) {
        fprintf(f, "table %s\n", (const char *) userdata);
}

static void one_json(Json *j, void *userdata) {
        json_begin(j, '{');
        json_string(j, "what", userdata);
        json_end(j, '}');
}

Test(cli, report_to_a_file_keeps_the_table, .init = cr_redirect_stdout) {
        char path[] = "/tmp/test-cli-XXXXXX";
        char buf[256] = "";
        int fd = mkstemp(path);
        FILE *f;
        size_t n;

        cr_assert_geq(fd, 0);
        (void) close(fd);
        cr_assert_eq(cli_report(path, table, one_json, (void *) "t"), 0);
        f = fopen(path, "re");
        cr_assert(f);
        n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        fclose(f);
        (void) unlink(path);
        cr_expect_str_eq(buf, "{\n  \"what\": \"t\"\n}\n");
        fflush(stdout);
        cr_expect_stdout_eq_str("table t\n");
}

Test(cli, report_json_alone_replaces_the_table, .init = cr_redirect_stdout) {
        cr_assert_eq(cli_report("", table, one_json, (void *) "s"), 0);
        fflush(stdout);
        cr_expect_stdout_eq_str("{\n  \"what\": \"s\"\n}\n");
}

Test(cli, report_without_json_is_the_table, .init = cr_redirect_stdout) {
        cr_assert_eq(cli_report(NULL, table, one_json, (void *) "n"), 0);
        fflush(stdout);
        cr_expect_stdout_eq_str("table n\n");
}

Test(cli, report_to_an_unwritable_file_fails_before_the_table) {
        cr_expect_lt(cli_report("/nonexistent-dir/x.json", table, one_json, (void *) "e"), 0);
}

/* ---- --static: what an operator sets instead of cgbalanced */

typedef struct StaticCase {
        const char *spec;
        uint64_t job_weight, load_weight;
        bool job_idle, load_idle;
} StaticCase;

Test(cli, static_settings_parse) {
        static const StaticCase cases[] = {
                { "job=weight:1000", 1000, 0, false, false },
                { "load=idle", 0, 0, false, true },
                { "job=weight:1", 1, 0, false, false },
                { "load=weight:10000", 0, 10000, false, false },
                { "job=weight:1000+load=idle", 1000, 0, false, true },
                { "load=idle+job=idle", 0, 0, true, true },
                { "job=weight:0100", 100, 0, false, false },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const StaticCase *c = &cases[i];
                SandboxStatic s;
                char why[160] = "";

                cr_assert_eq(cli_parse_static(c->spec, &s, why, sizeof why), 0, "%s: %s", c->spec,
                             why);
                cr_expect_eq(s.part[SANDBOX_JOB].weight, c->job_weight, "%s", c->spec);
                cr_expect_eq(s.part[SANDBOX_LOAD].weight, c->load_weight, "%s", c->spec);
                cr_expect_eq(s.part[SANDBOX_JOB].idle, c->job_idle, "%s", c->spec);
                cr_expect_eq(s.part[SANDBOX_LOAD].idle, c->load_idle, "%s", c->spec);
                cr_expect_eq(s.part[SANDBOX_RUN].weight, 0, "%s", c->spec);
                cr_expect_not(s.part[SANDBOX_RUN].idle, "%s", c->spec);
                cr_expect(sandbox_static_is_set(&s), "%s", c->spec);
                cr_expect_eq(sandbox_static_has_idle(&s), c->job_idle || c->load_idle, "%s",
                             c->spec);
        }
}

typedef struct StaticBad {
        const char *spec;
        const char *why; /* a part of the message: the bad part named */
} StaticBad;

Test(cli, static_malformed_names_the_bad_part) {
        static const StaticBad cases[] = {
                { "", "empty setting" },
                { "+", "empty setting" },
                { "job=idle+", "empty setting" },
                { "job=idle++load=idle", "empty setting" },
                { "job", "\"job\" is not GROUP=SETTING" },
                { "job=weight:10+load", "\"load\" is not GROUP=SETTING" },
                { "=idle", "\"\" is no group name" },
                { "job =idle", "\"job \" is no group name" },
                { "a/b=idle", "\"a/b\" is no group name" },
                { "..=idle", "\"..\" is no group name" },
                { "a123456789b123456789c123456789d123456789e123456789f123456789g123=idle",
                  "is no group name" },
                { "a=idle+b=idle+c=idle+d=idle+e=idle+f=idle+g=idle+h=idle+i=idle",
                  "more than 8 scenario groups" },
                { "rings=idle+rings=weight:5", "rings is set twice" },
                { "job=", "\"\" is not weight:N or idle" },
                { "job=Idle", "\"Idle\" is not weight:N or idle" },
                { "job=idle:1", "\"idle:1\" is not weight:N or idle" },
                { "job=weight", "\"weight\" is not weight:N or idle" },
                { "job=weight:", "\"weight:\" is not weight:N or idle" },
                { "job=weight:0", "weight \"0\" is not a number from 1 to 10000" },
                { "job=weight:10001", "weight \"10001\"" },
                { "job=weight:-5", "weight \"-5\"" },
                { "job=weight:+5", "\"weight:\" is not weight:N or idle" }, /* + joins */
                { "job=weight: 5", "weight \" 5\"" },
                { "job=weight:5x", "weight \"5x\"" },
                { "job=weight:0x10", "weight \"0x10\"" },
                { "job=weight:99999999999999999999999", "weight \"99999999999999999999999\"" },
                { "job=weight:10+job=idle", "job is set twice" },
                { "load=idle+load=idle", "load is set twice" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                SandboxStatic s = { .part[SANDBOX_JOB].weight = 7 };
                char why[160] = "";

                cr_expect_eq(cli_parse_static(cases[i].spec, &s, why, sizeof why), -EINVAL,
                             "\"%s\" accepted", cases[i].spec);
                cr_expect(strstr(why, cases[i].why), "\"%s\": %s", cases[i].spec, why);
                cr_expect_eq(s.part[SANDBOX_JOB].weight, 7, "\"%s\": *ret written on failure",
                             cases[i].spec);
        }
}

Test(cli, static_message_is_cut_not_overrun) {
        char why[8];

        memset(why, 'x', sizeof why);
        cr_assert_eq(cli_parse_static("no/such/group=idle", &(SandboxStatic){ 0 }, why, sizeof why),
                     -EINVAL);
        cr_expect_eq(why[sizeof why - 1], '\0');
}

/* Other names than job and load are a scenario's groups: kept by name, checked when it runs. */
Test(cli, static_scenario_groups_by_name, .init = cr_redirect_stderr) {
        static const char *const groups[] = { "fore", "rings", "batch" };
        SandboxStatic s = { 0 };
        const SandboxSetting *set;
        char why[160] = "";

        cr_assert_eq(
                cli_parse_static("rings=idle+job=weight:200+fore=weight:500", &s, why, sizeof why),
                0, "%s", why);
        cr_expect_eq(s.part[SANDBOX_JOB].weight, 200);
        cr_expect_eq(s.n_named, 2);
        set = sandbox_static_named(&s, "rings");
        cr_assert(set);
        cr_expect(set->idle);
        cr_expect_eq(set->weight, 0);
        set = sandbox_static_named(&s, "fore");
        cr_assert(set);
        cr_expect_not(set->idle);
        cr_expect_eq(set->weight, 500);
        cr_expect_null(sandbox_static_named(&s, "batch"));
        cr_expect_null(sandbox_static_named(&s, "ring"));
        cr_expect(sandbox_static_is_set(&s));
        cr_expect(sandbox_static_has_idle(&s));

        cr_expect_eq(cli_check_static_groups(&s, groups, ELEMENTSOF(groups), "scenario x"), 0);
        cr_expect_eq(cli_check_static_groups(&s, groups, 1, "scenario x"), -EINVAL);
        cr_expect_eq(cli_check_static_groups(&s, NULL, 0, NULL), -EINVAL);
        cr_expect_eq(cli_check_static_groups(&(SandboxStatic){ 0 }, NULL, 0, NULL), 0);
        fflush(stderr);
        cr_expect_stderr_eq_str(
                "--static names the group \"rings\", which scenario x does not have (its "
                "groups: fore).\n"
                "--static names the group \"rings\": a run, contest or benchmark has only "
                "job and load; other names are a scenario's [group NAME].\n");
}

Test(cli, static_nothing_set) {
        cr_expect_not(sandbox_static_is_set(NULL));
        cr_expect_not(sandbox_static_has_idle(NULL));
        cr_expect_not(sandbox_static_is_set(&(SandboxStatic){ 0 }));
        cr_expect_str_eq(sandbox_part_name(SANDBOX_JOB), "job");
        cr_expect_str_eq(sandbox_part_name(SANDBOX_LOAD), "load");
        cr_expect_null(sandbox_part_name(SANDBOX_RUN));
        cr_expect_null(sandbox_part_name(_SANDBOX_PART_MAX));
}

/* A kernel without cpu.idle (before 5.15): refused, naming the option; with it, or with no idle
 * asked for, fine. A v1 layout over a temporary tree, only read. */
Test(cli, static_idle_needs_cpu_idle_in_the_kernel, .init = cr_redirect_stderr) {
        _cleanup_free_ char *dir = make_tmpdir();
        CgroupLayout l = { .mode = CGROUP_MODE_V1 };
        SandboxStatic idle = { .part[SANDBOX_LOAD].idle = true };
        SandboxStatic weight = { .part[SANDBOX_JOB].weight = 1000 };
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        cr_assert_geq(fd, 0);
        snprintf(l.cpu_path, sizeof l.cpu_path, "%s", dir);
        write_file_at(fd, SANDBOX_SLICE "/cpu.shares", "1024\n");
        cr_expect_eq(cli_check_static_at(&l, &idle, "load=idle"), -EOPNOTSUPP);
        cr_expect_eq(cli_check_static_at(&l, &weight, "job=weight:1000"), 0);
        fflush(stderr);
        cr_expect_stderr_eq_str("--static load=idle sets cpu.idle, which this kernel's cpu "
                                "controller lacks (Linux 5.15 and later have it, on cgroup v1 "
                                "and v2). Use a weight instead.\n");
        write_file_at(fd, SANDBOX_SLICE "/cpu.idle", "0\n");
        cr_expect_eq(cli_check_static_at(&l, &idle, "load=idle"), 0);
        close(fd);
        rm_rf(dir);
}
