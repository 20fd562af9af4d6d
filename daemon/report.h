/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Human-readable views of a sample, for --once and the debug log. */

#include <stdio.h>

#include "cgroup.h"
#include "policy.h"
#include "sampler.h"
#include "topology.h"

/* The machine, per node and per CPU, then the managed groups and tasks. */
void report_snapshot(FILE *f, const PolicySnapshot *snap, const SamplerSystem *sys,
                     const Topology *topo, const CgroupLayout *layout);
