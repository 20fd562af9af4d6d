/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cpumask.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct CpuMask {
        cpu_set_t *set;
        size_t size; /* bytes, as CPU_ALLOC_SIZE() gives */
        unsigned capacity;
};

CpuMask *cpumask_new(unsigned capacity) {
        CpuMask *m;

        if (capacity == 0 || capacity > CPUMASK_MAX_CPUS)
                return NULL;
        m = calloc(1, sizeof *m);
        if (!m)
                return NULL;
        m->set = CPU_ALLOC(capacity);
        if (!m->set) {
                free(m);
                return NULL;
        }
        m->size = CPU_ALLOC_SIZE(capacity);
        m->capacity = capacity;
        CPU_ZERO_S(m->size, m->set);
        return m;
}

CpuMask *cpumask_free(CpuMask *m) {
        if (m) {
                CPU_FREE(m->set);
                free(m);
        }
        return NULL;
}

CpuMask *cpumask_copy(const CpuMask *m) {
        CpuMask *c = cpumask_new(m->capacity);

        if (c)
                memcpy(c->set, m->set, m->size);
        return c;
}

unsigned cpumask_capacity(const CpuMask *m) {
        return m->capacity;
}

int cpumask_set(CpuMask *m, unsigned cpu) {
        if (cpu >= m->capacity)
                return -ERANGE;
        CPU_SET_S(cpu, m->size, m->set);
        return 0;
}

void cpumask_clear(CpuMask *m, unsigned cpu) {
        if (cpu < m->capacity)
                CPU_CLR_S(cpu, m->size, m->set);
}

bool cpumask_isset(const CpuMask *m, unsigned cpu) {
        return cpu < m->capacity && CPU_ISSET_S(cpu, m->size, m->set);
}

void cpumask_zero(CpuMask *m) {
        CPU_ZERO_S(m->size, m->set);
}

int cpumask_set_range(CpuMask *m, unsigned lo, unsigned hi) {
        if (lo > hi)
                return -EINVAL;
        if (hi >= m->capacity)
                return -ERANGE;
        for (unsigned c = lo; c <= hi; c++)
                CPU_SET_S(c, m->size, m->set);
        return 0;
}

unsigned cpumask_count(const CpuMask *m) {
        return (unsigned) CPU_COUNT_S(m->size, m->set);
}

bool cpumask_is_empty(const CpuMask *m) {
        return cpumask_count(m) == 0;
}

bool cpumask_equal(const CpuMask *a, const CpuMask *b) {
        if (a->size == b->size)
                return CPU_EQUAL_S(a->size, a->set, b->set);
        return cpumask_is_subset(a, b) && cpumask_is_subset(b, a);
}

bool cpumask_is_subset(const CpuMask *a, const CpuMask *b) {
        CPUMASK_FOREACH(c, a)
                if (!cpumask_isset(b, (unsigned) c))
                        return false;
        return true;
}

bool cpumask_intersects(const CpuMask *a, const CpuMask *b) {
        CPUMASK_FOREACH(c, a)
                if (cpumask_isset(b, (unsigned) c))
                        return true;
        return false;
}

typedef enum { OP_AND, OP_OR, OP_ANDNOT } MaskOp;

static void mask_op(CpuMask *dst, const CpuMask *a, const CpuMask *b, MaskOp op) {
        if (op != OP_ANDNOT && dst->size == a->size && a->size == b->size) {
                if (op == OP_AND)
                        CPU_AND_S(dst->size, dst->set, a->set, b->set);
                else
                        CPU_OR_S(dst->size, dst->set, a->set, b->set);
                return;
        }
        /* Sizes differ, or glibc has no CPU_ANDNOT_S: bit by bit (8192 CPUs at most). */
        for (unsigned c = 0; c < dst->capacity; c++) {
                bool x = cpumask_isset(a, c), y = cpumask_isset(b, c);
                bool v = op == OP_AND ? (x && y) : op == OP_OR ? (x || y) : (x && !y);

                if (v)
                        CPU_SET_S(c, dst->size, dst->set);
                else
                        CPU_CLR_S(c, dst->size, dst->set);
        }
}

void cpumask_and(CpuMask *dst, const CpuMask *a, const CpuMask *b) {
        mask_op(dst, a, b, OP_AND);
}

void cpumask_or(CpuMask *dst, const CpuMask *a, const CpuMask *b) {
        mask_op(dst, a, b, OP_OR);
}

void cpumask_andnot(CpuMask *dst, const CpuMask *a, const CpuMask *b) {
        mask_op(dst, a, b, OP_ANDNOT);
}

int cpumask_next(const CpuMask *m, int prev) {
        for (unsigned c = (unsigned) (prev + 1); c < m->capacity; c++)
                if (CPU_ISSET_S(c, m->size, m->set))
                        return (int) c;
        return -1;
}

cpu_set_t *cpumask_cpu_set(const CpuMask *m) {
        return m->set;
}

size_t cpumask_cpu_set_size(const CpuMask *m) {
        return m->size;
}

/* Reads a decimal CPU number at *p; no sign, no overflow past CPUMASK_MAX_CPUS * 10. */
static int parse_cpu(const char **p, unsigned *ret) {
        unsigned long v = 0;
        const char *s = *p;

        if (!isdigit((unsigned char) *s))
                return -EINVAL;
        for (; isdigit((unsigned char) *s); s++) {
                v = v * 10 + (unsigned long) (*s - '0');
                if (v > UINT_MAX / 16)
                        return -ERANGE;
        }
        *p = s;
        *ret = (unsigned) v;
        return 0;
}

int cpumask_parse(const char *s, unsigned capacity, CpuMask **ret, size_t *ret_errpos) {
        _cleanup_cpumask_ CpuMask *m = NULL;
        const char *p = s, *end = s + strlen(s), *tok;
        int r;

        m = cpumask_new(capacity);
        if (!m)
                return capacity == 0 || capacity > CPUMASK_MAX_CPUS ? -EINVAL : -ENOMEM;

        while (p < end && isspace((unsigned char) *p))
                p++;
        while (end > p && isspace((unsigned char) end[-1]))
                end--;

        while (p < end) {
                unsigned lo, hi;

                tok = p;
                r = parse_cpu(&p, &lo);
                if (r < 0)
                        goto fail;
                hi = lo;
                if (p < end && *p == '-') {
                        p++;
                        r = parse_cpu(&p, &hi);
                        if (r < 0)
                                goto fail;
                        if (hi < lo) {
                                r = -EINVAL;
                                goto fail;
                        }
                }
                if (hi >= capacity) {
                        r = -ERANGE;
                        goto fail;
                }
                (void) cpumask_set_range(m, lo, hi);
                if (p == end)
                        break;
                if (*p != ',' || p + 1 == end) { /* junk, or a trailing comma */
                        tok = p;
                        r = -EINVAL;
                        goto fail;
                }
                p++;
        }

        *ret = TAKE_PTR(m);
        return 0;

fail:
        if (ret_errpos)
                *ret_errpos = (size_t) (tok - s);
        return r;
}

int cpumask_format(const CpuMask *m, char **ret) {
        /* Worst case "0,2,4,...": at most 5 digits and a comma per CPU. */
        size_t cap = (size_t) m->capacity * 6 + 1, len = 0;
        _cleanup_free_ char *buf = malloc(cap);
        int c = cpumask_next(m, -1);

        if (!buf)
                return -ENOMEM;
        buf[0] = '\0';
        while (c >= 0) {
                int lo = c, hi = c, n;

                while ((c = cpumask_next(m, hi)) == hi + 1)
                        hi = c;
                n = lo == hi ? snprintf(buf + len, cap - len, "%s%d", len ? "," : "", lo)
                             : snprintf(buf + len, cap - len, "%s%d-%d", len ? "," : "", lo, hi);
                if (n < 0 || (size_t) n >= cap - len)
                        return -ENOBUFS; /* cannot happen with the bound above */
                len += (size_t) n;
        }
        *ret = TAKE_PTR(buf);
        return 0;
}
