/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What every loadgen command shares: the options that place a run (--cpus, --mem, --dir,
 * --other-dir, --quick, --no-sandbox), making the run's sandbox with an error a user can act on,
 * the SIGINT/SIGTERM flag every command (and every process it forks) polls, and the exit codes.
 */

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "cpumask.h"
#include "sandbox.h"

#define EXIT_USAGE 2
#define QUICK_RAM_BYTES (UINT64_C(64) << 20)
#define DEFAULT_OTHER_DIR "/tmp"

/* The signal that asked loadgen to stop (SIGINT, SIGTERM), or 0. */
extern volatile sig_atomic_t cli_stop;

/* Sets cli_stop on SIGINT and SIGTERM, without SA_RESTART: a sleep or wait returns at once. */
int cli_install_stop_handlers(void);

/*
 * For a process loadgen forked that ends on its own SIGINT or SIGTERM (a load, a scenario's
 * instance, a ring member): its copy of cli_stop cleared and the handlers above installed, so
 * the one flag serves it too. Async-signal-safe.
 */
void cli_stop_rearm(void);

/* Logs that the run was interrupted and cleaned up; returns the shell's code for the signal. */
int cli_interrupted(void);

typedef struct CliCommon {
        CpuMask *cpus; /* NULL: all of loadgen's */
        uint64_t ram_bytes; /* 0: not given */
        const char *dir, *other_dir;
        bool quick, no_sandbox;
} CliCommon;

#define CLI_COMMON_INIT \
        { .other_dir = DEFAULT_OTHER_DIR }

void cli_common_done(CliCommon *c);

/* Handles one of the shared options (getopt's c and optarg): 1 if it was one, 0 if not, -EINVAL
 * (logged) for a bad value. */
int cli_parse_common(int c, const char *arg, CliCommon *o);

/* getopt_long() entries of the shared options; each command lists the ones it takes. 'h' is
 * --help. */
#define CLI_OPT_CPUS \
        { "cpus", required_argument, NULL, 'c' }
#define CLI_OPT_MEM \
        { "mem", required_argument, NULL, 'm' }
#define CLI_OPT_DIR \
        { "dir", required_argument, NULL, 'D' }
#define CLI_OPT_OTHER_DIR \
        { "other-dir", required_argument, NULL, 'O' }
#define CLI_OPT_QUICK \
        { "quick", no_argument, NULL, 'q' }
#define CLI_OPT_NO_SANDBOX \
        { "no-sandbox", no_argument, NULL, 'S' }
#define CLI_OPT_HELP \
        { "help", no_argument, NULL, 'h' }

#define CLI_HELP_CPUS \
        "  -c --cpus=LIST         Confine the run to these CPUs (a cpuset; default: all).\n"
#define CLI_HELP_MEM                                                                              \
        "  -m --mem=SIZE          \"RAM\" of the loads: the load group's memory limit (default\n" \
        "                         256M, 64M with --quick; K/M/G binary). io_load writes and\n"    \
        "                         read_load reads a file this size; mem_load references 90%%.\n"
#define CLI_HELP_DIR \
        "     --dir=DIR           Where the run's files go (default " SANDBOX_DEFAULT_DIR ").\n"
#define CLI_HELP_OTHER_DIR \
        "     --other-dir=DIR     io_other writes here (default " DEFAULT_OTHER_DIR ").\n"
#define CLI_HELP_QUICK "  -q --quick             The small job tree and short lead, for tests.\n"
#define CLI_HELP_NO_SANDBOX                                                                \
        "     --no-sandbox        No cgroups (for unprivileged use): --cpus becomes the\n" \
        "                         affinity, --mem is not enforced, no memory peak.\n"

/*
 * A number from min to max for --name (no sign, no junk, no overflow): 0, or -EINVAL after
 * logging "Invalid --name "arg": want a number from min to max.".
 */
int cli_parse_unsigned(const char *name, const char *arg, unsigned min, unsigned max,
                       unsigned *ret);

/* The run's sandbox from the shared options; every error logged in words a user can act on. */
int cli_make_sandbox(const CliCommon *c, Sandbox **ret);
