/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Human-readable views of a sample and of the plan made from it, for --once and Dump(). */

#include <stdio.h>

#include "cgroup.h"
#include "policy.h"
#include "sampler.h"
#include "topology.h"

/* The machine, per node and per CPU, then the managed groups and tasks. */
void report_snapshot(FILE *f, const PolicySnapshot *snap, const SamplerSystem *sys,
                     const Topology *topo, const CgroupLayout *layout);

/*
 * The plan, one action a line with its reason:
 *     move pid 1234 (comm) node 0 -> 1 mask 4-7: <reason>
 *     weight cgbalance.slice/a 100 -> 150: <reason>
 * snap (may be NULL) is the snapshot the plan was made from, for comms and cgroup paths ("?"
 * without). p may be NULL: nothing is written.
 */
void report_plan(FILE *f, const Plan *p, const PolicySnapshot *snap);
