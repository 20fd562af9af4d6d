/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <ini.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "fileio.h"
#include "log.h"
#include "parse.h"
#include "utf8.h"

#define USEC_PER_MSEC UINT64_C(1000)
#define USEC_PER_SEC UINT64_C(1000000)
#define USEC_PER_MINUTE (60 * USEC_PER_SEC)
#define USEC_PER_HOUR (60 * USEC_PER_MINUTE)
#define USEC_PER_DAY (24 * USEC_PER_HOUR)

#define WHY_MAX 512

static const char utf8_bom[3] = { '\xef', '\xbb', '\xbf' };

/* A parsed value, held apart from the struct until it is known to be good. */
typedef union Value {
        bool b;
        int64_t i;
        uint64_t u;
        unsigned pct;
        int e;
        char *s;
        CpuMask *mask;
        char **strv;
        ConfigList list;
} Value;

/* Loading state of one kind's instances, indexed like its ConfigInstances. */
typedef struct KindState {
        const char **origin_file; /* [instance * n_keys + key]: file it was last set in */
        unsigned *origin_line;
        unsigned *seen_line; /* line in the current file, 0 if not there yet */
        unsigned *seen_section; /* per instance: its section line in the current file, or 0 */
} KindState;

/* Loading state; also what a validate callback receives, for config_reject(). */
struct ConfigContext {
        const ConfigSchema *schema;
        void *config; /* the fresh struct being filled */
        const char **origin_file; /* per key: file it was last set in; NULL: its default */
        unsigned *origin_line;
        unsigned *seen_line; /* per key: line in the current file, 0 if not there yet */
        char **files; /* names of the files read, owned; origin_file points here */
        size_t n_files;
        KindState *kinds; /* per schema kind; NULL outside config_load*() */

        /* The text being parsed. */
        const char *file;
        const char *p, *end;
        const char *line; /* current line as inih got it: blanks and BOM removed, no NUL */
        size_t line_len;
        unsigned lineno;
        bool failed;
        const ConfigKind *kind; /* the current section is [KIND NAME] of this kind, ... */
        size_t instance; /* ... this instance of it; kind is NULL in a fixed section */

        ConfigError error;
};

/* ---- errors */

_printf_(6, 0) static int error_setv(ConfigError *e, int r, const char *file, unsigned line,
                                     const char *subject, const char *format, va_list ap) {
        size_t size = sizeof e->message, n = 0;
        int k = 0;

        if (!e)
                return r;
        e->error = r;
        e->line = line;
        e->message[0] = '\0';
        if (file && line > 0)
                k = snprintf(e->message, size, "%s:%u: ", file, line);
        else if (file)
                k = snprintf(e->message, size, "%s: ", file);
        n = k > 0 ? (size_t) k : 0;
        if (subject && n < size) {
                k = snprintf(e->message + n, size - n, "%s: ", subject);
                n += k > 0 ? (size_t) k : 0;
        }
        if (n < size)
                (void) vsnprintf(e->message + n, size - n, format, ap);
        /* Keys, values and file names come from the file: no control character reaches a
         * terminal or the journal raw. */
        utf8_replace_controls(e->message);
        return r;
}

_printf_(6, 7) static int error_set(ConfigError *e, int r, const char *file, unsigned line,
                                    const char *subject, const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        (void) error_setv(e, r, file, line, subject, format, ap);
        va_end(ap);
        return r;
}

/* An error at the current line of the current file; stops the parse there. */
_printf_(4, 5) static int ctx_fail(ConfigContext *c, int r, const char *subject, const char *format,
                                   ...) {
        va_list ap;

        va_start(ap, format);
        (void) error_setv(&c->error, r, c->file, c->lineno, subject, format, ap);
        va_end(ap);
        c->failed = true;
        return r;
}

/* ---- small helpers */

static char **strv_free(char **l) {
        if (l)
                for (char **i = l; *i; i++)
                        free(*i);
        free(l);
        return NULL;
}

static void strv_freep(char ***l) {
        strv_free(*l);
}

static bool is_blank(char c) {
        return c == ' ' || c == '\t';
}

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

static bool is_name(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > CONFIG_NAME_MAX)
                return false;
        return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == n;
}

static void *member(const ConfigKey *k, void *config) {
        return (char *) config + k->offset;
}

static const void *cmember(const ConfigKey *k, const void *config) {
        return (const char *) config + k->offset;
}

static size_t key_index(const ConfigSchema *s, const ConfigKey *k) {
        return (size_t) (k - s->keys);
}

static ConfigInstances *instances_of(const ConfigKind *kind, void *config) {
        return (ConfigInstances *) ((char *) config + kind->offset);
}

static const ConfigInstances *cinstances_of(const ConfigKind *kind, const void *config) {
        return (const ConfigInstances *) ((const char *) config + kind->offset);
}

static void *instance_item(const ConfigKind *kind, const ConfigInstances *l, size_t i) {
        return (char *) l->items + i * kind->struct_size;
}

static const ConfigKind *find_kind(const ConfigSchema *s, const char *name, size_t len) {
        for (size_t i = 0; i < s->n_kinds; i++)
                if (strlen(s->kinds[i].name) == len && strncmp(s->kinds[i].name, name, len) == 0)
                        return &s->kinds[i];
        return NULL;
}

static const ConfigKey *find_kind_key(const ConfigKind *kind, const char *name) {
        for (size_t i = 0; i < kind->n_keys; i++)
                if (streq(kind->keys[i].name, name))
                        return &kind->keys[i];
        return NULL;
}

static size_t kind_max(const ConfigKind *kind) {
        return kind->max_instances > 0 ? kind->max_instances : CONFIG_INSTANCES_MAX;
}

/*
 * Makes room in *p for element n (of size bytes) of an array that has exactly n elements. Room
 * doubles at each power of two, so the capacity is known from n alone.
 */
static int grow_for(void **p, size_t n, size_t size) {
        size_t cap = n == 0 ? 1 : 2 * n;
        void *q;

        if (n > 0 && (n & (n - 1)) != 0)
                return 0; /* not a power of two: there is room up to the next */
        q = reallocarray(*p, cap, size > 0 ? size : 1);
        if (!q)
                return -ENOMEM;
        *p = q;
        return 0;
}

static const ConfigKey *find_key(const ConfigSchema *s, const char *section, size_t section_len,
                                 const char *name) {
        for (size_t i = 0; i < s->n_keys; i++) {
                const ConfigKey *k = &s->keys[i];

                if (strlen(k->section) == section_len &&
                    strncmp(k->section, section, section_len) == 0 &&
                    (!name || streq(k->name, name)))
                        return k;
        }
        return NULL;
}

/* The effective ranges: 0..0 in the table means the type's natural range. */
static void int_range(const ConfigKey *k, int64_t *lo, int64_t *hi) {
        bool natural = k->min == 0 && k->max == 0;

        *lo = natural ? INT64_MIN : k->min;
        *hi = natural ? INT64_MAX : k->max;
}

static void uint_range(const ConfigKey *k, uint64_t *lo, uint64_t *hi) {
        bool natural = k->umin == 0 && k->umax == 0;

        *lo = natural ? 0 : k->umin;
        if (!natural)
                *hi = k->umax;
        else if (k->type == CONFIG_PERCENT)
                *hi = 100;
        else if (k->type == CONFIG_STRING || k->type == CONFIG_STRV || k->type == CONFIG_LIST)
                *hi = CONFIG_STRING_MAX;
        else if (k->type == CONFIG_CPULIST)
                *hi = CPUMASK_MAX_CPUS;
        else
                *hi = UINT64_MAX;
}

/* ---- durations */

static const struct {
        const char *name;
        uint64_t usec;
} duration_units[] = {
        { "us", 1 },
        { "usec", 1 },
        { "ms", USEC_PER_MSEC },
        { "msec", USEC_PER_MSEC },
        { "s", USEC_PER_SEC },
        { "sec", USEC_PER_SEC },
        { "min", USEC_PER_MINUTE },
        { "h", USEC_PER_HOUR },
        { "d", USEC_PER_DAY },
};

static uint64_t duration_unit(const char *s, size_t len) {
        for (size_t i = 0; i < ELEMENTSOF(duration_units); i++)
                if (strlen(duration_units[i].name) == len &&
                    strncmp(duration_units[i].name, s, len) == 0)
                        return duration_units[i].usec;
        return 0;
}

/* Digits after a '.', as frac/scale: -EINVAL if there are none, -EDOM if non-zero past 18. */
static int duration_fraction(const char **p, uint64_t *frac, uint64_t *scale) {
        const char *s = *p;

        *frac = 0;
        *scale = 1;
        if (!is_digit(*s))
                return -EINVAL;
        for (; is_digit(*s); s++) {
                /* Past 18 digits only zeros can still be exact: drop them. */
                if (*scale >= UINT64_C(1000000000000000000)) {
                        if (*s != '0')
                                return -EDOM;
                        continue;
                }
                *frac = *frac * 10 + (uint64_t) (*s - '0');
                *scale *= 10;
        }
        *p = s;
        return 0;
}

/*
 * One "<number>[.<digits>][unit]" at *p, in microseconds. Returns -EINVAL for bad syntax, -ERANGE
 * on overflow, -EDOM when it is not a whole number of microseconds.
 */
static int duration_component(const char **p, uint64_t *ret, bool *ret_has_unit) {
        const char *s = *p, *u;
        uint64_t whole, frac = 0, scale = 1, unit, v;
        unsigned __int128 part;
        char *end;
        int r;

        if (!is_digit(*s))
                return -EINVAL;
        errno = 0;
        whole = strtoull(s, &end, 10);
        if (errno != 0)
                return -ERANGE;
        s = end;
        if (*s == '.') {
                s++;
                r = duration_fraction(&s, &frac, &scale);
                if (r < 0)
                        return r;
        }
        for (u = s; (*u >= 'a' && *u <= 'z') || (*u >= 'A' && *u <= 'Z'); u++)
                ;
        unit = u == s ? USEC_PER_SEC : duration_unit(s, (size_t) (u - s));
        if (unit == 0)
                return -EINVAL;
        part = (unsigned __int128) frac * unit;
        if (part % scale != 0)
                return -EDOM;
        if (__builtin_mul_overflow(whole, unit, &v) ||
            __builtin_add_overflow(v, (uint64_t) (part / scale), &v))
                return -ERANGE;
        *p = u;
        *ret = v;
        *ret_has_unit = u != s;
        return 0;
}

static int parse_duration(const char *text, uint64_t *ret) {
        const char *p = text;
        uint64_t total = 0;

        do {
                const char *start = p;
                uint64_t v;
                bool has_unit;
                int r = duration_component(&p, &v, &has_unit);

                if (r < 0)
                        return r;
                /* A bare number is seconds, but only on its own: "1 500ms" is a typo. */
                if (!has_unit && (start != text || *p != '\0'))
                        return -EINVAL;
                if (__builtin_add_overflow(total, v, &total))
                        return -ERANGE;
                while (is_blank(*p))
                        p++;
        } while (*p);
        *ret = total;
        return 0;
}

int config_parse_duration(const char *text, uint64_t *ret_usec) {
        if (!text || !ret_usec)
                return -EINVAL;
        return parse_duration(text, ret_usec);
}

/* The largest unit that divides exactly, so the text parses back to the same value. */
static void format_duration(uint64_t usec, char *buf, size_t size) {
        static const struct {
                const char *name;
                uint64_t usec;
        } largest_first[] = {
                { "d", USEC_PER_DAY }, { "h", USEC_PER_HOUR },  { "min", USEC_PER_MINUTE },
                { "s", USEC_PER_SEC }, { "ms", USEC_PER_MSEC }, { "us", 1 },
        };

        if (usec == 0) {
                snprintf(buf, size, "0");
                return;
        }
        for (size_t i = 0; i < ELEMENTSOF(largest_first); i++)
                if (usec % largest_first[i].usec == 0) {
                        snprintf(buf, size, "%" PRIu64 "%s", usec / largest_first[i].usec,
                                 largest_first[i].name);
                        return;
                }
}

/* ---- value parsers: 0 or negative errno with the reason in why (WHY_MAX bytes) */

_printf_(3, 4) static int reason(char *why, int r, const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        (void) vsnprintf(why, WHY_MAX, format, ap);
        va_end(ap);
        return r;
}

static int parse_bool(const char *text, bool *ret) {
        static const char *const yes[] = { "1", "yes", "true", "on" };
        static const char *const no[] = { "0", "no", "false", "off" };

        for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
                if (strcasecmp(text, yes[i]) == 0) {
                        *ret = true;
                        return 0;
                }
                if (strcasecmp(text, no[i]) == 0) {
                        *ret = false;
                        return 0;
                }
        }
        return -EINVAL;
}

/* Decimal only, then nothing or suffix: "-1", "+1" and leading blanks are refused. */
static int parse_u64(const char *text, const char *suffix, uint64_t *ret) {
        size_t n = strspn(text, "0123456789");

        if (text[n] != '\0' && !(suffix && streq(text + n, suffix)))
                return -EINVAL;
        return parse_u64_span(text, n, ret);
}

static int parse_i64(const char *text, int64_t *ret) {
        long long v;
        char *end;

        if (!is_digit(text[text[0] == '-']))
                return -EINVAL;
        errno = 0;
        v = strtoll(text, &end, 10);
        if (*end != '\0')
                return -EINVAL;
        if (errno == ERANGE)
                return -ERANGE;
        if (errno != 0)
                return -EINVAL;
        *ret = v;
        return 0;
}

static void format_bound(const ConfigKey *k, uint64_t v, char *buf, size_t size) {
        if (k->type == CONFIG_DURATION)
                format_duration(v, buf, size);
        else
                snprintf(buf, size, "%" PRIu64, v);
}

static int parse_int_value(const ConfigKey *k, const char *text, Value *ret, char *why) {
        int64_t lo, hi, v;
        int r = parse_i64(text, &v);

        int_range(k, &lo, &hi);
        if (r == -EINVAL)
                return reason(why, r, "invalid integer '%s'", text);
        if (r < 0 || v < lo || v > hi)
                return reason(why, -ERANGE, "value %s out of range %" PRIi64 "..%" PRIi64, text, lo,
                              hi);
        ret->i = v;
        return 0;
}

static int parse_unsigned_value(const ConfigKey *k, const char *text, Value *ret, char *why) {
        char lo_s[32], hi_s[32];
        uint64_t lo, hi, v = 0;
        int r;

        if (k->type == CONFIG_DURATION)
                r = parse_duration(text, &v);
        else
                r = parse_u64(text, k->type == CONFIG_PERCENT ? "%" : NULL, &v);
        uint_range(k, &lo, &hi);
        if (r == -EDOM)
                return reason(why, -EINVAL, "duration '%s' is finer than 1us", text);
        if (r == -EINVAL && k->type == CONFIG_DURATION)
                return reason(why, r, "invalid duration '%s' (e.g. 500ms, 1.5s, 2min)", text);
        if (r == -EINVAL)
                return reason(why, r, "invalid %s '%s'",
                              k->type == CONFIG_PERCENT ? "percentage" : "number", text);
        if (r == -ERANGE)
                return reason(why, r, "value %s too large", text);
        if (r < 0 || v < lo || v > hi) {
                format_bound(k, lo, lo_s, sizeof lo_s);
                format_bound(k, hi, hi_s, sizeof hi_s);
                return reason(why, -ERANGE, "value %s out of range %s..%s", text, lo_s, hi_s);
        }
        if (k->type == CONFIG_PERCENT)
                ret->pct = (unsigned) v;
        else
                ret->u = v;
        return 0;
}

/* inih ends a value at a ';' after a blank: such a value could not be written back to a file. */
static bool starts_comment(const char *text) {
        for (const char *p = strchr(text, ';'); p; p = strchr(p + 1, ';'))
                if (p == text || is_blank(p[-1]))
                        return true;
        return false;
}

static int parse_string_value(const ConfigKey *k, const char *text, Value *ret, char *why) {
        uint64_t lo, hi;

        uint_range(k, &lo, &hi);
        if (strlen(text) > hi)
                return reason(why, -ERANGE, "longer than %" PRIu64 " bytes", hi);
        if (starts_comment(text))
                return reason(why, -EINVAL, "';' at the start or after a blank starts a comment");
        ret->s = strdup(text);
        if (!ret->s)
                return reason(why, -ENOMEM, "out of memory");
        return 0;
}

static int parse_cpulist_value(const ConfigKey *k, const char *text, Value *ret, char *why) {
        uint64_t lo, hi;
        size_t pos = 0;
        int r;

        uint_range(k, &lo, &hi);
        r = cpumask_parse(text, (unsigned) hi, &ret->mask, &pos);
        if (r == -ERANGE)
                return reason(why, r, "CPU list '%s' names a CPU above %" PRIu64, text, hi - 1);
        if (r == -EINVAL)
                return reason(why, r, "invalid CPU list '%s' at offset %zu", text, pos);
        if (r < 0)
                return reason(why, r, "%s", strerror(-r));
        return 0;
}

static int parse_enum_value(const ConfigKey *k, const char *text, Value *ret, char *why) {
        size_t n;
        int w;

        for (int i = 0; k->enum_names[i]; i++)
                if (streq(text, k->enum_names[i])) {
                        ret->e = i;
                        return 0;
                }
        w = snprintf(why, WHY_MAX, "invalid value '%s' (one of:", text);
        n = w > 0 ? (size_t) w : 0;
        for (size_t i = 0; k->enum_names[i] && n < WHY_MAX; i++) {
                w = snprintf(why + n, WHY_MAX - n, "%s %s", i > 0 ? "," : "", k->enum_names[i]);
                n += w > 0 ? (size_t) w : 0;
        }
        if (n < WHY_MAX)
                (void) snprintf(why + n, WHY_MAX - n, ")");
        return -EINVAL;
}

static int parse_strv_value(const ConfigKey *k, const char *text, Value *ret, char *why) {
        char **l = calloc(strlen(text) / 2 + 2, sizeof(char *)); /* at most that many words */
        size_t n = 0;
        uint64_t lo, hi;

        if (!l)
                return reason(why, -ENOMEM, "out of memory");
        uint_range(k, &lo, &hi);
        for (const char *p = text + strspn(text, " \t"); *p; p += strspn(p, " \t")) {
                size_t len = strcspn(p, " \t");

                if (len > hi) {
                        strv_free(l);
                        return reason(why, -ERANGE, "word '%.*s' longer than %" PRIu64 " bytes",
                                      (int) len, p, hi);
                }
                l[n] = strndup(p, len);
                if (!l[n++]) {
                        strv_free(l);
                        return reason(why, -ENOMEM, "out of memory");
                }
                p += len;
        }
        if (starts_comment(text)) {
                strv_free(l);
                return reason(why, -EINVAL, "';' at the start or after a blank starts a comment");
        }
        ret->strv = l;
        return 0;
}

static void list_free(ConfigList *l) {
        for (size_t i = 0; i < l->n; i++) {
                free(l->items[i].value);
                free(l->items[i].file);
        }
        free(l->items);
        *l = (ConfigList){};
}

/* A list of the one element text, or none for "": what a default or config_set_one() gives. */
static int parse_list_value(const ConfigKey *k, const char *text, Value *ret, char *why) {
        Value s;
        int r;

        ret->list = (ConfigList){};
        if (text[0] == '\0')
                return 0;
        r = parse_string_value(k, text, &s, why);
        if (r < 0)
                return r;
        ret->list.items = calloc(1, sizeof(ConfigListItem));
        if (!ret->list.items) {
                free(s.s);
                return reason(why, -ENOMEM, "out of memory");
        }
        ret->list.items[0].value = s.s;
        ret->list.n = 1;
        return 0;
}

/* Parses text as k's type into *ret, which the caller then stores or releases. */
static int value_parse(const ConfigKey *k, const char *text, Value *ret, char *why) {
        for (const char *p = text; *p; p++)
                if (((unsigned char) *p < 0x20 && !(*p == '\t' && k->type == CONFIG_STRV)) ||
                    *p == 0x7f)
                        return reason(why, -EINVAL, "control character 0x%02x in value",
                                      (unsigned) (unsigned char) *p);
        if (text[0] == '\0' && !(k->flags & CONFIG_EMPTY_OK) && k->type != CONFIG_LIST)
                return reason(why, -EINVAL, "empty value");

        *ret = (Value){};
        switch (k->type) {
        case CONFIG_BOOL:
                if (parse_bool(text, &ret->b) < 0)
                        return reason(why, -EINVAL,
                                      "invalid boolean '%s' (yes/no, true/false, on/off, 1/0)",
                                      text);
                return 0;
        case CONFIG_INT: return parse_int_value(k, text, ret, why);
        case CONFIG_UINT:
        case CONFIG_DURATION:
        case CONFIG_PERCENT: return parse_unsigned_value(k, text, ret, why);
        case CONFIG_STRING: return parse_string_value(k, text, ret, why);
        case CONFIG_CPULIST: return parse_cpulist_value(k, text, ret, why);
        case CONFIG_ENUM: return parse_enum_value(k, text, ret, why);
        case CONFIG_STRV: return parse_strv_value(k, text, ret, why);
        case CONFIG_LIST: return parse_list_value(k, text, ret, why);
        default: return reason(why, -EINVAL, "bad key type %d", (int) k->type);
        }
}

static void value_release(const ConfigKey *k, Value *v) {
        if (k->type == CONFIG_STRING)
                free(v->s);
        else if (k->type == CONFIG_CPULIST)
                cpumask_free(v->mask);
        else if (k->type == CONFIG_STRV)
                strv_free(v->strv);
        else if (k->type == CONFIG_LIST)
                list_free(&v->list);
        *v = (Value){};
}

/* Moves v into the member without releasing what was there (see member_release()). */
static void value_put(const ConfigKey *k, void *config, Value *v) {
        void *m = member(k, config);

        switch (k->type) {
        case CONFIG_BOOL: *(bool *) m = v->b; break;
        case CONFIG_INT: *(int64_t *) m = v->i; break;
        case CONFIG_UINT:
        case CONFIG_DURATION: *(uint64_t *) m = v->u; break;
        case CONFIG_PERCENT: *(unsigned *) m = v->pct; break;
        case CONFIG_STRING: *(char **) m = v->s; break;
        case CONFIG_CPULIST: *(CpuMask **) m = v->mask; break;
        case CONFIG_ENUM: *(int *) m = v->e; break;
        case CONFIG_STRV: *(char ***) m = v->strv; break;
        case CONFIG_LIST: *(ConfigList *) m = v->list; break;
        default: break;
        }
        *v = (Value){};
}

static void member_release(const ConfigKey *k, void *config) {
        void *m = member(k, config);

        if (k->type == CONFIG_STRING) {
                free(*(char **) m);
                *(char **) m = NULL;
        } else if (k->type == CONFIG_CPULIST)
                *(CpuMask **) m = cpumask_free(*(CpuMask **) m);
        else if (k->type == CONFIG_STRV)
                *(char ***) m = strv_free(*(char ***) m);
        else if (k->type == CONFIG_LIST)
                list_free((ConfigList *) m);
}

static void value_store(const ConfigKey *k, void *config, Value *v) {
        member_release(k, config);
        value_put(k, config, v);
}

static void instances_free(const ConfigKind *kind, ConfigInstances *l) {
        for (size_t i = 0; i < l->n; i++) {
                for (size_t j = 0; j < kind->n_keys; j++)
                        member_release(&kind->keys[j], instance_item(kind, l, i));
                free(l->names[i]);
                free(l->files[i]);
        }
        free(l->items);
        free(l->names);
        free(l->files);
        free(l->lines);
        *l = (ConfigInstances){};
}

void config_free(const ConfigSchema *schema, void *config) {
        if (!schema || !config)
                return;
        for (size_t i = 0; i < schema->n_keys; i++)
                member_release(&schema->keys[i], config);
        for (size_t i = 0; i < schema->n_kinds; i++)
                instances_free(&schema->kinds[i], instances_of(&schema->kinds[i], config));
}

/* ---- formatting */

static char *strv_join(char *const *l) {
        size_t size = 1, n = 0;
        char *s;

        for (char *const *i = l; i && *i; i++)
                size += strlen(*i) + 1;
        s = malloc(size);
        if (!s)
                return NULL;
        s[0] = '\0';
        for (char *const *i = l; i && *i; i++) {
                size_t len = strlen(*i);

                if (n > 0)
                        s[n++] = ' ';
                memcpy(s + n, *i, len + 1);
                n += len;
        }
        return s;
}

static char *format_number(const ConfigKey *k, const void *m) {
        char buf[64];

        if (k->type == CONFIG_INT)
                snprintf(buf, sizeof buf, "%" PRIi64, *(const int64_t *) m);
        else if (k->type == CONFIG_UINT)
                snprintf(buf, sizeof buf, "%" PRIu64, *(const uint64_t *) m);
        else if (k->type == CONFIG_DURATION)
                format_duration(*(const uint64_t *) m, buf, sizeof buf);
        else
                snprintf(buf, sizeof buf, "%u", *(const unsigned *) m);
        return strdup(buf);
}

int config_format_value(const ConfigKey *k, const void *config, char **ret) {
        const void *m = cmember(k, config);
        const char *name = NULL;
        char *s = NULL;
        int e;

        switch (k->type) {
        case CONFIG_BOOL: s = strdup(*(const bool *) m ? "yes" : "no"); break;
        case CONFIG_INT:
        case CONFIG_UINT:
        case CONFIG_DURATION:
        case CONFIG_PERCENT: s = format_number(k, m); break;
        case CONFIG_STRING: s = strdup(*(char *const *) m ? *(char *const *) m : ""); break;
        case CONFIG_CPULIST:
                if (!*(CpuMask *const *) m)
                        s = strdup("");
                else
                        return cpumask_format(*(CpuMask *const *) m, ret);
                break;
        case CONFIG_ENUM:
                e = *(const int *) m;
                for (int i = 0; k->enum_names[i]; i++)
                        if (i == e)
                                name = k->enum_names[i];
                if (!name)
                        return -EINVAL; /* not one of the names: the caller stored garbage */
                s = strdup(name);
                break;
        case CONFIG_STRV: s = strv_join(*(char **const *) m); break;
        case CONFIG_LIST: return -EOPNOTSUPP;
        default: return -EINVAL;
        }
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

/* ---- parsing one text with inih */

/* Appends a new instance of kind with its keys' defaults; c->instance becomes its index. */
static int instance_add(ConfigContext *c, const ConfigKind *kind, const char *name) {
        ConfigInstances *l = instances_of(kind, c->config);
        KindState *ks = &c->kinds[kind - c->schema->kinds];
        size_t n = l->n, nk = kind->n_keys > 0 ? kind->n_keys : 1;
        _cleanup_free_ char *name_copy = strdup(name), *file_copy = strdup(c->file);

        if (!name_copy || !file_copy || grow_for(&l->items, n, kind->struct_size) < 0 ||
            grow_for((void **) &l->names, n, sizeof *l->names) < 0 ||
            grow_for((void **) &l->files, n, sizeof *l->files) < 0 ||
            grow_for((void **) &l->lines, n, sizeof *l->lines) < 0 ||
            grow_for((void **) &ks->seen_section, n, sizeof *ks->seen_section) < 0 ||
            grow_for((void **) &ks->origin_file, n, nk * sizeof *ks->origin_file) < 0 ||
            grow_for((void **) &ks->origin_line, n, nk * sizeof *ks->origin_line) < 0 ||
            grow_for((void **) &ks->seen_line, n, nk * sizeof *ks->seen_line) < 0)
                return ctx_fail(c, -ENOMEM, NULL, "out of memory");
        memset(instance_item(kind, l, n), 0, kind->struct_size);
        memset(ks->origin_file + n * nk, 0, nk * sizeof *ks->origin_file);
        memset(ks->origin_line + n * nk, 0, nk * sizeof *ks->origin_line);
        memset(ks->seen_line + n * nk, 0, nk * sizeof *ks->seen_line);
        ks->seen_section[n] = c->lineno;
        l->names[n] = TAKE_PTR(name_copy);
        l->files[n] = TAKE_PTR(file_copy);
        l->lines[n] = c->lineno;
        l->n = n + 1; /* from here config_free() releases what the defaults put in */
        c->instance = n;
        for (size_t i = 0; i < kind->n_keys; i++) {
                const ConfigKey *k = &kind->keys[i];
                char why[WHY_MAX];
                Value v;

                /* config_check_schema() parsed each default already: only ENOMEM is left. */
                if (value_parse(k, k->default_value, &v, why) < 0)
                        return ctx_fail(c, -ENOMEM, NULL, "out of memory");
                value_put(k, instance_item(kind, l, n), &v);
        }
        return 0;
}

/* "[KIND NAME]": opens (or, in a later file, reopens) that instance. */
static int open_instance(ConfigContext *c, const char *inner, size_t len, const char *subject) {
        size_t kind_len = 0, skip;
        char name[CONFIG_NAME_MAX + 1];
        const ConfigKind *kind;
        ConfigInstances *l;
        size_t i;

        while (kind_len < len && !is_blank(inner[kind_len]))
                kind_len++; /* inner is not NUL-terminated: it is part of the whole text */
        kind = kind_len > 0 ? find_kind(c->schema, inner, kind_len) : NULL;
        if (!kind && kind_len > 0 && kind_len < len)
                return ctx_fail(c, -EINVAL, subject, "unknown section kind '%.*s'", (int) kind_len,
                                inner);
        if (!kind)
                return ctx_fail(c, -EINVAL, subject, "unknown section");
        for (skip = kind_len; skip < len && is_blank(inner[skip]); skip++)
                ;
        if (skip == len)
                return ctx_fail(c, -EINVAL, subject, "missing name (expected [%s NAME])",
                                kind->name);
        if (len - skip > CONFIG_NAME_MAX)
                return ctx_fail(c, -EINVAL, subject, "name longer than %u bytes", CONFIG_NAME_MAX);
        snprintf(name, sizeof name, "%.*s", (int) (len - skip), inner + skip);
        if (!is_name(name))
                return ctx_fail(c, -EINVAL, subject, "invalid name '%s' (only [A-Za-z0-9_-])",
                                name);
        l = instances_of(kind, c->config);
        c->kind = kind;
        if (config_instances_find(l, name, &i) >= 0) {
                KindState *ks = &c->kinds[kind - c->schema->kinds];

                if (ks->seen_section[i] > 0)
                        return ctx_fail(c, -EINVAL, subject, "duplicate section (first on line %u)",
                                        ks->seen_section[i]);
                ks->seen_section[i] = c->lineno;
                c->instance = i;
                return 0;
        }
        if (l->n >= kind_max(kind))
                return ctx_fail(c, -EINVAL, subject, "more than %zu [%s NAME] sections",
                                kind_max(kind), kind->name);
        return instance_add(c, kind, name);
}

/* "[name]" with only blanks or a comment after it, naming a section of the table or an instance. */
static int check_section_line(ConfigContext *c, const char *s, size_t len) {
        const char *close = memchr(s, ']', len), *rest;
        char subject[INI_MAX_LINE + 8];
        size_t inner_len;

        if (!close)
                return 0; /* inih reports it as a syntax error */
        inner_len = (size_t) (close - s - 1);
        snprintf(subject, sizeof subject, "[%.*s]", (int) inner_len, s + 1);
        for (rest = close + 1; rest < s + len && isspace((unsigned char) *rest); rest++)
                ;
        if (rest < s + len && *rest != ';' && *rest != '#')
                return ctx_fail(c, -EINVAL, subject, "text after ']'");
        c->kind = NULL;
        if (find_key(c->schema, s + 1, inner_len, NULL))
                return 0;
        return open_instance(c, s + 1, inner_len, subject);
}

/*
 * What inih cannot be told to reject, checked before it sees the line: NUL bytes (inih would stop
 * the line there), lines that do not fit its buffer (it would cut them and parse the tail as a
 * line of its own) and, via the leading blanks removed here, continuation lines (with none, inih
 * never takes a line as the continuation of the previous value). max is what fits in inih's
 * buffer with "\r\n\0", as ini.h documents INI_MAX_LINE.
 */
static int check_line(ConfigContext *c, const char **s, size_t *len, int bufsize) {
        size_t max = bufsize > 3 ? (size_t) bufsize - 3 : 0, content;

        if (c->lineno == 1 && *len >= sizeof utf8_bom && memcmp(*s, utf8_bom, 3) == 0) {
                *s += sizeof utf8_bom;
                *len -= sizeof utf8_bom;
                /* inih would skip a second one, and then we would not see what follows it. */
                if (*len >= sizeof utf8_bom && memcmp(*s, utf8_bom, 3) == 0)
                        return ctx_fail(c, -EINVAL, NULL, "second byte-order mark");
        }
        if (memchr(*s, '\0', *len))
                return ctx_fail(c, -EINVAL, NULL, "NUL byte in line");
        content = *len > 0 && (*s)[*len - 1] == '\r' ? *len - 1 : *len;
        if (content > max)
                return ctx_fail(c, -EINVAL, NULL, "line longer than %zu bytes", max);
        /* isspace(), as inih's own stripping uses. */
        while (*len > 0 && isspace((unsigned char) **s)) {
                (*s)++;
                (*len)--;
        }
        if (*len > 0 && **s == '[')
                return check_section_line(c, *s, *len);
        return 0;
}

/* inih's reader: hands out one line at a time, so c->lineno is the line inih is at. */
static char *read_line(char *buf, int bufsize, void *userdata) {
        ConfigContext *c = userdata;
        const char *s = c->p, *nl;
        size_t len;

        if (c->failed || c->p >= c->end)
                return NULL; /* after an error: stop at the first one */
        c->lineno++;
        nl = memchr(s, '\n', (size_t) (c->end - s));
        len = nl ? (size_t) (nl - s) : (size_t) (c->end - s);
        c->p = nl ? nl + 1 : c->end;
        if (check_line(c, &s, &len, bufsize) < 0)
                return NULL;
        memcpy(buf, s, len);
        buf[len] = '\0';
        c->line = s;
        c->line_len = len;
        return buf;
}

/* inih takes "key: value" too; only '=' is documented, so only '=' is accepted. */
static int check_separator(ConfigContext *c, const char *name, const char *subject) {
        size_t i = strlen(name);

        if (i > c->line_len || strncmp(c->line, name, i) != 0)
                return ctx_fail(c, -EINVAL, subject, "expected 'key = value'");
        while (i < c->line_len && isspace((unsigned char) c->line[i]))
                i++;
        if (i >= c->line_len || c->line[i] != '=')
                return ctx_fail(c, -EINVAL, subject, "expected '=' after the key");
        return 0;
}

/*
 * One occurrence of a list key: the first in a file starts the list afresh, an empty value
 * clears it, any other appends an element that remembers this file and line.
 */
static int list_add(ConfigContext *c, const ConfigKey *k, void *obj, const char *value,
                    bool first_in_file, char *why) {
        ConfigList *l = member(k, obj);
        Value v;
        int r;

        r = value_parse(k, value, &v, why);
        if (r < 0)
                return r;
        if (first_in_file || v.list.n == 0)
                list_free(l);
        if (v.list.n == 0)
                return 0;
        v.list.items[0].file = strdup(c->file);
        v.list.items[0].line = c->lineno;
        if (!v.list.items[0].file || grow_for((void **) &l->items, l->n, sizeof *l->items) < 0) {
                value_release(k, &v);
                return reason(why, -ENOMEM, "out of memory");
        }
        l->items[l->n++] = v.list.items[0];
        free(v.list.items);
        return 0;
}

/* Sets k of obj (the struct or an instance) from the current line; subject names it in errors. */
static int set_key(ConfigContext *c, const ConfigKey *k, void *obj, const char *subject,
                   const char *value, unsigned *seen_line, unsigned *origin_line,
                   const char **origin_file) {
        char why[WHY_MAX];
        Value v;
        int r;

        r = check_separator(c, k->name, subject);
        if (r < 0)
                return r;
        if (*seen_line > 0 && k->type != CONFIG_LIST)
                return ctx_fail(c, -EINVAL, subject, "duplicate key (first set on line %u)",
                                *seen_line);
        if (k->type == CONFIG_LIST)
                r = list_add(c, k, obj, value, *seen_line == 0, why);
        else {
                r = value_parse(k, value, &v, why);
                if (r >= 0)
                        value_store(k, obj, &v);
        }
        if (r < 0)
                return ctx_fail(c, r, subject, "%s", why);
        if (*seen_line == 0)
                *seen_line = c->lineno;
        *origin_line = c->lineno;
        *origin_file = c->file;
        return 0;
}

static int handle_instance_key(ConfigContext *c, const char *name, const char *value) {
        const ConfigKind *kind = c->kind;
        ConfigInstances *l = instances_of(kind, c->config);
        KindState *ks = &c->kinds[kind - c->schema->kinds];
        char subject[2 * CONFIG_NAME_MAX + INI_MAX_LINE + 8];
        const ConfigKey *k;
        size_t i;

        snprintf(subject, sizeof subject, "%s %s: %s", kind->name, l->names[c->instance], name);
        k = find_kind_key(kind, name);
        if (!k)
                return ctx_fail(c, -EINVAL, subject, "unknown key in [%s NAME] sections",
                                kind->name);
        i = c->instance * (kind->n_keys > 0 ? kind->n_keys : 1) + (size_t) (k - kind->keys);
        return set_key(c, k, instance_item(kind, l, c->instance), subject, value, &ks->seen_line[i],
                       &ks->origin_line[i], &ks->origin_file[i]);
}

static int handle_key(ConfigContext *c, const char *section, const char *name, const char *value) {
        const ConfigKey *k;
        size_t i;

        if (!value) /* inih built with INI_ALLOW_NO_VALUE */
                return ctx_fail(c, -EINVAL, name, "expected 'key = value'");
        if (name[0] == '\0')
                return ctx_fail(c, -EINVAL, NULL, "no key name before '='");
        if (section[0] == '\0')
                return ctx_fail(c, -EINVAL, name, "key outside any section");
        if (c->kind)
                return handle_instance_key(c, name, value);
        k = find_key(c->schema, section, strlen(section), name);
        if (!k)
                return ctx_fail(c, -EINVAL, name, "unknown key in section [%s]", section);
        i = key_index(c->schema, k);
        return set_key(c, k, c->config, name, value, &c->seen_line[i], &c->origin_line[i],
                       &c->origin_file[i]);
}

static int on_key(void *userdata, const char *section, const char *name, const char *value) {
        ConfigContext *c = userdata;

        if (c->failed)
                return 0;
        if (!name) /* inih built with INI_CALL_HANDLER_ON_NEW_SECTION: read_line checked it */
                return 1;
        return handle_key(c, section, name, value) >= 0;
}

static int parse_text(ConfigContext *c, const char *file, const char *text, size_t size) {
        int r;

        memset(c->seen_line, 0, c->schema->n_keys * sizeof *c->seen_line);
        for (size_t i = 0; i < c->schema->n_kinds; i++) {
                const ConfigKind *kind = &c->schema->kinds[i];
                size_t n = instances_of(kind, c->config)->n;

                if (n == 0)
                        continue;
                memset(c->kinds[i].seen_line, 0,
                       n * (kind->n_keys > 0 ? kind->n_keys : 1) * sizeof *c->kinds[i].seen_line);
                memset(c->kinds[i].seen_section, 0, n * sizeof *c->kinds[i].seen_section);
        }
        c->kind = NULL;
        c->file = file;
        c->p = text;
        c->end = text + size;
        c->lineno = 0;
        c->failed = false;

        r = ini_parse_stream(read_line, c, on_key, c);
        if (r == -2)
                return error_set(&c->error, -ENOMEM, file, 0, NULL, "out of memory");
        /* inih goes on after a line it cannot parse; ours stop the parse: take the first. */
        if (r > 0 && (!c->failed || (unsigned) r < c->error.line))
                return error_set(&c->error, -EINVAL, file, (unsigned) r, NULL,
                                 "syntax error: expected '[section]' or 'key = value' "
                                 "(continuation lines are not supported)");
        if (c->failed)
                return c->error.error;
        if (r < 0)
                return error_set(&c->error, -EIO, file, 0, NULL, "inih failed (%d)", r);
        log_debug("Parsed configuration %s (%u lines)", file, c->lineno);
        return 0;
}

/* ---- files */

/* -EISDIR for a directory, -EBADFD for other non-regular files (a FIFO would block a reload). */
static int read_file(const char *path, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        if (st.st_size > (off_t) CONFIG_FILE_MAX)
                return -EFBIG;
        return read_full_fd(fd, CONFIG_FILE_MAX, ret, ret_size);
}

static int file_error(ConfigContext *c, const char *path, int r) {
        if (r == -EBADFD)
                return error_set(&c->error, r, path, 0, NULL, "not a regular file");
        if (r == -EFBIG)
                return error_set(&c->error, r, path, 0, NULL, "larger than %u bytes",
                                 CONFIG_FILE_MAX);
        return error_set(&c->error, r, path, 0, NULL, "%s", strerror(-r));
}

/* A copy of path that lives as long as c, for origin_file. */
static const char *remember_file(ConfigContext *c, const char *path) {
        char **l = realloc(c->files, (c->n_files + 1) * sizeof *l);

        if (!l)
                return NULL;
        c->files = l;
        l[c->n_files] = strdup(path);
        return l[c->n_files] ? l[c->n_files++] : NULL;
}

static int load_file(ConfigContext *c, const char *path, bool optional) {
        _cleanup_free_ char *text = NULL;
        const char *name;
        size_t size = 0;
        int r;

        r = read_file(path, &text, &size);
        if (r == -ENOENT && optional) {
                log_debug("No %s, using the defaults", path);
                return 0;
        }
        if (r < 0)
                return file_error(c, path, r);
        name = remember_file(c, path);
        if (!name)
                return error_set(&c->error, -ENOMEM, path, 0, NULL, "out of memory");
        return parse_text(c, name, text, size);
}

static int compare_names(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static bool is_dropin_name(const char *name) {
        size_t n = strlen(name);

        return name[0] != '.' && n > 5 && streq(name + n - 5, ".conf");
}

/* The drop-in names in dir, sorted, NULL-terminated; none if dir does not exist. */
static int list_dropins(const char *dir, char ***ret, size_t *ret_n) {
        _cleanup_(closedirp) DIR *d = opendir(dir);
        _cleanup_(strv_freep) char **names = NULL;
        size_t n = 0;

        if (!d && errno == ENOENT) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        if (!d)
                return negative_errno();
        for (;;) {
                struct dirent *de;
                char **l;

                errno = 0;
                de = readdir(d);
                if (!de)
                        break;
                if (!is_dropin_name(de->d_name))
                        continue;
                l = realloc(names, (n + 2) * sizeof *l);
                if (!l)
                        return -ENOMEM;
                names = l;
                names[n] = strdup(de->d_name); /* NULL on failure still ends the list */
                if (!names[n])
                        return -ENOMEM;
                names[++n] = NULL;
        }
        if (errno != 0)
                return negative_errno();
        /* strcmp(), not strcoll(): the order must not change with the daemon's locale. */
        if (n > 0)
                qsort(names, n, sizeof *names, compare_names);
        *ret = TAKE_PTR(names);
        *ret_n = n;
        return 0;
}

static int load_dropins(ConfigContext *c, const char *main_path) {
        _cleanup_(strv_freep) char **names = NULL;
        _cleanup_free_ char *dir = NULL;
        size_t n;
        int r;

        if (asprintf(&dir, "%s.d", main_path) < 0)
                return error_set(&c->error, -ENOMEM, main_path, 0, NULL, "out of memory");
        r = list_dropins(dir, &names, &n);
        if (r < 0)
                return file_error(c, dir, r);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *path = NULL;

                if (asprintf(&path, "%s/%s", dir, names[i]) < 0)
                        return error_set(&c->error, -ENOMEM, dir, 0, NULL, "out of memory");
                r = load_file(c, path, /* optional= */ false);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- loading */

static void ctx_done(ConfigContext *c) {
        if (c->config) {
                config_free(c->schema, c->config);
                free(c->config);
        }
        free(c->origin_file);
        free(c->origin_line);
        free(c->seen_line);
        for (size_t i = 0; c->kinds && i < c->schema->n_kinds; i++) {
                free(c->kinds[i].origin_file);
                free(c->kinds[i].origin_line);
                free(c->kinds[i].seen_line);
                free(c->kinds[i].seen_section);
        }
        free(c->kinds);
        for (size_t i = 0; i < c->n_files; i++)
                free(c->files[i]);
        free(c->files);
}

/* A fresh struct holding the defaults. */
static int ctx_start(ConfigContext *c, const ConfigSchema *schema) {
        size_t n;
        int r;

        *c = (ConfigContext){ .schema = schema };
        r = config_check_schema(schema, &c->error);
        if (r < 0)
                return r;
        n = schema->n_keys > 0 ? schema->n_keys : 1;
        c->config = calloc(1, schema->struct_size);
        c->origin_file = calloc(n, sizeof *c->origin_file);
        c->origin_line = calloc(n, sizeof *c->origin_line);
        c->seen_line = calloc(n, sizeof *c->seen_line);
        c->kinds = calloc(schema->n_kinds > 0 ? schema->n_kinds : 1, sizeof *c->kinds);
        if (!c->config || !c->origin_file || !c->origin_line || !c->seen_line || !c->kinds)
                return error_set(&c->error, -ENOMEM, NULL, 0, NULL, "out of memory");
        for (size_t i = 0; i < schema->n_keys; i++) {
                const ConfigKey *k = &schema->keys[i];
                char why[WHY_MAX];
                Value v;

                /* config_check_schema() parsed each default already: only ENOMEM is left. */
                r = value_parse(k, k->default_value, &v, why);
                if (r < 0)
                        return error_set(&c->error, r, NULL, 0, k->name, "default: %s", why);
                value_put(k, c->config, &v);
        }
        return 0;
}

/* Each kind's validate on each of its instances, in order. */
static int ctx_validate_instances(ConfigContext *c) {
        for (size_t i = 0; i < c->schema->n_kinds; i++) {
                const ConfigKind *kind = &c->schema->kinds[i];
                const ConfigInstances *l = instances_of(kind, c->config);

                for (size_t j = 0; kind->validate && j < l->n; j++) {
                        char subject[2 * CONFIG_NAME_MAX + 2];
                        int r = kind->validate(instance_item(kind, l, j), l->names[j], c);

                        if (r >= 0)
                                continue;
                        if (c->error.error != 0)
                                return r;
                        snprintf(subject, sizeof subject, "%s %s", kind->name, l->names[j]);
                        return error_set(&c->error, r, l->files[j], l->lines[j], subject,
                                         "rejected: %s", strerror(-r));
                }
        }
        return 0;
}

static int ctx_validate(ConfigContext *c) {
        int r;

        r = ctx_validate_instances(c);
        if (r < 0 || !c->schema->validate)
                return r;
        r = c->schema->validate(c->config, c);
        if (r < 0 && c->error.error == 0) /* the callback did not say why */
                return error_set(&c->error, r, NULL, 0, NULL, "configuration rejected: %s",
                                 strerror(-r));
        return r < 0 ? r : 0;
}

/* On success hands the struct to ret; on failure hands the error out. */
static int ctx_finish(ConfigContext *c, int r, void *ret, ConfigError *error) {
        if (r < 0) {
                if (c->error.error == 0)
                        (void) error_set(&c->error, r, NULL, 0, NULL, "%s", strerror(-r));
                if (error)
                        *error = c->error;
                return r;
        }
        memcpy(ret, c->config, c->schema->struct_size);
        free(c->config); /* the members now belong to ret */
        c->config = NULL;
        return 0;
}

int config_load(const ConfigSchema *schema, const char *main_path, unsigned flags, void *ret,
                ConfigError *error) {
        _cleanup_(ctx_done) ConfigContext c = {};
        int r;

        r = ctx_start(&c, schema);
        if (r >= 0)
                r = load_file(&c, main_path, flags & CONFIG_LOAD_MAIN_OPTIONAL);
        if (r >= 0)
                r = load_dropins(&c, main_path);
        if (r >= 0)
                r = ctx_validate(&c);
        return ctx_finish(&c, r, ret, error);
}

int config_load_string(const ConfigSchema *schema, const char *name, const char *text, size_t size,
                       void *ret, ConfigError *error) {
        _cleanup_(ctx_done) ConfigContext c = {};
        int r;

        r = ctx_start(&c, schema);
        if (r >= 0)
                r = parse_text(&c, name ? name : "<string>", text ? text : "", text ? size : 0);
        if (r >= 0)
                r = ctx_validate(&c);
        return ctx_finish(&c, r, ret, error);
}

/* ---- single keys */

int config_lookup(const ConfigSchema *schema, const char *key, const ConfigKey **ret) {
        const char *dot = strchr(key, '.');
        const ConfigKey *found = NULL;

        if (dot) {
                found = find_key(schema, key, (size_t) (dot - key), dot + 1);
        } else {
                for (size_t i = 0; i < schema->n_keys; i++) {
                        if (!streq(schema->keys[i].name, key))
                                continue;
                        if (found)
                                return -ENOTUNIQ;
                        found = &schema->keys[i];
                }
        }
        if (!found)
                return -ENOENT;
        *ret = found;
        return 0;
}

int config_reject(ConfigContext *ctx, const char *key, const char *format, ...) {
        const ConfigKey *k = NULL;
        const char *file = NULL, *subject = key;
        unsigned line = 0;
        va_list ap;

        if (config_lookup(ctx->schema, key, &k) >= 0) {
                size_t i = key_index(ctx->schema, k);

                subject = k->name;
                if (ctx->origin_file && ctx->origin_file[i]) {
                        file = ctx->origin_file[i];
                        line = ctx->origin_line[i];
                }
        }
        va_start(ap, format);
        (void) error_setv(&ctx->error, -EINVAL, file, line, subject, format, ap);
        va_end(ap);
        return -EINVAL;
}

int config_instances_find(const ConfigInstances *l, const char *name, size_t *ret) {
        for (size_t i = 0; i < l->n; i++)
                if (streq(l->names[i], name)) {
                        *ret = i;
                        return 0;
                }
        return -ENOENT;
}

int config_reject_instance(ConfigContext *ctx, const char *kind, const char *name, const char *key,
                           const char *format, ...) {
        const ConfigKind *kd = find_kind(ctx->schema, kind, strlen(kind));
        char subject[3 * CONFIG_NAME_MAX + 8];
        const char *file = NULL;
        unsigned line = 0;
        size_t i;
        va_list ap;

        if (key)
                snprintf(subject, sizeof subject, "%s %s: %s", kind, name, key);
        else
                snprintf(subject, sizeof subject, "%s %s", kind, name);
        /* Places are known only while loading (not in config_set_one()'s validate). */
        if (kd && ctx->kinds && ctx->config &&
            config_instances_find(instances_of(kd, ctx->config), name, &i) >= 0) {
                const ConfigInstances *l = instances_of(kd, ctx->config);
                const KindState *ks = &ctx->kinds[kd - ctx->schema->kinds];
                const ConfigKey *k = key ? find_kind_key(kd, key) : NULL;
                size_t j = k ? i * kd->n_keys + (size_t) (k - kd->keys) : 0;

                file = l->files[i];
                line = l->lines[i];
                if (k && ks->origin_file[j]) {
                        file = ks->origin_file[j];
                        line = ks->origin_line[j];
                }
        }
        va_start(ap, format);
        (void) error_setv(&ctx->error, -EINVAL, file, line, subject, format, ap);
        va_end(ap);
        return -EINVAL;
}

/* Values from D-Bus get no stripping: refuse what a file could not hold. */
static int check_value_text(const char *value, char *why) {
        size_t n = strlen(value);

        if (n > CONFIG_VALUE_MAX)
                return reason(why, -EINVAL, "value longer than %u bytes", CONFIG_VALUE_MAX);
        if (n > 0 && (isspace((unsigned char) value[0]) || isspace((unsigned char) value[n - 1])))
                return reason(why, -EINVAL, "leading or trailing whitespace in value");
        return 0;
}

/* Runs validate on a shallow copy of config that holds v, before config is touched. */
static int validate_with(const ConfigSchema *schema, const void *config, const ConfigKey *k,
                         Value *v, ConfigError *error) {
        ConfigContext c = { .schema = schema };
        _cleanup_free_ void *copy = NULL;
        Value shared = *v;
        int r;

        if (!schema->validate)
                return 0;
        copy = malloc(schema->struct_size);
        if (!copy)
                return error_set(error, -ENOMEM, NULL, 0, k->name, "out of memory");
        memcpy(copy, config, schema->struct_size);
        value_put(k, copy, &shared); /* the copy borrows v; only free(copy) below */
        r = schema->validate(copy, &c);
        if (r >= 0)
                return 0;
        if (c.error.error == 0)
                (void) error_set(&c.error, r, NULL, 0, k->name, "rejected: %s", strerror(-r));
        if (error)
                *error = c.error;
        return r;
}

int config_set_one(const ConfigSchema *schema, void *config, const char *key, const char *value,
                   ConfigError *error) {
        const ConfigKey *k;
        char why[WHY_MAX];
        Value v;
        int r;

        r = config_lookup(schema, key, &k);
        if (r == -ENOTUNIQ)
                return error_set(error, r, NULL, 0, key, "in several sections, use section.key");
        if (r < 0)
                return error_set(error, r, NULL, 0, key, "unknown key");
        r = check_value_text(value, why);
        if (r >= 0)
                r = value_parse(k, value, &v, why);
        if (r < 0)
                return error_set(error, r, NULL, 0, k->name, "%s", why);
        r = validate_with(schema, config, k, &v, error);
        if (r < 0) {
                value_release(k, &v);
                return r;
        }
        value_store(k, config, &v);
        return 0;
}

/* ---- the table itself */

static size_t member_size(ConfigType t) {
        switch (t) {
        case CONFIG_BOOL: return sizeof(bool);
        case CONFIG_INT: return sizeof(int64_t);
        case CONFIG_UINT:
        case CONFIG_DURATION: return sizeof(uint64_t);
        case CONFIG_PERCENT: return sizeof(unsigned);
        case CONFIG_STRING: return sizeof(char *);
        case CONFIG_CPULIST: return sizeof(CpuMask *);
        case CONFIG_ENUM: return sizeof(int);
        case CONFIG_STRV: return sizeof(char **);
        case CONFIG_LIST: return sizeof(ConfigList);
        default: return 0;
        }
}

static bool has_text_value(ConfigType t) {
        return t == CONFIG_STRING || t == CONFIG_CPULIST || t == CONFIG_STRV;
}

/* Fields a type does not use must stay zero, so a range set on the wrong pair is caught. */
static int check_key_ranges(const ConfigKey *k, char *why) {
        bool uses_umax = k->type != CONFIG_BOOL && k->type != CONFIG_INT && k->type != CONFIG_ENUM;
        bool uses_umin = uses_umax && !has_text_value(k->type) && k->type != CONFIG_LIST;

        if (k->type != CONFIG_INT && (k->min != 0 || k->max != 0))
                return reason(why, -EINVAL, "min/max are for int keys");
        if (k->min > k->max)
                return reason(why, -EINVAL, "min above max");
        if ((!uses_umin && k->umin != 0) || (!uses_umax && k->umax != 0))
                return reason(why, -EINVAL, "umin/umax set but not used by this type");
        if (k->umin > k->umax)
                return reason(why, -EINVAL, "umin above umax");
        if (k->type == CONFIG_PERCENT && k->umax > UINT_MAX)
                return reason(why, -EINVAL, "umax does not fit an unsigned");
        if (k->type == CONFIG_CPULIST && k->umax > CPUMASK_MAX_CPUS)
                return reason(why, -EINVAL, "capacity above CPUMASK_MAX_CPUS");
        if ((k->type == CONFIG_ENUM) != (k->enum_names != NULL) ||
            (k->enum_names && !k->enum_names[0]))
                return reason(why, -EINVAL, "enum_names is for enum keys, and not empty");
        return 0;
}

static int check_key_shape(const ConfigSchema *s, const ConfigKey *k, char *why) {
        size_t size = member_size(k->type);

        if (!k->section || !k->name || !is_name(k->section) || !is_name(k->name))
                return reason(why, -EINVAL, "section and name must be 1..%u of [A-Za-z0-9_-]",
                              CONFIG_NAME_MAX);
        if (size == 0)
                return reason(why, -EINVAL, "unknown type %d", (int) k->type);
        if (!k->default_value || !k->help)
                return reason(why, -EINVAL, "no default or no help text");
        if (k->offset > s->struct_size || size > s->struct_size - k->offset)
                return reason(why, -EINVAL, "member outside the struct");
        if ((k->flags & ~CONFIG_EMPTY_OK) != 0 ||
            ((k->flags & CONFIG_EMPTY_OK) && !has_text_value(k->type)))
                return reason(why, -EINVAL, "flags not valid for this type");
        return check_key_ranges(k, why);
}

static int check_key(const ConfigSchema *s, size_t i, char *why) {
        const ConfigKey *k = &s->keys[i];
        char inner[WHY_MAX];
        Value v;
        int r;

        r = check_key_shape(s, k, why);
        if (r < 0)
                return r;
        for (size_t j = 0; j < i; j++) {
                const ConfigKey *o = &s->keys[j];

                if (streq(o->section, k->section) && streq(o->name, k->name))
                        return reason(why, -EINVAL, "defined twice");
                if (k->offset < o->offset + member_size(o->type) &&
                    o->offset < k->offset + member_size(k->type))
                        return reason(why, -EINVAL, "member overlaps that of %s.%s", o->section,
                                      o->name);
        }
        r = value_parse(k, k->default_value, &v, inner);
        if (r < 0)
                return reason(why, r, "default: %s", inner);
        value_release(k, &v);
        return 0;
}

static bool overlaps(size_t a, size_t a_size, size_t b, size_t b_size) {
        return a < b + b_size && b < a + a_size;
}

/* The kind's name and ConfigInstances member, against the fixed keys and the earlier kinds. */
static int check_kind_shape(const ConfigSchema *s, size_t i, char *why) {
        const ConfigKind *kd = &s->kinds[i];
        size_t size = sizeof(ConfigInstances);

        if (!kd->name || !is_name(kd->name))
                return reason(why, -EINVAL, "name must be 1..%u of [A-Za-z0-9_-]", CONFIG_NAME_MAX);
        if (find_key(s, kd->name, strlen(kd->name), NULL))
                return reason(why, -EINVAL, "named like the fixed section [%s]", kd->name);
        if (!kd->help || kd->struct_size == 0 || (kd->n_keys > 0 && !kd->keys))
                return reason(why, -EINVAL, "no help text, no keys or no struct size");
        if (kd->offset > s->struct_size || size > s->struct_size - kd->offset)
                return reason(why, -EINVAL, "instances member outside the struct");
        for (size_t j = 0; j < s->n_keys; j++) {
                const ConfigKey *k = &s->keys[j];

                if (overlaps(kd->offset, size, k->offset, member_size(k->type)))
                        return reason(why, -EINVAL, "instances member overlaps that of %s.%s",
                                      k->section, k->name);
        }
        for (size_t j = 0; j < i; j++) {
                if (streq(s->kinds[j].name, kd->name))
                        return reason(why, -EINVAL, "defined twice");
                if (overlaps(kd->offset, size, s->kinds[j].offset, size))
                        return reason(why, -EINVAL, "instances member overlaps that of kind %s",
                                      s->kinds[j].name);
        }
        return 0;
}

/* The kind itself, then each of its keys as a table of its own, over the instance struct. */
static int check_kind(const ConfigSchema *s, size_t i, ConfigError *error) {
        const ConfigKind *kd = &s->kinds[i];
        ConfigSchema sub = { .keys = kd->keys,
                             .n_keys = kd->n_keys,
                             .struct_size = kd->struct_size };
        char why[WHY_MAX];
        int r;

        r = check_kind_shape(s, i, why);
        if (r < 0)
                return error_set(error, -EINVAL, NULL, 0, NULL, "schema: kind %s: %s",
                                 kd->name ? kd->name : "?", why);
        for (size_t j = 0; j < kd->n_keys; j++) {
                const ConfigKey *k = &kd->keys[j];

                r = check_key(&sub, j, why);
                if (r >= 0 && !streq(k->section, kd->name))
                        r = reason(why, -EINVAL, "section is not the kind's name, %s", kd->name);
                if (r < 0)
                        return error_set(error, r == -ENOMEM ? r : -EINVAL, NULL, 0, NULL,
                                         "schema: %s.%s: %s", k->section ? k->section : "?",
                                         k->name ? k->name : "?", why);
        }
        return 0;
}

int config_check_schema(const ConfigSchema *schema, ConfigError *error) {
        char why[WHY_MAX];

        if (!schema || (schema->n_keys > 0 && !schema->keys) || schema->struct_size == 0 ||
            (schema->n_kinds > 0 && !schema->kinds))
                return error_set(error, -EINVAL, NULL, 0, "schema", "no keys or no struct size");
        for (size_t i = 0; i < schema->n_keys; i++) {
                const ConfigKey *k = &schema->keys[i];
                int r = check_key(schema, i, why);

                if (r < 0)
                        return error_set(error, r == -ENOMEM ? r : -EINVAL, NULL, 0, NULL,
                                         "schema: %s.%s: %s", k->section ? k->section : "?",
                                         k->name ? k->name : "?", why);
        }
        for (size_t i = 0; i < schema->n_kinds; i++) {
                int r = check_kind(schema, i, error);

                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- writing */

typedef int (*key_visitor)(const ConfigKey *k, bool first_in_section, void *userdata);

/* Sections in the order they first appear, each with all its keys in table order. */
static int visit_by_section(const ConfigSchema *s, key_visitor fn, void *userdata) {
        for (size_t i = 0; i < s->n_keys; i++) {
                bool first = true;

                for (size_t j = 0; j < i && first; j++)
                        first = !streq(s->keys[j].section, s->keys[i].section);
                if (!first)
                        continue;
                for (size_t j = i; j < s->n_keys; j++) {
                        int r;

                        if (!streq(s->keys[j].section, s->keys[i].section))
                                continue;
                        r = fn(&s->keys[j], j == i, userdata);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

#define COMMENT_WIDTH 78

/* text as '#' lines of at most COMMENT_WIDTH columns (longer words stand alone); '\n' breaks. */
static void write_comment(FILE *f, const char *text) {
        for (const char *p = text; *p;) {
                const char *end = p + strcspn(p, "\n");
                size_t col = 1;

                fputc('#', f);
                for (const char *w = p + strspn(p, " "); w < end; w += strspn(w, " ")) {
                        size_t len = strcspn(w, " \n");

                        if (col > 1 && col + 1 + len > COMMENT_WIDTH) {
                                fputs("\n#", f);
                                col = 1;
                        }
                        fprintf(f, " %.*s", (int) len, w);
                        col += 1 + len;
                        w += len;
                }
                fputc('\n', f);
                p = *end ? end + 1 : end;
        }
}

/* "LO..HI", or "LO or more" when there is no real upper bound. */
static void range_text(const ConfigKey *k, char *buf, size_t size) {
        char lo_s[32], hi_s[32];
        uint64_t lo, hi;

        uint_range(k, &lo, &hi);
        format_bound(k, lo, lo_s, sizeof lo_s);
        format_bound(k, hi, hi_s, sizeof hi_s);
        if (hi == UINT64_MAX)
                snprintf(buf, size, "%s or more", lo_s);
        else
                snprintf(buf, size, "%s..%s", lo_s, hi_s);
}

static void describe_enum(const ConfigKey *k, char *buf) {
        size_t n = (size_t) snprintf(buf, WHY_MAX, "One of:");

        for (size_t i = 0; k->enum_names[i] && n < WHY_MAX; i++) {
                int w = snprintf(buf + n, WHY_MAX - n, "%s %s", i > 0 ? "," : "", k->enum_names[i]);

                n += w > 0 ? (size_t) w : 0;
        }
        if (n < WHY_MAX)
                snprintf(buf + n, WHY_MAX - n, ".");
}

static void describe_type(const ConfigKey *k, char *buf) {
        const char *empty = k->flags & CONFIG_EMPTY_OK ? "; may be empty" : "";
        char range[80];
        int64_t lo, hi;

        int_range(k, &lo, &hi);
        range_text(k, range, sizeof range);
        switch (k->type) {
        case CONFIG_BOOL: snprintf(buf, WHY_MAX, "Boolean: yes or no."); break;
        case CONFIG_INT:
                if (lo == INT64_MIN && hi == INT64_MAX)
                        snprintf(buf, WHY_MAX, "Integer.");
                else
                        snprintf(buf, WHY_MAX, "Integer, %" PRIi64 "..%" PRIi64 ".", lo, hi);
                break;
        case CONFIG_UINT: snprintf(buf, WHY_MAX, "Integer, %s.", range); break;
        case CONFIG_DURATION:
                snprintf(buf, WHY_MAX,
                         "Duration, %s (us, ms, s, min, h, d; a bare number is seconds).", range);
                break;
        case CONFIG_PERCENT: snprintf(buf, WHY_MAX, "Percentage, %s.", range); break;
        case CONFIG_STRING:
                snprintf(buf, WHY_MAX, "Text of at most %" PRIu64 " bytes%s.",
                         k->umax ? k->umax : (uint64_t) CONFIG_STRING_MAX, empty);
                break;
        case CONFIG_CPULIST:
                snprintf(buf, WHY_MAX, "CPU list such as 0-3,8 (CPUs below %u)%s.",
                         k->umax ? (unsigned) k->umax : CPUMASK_MAX_CPUS, empty);
                break;
        case CONFIG_ENUM: describe_enum(k, buf); break;
        case CONFIG_STRV: snprintf(buf, WHY_MAX, "Words separated by blanks%s.", empty); break;
        case CONFIG_LIST:
                snprintf(buf, WHY_MAX,
                         "Text of at most %" PRIu64 " bytes; each time the key is given adds one "
                         "to the list, an empty value clears it.",
                         k->umax ? k->umax : (uint64_t) CONFIG_STRING_MAX);
                break;
        default: buf[0] = '\0'; break;
        }
}

typedef struct WriteState {
        FILE *f;
        const void *config;
        unsigned flags;
} WriteState;

/* "key = value" for k's value in obj, one line per element of a list ("key =" for none). */
static int write_value_lines(FILE *f, const ConfigKey *k, const void *obj, const char *hash) {
        _cleanup_free_ char *value = NULL;
        int r;

        if (k->type == CONFIG_LIST) {
                const ConfigList *l = cmember(k, obj);

                if (l->n == 0)
                        fprintf(f, "%s%s =\n", hash, k->name);
                for (size_t i = 0; i < l->n; i++)
                        fprintf(f, "%s%s = %s\n", hash, k->name, l->items[i].value);
                return 0;
        }
        r = config_format_value(k, obj, &value);
        if (r < 0)
                return r;
        fprintf(f, "%s%s =%s%s\n", hash, k->name, value[0] ? " " : "", value);
        return 0;
}

/* The same after its comments, and a blank line. */
static int write_entry(FILE *f, const ConfigKey *k, const void *obj, bool commented) {
        char type[WHY_MAX];
        int r;

        describe_type(k, type);
        write_comment(f, k->help);
        write_comment(f, type);
        r = write_value_lines(f, k, obj, commented ? "#" : "");
        fputc('\n', f);
        return r;
}

static int write_key(const ConfigKey *k, bool first_in_section, void *userdata) {
        WriteState *w = userdata;

        if (first_in_section)
                fprintf(w->f, "[%s]\n\n", k->section);
        return write_entry(w->f, k, w->config, w->flags & CONFIG_WRITE_COMMENT_VALUES);
}

/* The kind's help and an example instance at its defaults, commented out. */
static int write_kind(FILE *f, const ConfigKind *kind) {
        _cleanup_free_ void *item = calloc(1, kind->struct_size);
        char about[WHY_MAX];
        int r = 0;

        if (!item)
                return -ENOMEM;
        for (size_t i = 0; i < kind->n_keys; i++) {
                char why[WHY_MAX];
                Value v;

                r = value_parse(&kind->keys[i], kind->keys[i].default_value, &v, why);
                if (r < 0)
                        break;
                value_put(&kind->keys[i], item, &v);
        }
        snprintf(about, sizeof about,
                 "Any number of [%s NAME] sections, up to %zu; NAME is 1..%u of [A-Za-z0-9_-]. "
                 "This example has each key at its default.",
                 kind->name, kind_max(kind), CONFIG_NAME_MAX);
        write_comment(f, kind->help);
        write_comment(f, about);
        fprintf(f, "#[%s NAME]\n\n", kind->name);
        for (size_t i = 0; r >= 0 && i < kind->n_keys; i++)
                r = write_entry(f, &kind->keys[i], item, /* commented= */ true);
        for (size_t i = 0; i < kind->n_keys; i++)
                member_release(&kind->keys[i], item);
        return r;
}

int config_write_defaults(const ConfigSchema *schema, FILE *f, unsigned flags) {
        _cleanup_free_ void *config = NULL;
        WriteState w = { .f = f, .flags = flags };
        int r;

        if (!schema || schema->struct_size == 0)
                return -EINVAL;
        config = malloc(schema->struct_size);
        if (!config)
                return -ENOMEM;
        /* Through the loader, so the file is written only for a table whose defaults load. */
        r = config_load_string(schema, NULL, "", 0, config, NULL);
        if (r < 0)
                return r;
        w.config = config;
        r = visit_by_section(schema, write_key, &w);
        for (size_t i = 0; r >= 0 && i < schema->n_kinds; i++)
                r = write_kind(f, &schema->kinds[i]);
        config_free(schema, config);
        if (r < 0)
                return r;
        return fflush(f) != 0 || ferror(f) ? -EIO : 0;
}

/* "LABEL.key=value", one line per element of a list ("LABEL.key=" for an empty one). */
/* --check-config's lines go to a terminal: a control character in a section name or a value is
 * written as \xNN (utf8_clean()), never raw. */
static int print_value(FILE *f, const char *label, const ConfigKey *k, const void *obj) {
        _cleanup_free_ char *value = NULL, *label_buf = NULL;
        const char *l_clean = utf8_clean(label, false, &label_buf);
        int r;

        if (!l_clean)
                return -ENOMEM;
        if (k->type == CONFIG_LIST) {
                const ConfigList *l = cmember(k, obj);

                if (l->n == 0)
                        fprintf(f, "%s.%s=\n", l_clean, k->name);
                for (size_t i = 0; i < l->n; i++) {
                        _cleanup_free_ char *buf = NULL;
                        const char *v = utf8_clean(l->items[i].value, false, &buf);

                        if (!v)
                                return -ENOMEM;
                        fprintf(f, "%s.%s=%s\n", l_clean, k->name, v);
                }
                return 0;
        }
        r = config_format_value(k, obj, &value);
        if (r < 0)
                return r;
        {
                _cleanup_free_ char *buf = NULL;
                const char *v = utf8_clean(value, false, &buf);

                if (!v)
                        return -ENOMEM;
                fprintf(f, "%s.%s=%s\n", l_clean, k->name, v);
        }
        return 0;
}

static int print_key(const ConfigKey *k, _unused_ bool first_in_section, void *userdata) {
        WriteState *w = userdata;

        return print_value(w->f, k->section, k, w->config);
}

/* "kind.name.key=value" for each instance of each kind. */
static int print_instances(const ConfigSchema *schema, const void *config, FILE *f) {
        for (size_t i = 0; i < schema->n_kinds; i++) {
                const ConfigKind *kind = &schema->kinds[i];
                const ConfigInstances *l = cinstances_of(kind, config);

                for (size_t j = 0; j < l->n; j++) {
                        _cleanup_free_ char *label = NULL;

                        if (asprintf(&label, "%s.%s", kind->name, l->names[j]) < 0)
                                return -ENOMEM;
                        for (size_t k = 0; k < kind->n_keys; k++) {
                                int r = print_value(f, label, &kind->keys[k],
                                                    instance_item(kind, l, j));

                                if (r < 0)
                                        return r;
                        }
                }
        }
        return 0;
}

int config_print(const ConfigSchema *schema, const void *config, FILE *f) {
        WriteState w = { .f = f, .config = config };
        int r;

        r = visit_by_section(schema, print_key, &w);
        if (r >= 0)
                r = print_instances(schema, config, f);
        if (r < 0)
                return r;
        return fflush(f) != 0 || ferror(f) ? -EIO : 0;
}

static int write_bare_key(const ConfigKey *k, bool first_in_section, void *userdata) {
        WriteState *w = userdata;

        if (first_in_section)
                fprintf(w->f, "\n[%s]\n", k->section);
        return write_value_lines(w->f, k, w->config, "");
}

int config_write_values(const ConfigSchema *schema, const void *config, FILE *f) {
        WriteState w = { .f = f, .config = config };
        int r;

        r = visit_by_section(schema, write_bare_key, &w);
        for (size_t i = 0; r >= 0 && i < schema->n_kinds; i++) {
                const ConfigKind *kind = &schema->kinds[i];
                const ConfigInstances *l = cinstances_of(kind, config);

                for (size_t j = 0; r >= 0 && j < l->n; j++) {
                        fprintf(f, "\n[%s %s]\n", kind->name, l->names[j]);
                        for (size_t k = 0; r >= 0 && k < kind->n_keys; k++)
                                r = write_value_lines(f, &kind->keys[k], instance_item(kind, l, j),
                                                      "");
                }
        }
        if (r < 0)
                return r;
        return fflush(f) != 0 || ferror(f) ? -EIO : 0;
}
