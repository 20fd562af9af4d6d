/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Shared by the policy's two files, policy.c (validation, placement, weights, the state) and
 * policy-ladder.c (the escalation ladder): not an API. Everything here is pure.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"
#include "policy.h"

/* Where a protected group's pressure (or latency) is against its mark. */
typedef enum PolicyLevel {
        POLICY_LEVEL_BETWEEN, /* between half the mark and the mark */
        POLICY_LEVEL_ABOVE,
        POLICY_LEVEL_BELOW, /* below half the mark (and, with a latency target, below half it) */
} PolicyLevel;

/* A group's place on the ladder, kept per path in PolicyState with since when it holds. */
typedef enum LadderMode {
        LADDER_NONE, /* nothing to do: unprotected with nothing of ours, or protected and held */
        LADDER_UP, /* protected, above its mark at weight_max: its contenders step up */
        LADDER_DOWN, /* protected, below half its mark: its contenders step back */
        LADDER_THROTTLED, /* protected, throttled by its own quota or an ancestor's: its
                           * contenders step back */
        LADDER_RELEASE, /* something of ours on it, and no protected group it contends with */
} LadderMode;

typedef struct LadderHold {
        LadderMode mode;
        uint64_t since_usec; /* when the group entered mode, or its last step */
        uint32_t busy_permyriad; /* a protected group: the most it used while above its mark */
        /* a protected group: the steps up taken for it and not given back (depth), the most it
         * had (peak), and when a step was last given back for it (escalate_memory) */
        uint32_t depth, peak;
        uint64_t back_usec;
} LadderHold;

/* Whether a protected group using util, and at most busy while above its mark, has gone quiet
 * (POLICY_QUIET_PERMYRIAD, POLICY_QUIET_SHARE). */
static inline bool policy_quiet(uint32_t util, uint32_t busy) {
        return util < POLICY_QUIET_PERMYRIAD || (uint64_t) util * POLICY_QUIET_SHARE < busy;
}

/* The level of protected group cg whose pressure (PSI, or its tasks' wait) is pressure. */
PolicyLevel policy_group_level(const PolicyCgroup *cg, uint32_t pressure, const PolicyParams *p);

/*
 * The measure behind the level, for reasons: "pressure 30.00% > 10.00%" (or "wait (no PSI)", or
 * "latency 2.10 ms > 1.00 ms" when latency put it above); below: "pressure 2.00% < 5.00%", with
 * ", latency 0.20 ms < 0.50 ms" when a latency target applies.
 */
void policy_level_text(const PolicyCgroup *cg, uint32_t pressure, const PolicyParams *p,
                       PolicyLevel level, char *buf, size_t size);

/* Word by word: once per task and protected group, on masks of up to 8192 CPUs. */
bool policy_masks_intersect(const CpuMask *a, const CpuMask *b);
/* "1.52" for a permyriad load (CPUs), "3.0 s" for microseconds. */
const char *policy_fmt_load(char buf[static 32], uint64_t permyriad);
const char *policy_fmt_usec(char buf[static 32], uint64_t usec);

/*
 * Plans the ladder's steps into plan->escalations (room for one per group), given each group's
 * pressure (by index) and its hold of the last tick (old[g]; mode LADDER_NONE for a group the
 * state did not know). Writes every group's hold for the next tick to ret_holds[g].
 * Returns -ENOMEM; the plan may then hold some steps (the caller frees it).
 */
int policy_ladder_plan(const PolicySnapshot *snap, const PolicyParams *p, uint64_t now_usec,
                       const uint32_t *pressure, const LadderHold *old, LadderHold *ret_holds,
                       Plan *plan);
