/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "trace.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "fileio.h"

static const uint8_t trace_magic[7] = { 'C', 'G', 'B', 'R', 'E', 'C', 0x1a };

enum {
        FRAME_INFO = 'I',
        FRAME_TOPOLOGY = 'T',
        FRAME_CONFIG = 'C',
        FRAME_TICK = 'K',
};

/* A tick's flags besides TRACE_TICK_*: what the plan says of itself. */
#define TICK_NODE_BALANCE_RAN (1u << 8)
#define TICK_FLAGS_KNOWN \
        (TRACE_TICK_FORCE_NODE_BALANCE | TRACE_TICK_WEIGHTS_IGNORED | TICK_NODE_BALANCE_RAN)

/* Task operations: the low 2 bits of a varint, the argument above them. */
enum {
        OP_SAME = 0, /* arg: a run of that many tasks as they were */
        OP_CHANGED = 1, /* arg: CH_* bits, then those fields */
        OP_SKIP = 2, /* arg: that many of the last tick's tasks are gone */
        OP_NEW = 3, /* a whole task follows */
};
#define CH_UTIL (1u << 0)
#define CH_WAIT (1u << 1)
#define CH_CPU (1u << 2)
#define CH_MEM (1u << 3)
#define CH_OTHER (1u << 4) /* name, affinity, group, flags, last move */

/* Task flags in the "other" block */
#define TF_OURS (1u << 0)
#define TF_FOREIGN (1u << 1)
#define TF_MEM_EXACT (1u << 2)

/* Group fields, in the order they follow a group's changed-field mask. */
enum {
        G_PATH,
        G_FLAGS,
        G_PRESSURE,
        G_UTIL,
        G_WEIGHT,
        G_BASE_WEIGHT,
        G_QUOTA,
        G_THROTTLED,
        G_LATENCY,
        G_PARTITION,
        _G_MAX,
};
#define GF_PROTECTED (1u << 0)
#define GF_HAS_PRESSURE (1u << 1)
#define GF_HAS_IDLE (1u << 2)
#define GF_IDLE (1u << 3)
#define GF_IDLE_OURS (1u << 4)
#define GF_QUOTA_OURS (1u << 5)
#define GF_HAS_LATENCY (1u << 6)
#define GF_KNOWN 0x7fu

/* References to a file's strings and masks: none, a new one follows, or number N as id N + 2. */
#define REF_NONE 0u
#define REF_NEW 1u
#define REF_FIRST 2u

#define INFO_MAX 4096u
#define STRING_MAX 4096u /* a group path, task name or reason */

/* ---- bytes */

typedef struct Buf {
        uint8_t *p;
        size_t n, cap;
        bool oom;
} Buf;

static void buf_put(Buf *b, const void *data, size_t size) {
        if (b->oom)
                return;
        if (greedy_realloc((void **) &b->p, &b->cap, b->n + size, 1, 4096) < 0) {
                b->oom = true;
                return;
        }
        memcpy(b->p + b->n, data, size);
        b->n += size;
}

static void buf_u8(Buf *b, uint8_t v) {
        buf_put(b, &v, 1);
}

static void buf_varint(Buf *b, uint64_t v) {
        uint8_t tmp[10];
        size_t n = 0;

        do {
                tmp[n] = (uint8_t) (v & 0x7f);
                v >>= 7;
                if (v)
                        tmp[n] |= 0x80;
                n++;
        } while (v);
        buf_put(b, tmp, n);
}

/* Swaps two grown arrays and their capacities: what was built for this tick becomes the last. */
static void swap_arrays(void *a, size_t *cap_a, void *b, size_t *cap_b) {
        void *t = *(void **) a;
        size_t c = *cap_a;

        *(void **) a = *(void **) b;
        *(void **) b = t;
        *cap_a = *cap_b;
        *cap_b = c;
}

static uint64_t zigzag(int64_t v) {
        return ((uint64_t) v << 1) ^ (v < 0 ? UINT64_MAX : 0);
}

static int64_t unzigzag(uint64_t v) {
        return (int64_t) (v >> 1) ^ -(int64_t) (v & 1);
}

static void buf_svarint(Buf *b, int64_t v) {
        buf_varint(b, zigzag(v));
}

static void buf_str(Buf *b, const char *s) {
        size_t n = strlen(s);

        buf_varint(b, n);
        buf_put(b, s, n);
}

/* ---- a file's strings and masks, by number: the writer's side finds them by hash */

typedef struct Dict {
        void **items; /* char * or CpuMask * */
        uint32_t *hashes;
        size_t n, cap, cap_hashes;
        uint32_t *slots; /* id + 1, 0 free; a power of two, at most half full */
        size_t n_slots;
        bool masks;
} Dict;

static uint32_t hash_bytes(const void *data, size_t size, uint32_t h) {
        const uint8_t *p = data;

        for (size_t i = 0; i < size; i++)
                h = (h ^ p[i]) * 16777619u;
        return h;
}

static uint32_t hash_mask(const CpuMask *m) {
        uint32_t h = 2166136261u;

        CPUMASK_FOREACH(cpu, m) {
                unsigned c = (unsigned) cpu;

                h = hash_bytes(&c, sizeof c, h);
        }
        return h;
}

static void dict_item_free(const Dict *d, void *item);

static void dict_clear(Dict *d) {
        for (size_t i = 0; i < d->n; i++)
                dict_item_free(d, d->items[i]);
        d->n = 0;
        if (d->slots)
                memset(d->slots, 0, d->n_slots * sizeof *d->slots);
}

static void dict_done(Dict *d) {
        dict_clear(d);
        free(d->items);
        free(d->hashes);
        free(d->slots);
}

static bool dict_item_equal(const Dict *d, size_t id, const void *item) {
        return d->masks ? cpumask_equal(d->items[id], item) : streq(d->items[id], item);
}

static int dict_rehash(Dict *d, size_t n_slots) {
        uint32_t *slots = calloc(n_slots, sizeof *slots);

        if (!slots)
                return -ENOMEM;
        for (size_t id = 0; id < d->n; id++) {
                size_t i = d->hashes[id] & (n_slots - 1);

                while (slots[i])
                        i = (i + 1) & (n_slots - 1);
                slots[i] = (uint32_t) id + 1;
        }
        free(d->slots);
        d->slots = slots;
        d->n_slots = n_slots;
        return 0;
}

static void dict_item_free(const Dict *d, void *item) {
        if (d->masks)
                cpumask_free(item);
        else
                free(item);
}

/* Takes item (owned by the dict from here, also on failure) as the next id. */
static int dict_add(Dict *d, void *item, uint32_t hash) {
        if (greedy_realloc((void **) &d->items, &d->cap, d->n + 1, sizeof *d->items, 64) < 0) {
                dict_item_free(d, item);
                return -ENOMEM;
        }
        if (d->cap_hashes < d->cap) {
                uint32_t *h = reallocarray(d->hashes, d->cap, sizeof *h);

                if (!h) {
                        dict_item_free(d, item);
                        return -ENOMEM;
                }
                d->hashes = h;
                d->cap_hashes = d->cap;
        }
        d->items[d->n] = item;
        d->hashes[d->n] = hash;
        d->n++;
        if (d->n * 2 > d->n_slots)
                return dict_rehash(d, d->n_slots ? d->n_slots * 2 : 128);
        {
                size_t i = hash & (d->n_slots - 1);

                while (d->slots[i])
                        i = (i + 1) & (d->n_slots - 1);
                d->slots[i] = (uint32_t) d->n;
        }
        return 0;
}

/* The id of item, or -1. */
static long dict_find(const Dict *d, const void *item, uint32_t hash) {
        if (d->n_slots == 0)
                return -1;
        for (size_t i = hash & (d->n_slots - 1); d->slots[i]; i = (i + 1) & (d->n_slots - 1)) {
                size_t id = d->slots[i] - 1;

                if (d->hashes[id] == hash && dict_item_equal(d, id, item))
                        return (long) id;
        }
        return -1;
}

/* ---- the writer */

typedef struct TaskRec {
        pid_t pid;
        uint64_t starttime;
        uint32_t comm; /* ref: REF_NONE or id + REF_FIRST */
        uint32_t mask; /* ref */
        size_t cgroup;
        int cpu;
        uint32_t util, wait;
        unsigned flags; /* TF_* */
        uint64_t last_move, mem_kib;
} TaskRec;

typedef struct TaskKey {
        pid_t pid;
        uint64_t starttime;
        size_t index;
} TaskKey;

typedef struct GroupRec {
        uint32_t v[_G_MAX];
} GroupRec;

struct TraceWriter {
        char *path;
        char *program;
        int fd;
        uint64_t max_size;
        bool names;
        bool broken;
        uint64_t file_bytes, total_bytes, ticks;
        char *topology; /* text */
        unsigned capacity;
        char *config;

        /* what the next tick is written against; reset with each file */
        bool have_now;
        uint64_t now;
        uint32_t *cpu_util;
        unsigned n_cpu_util;
        GroupRec *groups, *groups_next;
        size_t n_groups, cap_groups, cap_groups_next;
        TaskRec *tasks, *tasks_next;
        size_t n_tasks, cap_tasks, cap_tasks_next;
        TaskKey *keys; /* the last tick's tasks by (pid, starttime), once needed in a tick */
        size_t cap_keys;
        bool keys_sorted;
        Dict strings, masks;

        Buf frame;
};

TraceWriter *trace_writer_free(TraceWriter *w) {
        if (!w)
                return NULL;
        if (w->fd >= 0)
                close(w->fd);
        free(w->path);
        free(w->program);
        free(w->topology);
        free(w->config);
        free(w->cpu_util);
        free(w->groups);
        free(w->groups_next);
        free(w->tasks);
        free(w->tasks_next);
        free(w->keys);
        dict_done(&w->strings);
        dict_done(&w->masks);
        free(w->frame.p);
        free(w);
        return NULL;
}

const char *trace_writer_path(const TraceWriter *w) {
        return w->path;
}

uint64_t trace_writer_bytes(const TraceWriter *w) {
        return w->total_bytes;
}

uint64_t trace_writer_ticks(const TraceWriter *w) {
        return w->ticks;
}

/* A regular file or nothing, never a FIFO (which would block) or a symlink. */
static int open_new_file(const char *path) {
        struct stat st;
        int fd;

        fd = open(path,
                  O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY,
                  0640);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                int r = S_ISREG(st.st_mode) ? -errno : -EINVAL;

                close(fd);
                return r;
        }
        return fd;
}

static int rotate_away(const char *path) {
        _cleanup_free_ char *old = NULL;
        struct stat st;

        if (lstat(path, &st) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (S_ISLNK(st.st_mode))
                return -ELOOP;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        if (st.st_size == 0)
                return 0;
        if (asprintf(&old, "%s.1", path) < 0)
                return -ENOMEM;
        return rename(path, old) < 0 ? -errno : 0;
}

static void writer_reset(TraceWriter *w) {
        w->have_now = false;
        w->n_cpu_util = 0;
        w->n_groups = 0;
        w->n_tasks = 0;
        dict_clear(&w->strings);
        dict_clear(&w->masks);
}

static int writer_write(TraceWriter *w, const Buf *b) {
        int r;

        if (b->oom)
                return -ENOMEM;
        r = write_full(w->fd, b->p, b->n);
        if (r < 0) {
                w->broken = true;
                return r;
        }
        w->file_bytes += b->n;
        w->total_bytes += b->n;
        return 0;
}

static void frame_wrap(Buf *out, uint8_t kind, const Buf *payload) {
        buf_u8(out, kind);
        buf_varint(out, payload->n);
        buf_put(out, payload->p, payload->n);
        if (payload->oom)
                out->oom = true;
}

/* A frame of one text. */
static int write_text_frame(TraceWriter *w, uint8_t kind, const char *text) {
        Buf payload = { 0 }, out = { 0 };
        int r;

        buf_put(&payload, text, strlen(text));
        frame_wrap(&out, kind, &payload);
        r = writer_write(w, &out);
        free(payload.p);
        free(out.p);
        return r;
}

/* Magic, version, INFO, and the topology and config in force. */
static int writer_start_file(TraceWriter *w) {
        char host[256] = "";
        struct timeval tv;
        Buf head = { 0 }, info = { 0 };
        int r;

        w->file_bytes = 0;
        writer_reset(w);
        (void) gethostname(host, sizeof host - 1);
        (void) gettimeofday(&tv, NULL);
        buf_put(&head, trace_magic, sizeof trace_magic);
        buf_u8(&head, TRACE_FORMAT_VERSION);
        buf_str(&info, w->program);
        buf_str(&info, host);
        buf_varint(&info, (uint64_t) tv.tv_sec * 1000000u + (uint64_t) tv.tv_usec);
        frame_wrap(&head, FRAME_INFO, &info);
        free(info.p);
        r = writer_write(w, &head);
        free(head.p);
        if (r >= 0 && w->topology)
                r = write_text_frame(w, FRAME_TOPOLOGY, w->topology);
        if (r >= 0 && w->config)
                r = write_text_frame(w, FRAME_CONFIG, w->config);
        return r;
}

static int writer_rotate(TraceWriter *w) {
        int r, fd;

        close(w->fd);
        w->fd = -EBADF;
        r = rotate_away(w->path);
        if (r < 0) {
                w->broken = true;
                return r;
        }
        fd = open_new_file(w->path);
        if (fd < 0) {
                w->broken = true;
                return fd;
        }
        w->fd = fd;
        return writer_start_file(w);
}

int trace_writer_open(const char *path, const TraceWriterOptions *o, TraceWriter **ret) {
        _cleanup_trace_writer_ TraceWriter *w = calloc(1, sizeof *w);
        int r;

        if (!w)
                return -ENOMEM;
        w->fd = -EBADF;
        if (!o || o->max_size < TRACE_MIN_SIZE)
                return -EINVAL;
        w->path = strdup(path);
        w->program = strdup(o->program ? o->program : "");
        if (!w->path || !w->program)
                return -ENOMEM;
        w->max_size = o->max_size;
        w->names = o->names;
        w->masks.masks = true;
        r = rotate_away(path);
        if (r < 0)
                return r;
        w->fd = open_new_file(path);
        if (w->fd < 0)
                return w->fd;
        r = writer_start_file(w);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(w);
        return 0;
}

int trace_writer_topology(TraceWriter *w, const Topology *topo) {
        char *text = NULL;
        int r;

        if (w->broken)
                return -EIO;
        r = topology_to_text(topo, &text);
        if (r < 0)
                return r;
        free(w->topology);
        w->topology = text;
        w->capacity = topology_cpu_capacity(topo);
        /* Masks are read back at the new capacity, and the policy's state restarts: so does the
         * writer's, as at the start of a file. */
        writer_reset(w);
        return write_text_frame(w, FRAME_TOPOLOGY, text);
}

int trace_writer_config(TraceWriter *w, const char *ini) {
        char *copy;

        if (w->broken)
                return -EIO;
        if (w->config && streq(w->config, ini))
                return 0;
        copy = strdup(ini);
        if (!copy)
                return -ENOMEM;
        free(w->config);
        w->config = copy;
        return write_text_frame(w, FRAME_CONFIG, ini);
}

/* A reference to s, adding it (and writing it after REF_NEW) when new; "" is REF_NONE. */
static uint32_t put_string_ref(TraceWriter *w, Buf *b, const char *s) {
        uint32_t h;
        long id;
        char *copy;

        if (!s || !*s) {
                buf_varint(b, REF_NONE);
                return REF_NONE;
        }
        h = hash_bytes(s, strlen(s), 2166136261u);
        id = dict_find(&w->strings, s, h);
        if (id >= 0) {
                buf_varint(b, (uint64_t) id + REF_FIRST);
                return (uint32_t) id + REF_FIRST;
        }
        copy = strdup(s);
        if (!copy || dict_add(&w->strings, copy, h) < 0) {
                b->oom = true;
                return REF_NONE;
        }
        buf_varint(b, REF_NEW);
        buf_str(b, s);
        return (uint32_t) (w->strings.n - 1) + REF_FIRST;
}

static uint32_t put_mask_ref(TraceWriter *w, Buf *b, const CpuMask *m) {
        _cleanup_free_ char *text = NULL;
        CpuMask *copy;
        uint32_t h;
        long id;

        if (!m) {
                buf_varint(b, REF_NONE);
                return REF_NONE;
        }
        h = hash_mask(m);
        id = dict_find(&w->masks, m, h);
        if (id >= 0) {
                buf_varint(b, (uint64_t) id + REF_FIRST);
                return (uint32_t) id + REF_FIRST;
        }
        if (cpumask_format(m, &text) < 0 || !(copy = cpumask_copy(m)) ||
            dict_add(&w->masks, copy, h) < 0) {
                b->oom = true;
                return REF_NONE;
        }
        buf_varint(b, REF_NEW);
        buf_str(b, text);
        return (uint32_t) (w->masks.n - 1) + REF_FIRST;
}

static long dict_lookup_string(const TraceWriter *w, const char *s) {
        return s && *s ? dict_find(&w->strings, s, hash_bytes(s, strlen(s), 2166136261u)) : -2;
}

static long dict_lookup_mask(const TraceWriter *w, const CpuMask *m) {
        return m ? dict_find(&w->masks, m, hash_mask(m)) : -2;
}

/* Not yet in the file: differs from every ref written, so the field counts as changed and is
 * written with its value. */
#define REF_UNWRITTEN UINT32_MAX

/* The ref of a lookup: none (-2), an id, or REF_UNWRITTEN (-1: new). */
static uint32_t known_ref(long id) {
        return id == -2 ? REF_NONE : id == -1 ? REF_UNWRITTEN : (uint32_t) id + REF_FIRST;
}

static void put_cpus(TraceWriter *w, Buf *b, const PolicySnapshot *snap) {
        buf_varint(b, snap->n_cpus);
        for (unsigned i = 0; i < snap->n_cpus; i++) {
                uint32_t prev = i < w->n_cpu_util ? w->cpu_util[i] : 0;

                buf_svarint(b, (int64_t) snap->cpus[i].util_permyriad - prev);
        }
}

static void group_fields(const PolicyCgroup *g, uint32_t path_hash, GroupRec *ret) {
        *ret = (GroupRec){ .v = {
                                   [G_PATH] = path_hash,
                                   [G_FLAGS] = (g->protected ? GF_PROTECTED : 0) |
                                               (g->has_pressure ? GF_HAS_PRESSURE : 0) |
                                               (g->has_idle ? GF_HAS_IDLE : 0) |
                                               (g->idle ? GF_IDLE : 0) |
                                               (g->idle_ours ? GF_IDLE_OURS : 0) |
                                               (g->quota_ours ? GF_QUOTA_OURS : 0) |
                                               (g->has_latency ? GF_HAS_LATENCY : 0),
                                   [G_PRESSURE] = g->pressure_permyriad,
                                   [G_UTIL] = g->util_permyriad,
                                   [G_WEIGHT] = g->weight,
                                   [G_BASE_WEIGHT] = g->base_weight,
                                   [G_QUOTA] = g->quota_permyriad,
                                   [G_THROTTLED] = g->throttled_permyriad,
                                   [G_LATENCY] = g->latency_usec,
                           } };
}

/* Each group: a mask of the fields that differ from the group at its index the tick before, then
 * those (the path and partition as references; one new to the file differs from any before). */
static int put_groups(TraceWriter *w, Buf *b, const PolicySnapshot *snap) {
        if (greedy_realloc((void **) &w->groups_next, &w->cap_groups_next, snap->n_cgroups,
                           sizeof *w->groups_next, 16) < 0)
                return -ENOMEM;
        buf_varint(b, snap->n_cgroups);
        for (size_t i = 0; i < snap->n_cgroups; i++) {
                const PolicyCgroup *g = &snap->cgroups[i];
                GroupRec *cur = &w->groups_next[i];
                const GroupRec *prev = i < w->n_groups ? &w->groups[i] : NULL;
                uint32_t changed = 0;

                group_fields(g, known_ref(dict_lookup_string(w, g->path)), cur);
                cur->v[G_PARTITION] = known_ref(dict_lookup_mask(w, g->partition));
                for (unsigned f = 0; f < _G_MAX; f++)
                        if (!prev ? cur->v[f] != 0 || f == G_PATH : cur->v[f] != prev->v[f])
                                changed |= 1u << f;
                buf_varint(b, changed);
                if (changed & (1u << G_PATH))
                        cur->v[G_PATH] = put_string_ref(w, b, g->path);
                for (unsigned f = G_FLAGS; f < G_PARTITION; f++)
                        if (changed & (1u << f))
                                buf_varint(b, cur->v[f]);
                if (changed & (1u << G_PARTITION))
                        cur->v[G_PARTITION] = put_mask_ref(w, b, g->partition);
        }
        return 0;
}

static int cmp_key(const void *a, const void *b) {
        const TaskKey *x = a, *y = b;

        if (x->pid != y->pid)
                return x->pid < y->pid ? -1 : 1;
        return (x->starttime > y->starttime) - (x->starttime < y->starttime);
}

/* The index in the last tick's list of (pid, starttime), or -1 (also when out of memory: then
 * the task is written whole, which is correct too). */
static long find_prev(TraceWriter *w, pid_t pid, uint64_t starttime) {
        TaskKey k = { .pid = pid, .starttime = starttime }, *hit;

        if (w->n_tasks == 0)
                return -1;
        if (!w->keys_sorted) {
                if (greedy_realloc((void **) &w->keys, &w->cap_keys, w->n_tasks, sizeof *w->keys,
                                   64) < 0)
                        return -1;
                for (size_t i = 0; i < w->n_tasks; i++)
                        w->keys[i] = (TaskKey){ .pid = w->tasks[i].pid,
                                                .starttime = w->tasks[i].starttime,
                                                .index = i };
                qsort(w->keys, w->n_tasks, sizeof *w->keys, cmp_key);
                w->keys_sorted = true;
        }
        hit = bsearch(&k, w->keys, w->n_tasks, sizeof *w->keys, cmp_key);
        return hit ? (long) hit->index : -1;
}

/* rec from t, its refs resolved against the dicts without writing them (refs to new strings and
 * masks are written by put_new_refs() before the task's op). */
static void task_rec(const PolicyTask *t, TaskRec *rec) {
        *rec = (TaskRec){
                .pid = t->pid,
                .starttime = t->starttime_ticks,
                .cgroup = t->cgroup,
                .cpu = t->cpu,
                .util = t->util_permyriad,
                .wait = t->demand_permyriad > t->util_permyriad
                                ? t->demand_permyriad - t->util_permyriad
                                : 0,
                .flags = (t->ours ? TF_OURS : 0) | (t->foreign ? TF_FOREIGN : 0) |
                         (t->mem_exact ? TF_MEM_EXACT : 0),
                .last_move = t->last_move_usec,
                .mem_kib = t->mem_kib,
        };
}

static bool other_equal(const TaskRec *a, const TaskRec *b) {
        return a->comm == b->comm && a->mask == b->mask && a->cgroup == b->cgroup &&
               a->flags == b->flags && a->last_move == b->last_move;
}

static void flush_same(Buf *b, size_t *run) {
        if (*run > 0)
                buf_varint(b, (uint64_t) *run << 2 | OP_SAME);
        *run = 0;
}

/* The task's name and mask as refs: the known ones looked up, new ones written as a new-ref op is
 * (in the "other" block itself). Returns whether both were known. */
static bool task_refs(TraceWriter *w, const PolicyTask *t, TaskRec *rec) {
        long c = w->names ? dict_lookup_string(w, t->comm) : -2,
             m = dict_lookup_mask(w, t->allowed);

        rec->comm = known_ref(c);
        rec->mask = known_ref(m);
        return c != -1 && m != -1;
}

/* The "other" block, writing new refs inline. */
static void put_other_full(TraceWriter *w, Buf *b, const PolicyTask *t, TaskRec *rec) {
        rec->comm = put_string_ref(w, b, w->names ? t->comm : NULL);
        rec->mask = put_mask_ref(w, b, t->allowed);
        buf_varint(b, rec->cgroup == POLICY_NO_CGROUP ? 0 : (uint64_t) rec->cgroup + 1);
        buf_varint(b, rec->flags);
        buf_varint(b, rec->last_move);
}

/* The task's name and mask are the ones it had the tick before: their refs without hashing. */
static bool same_refs(const TraceWriter *w, const PolicyTask *t, const TaskRec *prev,
                      TaskRec *rec) {
        const char *comm = prev->comm == REF_NONE ? "" : w->strings.items[prev->comm - REF_FIRST];
        const CpuMask *mask =
                prev->mask == REF_NONE ? NULL : w->masks.items[prev->mask - REF_FIRST];

        if (!streq(w->names ? t->comm : "", comm))
                return false;
        if (!(mask ? t->allowed && cpumask_equal(mask, t->allowed) : !t->allowed))
                return false;
        rec->comm = prev->comm;
        rec->mask = prev->mask;
        return true;
}

static int put_tasks(TraceWriter *w, Buf *b, const PolicySnapshot *snap) {
        size_t j = 0, run = 0;

        if (greedy_realloc((void **) &w->tasks_next, &w->cap_tasks_next, snap->n_tasks,
                           sizeof *w->tasks_next, 64) < 0)
                return -ENOMEM;
        buf_varint(b, snap->n_tasks);
        for (size_t i = 0; i < snap->n_tasks; i++) {
                const PolicyTask *t = &snap->tasks[i];
                TaskRec *rec = &w->tasks_next[i];
                const TaskRec *prev = NULL;
                unsigned ch = 0;
                bool known;

                task_rec(t, rec);
                if (j < w->n_tasks && w->tasks[j].pid == t->pid &&
                    w->tasks[j].starttime == t->starttime_ticks)
                        prev = &w->tasks[j];
                else {
                        long p = find_prev(w, t->pid, t->starttime_ticks);

                        if (p >= 0 && (size_t) p > j) {
                                flush_same(b, &run);
                                buf_varint(b, (uint64_t) ((size_t) p - j) << 2 | OP_SKIP);
                                j = (size_t) p;
                                prev = &w->tasks[j];
                        }
                }
                if (!prev) {
                        flush_same(b, &run);
                        buf_varint(b, OP_NEW);
                        buf_varint(b, (uint64_t) t->pid);
                        buf_varint(b, t->starttime_ticks);
                        put_other_full(w, b, t, rec);
                        buf_varint(b, (uint64_t) (rec->cpu + 1));
                        buf_varint(b, rec->util);
                        buf_varint(b, rec->wait);
                        buf_varint(b, rec->mem_kib);
                        continue;
                }
                j++;
                known = same_refs(w, t, prev, rec) || task_refs(w, t, rec);
                if (rec->util != prev->util)
                        ch |= CH_UTIL;
                if (rec->wait != prev->wait)
                        ch |= CH_WAIT;
                if (rec->cpu != prev->cpu)
                        ch |= CH_CPU;
                if (rec->mem_kib != prev->mem_kib)
                        ch |= CH_MEM;
                if (!known || !other_equal(rec, prev))
                        ch |= CH_OTHER;
                if (!ch) {
                        run++;
                        continue;
                }
                flush_same(b, &run);
                if (ch == CH_UTIL) { /* the common change, in one number */
                        buf_varint(b, (zigzag((int64_t) rec->util - prev->util) << 1 | 1) << 2 |
                                              OP_CHANGED);
                        continue;
                }
                buf_varint(b, (uint64_t) ch << 3 | OP_CHANGED);
                if (ch & CH_UTIL)
                        buf_svarint(b, (int64_t) rec->util - prev->util);
                if (ch & CH_WAIT)
                        buf_svarint(b, (int64_t) rec->wait - prev->wait);
                if (ch & CH_CPU)
                        buf_varint(b, (uint64_t) (rec->cpu + 1));
                if (ch & CH_MEM)
                        buf_varint(b, rec->mem_kib);
                if (ch & CH_OTHER)
                        put_other_full(w, b, t, rec);
        }
        flush_same(b, &run);
        return 0;
}

static void put_plan(TraceWriter *w, Buf *b, const Plan *plan) {
        buf_varint(b, plan->n_moves);
        for (size_t i = 0; i < plan->n_moves; i++) {
                const PlanMove *m = &plan->moves[i];

                buf_varint(b, (uint64_t) m->pid);
                buf_varint(b, m->starttime_ticks);
                buf_svarint(b, m->from_node);
                buf_svarint(b, m->to_node);
                (void) put_mask_ref(w, b, m->mask);
                buf_str(b, m->reason);
        }
        buf_varint(b, plan->n_weights);
        for (size_t i = 0; i < plan->n_weights; i++) {
                const PlanWeight *p = &plan->weights[i];

                buf_varint(b, p->cgroup);
                buf_varint(b, p->from);
                buf_varint(b, p->to);
                buf_str(b, p->reason);
        }
        buf_varint(b, plan->n_escalations);
        for (size_t i = 0; i < plan->n_escalations; i++) {
                const PlanEscalation *e = &plan->escalations[i];

                buf_varint(b, e->cgroup);
                buf_varint(b, e->for_cgroup == POLICY_NO_CGROUP ? 0 : (uint64_t) e->for_cgroup + 1);
                buf_varint(b, (uint64_t) e->lever);
                buf_varint(b, e->from);
                buf_varint(b, e->to);
                (void) put_mask_ref(w, b, e->cpus);
                buf_str(b, e->reason);
        }
}

static int encode_tick(TraceWriter *w, uint64_t now, unsigned flags, const PolicySnapshot *snap,
                       const Plan *plan, Buf *out) {
        Buf b = { 0 };
        int r;

        int64_t delta = (int64_t) (now - (w->have_now ? w->now : 0));

        buf_varint(&b, flags | (plan->node_balance_ran ? TICK_NODE_BALANCE_RAN : 0));
        buf_svarint(&b, delta);
        /* the interval is about the time since the last tick: written as the difference */
        buf_svarint(&b, (int64_t) snap->interval_usec - delta);
        put_cpus(w, &b, snap);
        r = put_groups(w, &b, snap);
        if (r >= 0)
                r = put_tasks(w, &b, snap);
        if (r >= 0)
                put_plan(w, &b, plan);
        out->n = 0;
        if (r >= 0)
                frame_wrap(out, FRAME_TICK, &b);
        free(b.p);
        if (r >= 0 && (b.oom || out->oom))
                r = -ENOMEM;
        return r;
}

/* What the next tick is written against: this one. */
static int writer_commit(TraceWriter *w, uint64_t now, const PolicySnapshot *snap) {
        w->now = now;
        w->have_now = true;
        if (w->n_cpu_util < snap->n_cpus) {
                uint32_t *u = reallocarray(w->cpu_util, snap->n_cpus, sizeof *u);

                if (!u)
                        return -ENOMEM;
                w->cpu_util = u;
        }
        for (unsigned i = 0; i < snap->n_cpus; i++)
                w->cpu_util[i] = snap->cpus[i].util_permyriad;
        w->n_cpu_util = snap->n_cpus;

        swap_arrays(&w->groups, &w->cap_groups, &w->groups_next, &w->cap_groups_next);
        w->n_groups = snap->n_cgroups;
        swap_arrays(&w->tasks, &w->cap_tasks, &w->tasks_next, &w->cap_tasks_next);
        w->n_tasks = snap->n_tasks;
        w->keys_sorted = false; /* sorted when a task is not where it was: find_prev() */
        return 0;
}

int trace_writer_tick(TraceWriter *w, uint64_t now_usec, unsigned flags, const PolicySnapshot *snap,
                      const Plan *plan) {
        int r;

        if (w->broken)
                return -EIO;
        if (!w->topology || !w->config || (flags & ~TICK_FLAGS_KNOWN) ||
            snap->n_cpus != w->capacity)
                return -EINVAL;
        r = encode_tick(w, now_usec, flags, snap, plan, &w->frame);
        if (r < 0)
                return r;
        if (w->file_bytes + w->frame.n > w->max_size) {
                r = writer_rotate(w);
                if (r >= 0)
                        r = encode_tick(w, now_usec, flags, snap, plan, &w->frame);
                if (r < 0)
                        return r;
        }
        r = writer_write(w, &w->frame);
        if (r < 0)
                return r;
        w->ticks++;
        return writer_commit(w, now_usec, snap);
}

/* ---- the reader */

#define FRAME_MAX (256u * 1024u * 1024u)

struct TraceReader {
        FILE *f;
        void *memory; /* what f reads, for trace_reader_new_from_memory() */
        uint64_t offset; /* of the next frame */
        uint64_t frame_offset; /* of the frame being decoded */
        int error; /* sticky */
        char error_text[256];
        bool started; /* INFO read */
        char *program, *host;
        uint64_t realtime_usec;

        Topology *topo;
        char *config;
        size_t config_size;
        Dict strings, masks;

        uint64_t tick;
        bool have_now;
        uint64_t now;
        PolicyCpu *cpus;
        unsigned n_cpus;
        GroupRec *groups;
        PolicyCgroup *cgroups;
        size_t n_groups, cap_groups, cap_cgroups;
        TaskRec *tasks, *tasks_next;
        size_t n_tasks, cap_tasks, cap_tasks_next;
        PolicyTask *ptasks;
        size_t cap_ptasks;
        PolicySnapshot snap;
        Plan *plan;

        uint8_t *payload;
        size_t cap_payload;
};

typedef struct Cur {
        const uint8_t *p, *end;
        const char *bad; /* what was malformed, NULL while fine */
} Cur;

static bool get_varint(Cur *c, uint64_t *ret) {
        uint64_t v = 0;

        for (unsigned shift = 0; shift < 64; shift += 7) {
                uint8_t byte;

                if (c->p >= c->end) {
                        c->bad = c->bad ?: "a number runs past the end of its frame";
                        return false;
                }
                byte = *c->p++;
                if (shift == 63 && byte > 1) {
                        c->bad = c->bad ?: "a number does not fit 64 bits";
                        return false;
                }
                v |= (uint64_t) (byte & 0x7f) << shift;
                if (!(byte & 0x80)) {
                        *ret = v;
                        return true;
                }
        }
        c->bad = c->bad ?: "a number does not fit 64 bits";
        return false;
}

/* A varint of at most max, else what is named. */
static bool get_uint(Cur *c, uint64_t max, const char *what, uint64_t *ret) {
        uint64_t v;

        if (!get_varint(c, &v))
                return false;
        if (v > max) {
                c->bad = c->bad ?: what;
                return false;
        }
        *ret = v;
        return true;
}

static bool get_u32(Cur *c, const char *what, uint32_t *ret) {
        uint64_t v;

        if (!get_uint(c, UINT32_MAX, what, &v))
                return false;
        *ret = (uint32_t) v;
        return true;
}

static bool get_svarint(Cur *c, int64_t *ret) {
        uint64_t v;

        if (!get_varint(c, &v))
                return false;
        *ret = unzigzag(v);
        return true;
}

/* A string of at most max bytes, no NUL in it, into a new allocation. */
static bool get_str(Cur *c, size_t max, char **ret) {
        uint64_t n;
        char *s;

        if (!get_varint(c, &n))
                return false;
        if (n > max || n > (uint64_t) (c->end - c->p)) {
                c->bad = c->bad ?: "a string longer than its frame or limit";
                return false;
        }
        if (memchr(c->p, '\0', n)) {
                c->bad = c->bad ?: "a string with a NUL byte";
                return false;
        }
        s = strndup((const char *) c->p, n);
        if (!s) {
                c->bad = c->bad ?: "out of memory";
                return false;
        }
        c->p += n;
        *ret = s;
        return true;
}

/* A string into buf of size bytes (NUL included). */
static bool get_str_into(Cur *c, char *buf, size_t size) {
        _cleanup_free_ char *s = NULL;

        if (!get_str(c, size - 1, &s))
                return false;
        strcpy(buf, s);
        return true;
}

/* A reference: REF_NONE, a known id, or REF_NEW with the item, added. *ret is the ref's value
 * as the writer counts it (REF_NONE or id + REF_FIRST), item the string or mask or NULL. */
static bool get_ref(TraceReader *r, Cur *c, bool mask, uint32_t *ret, const void **item) {
        Dict *d = mask ? &r->masks : &r->strings;
        uint64_t v;

        if (!get_varint(c, &v))
                return false;
        if (v == REF_NONE) {
                *ret = REF_NONE;
                *item = NULL;
                return true;
        }
        if (v == REF_NEW) {
                _cleanup_free_ char *s = NULL;
                void *it;

                if (!get_str(c, mask ? 65536 : STRING_MAX, &s))
                        return false;
                if (mask) {
                        CpuMask *m = NULL;

                        if (cpumask_parse(s, topology_cpu_capacity(r->topo), &m, NULL) < 0) {
                                c->bad = c->bad ?: "a CPU mask that is not a list of its CPUs";
                                return false;
                        }
                        it = m;
                } else
                        it = TAKE_PTR(s);
                if (d->n >= UINT32_MAX - REF_FIRST || dict_add(d, it, 0) < 0) {
                        c->bad = c->bad ?: "out of memory";
                        return false;
                }
                *ret = (uint32_t) (d->n - 1) + REF_FIRST;
                *item = d->items[d->n - 1];
                return true;
        }
        if (v - REF_FIRST >= d->n) {
                c->bad = c->bad
                                 ?: (mask ? "a reference to a mask not yet defined"
                                          : "a reference to a string not yet defined");
                return false;
        }
        *ret = (uint32_t) v;
        *item = d->items[v - REF_FIRST];
        return true;
}

/* The item of a ref already read. */
static const void *ref_item(const Dict *d, uint32_t ref) {
        return ref == REF_NONE ? NULL : d->items[ref - REF_FIRST];
}

static void reader_reset(TraceReader *r) {
        r->have_now = false;
        r->n_cpus = 0;
        r->n_groups = 0;
        r->n_tasks = 0;
        dict_clear(&r->strings);
        dict_clear(&r->masks);
}

TraceReader *trace_reader_free(TraceReader *r) {
        if (!r)
                return NULL;
        if (r->f)
                fclose(r->f);
        free(r->memory);
        free(r->program);
        free(r->host);
        topology_free(r->topo);
        free(r->config);
        dict_done(&r->strings);
        dict_done(&r->masks);
        free(r->cpus);
        free(r->groups);
        free(r->cgroups);
        free(r->tasks);
        free(r->tasks_next);
        free(r->ptasks);
        plan_free(r->plan);
        free(r->payload);
        free(r);
        return NULL;
}

const char *trace_reader_program(const TraceReader *r) {
        return r->program ?: "";
}

const char *trace_reader_host(const TraceReader *r) {
        return r->host ?: "";
}

uint64_t trace_reader_offset(const TraceReader *r) {
        return r->offset;
}

static int reader_fail(TraceReader *r, int err, char *error, size_t error_size, const char *format,
                       ...) _printf_(5, 6);
static int reader_fail(TraceReader *r, int err, char *error, size_t error_size, const char *format,
                       ...) {
        va_list ap;

        va_start(ap, format);
        vsnprintf(r->error_text, sizeof r->error_text, format, ap);
        va_end(ap);
        r->error = err;
        if (error && error_size)
                snprintf(error, error_size, "%s", r->error_text);
        return err;
}

static int reader_start(TraceReader *r, FILE *f, char *error, size_t error_size) {
        uint8_t head[sizeof trace_magic + 1];

        r->f = f;
        r->masks.masks = true;
        if (fread(head, 1, sizeof head, f) != sizeof head ||
            memcmp(head, trace_magic, sizeof trace_magic) != 0)
                return reader_fail(r, -EINVAL, error, error_size,
                                   "not a cgbalanced recording (no CGBREC header)");
        if (head[sizeof trace_magic] != TRACE_FORMAT_VERSION)
                return reader_fail(r, -EPROTO, error, error_size,
                                   "written in recording format %u; this cgbalanced reads format "
                                   "%u only",
                                   head[sizeof trace_magic], TRACE_FORMAT_VERSION);
        r->offset = sizeof head;
        return 0;
}

int trace_reader_open(const char *path, TraceReader **ret, char *error, size_t error_size) {
        _cleanup_trace_reader_ TraceReader *r = calloc(1, sizeof *r);
        struct stat st;
        FILE *f;
        int fd, k;

        if (!r)
                return -ENOMEM;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                k = -errno;
                if (error && error_size)
                        snprintf(error, error_size, "cannot open it: %s", strerror(-k));
                return k;
        }
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                close(fd);
                if (error && error_size)
                        snprintf(error, error_size, "not a regular file");
                return -EINVAL;
        }
        f = fdopen(fd, "re");
        if (!f) {
                k = -errno;
                close(fd);
                return k;
        }
        k = reader_start(r, f, error, error_size);
        if (k < 0)
                return k;
        *ret = TAKE_PTR(r);
        return 0;
}

int trace_reader_new_from_memory(const void *data, size_t size, TraceReader **ret, char *error,
                                 size_t error_size) {
        _cleanup_trace_reader_ TraceReader *r = calloc(1, sizeof *r);
        FILE *f;
        int k;

        if (!r)
                return -ENOMEM;
        if (size <= sizeof trace_magic)
                return reader_fail(r, -EINVAL, error, error_size,
                                   "not a cgbalanced recording (no CGBREC header)");
        r->memory = malloc(size);
        if (!r->memory)
                return -ENOMEM;
        memcpy(r->memory, data, size);
        f = fmemopen(r->memory, size, "r");
        if (!f)
                return -errno;
        k = reader_start(r, f, error, error_size);
        if (k < 0)
                return k;
        *ret = TAKE_PTR(r);
        return 0;
}

static int reader_frame_fail(TraceReader *r, char *error, size_t error_size, const char *what) {
        return reader_fail(r, -EINVAL, error, error_size, "byte %" PRIu64 ": %s", r->frame_offset,
                           what);
}

/* The next frame into r->payload: 1 with its kind and size, 0 at a clean end. */
static int read_frame(TraceReader *r, uint8_t *ret_kind, size_t *ret_size, char *error,
                      size_t error_size) {
        uint64_t len = 0;
        unsigned head = 1;
        int c;

        r->frame_offset = r->offset;
        c = fgetc(r->f);
        if (c == EOF)
                return ferror(r->f) ? reader_fail(r, -EIO, error, error_size, "cannot read it") : 0;
        *ret_kind = (uint8_t) c;
        for (unsigned shift = 0;; shift += 7) {
                c = fgetc(r->f);
                if (c == EOF)
                        return reader_fail(r, -EPIPE, error, error_size,
                                           "the last frame, at byte %" PRIu64
                                           ", is cut short (in its length)",
                                           r->frame_offset);
                head++;
                if (shift > 56)
                        return reader_frame_fail(r, error, error_size, "a frame length too long");
                len |= (uint64_t) (c & 0x7f) << shift;
                if (!(c & 0x80))
                        break;
        }
        if (len > FRAME_MAX)
                return reader_frame_fail(r, error, error_size,
                                         "a frame longer than a recording's 256 MiB");
        if (greedy_realloc((void **) &r->payload, &r->cap_payload, len ? len : 1, 1, 4096) < 0)
                return reader_fail(r, -ENOMEM, error, error_size, "out of memory");
        if (fread(r->payload, 1, len, r->f) != len)
                return reader_fail(r, ferror(r->f) ? -EIO : -EPIPE, error, error_size,
                                   "the last frame, at byte %" PRIu64
                                   ", is cut short (fewer than its %" PRIu64 " bytes)",
                                   r->frame_offset, len);
        r->offset += head + len;
        *ret_size = (size_t) len;
        return 1;
}

static bool decode_cpus(TraceReader *r, Cur *c) {
        unsigned n = topology_cpu_capacity(r->topo);
        uint64_t v;

        if (!get_varint(c, &v))
                return false;
        if (v != n) {
                c->bad = c->bad ?: "a tick's CPU count is not its topology's";
                return false;
        }
        if (r->n_cpus != n) {
                PolicyCpu *cpus = reallocarray(r->cpus, n, sizeof *cpus);

                if (!cpus) {
                        c->bad = "out of memory";
                        return false;
                }
                memset(cpus, 0, n * sizeof *cpus);
                r->cpus = cpus;
                r->n_cpus = n;
        }
        for (unsigned i = 0; i < n; i++) {
                int64_t d, u;

                if (!get_svarint(c, &d))
                        return false;
                u = (int64_t) r->cpus[i].util_permyriad + d;
                if (u < 0 || u > UINT32_MAX) {
                        c->bad = c->bad ?: "a CPU load out of range";
                        return false;
                }
                r->cpus[i].util_permyriad = (uint32_t) u;
        }
        return true;
}

static bool decode_groups(TraceReader *r, Cur *c) {
        uint64_t n;

        if (!get_uint(c, (uint64_t) (c->end - c->p), "more groups than bytes", &n))
                return false;
        if (greedy_realloc((void **) &r->groups, &r->cap_groups, n, sizeof *r->groups, 16) < 0 ||
            greedy_realloc((void **) &r->cgroups, &r->cap_cgroups, n, sizeof *r->cgroups, 16) < 0) {
                c->bad = "out of memory";
                return false;
        }
        /* In place: group i is written against group i of the tick before. */
        for (size_t i = 0; i < n; i++) {
                GroupRec *g = &r->groups[i];
                PolicyCgroup *p = &r->cgroups[i];
                const void *item;
                uint64_t changed;

                if (i >= r->n_groups)
                        *g = (GroupRec){ 0 };
                if (!get_uint(c, (1u << _G_MAX) - 1, "a group's fields unknown", &changed))
                        return false;
                if (i >= r->n_groups && !(changed & (1u << G_PATH))) {
                        c->bad = c->bad ?: "a new group without a path";
                        return false;
                }
                if ((changed & (1u << G_PATH)) && !get_ref(r, c, false, &g->v[G_PATH], &item))
                        return false;
                for (unsigned f = G_FLAGS; f < G_PARTITION; f++)
                        if ((changed & (1u << f)) &&
                            !get_u32(c, "a group's value out of range", &g->v[f]))
                                return false;
                if ((changed & (1u << G_PARTITION)) &&
                    !get_ref(r, c, true, &g->v[G_PARTITION], &item))
                        return false;
                if (g->v[G_PATH] == REF_NONE || (g->v[G_FLAGS] & ~GF_KNOWN)) {
                        c->bad = c->bad ?: "a group without a path, or with unknown flags";
                        return false;
                }
                *p = (PolicyCgroup){
                        .path = ref_item(&r->strings, g->v[G_PATH]),
                        .protected = g->v[G_FLAGS] & GF_PROTECTED,
                        .has_pressure = g->v[G_FLAGS] & GF_HAS_PRESSURE,
                        .pressure_permyriad = g->v[G_PRESSURE],
                        .util_permyriad = g->v[G_UTIL],
                        .weight = g->v[G_WEIGHT],
                        .base_weight = g->v[G_BASE_WEIGHT],
                        .has_idle = g->v[G_FLAGS] & GF_HAS_IDLE,
                        .idle = g->v[G_FLAGS] & GF_IDLE,
                        .idle_ours = g->v[G_FLAGS] & GF_IDLE_OURS,
                        .quota_permyriad = g->v[G_QUOTA],
                        .quota_ours = g->v[G_FLAGS] & GF_QUOTA_OURS,
                        .partition = ref_item(&r->masks, g->v[G_PARTITION]),
                        .throttled_permyriad = g->v[G_THROTTLED],
                        .has_latency = g->v[G_FLAGS] & GF_HAS_LATENCY,
                        .latency_usec = g->v[G_LATENCY],
                };
        }
        r->n_groups = n;
        return true;
}

static bool get_other(TraceReader *r, Cur *c, TaskRec *t) {
        const void *item;
        uint64_t v;

        if (!get_ref(r, c, false, &t->comm, &item))
                return false;
        if (item && strlen(item) >= sizeof(((PolicyTask){ 0 }).comm)) {
                c->bad = c->bad ?: "a task name too long";
                return false;
        }
        if (!get_ref(r, c, true, &t->mask, &item))
                return false;
        if (!get_uint(c, SIZE_MAX - 1, "a task's group index out of range", &v))
                return false;
        t->cgroup = v == 0 ? POLICY_NO_CGROUP : (size_t) v - 1;
        if (!get_uint(c, TF_OURS | TF_FOREIGN | TF_MEM_EXACT, "a task's unknown flags", &v))
                return false;
        t->flags = (unsigned) v;
        return get_varint(c, &t->last_move);
}

static bool get_cpu(TraceReader *r, Cur *c, int *ret) {
        uint64_t v;

        if (!get_uint(c, r->n_cpus, "a task's CPU out of range", &v))
                return false;
        *ret = (int) v - 1;
        return true;
}

static bool get_delta(Cur *c, uint32_t *v) {
        int64_t d, x;

        if (!get_svarint(c, &d))
                return false;
        x = (int64_t) *v + d;
        if (x < 0 || x > UINT32_MAX) {
                c->bad = c->bad ?: "a task's load out of range";
                return false;
        }
        *v = (uint32_t) x;
        return true;
}

static bool decode_task_op(TraceReader *r, Cur *c, size_t n, size_t *i, size_t *j) {
        uint64_t op, arg, v;
        TaskRec *t;

        if (!get_varint(c, &op))
                return false;
        arg = op >> 2;
        switch (op & 3) {
        case OP_SAME:
                if (arg == 0 || arg > n - *i || arg > r->n_tasks - *j) {
                        c->bad = c->bad ?: "a run of tasks past either list";
                        return false;
                }
                memcpy(&r->tasks_next[*i], &r->tasks[*j], arg * sizeof *r->tasks);
                *i += arg;
                *j += arg;
                return true;
        case OP_SKIP:
                if (arg == 0 || arg >= r->n_tasks - *j + (*j < r->n_tasks ? 0 : 1)) {
                        c->bad = c->bad ?: "a skip past the last tick's tasks";
                        return false;
                }
                *j += arg;
                return true;
        case OP_CHANGED:
                if (*j >= r->n_tasks) {
                        c->bad = c->bad ?: "a changed task that is not there";
                        return false;
                }
                t = &r->tasks_next[*i];
                *t = r->tasks[(*j)++];
                if (arg & 1) { /* its load alone, the difference in the number */
                        int64_t u = (int64_t) t->util + unzigzag(arg >> 1);

                        if (u < 0 || u > UINT32_MAX) {
                                c->bad = c->bad ?: "a task's load out of range";
                                return false;
                        }
                        t->util = (uint32_t) u;
                        break;
                }
                arg >>= 1;
                if (arg == 0 || arg > (CH_UTIL | CH_WAIT | CH_CPU | CH_MEM | CH_OTHER)) {
                        c->bad = c->bad ?: "a changed task with unknown fields";
                        return false;
                }
                if ((arg & CH_UTIL) && !get_delta(c, &t->util))
                        return false;
                if ((arg & CH_WAIT) && !get_delta(c, &t->wait))
                        return false;
                if ((arg & CH_CPU) && !get_cpu(r, c, &t->cpu))
                        return false;
                if ((arg & CH_MEM) && !get_varint(c, &t->mem_kib))
                        return false;
                if ((arg & CH_OTHER) && !get_other(r, c, t))
                        return false;
                break;
        default: /* OP_NEW */
                if (arg != 0) {
                        c->bad = c->bad ?: "an unknown task operation";
                        return false;
                }
                t = &r->tasks_next[*i];
                *t = (TaskRec){ 0 };
                if (!get_uint(c, INT_MAX, "a pid out of range", &v))
                        return false;
                t->pid = (pid_t) v;
                if (!get_varint(c, &t->starttime) || !get_other(r, c, t) ||
                    !get_cpu(r, c, &t->cpu) ||
                    !get_u32(c, "a task's load out of range", &t->util) ||
                    !get_u32(c, "a task's load out of range", &t->wait) ||
                    !get_varint(c, &t->mem_kib))
                        return false;
                break;
        }
        if ((uint64_t) t->util + t->wait > UINT32_MAX) {
                c->bad = c->bad ?: "a task's demand out of range";
                return false;
        }
        (*i)++;
        return true;
}

static bool decode_tasks(TraceReader *r, Cur *c) {
        size_t i = 0, j = 0;
        uint64_t n;

        if (!get_uint(c, r->n_tasks + (uint64_t) (c->end - c->p), "more tasks than bytes", &n))
                return false;
        if (greedy_realloc((void **) &r->tasks_next, &r->cap_tasks_next, n, sizeof *r->tasks_next,
                           64) < 0 ||
            greedy_realloc((void **) &r->ptasks, &r->cap_ptasks, n, sizeof *r->ptasks, 64) < 0) {
                c->bad = "out of memory";
                return false;
        }
        while (i < n)
                if (!decode_task_op(r, c, n, &i, &j))
                        return false;
        for (i = 0; i < n; i++) {
                const TaskRec *t = &r->tasks_next[i];
                PolicyTask *p = &r->ptasks[i];
                const char *comm = ref_item(&r->strings, t->comm);

                if (t->cgroup != POLICY_NO_CGROUP && t->cgroup >= r->n_groups) {
                        c->bad = c->bad ?: "a task in a group the tick does not have";
                        return false;
                }
                *p = (PolicyTask){
                        .pid = t->pid,
                        .starttime_ticks = t->starttime,
                        .cgroup = t->cgroup,
                        .cpu = t->cpu,
                        .util_permyriad = t->util,
                        .demand_permyriad = t->util + t->wait,
                        .allowed = ref_item(&r->masks, t->mask),
                        .ours = t->flags & TF_OURS,
                        .foreign = t->flags & TF_FOREIGN,
                        .last_move_usec = t->last_move,
                        .mem_kib = t->mem_kib,
                        .mem_exact = t->flags & TF_MEM_EXACT,
                };
                if (comm)
                        snprintf(p->comm, sizeof p->comm, "%s", comm);
        }
        swap_arrays(&r->tasks, &r->cap_tasks, &r->tasks_next, &r->cap_tasks_next);
        r->n_tasks = n;
        return true;
}

static bool get_node(Cur *c, int *ret) {
        int64_t v;

        if (!get_svarint(c, &v))
                return false;
        if (v < -1 || v >= TOPOLOGY_MAX_NODES * 64) {
                c->bad = c->bad ?: "a node out of range";
                return false;
        }
        *ret = (int) v;
        return true;
}

static bool get_plan_mask(TraceReader *r, Cur *c, CpuMask **ret) {
        const void *item;
        uint32_t ref;

        if (!get_ref(r, c, true, &ref, &item))
                return false;
        *ret = NULL;
        if (item && !(*ret = cpumask_copy(item))) {
                c->bad = "out of memory";
                return false;
        }
        return true;
}

/* A count of items each at least a byte long, and an array for them. */
static bool get_array(Cur *c, const char *what, size_t size, void **ret, uint64_t *ret_n) {
        if (!get_uint(c, (uint64_t) (c->end - c->p), what, ret_n))
                return false;
        *ret = calloc(*ret_n ? *ret_n : 1, size);
        if (!*ret)
                c->bad = c->bad ?: "out of memory";
        return *ret;
}

/* An index into this tick's groups; plus_one: 0 is none (POLICY_NO_CGROUP). */
static bool get_group(TraceReader *r, Cur *c, bool plus_one, size_t *ret) {
        uint64_t v;

        if (!get_uint(c, r->n_groups, "a plan names a group the tick does not have", &v))
                return false;
        if (plus_one) {
                *ret = v == 0 ? POLICY_NO_CGROUP : (size_t) v - 1;
                return true;
        }
        if (v == r->n_groups) {
                c->bad = c->bad ?: "a plan names a group the tick does not have";
                return false;
        }
        *ret = (size_t) v;
        return true;
}

static bool decode_plan(TraceReader *r, Cur *c, Plan *p) {
        uint64_t n, v;

        if (!get_array(c, "more moves than bytes", sizeof *p->moves, (void **) &p->moves, &n))
                return false;
        for (; p->n_moves < n; p->n_moves++) {
                PlanMove *m = &p->moves[p->n_moves];

                if (!get_uint(c, INT_MAX, "a pid out of range", &v))
                        return false;
                m->pid = (pid_t) v;
                if (!get_varint(c, &m->starttime_ticks) || !get_node(c, &m->from_node) ||
                    !get_node(c, &m->to_node) || !get_plan_mask(r, c, &m->mask) ||
                    !get_str_into(c, m->reason, sizeof m->reason))
                        return false;
        }
        if (!get_array(c, "more weights than bytes", sizeof *p->weights, (void **) &p->weights, &n))
                return false;
        for (; p->n_weights < n; p->n_weights++) {
                PlanWeight *w = &p->weights[p->n_weights];

                if (!get_group(r, c, false, &w->cgroup) ||
                    !get_u32(c, "a weight out of range", &w->from) ||
                    !get_u32(c, "a weight out of range", &w->to) ||
                    !get_str_into(c, w->reason, sizeof w->reason))
                        return false;
        }
        if (!get_array(c, "more lever steps than bytes", sizeof *p->escalations,
                       (void **) &p->escalations, &n))
                return false;
        for (; p->n_escalations < n; p->n_escalations++) {
                PlanEscalation *e = &p->escalations[p->n_escalations];

                if (!get_group(r, c, false, &e->cgroup) || !get_group(r, c, true, &e->for_cgroup) ||
                    !get_uint(c, _POLICY_LEVER_MAX - 1, "an unknown lever", &v))
                        return false;
                e->lever = (PolicyLever) v;
                if (!get_u32(c, "a lever value out of range", &e->from) ||
                    !get_u32(c, "a lever value out of range", &e->to) ||
                    !get_plan_mask(r, c, &e->cpus) || !get_str_into(c, e->reason, sizeof e->reason))
                        return false;
        }
        return true;
}

static int decode_tick(TraceReader *r, Cur *c, TraceEvent *ret) {
        _cleanup_plan_ Plan *plan = calloc(1, sizeof *plan);
        uint64_t flags, interval;
        int64_t delta, d;

        if (!plan)
                return -ENOMEM;
        if (!get_uint(c, TICK_FLAGS_KNOWN, "unknown tick flags", &flags) ||
            !get_svarint(c, &delta) || !get_svarint(c, &d))
                return -EINVAL;
        if ((!r->have_now && delta < 0) || (delta < 0 && (uint64_t) -delta > r->now) ||
            (delta > 0 && (uint64_t) delta > UINT64_MAX - r->now)) {
                c->bad = "a time out of range";
                return -EINVAL;
        }
        /* the writer's interval - delta, in 64 bits both ways */
        interval = (uint64_t) delta + (uint64_t) d;
        if (!decode_cpus(r, c) || !decode_groups(r, c) || !decode_tasks(r, c) ||
            !decode_plan(r, c, plan))
                return -EINVAL;
        if (c->p != c->end) {
                c->bad = "bytes left over after its plan";
                return -EINVAL;
        }
        plan->node_balance_ran = flags & TICK_NODE_BALANCE_RAN;
        r->now = (r->have_now ? r->now : 0) + (uint64_t) delta;
        r->have_now = true;
        r->tick++;
        r->snap = (PolicySnapshot){
                .interval_usec = interval,
                .cpus = r->cpus,
                .n_cpus = r->n_cpus,
                .tasks = r->ptasks,
                .n_tasks = r->n_tasks,
                .cgroups = r->cgroups,
                .n_cgroups = r->n_groups,
        };
        plan_free(r->plan);
        r->plan = TAKE_PTR(plan);
        *ret = (TraceEvent){
                .kind = TRACE_EVENT_TICK,
                .tick = r->tick,
                .now_usec = r->now,
                .flags = (unsigned) flags & ~TICK_NODE_BALANCE_RAN,
                .snap = &r->snap,
                .plan = r->plan,
        };
        return 0;
}

static int decode_info(TraceReader *r, Cur *c) {
        if (!get_str(c, INFO_MAX, &r->program) || !get_str(c, INFO_MAX, &r->host) ||
            !get_varint(c, &r->realtime_usec))
                return -EINVAL;
        r->started = true;
        return 0;
}

int trace_reader_next(TraceReader *r, TraceEvent *ret, char *error, size_t error_size) {
        uint8_t kind = 0;
        size_t size = 0;
        Cur c;
        int k;

        if (r->error) {
                if (error && error_size)
                        snprintf(error, error_size, "%s", r->error_text);
                return r->error;
        }
        for (;;) {
                k = read_frame(r, &kind, &size, error, error_size);
                if (k <= 0)
                        return k;
                c = (Cur){ .p = r->payload, .end = r->payload + size };
                if (!r->started && kind != FRAME_INFO)
                        return reader_frame_fail(r, error, error_size,
                                                 "the file does not start with its INFO frame");
                switch (kind) {
                case FRAME_INFO:
                        if (r->started)
                                return reader_frame_fail(r, error, error_size,
                                                         "a second INFO frame");
                        if (decode_info(r, &c) < 0 || c.p != c.end)
                                return reader_frame_fail(r, error, error_size,
                                                         c.bad ?: "a malformed INFO frame");
                        continue;
                case FRAME_TOPOLOGY: {
                        _cleanup_free_ char *text = strndup((const char *) r->payload, size);
                        char why[200] = "";
                        Topology *t = NULL;
                        char msg[256];

                        if (!text)
                                return reader_fail(r, -ENOMEM, error, error_size, "out of memory");
                        if (strlen(text) != size ||
                            topology_new_from_text(text, &t, why, sizeof why) < 0) {
                                snprintf(msg, sizeof msg, "its topology: %s",
                                         why[0] ? why : "a NUL byte");
                                return reader_frame_fail(r, error, error_size, msg);
                        }
                        topology_free(r->topo);
                        r->topo = t;
                        reader_reset(r);
                        *ret = (TraceEvent){ .kind = TRACE_EVENT_TOPOLOGY, .topology = t };
                        return 1;
                }
                case FRAME_CONFIG: {
                        char *text = strndup((const char *) r->payload, size);

                        if (!text)
                                return reader_fail(r, -ENOMEM, error, error_size, "out of memory");
                        if (strlen(text) != size) {
                                free(text);
                                return reader_frame_fail(r, error, error_size,
                                                         "a configuration with a NUL byte");
                        }
                        free(r->config);
                        r->config = text;
                        r->config_size = size;
                        *ret = (TraceEvent){ .kind = TRACE_EVENT_CONFIG,
                                             .config = text,
                                             .config_size = size };
                        return 1;
                }
                case FRAME_TICK:
                        if (!r->topo || !r->config)
                                return reader_frame_fail(r, error, error_size,
                                                         "a tick before the topology and "
                                                         "configuration");
                        k = decode_tick(r, &c, ret);
                        if (k == -ENOMEM)
                                return reader_fail(r, k, error, error_size, "out of memory");
                        if (k < 0) {
                                char msg[200];

                                snprintf(msg, sizeof msg, "tick %" PRIu64 ": %s", r->tick + 1,
                                         c.bad ?: "malformed");
                                /* what was read of it may be half-applied: nothing after is
                                 * read anyway */
                                return reader_frame_fail(r, error, error_size, msg);
                        }
                        return 1;
                default: {
                        char msg[80];

                        snprintf(msg, sizeof msg, "a frame of unknown kind 0x%02x", kind);
                        return reader_frame_fail(r, error, error_size, msg);
                }
                }
        }
}

/* ---- plans */

static bool mask_equal(const CpuMask *a, const CpuMask *b) {
        return (!a && !b) || (a && b && cpumask_equal(a, b));
}

bool plan_equal(const Plan *a, const Plan *b) {
        if (a->n_moves != b->n_moves || a->n_weights != b->n_weights ||
            a->n_escalations != b->n_escalations || a->node_balance_ran != b->node_balance_ran)
                return false;
        for (size_t i = 0; i < a->n_moves; i++) {
                const PlanMove *x = &a->moves[i], *y = &b->moves[i];

                if (x->pid != y->pid || x->starttime_ticks != y->starttime_ticks ||
                    x->from_node != y->from_node || x->to_node != y->to_node ||
                    !mask_equal(x->mask, y->mask) || !streq(x->reason, y->reason))
                        return false;
        }
        for (size_t i = 0; i < a->n_weights; i++) {
                const PlanWeight *x = &a->weights[i], *y = &b->weights[i];

                if (x->cgroup != y->cgroup || x->from != y->from || x->to != y->to ||
                    !streq(x->reason, y->reason))
                        return false;
        }
        for (size_t i = 0; i < a->n_escalations; i++) {
                const PlanEscalation *x = &a->escalations[i], *y = &b->escalations[i];

                if (x->cgroup != y->cgroup || x->for_cgroup != y->for_cgroup ||
                    x->lever != y->lever || x->from != y->from || x->to != y->to ||
                    !mask_equal(x->cpus, y->cpus) || !streq(x->reason, y->reason))
                        return false;
        }
        return true;
}
