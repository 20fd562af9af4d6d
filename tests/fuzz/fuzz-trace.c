/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The recording reader (lib/trace.c) on arbitrary bytes: no crash, no leak, no endless loop; every
 * tick it hands out is one the policy accepts with the topology it came with (the reader's checks
 * are the policy's: an index or CPU out of range is the reader's error, never the policy's), and
 * once it has failed it keeps failing the same way.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "trace.h"
#include "tunables.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        TraceReader *r = NULL;
        PolicyState *state = NULL;
        const Topology *topo = NULL;
        PolicyParams params;
        Tunables t;
        char why[256];
        TraceEvent e;
        int k;

        if (trace_reader_new_from_memory(data, size, &r, why, sizeof why) < 0)
                return 0;
        if (tunables_defaults(&t) < 0)
                abort();
        while ((k = trace_reader_next(r, &e, why, sizeof why)) > 0) {
                Plan *plan = NULL;

                if (e.kind == TRACE_EVENT_TOPOLOGY) {
                        topo = e.topology;
                        policy_state_free(state);
                        state = policy_state_new(topo);
                        if (!state || policy_params_from_tunables(&t, topo, &params) < 0)
                                abort();
                        continue;
                }
                if (e.kind != TRACE_EVENT_TICK)
                        continue;
                if (policy_plan(state, e.snap, topo, &params, e.now_usec, false, &plan) < 0)
                        abort(); /* the reader let through what the policy refuses */
                plan_free(plan);
        }
        if (k < 0 && trace_reader_next(r, &e, why, sizeof why) != k)
                abort();
        policy_state_free(state);
        tunables_free(&t);
        trace_reader_free(r);
        return 0;
}
