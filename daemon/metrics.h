/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What cgbalanced tells Prometheus (cgbalancectl(1), METRICS): its decisions, its groups and its
 * own cost, in the text formats of lib/openmetrics.h. PSI of the whole machine is node_exporter's
 * (node_pressure_*) and is not repeated here.
 *
 * Two ways out and no network listener: the bus method Metrics() (cgbalancectl metrics), and a
 * textfile for node_exporter's textfile collector ([metrics] textfile, every textfile_every
 * ticks), written to FILE.tmp beside it and renamed over it, mode 0644 whatever the umask so the
 * collector's user can read it. A failed write is counted (cgbalance_errors_total{kind=
 * "textfile"}) and logged once until a write works again; the file the daemon wrote is removed
 * when it stops or the config names another, so a stale file means a daemon that died.
 */

#include "macro.h"
#include "openmetrics.h"

typedef struct Manager Manager;
typedef struct Metrics Metrics;

/* Observes m (manager_add_observer()) until metrics_free(), which must come before
 * manager_free(). -ENOMEM, or manager_add_observer()'s -ENOSPC. */
int metrics_new(Manager *m, Metrics **ret);
/* Removes the textfile it wrote, stops observing; accepts NULL. */
Metrics *metrics_free(Metrics *x);
DEFINE_TRIVIAL_CLEANUP_FUNC(Metrics *, metrics_free);
#define _cleanup_metrics_ _cleanup_(metrics_freep)

/* The whole exposition in format into *ret (caller frees): 0, -ENOMEM or -EIO. */
int metrics_render(const Metrics *x, MetricsFormat format, char **ret);

/* Writes the textfile now (the tick does every textfile_every ticks): 0, or the error (counted,
 * logged once). Nothing when [metrics] textfile is empty. */
int metrics_write_textfile(Metrics *x);
