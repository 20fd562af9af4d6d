/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `loadgen run SCENARIO` as a user runs it: every shipped scenario at a short duration reports
 * the tasks it declares and leaves nothing behind (processes, cgroups, files); a task declared
 * to start on CPU 1 is seen there at the start; a group's weight is in its cgroup while it runs;
 * --static sets a scenario's groups by name; SIGINT ends everything; a broken file is refused with
 * its line before anything starts.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <glob.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "load.h"
#include "macro.h"
#include "runbin.h"
#include "testutil.h"

#define LOADGEN BUILD_DIR "/loadgen"
#define SCENARIOS SOURCE_DIR "/conf/scenarios"

/* starver: a task of process_load's pipe-token rings. On a cgroup v1 host its rings can take every
 * CPU from the other groups for a second or more (the starvation cgbalanced(8) describes and
 * these scenarios exist to show), so in a 1 s run only it is sure to have used CPU; the others
 * must still have their row and instances, and must not have failed. */
static const struct {
        const char *name;
        const char *tasks[4];
        const char *starver;
} shipped[] = {
        { "node-imbalance", { "spinner" }, NULL },
        { "balanced", { "spinner" }, NULL },
        { "oscillating", { "wave-a", "wave-b" }, NULL },
        { "pressure", { "tick", "hog", "walker" }, NULL },
        { "pinned-by-admin", { "pinned", "movable" }, NULL },
        { "mixed-contest", { "make", "rings" }, "rings" },
        { "burst-rings", { "work", "tick", "ring", "crunch" }, "ring" },
};

/* The report's row of task, from its first column; NULL if none. */
static const char *report_row(const char *out, const char *task) {
        for (const char *p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
                if (strncmp(p, task, strlen(task)) == 0 && p[strlen(task)] == ' ')
                        return p;
        return NULL;
}

Test(shipped, each_runs_briefly_reports_its_tasks_and_leaves_nothing, .timeout = 120) {
        skip_unless_root();
        for (size_t i = 0; i < ELEMENTSOF(shipped); i++) {
                Dirs d = test_dirs();
                Run r = bin_run((const char *const[]){ LOADGEN, "run", shipped[i].name,
                                                       "--duration", "1", "--quiet", "--dir", d.dir,
                                                       "--mem", "128M", NULL });

                cr_expect(exited_with(r.status, 0), "%s: status %d, stderr: %s", shipped[i].name,
                          r.status, r.err);
                cr_log_info("%s", r.out);
                cr_expect(strstr(r.out, shipped[i].name), "%s: %s", shipped[i].name, r.out);
                for (size_t t = 0; t < ELEMENTSOF(shipped[i].tasks) && shipped[i].tasks[t]; t++) {
                        const char *row = report_row(r.out, shipped[i].tasks[t]);
                        unsigned inst = 0;
                        double cpu = -1;

                        cr_expect(row, "%s: no row for %s: %s", shipped[i].name,
                                  shipped[i].tasks[t], r.out);
                        if (!row)
                                continue;
                        cr_expect_eq(
                                sscanf(row + strlen(shipped[i].tasks[t]), " %u %lf", &inst, &cpu),
                                2, "%s", row);
                        cr_expect_gt(inst, 0);
                        /* wave-b sleeps for its first 3 s */
                        if (!streq(shipped[i].tasks[t], "wave-b") &&
                            (!shipped[i].starver || streq(shipped[i].tasks[t], shipped[i].starver)))
                                cr_expect_gt(cpu, 0.0, "%s: %s used no CPU", shipped[i].name,
                                             shipped[i].tasks[t]);
                        cr_expect(!strstr(row, "failed"), "%s", row);
                }
                if (streq(shipped[i].name, "pressure")) {
                        _cleanup_free_ char *want = NULL;

                        cr_assert_gt(asprintf(&want,
                                              "protected group protected: "
                                              "cgbalance.slice/loadgen-%d/protected",
                                              (int) r.pid),
                                     0);
                        cr_expect(strstr(r.out, want), "no \"%s\" in: %s", want, r.out);
                }
                expect_clean(&r, &d);
                bin_run_done(&r);
                test_dirs_done(&d);
        }
}

/* A scenario file written for one test, in its own directory. */
static char *write_scenario(const char *text) {
        char *dir = make_tmpdir(), *path = NULL;
        FILE *f;

        cr_assert_gt(asprintf(&path, "%s/t.conf", dir), 0);
        f = fopen(path, "we");
        cr_assert(f);
        fputs(text, f);
        fclose(f);
        free(dir);
        return path;
}

static void remove_scenario(char *path) {
        char *slash = strrchr(path, '/');

        *slash = '\0';
        rm_rf(path);
        free(path);
}

/* The JSON's value of key after the first occurrence of after; -1 if missing. */
static long json_after(const char *json, const char *after, const char *key) {
        const char *p = strstr(json, after);
        _cleanup_free_ char *k = NULL;
        long v = -1;

        if (!p)
                return -1;
        cr_assert_gt(asprintf(&k, "\"%s\": ", key), 0);
        p = strstr(p, k);
        if (p)
                (void) sscanf(p + strlen(k), "%ld", &v);
        return v;
}

static unsigned count(const char *s, const char *what) {
        unsigned n = 0;

        for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
                n++;
        return n;
}

Test(placement, a_task_declared_on_cpu_1_starts_there, .timeout = 30) {
        char *path;
        Dirs d;
        Run r;

        skip_unless_root();
        if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
                cr_skip_test("needs 2 CPUs, this machine has 1");
        /* Four instances: by chance alone all four would start on CPU 1 one time in 16. */
        path = write_scenario("[scenario]\nname = on-one\nduration = 1s\n[group g]\n"
                              "[task t]\ngroup = g\ninstances = 4\ncpus = 1\nphase = run 1s\n"
                              "[task p]\ngroup = g\ncpus = 1\npinned = yes\nphase = run 1s\n");
        d = test_dirs();
        r = bin_run((const char *const[]){ LOADGEN, "run", path, "--json", "--quiet", "--dir",
                                           d.dir, NULL });
        cr_assert(exited_with(r.status, 0), "stderr: %s", r.err);
        cr_expect_eq(count(r.out, "\"start_cpu\": 1,"), 5, "%s", r.out);
        cr_expect_eq(count(r.out, "\"start_cpu\": "), 5, "%s", r.out);
        cr_expect_eq(json_after(r.out, "\"task\": \"p\"", "start_cpu"), 1, "%s", r.out);
        cr_expect_gt(json_after(r.out, "\"task\": \"t\"", "run_loops"), 0, "%s", r.out);
        cr_expect(strstr(r.out, "\"group\": \"g\""), "%s", r.out);
        cr_expect_eq(json_after(r.out, "\"group\": \"g\"", "weight"), 100, "%s", r.out);
        expect_clean(&r, &d);
        bin_run_done(&r);
        test_dirs_done(&d);
        remove_scenario(path);
}

/* The group's own file of the run of pid, e.g. "busy/cpu.weight"; NULL if there is none. */
static char *run_group_file(pid_t pid, const char *rel) {
        _cleanup_free_ char *pattern = NULL;
        char *text = NULL;
        glob_t g;

        cr_assert_gt(asprintf(&pattern, "/sys/fs/cgroup{,/*}/cgbalance.slice/loadgen-%d/%s",
                              (int) pid, rel),
                     0);
        if (glob(pattern, GLOB_BRACE | GLOB_NOSORT, NULL, &g) == 0)
                text = read_all(g.gl_pathv[0]);
        globfree(&g);
        return text;
}

Test(groups, a_groups_weight_is_in_its_cgroup_and_its_tasks_in_it, .timeout = 30) {
        _cleanup_free_ char *weight = NULL, *procs = NULL;
        uint64_t t0 = now_usec();
        char *path;
        Dirs d;
        Run r = { 0 };

        skip_unless_root();
        path = write_scenario("[scenario]\nname = weights\nduration = 3s\n[group heavy]\n"
                              "weight = 400\n[task t]\ngroup = heavy\ninstances = 2\n"
                              "phase = sleep 3s\n");
        d = test_dirs();
        bin_start(&r,
                  (const char *const[]){ LOADGEN, "run", path, "--quiet", "--dir", d.dir, NULL });
        while (now_usec() - t0 < 10000000u) {
                free(procs);
                procs = run_group_file(r.pid, "heavy/cgroup.procs");
                if (procs && strchr(procs, '\n') && strchr(procs, '\n') != strrchr(procs, '\n'))
                        break;
                usleep(20000);
        }
        cr_expect(procs && strchr(procs, '\n') != strrchr(procs, '\n'),
                  "two processes in the group: %s", procs ? procs : "(no group)");
        weight = run_group_file(r.pid, "heavy/cpu.weight");
        if (!weight || !weight[0]) {
                char want[32];

                free(weight);
                weight = run_group_file(r.pid, "heavy/cpu.shares");
                (void) snprintf(want, sizeof want, "%" PRIu64 "\n", cgroup_weight_to_shares(400));
                cr_expect_str_eq(weight ? weight : "", want, "cpu.shares");
        } else
                cr_expect_str_eq(weight, "400\n", "cpu.weight");
        bin_finish(&r);
        cr_expect(exited_with(r.status, 0), "stderr: %s", r.err);
        expect_clean(&r, &d);
        bin_run_done(&r);
        test_dirs_done(&d);
        remove_scenario(path);
}

/* The value after "key": in the first {...} after "name": of json, or NULL. */
static const char *static_value(const char *json, const char *name, const char *key) {
        char n[64], k[64];
        const char *p, *end;

        (void) snprintf(n, sizeof n, "\"%s\":", name);
        (void) snprintf(k, sizeof k, "\"%s\":", key);
        p = strstr(json, n);
        end = p ? strchr(p, '}') : NULL;
        p = p ? strstr(p, k) : NULL;
        if (!p || !end || p > end)
                return NULL;
        p += strlen(k);
        return p + strspn(p, " \n");
}

/* loadgen --static on a scenario's groups by name: the weight in the file's place, cpu.idle,
 * both in the report's "static" member as the groups held them; a name the scenario lacks is
 * refused before anything starts, naming its groups. */
Test(groups, static_settings_name_a_scenarios_groups, .timeout = 30) {
        char *path;
        const char *v;
        Dirs d;
        Run r;

        skip_unless_root();
        path = write_scenario("[scenario]\nname = statics\nduration = 1s\n[group heavy]\n"
                              "weight = 400\n[group calm]\n[task t]\ngroup = heavy\n"
                              "phase = sleep 1s\n[task u]\ngroup = calm\nphase = sleep 1s\n");
        d = test_dirs();
        r = bin_run((const char *const[]){ LOADGEN, "--static=heavy=weight:700+calm=idle", "run",
                                           path, "--quiet", "--json", "--dir", d.dir, NULL });
        if (exited_with(r.status, 2) && strstr(r.err, "lacks"))
                cr_skip_test("this kernel has no cpu.idle: %s", r.err);
        cr_assert(exited_with(r.status, 0), "stderr: %s", r.err);
        v = static_value(r.out, "heavy", "weight");
        cr_expect(v && strncmp(v, "700", 3) == 0, "heavy's weight: %s", r.out);
        v = static_value(r.out, "heavy", "idle");
        cr_expect(v && strncmp(v, "false", 5) == 0, "heavy's cpu.idle: %s", r.out);
        v = static_value(r.out, "calm", "idle");
        cr_expect(v && strncmp(v, "true", 4) == 0, "calm's cpu.idle: %s", r.out);
        expect_clean(&r, &d);
        bin_run_done(&r);

        r = bin_run((const char *const[]){ LOADGEN, "--static=rings=idle", "run", path, "--quiet",
                                           "--dir", d.dir, NULL });
        cr_expect(exited_with(r.status, 2), "status %d", r.status);
        cr_expect(strstr(r.err, "--static names the group \"rings\", which scenario statics does "
                                "not have (its groups: heavy, calm)"),
                  "stderr: %s", r.err);
        cr_expect_str_empty(r.out);
        expect_clean(&r, &d);
        bin_run_done(&r);

        r = bin_run((const char *const[]){ LOADGEN, "--static=rings=idle", "run", "no_load",
                                           "--dir", d.dir, NULL });
        cr_expect(exited_with(r.status, 2), "status %d", r.status);
        cr_expect(strstr(r.err, "has only job and load"), "stderr: %s", r.err);
        expect_clean(&r, &d);
        bin_run_done(&r);
        test_dirs_done(&d);
        remove_scenario(path);
}

Test(signals, sigint_ends_every_instance_and_leaves_nothing, .timeout = 30) {
        _cleanup_free_ char *procs = NULL;
        uint64_t t0 = now_usec();
        Dirs d;
        Run r = { 0 };

        skip_unless_root();
        d = test_dirs();
        bin_start(&r, (const char *const[]){ LOADGEN, "run", "pressure", "--duration", "60",
                                             "--quiet", "--dir", d.dir, "--mem", "128M", NULL });
        while (now_usec() - t0 < 10000000u) {
                free(procs);
                procs = run_group_file(r.pid, "noisy/cgroup.procs");
                if (procs && procs[0])
                        break;
                usleep(20000);
        }
        cr_expect(procs && procs[0], "the noisy group never had a process");
        usleep(300000);
        cr_assert_eq(kill(r.pid, SIGINT), 0);
        bin_finish(&r);
        cr_expect(exited_with(r.status, 130), "status %d, stderr: %s", r.status, r.err);
        cr_expect(strstr(r.out, "(interrupted)"), "%s", r.out);
        cr_expect_lt(now_usec() - t0, 20000000u);
        expect_clean(&r, &d);
        bin_run_done(&r);
        test_dirs_done(&d);
}

Test(errors, a_broken_file_is_refused_with_its_line_before_anything_starts, .timeout = 30) {
        char *path = write_scenario("[scenario]\nname = broken\n[group g]\n[task t]\n"
                                    "group = g\nphase = run fast\n");
        Dirs d = test_dirs();
        Run r = bin_run((const char *const[]){ LOADGEN, "run", path, "--dir", d.dir, NULL });
        Run u = bin_run((const char *const[]){ LOADGEN, "run", "no-such-scenario", NULL });

        cr_expect(exited_with(r.status, 2), "status %d", r.status);
        cr_expect(strstr(r.err, "t.conf:6: task t: phase: 'fast' is not a duration"), "%s", r.err);
        cr_expect_str_eq(r.out, "");
        expect_clean(&r, &d);
        cr_expect(exited_with(u.status, 2));
        cr_expect(strstr(u.err, "no-such-scenario"), "%s", u.err);
        bin_run_done(&r);
        bin_run_done(&u);
        test_dirs_done(&d);
        remove_scenario(path);
}

Test(list, the_shipped_scenarios_are_listed_with_their_descriptions) {
        Run r = bin_run((const char *const[]){ LOADGEN, "list", NULL });

        cr_expect(exited_with(r.status, 0));
        for (size_t i = 0; i < ELEMENTSOF(shipped); i++)
                cr_expect(strstr(r.out, shipped[i].name), "no %s: %s", shipped[i].name, r.out);
        cr_expect(strstr(r.out, "Eight busy tasks all started on node 0"), "%s", r.out);
        cr_expect(!strstr(r.out, "does not parse"), "%s", r.out);
        bin_run_done(&r);
}
