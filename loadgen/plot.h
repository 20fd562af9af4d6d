/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * `loadgen plot RESULTS.json [--out PREFIX]`: draws the results of `loadgen compare` and
 * `loadgen sweep` with gnuplot, as PNG and SVG:
 *   PREFIX-summary.{png,svg}      contest: grouped bars of Ratio per load, a bar per
 *                                 configuration; a benchmark: its main figure against its axis,
 *                                 a line (or bar set) per configuration
 *   PREFIX-timeline-ROW.{png,svg} each daemon row: busy CPUs per node over time, the daemon's
 *                                 moves and weight changes marked
 * PREFIX defaults to RESULTS.json's path without ".json". The data and script go to a temporary
 * directory, removed afterwards (kept, and named, when gnuplot fails).
 */

/* argv[0] is "plot". Returns the exit code: 0; 1 for a bad results file, a missing gnuplot or
 * a failed one (each logged, naming the file and what is wrong); EXIT_USAGE for bad arguments. */
int plot_main(int argc, char *argv[]);
