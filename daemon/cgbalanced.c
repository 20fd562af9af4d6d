/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cgbalanced: parse args -> load config -> manager_new -> observers (--events) -> manager_start
 * -> observers (the bus) -> manager_run -> manager_stop. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bus.h"
#include "event-stream.h"
#include "log.h"
#include "manager.h"
#include "metrics.h"
#include "parse.h"
#include "replay.h"
#include "tunables.h"

typedef enum Action {
        ACTION_RUN,
        ACTION_ONCE,
        ACTION_CHECK_CONFIG,
        ACTION_DUMP_TOPOLOGY,
        ACTION_PRINT_DEFAULTS,
        ACTION_REPLAY,
} Action;

static Action arg_action = ACTION_RUN;
static ManagerOptions arg_options;
static const char *arg_bus; /* --bus: NULL for the system bus */
static const char *arg_events; /* --events: FD or PATH */
static ReplayOptions arg_replay = { .show = 10 };
static char *arg_sets[33]; /* --set, NULL-terminated */
static size_t n_sets;

static void help(void) {
        printf("Usage: cgbalanced [OPTIONS]\n"
               "\n"
               "Balances the tasks of managed cgroups across CPUs and NUMA nodes, with CPU\n"
               "affinity and the cgroup CPU weight. Runs in the foreground; logs go to stderr,\n"
               "or to the journal under systemd.\n"
               "\n"
               "  -c --config=FILE    Configuration file (default %s; with .d/ drop-ins).\n"
               "                      Without this option a missing default file means the\n"
               "                      compiled-in defaults.\n"
               "  -n --dry-run        Decide and log, change nothing.\n"
               "     --once           Sample one tick, print the snapshot and the plan, exit.\n"
               "                      Changes nothing.\n"
               "     --check-config   Load and validate the configuration, print the effective\n"
               "                      values, exit (1 on error, naming file and line).\n"
               "     --dump-topology  Print CPUs, nodes, distances, online and isolated CPUs.\n"
               "     --root=DIR       Read /proc and /sys from DIR (a recorded machine); never\n"
               "                      acts. With --once, counters are read as since boot.\n"
               "     --bus=ADDRESS    Serve D-Bus on ADDRESS (unix:path=...) instead of the "
               "system\n"
               "                      bus. Without a bus the daemon balances all the same.\n"
               "     --events=FD|PATH Write each move and weight change as one line of JSON to\n"
               "                      file descriptor FD or appended to PATH (schema in\n"
               "                      cgbalanced(8), EVENTS).\n"
               "     --record=FILE    Record every tick (what the policy was given and what it\n"
               "                      planned) to FILE, whatever [record] says; see\n"
               "                      cgbalance-record(5).\n"
               "     --replay=FILE    Make every plan of the recording FILE again and say on how\n"
               "                      many ticks it is the recorded one (exit 2 if not all);\n"
               "                      with --config, also with that configuration: a what-if,\n"
               "                      per minute and tick by tick. Changes nothing.\n"
               "     --set=KEY=VALUE  With --replay: the what-if's configuration is --config's, "
               "or\n"
               "                      the recorded one, with KEY set to VALUE (repeatable).\n"
               "     --show=N         With --replay: show at most N differing ticks (10).\n"
               "     --json           With --replay: a JSON summary instead of the tables.\n"
               "     --print-defaults Print the documented default configuration file.\n"
               "  -h --help           Show this help.\n"
               "     --version        Show the version.\n"
               "\n"
               "See cgbalanced(8) and cgbalance.conf(5).\n",
               TUNABLES_DEFAULT_PATH);
}

static int parse_argv(int argc, char *argv[]) {
        enum {
                ARG_ONCE = 0x100,
                ARG_CHECK,
                ARG_TOPO,
                ARG_ROOT,
                ARG_DEFAULTS,
                ARG_VERSION,
                ARG_BUS,
                ARG_EVENTS,
                ARG_RECORD,
                ARG_REPLAY,
                ARG_SHOW,
                ARG_JSON,
                ARG_SET,
        };
        static const struct option options[] = {
                { "config", required_argument, NULL, 'c' },
                { "dry-run", no_argument, NULL, 'n' },
                { "once", no_argument, NULL, ARG_ONCE },
                { "check-config", no_argument, NULL, ARG_CHECK },
                { "dump-topology", no_argument, NULL, ARG_TOPO },
                { "root", required_argument, NULL, ARG_ROOT },
                { "bus", required_argument, NULL, ARG_BUS },
                { "events", required_argument, NULL, ARG_EVENTS },
                { "record", required_argument, NULL, ARG_RECORD },
                { "replay", required_argument, NULL, ARG_REPLAY },
                { "show", required_argument, NULL, ARG_SHOW },
                { "json", no_argument, NULL, ARG_JSON },
                { "set", required_argument, NULL, ARG_SET },
                { "print-defaults", no_argument, NULL, ARG_DEFAULTS },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                {},
        };
        int c;

        while ((c = getopt_long(argc, argv, "c:nh", options, NULL)) >= 0) {
                switch (c) {
                case 'c': arg_options.config_path = optarg; break;
                case 'n': arg_options.dry_run = true; break;
                case ARG_ONCE: arg_action = ACTION_ONCE; break;
                case ARG_CHECK: arg_action = ACTION_CHECK_CONFIG; break;
                case ARG_TOPO: arg_action = ACTION_DUMP_TOPOLOGY; break;
                case ARG_ROOT: arg_options.root = optarg; break;
                case ARG_BUS: arg_bus = optarg; break;
                case ARG_EVENTS: arg_events = optarg; break;
                case ARG_RECORD: arg_options.record_path = optarg; break;
                case ARG_REPLAY:
                        arg_action = ACTION_REPLAY;
                        arg_replay.path = optarg;
                        break;
                case ARG_SHOW: {
                        uint64_t v;

                        if (parse_u64_span(optarg, strlen(optarg), &v) < 0 || v > 1000000) {
                                log_error("--show=%s: not a number of ticks up to 1000000.",
                                          optarg);
                                return -EINVAL;
                        }
                        arg_replay.show = (unsigned) v;
                        break;
                }
                case ARG_JSON: arg_replay.json = true; break;
                case ARG_SET:
                        if (n_sets + 1 >= ELEMENTSOF(arg_sets)) {
                                log_error("--set: at most %zu.", ELEMENTSOF(arg_sets) - 1);
                                return -EINVAL;
                        }
                        arg_sets[n_sets++] = optarg;
                        arg_replay.sets = arg_sets;
                        break;
                case ARG_DEFAULTS: arg_action = ACTION_PRINT_DEFAULTS; break;
                case 'h': help(); return 0;
                case ARG_VERSION: puts("cgbalanced " CGBALANCE_VERSION); return 0;
                default: return -EINVAL; /* getopt said why */
                }
        }
        if (optind < argc) {
                log_error("Unexpected argument \"%s\"; see --help.", argv[optind]);
                return -EINVAL;
        }
        if (arg_action != ACTION_REPLAY && (arg_replay.json || arg_replay.show != 10 || n_sets)) {
                log_error("--show, --set and --json go with --replay.");
                return -EINVAL;
        }
        if (arg_action == ACTION_REPLAY && arg_options.record_path) {
                log_error("--record and --replay do not go together.");
                return -EINVAL;
        }
        arg_replay.config_path = arg_options.config_path;
        return 1;
}

static int check_config(void) {
        const char *path =
                arg_options.config_path ? arg_options.config_path : TUNABLES_DEFAULT_PATH;
        ConfigError e = { 0 };
        Tunables t;
        int r;

        r = tunables_load(path, !arg_options.config_path, &t, &e);
        if (r < 0)
                return log_error_errno(r, "%s", e.message);
        r = config_print(&tunables_schema, &t, stdout);
        tunables_free(&t);
        return r;
}

/* The sampler keeps a /proc fd open per managed thread (a pread of a kept fd costs 0.65x an
 * open+read+close); its budget is half the soft limit, so take the whole hard limit. */
static void raise_nofile(void) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
                return;
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                log_debug_errno(errno, "Failed to raise RLIMIT_NOFILE, ignoring: %m");
}

/* SIGTERM, SIGINT and SIGHUP wait from the first instruction of the daemon until its event loop
 * takes them (sd-event's signalfd needs them blocked anyway): one that came while the config was
 * read or a crashed run's record reconciled killed the daemon, with nothing logged and nothing
 * restored. Now it is pending, and handled once the loop runs: a stop restores, a reload reloads.
 */
static void block_stop_signals(void) {
        sigset_t mask;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                log_warning_errno(-errno, "Failed to block the stop signals before the loop: %m");
}

/* The daemon proper: the manager's loop, with the bus and --events observing it. */
static int run(Manager *m) {
        _cleanup_event_stream_ EventStream *events = NULL;
        _cleanup_(bus_freep) Bus *bus = NULL;
        _cleanup_metrics_ Metrics *metrics = NULL;
        int r, k;

        if (arg_events) {
                r = event_stream_new(m, arg_events, &events);
                if (r < 0)
                        return log_error_errno(r, "Failed to open --events=%s: %m", arg_events);
        }
        r = manager_start(m);
        if (r < 0)
                return r;
        r = metrics_new(m, &metrics);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the metrics: %m");
        r = bus_new(m, metrics, manager_get_event(m), arg_bus, &bus);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the bus: %m");
        r = manager_run(m);
        bus = bus_free(bus); /* release the name before restoring */
        metrics = metrics_free(metrics); /* no textfile left to look alive */
        k = manager_stop(m);
        return r < 0 ? r : k;
}

int main(int argc, char *argv[]) {
        _cleanup_manager_ Manager *m = NULL;
        int r;

        log_set_ident("cgbalanced");
        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;

        switch (arg_action) {
        case ACTION_PRINT_DEFAULTS:
                return tunables_write_default_file(stdout) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        case ACTION_CHECK_CONFIG: return check_config() < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        case ACTION_REPLAY: {
                ReplayResult res;

                r = replay_run(&arg_replay, stdout, &res);
                if (r < 0)
                        return EXIT_FAILURE;
                return res.identical == res.ticks ? EXIT_SUCCESS : 2;
        }
        default: break;
        }

        raise_nofile();
        if (arg_action == ACTION_RUN)
                block_stop_signals();
        r = manager_new(&arg_options, &m);
        if (r < 0)
                return EXIT_FAILURE;
        switch (arg_action) {
        case ACTION_ONCE: r = manager_once(m, stdout); break;
        case ACTION_DUMP_TOPOLOGY: r = manager_dump_topology(m, stdout); break;
        default: r = run(m); break;
        }
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
