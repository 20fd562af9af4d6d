/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "psi.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "parse.h"

enum {
        FIELD_AVG10,
        FIELD_AVG60,
        FIELD_AVG300,
        FIELD_TOTAL,
        _FIELD_MAX,
};

static const char *const field_names[_FIELD_MAX] = {
        [FIELD_AVG10] = "avg10",
        [FIELD_AVG60] = "avg60",
        [FIELD_AVG300] = "avg300",
        [FIELD_TOTAL] = "total",
};

#define FIELDS_ALL ((1u << _FIELD_MAX) - 1)

static bool is_blank(char c) {
        return c == ' ' || c == '\t';
}

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

static unsigned digit(char c) {
        return (unsigned) (c - '0');
}

/* "D.DD" with 1-3 integer digits. */
static int parse_avg(const char *s, size_t n, uint32_t *ret) {
        uint32_t v = 0;
        size_t i = 0;

        while (i < n && i < 4 && is_digit(s[i]))
                v = v * 10 + digit(s[i++]);
        if (i == 0 || i > 3 || n != i + 3 || s[i] != '.' || !is_digit(s[i + 1]) ||
            !is_digit(s[i + 2]))
                return -EINVAL;
        v = v * 100 + digit(s[i + 1]) * 10 + digit(s[i + 2]);
        if (v > PSI_PERMYRIAD_MAX)
                return -ERANGE;
        *ret = v;
        return 0;
}

static int field_lookup(const char *key, size_t n) {
        for (int i = 0; i < _FIELD_MAX; i++)
                if (strlen(field_names[i]) == n && memcmp(field_names[i], key, n) == 0)
                        return i;
        return -1;
}

static bool key_char_ok(char c) {
        return is_digit(c) || (c >= 'a' && c <= 'z') || c == '_';
}

/* Printable and not blank: what an unknown field's value may contain. */
static bool value_char_ok(char c) {
        return c > ' ' && c < 0x7f;
}

/* One "key=value" token [s, end). seen collects the known fields met so far. */
static int parse_field(const char *s, const char *end, PsiLine *line, unsigned *seen) {
        const char *eq = memchr(s, '=', (size_t) (end - s));
        size_t klen, vlen;
        int f;

        if (!eq || eq == s || eq + 1 == end)
                return -EINVAL;
        klen = (size_t) (eq - s);
        vlen = (size_t) (end - eq - 1);
        for (size_t i = 0; i < klen; i++)
                if (!key_char_ok(s[i]))
                        return -EINVAL;
        for (size_t i = 0; i < vlen; i++)
                if (!value_char_ok(eq[1 + i]))
                        return -EINVAL;

        f = field_lookup(s, klen);
        if (f < 0)
                return 0; /* a field of a newer kernel */
        if (*seen & (1u << f))
                return -EINVAL;
        *seen |= 1u << f;

        switch (f) {
        case FIELD_AVG10: return parse_avg(eq + 1, vlen, &line->avg10_permyriad);
        case FIELD_AVG60: return parse_avg(eq + 1, vlen, &line->avg60_permyriad);
        case FIELD_AVG300: return parse_avg(eq + 1, vlen, &line->avg300_permyriad);
        default: return parse_u64_span(eq + 1, vlen, &line->total_usec);
        }
}

/* The fields of one line, [p, end) after its kind word. */
static int parse_fields(const char *p, const char *end, PsiLine *ret) {
        PsiLine line = {};
        unsigned seen = 0;

        while (p < end) {
                const char *tok;
                int r;

                if (is_blank(*p)) {
                        p++;
                        continue;
                }
                tok = p;
                while (p < end && !is_blank(*p))
                        p++;
                r = parse_field(tok, p, &line, &seen);
                if (r < 0)
                        return r;
        }
        if (seen != FIELDS_ALL)
                return -EINVAL;
        *ret = line;
        return 0;
}

/* One line [p, end), without its newline, into s. */
static int parse_line(const char *p, const char *end, PsiStats *s, bool *has_some) {
        PsiLine *line;
        bool *present;

        if (end - p >= 5 && memcmp(p, "some", 4) == 0 && is_blank(p[4])) {
                line = &s->some;
                present = has_some;
        } else if (end - p >= 5 && memcmp(p, "full", 4) == 0 && is_blank(p[4])) {
                line = &s->full;
                present = &s->has_full;
        } else
                return -EINVAL;
        if (*present)
                return -EINVAL;
        *present = true;
        return parse_fields(p + 5, end, line);
}

int psi_parse(const char *buf, PsiStats *ret) {
        PsiStats s = {};
        bool has_some = false;

        if (!buf || !ret)
                return -EINVAL;
        for (const char *p = buf; *p;) {
                const char *nl = strchr(p, '\n');
                int r;

                /* The kernel ends every line with '\n': without one, the read was cut short. */
                if (!nl)
                        return -EINVAL;
                r = parse_line(p, nl, &s, &has_some);
                if (r < 0)
                        return r;
                p = nl + 1;
        }
        if (!has_some)
                return -EINVAL;
        *ret = s;
        return 0;
}

int psi_read_at(int dirfd, const char *name, PsiStats *ret) {
        _cleanup_close_ int fd = -EBADF;
        char buf[PSI_FILE_SIZE_MAX + 1];
        int r;

        if (!name || !ret)
                return -EINVAL;
        fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        r = read_text_into(fd, buf, sizeof buf, NULL);
        if (r < 0)
                return r; /* -EOPNOTSUPP: PSI disabled at boot */
        return psi_parse(buf, ret);
}
