/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup-levers.h"
#include "cgroup.h"
#include "fileio.h"
#include "parse.h"

#define RECORD_TMP_FILE "changes.tmp"
#define RECORD_HEADER "cgbalance-changes 1"

/* Each attribute's line keyword and valid range, for parse and format. */
static const struct {
        const char *keyword;
        uint64_t min, max;
} cgroup_attrs[_RECORD_CGROUP_ATTR_MAX] = {
        /* The largest native weight of either version (cpu.shares; cpu.weight stops at 10000). */
        [RECORD_CGROUP_WEIGHT] = { "cgroup", 1, CGROUP_SHARES_MAX },
        [RECORD_CGROUP_IDLE] = { "cgroup-idle", 0, 1 },
        /* 0 is no limit; the kernel's own range above it (1000..) is the writer's to check */
        [RECORD_CGROUP_QUOTA] = { "cgroup-quota", 0, CGROUP_QUOTA_MAX_USEC },
};

static bool attr_is_valid(RecordCgroupAttr attr) {
        return (unsigned) attr < _RECORD_CGROUP_ATTR_MAX;
}

/* ---- in memory */

void record_task_done(RecordTask *t) {
        cpumask_free(t->orig);
        cpumask_free(t->set);
        *t = (RecordTask){};
}

static void cgroup_done(RecordCgroup *c) {
        free(c->path);
        cpumask_free(c->partition);
        *c = (RecordCgroup){};
}

Record *record_free(Record *r) {
        if (!r)
                return NULL;
        for (size_t i = 0; i < r->n_tasks; i++)
                record_task_done(&r->tasks[i]);
        for (size_t i = 0; i < r->n_cgroups; i++)
                cgroup_done(&r->cgroups[i]);
        free(r->tasks);
        free(r->cgroups);
        free(r->bans);
        free(r);
        return NULL;
}

int record_new(Record **ret) {
        Record *r;

        if (!ret)
                return -EINVAL;
        r = calloc(1, sizeof *r);
        if (!r)
                return -ENOMEM;
        *ret = r;
        return 0;
}

bool record_is_empty(const Record *r) {
        return r->n_tasks == 0 && r->n_cgroups == 0;
}

void record_clear(Record *r) {
        for (size_t i = 0; i < r->n_tasks; i++)
                record_task_done(&r->tasks[i]);
        for (size_t i = 0; i < r->n_cgroups; i++)
                cgroup_done(&r->cgroups[i]);
        r->tasks = mfree(r->tasks);
        r->cgroups = mfree(r->cgroups);
        r->n_tasks = r->n_cgroups = 0;
}

/* Inserts *elem at index i of the array *base of *n elements of size bytes. -ENOMEM, with the
 * array untouched. */
static int array_insert(void **base, size_t *n, size_t size, size_t i, const void *elem) {
        char *a = reallocarray(*base, *n + 1, size);

        if (!a)
                return -ENOMEM;
        memmove(a + (i + 1) * size, a + i * size, (*n - i) * size);
        memcpy(a + i * size, elem, size);
        *base = a;
        (*n)++;
        return 0;
}

/* Removes the element at index i (its owned memory is the caller's to free first). */
static void array_remove(void *base, size_t *n, size_t size, size_t i) {
        char *a = base;

        memmove(a + i * size, a + (i + 1) * size, (*n - i - 1) * size);
        (*n)--;
}

/* The index of pid's element in an array sorted by pid, of structs whose first member is the
 * pid (RecordTask, RecordBan), or where it would go. */
static size_t pid_pos(const void *base, size_t n, size_t size, pid_t pid) {
        size_t lo = 0, hi = n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                pid_t p;

                memcpy(&p, (const char *) base + mid * size, sizeof p);
                if (p < pid)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

_Static_assert(offsetof(RecordTask, pid) == 0, "pid_pos() reads the pid first");
_Static_assert(offsetof(RecordBan, pid) == 0, "pid_pos() reads the pid first");

static size_t task_pos(const Record *r, pid_t pid) {
        return pid_pos(r->tasks, r->n_tasks, sizeof *r->tasks, pid);
}

const RecordTask *record_find_task(const Record *r, pid_t pid) {
        size_t i = task_pos(r, pid);

        return i < r->n_tasks && r->tasks[i].pid == pid ? &r->tasks[i] : NULL;
}

bool record_lookup_task(const Record *r, pid_t pid, uint64_t starttime_ticks,
                        const CpuMask **ret_set, uint64_t *ret_when_usec) {
        const RecordTask *t = r ? record_find_task(r, pid) : NULL;

        if (!t || t->starttime_ticks != starttime_ticks)
                return false;
        if (ret_set)
                *ret_set = t->set;
        if (ret_when_usec)
                *ret_when_usec = t->when_usec;
        return true;
}

int record_put_task(Record *r, RecordTask *t) {
        size_t i = task_pos(r, t->pid);

        if (i < r->n_tasks && r->tasks[i].pid == t->pid)
                record_task_done(&r->tasks[i]);
        else if (array_insert((void **) &r->tasks, &r->n_tasks, sizeof *t, i, t) < 0)
                return -ENOMEM;
        r->tasks[i] = *t;
        *t = (RecordTask){};
        return 0;
}

int record_update_task_set(Record *r, pid_t pid, CpuMask **set) {
        size_t i = task_pos(r, pid);

        if (!set || !*set || cpumask_is_empty(*set))
                return -EINVAL;
        if (i >= r->n_tasks || r->tasks[i].pid != pid)
                return -ENOENT;
        cpumask_free(r->tasks[i].set);
        r->tasks[i].set = TAKE_PTR(*set);
        return 0;
}

void record_drop_task(Record *r, pid_t pid) {
        size_t i = task_pos(r, pid);

        if (i >= r->n_tasks || r->tasks[i].pid != pid)
                return;
        record_task_done(&r->tasks[i]);
        array_remove(r->tasks, &r->n_tasks, sizeof *r->tasks, i);
}

int record_task_copy(const RecordTask *t, RecordTask *ret) {
        RecordTask c = *t;

        c.orig = cpumask_copy(t->orig);
        c.set = cpumask_copy(t->set);
        if (!c.orig || !c.set) {
                record_task_done(&c);
                return -ENOMEM;
        }
        *ret = c;
        return 0;
}

static size_t cgroup_pos(const Record *r, const char *path) {
        size_t lo = 0, hi = r->n_cgroups;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (strcmp(r->cgroups[mid].path, path) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

/* path's entry, for the functions that change it. */
static RecordCgroup *cgroup_find(const Record *r, const char *path) {
        size_t i = path ? cgroup_pos(r, path) : r->n_cgroups;

        return i < r->n_cgroups && streq(r->cgroups[i].path, path) ? &r->cgroups[i] : NULL;
}

const RecordCgroup *record_find_cgroup(const Record *r, const char *path) {
        return cgroup_find(r, path);
}

bool record_lookup_cgroup(const Record *r, const char *path, RecordCgroupAttr attr,
                          uint64_t *ret_orig, uint64_t *ret_set) {
        const RecordCgroup *c = r && attr_is_valid(attr) ? cgroup_find(r, path) : NULL;

        if (!c || !c->values[attr].recorded)
                return false;
        if (ret_orig)
                *ret_orig = c->values[attr].orig;
        if (ret_set)
                *ret_set = c->values[attr].set;
        return true;
}

/* path's entry, made (empty) if there is none; NULL on ENOMEM. */
static RecordCgroup *cgroup_entry(Record *r, const char *path) {
        RecordCgroup c = {};
        size_t i = cgroup_pos(r, path);

        if (i >= r->n_cgroups || !streq(r->cgroups[i].path, path)) {
                c.path = strdup(path);
                if (!c.path ||
                    array_insert((void **) &r->cgroups, &r->n_cgroups, sizeof c, i, &c) < 0) {
                        free(c.path);
                        return NULL;
                }
        }
        return &r->cgroups[i];
}

int record_put_cgroup(Record *r, const char *path, RecordCgroupAttr attr, uint64_t orig,
                      uint64_t set) {
        RecordCgroup *c;

        if (!path || !attr_is_valid(attr))
                return -EINVAL;
        c = cgroup_entry(r, path);
        if (!c)
                return -ENOMEM;
        c->values[attr] = (RecordValue){ .recorded = true, .orig = orig, .set = set };
        return 0;
}

int record_update_cgroup_set(Record *r, const char *path, RecordCgroupAttr attr, uint64_t set) {
        RecordCgroup *c;

        if (!path || !attr_is_valid(attr))
                return -EINVAL;
        c = cgroup_find(r, path);
        if (!c || !c->values[attr].recorded)
                return -ENOENT;
        c->values[attr].set = set;
        return 0;
}

static bool cgroup_has_values(const RecordCgroup *c) {
        for (size_t a = 0; a < _RECORD_CGROUP_ATTR_MAX; a++)
                if (c->values[a].recorded)
                        return true;
        return c->partition != NULL;
}

const CpuMask *record_lookup_partition(const Record *r, const char *path) {
        const RecordCgroup *c = r ? cgroup_find(r, path) : NULL;

        return c ? c->partition : NULL;
}

int record_put_partition(Record *r, const char *path, const CpuMask *cpus) {
        _cleanup_cpumask_ CpuMask *copy = NULL;
        RecordCgroup *c;

        if (!r || !path)
                return -EINVAL;
        if (!cpus || cpumask_is_empty(cpus)) {
                RecordCgroup *g = cgroup_find(r, path);

                if (g) {
                        g->partition = cpumask_free(g->partition);
                        if (!cgroup_has_values(g))
                                record_drop_cgroup(r, path);
                }
                return 0;
        }
        copy = cpumask_copy(cpus);
        c = copy ? cgroup_entry(r, path) : NULL;
        if (!c)
                return -ENOMEM;
        cpumask_free(c->partition);
        c->partition = TAKE_PTR(copy);
        return 0;
}

void record_drop_cgroup(Record *r, const char *path) {
        size_t i = path ? cgroup_pos(r, path) : r->n_cgroups;

        if (i >= r->n_cgroups || !streq(r->cgroups[i].path, path))
                return;
        cgroup_done(&r->cgroups[i]);
        array_remove(r->cgroups, &r->n_cgroups, sizeof *r->cgroups, i);
}

void record_drop_cgroup_value(Record *r, const char *path, RecordCgroupAttr attr) {
        RecordCgroup *c = attr_is_valid(attr) ? cgroup_find(r, path) : NULL;

        if (!c)
                return;
        c->values[attr] = (RecordValue){};
        if (!cgroup_has_values(c))
                record_drop_cgroup(r, path);
}

static size_t ban_pos(const Record *r, pid_t pid) {
        return pid_pos(r->bans, r->n_bans, sizeof *r->bans, pid);
}

int record_ban_task(Record *r, pid_t pid, uint64_t starttime_ticks) {
        RecordBan b = { pid, starttime_ticks };
        size_t i = ban_pos(r, pid);

        if (i < r->n_bans && r->bans[i].pid == pid) {
                r->bans[i] = b;
                return 0;
        }
        return array_insert((void **) &r->bans, &r->n_bans, sizeof b, i, &b);
}

bool record_task_banned(const Record *r, pid_t pid, uint64_t starttime_ticks) {
        size_t i = r ? ban_pos(r, pid) : 0;

        return r && i < r->n_bans && r->bans[i].pid == pid &&
               r->bans[i].starttime_ticks == starttime_ticks;
}

void record_unban_task(Record *r, pid_t pid) {
        size_t i = ban_pos(r, pid);

        if (i >= r->n_bans || r->bans[i].pid != pid)
                return;
        array_remove(r->bans, &r->n_bans, sizeof *r->bans, i);
}

static int copy_tasks(const Record *r, Record *c) {
        if (r->n_tasks == 0)
                return 0;
        c->tasks = calloc(r->n_tasks, sizeof *c->tasks);
        if (!c->tasks)
                return -ENOMEM;
        for (; c->n_tasks < r->n_tasks; c->n_tasks++)
                if (record_task_copy(&r->tasks[c->n_tasks], &c->tasks[c->n_tasks]) < 0)
                        return -ENOMEM;
        return 0;
}

static int copy_cgroups(const Record *r, Record *c) {
        if (r->n_cgroups == 0)
                return 0;
        c->cgroups = calloc(r->n_cgroups, sizeof *c->cgroups);
        if (!c->cgroups)
                return -ENOMEM;
        for (; c->n_cgroups < r->n_cgroups; c->n_cgroups++) {
                RecordCgroup *g = &c->cgroups[c->n_cgroups];

                *g = r->cgroups[c->n_cgroups];
                g->partition = NULL;
                g->path = strdup(g->path);
                if (!g->path)
                        return -ENOMEM;
                if (r->cgroups[c->n_cgroups].partition) {
                        g->partition = cpumask_copy(r->cgroups[c->n_cgroups].partition);
                        if (!g->partition) {
                                c->n_cgroups++; /* freed with c */
                                return -ENOMEM;
                        }
                }
        }
        return 0;
}

int record_copy(const Record *r, Record **ret) {
        _cleanup_record_ Record *c = NULL;
        int k;

        if (!r || !ret)
                return -EINVAL;
        k = record_new(&c);
        if (k >= 0)
                k = copy_tasks(r, c);
        if (k >= 0)
                k = copy_cgroups(r, c);
        if (k < 0)
                return k;
        if (r->n_bans > 0) {
                c->bans = reallocarray(NULL, r->n_bans, sizeof *c->bans);
                if (!c->bans)
                        return -ENOMEM;
                memcpy(c->bans, r->bans, r->n_bans * sizeof *c->bans);
                c->n_bans = r->n_bans;
        }
        *ret = TAKE_PTR(c);
        return 0;
}

/* ---- as text */

typedef struct Span {
        const char *s;
        size_t n;
} Span;

/* Decimal, no sign, no leading zero, in min..max. */
static int parse_number(Span f, uint64_t min, uint64_t max, uint64_t *ret) {
        uint64_t v;

        if (f.n > 1 && f.s[0] == '0')
                return -EBADMSG;
        if (parse_u64_span(f.s, f.n, &v) < 0 || v < min || v > max)
                return -EBADMSG;
        *ret = v;
        return 0;
}

/* A non-empty cpulist exactly as cpumask_format() writes it. */
static int parse_cpulist(Span f, unsigned capacity, CpuMask **ret) {
        _cleanup_free_ char *tok = NULL, *back = NULL;
        _cleanup_cpumask_ CpuMask *m = NULL;
        int r;

        if (f.n == 0 || strspn(f.s, "0123456789,-") < f.n)
                return -EBADMSG;
        tok = strndup(f.s, f.n);
        if (!tok)
                return -ENOMEM;
        r = cpumask_parse(tok, capacity, &m, NULL);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || cpumask_is_empty(m))
                return -EBADMSG;
        r = cpumask_format(m, &back);
        if (r < 0)
                return r;
        if (!streq(back, tok))
                return -EBADMSG;
        *ret = TAKE_PTR(m);
        return 0;
}

/* Splits line into exactly n fields at single spaces; with rest, the last field is the rest of
 * the line, spaces and all. Every field is non-empty. */
static int split_line(Span line, Span *f, size_t n, bool rest) {
        const char *p = line.s, *end = line.s + line.n;

        for (size_t i = 0; i < n; i++) {
                const char *sp = i + 1 == n && rest ? NULL : memchr(p, ' ', (size_t) (end - p));

                if (i + 1 < n && !sp)
                        return -EBADMSG;
                if (i + 1 == n && sp)
                        return -EBADMSG;
                f[i] = (Span){ p, (size_t) ((sp ? sp : end) - p) };
                if (f[i].n == 0)
                        return -EBADMSG;
                p = sp ? sp + 1 : end;
        }
        return 0;
}

static bool span_is(Span f, const char *w) {
        return f.n == strlen(w) && memcmp(f.s, w, f.n) == 0;
}

static int parse_task_line(Span line, unsigned capacity, Record *rec, size_t *cap) {
        RecordTask t = {};
        uint64_t pid;
        Span f[6];
        int r;

        r = split_line(line, f, ELEMENTSOF(f), /* rest= */ false);
        if (r >= 0)
                r = parse_number(f[1], 1, INT_MAX, &pid);
        if (r >= 0)
                r = parse_number(f[2], 0, UINT64_MAX, &t.starttime_ticks);
        if (r >= 0)
                r = parse_cpulist(f[3], capacity, &t.orig);
        if (r >= 0)
                r = parse_cpulist(f[4], capacity, &t.set);
        if (r >= 0)
                r = parse_number(f[5], 0, UINT64_MAX, &t.when_usec);
        if (r >= 0 && rec->n_tasks == *cap) {
                size_t n = *cap ? *cap * 2 : 16;
                RecordTask *a = reallocarray(rec->tasks, n, sizeof *a);

                if (a) {
                        rec->tasks = a;
                        *cap = n;
                } else
                        r = -ENOMEM;
        }
        if (r < 0) {
                record_task_done(&t);
                return r;
        }
        t.pid = (pid_t) pid;
        rec->tasks[rec->n_tasks++] = t;
        return 0;
}

/* Room for one more group entry while parsing (*cap entries allocated). -ENOMEM. */
static int cgroups_room(Record *rec, size_t *cap) {
        size_t n = *cap ? *cap * 2 : 16;
        RecordCgroup *c;

        if (rec->n_cgroups < *cap)
                return 0;
        c = reallocarray(rec->cgroups, n, sizeof *c);
        if (!c)
                return -ENOMEM;
        rec->cgroups = c;
        *cap = n;
        return 0;
}

/* A line of one group attribute, appended as an entry of its own: record_merge_cgroups() puts
 * a group's attributes together once all are read. */
static int parse_cgroup_line(Span line, RecordCgroupAttr attr, Record *rec, size_t *cap) {
        uint64_t orig, set;
        char *path;
        Span f[4];
        int r;

        r = split_line(line, f, ELEMENTSOF(f), /* rest= */ true);
        if (r >= 0)
                r = parse_number(f[1], cgroup_attrs[attr].min, cgroup_attrs[attr].max, &orig);
        if (r >= 0)
                r = parse_number(f[2], cgroup_attrs[attr].min, cgroup_attrs[attr].max, &set);
        if (r < 0)
                return r;
        path = strndup(f[3].s, f[3].n);
        if (!path)
                return -ENOMEM;
        if (!*path || !cgroup_path_is_valid(path)) {
                free(path);
                return -EBADMSG;
        }
        if (cgroups_room(rec, cap) < 0) {
                free(path);
                return -ENOMEM;
        }
        rec->cgroups[rec->n_cgroups] = (RecordCgroup){ .path = path };
        rec->cgroups[rec->n_cgroups++].values[attr] = (RecordValue){ true, orig, set };
        return 0;
}

/* The CPUs a partition keeps a group's tasks off, and the group: an entry of its own, merged
 * like an attribute's line. */
static int parse_partition_line(Span line, unsigned capacity, Record *rec, size_t *cap) {
        _cleanup_cpumask_ CpuMask *cpus = NULL;
        _cleanup_free_ char *path = NULL;
        Span f[3];
        int r;

        r = split_line(line, f, ELEMENTSOF(f), /* rest= */ true);
        if (r >= 0)
                r = parse_cpulist(f[1], capacity, &cpus);
        if (r < 0)
                return r;
        path = strndup(f[2].s, f[2].n);
        if (!path)
                return -ENOMEM;
        if (!*path || !cgroup_path_is_valid(path))
                return -EBADMSG;
        if (cgroups_room(rec, cap) < 0)
                return -ENOMEM;
        rec->cgroups[rec->n_cgroups++] =
                (RecordCgroup){ .path = TAKE_PTR(path), .partition = TAKE_PTR(cpus) };
        return 0;
}

#define LINE_PARTITION (1 + _RECORD_CGROUP_ATTR_MAX)

/* The kind of a line: 0 for a task, 1 + its attribute for a group, LINE_PARTITION, -EBADMSG. */
static int line_kind(Span line) {
        Span kind = { line.s, strcspn(line.s, " \n") };

        if (span_is(kind, "task"))
                return 0;
        if (span_is(kind, RECORD_PARTITION_KEYWORD))
                return LINE_PARTITION;
        for (size_t a = 0; a < _RECORD_CGROUP_ATTR_MAX; a++)
                if (span_is(kind, cgroup_attrs[a].keyword))
                        return 1 + (int) a;
        return -EBADMSG;
}

static int cmp_task(const void *a, const void *b) {
        pid_t x = ((const RecordTask *) a)->pid, y = ((const RecordTask *) b)->pid;

        return (x > y) - (x < y);
}

static int cmp_cgroup(const void *a, const void *b) {
        return strcmp(((const RecordCgroup *) a)->path, ((const RecordCgroup *) b)->path);
}

/* Makes one entry of each group's lines, in place (rec->cgroups sorted by path). True if a
 * group has an attribute twice. */
static bool record_merge_cgroups(Record *rec) {
        bool twice = false;
        size_t n = 0;

        for (size_t i = 0; i < rec->n_cgroups; i++) {
                RecordCgroup *c = &rec->cgroups[i], *last = n > 0 ? &rec->cgroups[n - 1] : NULL;

                if (!last || !streq(last->path, c->path)) {
                        rec->cgroups[n++] = *c;
                        continue;
                }
                for (size_t a = 0; a < _RECORD_CGROUP_ATTR_MAX; a++) {
                        if (!c->values[a].recorded)
                                continue;
                        twice = twice || last->values[a].recorded;
                        last->values[a] = c->values[a];
                }
                if (c->partition) {
                        twice = twice || last->partition;
                        cpumask_free(last->partition);
                        last->partition = TAKE_PTR(c->partition);
                }
                free(c->path);
        }
        rec->n_cgroups = n;
        return twice;
}

/* Sorts the entries; true if a pid, or an attribute of a path, is there twice. */
static bool record_sort_has_duplicates(Record *rec) {
        if (rec->n_tasks > 1) /* qsort(NULL, 0, ...) is undefined */
                qsort(rec->tasks, rec->n_tasks, sizeof *rec->tasks, cmp_task);
        for (size_t i = 1; i < rec->n_tasks; i++)
                if (rec->tasks[i].pid == rec->tasks[i - 1].pid)
                        return true;
        if (rec->n_cgroups > 1)
                qsort(rec->cgroups, rec->n_cgroups, sizeof *rec->cgroups, cmp_cgroup);
        return record_merge_cgroups(rec);
}

/* One line after the header. */
static int parse_line(Span line, unsigned capacity, Record *rec, size_t *task_cap,
                      size_t *cgroup_cap) {
        int kind = line_kind(line);

        if (kind < 0)
                return kind;
        if (kind == 0)
                return parse_task_line(line, capacity, rec, task_cap);
        if (kind == LINE_PARTITION)
                return parse_partition_line(line, capacity, rec, cgroup_cap);
        return parse_cgroup_line(line, (RecordCgroupAttr) (kind - 1), rec, cgroup_cap);
}

int record_parse(const char *text, unsigned capacity, Record **ret, unsigned *ret_line) {
        _cleanup_record_ Record *rec = NULL;
        size_t task_cap = 0, cgroup_cap = 0;
        unsigned line_no = 0;
        const char *p;
        int r;

        if (ret_line)
                *ret_line = 0;
        if (!text || !ret || capacity == 0 || capacity > CPUMASK_MAX_CPUS)
                return -EINVAL;
        r = record_new(&rec);
        for (p = text; *p && r >= 0;) {
                const char *eol = strchr(p, '\n');
                Span line = { p, eol ? (size_t) (eol - p) : 0 };

                line_no++;
                if (!eol) /* cut short */
                        r = -EBADMSG;
                else if (line_no == 1)
                        r = span_is(line, RECORD_HEADER) ? 0 : -EBADMSG;
                else
                        r = parse_line(line, capacity, rec, &task_cap, &cgroup_cap);
                if (eol)
                        p = eol + 1;
        }
        if (r >= 0 && line_no == 0) /* no header */
                r = -EBADMSG, line_no = 1;
        if (r >= 0 && record_sort_has_duplicates(rec))
                r = -EBADMSG, line_no = 0;
        if (r < 0) {
                if (ret_line && r == -EBADMSG)
                        *ret_line = line_no;
                return r;
        }
        *ret = TAKE_PTR(rec);
        return 0;
}

static int format_task(FILE *f, const RecordTask *t) {
        _cleanup_free_ char *orig = NULL, *set = NULL;
        int r;

        if (t->pid <= 0 || !t->orig || !t->set || cpumask_is_empty(t->orig) ||
            cpumask_is_empty(t->set))
                return -EINVAL;
        r = cpumask_format(t->orig, &orig);
        if (r >= 0)
                r = cpumask_format(t->set, &set);
        if (r < 0)
                return r;
        fprintf(f, "task %d %" PRIu64 " %s %s %" PRIu64 "\n", (int) t->pid, t->starttime_ticks,
                orig, set, t->when_usec);
        return 0;
}

static bool value_in_range(RecordCgroupAttr attr, uint64_t v) {
        return v >= cgroup_attrs[attr].min && v <= cgroup_attrs[attr].max;
}

/* A line per attribute recorded, in the order of RecordCgroupAttr. */
static int format_cgroup(FILE *f, const RecordCgroup *c) {
        if (!c->path || !*c->path || !cgroup_path_is_valid(c->path) || !cgroup_has_values(c))
                return -EINVAL;
        for (RecordCgroupAttr a = 0; a < _RECORD_CGROUP_ATTR_MAX; a++) {
                const RecordValue *v = &c->values[a];

                if (!v->recorded)
                        continue;
                if (!value_in_range(a, v->orig) || !value_in_range(a, v->set))
                        return -EINVAL;
                fprintf(f, "%s %" PRIu64 " %" PRIu64 " %s\n", cgroup_attrs[a].keyword, v->orig,
                        v->set, c->path);
        }
        if (c->partition) {
                _cleanup_free_ char *cpus = NULL;
                int r;

                if (cpumask_is_empty(c->partition))
                        return -EINVAL;
                r = cpumask_format(c->partition, &cpus);
                if (r < 0)
                        return r;
                fprintf(f, RECORD_PARTITION_KEYWORD " %s %s\n", cpus, c->path);
        }
        return 0;
}

int record_format(const Record *r, char **ret) {
        _cleanup_free_ char *buf = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        size_t size = 0;
        int k;

        if (!r || !ret)
                return -EINVAL;
        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        fputs(RECORD_HEADER "\n", f);
        for (size_t i = 0; i < r->n_tasks; i++) {
                k = format_task(f, &r->tasks[i]);
                if (k < 0)
                        return k;
        }
        for (size_t i = 0; i < r->n_cgroups; i++) {
                k = format_cgroup(f, &r->cgroups[i]);
                if (k < 0)
                        return k;
        }
        k = fclose(TAKE_PTR(f));
        if (k != 0 || !buf)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        return 0;
}

/* ---- on disk */

int record_save_at(int dir_fd, const Record *r) {
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int fd = -EBADF;
        int k;

        if (dir_fd < 0)
                return -EBADF;
        if (!r)
                return -EINVAL;
        if (record_is_empty(r)) {
                if (unlinkat(dir_fd, RECORD_FILE, 0) < 0 && errno != ENOENT)
                        return negative_errno();
                return fsync(dir_fd) < 0 ? negative_errno() : 0;
        }
        k = record_format(r, &text);
        if (k < 0)
                return k;
        fd = openat(dir_fd, RECORD_TMP_FILE,
                    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
        if (fd < 0)
                return negative_errno();
        k = write_full(fd, text, strlen(text));
        if (k >= 0 && fsync(fd) < 0)
                k = negative_errno();
        if (k >= 0 && close(TAKE_FD(fd)) < 0)
                k = negative_errno();
        if (k >= 0 && renameat(dir_fd, RECORD_TMP_FILE, dir_fd, RECORD_FILE) < 0)
                k = negative_errno();
        if (k < 0) {
                (void) unlinkat(dir_fd, RECORD_TMP_FILE, 0);
                return k;
        }
        return fsync(dir_fd) < 0 ? negative_errno() : 0;
}

/* The lines of text after the first, a cut last one counted. */
static size_t count_entries(const char *text, size_t len) {
        size_t lines = 0;

        for (const char *p = text, *end = text + len; p < end; lines++) {
                const char *eol = memchr(p, '\n', (size_t) (end - p));

                p = eol ? eol + 1 : end;
        }
        return lines > 0 ? lines - 1 : 0;
}

int record_load_at(int dir_fd, unsigned capacity, Record **ret, RecordFileInfo *ret_info) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        RecordFileInfo info = {};
        struct stat st;
        size_t len = 0;
        int r;

        if (dir_fd < 0)
                return -EBADF;
        if (!ret_info)
                ret_info = &info;
        *ret_info = (RecordFileInfo){}; /* filled in as far as the load gets */
        /* O_NONBLOCK: a FIFO put where the record should be would block the open (and the start)
         * until a writer came. */
        fd = openat(dir_fd, RECORD_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return S_ISDIR(st.st_mode) ? -EISDIR : -ENOTSUP;
        ret_info->size_bytes = (uint64_t) st.st_size;
        if (st.st_size > RECORD_SIZE_MAX) /* refused before reading any of it */
                return -EFBIG;
        r = read_text_fd(fd, RECORD_SIZE_MAX, &buf, &len); /* a NUL byte: -EBADMSG */
        if (r == -EFBIG) /* it grew meanwhile: more than this, at least */
                ret_info->size_bytes = RECORD_SIZE_MAX + 1;
        if (r < 0)
                return r;
        ret_info->size_bytes = len;
        /* counted before any is parsed: parsing and restoring cost per entry */
        ret_info->entries = count_entries(buf, len);
        if (ret_info->entries > RECORD_ENTRIES_MAX)
                return -E2BIG;
        return record_parse(buf, capacity, ret, &ret_info->line);
}

int record_set_aside_at(int dir_fd) {
        if (renameat(dir_fd, RECORD_FILE, dir_fd, RECORD_CORRUPT_FILE) < 0)
                return negative_errno();
        return 0;
}
