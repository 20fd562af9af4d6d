/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * loadgen compare and loadgen sweep: one suite (contest or a benchmark) run once per
 * configuration, as the seed mails ran each benchmark once per kernel or tunable value, and its
 * table printed with one row (or column) per configuration.
 *
 *   loadgen compare [--config A.conf ...] [--no-daemon] [--static SPEC ...] [--no-default]
 *                   [--json[=FILE]] [--daemon=PATH] -- SUITE ...
 *   loadgen sweep KEY=V1,V2,... [--config BASE.conf] [--no-daemon] ... -- SUITE ...
 *
 * Each row re-executes loadgen as `loadgen SUITE [OPTIONS] --label=ROW --json=FILE` with its
 * stdout captured; a daemon row starts cgbalanced first (on a config loadgen writes, validated
 * with the daemon's own parser before the first row runs), waits for its READY=1, and stops it
 * with SIGTERM, which restores what it changed, once the suite is done. Meanwhile the row's
 * timeline (loadgen/timeline.h) samples the nodes' load every second and records the daemon's
 * moves and weight changes from its stderr. A static row (--static SPEC, cli.h) runs no daemon:
 * its suite runs as `loadgen --static=SPEC SUITE ...`, which makes its groups with the setting
 * and leaves it, what an operator would do instead of running cgbalanced.
 *
 * The tables are merged by the pure compare_merge() (compare_merge.h): how depends on the
 * suite's layout, the way the seed mails put configurations side by side.
 */

#include "compare_merge.h"

/* `loadgen compare ...` and `loadgen sweep ...`: argv[0] is the command. Exit codes as loadgen's:
 * 0, 1 for a failure, 2 for bad arguments, 128+signal when interrupted. */
int compare_main(int argc, char *argv[]);
int sweep_main(int argc, char *argv[]);
