/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The daemon's state and main loop (sd-event): a timer tick that samples, plans and acts;
 * SIGTERM/SIGINT restore what the daemon changed and stop; SIGHUP reloads the config, keeping the
 * old one on any error. The policy is lib/policy.c; this file only moves data between the
 * sampler, the policy and the actuator, and owns their lifetimes.
 */

#include <stdbool.h>
#include <stdio.h>

#include "macro.h"

typedef struct ManagerOptions {
        const char *config_path; /* NULL: TUNABLES_DEFAULT_PATH, which may be absent */
        const char *root; /* --root: read /proc and /sys below it; never act */
        bool dry_run; /* --dry-run: overrides the config's dry_run */
} ManagerOptions;

typedef struct Manager Manager;

/* Loads the config and the machine model. Errors are logged here; returns <0 to exit on. */
int manager_new(const ManagerOptions *o, Manager **ret);
/* Restores nothing: manager_stop() does that. Accepts NULL. */
Manager *manager_free(Manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);
#define _cleanup_manager_ _cleanup_(manager_freep)

/* Reconciles a crashed run's record, arms the tick and the signals, and runs until a stop signal;
 * then restores what it changed. Returns the exit status's negative errno, or 0. */
int manager_run(Manager *m);

/* --once: one tick (two samples an interval apart; one since-boot sample under --root), prints
 * the snapshot and the plan to f, changes nothing. */
int manager_once(Manager *m, FILE *f);

/* --dump-topology */
int manager_dump_topology(Manager *m, FILE *f);
