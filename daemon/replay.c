/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "replay.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "log.h"
#include "policy.h"
#include "report.h"
#include "trace.h"
#include "tunables.h"

#define USEC_PER_MINUTE UINT64_C(60000000)

/* One configuration replayed: its tunables, params for the topology in force, its state. */
typedef struct Side {
        const char *name;
        Tunables tunables;
        bool loaded;
        PolicyParams params;
        PolicyState *state;
} Side;

typedef struct Minute {
        ReplayCounts recorded, other;
        uint64_t ticks, differ;
} Minute;

typedef struct Replay {
        const ReplayOptions *o;
        FILE *out;
        TraceReader *reader;
        const Topology *topo;
        Side rec, other;
        bool what_if;
        Minute *minutes;
        size_t n_minutes;
        uint64_t first_now;
        bool have_first;
        unsigned shown;
        FILE *detail; /* the ticks shown, printed after the summary */
        char *detail_buf;
        size_t detail_size;
        uint64_t first_mismatch; /* of the recorded-config replay; 0 none */
        ReplayResult res;
} Replay;

static void side_done(Side *s) {
        if (s->loaded)
                tunables_free(&s->tunables);
        policy_state_free(s->state);
}

static int side_params(Side *s, const Topology *topo) {
        int r;

        if (!s->loaded || !topo)
                return 0;
        r = policy_params_from_tunables(&s->tunables, topo, &s->params);
        if (r < 0)
                return log_error_errno(r, "Failed to derive the policy's parameters of %s: %m",
                                       s->name);
        return 0;
}

/* A new topology: the daemon built a new PolicyState with it, so does the replay. */
static int side_topology(Side *s, const Topology *topo) {
        policy_state_free(s->state);
        s->state = policy_state_new(topo);
        if (!s->state)
                return log_error_errno(-ENOMEM, "Out of memory.");
        return side_params(s, topo);
}

static void count(ReplayCounts *c, const Plan *p) {
        c->moves += p->n_moves;
        for (size_t i = 0; i < p->n_moves; i++)
                c->cross_node += p->moves[i].from_node != p->moves[i].to_node;
        c->weights += p->n_weights;
        c->escalations += p->n_escalations;
}

static Minute *minute_of(Replay *rp, uint64_t now) {
        size_t i;

        if (!rp->have_first) {
                rp->first_now = now;
                rp->have_first = true;
        }
        i = (size_t) ((now - rp->first_now) / USEC_PER_MINUTE);
        if (i >= rp->n_minutes) {
                Minute *m = reallocarray(rp->minutes, i + 1, sizeof *m);

                if (!m)
                        return NULL;
                memset(m + rp->n_minutes, 0, (i + 1 - rp->n_minutes) * sizeof *m);
                rp->minutes = m;
                rp->n_minutes = i + 1;
        }
        return &rp->minutes[i];
}

static int plan_with(Side *s, const Topology *topo, const TraceEvent *e, Plan **ret) {
        PolicyParams params = s->params;

        if (e->flags & TRACE_TICK_WEIGHTS_IGNORED)
                policy_params_ignore_weights(&params);
        return policy_plan(s->state, e->snap, topo, &params, e->now_usec,
                           e->flags & TRACE_TICK_FORCE_NODE_BALANCE, ret);
}

static void show_plan(FILE *f, const char *who, const Plan *p, const PolicySnapshot *snap) {
        fprintf(f, "  %s:\n", who);
        if (p->n_moves + p->n_weights + p->n_escalations == 0) {
                fputs("    nothing\n", f);
                return;
        }
        {
                _cleanup_free_ char *buf = NULL;
                size_t size = 0;
                FILE *m = open_memstream(&buf, &size);

                if (!m)
                        return;
                report_plan(m, p, snap);
                fclose(m);
                for (char *line = buf, *next; line && *line; line = next) {
                        next = strchr(line, '\n');
                        if (next)
                                *next++ = '\0';
                        fprintf(f, "    %s\n", line);
                }
        }
}

static void show_tick(Replay *rp, const TraceEvent *e, const char *a_name, const Plan *a,
                      const char *b_name, const Plan *b) {
        uint64_t at = e->now_usec - rp->first_now;

        if (rp->o->json || rp->shown >= rp->o->show)
                return;
        rp->shown++;
        fprintf(rp->detail, "tick %" PRIu64 " (%" PRIu64 ":%02" PRIu64 ".%01" PRIu64 "):\n",
                e->tick, at / USEC_PER_MINUTE, at / 1000000 % 60, at / 100000 % 10);
        show_plan(rp->detail, a_name, a, e->snap);
        show_plan(rp->detail, b_name, b, e->snap);
}

static int replay_tick(Replay *rp, const TraceEvent *e) {
        _cleanup_plan_ Plan *mine = NULL, *other = NULL;
        Minute *m;
        int r;

        if (!rp->rec.state)
                return log_error_errno(-EINVAL, "%s: a tick before its topology", rp->o->path);
        m = minute_of(rp, e->now_usec);
        if (!m)
                return log_error_errno(-ENOMEM, "Out of memory.");
        r = plan_with(&rp->rec, rp->topo, e, &mine);
        if (r < 0)
                return log_error_errno(r, "%s: tick %" PRIu64 ": the policy refused its input: %m",
                                       rp->o->path, e->tick);
        rp->res.ticks++;
        m->ticks++;
        count(&m->recorded, mine);
        count(&rp->res.recorded, mine);
        if (plan_equal(mine, e->plan))
                rp->res.identical++;
        else {
                if (!rp->first_mismatch)
                        rp->first_mismatch = e->tick;
                if (!rp->what_if)
                        show_tick(rp, e, "recorded", e->plan, "replayed", mine);
        }
        if (!rp->what_if)
                return 0;
        r = plan_with(&rp->other, rp->topo, e, &other);
        if (r < 0)
                return log_error_errno(r, "%s: tick %" PRIu64 ": the policy refused its input: %m",
                                       rp->o->path, e->tick);
        count(&m->other, other);
        count(&rp->res.other, other);
        if (!plan_equal(mine, other)) {
                m->differ++;
                rp->res.differ++;
                show_tick(rp, e, "recorded configuration", mine, rp->o->config_path, other);
        }
        return 0;
}

static int load_recorded_config(Replay *rp, const TraceEvent *e) {
        ConfigError err = { 0 };
        Tunables t;
        int r;

        r = config_load_string(&tunables_schema, "recorded configuration", e->config,
                               e->config_size, &t, &err);
        if (r < 0)
                return log_error_errno(r, "%s: its configuration: %s", rp->o->path, err.message);
        if (rp->rec.loaded)
                tunables_free(&rp->rec.tunables);
        rp->rec.tunables = t;
        rp->rec.loaded = true;
        return side_params(&rp->rec, rp->topo);
}

static void print_counts(FILE *f, const ReplayCounts *c) {
        fprintf(f, " %6" PRIu64 " %6" PRIu64 " %7" PRIu64 " %6" PRIu64, c->moves, c->cross_node,
                c->weights, c->escalations);
}

static void print_table(Replay *rp) {
        FILE *f = rp->out;

        fprintf(f, "\n%-6s |%28s |%28s | %s\n", "minute", "recorded configuration",
                rp->o->config_path, "ticks differing");
        fprintf(f, "%-6s | %6s %6s %7s %6s | %6s %6s %7s %6s |\n", "", "moves", "cross", "weights",
                "levers", "moves", "cross", "weights", "levers");
        for (size_t i = 0; i < rp->n_minutes; i++) {
                const Minute *m = &rp->minutes[i];

                if (m->ticks == 0)
                        continue;
                fprintf(f, "%6zu |", i);
                print_counts(f, &m->recorded);
                fputs(" |", f);
                print_counts(f, &m->other);
                fprintf(f, " | %" PRIu64 " of %" PRIu64 "\n", m->differ, m->ticks);
        }
        fprintf(f, "%-6s |", "all");
        print_counts(f, &rp->res.recorded);
        fputs(" |", f);
        print_counts(f, &rp->res.other);
        fprintf(f, " | %" PRIu64 " of %" PRIu64 "\n", rp->res.differ, rp->res.ticks);
}

static void json_counts(Json *j, const char *key, const ReplayCounts *c) {
        json_key(j, key);
        json_begin(j, '{');
        json_u64(j, "moves", c->moves);
        json_u64(j, "cross_node_moves", c->cross_node);
        json_u64(j, "weight_changes", c->weights);
        json_u64(j, "lever_changes", c->escalations);
        json_end(j, '}');
}

static void print_json(Replay *rp) {
        Json j = { .f = rp->out };

        json_begin(&j, '{');
        json_string(&j, "recording", rp->o->path);
        json_string(&j, "program", trace_reader_program(rp->reader));
        json_string(&j, "host", trace_reader_host(rp->reader));
        json_u64(&j, "ticks", rp->res.ticks);
        json_double(&j, "seconds", rp->res.seconds, 1);
        json_u64(&j, "identical", rp->res.identical);
        json_counts(&j, "recorded_configuration", &rp->res.recorded);
        if (rp->what_if) {
                json_string(&j, "config", rp->o->config_path);
                json_counts(&j, "other_configuration", &rp->res.other);
                json_u64(&j, "ticks_differing", rp->res.differ);
        }
        json_end(&j, '}');
}

static int replay_loop(Replay *rp) {
        char why[256] = "";
        TraceEvent e;
        int r, k;

        while ((k = trace_reader_next(rp->reader, &e, why, sizeof why)) > 0) {
                switch (e.kind) {
                case TRACE_EVENT_TOPOLOGY:
                        rp->topo = e.topology;
                        r = side_topology(&rp->rec, rp->topo);
                        if (r >= 0 && rp->what_if)
                                r = side_topology(&rp->other, rp->topo);
                        break;
                case TRACE_EVENT_CONFIG: r = load_recorded_config(rp, &e); break;
                default:
                        r = replay_tick(rp, &e);
                        rp->res.seconds = (double) (e.now_usec - rp->first_now) / 1e6;
                        break;
                }
                if (r < 0)
                        return r;
        }
        if (k == -EPIPE) /* a recording a crash cut short: what came before it is whole */
                log_warning("%s: %s; replayed the %" PRIu64 " ticks before it.", rp->o->path, why,
                            rp->res.ticks);
        else if (k < 0)
                return log_error_errno(k, "%s: %s", rp->o->path, why);
        return 0;
}

int replay_run(const ReplayOptions *o, FILE *out, ReplayResult *ret) {
        Replay rp = { .o = o, .out = out, .rec = { .name = "the recorded configuration" } };
        char why[256] = "";
        int r;

        r = trace_reader_open(o->path, &rp.reader, why, sizeof why);
        if (r < 0)
                return log_error_errno(r, "%s: %s", o->path, why);
        rp.detail = open_memstream(&rp.detail_buf, &rp.detail_size);
        if (!rp.detail) {
                r = log_error_errno(-ENOMEM, "Out of memory.");
                goto finish;
        }
        if (o->config_path) {
                ConfigError err = { 0 };

                r = tunables_load(o->config_path, false, &rp.other.tunables, &err);
                if (r < 0) {
                        log_error_errno(r, "%s", err.message);
                        goto finish;
                }
                rp.other.loaded = true;
                rp.other.name = o->config_path;
                rp.what_if = true;
        }
        r = replay_loop(&rp);
        if (r < 0)
                goto finish;
        if (o->json)
                print_json(&rp);
        else {
                fprintf(out, "%s: %" PRIu64 " ticks over %.1f s, recorded by %s on %s.\n", o->path,
                        rp.res.ticks, rp.res.seconds, trace_reader_program(rp.reader),
                        trace_reader_host(rp.reader));
                fprintf(out,
                        "With its own configuration: the same plan on %" PRIu64 " of %" PRIu64
                        " ticks",
                        rp.res.identical, rp.res.ticks);
                if (rp.first_mismatch)
                        fprintf(out, " (the first that differs: tick %" PRIu64 ")",
                                rp.first_mismatch);
                fputs(".\n", out);
                if (rp.what_if)
                        print_table(&rp);
                fflush(rp.detail);
                if (rp.shown)
                        fprintf(out, "\n%s %u of %" PRIu64 " ticks that differ:\n%s",
                                rp.shown < (rp.what_if ? rp.res.differ
                                                       : rp.res.ticks - rp.res.identical)
                                        ? "The first"
                                        : "The",
                                rp.shown,
                                rp.what_if ? rp.res.differ : rp.res.ticks - rp.res.identical,
                                rp.detail_buf);
        }
        *ret = rp.res;
finish:
        if (rp.detail)
                fclose(rp.detail);
        free(rp.detail_buf);
        side_done(&rp.rec);
        side_done(&rp.other);
        free(rp.minutes);
        trace_reader_free(rp.reader);
        return r;
}
