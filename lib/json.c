/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "json.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

static void json_prefix(Json *j) {
        if (j->after_key) {
                j->after_key = false;
                return;
        }
        if (j->need_comma)
                fputc(',', j->f);
        if (j->depth > 0)
                fprintf(j->f, "\n%*s", (int) (2 * j->depth), "");
}

void json_begin(Json *j, char open) {
        json_prefix(j);
        fputc(open, j->f);
        j->depth++;
        j->need_comma = false;
}

void json_end(Json *j, char close) {
        j->depth--;
        if (j->need_comma) /* not empty */
                fprintf(j->f, "\n%*s", (int) (2 * j->depth), "");
        fputc(close, j->f);
        j->need_comma = true;
        if (j->depth == 0)
                fputc('\n', j->f);
}

void json_write_quoted(FILE *f, const char *s) {
        fputc('"', f);
        for (const unsigned char *p = (const unsigned char *) (s ? s : "(null)"); *p; p++) {
                switch (*p) {
                case '"': fputs("\\\"", f); break;
                case '\\': fputs("\\\\", f); break;
                case '\n': fputs("\\n", f); break;
                case '\t': fputs("\\t", f); break;
                case '\r': fputs("\\r", f); break;
                case '\b': fputs("\\b", f); break;
                case '\f': fputs("\\f", f); break;
                default:
                        if (*p < 0x20 || *p == 0x7f)
                                fprintf(f, "\\u%04x", *p);
                        else
                                fputc(*p, f);
                }
        }
        fputc('"', f);
}

void json_key(Json *j, const char *key) {
        json_prefix(j);
        json_write_quoted(j->f, key);
        fputs(": ", j->f);
        j->after_key = true;
}

/* Starts a scalar value: its key if any, then the separator. */
static void json_value(Json *j, const char *key) {
        if (key)
                json_key(j, key);
        json_prefix(j);
        j->need_comma = true;
}

void json_string(Json *j, const char *key, const char *value) {
        json_value(j, key);
        json_write_quoted(j->f, value);
}

void json_u64(Json *j, const char *key, uint64_t value) {
        json_value(j, key);
        fprintf(j->f, "%" PRIu64, value);
}

void json_i64(Json *j, const char *key, int64_t value) {
        json_value(j, key);
        fprintf(j->f, "%" PRIi64, value);
}

void json_bool(Json *j, const char *key, bool value) {
        json_value(j, key);
        fputs(value ? "true" : "false", j->f);
}

void json_double(Json *j, const char *key, double value, unsigned decimals) {
        json_value(j, key);
        if (isfinite(value))
                fprintf(j->f, "%.*f", (int) decimals, value);
        else
                fputs("null", j->f);
}

void json_null(Json *j, const char *key) {
        json_value(j, key);
        fputs("null", j->f);
}

void json_raw(Json *j, const char *key, const char *text) {
        size_t n = strlen(text);

        while (n > 0 && strchr(" \t\r\n", text[n - 1]))
                n--;
        json_value(j, key);
        for (size_t i = 0; i < n; i++) {
                fputc(text[i], j->f);
                if (text[i] == '\n')
                        fprintf(j->f, "%*s", (int) (2 * j->depth), "");
        }
}
