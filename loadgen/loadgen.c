/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loadgen: the background loads of the contest benchmark, one subcommand to list them and one to
 * run one for a duration and report the work it did and the CPU it used.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "load.h"
#include "log.h"
#include "macro.h"

#define EXIT_USAGE 2

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig) {
        (void) sig;
        stop_requested = 1;
}

static void help(void) {
        printf("Usage: loadgen [OPTIONS] COMMAND ...\n"
               "\n"
               "Generates the background loads of the contest benchmark and reports the work\n"
               "each did and the CPU it used.\n"
               "\n"
               "Commands:\n"
               "  list                 List the loads: name, unit of work, description.\n"
               "  run LOAD [OPTIONS]   Run LOAD and report (see loadgen run --help).\n"
               "\n"
               "  -h --help            Show this help.\n"
               "     --version         Show the version.\n"
               "\n"
               "See loadgen(1).\n");
}

static void run_help(void) {
        printf("Usage: loadgen run LOAD [OPTIONS]\n"
               "\n"
               "Runs LOAD until the duration ends or SIGINT/SIGTERM, stops every process it\n"
               "started, then prints the work done, the elapsed time and the CPU used.\n"
               "\n"
               "  -d --duration=SECONDS  How long to run (default 1; decimals allowed).\n"
               "  -m --mem=SIZE          mem_load's buffer (default 256M; K/M/G/T binary).\n"
               "  -j --json              Print one JSON object with the raw figures.\n"
               "  -h --help              Show this help.\n");
}

static int cmd_list(void) {
        for (size_t i = 0; i < n_loads; i++)
                printf("%-14s %-18s %s\n", loads[i].name, loads[i].contest_unit,
                       loads[i].description);
        return 0;
}

static void print_result(const Load *l, const LoadResult *res, bool json) {
        uint64_t pct = res->elapsed_usec ? res->cpu_usec * 100 / res->elapsed_usec : 0;

        if (json) {
                printf("{\"load\": \"%s\", \"unit\": \"%s\", \"work\": %" PRIu64
                       ", \"contest_scale\": %" PRIu64 ", \"elapsed_usec\": %" PRIu64
                       ", \"cpu_usec\": %" PRIu64 ", \"cpu_pct\": %" PRIu64
                       ", \"interrupted\": %s}\n",
                       l->name, l->unit, res->work, l->contest_scale, res->elapsed_usec,
                       res->cpu_usec, pct, res->interrupted ? "true" : "false");
                return;
        }
        printf("%s: %" PRIu64 " %s in %" PRIu64 ".%02" PRIu64 " s, CPU %" PRIu64 "%%%s\n", l->name,
               res->work, l->unit, res->elapsed_usec / 1000000, res->elapsed_usec % 1000000 / 10000,
               pct, res->interrupted ? " (interrupted)" : "");
}

static int install_stop_handlers(void) {
        /* No SA_RESTART: a sleep or wait in progress returns at once. */
        struct sigaction sa = { .sa_handler = on_stop_signal };

        if (sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGTERM, &sa, NULL) < 0)
                return negative_errno();
        return 0;
}

static int cmd_run(int argc, char *argv[]) {
        static const struct option options[] = {
                { "duration", required_argument, NULL, 'd' },
                { "mem", required_argument, NULL, 'm' },
                { "json", no_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        LoadOptions o;
        LoadResult res;
        const Load *l;
        bool json = false;
        int c, r;

        load_options_init(&o);
        o.stop = &stop_requested;
        optind = 0; /* glibc: reinitialise for the subcommand's argv */
        while ((c = getopt_long(argc, argv, "d:m:jh", options, NULL)) >= 0) {
                switch (c) {
                case 'd':
                        if (parse_seconds(optarg, &o.duration_usec) < 0) {
                                log_error("Invalid duration \"%s\": want seconds > 0, e.g. 2.5.",
                                          optarg);
                                return EXIT_USAGE;
                        }
                        break;
                case 'm':
                        if (parse_size(optarg, &o.mem_bytes) < 0) {
                                log_error("Invalid size \"%s\": want e.g. 16M, 1G.", optarg);
                                return EXIT_USAGE;
                        }
                        break;
                case 'j': json = true; break;
                case 'h': run_help(); return 0;
                default: return EXIT_USAGE; /* getopt said why */
                }
        }
        if (optind != argc - 1) {
                log_error("%s; see loadgen run --help.",
                          optind >= argc ? "Missing LOAD" : "Too many arguments");
                return EXIT_USAGE;
        }
        l = load_find(argv[optind]);
        if (!l) {
                log_error("Unknown load \"%s\"; see loadgen list.", argv[optind]);
                return EXIT_USAGE;
        }
        r = install_stop_handlers();
        if (r < 0)
                return log_error_errno(r, "Failed to install signal handlers: %m"), 1;
        r = l->run(&o, &res);
        if (r < 0)
                return log_error_errno(r, "%s failed: %m", l->name), 1;
        print_result(l, &res, json);
        return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char *argv[]) {
        enum { ARG_VERSION = 0x100 };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                {},
        };
        int c;

        log_set_ident("loadgen");
        while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0) {
                switch (c) {
                case 'h': help(); return 0;
                case ARG_VERSION: puts("loadgen " CGBALANCE_VERSION); return 0;
                default: return EXIT_USAGE;
                }
        }
        if (optind >= argc) {
                log_error("Missing command; see loadgen --help.");
                return EXIT_USAGE;
        }
        if (streq(argv[optind], "list") && optind == argc - 1)
                return cmd_list();
        if (streq(argv[optind], "run"))
                return cmd_run(argc - optind, argv + optind);
        log_error("Unknown command \"%s\"; see loadgen --help.", argv[optind]);
        return EXIT_USAGE;
}
