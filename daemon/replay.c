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
        bool follows; /* takes the recorded configuration (then the sets) at each CONFIG */
        Tunables tunables;
        bool loaded;
        PolicyParams params;
        PolicyState *state;
} Side;

/*
 * The what-if's own weights. A recording's snapshots hold the weights the recorded daemon set;
 * the other configuration would have set others, and its next plan starts from those: a group it
 * changed has its own weight, one only the recorded daemon changed the weight it had before.
 * (Task placement and the levers past the weight are as recorded: where the other's moves would
 * have put tasks, and what that would have done to the loads, takes a model of the machine;
 * loadgen simulate is that.)
 */
typedef struct WeightOverlay {
        char *path;
        bool has_orig, has_mine;
        uint32_t orig, mine;
} WeightOverlay;

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
        WeightOverlay *overlay;
        size_t n_overlay;
        PolicyCgroup *other_groups; /* the snapshot's groups with the what-if's weights */
        size_t cap_other_groups;
        Minute *minutes;
        size_t n_minutes;
        uint64_t first_now;
        bool have_first;
        unsigned shown;
        char name_buf[256]; /* the what-if's name in the tables */
        FILE *detail; /* the ticks shown, printed after the summary */
        char *detail_buf;
        size_t detail_size;
        uint64_t first_mismatch; /* of the recorded-config replay; 0 none */
        ReplayResult res;
} Replay;

/* "OTHER.conf", "OTHER.conf + key=value", or "recorded + key=value". */
static const char *what_if_name(const ReplayOptions *o, char *buf, size_t size) {
        size_t n = (size_t) snprintf(buf, size, "%s", o->config_path ? o->config_path : "recorded");

        for (char **s = o->sets; s && *s && n < size; s++)
                n += (size_t) snprintf(buf + n, size - n, "%s%s", s == o->sets ? " + " : ", ", *s);
        return buf;
}

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

static int plan_with(Side *s, const Topology *topo, const TraceEvent *e, const PolicySnapshot *snap,
                     Plan **ret) {
        PolicyParams params = s->params;

        if (e->flags & TRACE_TICK_WEIGHTS_IGNORED)
                policy_params_ignore_weights(&params);
        return policy_plan(s->state, snap, topo, &params, e->now_usec,
                           e->flags & TRACE_TICK_FORCE_NODE_BALANCE, ret);
}

static WeightOverlay *overlay_get(Replay *rp, const char *path) {
        WeightOverlay *o;

        for (size_t i = 0; i < rp->n_overlay; i++)
                if (streq(rp->overlay[i].path, path))
                        return &rp->overlay[i];
        o = reallocarray(rp->overlay, rp->n_overlay + 1, sizeof *o);
        if (!o)
                return NULL;
        rp->overlay = o;
        o = &rp->overlay[rp->n_overlay];
        *o = (WeightOverlay){ .path = strdup(path) };
        if (!o->path)
                return NULL;
        rp->n_overlay++;
        return o;
}

/* Notes the weights a plan set: the recorded daemon's (first: what the group had before) or the
 * what-if's own. */
static int overlay_note(Replay *rp, const PolicySnapshot *snap, const Plan *p, bool mine) {
        for (size_t i = 0; i < p->n_weights; i++) {
                const PlanWeight *w = &p->weights[i];
                WeightOverlay *o = overlay_get(rp, snap->cgroups[w->cgroup].path);

                if (!o)
                        return -ENOMEM;
                if (mine) {
                        o->mine = w->to;
                        o->has_mine = true;
                } else if (!o->has_orig) {
                        o->orig = w->from;
                        o->has_orig = true;
                }
        }
        return 0;
}

/* The snapshot as the what-if sees it: its own weights. */
static int overlay_snapshot(Replay *rp, const PolicySnapshot *snap, PolicySnapshot *ret) {
        *ret = *snap;
        if (rp->n_overlay == 0)
                return 0;
        if (greedy_realloc((void **) &rp->other_groups, &rp->cap_other_groups, snap->n_cgroups,
                           sizeof *rp->other_groups, 16) < 0)
                return -ENOMEM;
        memcpy(rp->other_groups, snap->cgroups, snap->n_cgroups * sizeof *snap->cgroups);
        for (size_t i = 0; i < snap->n_cgroups; i++)
                for (size_t k = 0; k < rp->n_overlay; k++) {
                        const WeightOverlay *o = &rp->overlay[k];

                        if (!streq(o->path, snap->cgroups[i].path))
                                continue;
                        if (o->has_mine)
                                rp->other_groups[i].weight = o->mine;
                        else if (o->has_orig)
                                rp->other_groups[i].weight = o->orig;
                        break;
                }
        ret->cgroups = rp->other_groups;
        return 0;
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
        PolicySnapshot snap;
        Minute *m;
        int r;

        if (!rp->rec.state)
                return log_error_errno(-EINVAL, "%s: a tick before its topology", rp->o->path);
        m = minute_of(rp, e->now_usec);
        if (!m)
                return log_error_errno(-ENOMEM, "Out of memory.");
        r = plan_with(&rp->rec, rp->topo, e, e->snap, &mine);
        if (r < 0)
                return log_error_errno(r, "%s: tick %" PRIu64 ": the policy refused its input: %m",
                                       rp->o->path, e->tick);
        rp->res.ticks++;
        if (rp->res.ticks == 1)
                rp->res.first_tick_end = trace_reader_offset(rp->reader);
        else
                rp->res.task_ticks += e->snap->n_tasks;
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
        r = overlay_snapshot(rp, e->snap, &snap);
        if (r >= 0)
                r = plan_with(&rp->other, rp->topo, e, &snap, &other);
        if (r < 0)
                return log_error_errno(r, "%s: tick %" PRIu64 ": the policy refused its input: %m",
                                       rp->o->path, e->tick);
        if (overlay_note(rp, e->snap, e->plan, false) < 0 ||
            overlay_note(rp, e->snap, other, true) < 0)
                return log_error_errno(-ENOMEM, "Out of memory.");
        count(&m->other, other);
        count(&rp->res.other, other);
        if (!plan_equal(mine, other)) {
                m->differ++;
                rp->res.differ++;
                show_tick(rp, e, "recorded configuration", mine, rp->other.name, other);
        }
        return 0;
}

/* KEY=VALUE of --set over t; an error names the key. */
static int apply_sets(Replay *rp, Tunables *t) {
        for (char **s = rp->o->sets; s && *s; s++) {
                _cleanup_free_ char *key = strdup(*s);
                ConfigError err = { 0 };
                char *eq;
                int r;

                if (!key)
                        return log_error_errno(-ENOMEM, "Out of memory.");
                eq = strchr(key, '=');
                if (!eq)
                        return log_error_errno(-EINVAL, "--set %s: want KEY=VALUE.", *s);
                *eq = '\0';
                r = config_set_one(&tunables_schema, t, key, eq + 1, &err);
                if (r < 0)
                        return log_error_errno(r, "--set %s: %s", *s, err.message);
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
        r = side_params(&rp->rec, rp->topo);
        if (r < 0 || !rp->other.follows)
                return r;
        r = config_load_string(&tunables_schema, "recorded configuration", e->config,
                               e->config_size, &t, &err);
        if (r < 0)
                return log_error_errno(r, "%s: its configuration: %s", rp->o->path, err.message);
        if (rp->other.loaded)
                tunables_free(&rp->other.tunables);
        rp->other.tunables = t;
        rp->other.loaded = true;
        r = apply_sets(rp, &rp->other.tunables);
        return r < 0 ? r : side_params(&rp->other, rp->topo);
}

static void print_counts(FILE *f, const ReplayCounts *c) {
        fprintf(f, " %7" PRIu64 " %6" PRIu64 " %7" PRIu64 " %6" PRIu64, c->moves, c->cross_node,
                c->weights, c->escalations);
}

static void print_table(Replay *rp) {
        FILE *f = rp->out;

        fprintf(f, "\nA: the recorded configuration; B: %s\n", rp->other.name);
        fprintf(f, "%-6s | %6s %6s %7s %6s | %6s %6s %7s %6s | %s\n", "minute", "A moves", "cross",
                "weights", "levers", "B moves", "cross", "weights", "levers", "ticks differing");
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
        json_u64(&j, "task_ticks", rp->res.task_ticks);
        json_u64(&j, "bytes", rp->res.bytes);
        json_counts(&j, "recorded_configuration", &rp->res.recorded);
        if (rp->what_if) {
                json_string(&j, "config", rp->other.name);
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
        rp->res.bytes = trace_reader_offset(rp->reader);
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
                r = apply_sets(&rp, &rp.other.tunables);
                if (r < 0)
                        goto finish;
                rp.what_if = true;
        } else if (o->sets && o->sets[0]) {
                rp.other.follows = true;
                rp.what_if = true;
        }
        rp.other.name = what_if_name(o, rp.name_buf, sizeof rp.name_buf);
        r = replay_loop(&rp);
        if (r < 0)
                goto finish;
        if (o->json)
                print_json(&rp);
        else {
                fprintf(out, "%s: %" PRIu64 " ticks over %.1f s, recorded by %s on %s.\n", o->path,
                        rp.res.ticks, rp.res.seconds, trace_reader_program(rp.reader),
                        trace_reader_host(rp.reader));
                if (rp.res.task_ticks && rp.res.ticks > 1 && rp.res.seconds > 0) {
                        /* steady: from the end of the first tick (the file's header, topology,
                         * configuration and every task written whole) to the last */
                        uint64_t steady = rp.res.bytes - rp.res.first_tick_end;
                        double tasks = (double) rp.res.task_ticks / (double) (rp.res.ticks - 1);

                        fprintf(out,
                                "%" PRIu64 " bytes; after the first tick %.1f tasks a tick, %.2f "
                                "bytes a task and tick, %.2f MB an hour per 100 tasks at this "
                                "tick rate.\n",
                                rp.res.bytes, tasks, (double) steady / (double) rp.res.task_ticks,
                                (double) steady / (tasks / 100.0) / rp.res.seconds * 3600.0 / 1e6);
                }
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
        for (size_t i = 0; i < rp.n_overlay; i++)
                free(rp.overlay[i].path);
        free(rp.overlay);
        free(rp.other_groups);
        trace_reader_free(rp.reader);
        return r;
}
