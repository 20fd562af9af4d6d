/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What every loadgen command shares: the options that place a run (--cpus, --mem, --dir,
 * --other-dir, --quick, --no-sandbox, --no-host-reserve) and those of its report (--label, --json,
 * --duration), parsed here once so each means one thing everywhere, making the run's sandbox with
 * an error a user can act on, the SIGINT/SIGTERM flag every command (and every process it forks)
 * polls, and the exit codes.
 */

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cpumask.h"
#include "json.h"
#include "sandbox.h"
#include "tree.h"

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
        uint64_t duration_usec; /* --duration; 0: not given */
        const char *dir, *other_dir;
        const char *label; /* --label; NULL: not given */
        const char *json; /* NULL: no --json; "": --json (or --json=-), stdout; else --json=FILE */
        unsigned tree_files; /* --tree-files; 0: not given */
        bool quick, no_sandbox;
        bool no_host_reserve; /* the run's group uncapped (sandbox.h: the host's reserve) */
} CliCommon;

#define CLI_COMMON_INIT \
        { .other_dir = DEFAULT_OTHER_DIR }

void cli_common_done(CliCommon *c);

/* Handles one of the shared options (getopt's c and optarg): 1 if it was one, 0 if not, -EINVAL
 * (logged) for a bad value. Only --cpus reads anything (the CPUs loadgen may use). */
int cli_parse_common(int c, const char *arg, CliCommon *o);

/*
 * --json everywhere: without a value the JSON goes to stdout instead of the table or report;
 * with one (--json=FILE, -jFILE) into FILE, the table still on stdout. "-" is stdout too.
 */
typedef enum CliJsonTo {
        CLI_JSON_NONE,
        CLI_JSON_STDOUT,
        CLI_JSON_FILE,
} CliJsonTo;

/* A command's --label and --json after parsing: *label keeps the command's default unless
 * --label was given; label may be NULL for a command without one. */
void cli_take_report(const CliCommon *co, const char **label, const char **json);

/* The job tree of a command: --quick's or the default, with --tree-files' number of files. */
void cli_tree_options(const CliCommon *co, TreeOptions *ret);

/* Pure: where json (CliCommon.json) sends the JSON. */
CliJsonTo cli_json_to(const char *json);

/* Opens where json sends the JSON: *ret is NULL (no --json), stdout (not to be closed) or FILE
 * opened for writing (*ret_owned then, to fclose()). 0, or fopen()'s -errno (logged). */
int cli_json_open(const char *json, FILE **ret, bool *ret_owned);

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
/* Long-only shared options take values above any command's own (0x100 onwards) and every
 * letter: cli_parse_common() sees each option first ('T' is hackbench's --threads). */
#define CLI_ARG_TREE_FILES 0x1000
#define CLI_OPT_TREE_FILES \
        { "tree-files", required_argument, NULL, CLI_ARG_TREE_FILES }
#define CLI_OPT_NO_SANDBOX \
        { "no-sandbox", no_argument, NULL, 'S' }
/* Every command that makes a sandbox takes it. */
#define CLI_ARG_NO_HOST_RESERVE 0x1001
#define CLI_OPT_NO_HOST_RESERVE \
        { "no-host-reserve", no_argument, NULL, CLI_ARG_NO_HOST_RESERVE }
#define CLI_OPT_HELP \
        { "help", no_argument, NULL, 'h' }
#define CLI_OPT_JSON \
        { "json", optional_argument, NULL, 'j' }
#define CLI_OPT_LABEL \
        { "label", required_argument, NULL, 'L' }
#define CLI_OPT_DURATION \
        { "duration", required_argument, NULL, 'd' }
/* getopt's short options of the above, for the optstring: -jFILE (no space) as --json=FILE. */
#define CLI_SHORT_JSON "j::"
#define CLI_SHORT_LABEL "L:"
#define CLI_SHORT_DURATION "d:"

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
#define CLI_HELP_TREE_FILES                                                                   \
        "     --tree-files=N      Source files of the job tree, 1 to 10000 (default 130, 7\n" \
        "                         with --quick): a smaller or larger job.\n"
#define CLI_HELP_JSON                                                                  \
        "  -j --json[=FILE]       The raw figures as JSON: on stdout instead of the\n" \
        "                         table, or in FILE (--json=FILE, -jFILE) beside it.\n"
#define CLI_HELP_NO_SANDBOX                                                                \
        "     --no-sandbox        No cgroups (for unprivileged use): --cpus becomes the\n" \
        "                         affinity, --mem is not enforced, no memory peak.\n"
#define CLI_HELP_NO_HOST_RESERVE                                                               \
        "     --no-host-reserve   Let the run take every CPU. By default its cgroup may use\n" \
        "                         all CPUs but half of one, which the rest of the machine\n"   \
        "                         keeps: a load must not starve its host.\n"

/*
 * A command's report as json (CliCommon.json) says: table(stdout, userdata) unless the JSON goes
 * to stdout instead, then write_json(j, userdata) (one JSON value) where the JSON goes. 0, or
 * -errno after logging a failed open or write.
 */
typedef void (*CliTableFn)(FILE *f, void *userdata);
typedef void (*CliJsonFn)(Json *j, void *userdata);
int cli_report(const char *json, CliTableFn table, CliJsonFn write_json, void *userdata);

/*
 * A number from min to max for --name (no sign, no junk, no overflow): 0, or -EINVAL after
 * logging "Invalid --name "arg": want a number from min to max.".
 */
int cli_parse_unsigned(const char *name, const char *arg, unsigned min, unsigned max,
                       unsigned *ret);

/*
 * --static: what an operator sets by hand on the run's groups instead of running cgbalanced
 * (SandboxStatic), one or more settings joined by '+':
 *
 *   SPEC    := SETTING [ "+" SETTING ]...
 *   SETTING := GROUP "=" ( "weight:" N | "idle" )     N: 1..10000
 *
 * GROUP is job or load, or the NAME of a scenario's [group NAME] (letters, digits, '_', '-';
 * SandboxStatic.named, at most SANDBOX_STATIC_MAX_NAMED), checked against the scenario when it
 * runs (cli_check_static_groups()). "job=weight:1000" (the job's cpu.weight 1000, cpu.shares
 * 10240 on v1), "load=idle" (the load group's cpu.idle 1), "job=weight:1000+load=idle",
 * "rings=idle". A group at most once. Pure: 0 and *ret, or
 * -EINVAL with why (why_size bytes, NUL-terminated, no final period) naming the bad part, for
 * "Invalid --static \"SPEC\": WHY.".
 */
int cli_parse_static(const char *spec, SandboxStatic *ret, char *why, size_t why_size);

/*
 * Whether this kernel can apply s, --static spec: with a cpu.idle setting in s, whether groups
 * have cpu.idle (asked of SANDBOX_SLICE, made if missing: the v2 root group has no cpu.idle
 * file). 0 (also when s sets no idle, or cgroups cannot be asked at all: making the sandbox then
 * says why), or -EOPNOTSUPP after logging that --static spec needs cpu.idle, Linux 5.15+.
 */
int cli_check_static(const SandboxStatic *s, const char *spec);
/* The same in layout l (a fixture's), whose SANDBOX_SLICE group exists: reads only. */
int cli_check_static_at(const CgroupLayout *l, const SandboxStatic *s, const char *spec);

/*
 * Whether every scenario group s names is one of the n groups in names (NULL, 0: a run, contest or
 * benchmark, which have only job and load). 0, or -EINVAL after logging the name and the groups
 * there are (what: "scenario NAME" or NULL).
 */
int cli_check_static_groups(const SandboxStatic *s, const char *const *names, size_t n,
                            const char *what);

/* loadgen --static, set by main() before the command runs: every sandbox the command makes
 * (cli_make_sandbox()) gets it. Nothing set by default. */
extern SandboxStatic cli_static;

/* The run's sandbox from the shared options, with cli_static; every error logged in words a
 * user can act on. A host's reserve the kernel did not take is a warning, once: the run goes on. */
int cli_make_sandbox(const CliCommon *c, Sandbox **ret);
