/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "event.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* json-c's typedef json_bool and lib/json.h's function json_bool() share a name: rename the
 * typedef here (a type name is no symbol, so nothing changes at link time). */
#define json_bool json_c_bool
#include <json-c/json.h>
#undef json_bool

#include "cgroup.h"
#include "json.h"
#include "macro.h"

/* Far beyond any clock, and below json-c's clamp of a too-large number to INT64_MAX. */
#define EVENT_USEC_MAX (UINT64_C(1) << 62)
/* The longest line a reader takes: every string escaped at six bytes a byte, and the rest. */
#define EVENT_LINE_MAX (6 * (EVENT_CGROUP_MAX + EVENT_REASON_MAX) + 1024)

static const char *const kind_names[] = {
        [EVENT_TASK_MOVED] = "task-moved",
        [EVENT_WEIGHT_CHANGED] = "weight-changed",
        [EVENT_LEVER_CHANGED] = "lever-changed",
};

const char *event_kind_to_string(EventKind k) {
        return (size_t) k < ELEMENTSOF(kind_names) ? kind_names[k] : NULL;
}

/* A string member fits: NUL-terminated within size bytes, at least min bytes long. */
static bool text_ok(const char *s, size_t size, size_t min) {
        size_t n = strnlen(s, size);

        return n < size && n >= min;
}

static bool cgroup_ok(const char *path) {
        return text_ok(path, EVENT_CGROUP_MAX + 1, 1) && cgroup_path_is_valid(path);
}

static bool weight_ok(uint64_t w) {
        return w >= CGROUP_WEIGHT_MIN && w <= CGROUP_WEIGHT_MAX;
}

static bool lever_value_ok(PolicyLever l, uint64_t v) {
        return v <= (l == POLICY_LEVER_IDLE ? 1 : EVENT_QUOTA_MAX);
}

/* What event_parse() would accept, checked before writing it. */
static bool event_ok(const Event *e) {
        if (!event_kind_to_string(e->kind) || e->monotonic_usec > EVENT_USEC_MAX ||
            e->realtime_usec > EVENT_USEC_MAX || !text_ok(e->reason, sizeof e->reason, 0))
                return false;
        if (e->kind == EVENT_TASK_MOVED)
                return e->pid > 0 && text_ok(e->comm, sizeof e->comm, 1) && e->from_node >= 0 &&
                       e->to_node >= 0;
        if (e->kind == EVENT_LEVER_CHANGED)
                return cgroup_ok(e->cgroup) && policy_lever_to_string(e->lever) &&
                       lever_value_ok(e->lever, e->old_value) &&
                       lever_value_ok(e->lever, e->new_value) &&
                       text_ok(e->for_cgroup, sizeof e->for_cgroup, 0) &&
                       (!e->for_cgroup[0] || cgroup_ok(e->for_cgroup));
        return cgroup_ok(e->cgroup) && weight_ok(e->old_weight) && weight_ok(e->new_weight);
}

int event_format(const Event *e, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f;

        if (!e || !ret || !event_ok(e))
                return -EINVAL;
        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        fprintf(f,
                "{\"version\":%d,\"kind\":\"%s\",\"monotonic_usec\":%" PRIu64
                ",\"realtime_usec\":%" PRIu64,
                EVENT_VERSION, event_kind_to_string(e->kind), e->monotonic_usec, e->realtime_usec);
        if (e->kind == EVENT_TASK_MOVED) {
                fprintf(f, ",\"pid\":%d,\"comm\":", (int) e->pid);
                json_write_quoted(f, e->comm);
                fprintf(f, ",\"from_node\":%d,\"to_node\":%d", e->from_node, e->to_node);
        } else if (e->kind == EVENT_LEVER_CHANGED) {
                fputs(",\"cgroup\":", f);
                json_write_quoted(f, e->cgroup);
                fprintf(f,
                        ",\"lever\":\"%s\",\"old_value\":%" PRIu32 ",\"new_value\":%" PRIu32
                        ",\"for_cgroup\":",
                        policy_lever_to_string(e->lever), e->old_value, e->new_value);
                json_write_quoted(f, e->for_cgroup);
        } else {
                fputs(",\"cgroup\":", f);
                json_write_quoted(f, e->cgroup);
                fprintf(f, ",\"old_weight\":%" PRIu32 ",\"new_weight\":%" PRIu32, e->old_weight,
                        e->new_weight);
        }
        fputs(",\"reason\":", f);
        json_write_quoted(f, e->reason);
        fputs("}\n", f);
        if (fclose(f) != 0)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        return 0;
}

/* ---- parsing */

/* An integer member in min..max. json-c clamps what overflows to INT64_MIN/MAX: out of range. */
static bool get_int(json_object *o, const char *key, int64_t min, int64_t max, int64_t *ret) {
        json_object *v = NULL;
        int64_t n;

        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
                return false;
        n = json_object_get_int64(v);
        if (n < min || n > max)
                return false;
        *ret = n;
        return true;
}

/* A string member of min..size-1 bytes without NUL, copied into buf. */
static bool get_text(json_object *o, const char *key, size_t min, char *buf, size_t size) {
        json_object *v = NULL;
        const char *s;
        size_t n;

        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return false;
        s = json_object_get_string(v);
        n = (size_t) json_object_get_string_len(v);
        if (n < min || n >= size || strlen(s) != n) /* a "\u0000" inside */
                return false;
        memcpy(buf, s, n + 1);
        return true;
}

static bool parse_move(json_object *o, Event *e) {
        int64_t pid, from, to;

        if (!get_int(o, "pid", 1, INT_MAX, &pid) || !get_int(o, "from_node", 0, INT_MAX, &from) ||
            !get_int(o, "to_node", 0, INT_MAX, &to) ||
            !get_text(o, "comm", 1, e->comm, sizeof e->comm))
                return false;
        e->pid = (pid_t) pid;
        e->from_node = (int) from;
        e->to_node = (int) to;
        return true;
}

static bool parse_weight(json_object *o, Event *e) {
        int64_t old_w, new_w;

        if (!get_int(o, "old_weight", CGROUP_WEIGHT_MIN, CGROUP_WEIGHT_MAX, &old_w) ||
            !get_int(o, "new_weight", CGROUP_WEIGHT_MIN, CGROUP_WEIGHT_MAX, &new_w) ||
            !get_text(o, "cgroup", 1, e->cgroup, sizeof e->cgroup) || !cgroup_ok(e->cgroup))
                return false;
        e->old_weight = (uint32_t) old_w;
        e->new_weight = (uint32_t) new_w;
        return true;
}

static bool parse_lever(json_object *o, Event *e) {
        json_object *v = NULL;
        int64_t old_v, new_v;
        const char *name;

        if (!json_object_object_get_ex(o, "lever", &v) || !json_object_is_type(v, json_type_string))
                return false;
        name = json_object_get_string(v);
        e->lever = policy_lever_from_string(name);
        if (e->lever == POLICY_LEVER_NONE || !get_int(o, "old_value", 0, EVENT_QUOTA_MAX, &old_v) ||
            !get_int(o, "new_value", 0, EVENT_QUOTA_MAX, &new_v) ||
            !lever_value_ok(e->lever, (uint64_t) old_v) ||
            !lever_value_ok(e->lever, (uint64_t) new_v) ||
            !get_text(o, "cgroup", 1, e->cgroup, sizeof e->cgroup) || !cgroup_ok(e->cgroup) ||
            !get_text(o, "for_cgroup", 0, e->for_cgroup, sizeof e->for_cgroup) ||
            (e->for_cgroup[0] && !cgroup_ok(e->for_cgroup)))
                return false;
        e->old_value = (uint32_t) old_v;
        e->new_value = (uint32_t) new_v;
        return true;
}

static bool parse_object(json_object *o, Event *e) {
        json_object *v = NULL;
        int64_t version, mono, real;
        const char *kind;

        if (!json_object_is_type(o, json_type_object) ||
            !get_int(o, "version", EVENT_VERSION, EVENT_VERSION, &version) ||
            !json_object_object_get_ex(o, "kind", &v) || !json_object_is_type(v, json_type_string))
                return false;
        kind = json_object_get_string(v);
        if (streq(kind, kind_names[EVENT_TASK_MOVED]))
                e->kind = EVENT_TASK_MOVED;
        else if (streq(kind, kind_names[EVENT_WEIGHT_CHANGED]))
                e->kind = EVENT_WEIGHT_CHANGED;
        else if (streq(kind, kind_names[EVENT_LEVER_CHANGED]))
                e->kind = EVENT_LEVER_CHANGED;
        else
                return false;
        if (!get_int(o, "monotonic_usec", 0, (int64_t) EVENT_USEC_MAX, &mono) ||
            !get_int(o, "realtime_usec", 0, (int64_t) EVENT_USEC_MAX, &real) ||
            !get_text(o, "reason", 0, e->reason, sizeof e->reason))
                return false;
        e->monotonic_usec = (uint64_t) mono;
        e->realtime_usec = (uint64_t) real;
        return e->kind == EVENT_TASK_MOVED      ? parse_move(o, e)
               : e->kind == EVENT_LEVER_CHANGED ? parse_lever(o, e)
                                                : parse_weight(o, e);
}

int event_parse(const char *line, Event *ret) {
        _cleanup_free_ Event *e = NULL;
        json_tokener *tok;
        json_object *o;
        size_t len;
        bool ok;

        if (!line || !ret)
                return -EINVAL;
        len = strlen(line);
        if (len > 0 && line[len - 1] == '\n')
                len--;
        if (len == 0 || len > EVENT_LINE_MAX || memchr(line, '\n', len))
                return -EBADMSG;
        e = calloc(1, sizeof *e); /* not on the stack: 5 KiB */
        tok = json_tokener_new();
        if (!e || !tok) {
                if (tok)
                        json_tokener_free(tok);
                return -ENOMEM;
        }
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        o = json_tokener_parse_ex(tok, line, (int) len);
        ok = o && json_tokener_get_error(tok) == json_tokener_success &&
             json_tokener_get_parse_end(tok) == len && parse_object(o, e);
        json_object_put(o);
        json_tokener_free(tok);
        if (!ok)
                return -EBADMSG;
        *ret = *e;
        return 0;
}
