/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pure half of loadgen compare / sweep (compare_merge.h): the suites' layouts, merging the
 * tables the rows printed, the row names, sweeps and the configs generated for the rows. No
 * process, file or clock here: tests/test-compare-merge.c covers it all.
 */
#include "compare_merge.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "macro.h"

/* ---- the suites */

const CompareSuite compare_suites[] = {
        { "contest", COMPARE_LAYOUT_ROWS, true, NULL },
        { "kernbench", COMPARE_LAYOUT_ROWS, true, NULL },
        { "schedbench", COMPARE_LAYOUT_ROWS, true, NULL },
        { "reaim", COMPARE_LAYOUT_ROWS, true, NULL },
        { "hackbench", COMPARE_LAYOUT_COLUMNS, true, "\t" }, /* seed 004: tab-separated */
        { "lat_ctx", COMPARE_LAYOUT_COLUMNS, true, " " },
        { "reflex", COMPARE_LAYOUT_COLUMNS, true, " " },
        { "chat", COMPARE_LAYOUT_COLUMNS, true, " " },
        { "pipe", COMPARE_LAYOUT_PREFIX, false, NULL },
        { "placement", COMPARE_LAYOUT_PREFIX, false, NULL },
};
const size_t n_compare_suites = ELEMENTSOF(compare_suites);

const CompareSuite *compare_suite_find(const char *name) {
        for (size_t i = 0; i < n_compare_suites; i++)
                if (streq(compare_suites[i].name, name))
                        return &compare_suites[i];
        return NULL;
}

/* ---- merging the tables (pure) */

typedef struct Lines {
        char *buf;
        char **v;
        size_t n;
} Lines;

static void lines_done(Lines *l) {
        free(l->buf);
        free(l->v);
        *l = (Lines){ 0 };
}

/* The lines of s, without their newlines; no empty last line after a final newline. */
static int lines_split(const char *s, Lines *ret) {
        Lines l = { .buf = strdup(s) };
        size_t cap = 0;

        if (!l.buf)
                return -ENOMEM;
        for (char *p = l.buf; *p;) {
                char *nl = strchr(p, '\n');

                if (greedy_realloc((void **) &l.v, &cap, l.n + 1, sizeof *l.v, 16) < 0) {
                        lines_done(&l);
                        return -ENOMEM;
                }
                l.v[l.n++] = p;
                if (!nl)
                        break;
                *nl = '\0';
                p = nl + 1;
        }
        *ret = l;
        return 0;
}

static bool is_blank(char c) {
        return c == ' ' || c == '\t';
}

/* Whether the first word of line (after leading blanks) is label. */
static bool line_is_labelled(const char *line, const char *label) {
        size_t n = strlen(label);

        while (is_blank(*line))
                line++;
        return strncmp(line, label, n) == 0 && (line[n] == '\0' || is_blank(line[n]));
}

/* A run of consecutive lines of one output, all labelled or all not. */
typedef struct Run {
        size_t start, n;
        bool labelled;
} Run;

static int runs_split(const Lines *l, const char *label, Run **ret, size_t *ret_n) {
        Run *runs = NULL;
        size_t n = 0, cap = 0;

        for (size_t i = 0; i < l->n; i++) {
                bool lab = line_is_labelled(l->v[i], label);

                if (n > 0 && runs[n - 1].labelled == lab) {
                        runs[n - 1].n++;
                        continue;
                }
                if (greedy_realloc((void **) &runs, &cap, n + 1, sizeof *runs, 8) < 0) {
                        free(runs);
                        return -ENOMEM;
                }
                runs[n] = (Run){ .start = i, .n = 1, .labelled = lab };
                n++;
        }
        *ret = runs;
        *ret_n = n;
        return 0;
}

/* Lines at the end of run k that every output has alike. */
static size_t common_suffix(const Lines *out, Run *const *runs, size_t n, size_t k) {
        size_t len = SIZE_MAX;

        for (size_t i = 0; i < n; i++)
                len = MIN(len, runs[i][k].n);
        for (size_t s = 0; s < len; s++)
                for (size_t i = 1; i < n; i++) {
                        const Run *a = &runs[0][k], *b = &runs[i][k];

                        if (!streq(out[0].v[a->start + a->n - 1 - s],
                                   out[i].v[b->start + b->n - 1 - s]))
                                return s;
                }
        return len;
}

static void put_lines(FILE *f, const Lines *l, size_t start, size_t n) {
        for (size_t j = start; j < start + n; j++)
                fprintf(f, "%s\n", l->v[j]);
}

static int merge_rows(FILE *f, const char *const *labels, const Lines *out, size_t n) {
        Run **runs = calloc(n, sizeof *runs);
        size_t *n_runs = calloc(n, sizeof *n_runs);
        int r = 0;

        if (!runs || !n_runs) {
                r = -ENOMEM;
                goto finish;
        }
        for (size_t i = 0; i < n && r == 0; i++)
                r = runs_split(&out[i], labels[i], &runs[i], &n_runs[i]);
        for (size_t i = 0; i < n && r == 0; i++) {
                if (n_runs[i] != n_runs[0])
                        r = -EBADMSG;
                for (size_t k = 0; k < n_runs[0] && r == 0; k++)
                        if (runs[i][k].labelled != runs[0][k].labelled)
                                r = -EBADMSG;
        }
        for (size_t k = 0; r == 0 && k < n_runs[0]; k++) {
                size_t suffix;

                if (runs[0][k].labelled) {
                        /* Interleaved: kernbench's rows of one job count side by side. */
                        for (size_t i = 1; i < n; i++)
                                if (runs[i][k].n != runs[0][k].n)
                                        r = -EBADMSG;
                        for (size_t j = 0; r == 0 && j < runs[0][k].n; j++)
                                for (size_t i = 0; i < n; i++)
                                        put_lines(f, &out[i], runs[i][k].start + j, 1);
                        continue;
                }
                suffix = common_suffix(out, runs, n, k);
                for (size_t i = 0; i < n; i++) {
                        if (suffix == runs[0][k].n && suffix == runs[i][k].n)
                                break; /* alike in every output: printed once, below */
                        fprintf(f, "%s:\n", labels[i]);
                        put_lines(f, &out[i], runs[i][k].start, runs[i][k].n - suffix);
                }
                put_lines(f, &out[0], runs[0][k].start + runs[0][k].n - suffix, suffix);
        }
finish:
        for (size_t i = 0; runs && i < n; i++)
                free(runs[i]);
        free(runs);
        free(n_runs);
        return r;
}

/* The last word of line: *ret_value; the text before it, blanks stripped, is *ret_prefix_len. */
static void split_last_word(const char *line, size_t *ret_prefix_len, const char **ret_value) {
        size_t end = strlen(line), start, p;

        while (end > 0 && is_blank(line[end - 1]))
                end--;
        start = end;
        while (start > 0 && !is_blank(line[start - 1]))
                start--;
        p = start;
        while (p > 0 && is_blank(line[p - 1]))
                p--;
        *ret_prefix_len = p;
        *ret_value = line + start;
}

static bool line_is_empty(const char *line) {
        while (is_blank(*line))
                line++;
        return *line == '\0';
}

static int merge_columns(FILE *f, const char *sep, const Lines *out, size_t n) {
        for (size_t i = 1; i < n; i++)
                if (out[i].n != out[0].n)
                        return -EBADMSG;
        for (size_t k = 0; k < out[0].n; k++) {
                size_t len0, len;
                const char *v;

                if (line_is_empty(out[0].v[k])) {
                        for (size_t i = 1; i < n; i++)
                                if (!line_is_empty(out[i].v[k]))
                                        return -EBADMSG;
                        fputc('\n', f);
                        continue;
                }
                split_last_word(out[0].v[k], &len0, &v);
                fprintf(f, "%.*s", (int) len0, out[0].v[k]);
                for (size_t i = 0; i < n; i++) {
                        split_last_word(out[i].v[k], &len, &v);
                        if (len != len0 || strncmp(out[i].v[k], out[0].v[k], len) != 0)
                                return -EBADMSG;
                        /* A line that is one word has no prefix to separate from. */
                        fprintf(f, "%s%s", len0 > 0 || i > 0 ? sep : "", v);
                }
                fputc('\n', f);
        }
        return 0;
}

static int merge_prefix(FILE *f, const char *const *labels, const Lines *out, size_t n) {
        int width = 0;

        for (size_t i = 0; i < n; i++) {
                if (out[i].n != out[0].n)
                        return -EBADMSG;
                width = MAX(width, (int) strlen(labels[i]));
        }
        for (size_t k = 0; k < out[0].n; k++) {
                bool alike = true;

                for (size_t i = 1; i < n; i++)
                        alike = alike && streq(out[i].v[k], out[0].v[k]);
                if (alike) {
                        fprintf(f, "%s\n", out[0].v[k]);
                        continue;
                }
                for (size_t i = 0; i < n; i++)
                        fprintf(f, "%-*s %s\n", width, labels[i], out[i].v[k]);
        }
        return 0;
}

int compare_merge(const CompareSuite *s, const char *const *labels, const char *const *outputs,
                  size_t n, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        Lines *out;
        FILE *f;
        int r = 0;

        if (n == 0)
                return -EINVAL;
        out = calloc(n, sizeof *out);
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < n && r == 0; i++)
                r = lines_split(outputs[i], &out[i]);
        f = r == 0 ? open_memstream(&buf, &size) : NULL;
        if (r == 0 && !f)
                r = -ENOMEM;
        if (r == 0) {
                switch (s->layout) {
                case COMPARE_LAYOUT_ROWS: r = merge_rows(f, labels, out, n); break;
                case COMPARE_LAYOUT_COLUMNS: r = merge_columns(f, s->column_sep, out, n); break;
                case COMPARE_LAYOUT_PREFIX: r = merge_prefix(f, labels, out, n); break;
                default: r = -EINVAL;
                }
        }
        if (f && fclose(f) != 0 && r == 0)
                r = -ENOMEM;
        for (size_t i = 0; i < n; i++)
                lines_done(&out[i]);
        free(out);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(buf);
        return 0;
}

int compare_table(const CompareSuite *s, const char *const *labels, const char *const *outputs,
                  size_t n, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f;
        int r;

        r = compare_merge(s, labels, outputs, n, ret);
        if (r != -EBADMSG)
                return r;
        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                size_t len = strlen(outputs[i]);

                fprintf(f, "%s== %s\n%s%s", i > 0 ? "\n" : "", labels[i], outputs[i],
                        len > 0 && outputs[i][len - 1] != '\n' ? "\n" : "");
        }
        if (fclose(f) != 0)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        return 0;
}

/* ---- names, sweeps, configs (pure) */

int compare_row_name(const char *config_path, char **ret) {
        const char *base = strrchr(config_path, '/');
        size_t n;
        char *s;

        base = base ? base + 1 : config_path;
        n = strlen(base);
        if (n > 5 && streq(base + n - 5, ".conf"))
                n -= 5;
        if (n == 0 || streq(base, ".conf"))
                return -EINVAL;
        s = strndup(base, n);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

void compare_strv_free(char **v) {
        for (size_t i = 0; v && v[i]; i++)
                free(v[i]);
        free(v);
}

int compare_parse_sweep(const char *arg, char **ret_key, char ***ret_values) {
        const char *eq = strchr(arg, '=');
        _cleanup_free_ char *key = NULL;
        char **values = NULL;
        size_t n = 0, cap = 0;

        if (!eq || eq == arg || eq[1] == '\0')
                return -EINVAL;
        key = strndup(arg, (size_t) (eq - arg));
        if (!key)
                return -ENOMEM;
        for (const char *p = eq + 1;; p++) {
                const char *end = strchrnul(p, ',');

                if (end == p ||
                    greedy_realloc((void **) &values, &cap, n + 2, sizeof *values, 8) < 0 ||
                    !(values[n] = strndup(p, (size_t) (end - p)))) {
                        int r = end == p ? -EINVAL : -ENOMEM;

                        if (values)
                                values[n] = NULL;
                        compare_strv_free(values);
                        return r;
                }
                values[++n] = NULL;
                if (*end == '\0')
                        break;
                p = end;
        }
        *ret_key = TAKE_PTR(key);
        *ret_values = values;
        return 0;
}

int compare_config_text(const Tunables *t, const char *comment, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f;
        int r;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        for (const char *c = comment; *c;) { /* each line of the comment as a '#' line */
                const char *nl = strchrnul(c, '\n');

                fprintf(f, "# %.*s\n", (int) (nl - c), c);
                c = *nl ? nl + 1 : nl;
        }
        r = config_write_values(&tunables_schema, t, f);
        if (fclose(f) != 0 && r == 0)
                r = -ENOMEM;
        if (r < 0)
                return r;
        *ret = TAKE_PTR(buf);
        return 0;
}
