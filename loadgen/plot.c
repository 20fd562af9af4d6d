/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loadgen plot: reads a results JSON with json-c, turns it into figures (plain data: categories,
 * series, points; timelines), checking every member it uses so a bad file is named with the
 * place that is wrong; then writes the figures as gnuplot data files and one script into a
 * temporary directory and runs gnuplot once, for PNG and SVG.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* json-c's typedef json_bool and lib/json.h's function json_bool() (reached through cli.h) share
 * a name: rename the typedef here. A type name is no symbol, so linking is unchanged. */
#define json_bool json_c_bool
#include <json-c/json.h>
#undef json_bool

#include "cli.h"
#include "fileio.h"
#include "log.h"
#include "macro.h"
#include "plot.h"

#define RESULTS_MAX_BYTES (256u << 20)
#define MAX_EVENT_LABELS 30 /* above this many moves, labels would overlap: marks only */
#define LABEL_GAP_FRACTION 0.015 /* of the time axis: an upright label's width at 1100 px */
#define MAX_VALUE_LABELS 40 /* above this many bars, no value printed above each */
#define MAX_SAMPLE_POINTS 120 /* above this many samples, a node's load is a plain line */
#define WHERE_SIZE 96
#define MARK_NAME_MAX 15 /* a comm or group in a mark's label: the kernel's comm is 15 bytes */

/* Distinguishable on white, in PNG and SVG alike; nodes and configurations take them in order. */
static const char *const colors[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                      "#ff7f0e", "#8c564b", "#e377c2", "#17becf" };
#define COLOR(i) colors[(i) % ELEMENTSOF(colors)]

typedef enum FigureStyle {
        FIGURE_BARS,
        FIGURE_LINES,
} FigureStyle;

typedef struct Point {
        size_t series, category;
        double value;
} Point;

/* A summary: a value per (series, category); series are configurations, categories the axis. */
typedef struct Figure {
        FigureStyle style;
        char *title;
        const char *xlabel, *ylabel, *value_format;
        double baseline; /* a dashed line at this y (contest's Ratio 1), NAN for none */
        const char *baseline_label; /* what it means */
        char **categories;
        size_t n_categories;
        char **series;
        size_t n_series;
        Point *points;
        size_t n_points;
} Figure;

typedef struct Mark {
        double t;
        long long from, to;
        char *label;
} Mark;

typedef struct TimelinePlot {
        char *row; /* the row's name */
        char *file_name; /* ROW in PREFIX-timeline-ROW: safe in a file name, unique */
        size_t n_nodes;
        long long *nodes, *node_cpus;
        size_t n_samples;
        double *t, *load; /* load: n_samples x n_nodes */
        Mark *moves, *weights;
        size_t n_moves, n_weights;
} TimelinePlot;

typedef struct Plot {
        const char *path; /* the results file, for every message */
        const char *suite;
        char *command_line; /* "loadgen contest --quick", for titles */
        Figure summary;
        TimelinePlot *timelines;
        size_t n_timelines;
} Plot;

/* What `loadgen plot` draws of a benchmark: one figure per suite, from its rows. */
typedef struct SuiteFigure {
        const char *suite;
        const char *x_key; /* the axis */
        const char *x2_key; /* a second axis joined into the label, or NULL */
        const char *x_unit, *x2_unit; /* with x2_key: the label is "X x_unit, X2 x2_unit" */
        const char *zero_label; /* the label of an axis value of 0 ("unbounded"), or NULL */
        const char *split_key; /* rows differing in it are separate series, or NULL */
        const char *split_unit; /* the series is "ROW, VALUE split_unit" */
        const char *y_key; /* the figure; "a.b" is member b of member a */
        FigureStyle style;
        const char *what, *xlabel, *ylabel;
} SuiteFigure;

static const SuiteFigure suite_figures[] = {
        { "hackbench", "groups", .y_key = "time_s", .style = FIGURE_LINES,
          .what = "hackbench: time to pass every message",
          .xlabel = "groups (each FDS senders and FDS receivers)",
          .ylabel = "Time (s), lower is better" },
        { "lat_ctx", "tasks", .split_key = "size_kb", .split_unit = "KB", .y_key = "usec",
          .style = FIGURE_LINES, .what = "lat_ctx: context switch time",
          .xlabel = "processes in the ring", .ylabel = "usec per switch, lower is better" },
        { "reflex", "tasks", .y_key = "round_trip_usec", .style = FIGURE_LINES,
          .what = "reflex: token round trip", .xlabel = "tasks",
          .ylabel = "usec per round trip, lower is better" },
        { "chat", "rooms", .x2_key = "messages", .x_unit = "rooms", .x2_unit = "msgs",
          .y_key = "messages_per_sec", .style = FIGURE_BARS,
          .what = "chat (VolanoMark): messages delivered", .xlabel = "rooms, messages per user",
          .ylabel = "messages per second, higher is better" },
        { "kernbench", "jobs", .zero_label = "unbounded", .y_key = "elapsed_s.mean",
          .style = FIGURE_BARS, .what = "kernbench: compile time", .xlabel = "make -j jobs",
          .ylabel = "Elapsed (s, mean of the runs), lower is better" },
        { "schedbench", "tasks", .y_key = "avg_user_s", .style = FIGURE_LINES,
          .what = "schedbench: user time per task", .xlabel = "tasks",
          .ylabel = "AvgUser (s), lower is better" },
        { "reaim", "users", .y_key = "jpm", .style = FIGURE_LINES,
          .what = "reaim (AIM7): throughput", .xlabel = "users",
          .ylabel = "jobs per minute, higher is better" },
        { "pipe", "placement", .y_key = "usecs_per_op", .style = FIGURE_BARS,
          .what = "pipe: ping-pong between two processes", .xlabel = "where the two ran",
          .ylabel = "usec per round trip, lower is better" },
        { "placement", "task", .y_key = "distance", .style = FIGURE_BARS,
          .what = "placement: how far each task was moved", .xlabel = "task",
          .ylabel = "sum of node distances moved, lower is better" },
        { "simulate", "machine", .y_key = "work_pct", .style = FIGURE_BARS,
          .what = "simulate: work done on model machines", .xlabel = "machine",
          .ylabel = "work done, % of the work asked for, higher is better" },
};

/* ---- memory */

static int oom(void) {
        return log_error_errno(ENOMEM, "Out of memory.");
}

static void figure_done(Figure *f) {
        free(f->title);
        for (size_t i = 0; i < f->n_categories; i++)
                free(f->categories[i]);
        free(f->categories);
        for (size_t i = 0; i < f->n_series; i++)
                free(f->series[i]);
        free(f->series);
        free(f->points);
}

static void marks_free(Mark *m, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(m[i].label);
        free(m);
}

static void timeline_plot_done(TimelinePlot *tp) {
        free(tp->row);
        free(tp->file_name);
        free(tp->nodes);
        free(tp->node_cpus);
        free(tp->t);
        free(tp->load);
        marks_free(tp->moves, tp->n_moves);
        marks_free(tp->weights, tp->n_weights);
}

static void plot_done(Plot *p) {
        free(p->command_line);
        figure_done(&p->summary);
        for (size_t i = 0; i < p->n_timelines; i++)
                timeline_plot_done(&p->timelines[i]);
        free(p->timelines);
}

/* Appends size bytes at *array[*n], growing it by one element. 0 or -ENOMEM. */
static int append(void *array, size_t *n, size_t size, const void *element) {
        void **a = array;
        char *p = reallocarray(*a, *n + 1, size);

        if (!p)
                return -ENOMEM;
        memcpy(p + *n * size, element, size);
        *a = p;
        (*n)++;
        return 0;
}

/* The index of name in names, appended (copied) if missing. -ENOMEM. */
static int intern(char ***names, size_t *n, const char *name, size_t *ret) {
        char *copy;

        for (size_t i = 0; i < *n; i++)
                if (streq((*names)[i], name)) {
                        *ret = i;
                        return 0;
                }
        copy = strdup(name);
        if (!copy || append(names, n, sizeof copy, &copy) < 0) {
                free(copy);
                return -ENOMEM;
        }
        *ret = *n - 1;
        return 0;
}

static int figure_add(Figure *f, const char *series, const char *category, double value) {
        Point pt = { .value = value };

        if (intern(&f->series, &f->n_series, series, &pt.series) < 0 ||
            intern(&f->categories, &f->n_categories, category, &pt.category) < 0 ||
            append(&f->points, &f->n_points, sizeof pt, &pt) < 0)
                return oom();
        return 0;
}

/* ---- reading the JSON, naming what is wrong */

static int bad(const Plot *p, const char *where, const char *fmt, ...) _printf_(3, 4);
static int bad(const Plot *p, const char *where, const char *fmt, ...) {
        _cleanup_free_ char *msg = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (r < 0)
                return oom();
        log_error("%s: %s: %s", p->path, where, msg);
        return -EBADMSG;
}

/* json_type_double stands for any number. */
static const char *type_name(json_type type) {
        switch (type) {
        case json_type_double: return "number";
        case json_type_int: return "integer";
        case json_type_boolean: return "boolean";
        default: return json_type_to_name(type);
        }
}

static bool has_type(json_object *v, json_type type) {
        if (type == json_type_double)
                return json_object_is_type(v, json_type_double) ||
                       json_object_is_type(v, json_type_int);
        return json_object_is_type(v, type);
}

/* Member key of o, of the given type; absent or null is an error unless optional (then *ret is
 * NULL and 0 returned). */
static int get(const Plot *p, json_object *o, const char *where, const char *key, json_type type,
               bool optional, json_object **ret) {
        json_object *v = NULL;

        if (!json_object_is_type(o, json_type_object))
                return bad(p, where, "is %s, not an object", type_name(json_object_get_type(o)));
        if (!json_object_object_get_ex(o, key, &v) || !v) {
                *ret = NULL;
                return optional ? 0 : bad(p, where, "no %s member \"%s\"", type_name(type), key);
        }
        if (!has_type(v, type))
                return bad(p, where, "\"%s\" is %s, not %s", key,
                           type_name(json_object_get_type(v)), type_name(type));
        *ret = v;
        return 0;
}

static int get_number(const Plot *p, json_object *o, const char *where, const char *key,
                      double *ret) {
        json_object *v;
        int r = get(p, o, where, key, json_type_double, false, &v);

        if (r < 0)
                return r;
        *ret = json_object_get_double(v);
        if (!isfinite(*ret))
                return bad(p, where, "\"%s\" is not a finite number", key);
        return 0;
}

static int get_int(const Plot *p, json_object *o, const char *where, const char *key,
                   long long *ret) {
        json_object *v;
        int r = get(p, o, where, key, json_type_int, false, &v);

        if (r < 0)
                return r;
        *ret = (long long) json_object_get_int64(v);
        return 0;
}

/* The line and column of offset in buf, for a parse error. */
static void line_column(const char *buf, size_t offset, unsigned *line, unsigned *column) {
        *line = 1;
        *column = 1;
        for (size_t i = 0; i < offset && buf[i]; i++) {
                if (buf[i] == '\n') {
                        (*line)++;
                        *column = 1;
                } else
                        (*column)++;
        }
}

/* Reads and parses path: one JSON object, nothing after it but blanks. 0 or -errno (logged). */
static int parse_file(const char *path, json_object **ret) {
        _cleanup_free_ char *buf = NULL;
        json_tokener *tok;
        json_object *o;
        enum json_tokener_error e;
        size_t size, end;
        unsigned line, col;
        int r;

        r = read_full_at(AT_FDCWD, path, RESULTS_MAX_BYTES, &buf, &size);
        if (r < 0)
                return log_error_errno(r, "Failed to read %s: %m", path);
        if (strspn(buf, " \t\r\n") == size) {
                log_error("%s: empty: want loadgen compare's or sweep's --json output.", path);
                return -EBADMSG;
        }
        tok = json_tokener_new();
        if (!tok)
                return oom();
        o = json_tokener_parse_ex(tok, buf, (int) size);
        e = json_tokener_get_error(tok);
        end = json_tokener_get_parse_end(tok);
        json_tokener_free(tok);
        line_column(buf, end, &line, &col);
        if (e == json_tokener_continue) {
                json_object_put(o);
                log_error("%s: the JSON ends early, at line %u: a cut file?", path, line);
                return -EBADMSG;
        }
        if (e != json_tokener_success) {
                json_object_put(o);
                log_error("%s:%u:%u: not valid JSON: %s.", path, line, col,
                          json_tokener_error_desc(e));
                return -EBADMSG;
        }
        end += strspn(buf + end, " \t\r\n");
        if (end < size || !json_object_is_type(o, json_type_object)) {
                line_column(buf, end, &line, &col);
                json_object_put(o);
                if (end < size)
                        log_error("%s:%u:%u: more after the JSON object.", path, line, col);
                else
                        log_error("%s: not a JSON object: want loadgen compare's or sweep's "
                                  "--json output.",
                                  path);
                return -EBADMSG;
        }
        *ret = o;
        return 0;
}

/* ---- the summary */

/* An axis value as a label: a string as is, a number as printed. */
static int value_label(const Plot *p, json_object *o, const char *where, const char *key,
                       const char *zero_label, char *buf, size_t size) {
        json_object *v = NULL;

        if (!json_object_object_get_ex(o, key, &v) || !v)
                return bad(p, where, "no member \"%s\" (the axis)", key);
        if (json_object_is_type(v, json_type_string))
                snprintf(buf, size, "%s", json_object_get_string(v));
        else if (json_object_is_type(v, json_type_int))
                snprintf(buf, size, "%lld", (long long) json_object_get_int64(v));
        else if (json_object_is_type(v, json_type_double))
                snprintf(buf, size, "%g", json_object_get_double(v));
        else
                return bad(p, where, "\"%s\" (the axis) is %s, not a number or string", key,
                           type_name(json_object_get_type(v)));
        if (zero_label && streq(buf, "0"))
                snprintf(buf, size, "%s", zero_label);
        return 0;
}

/* Member path "a.b" of o, a number. */
static int get_path_number(const Plot *p, json_object *o, const char *where, const char *path,
                           double *ret) {
        const char *dot = strchr(path, '.');
        char head[64];
        json_object *v;
        int r;

        if (!dot)
                return get_number(p, o, where, path, ret);
        snprintf(head, sizeof head, "%.*s", (int) (dot - path), path);
        r = get(p, o, where, head, json_type_object, false, &v);
        return r < 0 ? r : get_path_number(p, v, where, dot + 1, ret);
}

/* A row's "result": compare writes one for every row, so a row without is a damaged file. */
static int row_result(const Plot *p, json_object *row, const char *where, const char *name,
                      json_object **ret) {
        char w[WHERE_SIZE + 64];

        snprintf(w, sizeof w, "%s (\"%s\")", where, name);
        return get(p, row, w, "result", json_type_object, false, ret);
}

static int summary_contest(Plot *p, json_object *rows) {
        Figure *f = &p->summary;
        char where[WHERE_SIZE];

        for (size_t i = 0; i < json_object_array_length(rows); i++) {
                json_object *row = json_object_array_get_idx(rows, i), *res, *loads, *name;
                int r;

                snprintf(where, sizeof where, "rows[%zu]", i);
                if ((r = get(p, row, where, "name", json_type_string, false, &name)) < 0 ||
                    (r = row_result(p, row, where, json_object_get_string(name), &res)) < 0)
                        return r;
                snprintf(where, sizeof where, "rows[%zu].result", i);
                r = get(p, res, where, "loads", json_type_array, false, &loads);
                if (r < 0)
                        return r;
                for (size_t k = 0; k < json_object_array_length(loads); k++) {
                        json_object *l = json_object_array_get_idx(loads, k), *load, *mean;
                        double ratio;

                        snprintf(where, sizeof where, "rows[%zu].result.loads[%zu]", i, k);
                        if ((r = get(p, l, where, "load", json_type_string, false, &load)) < 0 ||
                            (r = get(p, l, where, "mean", json_type_object, false, &mean)) < 0)
                                return r;
                        snprintf(where, sizeof where, "rows[%zu].result.loads[%zu].mean", i, k);
                        if ((r = get_number(p, mean, where, "ratio", &ratio)) < 0 ||
                            (r = figure_add(f, json_object_get_string(name),
                                            json_object_get_string(load), ratio)) < 0)
                                return r;
                }
        }
        f->style = FIGURE_BARS;
        f->xlabel = "background load (see loadgen list)";
        f->ylabel = "Ratio: Time / no_load's Time, lower is better";
        f->value_format = "%.2f";
        f->baseline = 1.0;
        f->baseline_label = "Ratio 1 (no load)";
        return asprintf(&f->title, "contest: the compile's time beside each load\n%s",
                        p->command_line) < 0
                       ? oom()
                       : 0;
}

/* One row of a benchmark's own "rows": its series, axis label and figure. */
static int summary_benchmark_point(Plot *p, const SuiteFigure *sf, json_object *o,
                                   const char *where, const char *name) {
        _cleanup_free_ char *x_label = NULL, *series = NULL;
        char x[64], x2[64] = "", split[64] = "";
        double y;
        int r;

        r = value_label(p, o, where, sf->x_key, sf->zero_label, x, sizeof x);
        if (r >= 0 && sf->x2_key)
                r = value_label(p, o, where, sf->x2_key, NULL, x2, sizeof x2);
        if (r >= 0 && sf->split_key)
                r = value_label(p, o, where, sf->split_key, NULL, split, sizeof split);
        if (r >= 0)
                r = get_path_number(p, o, where, sf->y_key, &y);
        if (r < 0)
                return r;
        if ((sf->x2_key ? asprintf(&x_label, "%s %s, %s %s", x, sf->x_unit, x2, sf->x2_unit)
                        : asprintf(&x_label, "%s", x)) < 0 ||
            (sf->split_key ? asprintf(&series, "%s, %s %s", name, split, sf->split_unit)
                           : asprintf(&series, "%s", name)) < 0)
                return oom();
        return figure_add(&p->summary, series, x_label, y);
}

static int summary_benchmark(Plot *p, const SuiteFigure *sf, json_object *rows) {
        Figure *f = &p->summary;
        char where[WHERE_SIZE];

        for (size_t i = 0; i < json_object_array_length(rows); i++) {
                json_object *row = json_object_array_get_idx(rows, i), *res, *brows, *name;
                int r;

                snprintf(where, sizeof where, "rows[%zu]", i);
                if ((r = get(p, row, where, "name", json_type_string, false, &name)) < 0 ||
                    (r = row_result(p, row, where, json_object_get_string(name), &res)) < 0)
                        return r;
                snprintf(where, sizeof where, "rows[%zu].result", i);
                r = get(p, res, where, "rows", json_type_array, false, &brows);
                if (r < 0)
                        return r;
                for (size_t k = 0; k < json_object_array_length(brows); k++) {
                        snprintf(where, sizeof where, "rows[%zu].result.rows[%zu]", i, k);
                        r = summary_benchmark_point(p, sf, json_object_array_get_idx(brows, k),
                                                    where, json_object_get_string(name));
                        if (r < 0)
                                return r;
                }
        }
        /* A line through one or two categories says nothing a bar does not. */
        f->style = f->n_categories < 3 ? FIGURE_BARS : sf->style;
        f->xlabel = sf->xlabel;
        f->ylabel = sf->ylabel;
        f->value_format = "%.4g";
        f->baseline = NAN;
        return asprintf(&f->title, "%s\n%s", sf->what, p->command_line) < 0 ? oom() : 0;
}

/* ---- timelines */

/* Safe in a file name: letters, digits and ._=+- kept, anything else '_'; unique among the
 * timelines so far (a suffix -2, -3... otherwise). */
static int timeline_file_name(const Plot *p, const char *row, char **ret) {
        _cleanup_free_ char *base = strdup(row);
        char *name = NULL;

        if (!base)
                return oom();
        for (char *c = base; *c; c++)
                if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._=+-",
                            *c))
                        *c = '_';
        for (unsigned k = 1;; k++) {
                bool taken = false;

                free(name);
                if ((k == 1 ? asprintf(&name, "%s", base) : asprintf(&name, "%s-%u", base, k)) < 0)
                        return oom();
                for (size_t i = 0; i < p->n_timelines; i++)
                        taken = taken || streq(p->timelines[i].file_name, name);
                if (!taken)
                        break;
        }
        *ret = name;
        return 0;
}

static int timeline_nodes(const Plot *p, TimelinePlot *tp, json_object *tl, const char *where) {
        json_object *nodes, *cpus;
        int r;

        if ((r = get(p, tl, where, "nodes", json_type_array, false, &nodes)) < 0 ||
            (r = get(p, tl, where, "node_cpus", json_type_array, false, &cpus)) < 0)
                return r;
        tp->n_nodes = json_object_array_length(nodes);
        if (tp->n_nodes == 0 || json_object_array_length(cpus) != tp->n_nodes)
                return bad(p, where,
                           "\"nodes\" has %zu entries and \"node_cpus\" %zu: want the "
                           "same number, at least one",
                           tp->n_nodes, json_object_array_length(cpus));
        tp->nodes = calloc(tp->n_nodes, sizeof *tp->nodes);
        tp->node_cpus = calloc(tp->n_nodes, sizeof *tp->node_cpus);
        if (!tp->nodes || !tp->node_cpus)
                return oom();
        for (size_t i = 0; i < tp->n_nodes; i++) {
                json_object *n = json_object_array_get_idx(nodes, i);
                json_object *c = json_object_array_get_idx(cpus, i);

                if (!json_object_is_type(n, json_type_int) ||
                    !json_object_is_type(c, json_type_int) || json_object_get_int64(c) < 0)
                        return bad(p, where,
                                   "nodes[%zu] or node_cpus[%zu] is not a node id and "
                                   "a count",
                                   i, i);
                tp->nodes[i] = (long long) json_object_get_int64(n);
                tp->node_cpus[i] = (long long) json_object_get_int64(c);
        }
        return 0;
}

static int timeline_samples(const Plot *p, TimelinePlot *tp, json_object *tl, size_t row) {
        char where[WHERE_SIZE];
        json_object *samples;
        size_t n;
        int r;

        snprintf(where, sizeof where, "rows[%zu].timeline", row);
        r = get(p, tl, where, "samples", json_type_array, false, &samples);
        if (r < 0)
                return r;
        n = json_object_array_length(samples);
        tp->t = calloc(n ? n : 1, sizeof *tp->t);
        tp->load = calloc(n ? n * tp->n_nodes : 1, sizeof *tp->load);
        if (!tp->t || !tp->load)
                return oom();
        for (size_t i = 0; i < n; i++) {
                json_object *s = json_object_array_get_idx(samples, i), *load;

                snprintf(where, sizeof where, "rows[%zu].timeline.samples[%zu]", row, i);
                if ((r = get_number(p, s, where, "t", &tp->t[i])) < 0 ||
                    (r = get(p, s, where, "load", json_type_array, false, &load)) < 0)
                        return r;
                if (json_object_array_length(load) != tp->n_nodes)
                        return bad(p, where, "\"load\" has %zu values for %zu nodes",
                                   json_object_array_length(load), tp->n_nodes);
                for (size_t k = 0; k < tp->n_nodes; k++) {
                        json_object *v = json_object_array_get_idx(load, k);

                        if (!has_type(v, json_type_double))
                                return bad(p, where, "load[%zu] is not a number", k);
                        tp->load[i * tp->n_nodes + k] = json_object_get_double(v);
                }
        }
        tp->n_samples = n;
        return 0;
}

/* "moves" (label "comm from->to") or "weights" (label "group from->to"), each with t, from, to. */
static int timeline_marks(const Plot *p, json_object *tl, size_t row, const char *key, Mark **marks,
                          size_t *n_marks) {
        char where[WHERE_SIZE];
        json_object *a;
        int r;

        snprintf(where, sizeof where, "rows[%zu].timeline", row);
        r = get(p, tl, where, key, json_type_array, true, &a);
        if (r < 0 || !a)
                return r; /* an older file without them: nothing to mark */
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                json_object *e = json_object_array_get_idx(a, i), *name = NULL;
                const char *n = "";
                Mark m = {};

                snprintf(where, sizeof where, "rows[%zu].timeline.%s[%zu]", row, key, i);
                if ((r = get_number(p, e, where, "t", &m.t)) < 0 ||
                    (r = get_int(p, e, where, "from", &m.from)) < 0 ||
                    (r = get_int(p, e, where, "to", &m.to)) < 0 ||
                    (r = get(p, e, where, streq(key, "moves") ? "comm" : "cgroup", json_type_string,
                             true, &name)) < 0)
                        return r;
                if (name) {
                        n = json_object_get_string(name);
                        /* a group by its last component: the label has little room */
                        if (!streq(key, "moves") && strrchr(n, '/') && strrchr(n, '/')[1])
                                n = strrchr(n, '/') + 1;
                }
                if (asprintf(&m.label, "%.*s%s%s%lld->%lld", MARK_NAME_MAX, n,
                             strlen(n) > MARK_NAME_MAX ? "..." : "", *n ? " " : "", m.from,
                             m.to) < 0)
                        return oom();
                if (append(marks, n_marks, sizeof m, &m) < 0) {
                        free(m.label);
                        return oom();
                }
        }
        return 0;
}

static int timeline_add(Plot *p, json_object *tl, size_t row, const char *name) {
        TimelinePlot tp = {};
        char tw[WHERE_SIZE];
        int r;

        snprintf(tw, sizeof tw, "rows[%zu].timeline", row);
        tp.row = strdup(name);
        if (!tp.row)
                r = oom();
        else if ((r = timeline_file_name(p, name, &tp.file_name)) >= 0 &&
                 (r = timeline_nodes(p, &tp, tl, tw)) >= 0 &&
                 (r = timeline_samples(p, &tp, tl, row)) >= 0 &&
                 (r = timeline_marks(p, tl, row, "moves", &tp.moves, &tp.n_moves)) >= 0 &&
                 (r = timeline_marks(p, tl, row, "weights", &tp.weights, &tp.n_weights)) >= 0) {
                if (tp.n_samples == 0) {
                        log_warning("%s: rows[%zu] (\"%s\"): the timeline has no samples, not "
                                    "drawn.",
                                    p->path, row, name);
                        timeline_plot_done(&tp);
                        return 0;
                }
                if (append(&p->timelines, &p->n_timelines, sizeof tp, &tp) >= 0)
                        return 0;
                r = oom();
        }
        timeline_plot_done(&tp);
        return r;
}

/* Each daemon row's timeline. */
static int timelines(Plot *p, json_object *rows) {
        char where[WHERE_SIZE];

        for (size_t i = 0; i < json_object_array_length(rows); i++) {
                json_object *row = json_object_array_get_idx(rows, i), *daemon, *tl, *name, *title;
                int r;

                snprintf(where, sizeof where, "rows[%zu]", i);
                if ((r = get(p, row, where, "name", json_type_string, false, &name)) < 0 ||
                    (r = get(p, row, where, "daemon", json_type_boolean, false, &daemon)) < 0 ||
                    (r = get(p, row, where, "timeline", json_type_object, true, &tl)) < 0)
                        return r;
                if (!json_object_get_boolean(daemon) || !tl)
                        continue;
                /* A timeline may name itself (simulate: "cgbalanced on numaq"), where rows share
                 * a name to be one series of the summary. */
                if (json_object_object_get_ex(tl, "name", &title) &&
                    json_object_is_type(title, json_type_string))
                        name = title;
                r = timeline_add(p, tl, i, json_object_get_string(name));
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- the whole file */

static const SuiteFigure *suite_figure(const char *suite) {
        for (size_t i = 0; i < ELEMENTSOF(suite_figures); i++)
                if (streq(suite_figures[i].suite, suite))
                        return &suite_figures[i];
        return NULL;
}

/* "loadgen SUITE ARGS...", from "suite" and "suite_args". */
static int command_line(Plot *p, json_object *root) {
        json_object *args;
        char *s;
        int r = get(p, root, "the top level", "suite_args", json_type_array, true, &args);

        if (r < 0)
                return r;
        if (asprintf(&s, "loadgen %s", p->suite) < 0)
                return oom();
        for (size_t i = 0; args && i < json_object_array_length(args); i++) {
                const char *a = json_object_get_string(json_object_array_get_idx(args, i));
                char *t;

                if (asprintf(&t, "%s %s", s, a ? a : "") < 0) {
                        free(s);
                        return oom();
                }
                free(s);
                s = t;
        }
        p->command_line = s;
        return 0;
}

static int plot_read(Plot *p, json_object *root) {
        const SuiteFigure *sf = NULL;
        json_object *suite, *rows;
        int r;

        if ((r = get(p, root, "the top level", "suite", json_type_string, false, &suite)) < 0 ||
            (r = get(p, root, "the top level", "rows", json_type_array, false, &rows)) < 0)
                return r;
        p->suite = json_object_get_string(suite);
        if (json_object_array_length(rows) == 0)
                return bad(p, "the top level", "\"rows\" is empty: no configuration to draw");
        if (!streq(p->suite, "contest")) {
                sf = suite_figure(p->suite);
                if (!sf)
                        return bad(p, "the top level",
                                   "suite \"%s\" is none loadgen plot knows (contest, hackbench, "
                                   "lat_ctx, reflex, chat, kernbench, schedbench, reaim, pipe, "
                                   "placement, simulate)",
                                   p->suite);
        }
        r = command_line(p, root);
        if (r < 0)
                return r;
        r = sf ? summary_benchmark(p, sf, rows) : summary_contest(p, rows);
        if (r < 0)
                return r;
        if (p->summary.n_points == 0)
                return bad(p, "rows", "no row has a result with figures to draw");
        return timelines(p, rows);
}

/* ---- gnuplot's data and script */

/* s as a gnuplot string: single quotes, where only '' is special; controls become blanks. */
static void gp_quote(FILE *f, const char *s) {
        fputc('\'', f);
        for (; *s; s++) {
                if (*s == '\'')
                        fputs("''", f);
                else
                        fputc((unsigned char) *s < ' ' ? ' ' : *s, f);
        }
        fputc('\'', f);
}

/* A title's first line in the figure's font, the rest (the command) smaller: "\n" is a gnuplot
 * escape only in double quotes, so the lines are joined with a real newline in a gnuplot
 * expression. */
static void gp_title(FILE *f, const char *title) {
        const char *nl = strchr(title, '\n');
        _cleanup_free_ char *first = strndup(title, nl ? (size_t) (nl - title) : strlen(title));

        fputs("set title ", f);
        gp_quote(f, first ? first : "");
        if (nl) {
                fputs(" . \"\\n\" . ", f);
                gp_quote(f, nl + 1);
        }
        fputs(" font ',13'\n", f);
}

static const Point *figure_point(const Figure *f, size_t series, size_t category) {
        for (size_t i = 0; i < f->n_points; i++)
                if (f->points[i].series == series && f->points[i].category == category)
                        return &f->points[i];
        return NULL;
}

/*
 * Bars: a line per category, a column per series ('?' where it has none). Lines: a block per
 * series (gnuplot's index), "category value" per point.
 */
static void figure_data(const Figure *f, FILE *d) {
        if (f->style == FIGURE_BARS) {
                for (size_t c = 0; c < f->n_categories; c++) {
                        fprintf(d, "%zu", c);
                        for (size_t s = 0; s < f->n_series; s++) {
                                const Point *pt = figure_point(f, s, c);

                                if (pt)
                                        fprintf(d, "\t%.10g", pt->value);
                                else
                                        fputs("\t?", d);
                        }
                        fputc('\n', d);
                }
                return;
        }
        for (size_t s = 0; s < f->n_series; s++) {
                fprintf(d, "%s", s ? "\n\n" : "");
                for (size_t c = 0; c < f->n_categories; c++) {
                        const Point *pt = figure_point(f, s, c);

                        if (pt)
                                fprintf(d, "%zu\t%.10g\n", c, pt->value);
                }
        }
}

static double figure_max(const Figure *f) {
        double m = f->baseline > 0 ? f->baseline : 0;

        for (size_t i = 0; i < f->n_points; i++)
                m = MAX(m, f->points[i].value);
        return m;
}

static void figure_xtics(const Figure *f, FILE *g) {
        size_t longest = 0;

        for (size_t c = 0; c < f->n_categories; c++)
                longest = MAX(longest, strlen(f->categories[c]));
        fputs("set xtics (", g);
        for (size_t c = 0; c < f->n_categories; c++) {
                fputs(c ? ", " : "", g);
                gp_quote(g, f->categories[c]);
                fprintf(g, " %zu", c);
        }
        /* Side by side they would run into each other: slanted, ending at their tick. */
        fprintf(g, ") %s\n",
                f->n_categories * (longest + 2) > 100 ? "nomirror rotate by 30 right"
                                                      : "nomirror norotate");
}

/* Clustered bars: gnuplot puts bar s of n at category + (s - (n-1)/2) / (n + gap). */
static void figure_plot_bars(const Figure *f, FILE *g, const char *data) {
        bool values = f->n_series * f->n_categories <= MAX_VALUE_LABELS;

        fputs("set style data histograms\n"
              "set style histogram clustered gap 1\n"
              "set style fill solid 0.85 border rgb 'black'\n",
              g);
        fprintf(g, "set xrange [-0.6:%zu.6]\nplot ", f->n_categories - 1);
        for (size_t s = 0; s < f->n_series; s++) {
                fprintf(g, "%s", s ? ", \\\n     " : "");
                gp_quote(g, data);
                fprintf(g, " using %zu lc rgb '%s' title ", s + 2, COLOR(s));
                gp_quote(g, f->series[s]);
        }
        for (size_t s = 0; values && s < f->n_series; s++) {
                fputs(", \\\n     ", g);
                gp_quote(g, data);
                fprintf(g,
                        " using ($1 + (%zu - (%zu - 1) / 2.0) / (%zu + 1)):%zu:(sprintf('%s', "
                        "$%zu)) with labels rotate by 90 left offset 0,0.4 font ',9' notitle",
                        s, f->n_series, f->n_series, s + 2, f->value_format, s + 2);
        }
}

static void figure_plot_lines(const Figure *f, FILE *g, const char *data) {
        fprintf(g, "set xrange [-0.3:%zu.3]\nplot ", f->n_categories - 1);
        for (size_t s = 0; s < f->n_series; s++) {
                fprintf(g, "%s", s ? ", \\\n     " : "");
                gp_quote(g, data);
                fprintf(g,
                        " index %zu using 1:2 with linespoints lw 2 pt 7 ps 1.2 lc rgb '%s' title ",
                        s, COLOR(s));
                gp_quote(g, f->series[s]);
        }
}

/* The summary's script, after `set output`. */
static void figure_script(const Figure *f, FILE *g, const char *data) {
        double top = figure_max(f);

        gp_title(g, f->title);
        fputs("set xlabel ", g);
        gp_quote(g, f->xlabel);
        fputs("\nset ylabel ", g);
        gp_quote(g, f->ylabel);
        fputs("\nset grid ytics lc rgb '#d0d0d0'\n"
              "set key outside right top box title 'configuration' Left reverse width 2\n"
              "set ytics nomirror\n"
              "set datafile missing '?'\n",
              g);
        /* From 0, so bar heights compare; room above for the values. */
        fprintf(g, "set yrange [0:%.10g]\n", top > 0 ? top * 1.15 : 1.0);
        if (!isnan(f->baseline))
                fprintf(g,
                        "set arrow from graph 0, first %.10g to graph 1, first %.10g nohead dt 2 "
                        "lw 1.5 lc rgb '#505050' front\n",
                        f->baseline, f->baseline);
        figure_xtics(f, g);
        if (f->style == FIGURE_BARS)
                figure_plot_bars(f, g, data);
        else
                figure_plot_lines(f, g, data);
        if (!isnan(f->baseline)) {
                fputs(", \\\n     keyentry with lines dt 2 lw 1.5 lc rgb '#505050' title ", g);
                gp_quote(g, f->baseline_label);
        }
        fputc('\n', g);
}

static void timeline_data(const TimelinePlot *tp, FILE *d) {
        for (size_t i = 0; i < tp->n_samples; i++) {
                fprintf(d, "%.10g", tp->t[i]);
                for (size_t k = 0; k < tp->n_nodes; k++)
                        fprintf(d, "\t%.10g", tp->load[i * tp->n_nodes + k]);
                fputc('\n', d);
        }
}

/* The node index of a node id, for its colour; n_nodes if it is none of them. */
static size_t node_index(const TimelinePlot *tp, long long node) {
        for (size_t k = 0; k < tp->n_nodes; k++)
                if (tp->nodes[k] == node)
                        return k;
        return tp->n_nodes;
}

/* Moves: a dashed line in the destination node's colour, labelled at the top; weight changes: a
 * diamond at the bottom. Beyond MAX_EVENT_LABELS, the marks alone. */
static void timeline_marks_script(const TimelinePlot *tp, FILE *g, double span) {
        for (size_t i = 0; i < tp->n_moves; i++) {
                const Mark *m = &tp->moves[i];
                size_t k = node_index(tp, m->to);
                const char *c = k < tp->n_nodes ? COLOR(k) : "#505050";

                fprintf(g,
                        "set arrow from %.10g, graph 0 to %.10g, graph 0.70 nohead dt 2 lw 1.2 "
                        "lc rgb '%s'\n",
                        m->t, m->t, c);
                if (tp->n_moves > MAX_EVENT_LABELS)
                        continue;
                fputs("set label ", g);
                gp_quote(g, m->label);
                fprintf(g, " at %.10g, graph 0.71 rotate by 90 left font ',9' tc rgb '%s'\n", m->t,
                        c);
        }
        for (size_t i = 0, shown = SIZE_MAX; i < tp->n_weights; i++) {
                const Mark *w = &tp->weights[i];
                /* Upright, and only where the last one shown is a label's width away: changes a
                 * second apart printed over each other. */
                bool label = tp->n_weights <= MAX_EVENT_LABELS &&
                             (shown == SIZE_MAX ||
                              w->t - tp->weights[shown].t >= LABEL_GAP_FRACTION * span);

                fputs("set label ", g);
                gp_quote(g, label ? w->label : "");
                fprintf(g,
                        " at %.10g, graph 0.03 point pt 13 ps 1.5 lc rgb '#e07000' offset "
                        "0,0.9 rotate by 90 left font ',9' tc rgb '#e07000' front\n",
                        w->t);
                if (label)
                        shown = i;
        }
}

static void timeline_script(const Plot *p, const TimelinePlot *tp, FILE *g, const char *data) {
        _cleanup_free_ char *title = NULL;
        long long most = 1;
        double t0 = 0, t1 = tp->t[tp->n_samples - 1];

        for (size_t k = 0; k < tp->n_nodes; k++)
                most = MAX(most, tp->node_cpus[k]);
        for (size_t i = 0; i < tp->n_moves; i++)
                t0 = MIN(t0, tp->moves[i].t), t1 = MAX(t1, tp->moves[i].t);
        for (size_t i = 0; i < tp->n_weights; i++)
                t0 = MIN(t0, tp->weights[i].t), t1 = MAX(t1, tp->weights[i].t);
        if (asprintf(&title,
                     "%s: busy CPUs per NUMA node, %zu task move%s, %zu weight change%s\n%s",
                     tp->row, tp->n_moves, tp->n_moves == 1 ? "" : "s", tp->n_weights,
                     tp->n_weights == 1 ? "" : "s", p->command_line) < 0)
                title = NULL;
        gp_title(g, title ? title : tp->row);
        fputs("set xlabel 'seconds since the configuration''s run started'\n"
              "set ylabel 'busy CPUs on the node (sum of its CPUs'' utilisation)'\n"
              "set grid lc rgb '#d0d0d0'\n"
              "set key outside below horizontal Left reverse\n",
              g);
        /* Loads stay in the lower two thirds; the move labels go above. */
        fprintf(g, "set yrange [0:%.10g]\nset xrange [%.10g:%.10g]\n", (double) most / 0.68, t0,
                t1 > t0 ? t1 : t0 + 1);
        timeline_marks_script(tp, g, t1 > t0 ? t1 - t0 : 1);
        fputs("plot ", g);
        for (size_t k = 0; k < tp->n_nodes; k++) {
                fprintf(g, "%s", k ? ", \\\n     " : "");
                gp_quote(g, data);
                /* a point per sample while they are far enough apart to see */
                fprintf(g, " using 1:%zu with %s lw 2 lc rgb '%s' title ", k + 2,
                        tp->n_samples <= MAX_SAMPLE_POINTS ? "linespoints pt 7 ps 0.5" : "lines",
                        COLOR(k));
                fprintf(g, "'node %lld (%lld CPU%s)'", tp->nodes[k], tp->node_cpus[k],
                        tp->node_cpus[k] == 1 ? "" : "s");
        }
        if (tp->n_moves > 0)
                fputs(", \\\n     keyentry with lines dt 2 lw 1.2 lc rgb '#505050' title "
                      "'task moved (comm from->to node; line in the new node''s colour)'",
                      g);
        if (tp->n_weights > 0)
                fputs(", \\\n     keyentry with points pt 13 ps 1.5 lc rgb '#e07000' title "
                      "'cpu.weight changed (group from->to)'",
                      g);
        fputc('\n', g);
}

/* ---- running gnuplot */

typedef struct Outputs {
        char **paths; /* every file gnuplot is to write, in order */
        size_t n;
} Outputs;

static void outputs_done(Outputs *o) {
        for (size_t i = 0; i < o->n; i++)
                free(o->paths[i]);
        free(o->paths);
}

/* "set output" for PREFIX-NAME.EXT, noted in o. */
static int gp_output(FILE *g, Outputs *o, const char *prefix, const char *name, const char *ext) {
        char *path;

        if (asprintf(&path, "%s-%s.%s", prefix, name, ext) < 0)
                return oom();
        if (append(&o->paths, &o->n, sizeof path, &path) < 0) {
                free(path);
                return oom();
        }
        fputs("set output ", g);
        gp_quote(g, path);
        fputc('\n', g);
        return 0;
}

/* The figure's body is written once for the PNG; the SVG replots it. */
static int gp_begin(FILE *g, Outputs *o, const char *prefix, const char *name) {
        fputs("reset\nset terminal @png_terminal size 1100,650 noenhanced font 'sans,11'\n", g);
        return gp_output(g, o, prefix, name, "png");
}

static int gp_end(FILE *g, Outputs *o, const char *prefix, const char *name) {
        fputs("set terminal svg size 1100,650 dynamic noenhanced font 'sans,11' background rgb "
              "'white'\n",
              g);
        if (gp_output(g, o, prefix, name, "svg") < 0)
                return -ENOMEM;
        fputs("replot\nunset output\n", g);
        return 0;
}

/* Writes dir/name with fn(arg, f). 0 or -errno (logged). */
static int write_data(const char *dir, const char *name, void (*fn)(const void *, FILE *),
                      const void *arg, char **ret_path) {
        _cleanup_free_ char *path = NULL;
        FILE *f;

        if (asprintf(&path, "%s/%s", dir, name) < 0)
                return oom();
        f = fopen(path, "we");
        if (!f)
                return log_error_errno(errno, "Failed to create %s: %m", path);
        fn(arg, f);
        if (ferror(f) | (fclose(f) != 0))
                return log_error_errno(EIO, "Failed to write %s: %m", path);
        *ret_path = TAKE_PTR(path);
        return 0;
}

static void figure_data_fn(const void *arg, FILE *f) {
        figure_data(arg, f);
}

static void timeline_data_fn(const void *arg, FILE *f) {
        timeline_data(arg, f);
}

/* The data files and the script, in dir; the files gnuplot will write, in o. */
static int write_script(const Plot *p, const char *dir, const char *prefix, FILE *g, Outputs *o) {
        _cleanup_free_ char *data = NULL;
        int r;

        /* pngcairo draws smoother text; plain png (libgd) is in every gnuplot. */
        fputs("png_terminal = strstrt(GPVAL_TERMINALS, 'pngcairo') > 0 ? 'pngcairo' : 'png'\n", g);
        r = write_data(dir, "summary.dat", figure_data_fn, &p->summary, &data);
        if (r < 0 || (r = gp_begin(g, o, prefix, "summary")) < 0)
                return r;
        figure_script(&p->summary, g, data);
        r = gp_end(g, o, prefix, "summary");
        for (size_t i = 0; r >= 0 && i < p->n_timelines; i++) {
                const TimelinePlot *tp = &p->timelines[i];
                _cleanup_free_ char *name = NULL, *file = NULL, *tdata = NULL;

                if (asprintf(&name, "timeline-%zu.dat", i) < 0 ||
                    asprintf(&file, "timeline-%s", tp->file_name) < 0)
                        return oom();
                r = write_data(dir, name, timeline_data_fn, tp, &tdata);
                if (r < 0 || (r = gp_begin(g, o, prefix, file)) < 0)
                        return r;
                timeline_script(p, tp, g, tdata);
                r = gp_end(g, o, prefix, file);
        }
        return r;
}

/* gnuplot's path in $PATH, or NULL. */
static char *find_gnuplot(void) {
        const char *path = getenv("PATH");
        _cleanup_free_ char *copy = strdup(path && *path ? path : "/usr/bin:/bin");
        char *save = NULL;

        for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d;
             d = strtok_r(NULL, ":", &save)) {
                char *p;
                struct stat st;

                if (asprintf(&p, "%s/gnuplot", d) < 0)
                        return NULL;
                if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0)
                        return p;
                free(p);
        }
        return NULL;
}

/* Runs gnuplot on script; its chatter goes to stderr, as stdout lists the files. */
static int run_gnuplot(const char *gnuplot, const char *script) {
        pid_t pid;
        int status;

        fflush(stdout);
        pid = fork();
        if (pid < 0)
                return log_error_errno(errno, "Failed to start %s: %m", gnuplot);
        if (pid == 0) {
                if (dup2(STDERR_FILENO, STDOUT_FILENO) >= 0)
                        execl(gnuplot, "gnuplot", script, (char *) NULL);
                _exit(127);
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return log_error_errno(errno, "Failed to wait for gnuplot: %m");
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return 0;
        if (WIFEXITED(status))
                log_error("gnuplot failed on %s (exit status %d).", script, WEXITSTATUS(status));
        else
                log_error("gnuplot died of signal %d on %s.", WTERMSIG(status), script);
        return -EIO;
}

/* Removes the temporary directory and what is in it (files only: it has no subdirectories). */
static void remove_tmpdir(const char *dir) {
        DIR *d = opendir(dir);
        struct dirent *de;

        if (d) {
                while ((de = readdir(d)))
                        if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                                (void) unlinkat(dirfd(d), de->d_name, 0);
                closedir(d);
        }
        (void) rmdir(dir);
}

/* Each file gnuplot should have written: there and not empty. */
static int check_outputs(const Outputs *o) {
        for (size_t i = 0; i < o->n; i++) {
                struct stat st;

                if (stat(o->paths[i], &st) < 0)
                        return log_error_errno(errno, "gnuplot did not write %s: %m", o->paths[i]);
                if (st.st_size == 0) {
                        log_error("gnuplot left %s empty.", o->paths[i]);
                        return -EIO;
                }
        }
        return 0;
}

static int draw(const Plot *p, const char *gnuplot, const char *prefix) {
        _cleanup_free_ char *dir = NULL, *script = NULL;
        _cleanup_(outputs_done) Outputs o = {};
        const char *tmp = getenv("TMPDIR");
        FILE *g;
        int r;

        if (asprintf(&dir, "%s/loadgen-plot-XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0)
                return oom();
        if (!mkdtemp(dir))
                return log_error_errno(errno, "Failed to make a temporary directory %s: %m", dir);
        if (asprintf(&script, "%s/plot.gp", dir) < 0) {
                remove_tmpdir(dir);
                return oom();
        }
        g = fopen(script, "we");
        if (!g)
                r = log_error_errno(errno, "Failed to create %s: %m", script);
        else {
                r = write_script(p, dir, prefix, g, &o);
                if ((ferror(g) | (fclose(g) != 0)) && r >= 0)
                        r = log_error_errno(EIO, "Failed to write %s.", script);
        }
        if (r >= 0)
                r = run_gnuplot(gnuplot, script);
        if (r >= 0)
                r = check_outputs(&o);
        if (r < 0) {
                log_error("The data and script are kept in %s.", dir);
                return r;
        }
        remove_tmpdir(dir);
        for (size_t i = 0; i < o.n; i++)
                printf("%s\n", o.paths[i]);
        return fflush(stdout) == 0 ? 0 : -EIO;
}

/* ---- the command */

static void help(void) {
        printf("Usage: loadgen plot RESULTS.json [--out PREFIX]\n"
               "\n"
               "Draws the results of loadgen compare or loadgen sweep (their --json file) with\n"
               "gnuplot, as PNG and SVG, and prints the files written:\n"
               "  PREFIX-summary.png/.svg       contest: bars of Ratio per load, one per\n"
               "                                configuration; a benchmark: its figure against\n"
               "                                its axis, one line or bar per configuration\n"
               "  PREFIX-timeline-ROW.png/.svg  each daemon row: busy CPUs per NUMA node over\n"
               "                                time, with the daemon's moves and weight changes\n"
               "\n"
               "  -o --out=PREFIX        Where the files go (default: RESULTS.json's path\n"
               "                         without .json).\n"
               "  -h --help              Show this help.\n"
               "\n"
               "Needs gnuplot (apt-get install gnuplot-nox).\n");
}

/* PREFIX's directory exists and is writable, so gnuplot's failure is not the first news. */
static int check_prefix(const char *prefix) {
        const char *slash = strrchr(prefix, '/');
        _cleanup_free_ char *dir = slash ? strndup(prefix, (size_t) (slash - prefix)) : strdup(".");

        if (!dir)
                return oom();
        if (access(*dir ? dir : "/", W_OK) < 0)
                return log_error_errno(errno, "Cannot write %s-summary.png: directory %s: %m",
                                       prefix, *dir ? dir : "/");
        return 0;
}

/* RESULTS.json (*ret_path, in argv) and the prefix (*ret_prefix, allocated). 0, 1 for --help
 * (shown), or -EINVAL (logged). */
static int parse_args(int argc, char *argv[], const char **ret_path, char **ret_prefix) {
        static const struct option options[] = {
                { "out", required_argument, NULL, 'o' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        const char *out = NULL, *path;
        size_t len;
        int c;

        optind = 0;
        while ((c = getopt_long(argc, argv, "o:h", options, NULL)) >= 0) {
                switch (c) {
                case 'o': out = optarg; break;
                case 'h': help(); return 1;
                default: return -EINVAL;
                }
        }
        if (optind != argc - 1) {
                log_error("%s; see loadgen plot --help.",
                          optind >= argc ? "Missing RESULTS.json" : "Too many arguments");
                return -EINVAL;
        }
        if (out && !*out) {
                log_error("--out wants a prefix, e.g. results/contest.");
                return -EINVAL;
        }
        path = argv[optind];
        len = strlen(path);
        *ret_prefix =
                out ? strdup(out)
                    : strndup(path, len > 5 && streq(path + len - 5, ".json") ? len - 5 : len);
        if (!*ret_prefix)
                return oom();
        *ret_path = path;
        return 0;
}

int plot_main(int argc, char *argv[]) {
        _cleanup_free_ char *prefix = NULL, *gnuplot = NULL;
        _cleanup_(plot_done) Plot p = {};
        json_object *root = NULL;
        int r;

        r = parse_args(argc, argv, &p.path, &prefix);
        if (r != 0)
                return r == -ENOMEM ? 1 : r > 0 ? 0 : EXIT_USAGE;
        if (parse_file(p.path, &root) < 0)
                return 1;
        r = plot_read(&p, root);
        if (r >= 0) {
                gnuplot = find_gnuplot();
                if (!gnuplot) {
                        log_error("gnuplot is not installed (not in $PATH): apt-get install "
                                  "gnuplot-nox");
                        r = -ENOENT;
                }
        }
        if (r >= 0)
                r = check_prefix(prefix);
        if (r >= 0)
                r = draw(&p, gnuplot, prefix);
        json_object_put(root);
        return r < 0 ? 1 : 0;
}
