/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The real cgbalanced binary, run as a user runs it: options, --check-config, --root replays, and
 * live runs on real cgroups with real busy processes (weights, signals, crash recovery, dry run).
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <netinet/in.h>
#include <sched.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-levers.h"
#include "cgroup-tree.h"
#include "cgroup.h"
#include "event.h"
#include "fileio.h"
#include "macro.h"
#include "proc.h"
#include "testutil.h"

#define DAEMON BUILD_DIR "/cgbalanced"

/* ---- running the binary */

/* The program gets SIGTERM when the test's process ends (a test that timed out is killed):
 * the daemon then puts back what it changed and stops, nothing is left running. */
static pid_t spawn(const char *const argv[], const char *out_path, const char *err_path) {
        pid_t parent = getpid(), pid = fork();

        cr_assert_geq(pid, 0);
        if (pid == 0) {
                int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

                if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
                        _exit(125);
                if (o < 0 || e < 0 || dup2(o, STDOUT_FILENO) < 0 || dup2(e, STDERR_FILENO) < 0)
                        _exit(126);
                execv(argv[0], (char *const *) argv);
                _exit(127);
        }
        return pid;
}

typedef struct Run {
        int status;
        char *out, *err;
} Run;

static Run run(const char *const argv[]) {
        _cleanup_free_ char *dir = make_tmpdir(), *o = NULL, *e = NULL;
        Run r = { 0 };
        pid_t pid;

        cr_assert_gt(asprintf(&o, "%s/out", dir), 0);
        cr_assert_gt(asprintf(&e, "%s/err", dir), 0);
        pid = spawn(argv, o, e);
        cr_assert_eq(waitpid(pid, &r.status, 0), pid);
        r.out = read_all(o);
        r.err = read_all(e);
        rm_rf(dir);
        return r;
}

static void run_done(Run *r) {
        free(r->out);
        free(r->err);
}

/* ---- options */

Test(cli, help_lists_every_option) {
        Run r = run((const char *const[]){ DAEMON, "--help", NULL });
        static const char *const options[] = {
                "--config",        "--dry-run", "--once",           "--check-config",
                "--dump-topology", "--root",    "--print-defaults", "--help",
                "--version",       "--bus",     "--events"
        };

        cr_expect(exited_with(r.status, 0));
        for (size_t i = 0; i < ELEMENTSOF(options); i++)
                cr_expect_not_null(strstr(r.out, options[i]), "--help lacks %s", options[i]);
        run_done(&r);
}

Test(cli, version_prints_the_version) {
        Run r = run((const char *const[]){ DAEMON, "--version", NULL });

        cr_expect(exited_with(r.status, 0));
        cr_expect_str_eq(r.out, "cgbalanced " CGBALANCE_VERSION "\n");
        run_done(&r);
}

Test(cli, unknown_option_and_stray_argument_fail) {
        Run a = run((const char *const[]){ DAEMON, "--frobnicate", NULL });
        Run b = run((const char *const[]){ DAEMON, "extra", NULL });

        cr_expect(exited_with(a.status, 1));
        cr_expect(exited_with(b.status, 1));
        cr_expect_not_null(strstr(b.err, "Unexpected argument \"extra\""), "%s", b.err);
        run_done(&a);
        run_done(&b);
}

static char *write_conf(const char *dir, const char *name, const char *text) {
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char *path = NULL;

        cr_assert_geq(fd, 0);
        write_file_at(fd, name, text);
        cr_assert_gt(asprintf(&path, "%s/%s", dir, name), 0);
        return path;
}

Test(cli, check_config_prints_the_effective_values) {
        _cleanup_free_ char *dir = make_tmpdir();
        _cleanup_free_ char *conf =
                write_conf(dir, "good.conf", "[balance]\nnode_imbalance_pct = 140\n");
        Run r = run((const char *const[]){ DAEMON, "--check-config", "--config", conf, NULL });

        cr_expect(exited_with(r.status, 0), "%s", r.err);
        cr_expect_not_null(strstr(r.out, "balance.node_imbalance_pct=140\n"), "%s", r.out);
        cr_expect_not_null(strstr(r.out, "daemon.interval=1s\n"), "%s", r.out);
        run_done(&r);
        rm_rf(dir);
}

Test(cli, check_config_names_file_line_and_key) {
        _cleanup_free_ char *dir = make_tmpdir();
        _cleanup_free_ char *conf =
                write_conf(dir, "bad.conf", "[balance]\n# fine\nnode_imbalance_pct = 99\n");
        _cleanup_free_ char *want = NULL;
        Run r = run((const char *const[]){ DAEMON, "--check-config", "--config", conf, NULL });

        cr_assert_gt(asprintf(&want, "%s:3: node_imbalance_pct:", conf), 0);
        cr_expect(exited_with(r.status, 1));
        cr_expect_not_null(strstr(r.err, want), "stderr: %s", r.err);
        run_done(&r);
        rm_rf(dir);
}

Test(cli, explicit_config_that_is_missing_fails) {
        Run r = run((const char *const[]){ DAEMON, "--check-config", "--config",
                                           "/nonexistent/cgbalance.conf", NULL });

        cr_expect(exited_with(r.status, 1));
        cr_expect_not_null(strstr(r.err, "/nonexistent/cgbalance.conf"), "%s", r.err);
        run_done(&r);
}

Test(cli, print_defaults_is_the_shipped_conf) {
        _cleanup_free_ char *path = NULL, *shipped = NULL;
        Run r = run((const char *const[]){ DAEMON, "--print-defaults", NULL });

        cr_assert_gt(asprintf(&path, "%s/../../conf/cgbalance.conf", FIXTURES_DIR), 0);
        shipped = read_all(path);
        cr_expect(exited_with(r.status, 0));
        cr_expect_str_eq(r.out, shipped);
        run_done(&r);
}

/* ---- --root: a recorded machine */

#define RECORDED FIXTURES_DIR "/root/imbalanced-2node"

Test(root, dump_topology_of_a_recorded_machine) {
        Run r = run((const char *const[]){ DAEMON, "--root", RECORDED, "--dump-topology", NULL });

        cr_expect(exited_with(r.status, 0), "%s", r.err);
        cr_expect_not_null(strstr(r.out, "node 0"), "%s", r.out);
        cr_expect_not_null(strstr(r.out, "node 1"), "%s", r.out);
        run_done(&r);
}

Test(root, once_plans_moves_off_the_busy_node) {
        Run r = run((const char *const[]){ DAEMON, "--root", RECORDED, "--once", NULL });
        size_t moves = 0;

        cr_expect(exited_with(r.status, 0), "%s", r.err);
        cr_expect_not_null(strstr(r.out, "managed tasks: 4"), "%s", r.out);
        for (const char *p = r.out; (p = strstr(p, "node 0 -> 1")); p++)
                moves++;
        /* 4 busy tasks on node 0's 2 CPUs, node 1 idle: the default cap of 2 moves a tick. */
        cr_expect_eq(moves, 2, "%s", r.out);
        run_done(&r);
}

/* A sched_ext scheduler makes the weight and idle levers moot: the daemon says so, loudly. */
Test(root, a_loaded_sched_ext_scheduler_is_warned_about) {
        _cleanup_free_ char *dir = make_tmpdir();
        int fd;
        Run r;

        copy_fixture("root/imbalanced-2node", dir);
        fd = open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
        cr_assert_geq(fd, 0);
        write_file_at(fd, "sys/kernel/sched_ext/state", "enabled\n");
        write_file_at(fd, "sys/kernel/sched_ext/root/ops", "scx_test\n");
        (void) close(fd);
        r = run((const char *const[]){ DAEMON, "--root", dir, "--once", NULL });
        cr_expect(exited_with(r.status, 0), "%s", r.err);
        cr_expect(strstr(r.err, "the sched_ext scheduler 'scx_test' is enabled: most such "
                                "schedulers ignore cpu.weight and cpu.idle"),
                  "%s", r.err);
        run_done(&r);
        rm_rf(dir);
}

Test(root, once_never_acts_on_this_machine) {
        _cleanup_free_ char *dir = make_tmpdir();
        _cleanup_free_ char *conf =
                write_conf(dir, "c.conf", "[daemon]\nstate_directory = /nonexistent/x\n");
        Run r = run((const char *const[]){ DAEMON, "--root", RECORDED, "--once", "--config", conf,
                                           NULL });

        /* A replay keeps no record, so even an unusable state directory does not matter. */
        cr_expect(exited_with(r.status, 0), "%s", r.err);
        run_done(&r);
        rm_rf(dir);
}

/* ---- live runs on real cgroups */

#define MAX_CHILDREN 16

static CgroupLayout layout;
static char group[128], prot[160], noisy[160];
static pid_t children[MAX_CHILDREN];
static size_t n_children;
static volatile uint64_t *counters; /* one per child, shared */
static pid_t daemon_pid;
static char *workdir;

static void live_setup(void) {
        if (!running_as_root())
                cr_skip_test("needs root to make cgroups and run the daemon on them");
        if (cgroup_layout_detect(&layout) < 0 || !layout.cpu_path[0])
                cr_skip_test("no cgroup cpu controller on this machine");
        snprintf(group, sizeof group, "cgbalance.slice/itest-%d", (int) getpid());
        snprintf(prot, sizeof prot, "%s/prot", group);
        snprintf(noisy, sizeof noisy, "%s/noisy", group);
        cr_assert_eq(cgroup_create(&layout, prot), 0);
        cr_assert_eq(cgroup_create(&layout, noisy), 0);
        counters = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        cr_assert_neq((void *) counters, MAP_FAILED);
        workdir = make_tmpdir();
}

static void stop_children(void) {
        for (size_t i = 0; i < n_children; i++) {
                (void) kill(children[i], SIGKILL);
                (void) waitpid(children[i], NULL, 0);
        }
        n_children = 0;
}

/* Removes every group below the directory dir of a cgroup hierarchy, deepest first (a cgroup
 * directory goes with rmdir(), its control files with it). */
static void rmdir_below(const char *dir) {
        DIR *d = opendir(dir);
        struct dirent *de;

        if (!d)
                return;
        while ((de = readdir(d))) {
                _cleanup_free_ char *sub = NULL;

                if (de->d_type != DT_DIR || streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (asprintf(&sub, "%s/%s", dir, de->d_name) < 0)
                        continue;
                rmdir_below(sub);
                (void) rmdir(sub);
        }
        (void) closedir(d);
}

static void live_teardown(void) {
        if (workdir) { /* a test's read-only state directory, if it stopped before unmounting */
                _cleanup_free_ char *state = NULL;

                if (asprintf(&state, "%s/state", workdir) > 0)
                        (void) umount2(state, MNT_DETACH);
        }
        if (daemon_pid > 0) {
                (void) kill(daemon_pid, SIGKILL);
                (void) waitpid(daemon_pid, NULL, 0);
                daemon_pid = 0;
        }
        stop_children();
        if (group[0]) {
                _cleanup_free_ char *dir = NULL;

                (void) cgroup_remove(&layout, prot);
                (void) cgroup_remove(&layout, noisy);
                /* what a test made by hand (names the library refuses, a deep chain) */
                if (asprintf(&dir, "%s/%s", layout.cpu_path, group) > 0)
                        rmdir_below(dir);
                (void) cgroup_remove(&layout, group);
        }
        rm_rf(workdir);
}

/* A busy process in path, counting its loops in counters[n_children]. */
static void start_busy(const char *path) {
        size_t slot = n_children;
        pid_t parent = getpid(), pid;

        cr_assert_lt(slot, MAX_CHILDREN);
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                die_with_parent(parent); /* never a busy orphan after a test that timed out */
                for (;;)
                        counters[slot]++;
        }
        children[n_children++] = pid;
        cr_assert_eq(cgroup_attach_pid(&layout, path, pid), 0);
}

static uint64_t shares_of(const char *path) {
        _cleanup_free_ char *file = NULL, *text = NULL;

        cr_assert_gt(asprintf(&file, "%s/%s/cpu.shares", layout.cpu_path, path), 0);
        text = read_all(file);
        return strtoull(text, NULL, 10);
}

/* The live runs' configuration with extra, as workdir/name. */
static char *live_conf_as(const char *name, const char *extra) {
        _cleanup_free_ char *text = NULL;

        cr_assert_gt(asprintf(&text,
                              "[daemon]\ninterval = 200ms\nstate_directory = %s/state\n"
                              "[manage]\ncgroups = %s\n%s",
                              workdir, group, extra),
                     0);
        return write_conf(workdir, name, text);
}

static char *live_conf(const char *extra) {
        return live_conf_as("live.conf", extra);
}

static char *log_path(void) {
        char *p = NULL;

        cr_assert_gt(asprintf(&p, "%s/daemon.log", workdir), 0);
        return p;
}

static void start_daemon(const char *conf, bool dry_run) {
        _cleanup_free_ char *err = log_path(), *out = NULL;

        cr_assert_gt(asprintf(&out, "%s/daemon.out", workdir), 0);
        daemon_pid =
                dry_run ? spawn((const char *const[]){ DAEMON, "--config", conf, "--dry-run",
                                                       NULL },
                                out, err)
                        : spawn((const char *const[]){ DAEMON, "--config", conf, NULL }, out, err);
}

/* Waits up to timeout_ms for the file at path to contain what; returns whether it did. */
static bool wait_file(const char *path, const char *what, int timeout_ms) {
        for (int waited = 0; waited <= timeout_ms; waited += 50) {
                _cleanup_free_ char *text = read_all(path);

                if (strstr(text, what))
                        return true;
                usleep(50 * 1000);
        }
        return false;
}

/* The daemon's log so far (caller frees). */
static char *daemon_log_text(void) {
        _cleanup_free_ char *path = log_path();

        return read_all(path);
}

/* Waits up to timeout_ms for the daemon's log to contain what. */
static bool wait_log(const char *what, int timeout_ms) {
        _cleanup_free_ char *path = log_path();

        return wait_file(path, what, timeout_ms);
}

static bool wait_shares(const char *path, bool (*ok)(uint64_t), int timeout_ms) {
        for (int waited = 0; waited <= timeout_ms; waited += 100) {
                if (ok(shares_of(path)))
                        return true;
                usleep(100 * 1000);
        }
        return false;
}

static bool raised(uint64_t shares) {
        return shares > 1024;
}

static int stop_daemon(int sig) {
        int status;

        cr_assert_eq(kill(daemon_pid, sig), 0);
        cr_assert_eq(waitpid(daemon_pid, &status, 0), daemon_pid);
        daemon_pid = 0;
        return status;
}

#define PRESSURE_CONF                                                                 \
        "[weights]\nprotected_cgroups = %s\npressure_target = 1\npressure_hold = 0\n" \
        "weight_step = 300\n"

static char *pressure_conf(void) {
        _cleanup_free_ char *extra = NULL;

        cr_assert_gt(asprintf(&extra, PRESSURE_CONF, prot), 0);
        return live_conf(extra);
}

/* 3 busy processes in the protected group on 2 CPUs: it is under CPU pressure. */
static void make_pressure(void) {
        for (int i = 0; i < 3; i++)
                start_busy(prot);
}

TestSuite(live, .init = live_setup, .fini = live_teardown, .timeout = 60);

Test(live, sigterm_stops_cleanly_and_says_it_restored) {
        _cleanup_free_ char *conf = live_conf("");

        start_daemon(conf, false);
        cr_assert(wait_log("starting", 5000), "no start line");
        cr_expect(wait_log("cgroups ", 100));
        usleep(500 * 1000);
        cr_expect(exited_with(stop_daemon(SIGTERM), 0));
        cr_expect(wait_log("Restored 0 ", 1000));
}

Test(live, sighup_with_a_bad_config_keeps_the_old_one) {
        _cleanup_free_ char *conf = live_conf(""), *want = NULL;
        _cleanup_close_ int fd = open(workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        start_daemon(conf, false);
        cr_assert(wait_log("starting", 5000));
        write_file_at(fd, "live.conf", "[daemon]\ninterval = 200ms\nbogus = 1\n");
        cr_assert_eq(kill(daemon_pid, SIGHUP), 0);
        cr_assert_gt(asprintf(&want, "%s:3: bogus:", conf), 0);
        cr_expect(wait_log(want, 3000), "no file:line error for the bad reload");
        cr_expect(wait_log("Keeping the configuration in force", 1000));
        cr_expect_eq(kill(daemon_pid, 0), 0, "the daemon died on a bad reload");

        write_file_at(fd, "live.conf", "[daemon]\ninterval = 300ms\n");
        cr_assert_eq(kill(daemon_pid, SIGHUP), 0);
        cr_expect(wait_log("Reloaded", 3000));
        cr_expect(exited_with(stop_daemon(SIGTERM), 0));
}

Test(live, protected_group_under_pressure_gets_weight_and_sigterm_restores_it) {
        _cleanup_free_ char *conf = pressure_conf();

        cr_assert_eq(shares_of(prot), 1024);
        make_pressure();
        start_daemon(conf, false);
        cr_expect(wait_shares(prot, raised, 20000), "weight never rose: shares %" PRIu64,
                  shares_of(prot));
        cr_expect(exited_with(stop_daemon(SIGTERM), 0));
        cr_expect_eq(shares_of(prot), 1024, "not restored");
}

static size_t count_of(const char *haystack, const char *needle) {
        size_t n = 0;

        for (const char *p = strstr(haystack, needle); p; p = strstr(p + 1, needle))
                n++;
        return n;
}

/* --events: each weight change the log tells of is one line of the lib/event.h contract. */
Test(live, events_stream_carries_each_weight_change) {
        _cleanup_free_ char *conf = pressure_conf(), *events = NULL, *opt = NULL, *err = log_path(),
                            *out = NULL, *text = NULL, *log = NULL;
        size_t n_lines = 0, n_weights = 0;

        cr_assert_gt(asprintf(&events, "%s/events", workdir), 0);
        cr_assert_gt(asprintf(&opt, "--events=%s", events), 0);
        cr_assert_gt(asprintf(&out, "%s/daemon.out", workdir), 0);
        make_pressure();
        daemon_pid = spawn((const char *const[]){ DAEMON, "--config", conf, opt, NULL }, out, err);
        cr_expect(wait_shares(prot, raised, 20000), "weight never rose: shares %" PRIu64,
                  shares_of(prot));
        cr_expect(exited_with(stop_daemon(SIGTERM), 0));
        text = read_all(events);
        log = read_all(err);
        for (char *save = NULL, *l = strtok_r(text, "\n", &save); l;
             l = strtok_r(NULL, "\n", &save)) {
                Event e;

                n_lines++;
                cr_assert_eq(event_parse(l, &e), 0, "not an event: %s", l);
                if (e.kind != EVENT_WEIGHT_CHANGED)
                        continue;
                n_weights++;
                cr_expect_str_eq(e.cgroup, prot);
                cr_expect_lt(e.old_weight, e.new_weight, "%s", l);
                cr_expect_gt(e.monotonic_usec, 0);
        }
        cr_expect_gt(n_weights, 0, "no weight change in %s:\n%s", events, log);
        cr_expect_eq(n_weights, count_of(log, "Set the weight of "), "events %zu, log:\n%s",
                     n_weights, log);
        cr_expect_eq(n_lines, n_weights + count_of(log, "Moved pid "));
}

Test(live, events_stream_that_cannot_be_opened_is_an_error) {
        _cleanup_free_ char *conf = live_conf(""), *err = log_path(), *out = NULL, *log = NULL;
        int status;

        cr_assert_gt(asprintf(&out, "%s/daemon.out", workdir), 0);
        daemon_pid = spawn((const char *const[]){ DAEMON, "--config", conf, "--events=987", NULL },
                           out, err);
        cr_assert_eq(waitpid(daemon_pid, &status, 0), daemon_pid);
        daemon_pid = 0;
        cr_expect(exited_with(status, 1), "status %d", status);
        log = read_all(err);
        cr_expect(strstr(log, "Failed to open --events=987: Bad file descriptor"), "%s", log);
}

Test(live, dry_run_changes_nothing) {
        _cleanup_free_ char *conf = pressure_conf();

        make_pressure();
        start_daemon(conf, true);
        cr_expect(wait_log("Would set the weight of ", 20000),
                  "dry run never said what it would do");
        cr_expect_eq(shares_of(prot), 1024);
        cr_expect(exited_with(stop_daemon(SIGTERM), 0));
        cr_expect_eq(shares_of(prot), 1024);
}

Test(live, restart_after_kill_9_puts_back_what_the_dead_daemon_changed) {
        _cleanup_free_ char *conf = pressure_conf(), *calm = NULL;
        _cleanup_close_ int fd = open(workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        make_pressure();
        start_daemon(conf, false);
        cr_assert(wait_shares(prot, raised, 20000), "weight never rose");
        stop_daemon(SIGKILL);
        cr_assert(raised(shares_of(prot)), "SIGKILL cannot have restored anything");

        /* The same state directory, but no protected group: only reconciling changes it. */
        calm = live_conf("");
        start_daemon(calm, false);
        cr_expect(wait_log("Put back 1 ", 5000), "no reconcile message");
        cr_expect_eq(shares_of(prot), 1024);
        cr_expect(exited_with(stop_daemon(SIGTERM), 0));
        (void) fd;
}

/* ---- past the weight: the escalation ladder */

static bool idle_of(const char *path) {
        bool idle = false;

        cr_assert_eq(cgroup_get_cpu_idle(&layout, path, &idle), 0);
        return idle;
}

static bool wait_idle(const char *path, bool want, int timeout_ms) {
        for (int waited = 0; waited <= timeout_ms; waited += 100) {
                if (idle_of(path) == want)
                        return true;
                usleep(100 * 1000);
        }
        return false;
}

/* A protected group that stays pressed at weight_max, a busy neighbour: the neighbour gets
 * cpu.idle, shown in the events, the status and explain; a crash leaves it for the next run to
 * put back, and SIGTERM gives it back. */
Test(live, a_pressing_neighbour_gets_cpu_idle_past_weight_max_and_it_is_given_back) {
        _cleanup_free_ char *extra = NULL, *conf = NULL, *calm = NULL, *events = NULL, *opt = NULL,
                            *err = log_path(), *out = NULL, *text = NULL, *second = NULL;
        bool seen = false;
        uint64_t quota = 1;
        bool any;

        if (cgroup_get_cpu_idle(&layout, noisy, &any) == -EOPNOTSUPP)
                cr_skip_test("this kernel has no cpu.idle (before 5.15)");
        cr_assert_gt(asprintf(&extra,
                              "[weights]\nprotected_cgroups = %s\npressure_target = 1\n"
                              "pressure_hold = 0\nweight_step = 100\nweight_max = 200\n"
                              "[escalation]\nescalate_hold = 400ms\nescalate_steps = idle\n",
                              prot),
                     0);
        conf = live_conf(extra);
        cr_assert_gt(asprintf(&events, "%s/events", workdir), 0);
        cr_assert_gt(asprintf(&opt, "--events=%s", events), 0);
        cr_assert_gt(asprintf(&out, "%s/daemon.out", workdir), 0);
        for (int i = 0; i < 2; i++)
                start_busy(prot);
        for (int i = 0; i < 4; i++)
                start_busy(noisy);
        cr_assert_not(idle_of(noisy));

        /* up, then a crash: the next run puts it back from the record */
        daemon_pid = spawn((const char *const[]){ DAEMON, "--config", conf, opt, NULL }, out, err);
        cr_assert(wait_idle(noisy, true, 20000), "no cpu.idle on the neighbour: %s",
                  text = read_all(err));
        free(TAKE_PTR(text));
        /* The daemon writes the event after cpu.idle: a kill between the two would lose it. */
        cr_expect(wait_file(events, "\"lever-changed\"", 5000), "no lever-changed event");
        stop_daemon(SIGKILL);
        cr_assert(idle_of(noisy), "SIGKILL cannot have given it back");
        text = read_all(events);
        for (char *save = NULL, *l = strtok_r(text, "\n", &save); l;
             l = strtok_r(NULL, "\n", &save)) {
                Event e;

                cr_assert_eq(event_parse(l, &e), 0, "not an event: %s", l);
                if (e.kind != EVENT_LEVER_CHANGED)
                        continue;
                cr_expect_str_eq(e.cgroup, noisy);
                cr_expect_str_eq(e.for_cgroup, prot);
                cr_expect_eq(e.lever, POLICY_LEVER_IDLE);
                cr_expect_eq(e.old_value, 0);
                cr_expect_eq(e.new_value, 1);
                cr_expect(strstr(e.reason, "at weight_max 200"), "%s", e.reason);
                seen = true;
        }
        cr_expect(seen, "no lever-changed event in:\n%s", text);
        calm = live_conf_as("calm.conf", "");
        start_daemon(calm, false);
        cr_expect(wait_log("Put back 2 ", 5000), "no reconcile message (the weight and cpu.idle)");
        cr_expect_not(idle_of(noisy), "the record's cpu.idle was not put back");
        cr_expect(exited_with(stop_daemon(SIGTERM), 0));

        /* up again, and SIGTERM gives it back */
        start_daemon(conf, false);
        cr_assert(wait_idle(noisy, true, 20000), "no cpu.idle on the second run: %s",
                  second = read_all(err));
        cr_expect(exited_with(stop_daemon(SIGTERM), 0));
        cr_expect_not(idle_of(noisy), "SIGTERM did not give cpu.idle back");
        cr_expect_eq(cgroup_get_cpu_quota(&layout, noisy, &quota, NULL), 0);
        cr_expect_eq(quota, CGROUP_QUOTA_NONE, "a quota was left: %" PRIu64, quota);
        cr_expect_eq(shares_of(prot), 1024, "the weight was not restored");
}

/* How many CPUs pid may run on. */
static unsigned cpus_of(pid_t pid) {
        _cleanup_cpumask_ CpuMask *m = cpumask_new(CPUMASK_MAX_CPUS);

        cr_assert_not_null(m);
        if (sched_getaffinity(pid, cpumask_cpu_set_size(m), cpumask_cpu_set(m)) < 0)
                return 0;
        return cpumask_count(m);
}

/* The children from first on that may run on want CPUs, within timeout_ms. */
static bool wait_cpus_of(size_t first, unsigned want, int timeout_ms) {
        for (int waited = 0; waited <= timeout_ms; waited += 100) {
                bool all = true;

                for (size_t i = first; i < n_children; i++)
                        all = all && cpus_of(children[i]) == want;
                if (all)
                        return true;
                usleep(100 * 1000);
        }
        return false;
}

/* The last step of the ladder alone: the neighbour's tasks are kept off the CPU the protected
 * group used most, its own masks stay whole, and SIGTERM gives every mask back. */
Test(live, a_partition_keeps_the_neighbour_off_the_protected_cpu_and_sigterm_gives_it_back) {
        _cleanup_free_ char *extra = NULL, *conf = NULL, *log = NULL, *err = log_path();
        long n_cpus = sysconf(_SC_NPROCESSORS_ONLN);
        size_t first_noisy;

        if (n_cpus < 2)
                cr_skip_test("a partition needs 2 CPUs, this machine has %ld", n_cpus);
        cr_assert_gt(asprintf(&extra,
                              "[weights]\nprotected_cgroups = %s\npressure_target = 1\n"
                              "pressure_hold = 0\nweight_step = 100\nweight_max = 200\n"
                              "[escalation]\nescalate_hold = 400ms\nescalate_steps = partition\n"
                              "partition_max_cpus = 1\n",
                              prot),
                     0);
        conf = live_conf(extra);
        for (int i = 0; i < 2; i++)
                start_busy(prot);
        first_noisy = n_children;
        for (int i = 0; i < 4; i++)
                start_busy(noisy);
        start_daemon(conf, false);
        cr_assert(wait_cpus_of(first_noisy, (unsigned) n_cpus - 1, 20000),
                  "the neighbour's tasks were not kept off a CPU: %s", log = read_all(err));
        cr_expect(wait_log("off CPUs", 5000), "no partition in the log");
        for (size_t i = 0; i < first_noisy; i++)
                cr_expect_eq(cpus_of(children[i]), (unsigned) n_cpus,
                             "the protected group's mask changed");
        cr_expect(exited_with(stop_daemon(SIGTERM), 0));
        cr_expect(wait_cpus_of(first_noisy, (unsigned) n_cpus, 0),
                  "SIGTERM did not give the masks back");
}

/*
 * The point of the weights: a protected group squeezed by a noisy neighbour gets its CPU back.
 * 2 busy processes in the protected group, 8 in the noisy one, on these 2 CPUs, measured in
 * windows without the daemon and with it, alternating twice, so that a burst of outside load
 * during one window cannot decide the comparison alone. The sanitized build alternates once: what
 * it adds is the daemon's weight path under ASan, and the share it gets (91% against 50%) is far
 * from the 10 points asked; the plain build's two rounds are the measurement.
 */
#ifdef __SANITIZE_ADDRESS__
#define SQUEEZE_ROUNDS 1
#else
#define SQUEEZE_ROUNDS 2
#endif
static uint64_t prot_loops(void) {
        return counters[0] + counters[1];
}

/* Stall time of the protected group so far (cpu.pressure "some" total), in usec. */
static uint64_t prot_stall_usec(void) {
        PsiStats s;

        cr_assert_eq(cgroup_read_pressure(&layout, prot, "cpu", &s), 0, "no cpu.pressure");
        return s.some.total_usec;
}

/* CPU time of the whole machine, busy, in usec (/proc/stat, USER_HZ ticks). */
static uint64_t machine_busy_usec(void) {
        _cleanup_close_ int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_proc_stat_ ProcStat *st = NULL;
        static const CpuTimes zero = { .present = true };
        CpuTicksDelta d;

        cr_assert_eq(proc_stat_read_at(proc_fd, &st), 0);
        cr_assert_eq(cpu_times_delta(&zero, &st->total, &d), 0);
        return d.busy_ticks * 1000000u / (uint64_t) sysconf(_SC_CLK_TCK);
}

/* CPU time used by the cgroup PATH so far, in usec. */
static uint64_t usage_usec(const char *path) {
        uint64_t u;

        cr_assert_eq(cgroup_read_usage(&layout, path, &u), 0);
        return u;
}

/* What one kind of window (daemon off or on) added up. */
typedef struct Window {
        uint64_t loops; /* the protected group's busy loops */
        uint64_t stall_usec; /* its cpu.pressure "some" */
        uint64_t prot_usec; /* its CPU time */
        uint64_t ours_usec; /* the CPU time of the test's groups, protected and noisy */
} Window;

/* Adds a window of SECONDS to W, and the CPU time used outside the test's groups to OUTSIDE. */
static void measure(unsigned seconds, Window *w, uint64_t *outside_usec) {
        uint64_t l = prot_loops(), st = prot_stall_usec();
        uint64_t busy = machine_busy_usec(), ours = usage_usec(group), p = usage_usec(prot);

        sleep(seconds);
        w->loops += prot_loops() - l;
        w->stall_usec += prot_stall_usec() - st;
        w->prot_usec += usage_usec(prot) - p;
        busy = machine_busy_usec() - busy, ours = usage_usec(group) - ours;
        w->ours_usec += ours;
        *outside_usec += busy > ours ? busy - ours : 0;
}

/* The protected group's share of the test's CPU time in W, in percent. */
static double prot_share_pct(const Window *w) {
        return w->ours_usec ? 100.0 * (double) w->prot_usec / (double) w->ours_usec : 0;
}

Test(live, weight_gives_a_squeezed_protected_group_more_throughput) {
        _cleanup_free_ char *conf = NULL, *extra = NULL;
        Window without = { 0 }, with = { 0 };
        uint64_t outside = 0;
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        PsiStats probe;
        double share_without, share_with;

        if (sysconf(_SC_NPROCESSORS_ONLN) > 4)
                cr_skip_test("the squeeze needs more busy processes than CPUs: this machine has "
                             "%ld CPUs",
                             sysconf(_SC_NPROCESSORS_ONLN));
        if (cgroup_read_pressure(&layout, prot, "cpu", &probe) < 0)
                cr_skip_test("no per-group cpu.pressure on this host (cgroup v1 without a "
                             "cgroup2 mirror)");
        cr_assert_gt(asprintf(&extra,
                              "[weights]\nprotected_cgroups = %s\npressure_target = 5\n"
                              "pressure_hold = 0\nweight_step = 1000\nweight_max = 1000\n",
                              prot),
                     0);
        conf = live_conf(extra);
        for (int i = 0; i < 2; i++)
                start_busy(prot);
        for (int i = 0; i < 8; i++)
                start_busy(noisy);

        for (int round = 0; round < SQUEEZE_ROUNDS; round++) {
                sleep(1);
                measure(3, &without, &outside);
                start_daemon(conf, false);
                cr_assert(wait_shares(prot, raised, 20000), "weight never rose");
                sleep(1);
                measure(3, &with, &outside);
                cr_expect(exited_with(stop_daemon(SIGTERM), 0));
                cr_assert_eq(shares_of(prot), 1024, "SIGTERM did not restore the weight");
        }

        share_without = prot_share_pct(&without), share_with = prot_share_pct(&with);
        cr_log_info("protected group, %d s each: %.1f%% of the test's CPU time without the daemon, "
                    "%.1f%% with it; %" PRIu64 " loops, then %" PRIu64 " (%.2fx); stalled "
                    "%.1f%% -> %.1f%% of the time",
                    3 * SQUEEZE_ROUNDS, share_without, share_with, without.loops, with.loops,
                    (double) with.loops / (double) without.loops,
                    (double) without.stall_usec / (3e4 * SQUEEZE_ROUNDS),
                    (double) with.stall_usec / (3e4 * SQUEEZE_ROUNDS));
        /* The share of CPU time, which the weights set, not the loops: loops per CPU second
         * differ between the windows (1.30-1.45x the loops for 1.85x the CPU time in runs
         * here, 1.27x in a sanitized run, under the 1.2x once in CI), and work outside the
         * test takes from both groups alike. Weight 1000 against 100 entitles the group to
         * 91%; 49-50% without the daemon, 91% with it here. */
        cr_expect_geq(share_with, share_without + 10.0,
                      "the protected group's share of the CPU rose from %.1f%% to only %.1f%% "
                      "(loops %.2fx)",
                      share_without, share_with, (double) with.loops / (double) without.loops);
        /* Work outside the test's groups takes CPU from both windows unevenly, and the
         * group's stall then measures that work as much as the daemon: above a tenth of the
         * machine, say so instead of comparing. */
        if (outside * 10 > (uint64_t) cpus * 6000000u * SQUEEZE_ROUNDS) {
                cr_log_info("not comparing stall: work outside the test used %.1f%% of the "
                            "CPUs during the measurements",
                            (double) outside / ((double) cpus * 60000.0 * SQUEEZE_ROUNDS));
                return;
        }
        cr_expect_lt(with.stall_usec, without.stall_usec, "pressure did not fall");
}

/* CPU hotplug on a recorded machine: the daemon notices the online list change and rebuilds its
 * model instead of planning masks that name a CPU that is gone. */
/*
 * Record and replay: the real daemon records a loadgen scenario (a protected periodic task beside
 * a noisy group: weights change, from the first seconds with the interval's pressure, where avg10
 * can take most of the run to pass 1%), and --replay makes the same plan on every tick; a what-if
 * with another weight_step counts both configurations and shows where they differ.
 */
#define LOADGEN BUILD_DIR "/loadgen"

static char *record_conf(const char *name, unsigned weight_step) {
        _cleanup_free_ char *extra = NULL;

        cr_assert_gt(asprintf(&extra,
                              "[weights]\nprotected_cgroups = cgbalance.slice/loadgen-*/protected\n"
                              "pressure_target = 1\npressure_measure = interval\n"
                              "pressure_hold = 0\nweight_step = %u\n",
                              weight_step),
                     0);
        return live_conf_as(name, extra);
}

Test(live, a_recording_of_a_scenario_replays_to_the_same_plans) {
        _cleanup_free_ char *conf = NULL, *other = NULL, *rec = NULL, *out = NULL, *err = NULL;
        _cleanup_free_ char *scenario = NULL;
        Run r;
        unsigned long same = 0, of = 0;
        const char *p;
        pid_t lg;
        int status;

        /* The daemon manages the scenario's groups, not this suite's, which go now. */
        (void) cgroup_remove(&layout, prot);
        (void) cgroup_remove(&layout, noisy);
        (void) cgroup_remove(&layout, group);
        snprintf(group, sizeof group, "cgbalance.slice/loadgen-*");
        conf = record_conf("record.conf", 300);
        other = record_conf("other.conf", 100);
        group[0] = '\0'; /* nothing of ours to remove at teardown */
        cr_assert_gt(asprintf(&rec, "%s/rec", workdir), 0);
        cr_assert_gt(asprintf(&out, "%s/daemon.out", workdir), 0);
        err = log_path();
        daemon_pid = spawn((const char *const[]){ DAEMON, "--config", conf, "--record", rec, NULL },
                           out, err);
        cr_assert(wait_log("Recording every tick to", 5000), "no recording started");
        cr_assert_gt(asprintf(&scenario, "%s/conf/scenarios/pressure.conf", SOURCE_DIR), 0);
        lg = spawn((const char *const[]){ LOADGEN, "run", scenario, "--duration", "6", NULL },
                   "/dev/null", "/dev/null");
        cr_assert_eq(waitpid(lg, &status, 0), lg);
        cr_expect(exited_with(status, 0), "loadgen run failed");
        cr_expect(exited_with(stop_daemon(SIGTERM), 0));

        r = run((const char *const[]){ DAEMON, "--replay", rec, NULL });
        cr_expect(exited_with(r.status, 0), "replay: %s%s", r.out, r.err);
        p = strstr(r.out, "the same plan on ");
        cr_assert(p, "%s", r.out);
        cr_assert_eq(sscanf(p, "the same plan on %lu of %lu", &same, &of), 2);
        cr_expect_geq(of, 20, "%lu ticks recorded in 6 s at 200 ms", of);
        cr_expect_eq(same, of, "%s", r.out);
        run_done(&r);

        r = run((const char *const[]){ DAEMON, "--replay", rec, "--json", NULL });
        cr_expect(exited_with(r.status, 0));
        p = strstr(r.out, "\"recorded_configuration\"");
        cr_assert(p, "%s", r.out);
        cr_expect(!strstr(p, "\"weight_changes\": 0,"), "no weight change recorded: %s", r.out);
        run_done(&r);

        r = run((const char *const[]){ DAEMON, "--replay", rec, "--config", other, "--show", "2",
                                       NULL });
        cr_expect(exited_with(r.status, 0), "%s%s", r.out, r.err);
        cr_expect(strstr(r.out, "minute |"), "no per-minute table: %s", r.out);
        cr_expect(strstr(r.out, "ticks that differ:"),
                  "weight_step 100 against 300 changed "
                  "nothing: %s",
                  r.out);
        cr_expect(strstr(r.out, "weight cgbalance.slice/loadgen-"), "%s", r.out);
        run_done(&r);

        /* loadgen sweep over the recording: the recorded value plans as recorded. */
        r = run((const char *const[]){ LOADGEN, "sweep", "weights.weight_step=100,300", "--",
                                       "replay", rec, NULL });
        cr_expect(exited_with(r.status, 0), "%s%s", r.out, r.err);
        p = strstr(r.out, "\n300 ");
        cr_assert(p, "%s", r.out);
        cr_expect(strstr(p, " 0 of "), "the recorded value differs from itself: %s", r.out);
        p = strstr(r.out, "\n100 ");
        cr_assert(p, "%s", r.out);
        {
                _cleanup_free_ char *line = strndup(p + 1, strcspn(p + 1, "\n"));

                cr_expect(!strstr(line, " 0 of "), "weight_step 100 planned as 300 did: %s", r.out);
        }
        run_done(&r);
}

Test(cli, replay_refuses_what_is_not_a_recording_naming_it) {
        _cleanup_free_ char *dir = make_tmpdir(), *path = NULL;
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        Run r;

        write_file_at(fd, "junk", "[daemon]\ninterval = 1s\n");
        cr_assert_gt(asprintf(&path, "%s/junk", dir), 0);
        r = run((const char *const[]){ DAEMON, "--replay", path, NULL });
        cr_expect(exited_with(r.status, 1));
        cr_expect(strstr(r.err, "junk: not a cgbalanced recording"), "%s", r.err);
        run_done(&r);
        r = run((const char *const[]){ DAEMON, "--show", "3", NULL });
        cr_expect(exited_with(r.status, 1));
        cr_expect(strstr(r.err, "--show, --set and --json go with --replay"), "%s", r.err);
        run_done(&r);
        rm_rf(dir);
}

Test(root, hotplug_rebuilds_the_topology) {
        _cleanup_free_ char *dir = make_tmpdir(), *log = NULL, *out = NULL, *text = NULL;
        _cleanup_close_ int fd = -EBADF;
        int status;
        pid_t pid;

        copy_fixture("root/imbalanced-2node", dir);
        cr_assert_gt(asprintf(&log, "%s/log", dir), 0);
        cr_assert_gt(asprintf(&out, "%s/out", dir), 0);
        pid = spawn((const char *const[]){ DAEMON, "--root", dir, NULL }, out, log);
        usleep(1500 * 1000); /* a tick or so */

        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(fd, 0);
        write_file_at(fd, "sys/devices/system/cpu/online", "0-2\n");
        write_file_at(fd, "sys/devices/system/cpu/cpu3/online", "0\n");
        for (int waited = 0; waited < 5000; waited += 100) {
                free(text);
                text = read_all(log);
                if (strstr(text, "Online CPUs changed (0-3 -> 0-2)"))
                        break;
                usleep(100 * 1000);
        }
        cr_expect_not_null(strstr(text, "Online CPUs changed (0-3 -> 0-2), reloading the topology"),
                           "%s", text);
        cr_expect_eq(kill(pid, 0), 0, "the daemon died on hotplug");
        cr_assert_eq(kill(pid, SIGTERM), 0);
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_expect(exited_with(status, 0), "%s", text);
        rm_rf(dir);
}

/* ---- the sd_notify protocol, against a datagram socket standing in for systemd */

static int notify_fd = -EBADF;

static void notify_setup(void) {
        live_setup();
}

static void notify_teardown(void) {
        if (notify_fd >= 0)
                close(notify_fd);
        notify_fd = -EBADF;
        live_teardown();
}

static char *notify_socket(void) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct timeval tv = { .tv_sec = 0, .tv_usec = 200 * 1000 };
        char *path = NULL;

        cr_assert_gt(asprintf(&path, "%s/notify", workdir), 0);
        cr_assert_lt(strlen(path), sizeof sa.sun_path);
        strcpy(sa.sun_path, path);
        notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        cr_assert_geq(notify_fd, 0);
        cr_assert_eq(bind(notify_fd, (struct sockaddr *) &sa, sizeof sa), 0);
        cr_assert_eq(setsockopt(notify_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
        return path;
}

/* Reads datagrams until one contains what, for up to timeout_ms; returns a copy of it. */
static char *wait_notify(const char *what, int timeout_ms) {
        for (int waited = 0; waited < timeout_ms; waited += 200) {
                char buf[4096];
                ssize_t n = recv(notify_fd, buf, sizeof buf - 1, 0);

                if (n <= 0)
                        continue;
                buf[n] = '\0';
                if (strstr(buf, what))
                        return strdup(buf);
                waited -= 200; /* a message came: that was not a timeout */
        }
        return NULL;
}

static void start_daemon_notify(const char *conf, const char *sock, const char *watchdog_usec) {
        _cleanup_free_ char *err = log_path(), *out = NULL;
        pid_t pid;

        cr_assert_gt(asprintf(&out, "%s/daemon.out", workdir), 0);
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                int o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                int e = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

                if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
                        _exit(126);
                setenv("NOTIFY_SOCKET", sock, 1);
                if (watchdog_usec)
                        setenv("WATCHDOG_USEC", watchdog_usec, 1);
                execl(DAEMON, DAEMON, "--config", conf, NULL);
                _exit(127);
        }
        daemon_pid = pid;
}

TestSuite(notify, .init = notify_setup, .fini = notify_teardown, .timeout = 60);

Test(notify, ready_status_reloading_and_stopping) {
        _cleanup_free_ char *conf = live_conf(""), *sock = notify_socket();
        _cleanup_free_ char *ready = NULL, *status = NULL, *reloading = NULL, *again = NULL,
                            *stopping = NULL;

        start_daemon_notify(conf, sock, NULL);
        ready = wait_notify("READY=1", 5000);
        cr_expect_not_null(ready, "no READY=1");
        status = wait_notify("STATUS=", 3000);
        cr_expect_not_null(status, "no STATUS=");
        if (status)
                cr_expect_not_null(strstr(status, "managed tasks"), "%s", status);

        cr_assert_eq(kill(daemon_pid, SIGHUP), 0);
        reloading = wait_notify("RELOADING=1", 3000);
        cr_expect_not_null(reloading, "no RELOADING=1 on SIGHUP");
        if (reloading)
                cr_expect_not_null(strstr(reloading, "MONOTONIC_USEC="), "%s", reloading);
        again = wait_notify("READY=1", 3000);
        cr_expect_not_null(again, "no READY=1 after the reload");

        cr_assert_eq(kill(daemon_pid, SIGTERM), 0);
        stopping = wait_notify("STOPPING=1", 3000);
        cr_expect_not_null(stopping, "no STOPPING=1 on SIGTERM");
}

Test(notify, watchdog_pings_come_from_the_loop) {
        _cleanup_free_ char *conf = live_conf(""), *sock = notify_socket();
        _cleanup_free_ char *first = NULL, *second = NULL;

        /* sd-event pings at half the interval: two pings within a second at 400 ms. */
        start_daemon_notify(conf, sock, "400000");
        first = wait_notify("WATCHDOG=1", 3000);
        cr_expect_not_null(first, "no WATCHDOG=1 with WATCHDOG_USEC set");
        second = wait_notify("WATCHDOG=1", 1000);
        cr_expect_not_null(second, "only one WATCHDOG=1");
}

Test(notify, no_watchdog_pings_without_watchdog_usec) {
        _cleanup_free_ char *conf = live_conf(""), *sock = notify_socket();
        _cleanup_free_ char *ready = NULL, *ping = NULL;

        start_daemon_notify(conf, sock, NULL);
        ready = wait_notify("READY=1", 5000);
        cr_assert_not_null(ready);
        ping = wait_notify("WATCHDOG=1", 1500);
        cr_expect_null(ping, "WATCHDOG=1 without WATCHDOG_USEC: %s", ping);
}

/*
 * The metrics textfile ([metrics] textfile): written whole (mode 0644 under any umask, never a
 * half-written *.prom: the temporary name ends in .tmp), kept current every textfile_every ticks,
 * removed when the daemon stops; a place it cannot write is counted and said once.
 */
static char *textfile_conf(const char *path, const char *extra) {
        _cleanup_free_ char *text = NULL;

        cr_assert_gt(asprintf(&text,
                              PRESSURE_CONF "[metrics]\ntextfile = %s\ntextfile_every = 1\n%s",
                              prot, path, extra),
                     0);
        return live_conf(text);
}

/* The value of the sample line that starts with name (labels included) in text; -1 if none. */
static double sample_value(const char *text, const char *name) {
        _cleanup_free_ char *needle = NULL;
        const char *p;

        cr_assert_gt(asprintf(&needle, "\n%s ", name), 0);
        p = strstr(text, needle);
        return p ? strtod(p + strlen(needle), NULL) : -1;
}

Test(live, metrics_textfile_is_written_whole_kept_current_and_removed_at_stop) {
        _cleanup_free_ char *dir = NULL, *path = NULL, *tmp = NULL, *conf = NULL, *first = NULL,
                            *later = NULL;
        struct stat st;
        mode_t old = umask(0077); /* as the unit's UMask= */

        cr_assert_gt(asprintf(&dir, "%s/textfile", workdir), 0);
        cr_assert_eq(mkdir(dir, 0755), 0);
        cr_assert_gt(asprintf(&path, "%s/cgbalance.prom", dir), 0);
        cr_assert_gt(asprintf(&tmp, "%s.tmp", path), 0);
        conf = textfile_conf(path, "");
        make_pressure();
        start_daemon(conf, false);
        umask(old);
        cr_assert(wait_file(path, "cgbalance_ticks_total", 5000), "no textfile written");
        cr_assert_eq(stat(path, &st), 0);
        cr_expect_eq(st.st_mode & 07777, 0644, "mode %o", st.st_mode & 07777);
        first = read_all(path);
        cr_assert(wait_shares(prot, raised, 10000));
        usleep(600 * 1000); /* three more ticks */
        later = read_all(path);
        cr_expect_gt(sample_value(later, "cgbalance_ticks_total"),
                     sample_value(first, "cgbalance_ticks_total"));
        cr_expect_gt(sample_value(later, "cgbalance_weight_changes_total"), 0, "%s", later);
        cr_expect_neq(access(tmp, F_OK), 0, "the temporary file was left");
        cr_expect(exited_with(stop_daemon(SIGTERM), 0));
        cr_expect_neq(access(path, F_OK), 0, "the textfile outlived the daemon");
}

Test(live, metrics_textfile_that_cannot_be_written_is_counted_and_said_once) {
        _cleanup_free_ char *path = NULL, *conf = NULL, *log = NULL;
        size_t said = 0;

        /* a directory that does not exist: every write fails */
        cr_assert_gt(asprintf(&path, "%s/nowhere/cgbalance.prom", workdir), 0);
        conf = textfile_conf(path, "");
        start_daemon(conf, false);
        cr_assert(wait_log("Failed to write the metrics to", 5000), "no error said");
        usleep(1000 * 1000); /* five more failing ticks */
        cr_expect(exited_with(stop_daemon(SIGTERM), 0));
        log = daemon_log_text();
        said = count_of(log, "Failed to write the metrics to");
        cr_expect_eq(said, 1, "said %zu times:\n%s", said, log);
        cr_expect(strstr(log, "No such file or directory"), "%s", log);
}

Test(cli, metrics_textfile_must_be_an_absolute_path_ending_in_prom) {
        _cleanup_free_ char *dir = make_tmpdir(), *a = NULL, *b = NULL;
        Run r;

        a = write_conf(dir, "a.conf", "[metrics]\ntextfile = metrics.prom\n");
        b = write_conf(dir, "b.conf", "[metrics]\ntextfile = /var/lib/x/cgbalance.txt\n");
        r = run((const char *const[]){ DAEMON, "--config", a, "--check-config", NULL });
        cr_expect(exited_with(r.status, 1));
        cr_expect(strstr(r.err, "a.conf:2: textfile: \"metrics.prom\" is not an absolute path "
                                "ending in .prom"),
                  "%s", r.err);
        run_done(&r);
        r = run((const char *const[]){ DAEMON, "--config", b, "--check-config", NULL });
        cr_expect(exited_with(r.status, 1));
        cr_expect(strstr(r.err, "\"/var/lib/x/cgbalance.txt\" is not"), "%s", r.err);
        run_done(&r);
        rm_rf(dir);
}

/*
 * The fleet's real parts, on 127.0.0.1: Debian's prometheus-node-exporter reads the daemon's
 * textfile, Debian's prometheus scrapes it every second with the shipped alerting rules loaded,
 * and a query over Prometheus's HTTP API sees cgbalance_weight_changes_total rise while loadgen's
 * pressure scenario runs. Every panel query of the shipped Grafana dashboard then returns data,
 * and every shipped rule evaluates without error. The rules' own unit tests (promtool test rules)
 * are the last test here.
 */
#define PROMETHEUS "/usr/bin/prometheus"
#define NODE_EXPORTER "/usr/bin/prometheus-node-exporter"
#define PROMTOOL "/usr/bin/promtool"
#define RULES SOURCE_DIR "/conf/prometheus/cgbalance-rules.yml"
#define DASHBOARD SOURCE_DIR "/conf/grafana/cgbalance-dashboard.json"

static pid_t fleet_pids[2];
static int prom_port;

static void fleet_teardown(void) {
        for (size_t i = 0; i < ELEMENTSOF(fleet_pids); i++)
                if (fleet_pids[i] > 0) {
                        (void) kill(fleet_pids[i], SIGTERM);
                        (void) waitpid(fleet_pids[i], NULL, 0);
                        fleet_pids[i] = 0;
                }
        live_teardown();
}

/* A TCP port on 127.0.0.1 that was free a moment ago. */
static int free_port(void) {
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof a;
        _cleanup_close_ int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        cr_assert_geq(fd, 0);
        cr_assert_eq(bind(fd, (struct sockaddr *) &a, sizeof a), 0);
        cr_assert_eq(getsockname(fd, (struct sockaddr *) &a, &len), 0);
        return ntohs(a.sin_port);
}

/* GET path from 127.0.0.1:port over HTTP/1.0: the status code (-1: no connection) and the body in
 * *ret_body (caller frees; NULL without a connection). */
static int http_get(int port, const char *path, char **ret_body) {
        struct sockaddr_in a = { .sin_family = AF_INET,
                                 .sin_port = htons((uint16_t) port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        _cleanup_close_ int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        _cleanup_free_ char *req = NULL, *resp = NULL;
        size_t size = 0;
        int status = -1;
        const char *body;

        *ret_body = NULL;
        cr_assert_geq(fd, 0);
        if (connect(fd, (struct sockaddr *) &a, sizeof a) < 0)
                return -1;
        cr_assert_gt(asprintf(&req, "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path), 0);
        cr_assert_eq(write_full(fd, req, strlen(req)), 0);
        if (read_full_fd(fd, 64 << 20, &resp, &size) < 0)
                return -1;
        if (sscanf(resp, "HTTP/%*s %d", &status) != 1)
                return -1;
        body = strstr(resp, "\r\n\r\n");
        *ret_body = strdup(body ? body + 4 : "");
        return status;
}

/* s %-escaped for a URL's query. */
static char *url_escape(const char *s) {
        char *out = malloc(strlen(s) * 3 + 1), *p = out;

        cr_assert_not_null(out);
        for (; *s; s++)
                if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                    (*s >= '0' && *s <= '9') || strchr("-_.~", *s))
                        *p++ = *s;
                else
                        p += sprintf(p, "%%%02X", (unsigned char) *s);
        *p = '\0';
        return out;
}

/* An instant query over Prometheus's HTTP API: the JSON answer's data.result (a new reference,
 * the caller puts it), or NULL when the query failed (why, in *ret_error if given). */
static json_object *prom_query(const char *expr, char **ret_error) {
        _cleanup_free_ char *q = url_escape(expr), *path = NULL, *body = NULL;
        json_object *root, *status, *data, *result = NULL;
        int code;

        cr_assert_gt(asprintf(&path, "/api/v1/query?query=%s", q), 0);
        code = http_get(prom_port, path, &body);
        root = body ? json_tokener_parse(body) : NULL;
        if (code == 200 && root && json_object_object_get_ex(root, "status", &status) &&
            streq(json_object_get_string(status), "success") &&
            json_object_object_get_ex(root, "data", &data) &&
            json_object_object_get_ex(data, "result", &result))
                result = json_object_get(result);
        else {
                result = NULL;
                if (ret_error)
                        cr_assert_gt(asprintf(ret_error, "HTTP %d: %s", code, body ? body : ""), 0);
        }
        json_object_put(root);
        return result;
}

/* The value of the first sample a query returns; -1 if it returns none. */
static double prom_value(const char *expr) {
        json_object *result = prom_query(expr, NULL), *value;
        double v = -1;

        if (result && json_object_array_length(result) > 0 &&
            json_object_object_get_ex(json_object_array_get_idx(result, 0), "value", &value))
                v = strtod(json_object_get_string(json_object_array_get_idx(value, 1)), NULL);
        json_object_put(result);
        return v;
}

/* Waits up to timeout_ms for the query's first value to pass above; returns the value seen. */
static double wait_prom_above(const char *expr, double above, int timeout_ms) {
        double v = -1;

        for (int waited = 0; waited <= timeout_ms; waited += 250) {
                v = prom_value(expr);
                if (v > above)
                        break;
                usleep(250 * 1000);
        }
        return v;
}

/* s with every what replaced by with: a new string. */
static char *replace_all(const char *s, const char *what, const char *with) {
        char *out = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&out, &size);
        const char *at;

        cr_assert_not_null(f);
        while ((at = strstr(s, what))) {
                fwrite(s, 1, (size_t) (at - s), f);
                fputs(with, f);
                s = at + strlen(what);
        }
        fputs(s, f);
        cr_assert_eq(fclose(f), 0);
        return out;
}

static void start_fleet(const char *textfile_dir) {
        _cleanup_free_ char *ne_addr = NULL, *prom_addr = NULL, *ne_dir = NULL, *yml = NULL;
        _cleanup_free_ char *tsdb = NULL, *config = NULL, *cfg_opt = NULL;
        _cleanup_free_ char *out = NULL, *err = NULL, *body = NULL;
        int ne_port = free_port(), code = -1;

        prom_port = free_port();
        cr_assert_gt(asprintf(&ne_addr, "--web.listen-address=127.0.0.1:%d", ne_port), 0);
        cr_assert_gt(asprintf(&ne_dir, "--collector.textfile.directory=%s", textfile_dir), 0);
        cr_assert_gt(asprintf(&out, "%s/node-exporter.log", workdir), 0);
        fleet_pids[0] =
                spawn((const char *const[]){ NODE_EXPORTER, ne_addr, "--collector.disable-defaults",
                                             "--collector.textfile", ne_dir, NULL },
                      "/dev/null", out);
        cr_assert_gt(asprintf(&yml,
                              "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                              "rule_files:\n  - %s\n"
                              "scrape_configs:\n  - job_name: node\n    static_configs:\n"
                              "      - targets: ['127.0.0.1:%d']\n",
                              RULES, ne_port),
                     0);
        config = write_conf(workdir, "prometheus.yml", yml);
        cr_assert_gt(asprintf(&tsdb, "--storage.tsdb.path=%s/tsdb", workdir), 0);
        cr_assert_gt(asprintf(&cfg_opt, "--config.file=%s", config), 0);
        cr_assert_gt(asprintf(&prom_addr, "--web.listen-address=127.0.0.1:%d", prom_port), 0);
        cr_assert_gt(asprintf(&err, "%s/prometheus.log", workdir), 0);
        fleet_pids[1] = spawn((const char *const[]){ PROMETHEUS, cfg_opt, tsdb, prom_addr,
                                                     "--log.level=warn", NULL },
                              "/dev/null", err);
        for (int waited = 0; waited < 20000 && code != 200; waited += 200) {
                free(body);
                code = http_get(prom_port, "/-/ready", &body);
                if (code != 200)
                        usleep(200 * 1000);
        }
        if (code != 200) {
                _cleanup_free_ char *log = read_all(err);

                cr_assert_fail("prometheus not ready in 20 s (HTTP %d); its log:\n%s", code, log);
        }
}

TestSuite(fleet, .init = live_setup, .fini = fleet_teardown, .timeout = 90);

Test(fleet, prometheus_sees_weight_changes_rise_through_node_exporter) {
        _cleanup_free_ char *dir = NULL, *textfile = NULL, *extra = NULL, *conf = NULL;
        _cleanup_free_ char *scenario = NULL, *dash = NULL;
        json_object *d = NULL, *panels;
        double before, after, mtime;
        size_t n_exprs = 0;
        pid_t lg;
        int status;

        if (access(PROMETHEUS, X_OK) < 0 || access(NODE_EXPORTER, X_OK) < 0)
                cr_skip_test("no " PROMETHEUS " or " NODE_EXPORTER
                             " (Debian's prometheus and prometheus-node-exporter; make deps "
                             "installs them)");
        cr_assert_gt(asprintf(&dir, "%s/textfile", workdir), 0);
        cr_assert_eq(mkdir(dir, 0755), 0);
        start_fleet(dir);

        /* The daemon manages the scenario's groups, not this suite's, which go now. */
        (void) cgroup_remove(&layout, prot);
        (void) cgroup_remove(&layout, noisy);
        (void) cgroup_remove(&layout, group);
        snprintf(group, sizeof group, "cgbalance.slice/loadgen-*");
        cr_assert_gt(asprintf(&textfile, "%s/cgbalance.prom", dir), 0);
        cr_assert_gt(asprintf(&extra,
                              "[weights]\nprotected_cgroups = cgbalance.slice/loadgen-*/protected\n"
                              "pressure_target = 1\npressure_measure = interval\n"
                              "pressure_hold = 0\nweight_step = 300\n"
                              "[metrics]\ntextfile = %s\ntextfile_every = 1\n",
                              textfile),
                     0);
        conf = live_conf(extra);
        group[0] = '\0'; /* nothing of ours to remove at teardown */
        start_daemon(conf, false);

        before = wait_prom_above("cgbalance_weight_changes_total", -1, 15000);
        cr_assert_geq(before, 0, "Prometheus never saw cgbalance_weight_changes_total");
        cr_assert_gt(asprintf(&scenario, "%s/conf/scenarios/pressure.conf", SOURCE_DIR), 0);
        lg = spawn((const char *const[]){ LOADGEN, "run", scenario, "--duration", "8", NULL },
                   "/dev/null", "/dev/null");
        after = wait_prom_above("cgbalance_weight_changes_total", before, 15000);
        cr_expect_gt(after, before, "cgbalance_weight_changes_total stayed at %.0f", before);
        cr_log_info("cgbalance_weight_changes_total in Prometheus: %.0f before loadgen, %.0f while "
                    "it ran",
                    before, after);

        /* the stale-textfile rule's input: node_exporter's mtime of this very file */
        mtime = prom_value("node_textfile_mtime_seconds{file=~\"(.*/)?cgbalance\\\\.prom\"}");
        cr_expect_gt(mtime, 0, "no node_textfile_mtime_seconds for the textfile");

        /* every panel of the dashboard, as Grafana would ask (all instances, a 10 s rate) */
        dash = read_all(DASHBOARD);
        d = json_tokener_parse(dash);
        cr_assert_not_null(d, "%s is not JSON", DASHBOARD);
        cr_assert(json_object_object_get_ex(d, "panels", &panels));
        for (size_t i = 0; i < json_object_array_length(panels); i++) {
                json_object *p = json_object_array_get_idx(panels, i), *targets, *title;

                cr_assert(json_object_object_get_ex(p, "targets", &targets));
                cr_assert(json_object_object_get_ex(p, "title", &title));
                for (size_t k = 0; k < json_object_array_length(targets); k++) {
                        json_object *t = json_object_array_get_idx(targets, k), *e, *result;
                        _cleanup_free_ char *all = NULL, *expr = NULL, *why = NULL;

                        cr_assert(json_object_object_get_ex(t, "expr", &e));
                        all = replace_all(json_object_get_string(e), "$instance", ".*");
                        expr = replace_all(all, "$__rate_interval", "10s");
                        result = prom_query(expr, &why);
                        cr_expect_not_null(result, "panel \"%s\": %s: %s",
                                           json_object_get_string(title), expr, why);
                        cr_expect(result && json_object_array_length(result) > 0,
                                  "panel \"%s\": %s returned no data",
                                  json_object_get_string(title), expr);
                        json_object_put(result);
                        n_exprs++;
                }
        }
        cr_expect_geq(n_exprs, 8, "%zu panel queries", n_exprs);

        /* the shipped rules are loaded and evaluate without error */
        {
                _cleanup_free_ char *body = NULL;
                int code = http_get(prom_port, "/api/v1/rules", &body);
                size_t ok = 0;

                cr_assert_eq(code, 200, "%s", body);
                for (const char *p = body; (p = strstr(p, "\"health\":\"ok\"")); p++)
                        ok++;
                cr_expect_eq(ok, 4, "%zu of 4 rules evaluated ok: %s", ok, body);
        }
        json_object_put(d);

        cr_assert_eq(waitpid(lg, &status, 0), lg);
        cr_expect(exited_with(status, 0), "loadgen run failed");
        cr_expect(exited_with(stop_daemon(SIGTERM), 0));
        cr_expect_neq(access(textfile, F_OK), 0, "the textfile outlived the daemon");
}

Test(fleet, the_shipped_alerting_rules_pass_promtool_check_and_their_unit_tests) {
        Run r;

        if (access(PROMTOOL, X_OK) < 0)
                cr_skip_test("no " PROMTOOL " (Debian's prometheus; make deps installs it)");
        r = run((const char *const[]){ PROMTOOL, "check", "rules", RULES, NULL });
        cr_expect(exited_with(r.status, 0), "%s%s", r.out, r.err);
        cr_expect(strstr(r.out, "SUCCESS: 4 rules found"), "%s", r.out);
        run_done(&r);
        r = run((const char *const[]){ PROMTOOL, "test", "rules",
                                       SOURCE_DIR "/conf/prometheus/cgbalance-rules.test.yml",
                                       NULL });
        cr_expect(exited_with(r.status, 0), "%s%s", r.out, r.err);
        cr_expect(strstr(r.out, "SUCCESS"), "%s", r.out);
        run_done(&r);
}

/*
 * Reliability (issue 21): each test failed before its fix. The live runs count the daemon's
 * ticks in its metrics textfile, written every tick.
 */

/* The daemon's ticks as its textfile says them; -1 before the first. */
static double textfile_ticks(const char *path) {
        _cleanup_free_ char *text = read_all(path);

        return sample_value(text, "cgbalance_ticks_total");
}

static char *textfile_path(void) {
        char *p = NULL;

        cr_assert_gt(asprintf(&p, "%s/cgbalance.prom", workdir), 0);
        return p;
}

static bool wait_ticks(const char *path, double above, int timeout_ms) {
        for (int waited = 0; waited <= timeout_ms; waited += 50) {
                if (textfile_ticks(path) > above)
                        return true;
                usleep(50 * 1000);
        }
        return false;
}

/* 1: a successful reload re-armed the tick an interval from the reload, so reloads faster than
 * the interval stopped the ticks (12 reloads 0.9 s apart at 1 s: 0 ticks in 11.5 s). */
Test(live, reloads_faster_than_the_interval_do_not_stop_the_ticks) {
        _cleanup_free_ char *path = textfile_path(), *conf = NULL, *extra = NULL;
        double before, after;

        cr_assert_gt(asprintf(&extra, "[metrics]\ntextfile = %s\ntextfile_every = 1\n", path), 0);
        conf = live_conf_as("live.conf", extra);
        /* 500 ms ticks, a reload every 300 ms */
        {
                _cleanup_free_ char *text = read_all(conf);
                _cleanup_free_ char *slow =
                        replace_all(text, "interval = 200ms", "interval = 500ms");
                _cleanup_close_ int fd = open(workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

                write_file_at(fd, "live.conf", slow);
        }
        start_daemon(conf, false);
        cr_assert(wait_ticks(path, 0, 5000), "no tick");
        before = textfile_ticks(path);
        for (int i = 0; i < 10; i++) {
                cr_assert_eq(kill(daemon_pid, SIGHUP), 0);
                usleep(300 * 1000);
        }
        after = textfile_ticks(path);
        cr_expect_geq(after - before, 4, "%.0f ticks in 3 s of reloads at a 500 ms interval",
                      after - before);
        cr_expect(exited_with(stop_daemon(SIGTERM), 0));
}

/* 2: a FIFO where the record should be hung the daemon at start, before READY, saying nothing. */
Test(live, a_fifo_where_the_record_should_be_neither_hangs_nor_is_read) {
        _cleanup_free_ char *path = textfile_path(), *conf = NULL, *extra = NULL, *state = NULL,
                            *fifo = NULL;

        cr_assert_gt(asprintf(&state, "%s/state", workdir), 0);
        cr_assert_eq(mkdir(state, 0700), 0);
        cr_assert_gt(asprintf(&fifo, "%s/changes", state), 0);
        cr_assert_eq(mkfifo(fifo, 0600), 0);
        cr_assert_gt(asprintf(&extra, "[metrics]\ntextfile = %s\ntextfile_every = 1\n", path), 0);
        conf = live_conf_as("live.conf", extra);
        start_daemon(conf, false);
        cr_expect(wait_log("changes is not a regular file (a FIFO, socket or device), nothing "
                           "restored",
                           5000),
                  "nothing said of the FIFO");
        cr_expect(wait_ticks(path, 1, 5000), "the daemon does not tick");
        cr_expect(exited_with(stop_daemon(SIGTERM), 0));
}

/* 4: a signal before the event loop was armed killed the daemon (SIGHUP 5-20 ms after exec: exit
 * 129, nothing logged; 16 s with a large record). Here the daemon starts on a record of 200,000
 * tasks of a crashed run (none alive), and the signal comes while it reconciles them: a SIGHUP
 * is a reload once the loop runs, a SIGTERM a clean stop. (A signal in the first milliseconds,
 * before main() runs, kills any program that has not set its signals yet; systemd sends none
 * then.) */
Test(live, a_signal_while_a_crashed_run_is_reconciled_waits_for_the_loop) {
        _cleanup_free_ char *conf = live_conf(""), *state = NULL, *record = NULL;

        cr_assert_gt(asprintf(&state, "%s/state", workdir), 0);
        cr_assert_gt(asprintf(&record, "%s/changes", state), 0);
        (void) mkdir(state, 0700);
        for (int round = 0; round < 2; round++) {
                int sig = round == 0 ? SIGHUP : SIGTERM, status;
                _cleanup_fclose_ FILE *f = fopen(record, "we");

                cr_assert_not_null(f);
                fputs("cgbalance-changes 1\n", f);
                for (int pid = 1; pid <= 200000; pid++) /* tasks of no one: pid reused or gone */
                        fprintf(f, "task %d 1 0 0 1\n", pid + 4000000);
                cr_assert_eq(fclose(TAKE_PTR(f)), 0);
                {
                        _cleanup_free_ char *log = log_path();

                        (void) unlink(log); /* not the last round's lines */
                }
                start_daemon(conf, false);
                cr_assert(wait_log("Found the record of a previous run with 200000 tasks", 20000),
                          "round %d: no reconcile", round);
                cr_assert_eq(kill(daemon_pid, sig), 0);
                if (sig == SIGHUP) {
                        cr_expect(wait_log("Reloaded", 20000), "round %d: no reload", round);
                        cr_expect_eq(waitpid(daemon_pid, &status, WNOHANG), 0,
                                     "the daemon died of a SIGHUP while it reconciled");
                        cr_expect(exited_with(stop_daemon(SIGTERM), 0));
                } else {
                        cr_assert_eq(waitpid(daemon_pid, &status, 0), daemon_pid);
                        daemon_pid = 0;
                        cr_expect(exited_with(status, 0),
                                  "a SIGTERM while it reconciled: status %d", status);
                        cr_expect(wait_log("Restored 0 changed masks and weights", 100),
                                  "the SIGTERM did not stop it cleanly");
                }
        }
}

/* 5: a group that is gone at restore is said at info level. */
Test(live, a_group_gone_before_its_restore_is_said) {
        _cleanup_free_ char *conf = pressure_conf(), *calm = NULL, *want = NULL;

        make_pressure();
        start_daemon(conf, false);
        cr_assert(wait_shares(prot, raised, 20000), "weight never rose");
        stop_daemon(SIGKILL);
        stop_children();
        cr_assert_eq(cgroup_remove(&layout, prot), 0);
        calm = live_conf("");
        start_daemon(calm, false);
        cr_assert_gt(asprintf(&want, "Group %s is gone: its weight needs no restoring", prot), 0);
        cr_expect(wait_log(want, 5000), "nothing said of the group that went");
        cr_expect(exited_with(stop_daemon(SIGTERM), 0));
}

/* 5: a read-only state directory: a stop with nothing changed says no failure; a record that
 * cannot be written is said once, not every tick. */
Test(live, a_read_only_state_directory_is_said_once_and_a_clean_stop_stays_clean) {
        _cleanup_free_ char *state = NULL, *conf = NULL, *log = NULL;
        size_t said = 0;

        cr_assert_gt(asprintf(&state, "%s/state", workdir), 0);
        cr_assert_eq(mkdir(state, 0700), 0);
        cr_assert_eq(mount("cgbtest-ro", state, "tmpfs", MS_RDONLY, "size=64k"), 0, "mount: %s",
                     strerror(errno));
        /* nothing to change: the stop must not fail */
        conf = live_conf("");
        start_daemon(conf, false);
        cr_assert(wait_log("starting", 5000));
        usleep(600 * 1000);
        cr_expect(exited_with(stop_daemon(SIGTERM), 0));
        log = daemon_log_text();
        cr_expect_null(strstr(log, "Failed to restore"), "%s", log);
        free(log);
        free(conf);

        /* a change to record every tick: said once */
        conf = pressure_conf();
        make_pressure();
        start_daemon(conf, false);
        cr_expect(wait_log("Failed to record changes in", 5000));
        usleep(1500 * 1000); /* 7 more ticks that cannot record */
        cr_expect(exited_with(stop_daemon(SIGTERM), 0));
        log = daemon_log_text();
        said = count_of(log, "Failed to record changes in");
        cr_expect_eq(said, 1, "said %zu times:\n%s", said, log);
        cr_expect_eq(umount2(state, MNT_DETACH), 0);
}

/* 7: a config key or value with an escape sequence is never printed raw by --check-config. */
Test(cli, check_config_never_prints_a_control_character_of_the_file) {
        _cleanup_free_ char *dir = make_tmpdir(), *a = NULL, *b = NULL;
        Run r;

        a = write_conf(dir, "a.conf", "[daemon]\nbad\x1b[31mkey = 1\n");
        b = write_conf(dir, "b.conf", "[record]\nfile = rec\x1b[2Jording\n");
        r = run((const char *const[]){ DAEMON, "--config", a, "--check-config", NULL });
        cr_expect(exited_with(r.status, 1));
        cr_expect(strstr(r.err, "a.conf:2: bad?[31mkey: unknown key"), "%s", r.err);
        cr_expect_null(strchr(r.err, '\x1b'), "printed raw: %s", r.err);
        run_done(&r);
        r = run((const char *const[]){ DAEMON, "--config", b, "--check-config", NULL });
        cr_expect(exited_with(r.status, 1), "%s", r.err);
        cr_expect(strstr(r.err, "b.conf:2: file: control character 0x1b in value"), "%s", r.err);
        cr_expect_null(strchr(r.err, '\x1b'), "printed raw: %s", r.err);
        cr_expect_null(strchr(r.out, '\x1b'), "printed raw: %s", r.out);
        run_done(&r);
        rm_rf(dir);
}

/* Makes group path of the cpu hierarchy with mkdir(): cgroup_create() refuses a name with a
 * control character, which the kernel takes. */
static void mkdir_group(const char *path) {
        _cleanup_free_ char *dir = NULL;

        cr_assert_gt(asprintf(&dir, "%s/%s", layout.cpu_path, path), 0);
        cr_assert_eq(mkdir(dir, 0755), 0, "mkdir %s: %s", dir, strerror(errno));
}

/* 6: a managed group the walk passes over (a control character in its name, deeper than
 * CGROUP_WALK_DEPTH_MAX) is said once, at warning level, escaped, with why; not every tick, and
 * not again for the groups below it. */
Test(live, managed_groups_the_walk_passes_over_are_said_once) {
        _cleanup_free_ char *path = textfile_path(), *extra = NULL, *conf = NULL, *tab = NULL,
                            *tab_said = NULL, *deep = NULL, *deep_said = NULL, *log = NULL;
        size_t depth = 2; /* group is cgbalance.slice/itest-PID */

        cr_assert_gt(asprintf(&tab, "%s/tab\there", group), 0);
        mkdir_group(tab);
        cr_assert_gt(asprintf(&extra, "%s/below", tab), 0);
        mkdir_group(extra); /* not walked, not said */
        free(extra);
        deep = strdup(group);
        cr_assert_not_null(deep);
        while (depth < CGROUP_WALK_DEPTH_MAX + 2) { /* down to 34: 33 is said, 34 is not */
                char *d = NULL;

                cr_assert_gt(asprintf(&d, "%s/d", deep), 0);
                free(deep);
                deep = d;
                mkdir_group(deep);
                if (++depth == CGROUP_WALK_DEPTH_MAX + 1)
                        cr_assert_gt(asprintf(&deep_said,
                                              "Group %s is deeper than 32 levels: it and the "
                                              "groups below it are not managed\n",
                                              deep),
                                     0);
        }
        cr_assert_gt(asprintf(&tab_said,
                              "Group %s/tab\\x09here: its name holds a control character the "
                              "record of changes cannot keep: it and the groups below it are "
                              "not managed\n",
                              group),
                     0);
        cr_assert_gt(asprintf(&extra, "[metrics]\ntextfile = %s\ntextfile_every = 1\n", path), 0);
        conf = live_conf(extra);
        start_daemon(conf, false);
        cr_expect(wait_log(deep_said, 5000), "the deep group was not said");
        cr_expect(wait_log(tab_said, 1000), "the group with a tab was not said");
        cr_assert(wait_ticks(path, 6, 5000), "the daemon does not tick");
        cr_expect(exited_with(stop_daemon(SIGTERM), 0));
        log = daemon_log_text();
        cr_expect_eq(count_of(log, deep_said), 1, "%s", log);
        cr_expect_eq(count_of(log, tab_said), 1, "%s", log);
        cr_expect_eq(count_of(log, "is deeper than"), 1, "said of a group below: %s", log);
        cr_expect_eq(count_of(log, "not managed"), 2, "%s", log);
        cr_expect_null(strchr(log, '\t'), "printed raw: %s", log);
}

/*
 * Churn soak (issue 21): about 200 processes a second created and ended in a managed group beside
 * long-lived busy tasks that the daemon moves between two one-CPU nodes (hwloc's synthetic
 * topology) and a protected group whose weight it raises, for SOAK_SECONDS (CGB_SOAK_SECONDS
 * overrides). What the daemon's own metrics say (its textfile, every tick): resident memory
 * after a warm-up grows under 5%, descriptors come back to what they were before the churn, no
 * error but tasks and groups that went between sampling and acting; at SIGTERM every mask and
 * weight is put back.
 */
#define SOAK_SECONDS 60
#define SOAK_WARMUP_SECONDS 10

/* A busy child pinned to CPU 0 (a launch the daemon may correct) in path. */
static pid_t start_busy_pinned(const char *path) {
        cpu_set_t one;
        pid_t pid;

        start_busy(path);
        pid = children[n_children - 1];
        CPU_ZERO(&one);
        CPU_SET(0, &one);
        cr_assert_eq(sched_setaffinity(pid, sizeof one, &one), 0);
        return pid;
}

static volatile sig_atomic_t churn_stop;

static void on_churn_stop(int sig) {
        (void) sig;
        churn_stop = 1;
}

/* Forks about 200 children a second into path, each living 10-90 ms, until SIGTERM; then reaps
 * every child before it exits (a child left to a pid 1 that does not reap stays a zombie, whose
 * thread files the daemon then keeps reading). */
static pid_t start_churn(const char *path) {
        pid_t parent = getpid(), pid = fork();

        cr_assert_geq(pid, 0);
        if (pid == 0) {
                unsigned seed = (unsigned) getpid();

                die_with_parent(parent);
                (void) signal(SIGTERM, on_churn_stop);
                while (!churn_stop) {
                        pid_t c = fork();

                        if (c == 0) {
                                (void) cgroup_attach_pid(&layout, path, getpid());
                                usleep(10000 + (useconds_t) (rand_r(&seed) % 80) * 1000);
                                _exit(0);
                        }
                        while (waitpid(-1, NULL, WNOHANG) > 0)
                                ;
                        usleep(5000);
                }
                while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
                        ;
                _exit(0);
        }
        cr_assert_lt(n_children, MAX_CHILDREN);
        children[n_children++] = pid;
        return pid;
}

static unsigned soak_seconds(void) {
        const char *e = getenv("CGB_SOAK_SECONDS");
        unsigned long v = e ? strtoul(e, NULL, 10) : 0;

        return v >= 15 && v <= 3600 ? (unsigned) v : SOAK_SECONDS;
}

static double metric(const char *path, const char *name) {
        _cleanup_free_ char *text = read_all(path);

        return sample_value(text, name);
}

static bool affinity_is_cpu0_only(pid_t pid) {
        cpu_set_t set;

        return sched_getaffinity(pid, sizeof set, &set) == 0 && CPU_COUNT(&set) == 1 &&
               CPU_ISSET(0, &set);
}

TestSuite(soak, .init = live_setup, .fini = live_teardown, .timeout = 180);

Test(soak, churn_beside_moves_and_weights_leaks_nothing_and_restores_everything) {
        static const char *const errors[] = { "write", "sample", "plan", "record", "textfile" };
        _cleanup_free_ char *path = textfile_path(), *extra = NULL, *conf = NULL,
                            *churn_group = NULL;
        unsigned seconds = soak_seconds();
        double rss0, rss1, fds0, fds1, moves, weights, gone;
        pid_t pinned[2], churn;

        if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
                cr_skip_test("needs two CPUs to make two nodes of");
        cr_assert_gt(asprintf(&churn_group, "%s/churn", noisy), 0);
        cr_assert_eq(cgroup_create(&layout, churn_group), 0);
        /* The churn's tasks need the CPU only for moments: at the base weight, behind the busy
         * tasks and the protected group's raised weight, they queued up (26 alive became 350 in
         * a minute) and the soak measured a growing workload, not the daemon. */
        cr_assert_eq(cgroup_set_cpu_weight(&layout, churn_group, 10000), 0);
        for (size_t i = 0; i < ELEMENTSOF(pinned); i++)
                pinned[i] = start_busy_pinned(noisy);
        make_pressure();
        /* No levers past the weight: a CPU limit or cpu.idle on the churning group starved its
         * new tasks inside their own cgroup.procs write, holding the kernel's cgroup mutex, and
         * every cgroup operation of the machine waited behind them (seen here: 2,000 tasks in D
         * state for minutes). The soak is of moves and weights. */
        cr_assert_gt(asprintf(&extra,
                              "override_foreign_affinity = yes\n"
                              "[balance]\nnode_imbalance_hold = 0\nidle_node_multiplier = 1\n"
                              "busy_node_multiplier = 1\n" PRESSURE_CONF
                              "[escalation]\nescalate = no\n"
                              "[metrics]\ntextfile = %s\ntextfile_every = 1\n",
                              prot, path),
                     0);
        conf = live_conf(extra);
        cr_assert_eq(setenv("HWLOC_SYNTHETIC", "pack:2 numa:1 core:1 pu:1", 1), 0);
        start_daemon(conf, false);
        cr_assert_eq(unsetenv("HWLOC_SYNTHETIC"), 0);
        cr_assert(wait_ticks(path, 5, 10000), "the daemon does not tick");
        fds0 = metric(path, "cgbalance_process_open_fds");

        churn = start_churn(churn_group);
        sleep(SOAK_WARMUP_SECONDS);
        rss0 = metric(path, "cgbalance_process_resident_memory_bytes");
        sleep(seconds - SOAK_WARMUP_SECONDS);
        rss1 = metric(path, "cgbalance_process_resident_memory_bytes");
        (void) kill(churn, SIGTERM);
        (void) waitpid(churn, NULL, 0);
        children[--n_children] = 0;
        /* The churn's last children gone, and their descriptors with them once a tick has seen
         * them go: a tick of the sanitized build, under the churn, lags several seconds. */
        for (int waited = 0; waited < 15000; waited += 250) {
                fds1 = metric(path, "cgbalance_process_open_fds");
                if (fds1 >= 0 && fds1 <= fds0)
                        break;
                usleep(250 * 1000);
        }
        moves = metric(path, "cgbalance_moves_total");
        weights = metric(path, "cgbalance_weight_changes_total");
        gone = metric(path, "cgbalance_errors_total{kind=\"task_gone\"}");
        cr_log_info(
                "soak %u s: RSS %.0f -> %.0f bytes after the %d s warm-up (%+.2f%%), descriptors "
                "%.0f before the churn and %.0f after, %.0f moves, %.0f weight changes, %.0f "
                "tasks gone between sampling and acting",
                seconds, rss0, rss1, SOAK_WARMUP_SECONDS, (rss1 - rss0) * 100 / rss0, fds0, fds1,
                moves, weights, gone);
        cr_expect_gt(rss0, 0);
#ifdef __SANITIZE_ADDRESS__
        /* AddressSanitizer keeps freed memory in quarantine (up to 256 MB) and its shadow grows
         * with it: the sanitized daemon's resident memory says nothing about leaks, which its
         * LeakSanitizer reports at exit. */
        cr_log_info("sanitized build: the RSS bound is the plain build's");
#else
        cr_expect_lt(rss1, rss0 * 1.05, "RSS grew %.0f -> %.0f", rss0, rss1);
#endif
        cr_expect_leq(fds1, fds0, "descriptors %.0f before the churn, %.0f after", fds0, fds1);
        cr_expect_gt(moves, 0, "the daemon moved nothing");
        cr_expect_gt(weights, 0, "the daemon changed no weight");
        for (size_t i = 0; i < ELEMENTSOF(errors); i++) {
                _cleanup_free_ char *name = NULL;

                cr_assert_gt(asprintf(&name, "cgbalance_errors_total{kind=\"%s\"}", errors[i]), 0);
                cr_expect_eq(metric(path, name), 0, "%s", name);
        }

        cr_expect(exited_with(stop_daemon(SIGTERM), 0));
        for (size_t i = 0; i < ELEMENTSOF(pinned); i++)
                cr_expect(affinity_is_cpu0_only(pinned[i]), "pid %d not put back on CPU 0",
                          (int) pinned[i]);
        cr_expect_eq(shares_of(prot), 1024, "the protected group's weight not put back");
        {
                _cleanup_free_ char *log = daemon_log_text();

                cr_expect_null(strstr(log, "Failed"), "%s", log);
        }
        (void) cgroup_remove(&layout, churn_group);
}

/*
 * Faults (issue 21) while the daemon runs: the record's file system full, the record replaced by
 * a directory, a FIFO and a symlink, managed groups removed between sampling and acting. The
 * daemon goes on ticking, says each failure once, changes nothing it cannot record, and puts
 * back what it changed.
 */
TestSuite(faults, .init = live_setup, .fini = live_teardown, .timeout = 90);

/* Fills the file system of dir with dir/filler until ENOSPC. */
static void fill_up(const char *dir) {
        _cleanup_free_ char *p = NULL;
        _cleanup_close_ int fd = -EBADF;
        char block[1024] = { 0 };

        cr_assert_gt(asprintf(&p, "%s/filler", dir), 0);
        fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        cr_assert_geq(fd, 0);
        while (write(fd, block, sizeof block) > 0)
                ;
        cr_assert_eq(errno, ENOSPC);
}

Test(faults, a_full_record_file_system_changes_nothing_then_recording_resumes) {
        _cleanup_free_ char *path = textfile_path(), *state = NULL, *filler = NULL, *conf = NULL,
                            *extra = NULL;
        double ticks;

        cr_assert_gt(asprintf(&state, "%s/state", workdir), 0);
        cr_assert_eq(mkdir(state, 0700), 0);
        cr_assert_eq(mount("cgbtest-full", state, "tmpfs", 0, "size=16k,mode=0700"), 0, "mount: %s",
                     strerror(errno));
        fill_up(state);
        cr_assert_gt(asprintf(&extra,
                              PRESSURE_CONF "[metrics]\ntextfile = %s\ntextfile_every = 1\n", prot,
                              path),
                     0);
        conf = live_conf(extra);
        make_pressure();
        start_daemon(conf, false);
        cr_expect(wait_log("Failed to record changes in", 5000), "the full disk was not said");
        ticks = textfile_ticks(path);
        cr_expect(wait_ticks(path, ticks + 3, 3000), "the daemon stopped ticking");
        cr_expect_eq(shares_of(prot), 1024, "a change that could not be recorded was made");

        cr_assert_gt(asprintf(&filler, "%s/filler", state), 0);
        cr_assert_eq(unlink(filler), 0);
        cr_expect(wait_log("Changes are recorded in", 5000), "recording did not resume");
        cr_expect(wait_shares(prot, raised, 5000), "no change once the record could be written");
        cr_expect(exited_with(stop_daemon(SIGTERM), 0));
        cr_expect_eq(shares_of(prot), 1024, "not put back");
        cr_expect_eq(umount2(state, MNT_DETACH), 0);
}

Test(faults, the_record_replaced_by_a_directory_a_fifo_or_a_symlink_harms_nothing) {
        _cleanup_free_ char *conf = pressure_conf(), *record = NULL, *victim = NULL;
        _cleanup_close_ int dfd = open(workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        cr_assert_gt(asprintf(&record, "%s/state/changes", workdir), 0);
        cr_assert_gt(asprintf(&victim, "%s/victim", workdir), 0);
        write_file_at(dfd, "victim", "not the daemon's\n");
        make_pressure();
        for (int round = 0; round < 3; round++) {
                _cleanup_free_ char *text = NULL;

                start_daemon(conf, false);
                cr_assert(wait_shares(prot, raised, 10000), "round %d: weight never rose", round);
                cr_assert(wait_file(record, "cgroup", 2000), "round %d: no record", round);
                cr_assert_eq(unlink(record), 0);
                if (round == 0)
                        cr_assert_eq(mkdir(record, 0700), 0);
                else if (round == 1)
                        cr_assert_eq(mkfifo(record, 0600), 0);
                else
                        cr_assert_eq(symlink(victim, record), 0);
                usleep(500 * 1000);
                cr_expect(exited_with(stop_daemon(SIGTERM), 0), "round %d", round);
                cr_expect_eq(shares_of(prot), 1024, "round %d: not put back", round);
                text = read_all(victim);
                cr_expect_str_eq(text, "not the daemon's\n", "round %d: written through", round);
                if (round == 0)
                        cr_expect(wait_log("Failed to remove the record", 100),
                                  "the directory in the record's place was not said");
                (void) rmdir(record);
                (void) unlink(record);
        }
}

Test(faults, managed_groups_removed_between_sampling_and_acting_are_no_error) {
        _cleanup_free_ char *path = textfile_path(), *extra = NULL, *conf = NULL;
        pid_t parent = getpid(), racer;
        int status;

        cr_assert_gt(asprintf(&extra,
                              PRESSURE_CONF "[metrics]\ntextfile = %s\ntextfile_every = 1\n", prot,
                              path),
                     0);
        conf = live_conf(extra);
        make_pressure();
        start_daemon(conf, false);
        cr_assert(wait_ticks(path, 1, 5000));
        racer = fork();
        cr_assert_geq(racer, 0);
        if (racer == 0) { /* 5 s of groups that come, hold a busy task a moment, and go */
                unsigned seed = (unsigned) getpid();

                die_with_parent(parent);
                for (int i = 0; i < 60; i++) {
                        char g[256];
                        pid_t busy;

                        snprintf(g, sizeof g, "%s/race%d", noisy, i);
                        if (cgroup_create(&layout, g) < 0)
                                _exit(1);
                        busy = fork();
                        if (busy == 0) {
                                for (;;)
                                        ;
                        }
                        (void) cgroup_attach_pid(&layout, g, busy);
                        usleep((useconds_t) (rand_r(&seed) % 150) * 1000);
                        (void) kill(busy, SIGKILL);
                        (void) waitpid(busy, NULL, 0);
                        for (int tries = 0; cgroup_remove(&layout, g) < 0 && tries < 100; tries++)
                                usleep(1000);
                }
                _exit(0);
        }
        cr_assert_eq(waitpid(racer, &status, 0), racer);
        cr_expect(exited_with(status, 0), "the racer failed");
        cr_expect_eq(metric(path, "cgbalance_errors_total{kind=\"write\"}"), 0);
        cr_expect_eq(metric(path, "cgbalance_errors_total{kind=\"sample\"}"), 0);
        cr_expect(exited_with(stop_daemon(SIGTERM), 0));
        {
                _cleanup_free_ char *log = daemon_log_text();

                cr_expect_null(strstr(log, "Failed"), "%s", log);
        }
        cr_expect_eq(shares_of(prot), 1024);
}
