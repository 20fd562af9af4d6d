/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgbalanced's D-Bus API on a real bus: a private dbus-daemon set up like the system bus (with
 * the repository's systemd/org.cgbalance1.conf, or a policy letting anyone call anything, so
 * that only the daemon's own check stands), the real daemon managing a real cgroup with a busy
 * process in it, and clients as root and as nobody. Needs root and dbus-daemon.
 *
 * Every process started here dies with the test (PR_SET_PDEATHSIG); the suite's fini stops
 * them, removes the cgroup and the temporary directory, also after a failed assertion.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "bus-api.h"
#include "bus.h"
#include "cgroup-tree.h"
#include "cgroup.h"
#include "clock.h"
#include "cpumask.h"
#include "macro.h"
#include "proc.h"
#include "testutil.h"
#include "topology.h"
#include "tunables.h"

#define DAEMON BUILD_DIR "/cgbalanced"
#define POLICY_FILE FIXTURES_DIR "/../../systemd/org.cgbalance1.conf"
#define SYSTEM_BUS "bus/system.conf.in"
#define ALLOW_ALL_BUS "bus/allow-all.conf.in"
#define NOBODY 65534
#define MAX_BUSY 4

static CgroupLayout layout;
static char group[128];
static char *workdir, *conf_path, *log_path, *address;
static pid_t dbus_pid, daemon_pid, busy[MAX_BUSY];
static size_t n_busy;
static sd_bus *client;

/* ---- files and processes */

static size_t count_of(const char *haystack, const char *needle) {
        size_t n = 0;

        for (const char *p = haystack; (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

/* text with every "@NAME@" of the template replaced. */
static char *fill_template(const char *text, const char *name, const char *value) {
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        const char *p = text, *hit;

        cr_assert_not_null(f);
        while ((hit = strstr(p, name))) {
                fwrite(p, 1, (size_t) (hit - p), f);
                fputs(value, f);
                p = hit + strlen(name);
        }
        fputs(p, f);
        cr_assert_eq(fclose(f), 0);
        return out;
}

static char *path_in_workdir(const char *name) {
        char *p = NULL;

        cr_assert_gt(asprintf(&p, "%s/%s", workdir, name), 0);
        return p;
}

static void write_workdir_file(const char *name, const char *text) {
        _cleanup_close_ int fd = open(workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        cr_assert_geq(fd, 0);
        write_file_at(fd, name, text);
}

/* argv with stdout to out_fd (-1: /dev/null) and stderr to err_path (NULL: /dev/null). */
static pid_t spawn(const char *const argv[], int out_fd, const char *err_path) {
        pid_t parent = getpid(), pid = fork();

        cr_assert_geq(pid, 0);
        if (pid == 0) {
                int o = out_fd >= 0 ? out_fd : open("/dev/null", O_WRONLY | O_CLOEXEC);
                int e = open(err_path ? err_path : "/dev/null",
                             O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

                die_with_parent(parent);
                if (o < 0 || e < 0 || dup2(o, STDOUT_FILENO) < 0 || dup2(e, STDERR_FILENO) < 0)
                        _exit(126);
                execvp(argv[0], (char *const *) argv);
                _exit(127);
        }
        return pid;
}

/* Sends sig, waits up to 5 s, then SIGKILL. Returns the wait status. */
static int stop_process(pid_t *pid, int sig) {
        int status = 0;

        if (*pid <= 0)
                return 0;
        (void) kill(*pid, sig);
        for (int waited = 0; waited < 5000; waited += 20) {
                if (waitpid(*pid, &status, WNOHANG) == *pid) {
                        *pid = 0;
                        return status;
                }
                usleep(20 * 1000);
        }
        (void) kill(*pid, SIGKILL);
        (void) waitpid(*pid, &status, 0);
        *pid = 0;
        return status;
}

static bool have_dbus_daemon(void) {
        _cleanup_free_ char *path = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");

        for (char *dir = strtok(path, ":"); dir; dir = strtok(NULL, ":")) {
                _cleanup_free_ char *exe = NULL;

                if (asprintf(&exe, "%s/dbus-daemon", dir) > 0 && access(exe, X_OK) == 0)
                        return true;
        }
        return false;
}

/* ---- the cgroup and its busy processes */

/* A busy process in the group; comm, if not NULL, is the name it gives itself; cpu >= 0 pins
 * it there. */
static void start_busy_full(const char *comm, int cpu) {
        pid_t parent = getpid(), pid;

        cr_assert_lt(n_busy, (size_t) MAX_BUSY);
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                die_with_parent(parent);
                if (comm && prctl(PR_SET_NAME, comm) < 0)
                        _exit(126);
                if (cpu >= 0) {
                        cpu_set_t set;

                        CPU_ZERO(&set);
                        CPU_SET((size_t) cpu, &set);
                        if (sched_setaffinity(0, sizeof set, &set) < 0)
                                _exit(126);
                }
                for (volatile unsigned long i = 0;; i++)
                        ;
        }
        busy[n_busy++] = pid;
        cr_assert_eq(cgroup_attach_pid(&layout, group, pid), 0);
}

static void start_busy_named(const char *comm) {
        start_busy_full(comm, -1);
}

static void start_busy(void) {
        start_busy_named(NULL);
}

static void setup(void) {
        if (geteuid() != 0)
                cr_skip_test("needs root: cgroups, a bus policy for root and a caller as nobody");
        if (!have_dbus_daemon())
                cr_skip_test("needs dbus-daemon (package dbus-daemon) for a private bus");
        if (cgroup_layout_detect(&layout) < 0 || !layout.cpu_path[0])
                cr_skip_test("no cgroup cpu controller on this machine");
        workdir = make_tmpdir();
        /* nobody must reach the bus socket in it */
        cr_assert_eq(chmod(workdir, 0755), 0);
        log_path = path_in_workdir("daemon.log");
        conf_path = path_in_workdir("cgbalance.conf");
        cr_assert_gt(asprintf(&address, "unix:path=%s/bus", workdir), 0);
        snprintf(group, sizeof group, "cgbalance.slice/bustest-%d", (int) getpid());
        cr_assert_eq(cgroup_create(&layout, group), 0);
        start_busy();
}

static void teardown(void) {
        client = sd_bus_flush_close_unref(client);
        /* SIGTERM first: the daemon puts back what it changed */
        (void) stop_process(&daemon_pid, SIGTERM);
        for (size_t i = 0; i < n_busy; i++)
                (void) stop_process(&busy[i], SIGKILL);
        n_busy = 0;
        (void) stop_process(&dbus_pid, SIGTERM);
        if (group[0])
                (void) cgroup_remove(&layout, group);
        if (workdir)
                rm_rf(workdir);
        workdir = mfree(workdir);
        log_path = mfree(log_path);
        conf_path = mfree(conf_path);
        address = mfree(address);
}

/* ---- the bus and the daemon */

/* A dbus-daemon at workdir/bus, configured by the fixture template. */
static void start_bus(const char *template) {
        _cleanup_free_ char *tmpl_path = fixture_path(template), *tmpl = read_all(tmpl_path);
        _cleanup_free_ char *with_dir = fill_template(tmpl, "@DIR@", workdir);
        _cleanup_free_ char *text = fill_template(with_dir, "@POLICY@", POLICY_FILE);
        _cleanup_free_ char *config = path_in_workdir("bus.conf"), *opt = NULL;
        _cleanup_free_ char *err = path_in_workdir("dbus.log");
        _cleanup_close_ int rfd = -EBADF;
        char line[512] = "";
        size_t len = 0;
        int fds[2];

        cr_assert_neq(tmpl[0], '\0', "no template %s", tmpl_path);
        write_workdir_file("bus.conf", text);
        cr_assert_gt(asprintf(&opt, "--config-file=%s", config), 0);
        cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
        dbus_pid = spawn(
                (const char *const[]){ "dbus-daemon", opt, "--nofork", "--print-address=1", NULL },
                fds[1], err);
        close(fds[1]);
        rfd = fds[0];
        /* It prints its address once it listens. */
        while (!memchr(line, '\n', len)) {
                struct pollfd p = { .fd = rfd, .events = POLLIN };
                ssize_t n;

                cr_assert_eq(poll(&p, 1, 5000), 1, "dbus-daemon printed no address");
                n = read(rfd, line + len, sizeof line - 1 - len);
                cr_assert_gt(n, 0, "dbus-daemon exited: %s", read_all(err));
                len += (size_t) n;
                line[len] = '\0';
        }
        cr_assert_not_null(strstr(line, "unix:path="), "address %s", line);
}

static void write_conf(const char *extra) {
        _cleanup_free_ char *text = NULL;

        cr_assert_gt(asprintf(&text,
                              "[daemon]\ninterval = 200ms\nstate_directory = %s/state\n"
                              "[manage]\ncgroups = %s\n%s",
                              workdir, group, extra),
                     0);
        write_workdir_file("cgbalance.conf", text);
}

static void start_daemon_on(const char *bus_address) {
        daemon_pid = spawn(
                (const char *const[]){ DAEMON, "--bus", bus_address, "--config", conf_path, NULL },
                -1, log_path);
}

/* Without asserting: for the child that runs as nobody. */
static int connect_client(sd_bus **ret) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        r = sd_bus_new(&bus);
        if (r >= 0)
                r = sd_bus_set_address(bus, address);
        if (r >= 0)
                r = sd_bus_set_bus_client(bus, true);
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(bus);
        return 0;
}

static bool name_has_owner(sd_bus *bus) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int has = 0;

        if (sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                               "org.freedesktop.DBus", "NameHasOwner", NULL, &reply, "s",
                               CGB_BUS_NAME) < 0 ||
            sd_bus_message_read(reply, "b", &has) < 0)
                return false;
        return has;
}

static bool daemon_alive(void) {
        return daemon_pid > 0 && waitpid(daemon_pid, NULL, WNOHANG) == 0;
}

static bool wait_for_name(sd_bus *bus, int timeout_ms) {
        for (int waited = 0; waited <= timeout_ms; waited += 50) {
                if (name_has_owner(bus))
                        return true;
                if (!daemon_alive())
                        return false;
                usleep(50 * 1000);
        }
        return false;
}

/* The usual start: a bus, the daemon on it with the base config and extra, a root client. */
static void start(const char *bus_template, const char *extra_conf) {
        _cleanup_free_ char *log = NULL;

        start_bus(bus_template);
        write_conf(extra_conf);
        start_daemon_on(address);
        cr_assert_eq(connect_client(&client), 0);
        if (!wait_for_name(client, 10000)) {
                log = read_all(log_path);
                cr_assert_fail("cgbalanced never owned %s; its log:\n%s", CGB_BUS_NAME, log);
        }
}

static bool wait_log(const char *what, int timeout_ms) {
        for (int waited = 0; waited <= timeout_ms; waited += 50) {
                _cleanup_free_ char *text = read_all(log_path);

                if (strstr(text, what))
                        return true;
                usleep(50 * 1000);
        }
        return false;
}

/* ---- calls */

static int call(sd_bus *bus, sd_bus_error *error, sd_bus_message **reply, const char *method,
                const char *types, ...) {
        va_list ap;
        int r;

        va_start(ap, types);
        r = sd_bus_call_methodv(bus, CGB_BUS_NAME, CGB_BUS_PATH, CGB_BUS_INTERFACE, method, error,
                                reply, types, ap);
        va_end(ap);
        return r;
}

static void call_ok(const char *method, const char *types, ...) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        va_list ap;
        int r;

        va_start(ap, types);
        r = sd_bus_call_methodv(client, CGB_BUS_NAME, CGB_BUS_PATH, CGB_BUS_INTERFACE, method, &e,
                                NULL, types, ap);
        va_end(ap);
        cr_assert_geq(r, 0, "%s: %s: %s", method, e.name, e.message);
        sd_bus_error_free(&e);
}

static sd_bus_message *get_property(const char *name, const char *type) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_get_property(client, CGB_BUS_NAME, CGB_BUS_PATH, CGB_BUS_INTERFACE, name, &e,
                                &reply, type);
        cr_assert_geq(r, 0, "Get %s: %s", name, e.message);
        sd_bus_error_free(&e);
        return reply;
}

static char *get_string(const char *name) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        char *s = NULL;
        int r;

        r = sd_bus_get_property_string(client, CGB_BUS_NAME, CGB_BUS_PATH, CGB_BUS_INTERFACE, name,
                                       &e, &s);
        cr_assert_geq(r, 0, "Get %s: %s", name, e.message);
        sd_bus_error_free(&e);
        return s;
}

static uint64_t counter(const char *name) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = get_property("Counters", "a{st}");
        uint64_t value = 0, v;
        bool found = false;
        const char *k;
        int r;

        cr_assert_geq(sd_bus_message_enter_container(m, 'a', "{st}"), 0);
        while ((r = sd_bus_message_read(m, "{st}", &k, &v)) > 0)
                if (streq(k, name))
                        value = v, found = true;
        cr_assert_geq(r, 0);
        cr_assert(found, "no counter %s", name);
        return value;
}

/* The Config entry of key (caller frees), and how many entries there are. */
static char *config_value(const char *key, size_t *ret_n) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = get_property("Config", "a{ss}");
        const char *k, *v;
        char *value = NULL;
        size_t n = 0;
        int r;

        cr_assert_geq(sd_bus_message_enter_container(m, 'a', "{ss}"), 0);
        while ((r = sd_bus_message_read(m, "{ss}", &k, &v)) > 0) {
                n++;
                if (streq(k, key))
                        value = strdup(v);
        }
        cr_assert_geq(r, 0);
        cr_assert_not_null(value, "no Config entry %s", key);
        if (ret_n)
                *ret_n = n;
        return value;
}

typedef struct TaskRow {
        uint32_t pid;
        char comm[128];
        char cgroup[256];
        int32_t cpu, node;
        uint32_t util, demand;
} TaskRow;

static bool find_task(pid_t pid, TaskRow *ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m =
                get_property("ManagedTasks", CGB_SIG_TASKS);
        const char *comm, *cgroup, *allowed;
        int ours, foreign, r;
        TaskRow row;

        cr_assert_geq(sd_bus_message_enter_container(m, 'a', "(ussiiuusbb)"), 0);
        while ((r = sd_bus_message_read(m, "(ussiiuusbb)", &row.pid, &comm, &cgroup, &row.cpu,
                                        &row.node, &row.util, &row.demand, &allowed, &ours,
                                        &foreign)) > 0)
                if (row.pid == (uint32_t) pid) {
                        snprintf(row.comm, sizeof row.comm, "%s", comm);
                        snprintf(row.cgroup, sizeof row.cgroup, "%s", cgroup);
                        *ret = row;
                        return true;
                }
        cr_assert_geq(r, 0);
        return false;
}

static bool wait_managed(pid_t pid, TaskRow *ret, int timeout_ms) {
        for (int waited = 0; waited <= timeout_ms; waited += 100) {
                if (find_task(pid, ret))
                        return true;
                usleep(100 * 1000);
        }
        return false;
}

/* ---- signals */

typedef struct Seen {
        bool seen;
        int ok;
        char text[512];
        uint64_t old_weight, new_weight;
        bool counters_changed, tasks_invalidated;
} Seen;

static int on_reloaded(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Seen *s = userdata;
        const char *text;

        (void) error;
        if (sd_bus_message_read(m, "bs", &s->ok, &text) > 0) {
                snprintf(s->text, sizeof s->text, "%s", text);
                s->seen = true;
        }
        return 0;
}

static int on_weight_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Seen *s = userdata;
        const char *cgroup, *reason;

        (void) error;
        if (sd_bus_message_read(m, "stts", &cgroup, &s->old_weight, &s->new_weight, &reason) > 0) {
                snprintf(s->text, sizeof s->text, "%s", cgroup);
                s->seen = true;
        }
        return 0;
}

static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Seen *s = userdata;
        const char *iface, *name;
        int r;

        (void) error;
        if (sd_bus_message_read(m, "s", &iface) <= 0 || !streq(iface, CGB_BUS_INTERFACE))
                return 0;
        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        while (r > 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                r = sd_bus_message_read(m, "s", &name);
                if (r > 0 && streq(name, "Counters"))
                        s->counters_changed = true;
                if (r > 0)
                        r = sd_bus_message_skip(m, "v");
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
        }
        if (r < 0 || sd_bus_message_exit_container(m) < 0 ||
            sd_bus_message_enter_container(m, 'a', "s") <= 0)
                return 0;
        while (sd_bus_message_read(m, "s", &name) > 0)
                if (streq(name, "ManagedTasks"))
                        s->tasks_invalidated = true;
        s->seen = true;
        return 0;
}

static void match_signal(const char *member, sd_bus_message_handler_t handler, Seen *seen) {
        const char *iface = streq(member, "PropertiesChanged") ? "org.freedesktop.DBus.Properties"
                                                               : CGB_BUS_INTERFACE;

        cr_assert_geq(
                sd_bus_match_signal(client, NULL, NULL, CGB_BUS_PATH, iface, member, handler, seen),
                0);
}

static bool wait_signal(Seen *seen, int timeout_ms) {
        for (int waited = 0; waited <= timeout_ms && !seen->seen; waited += 50) {
                int r;

                while ((r = sd_bus_process(client, NULL)) > 0 && !seen->seen)
                        ;
                cr_assert_geq(r, 0);
                if (!seen->seen)
                        (void) sd_bus_wait(client, 50 * 1000);
        }
        return seen->seen;
}

/* ---- properties */

TestSuite(bus, .init = setup, .fini = teardown, .timeout = 60);

Test(bus, version_and_cgroup_mode_are_the_real_ones) {
        _cleanup_free_ char *version = NULL, *mode = NULL;

        start(SYSTEM_BUS, "");
        version = get_string("Version");
        mode = get_string("CgroupMode");
        cr_expect_str_eq(version, CGBALANCE_VERSION);
        cr_expect_str_eq(mode, cgroup_mode_to_string(layout.mode));
}

Test(bus, nodes_are_the_topology_with_the_busy_task_counted) {
        _cleanup_topology_ Topology *topo = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        uint32_t id, capacity, load, pressure, runnable, total_runnable = 0;
        uint64_t total_load = 0;
        const char *cpus;
        unsigned n = 0;
        TaskRow row;
        int r;

        start(SYSTEM_BUS, "");
        cr_assert_eq(topology_new_from_system(&topo), 0);
        cr_assert(wait_managed(busy[0], &row, 5000), "the busy task was never managed");
        usleep(500 * 1000); /* a tick with it at full speed */
        m = get_property("Nodes", CGB_SIG_NODES);
        cr_assert_geq(sd_bus_message_enter_container(m, 'a', "(usuuuu)"), 0);
        while ((r = sd_bus_message_read(m, "(usuuuu)", &id, &cpus, &capacity, &load, &pressure,
                                        &runnable)) > 0) {
                _cleanup_free_ char *want = NULL;

                cr_assert_lt(n, topology_n_nodes(topo));
                cr_expect_eq(id, (uint32_t) topology_node_id(topo, n));
                cr_assert_eq(cpumask_format(topology_node_cpus(topo, id), &want), 0);
                cr_expect_str_eq(cpus, want, "node %u", id);
                cr_expect_eq(capacity, topology_node_capacity(topo, id));
                cr_expect_leq(pressure, 10000);
                total_load += load;
                total_runnable += runnable;
                n++;
        }
        cr_assert_geq(r, 0);
        cr_expect_eq(n, topology_n_nodes(topo));
        cr_expect_geq(total_runnable, 1, "the busy task is not runnable anywhere");
        cr_expect_geq(total_load, 5000, "a busy task, yet a load of %" PRIu64, total_load);
}

Test(bus, cpus_have_one_entry_per_online_cpu) {
        _cleanup_topology_ Topology *topo = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        uint32_t cpu, util;
        unsigned n = 0;
        int r;

        start(SYSTEM_BUS, "");
        cr_assert_eq(topology_new_from_system(&topo), 0);
        usleep(500 * 1000);
        m = get_property("CPUs", CGB_SIG_CPUS);
        cr_assert_geq(sd_bus_message_enter_container(m, 'a', "(uu)"), 0);
        while ((r = sd_bus_message_read(m, "(uu)", &cpu, &util)) > 0) {
                cr_expect(cpumask_isset(topology_online_cpus(topo), cpu), "CPU %u not online", cpu);
                cr_expect_leq(util, 10000);
                n++;
        }
        cr_assert_geq(r, 0);
        cr_expect_eq(n, topology_n_cpus(topo));
}

Test(bus, managed_tasks_and_cgroups_show_the_busy_task_in_its_group) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        uint64_t weight, base, pressure;
        bool listed = false;
        const char *path;
        TaskRow row;
        int prot, r;

        start(SYSTEM_BUS, "");
        cr_assert(wait_managed(busy[0], &row, 5000), "pid %d never in ManagedTasks", busy[0]);
        cr_expect_str_eq(row.cgroup, group);
        cr_expect_geq(row.cpu, 0);
        cr_expect_geq(row.node, 0);
        cr_expect_geq(row.demand, row.util);

        m = get_property("ManagedCgroups", CGB_SIG_CGROUPS);
        cr_assert_geq(sd_bus_message_enter_container(m, 'a', "(stttb)"), 0);
        while ((r = sd_bus_message_read(m, "(stttb)", &path, &weight, &base, &pressure, &prot)) > 0)
                if (streq(path, group)) {
                        listed = true;
                        cr_expect_eq(weight, 100);
                        cr_expect_eq(base, 100);
                        cr_expect_not(prot);
                        if (layout.unified_path[0])
                                cr_expect_leq(pressure, 10000, "pressure unknown with cgroup2");
                }
        cr_assert_geq(r, 0);
        cr_expect(listed, "%s not in ManagedCgroups", group);
}

/* Anyone can name a task anything (prctl): bytes that are not UTF-8 would make sd-bus refuse
 * the whole property, and control characters would reach a terminal. Both come out escaped. */
Test(bus, a_task_with_a_hostile_name_does_not_break_managed_tasks) {
        TaskRow row;
        pid_t pid;

        start_busy_named("\xff\xfe"
                         "bad\033[2J");
        pid = busy[n_busy - 1];
        start(SYSTEM_BUS, "");
        cr_assert(wait_managed(pid, &row, 5000), "pid %d never in ManagedTasks", (int) pid);
        cr_expect_str_eq(row.comm, "\\xff\\xfebad\\x1b[2J");
}

Test(bus, counters_ticks_grow) {
        uint64_t before, after;

        start(SYSTEM_BUS, "");
        before = counter("ticks");
        usleep(700 * 1000);
        after = counter("ticks");
        cr_expect_geq(after, before + 2, "ticks %" PRIu64 " -> %" PRIu64 " in 700 ms at 200 ms",
                      before, after);
}

/* sd-event's default timer accuracy (250 ms) made ticks of 100 ms come every 250 ms. */
Test(bus, ticks_keep_a_short_interval) {
        uint64_t before, after;

        start(SYSTEM_BUS, "");
        call_ok("SetTunable", "ss", "daemon.interval", "100ms");
        usleep(300 * 1000);
        before = counter("ticks");
        usleep(2000 * 1000);
        after = counter("ticks");
        cr_expect_geq(after, before + 14, "ticks %" PRIu64 " -> %" PRIu64 " in 2 s at 100 ms",
                      before, after);
}

/*
 * A tick that runs late (the daemon was stopped, or starved of CPU) must divide the counters
 * by the time they really cover: dividing by the time the timer was due made a busy task use
 * five CPUs after a stop of one second.
 */
Test(bus, a_late_tick_still_sees_a_busy_task_use_at_most_one_cpu) {
        uint32_t max_util = 0, max_demand = 0;
        TaskRow row;

        start(SYSTEM_BUS, "");
        cr_assert(wait_managed(busy[0], &row, 5000), "the busy task was never managed");
        usleep(500 * 1000);
        cr_assert_eq(kill(daemon_pid, SIGSTOP), 0);
        usleep(1000 * 1000);
        cr_assert_eq(kill(daemon_pid, SIGCONT), 0);
        /* The ticks right after the stop are the ones a wrong interval shows in. */
        for (int i = 0; i < 20; i++) {
                if (find_task(busy[0], &row)) {
                        max_util = row.util > max_util ? row.util : max_util;
                        max_demand = row.demand > max_demand ? row.demand : max_demand;
                }
                usleep(50 * 1000);
        }
        /* 1.3 CPUs: utime comes in ticks of 10 ms, a few of them over a 200 ms interval. */
        cr_expect_leq(max_util, 13000, "a busy task used %" PRIu32 " permyriad", max_util);
        cr_expect_leq(max_demand, 13000, "a busy task wanted %" PRIu32 " permyriad", max_demand);
        cr_expect_gt(max_util, 0, "the busy task was never seen running");
}

Test(bus, last_tick_is_recent_realtime) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        struct timespec ts;
        uint64_t last, now;

        start(SYSTEM_BUS, "");
        usleep(300 * 1000);
        m = get_property("LastTickUSec", "t");
        cr_assert_gt(sd_bus_message_read(m, "t", &last), 0);
        clock_gettime(CLOCK_REALTIME, &ts);
        now = (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
        cr_expect_leq(last, now);
        cr_expect_gt(last, now - 5000000, "last tick %" PRIu64 " us, now %" PRIu64, last, now);
}

Test(bus, config_has_every_key_with_the_values_in_force) {
        _cleanup_free_ char *interval = NULL, *cgroups = NULL;
        size_t n;

        start(SYSTEM_BUS, "");
        interval = config_value("daemon.interval", &n);
        cgroups = config_value("manage.cgroups", NULL);
        cr_expect_str_eq(interval, "200ms");
        cr_expect_str_eq(cgroups, group);
        cr_expect_eq(n, tunables_schema.n_keys);
}

Test(bus, properties_changed_once_a_tick) {
        Seen seen = { 0 };

        start(SYSTEM_BUS, "");
        match_signal("PropertiesChanged", on_properties_changed, &seen);
        cr_assert(wait_signal(&seen, 3000), "no PropertiesChanged in 3 s at a 200 ms tick");
        cr_expect(seen.counters_changed, "Counters not among the changed values");
        cr_expect(seen.tasks_invalidated, "ManagedTasks not invalidated");
}

/* ---- methods */

Test(bus, reload_with_a_broken_config_names_file_line_and_keeps_the_old_one) {
        _cleanup_free_ char *text = NULL, *where = NULL, *interval = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int r;

        start(SYSTEM_BUS, "");
        cr_assert_gt(asprintf(&text,
                              "[daemon]\ninterval = 300ms\nstate_directory = %s/state\n"
                              "bogus = 1\n",
                              workdir),
                     0);
        write_workdir_file("cgbalance.conf", text);
        r = call(client, &e, NULL, "Reload", "");
        cr_expect_lt(r, 0);
        cr_expect(sd_bus_error_has_name(&e, CGB_ERROR_CONFIG), "%s", e.name);
        cr_assert_gt(asprintf(&where, "%s:4", conf_path), 0);
        cr_expect(e.message && strstr(e.message, where), "%s", e.message);
        cr_expect(e.message && strstr(e.message, "bogus"), "%s", e.message);
        sd_bus_error_free(&e);
        interval = config_value("daemon.interval", NULL);
        cr_expect_str_eq(interval, "200ms");
        cr_expect(daemon_alive());
}

Test(bus, reload_with_a_good_config_signals_reloaded) {
        _cleanup_free_ char *text = NULL, *interval = NULL;
        Seen seen = { 0 };

        start(SYSTEM_BUS, "");
        match_signal("Reloaded", on_reloaded, &seen);
        cr_assert_gt(asprintf(&text,
                              "[daemon]\ninterval = 300ms\nstate_directory = %s/state\n"
                              "[manage]\ncgroups = %s\n",
                              workdir, group),
                     0);
        write_workdir_file("cgbalance.conf", text);
        call_ok("Reload", "");
        cr_assert(wait_signal(&seen, 3000), "no Reloaded signal");
        cr_expect(seen.ok);
        interval = config_value("daemon.interval", NULL);
        cr_expect_str_eq(interval, "300ms");
}

Test(bus, set_tunable_good_value_is_in_force) {
        _cleanup_free_ char *value = NULL;

        start(SYSTEM_BUS, "");
        call_ok("SetTunable", "ss", "balance.node_imbalance_pct", "140");
        value = config_value("balance.node_imbalance_pct", NULL);
        cr_expect_str_eq(value, "140");
}

Test(bus, set_tunable_bad_value_is_invalid_args_and_changes_nothing) {
        _cleanup_free_ char *value = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;

        start(SYSTEM_BUS, "");
        cr_expect_lt(call(client, &e, NULL, "SetTunable", "ss", "balance.node_imbalance_pct", "99"),
                     0);
        cr_expect(sd_bus_error_has_name(&e, SD_BUS_ERROR_INVALID_ARGS), "%s", e.name);
        cr_expect(e.message && strstr(e.message, "node_imbalance_pct"), "%s", e.message);
        sd_bus_error_free(&e);
        value = config_value("balance.node_imbalance_pct", NULL);
        cr_expect_str_eq(value, "125");
}

Test(bus, set_tunable_unknown_key_is_invalid_args) {
        sd_bus_error e = SD_BUS_ERROR_NULL;

        start(SYSTEM_BUS, "");
        cr_expect_lt(call(client, &e, NULL, "SetTunable", "ss", "balance.no_such_key", "1"), 0);
        cr_expect(sd_bus_error_has_name(&e, SD_BUS_ERROR_INVALID_ARGS), "%s", e.name);
        sd_bus_error_free(&e);
}

/* Hostile strings are refused before the config sees them, and never reach the log raw. */
Test(bus, set_tunable_hostile_strings_are_invalid_args_and_not_logged) {
        static const char *const keys[] = { "\033[2J", "daemon.interval\n", "" };
        _cleanup_free_ char *huge = malloc(5001), *log = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;

        start(SYSTEM_BUS, "");
        cr_assert_not_null(huge);
        memset(huge, 'x', 5000);
        huge[5000] = '\0';
        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                cr_expect_lt(call(client, &e, NULL, "SetTunable", "ss", keys[i], "1"), 0);
                cr_expect(sd_bus_error_has_name(&e, SD_BUS_ERROR_INVALID_ARGS), "key %zu: %s", i,
                          e.name);
                sd_bus_error_free(&e);
        }
        cr_expect_lt(call(client, &e, NULL, "SetTunable", "ss", "balance.node_min_imbalance", huge),
                     0);
        cr_expect(sd_bus_error_has_name(&e, SD_BUS_ERROR_INVALID_ARGS), "%s", e.name);
        sd_bus_error_free(&e);
        cr_expect_lt(call(client, &e, NULL, "SetTunable", "ss", "balance.node_min_imbalance",
                          "3\r\n[daemon]"),
                     0);
        cr_expect(sd_bus_error_has_name(&e, SD_BUS_ERROR_INVALID_ARGS), "%s", e.name);
        sd_bus_error_free(&e);

        log = read_all(log_path);
        cr_expect_null(strchr(log, '\033'), "an escape sequence reached the log");
        cr_expect_null(strstr(log, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
                       "the huge value reached the log");
        cr_expect(daemon_alive());
}

Test(bus, explain_a_managed_task_mentions_its_pid) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        char want[32];
        const char *text;
        TaskRow row;

        start(SYSTEM_BUS, "");
        cr_assert(wait_managed(busy[0], &row, 5000));
        cr_assert_geq(call(client, &e, &reply, "Explain", "u", (uint32_t) busy[0]), 0, "%s",
                      e.message);
        cr_assert_gt(sd_bus_message_read(reply, "s", &text), 0);
        snprintf(want, sizeof want, "pid %d", (int) busy[0]);
        cr_expect_not_null(strstr(text, want), "%s", text);
}

Test(bus, explain_of_an_unmanaged_pid_is_no_such_task) {
        sd_bus_error e = SD_BUS_ERROR_NULL;

        start(SYSTEM_BUS, "");
        cr_expect_lt(call(client, &e, NULL, "Explain", "u", (uint32_t) 1), 0);
        cr_expect(sd_bus_error_has_name(&e, CGB_ERROR_NO_SUCH_TASK), "%s", e.name);
        sd_bus_error_free(&e);
}

Test(bus, explain_of_an_impossible_pid_is_invalid_args) {
        static const uint32_t pids[] = { 0, (uint32_t) INT_MAX + 1, UINT32_MAX };
        sd_bus_error e = SD_BUS_ERROR_NULL;

        start(SYSTEM_BUS, "");
        for (size_t i = 0; i < ELEMENTSOF(pids); i++) {
                cr_expect_lt(call(client, &e, NULL, "Explain", "u", pids[i]), 0);
                cr_expect(sd_bus_error_has_name(&e, SD_BUS_ERROR_INVALID_ARGS),
                          "pid %" PRIu32 ": %s", pids[i], e.name);
                sd_bus_error_free(&e);
        }
}

/* Reliability point 15: a kernel thread is a wrong argument, not a task that went missing. */
static pid_t find_kernel_thread(void) {
        _cleanup_close_ int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;

        if (proc_fd < 0 || proc_pid_list_at(proc_fd, &pids, &n) < 0)
                return 0;
        for (size_t i = 0; i < n; i++) {
                TaskStat st;

                if (proc_task_stat_read_at(proc_fd, pids[i], 0, &st) >= 0 &&
                    task_stat_is_kthread(&st))
                        return pids[i];
        }
        return 0;
}

Test(bus, explain_of_a_kernel_thread_is_invalid_args) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        pid_t kthread = find_kernel_thread();

        if (kthread == 0)
                cr_skip_test("no kernel thread visible in this /proc");
        start(SYSTEM_BUS, "");
        cr_expect_lt(call(client, &e, NULL, "Explain", "u", (uint32_t) kthread), 0);
        cr_expect(sd_bus_error_has_name(&e, SD_BUS_ERROR_INVALID_ARGS), "pid %d: %s", (int) kthread,
                  e.name);
        sd_bus_error_free(&e);
}

Test(bus, dump_shows_the_snapshot_and_the_plan) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        const char *text;

        start(SYSTEM_BUS, "");
        usleep(500 * 1000);
        cr_assert_geq(call(client, &e, &reply, "Dump", ""), 0, "%s", e.message);
        cr_assert_gt(sd_bus_message_read(reply, "s", &text), 0);
        cr_expect_not_null(strstr(text, "plan"), "%s", text);
}

Test(bus, pause_and_resume_change_the_state) {
        _cleanup_free_ char *paused = NULL, *resumed = NULL;

        start(SYSTEM_BUS, "");
        call_ok("Pause", "");
        paused = get_string("State");
        call_ok("Resume", "");
        resumed = get_string("State");
        cr_expect_str_eq(paused, "paused");
        cr_expect_str_eq(resumed, "running");
}

Test(bus, rebalance_now_runs_one_tick_at_once) {
        uint64_t before, after;

        start(SYSTEM_BUS, "");
        /* no timer tick in between */
        call_ok("SetTunable", "ss", "daemon.interval", "1h");
        before = counter("ticks");
        call_ok("RebalanceNow", "");
        after = counter("ticks");
        cr_expect_eq(after, before + 1);
}

Test(bus, weight_change_is_signalled_and_recorded) {
        _cleanup_free_ char *extra = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        Seen seen = { 0 };
        const char *subject, *text;
        bool recorded = false;
        uint64_t when;
        int r;

        if (!layout.unified_path[0])
                cr_skip_test("no cgroup2 mount: no per-group pressure to react to");
        cr_assert_gt(asprintf(&extra,
                              "[weights]\nprotected_cgroups = %s\npressure_target = 1\n"
                              "pressure_hold = 0\nweight_step = 300\n",
                              group),
                     0);
        /* more busy processes than CPUs: the group is under pressure */
        while (n_busy < MIN((size_t) sysconf(_SC_NPROCESSORS_ONLN) + 1, (size_t) MAX_BUSY))
                start_busy();
        start(SYSTEM_BUS, extra);
        match_signal("WeightChanged", on_weight_changed, &seen);
        cr_assert(wait_signal(&seen, 30000), "no WeightChanged in 30 s");
        cr_expect_str_eq(seen.text, group);
        cr_expect_eq(seen.old_weight, 100);
        cr_expect_eq(seen.new_weight, 400);

        m = get_property("RecentActions", CGB_SIG_RECENT);
        cr_assert_geq(sd_bus_message_enter_container(m, 'a', "(tss)"), 0);
        while ((r = sd_bus_message_read(m, "(tss)", &when, &subject, &text)) > 0)
                if (streq(subject, group))
                        recorded = true;
        cr_assert_geq(r, 0);
        cr_expect(recorded, "the weight change is not in RecentActions");
}

typedef struct Moved {
        bool seen;
        uint32_t pid;
        char from[32], to[32], reason[192];
} Moved;

static int on_task_moved(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Moved *s = userdata;
        const char *from, *to, *reason;

        (void) error;
        if (sd_bus_message_read(m, "usss", &s->pid, &from, &to, &reason) > 0) {
                snprintf(s->from, sizeof s->from, "%s", from);
                snprintf(s->to, sizeof s->to, "%s", to);
                snprintf(s->reason, sizeof s->reason, "%s", reason);
                s->seen = true;
        }
        return 0;
}

/* Two one-CPU "nodes" made of this machine's CPUs 0 and 1 (hwloc's synthetic topology, which
 * the daemon honours), three busy tasks pinned to CPU 0: one moves to node 1. */
Test(bus, task_move_is_signalled) {
        Moved moved = { 0 };
        bool ours = false;

        if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
                cr_skip_test("needs two CPUs to make two nodes of");
        cr_assert_eq(setenv("HWLOC_SYNTHETIC", "pack:2 numa:1 core:1 pu:1", 1), 0);
        /* pinned by someone else, so foreign: only moved with override_foreign_affinity */
        for (int i = 0; i < 3; i++)
                start_busy_full(NULL, 0);
        start(SYSTEM_BUS, "override_foreign_affinity = yes\n"
                          "[balance]\nnode_imbalance_hold = 0\nidle_node_multiplier = 1\n"
                          "busy_node_multiplier = 1\n");
        cr_assert_geq(sd_bus_match_signal(client, NULL, NULL, CGB_BUS_PATH, CGB_BUS_INTERFACE,
                                          "TaskMoved", on_task_moved, &moved),
                      0);
        for (int waited = 0; waited <= 10000 && !moved.seen; waited += 50) {
                while (sd_bus_process(client, NULL) > 0 && !moved.seen)
                        ;
                if (!moved.seen)
                        (void) sd_bus_wait(client, 50 * 1000);
        }
        cr_assert(moved.seen, "no TaskMoved in 10 s");
        for (size_t i = 0; i < n_busy; i++)
                ours = ours || moved.pid == (uint32_t) busy[i];
        cr_expect(ours, "pid %" PRIu32 " moved, not one of the busy tasks", moved.pid);
        cr_expect_str_eq(moved.from, "node 0");
        cr_expect_str_eq(moved.to, "node 1");
        cr_expect_neq(moved.reason[0], '\0');
}

/* ---- callers as nobody: the child reports through a pipe, the parent asserts */

typedef enum Op {
        OP_VERSION,
        OP_DUMP,
        OP_EXPLAIN,
        OP_RELOAD,
        OP_PAUSE,
        OP_RESUME,
        OP_REBALANCE,
        OP_SET_TUNABLE,
        OP_OWN_NAME,
        _OP_MAX,
} Op;

static const char *const op_names[_OP_MAX] = {
        [OP_VERSION] = "Get Version",
        [OP_DUMP] = "Dump",
        [OP_EXPLAIN] = "Explain",
        [OP_RELOAD] = "Reload",
        [OP_PAUSE] = "Pause",
        [OP_RESUME] = "Resume",
        [OP_REBALANCE] = "RebalanceNow",
        [OP_SET_TUNABLE] = "SetTunable",
        [OP_OWN_NAME] = "RequestName",
};

typedef struct Outcome {
        int r;
        char error[128];
        char message[512];
} Outcome;

typedef struct Report {
        int setup; /* <0: the child could not become nobody or connect */
        Outcome ops[_OP_MAX];
} Report;

static int do_op(sd_bus *bus, Op op, sd_bus_error *e) {
        char *s = NULL;
        int r;

        switch (op) {
        case OP_VERSION:
                r = sd_bus_get_property_string(bus, CGB_BUS_NAME, CGB_BUS_PATH, CGB_BUS_INTERFACE,
                                               "Version", e, &s);
                free(s);
                return r;
        case OP_DUMP: return call(bus, e, NULL, "Dump", "");
        case OP_EXPLAIN: return call(bus, e, NULL, "Explain", "u", (uint32_t) busy[0]);
        case OP_RELOAD: return call(bus, e, NULL, "Reload", "");
        case OP_PAUSE: return call(bus, e, NULL, "Pause", "");
        case OP_RESUME: return call(bus, e, NULL, "Resume", "");
        case OP_REBALANCE: return call(bus, e, NULL, "RebalanceNow", "");
        case OP_SET_TUNABLE:
                return call(bus, e, NULL, "SetTunable", "ss", "balance.node_imbalance_pct", "150");
        case OP_OWN_NAME: return sd_bus_request_name(bus, CGB_BUS_NAME, 0);
        default: return -EINVAL;
        }
}

static void child_as_nobody(const gid_t *groups, size_t n_groups, Report *out) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;

        if (setgroups(n_groups, groups) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
            setresuid(NOBODY, NOBODY, NOBODY) < 0) {
                out->setup = -errno;
                return;
        }
        out->setup = connect_client(&bus);
        for (Op op = 0; out->setup >= 0 && op < _OP_MAX; op++) {
                sd_bus_error e = SD_BUS_ERROR_NULL;

                out->ops[op].r = do_op(bus, op, &e);
                snprintf(out->ops[op].error, sizeof out->ops[op].error, "%s", e.name ? e.name : "");
                snprintf(out->ops[op].message, sizeof out->ops[op].message, "%s",
                         e.message ? e.message : "");
                sd_bus_error_free(&e);
        }
}

/* Runs every Op as nobody with the given supplementary groups. */
static Report run_as_nobody(const gid_t *groups, size_t n_groups) {
        Report report = { 0 };
        pid_t parent = getpid(), pid;
        int fds[2], status;
        size_t got = 0;

        cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                Report out = { 0 };

                die_with_parent(parent);
                child_as_nobody(groups, n_groups, &out);
                _exit(write(fds[1], &out, sizeof out) == (ssize_t) sizeof out ? 0 : 1);
        }
        close(fds[1]);
        while (got < sizeof report) {
                ssize_t n = read(fds[0], (char *) &report + got, sizeof report - got);

                if (n <= 0)
                        break;
                got += (size_t) n;
        }
        close(fds[0]);
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child failed: %d", status);
        cr_assert_eq(got, sizeof report);
        cr_assert_eq(report.setup, 0, "as nobody: %s", strerror(-report.setup));
        return report;
}

static const Op mutating[] = { OP_RELOAD, OP_PAUSE, OP_RESUME, OP_REBALANCE, OP_SET_TUNABLE };

static void expect_denied(const Report *rep, const char *by) {
        for (size_t i = 0; i < ELEMENTSOF(mutating); i++) {
                const Outcome *o = &rep->ops[mutating[i]];

                cr_expect_lt(o->r, 0, "%s succeeded as nobody", op_names[mutating[i]]);
                cr_expect_str_eq(o->error, SD_BUS_ERROR_ACCESS_DENIED, "%s: %s",
                                 op_names[mutating[i]], o->message);
                cr_expect_not_null(strstr(o->message, by), "%s refused, not by %s: %s",
                                   op_names[mutating[i]], by, o->message);
        }
}

/* Nothing changed: still running, the tunable as it was. */
static void expect_unchanged(void) {
        _cleanup_free_ char *state = get_string("State");
        _cleanup_free_ char *value = config_value("balance.node_imbalance_pct", NULL);

        cr_expect_str_eq(state, "running");
        cr_expect_str_eq(value, "125");
}

static void wait_busy_managed(void) {
        TaskRow row;

        cr_assert(wait_managed(busy[0], &row, 5000), "the busy task was never managed");
}

Test(bus, nobody_reads_properties_and_calls_explain_and_dump) {
        static const gid_t none[] = { NOBODY };
        Report rep;

        start(SYSTEM_BUS, "");
        wait_busy_managed();
        rep = run_as_nobody(none, ELEMENTSOF(none));
        for (Op op = OP_VERSION; op <= OP_EXPLAIN; op++)
                cr_expect_geq(rep.ops[op].r, 0, "%s as nobody: %s %s", op_names[op],
                              rep.ops[op].error, rep.ops[op].message);
}

/* The first lock: the policy file refuses before the daemon sees the call. */
Test(bus, nobody_is_refused_mutating_methods_by_the_bus_policy) {
        static const gid_t none[] = { NOBODY };
        Report rep;

        start(SYSTEM_BUS, "");
        rep = run_as_nobody(none, ELEMENTSOF(none));
        expect_denied(&rep, "Rejected send message"); /* dbus-daemon's words */
        expect_unchanged();
}

Test(bus, nobody_cannot_own_the_name) {
        static const gid_t none[] = { NOBODY };
        Report rep;

        start(SYSTEM_BUS, "");
        rep = run_as_nobody(none, ELEMENTSOF(none));
        /* Refused by the policy (EACCES), not merely taken already (EEXIST). */
        cr_expect_eq(rep.ops[OP_OWN_NAME].r, -EACCES, "nobody asking for %s: %s", CGB_BUS_NAME,
                     strerror(-rep.ops[OP_OWN_NAME].r));
}

TestSuite(daemon_check, .init = setup, .fini = teardown, .timeout = 60);

static gid_t users_gid(void) {
        struct group *g = getgrnam("users");

        if (!g)
                cr_skip_test("no group \"users\" to make a control_group of");
        return g->gr_gid;
}

/* The second lock: a bus that lets anyone call anything; the daemon itself refuses. */
Test(daemon_check, nobody_is_refused_mutating_methods_by_the_daemon) {
        static const gid_t none[] = { NOBODY };
        Report rep;

        users_gid();
        start(ALLOW_ALL_BUS, "[bus]\ncontrol_group = users\n");
        rep = run_as_nobody(none, ELEMENTSOF(none));
        expect_denied(&rep, "Only root or members of [bus] control_group");
        expect_unchanged();
}

Test(daemon_check, a_control_group_member_may_change_things) {
        gid_t groups[] = { users_gid() };
        _cleanup_free_ char *value = NULL;
        Report rep;

        start(ALLOW_ALL_BUS, "[bus]\ncontrol_group = users\n");
        rep = run_as_nobody(groups, ELEMENTSOF(groups));
        for (size_t i = 0; i < ELEMENTSOF(mutating); i++)
                cr_expect_geq(rep.ops[mutating[i]].r, 0, "%s as a member of users: %s %s",
                              op_names[mutating[i]], rep.ops[mutating[i]].error,
                              rep.ops[mutating[i]].message);
        value = config_value("balance.node_imbalance_pct", NULL);
        cr_expect_str_eq(value, "150");
}

Test(daemon_check, without_a_control_group_a_member_of_any_group_is_refused) {
        gid_t groups[] = { users_gid() };
        Report rep;

        start(ALLOW_ALL_BUS, "");
        rep = run_as_nobody(groups, ELEMENTSOF(groups));
        expect_denied(&rep, "Only root or members of [bus] control_group");
        expect_unchanged();
}

/* ---- no bus, a late bus, a bus that restarts */

TestSuite(no_bus, .init = setup, .fini = teardown, .timeout = 90);

Test(no_bus, a_missing_bus_is_survived_and_said_once) {
        _cleanup_free_ char *log = NULL;
        int status;

        write_conf("");
        start_daemon_on("unix:path=/nonexistent/cgbalance-test/bus");
        cr_assert(wait_log("starting", 5000), "the daemon did not start");
        usleep(1000 * 1000); /* ticks go on */
        cr_expect(daemon_alive(), "the daemon died without a bus");
        log = read_all(log_path);
        cr_expect_eq(count_of(log, "unavailable"), 1, "%s", log);
        status = stop_process(&daemon_pid, SIGTERM);
        cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
}

/* The socket's directory is watched: a bus that comes up is joined at once, not at the next
 * BUS_RETRY_USEC (30 s) retry; the outage is logged only once. */
Test(no_bus, a_bus_that_comes_up_later_is_joined) {
        _cleanup_free_ char *log = NULL;

        write_conf("");
        start_daemon_on(address);
        cr_assert(wait_log("unavailable", 5000), "no word of the missing bus");
        start_bus(SYSTEM_BUS);
        cr_assert_eq(connect_client(&client), 0);
        cr_expect(wait_for_name(client, 3000),
                  "the daemon did not join the bus within 3 s: the 30 s timer's wait?");
        log = read_all(log_path);
        cr_expect_eq(count_of(log, "unavailable"), 1, "%s", log);
        cr_expect(daemon_alive());
}

/* ---- the socket path of a bus address, which the daemon watches */

Test(bus_address, unix_path_is_decoded) {
        static const struct {
                const char *address, *path;
        } cases[] = {
                { "unix:path=/run/dbus/system_bus_socket", "/run/dbus/system_bus_socket" },
                { "unix:path=/tmp/x/bus,guid=1234", "/tmp/x/bus" },
                { "unix:path=/a/b;unix:abstract=c", "/a/b" },
                { "unix:path=/a%20b/c%2Cd%2fe", "/a b/c,d/e" },
                { "unix:path=/s", "/s" },
        };
        static const char *const bad[] = {
                "unix:abstract=/tmp/bus",
                "tcp:host=localhost,port=1",
                "unix:path=",
                "unix:path=bus",
                "unix:path=/a/",
                "unix:path=/a%2",
                "unix:path=/a%zz",
                "unix:path=/a%00b",
                "unix:path=,x=/a",
                "",
                "UNIX:path=/a",
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *path = NULL;

                cr_expect_eq(bus_address_unix_path(cases[i].address, &path), 0, "%s",
                             cases[i].address);
                cr_expect_str_eq(path ? path : "(none)", cases[i].path, "%s", cases[i].address);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char *path = NULL;

                cr_expect_eq(bus_address_unix_path(bad[i], &path), -EINVAL, "%s", bad[i]);
                cr_expect_null(path, "%s: ret written on failure", bad[i]);
        }
        cr_expect_eq(bus_address_unix_path(NULL, &(char *){ NULL }), -EINVAL);
}

/* The bus daemon killed and started again: cgbalanced keeps ticking meanwhile (issue 21: it
 * keeps balancing without its bus) and joins the new one. */
Test(no_bus, a_restarted_bus_is_joined_again) {
        uint64_t before, after, t0, t1;

        start(SYSTEM_BUS, "");
        before = counter("ticks");
        t0 = now_usec();
        client = sd_bus_flush_close_unref(client);
        (void) stop_process(&dbus_pid, SIGKILL);
        usleep(1500 * 1000);
        cr_expect(daemon_alive(), "the daemon died with the bus");
        start_bus(SYSTEM_BUS);
        cr_assert_eq(connect_client(&client), 0);
        cr_expect(wait_for_name(client, 10000), "the daemon did not come back to the bus");
        after = counter("ticks");
        t1 = now_usec();
        cr_expect_geq(after - before, (t1 - t0) / 400000,
                      "%" PRIu64 " ticks in %.1f s at 200 ms with the bus gone a while",
                      after - before, (double) (t1 - t0) / 1e6);
        cr_expect(wait_log("Lost the D-Bus connection", 100));
}

/*
 * A D-Bus storm (issue 21): 16 clients read every property and call Explain and Dump as fast as
 * they can for 4 s; the ticks stay on time (at least 90% of those the interval allows: each tick
 * comes an interval after the last one ended, so a few ms a tick are lost anyway).
 */
Test(bus, a_storm_of_reads_leaves_the_ticks_on_time) {
        pid_t clients[16], parent = getpid();
        uint64_t before, after, t0, t1, calls = 0;
        int fds[2];

        start(SYSTEM_BUS, "");
        usleep(300 * 1000);
        cr_assert_eq(pipe(fds), 0);
        before = counter("ticks");
        t0 = now_usec();
        for (size_t i = 0; i < ELEMENTSOF(clients); i++) {
                clients[i] = fork();
                cr_assert_geq(clients[i], 0);
                if (clients[i] == 0) {
                        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
                        uint64_t n = 0, end = now_usec() + 4000000;

                        die_with_parent(parent);
                        if (connect_client(&bus) < 0)
                                _exit(1);
                        while (now_usec() < end) {
                                _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
                                const char *method = n % 3 == 0   ? "GetAll"
                                                     : n % 3 == 1 ? "Explain"
                                                                  : "Dump";

                                if (n % 3 == 0)
                                        (void) sd_bus_call_method(bus, CGB_BUS_NAME, CGB_BUS_PATH,
                                                                  "org.freedesktop.DBus.Properties",
                                                                  method, NULL, &m, "s",
                                                                  CGB_BUS_INTERFACE);
                                else if (n % 3 == 1)
                                        (void) sd_bus_call_method(bus, CGB_BUS_NAME, CGB_BUS_PATH,
                                                                  CGB_BUS_INTERFACE, method, NULL,
                                                                  &m, "u", (uint32_t) getpid());
                                else
                                        (void) sd_bus_call_method(bus, CGB_BUS_NAME, CGB_BUS_PATH,
                                                                  CGB_BUS_INTERFACE, method, NULL,
                                                                  &m, "");
                                n++;
                        }
                        (void) write(fds[1], &n, sizeof n);
                        _exit(0);
                }
        }
        close(fds[1]);
        for (size_t i = 0; i < ELEMENTSOF(clients); i++) {
                int status;
                uint64_t n = 0;

                cr_assert_eq(waitpid(clients[i], &status, 0), clients[i]);
                cr_expect(exited_with(status, 0), "client %zu could not connect", i);
                if (read(fds[0], &n, sizeof n) == (ssize_t) sizeof n)
                        calls += n;
        }
        close(fds[0]);
        after = counter("ticks");
        t1 = now_usec();
        cr_log_info("storm: %" PRIu64 " calls from %zu clients in %.1f s, %" PRIu64
                    " ticks at 200 ms",
                    calls, ELEMENTSOF(clients), (double) (t1 - t0) / 1e6, after - before);
        cr_expect_gt(calls, 100, "the storm was no storm: %" PRIu64 " calls", calls);
        cr_expect_geq((double) (after - before), 0.9 * (double) (t1 - t0) / 200000.0,
                      "%" PRIu64 " ticks in %.2f s at 200 ms", after - before,
                      (double) (t1 - t0) / 1e6);
        cr_expect(daemon_alive());
}
