/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgbalancectl: parse args -> connect to the bus -> one call to cgbalanced (or, for monitor, a
 * signal loop) -> an exit status scripts can sort by (EXIT_* below; --help and cgbalancectl(1)
 * document them). The API is daemon/bus-api.h; nothing here knows the daemon's internals.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>
#include <time.h>

#include "bus-api.h"
#include "clock.h"
#include "json.h"
#include "log.h"
#include "macro.h"
#include "openmetrics.h"
#include "tunables.h"

enum {
        EXIT_OK = 0,
        EXIT_REFUSED = 1, /* the daemon refused or failed the request */
        EXIT_USAGE = 2,
        EXIT_NOT_RUNNING = 3, /* no owner of CGB_BUS_NAME, or no bus */
        EXIT_DENIED = 4,
};

static const char *arg_bus; /* NULL: the system bus */
static bool arg_json;
static bool arg_verbose;

static const char *strna(const char *s) {
        return s ? s : "-";
}

/* "the system bus" or "the bus at ADDRESS", in the caller's buf. */
static const char *bus_description(char *buf, size_t size) {
        if (!arg_bus)
                return "the system bus";
        (void) snprintf(buf, size, "the bus at %s", arg_bus);
        return buf;
}

/* ---- errors: each D-Bus failure becomes one line on stderr and one exit status */

static int not_running(void) {
        char desc[256];

        log_error("cgbalanced is not running (no owner of " CGB_BUS_NAME " on %s)",
                  bus_description(desc, sizeof desc));
        return EXIT_NOT_RUNNING;
}

/* what: the command, for the message ("reload", "set"). Returns the exit status. */
static int report_error(const char *what, const sd_bus_error *e, int r) {
        char desc[256];
        const char *msg = sd_bus_error_is_set(e) && e->message ? e->message : NULL;

        if (sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER))
                return not_running();
        if (sd_bus_error_has_names(e, SD_BUS_ERROR_ACCESS_DENIED, SD_BUS_ERROR_AUTH_FAILED,
                                   SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED) ||
            r == -EACCES || r == -EPERM) {
                if (msg && strncmp(msg, "Rejected send message", 21) == 0)
                        /* dbus-daemon's rule dump helps no one */
                        log_error("permission denied: this needs root (the D-Bus policy "
                                  "for " CGB_BUS_NAME " refused the call)");
                else if (msg)
                        log_error("permission denied: this needs root: %s", msg);
                else
                        log_error("permission denied: this needs root");
                return EXIT_DENIED;
        }
        if (sd_bus_error_has_names(e, SD_BUS_ERROR_DISCONNECTED) || r == -ECONNRESET ||
            r == -ENOTCONN) {
                log_error("lost the connection to %s", bus_description(desc, sizeof desc));
                return EXIT_NOT_RUNNING;
        }
        if (r == -ETIMEDOUT) {
                log_error("%s: cgbalanced did not answer in time", what);
                return EXIT_REFUSED;
        }
        if (sd_bus_error_has_names(e, SD_BUS_ERROR_NO_REPLY)) {
                log_error("%s: cgbalanced went away without answering", what);
                return EXIT_NOT_RUNNING;
        }
        if (sd_bus_error_has_names(e, SD_BUS_ERROR_UNKNOWN_METHOD, SD_BUS_ERROR_UNKNOWN_OBJECT,
                                   SD_BUS_ERROR_UNKNOWN_INTERFACE))
                log_error("%s: this cgbalanced does not support it: %s", what, strna(msg));
        else if (msg)
                log_error("%s: %s", what, msg);
        else
                log_error_errno(r, "%s: %m", what);
        return EXIT_REFUSED;
}

static int bus_connect(sd_bus **ret) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        if (!arg_bus) {
                r = sd_bus_open_system(&bus);
                if (r < 0) {
                        log_error_errno(r, "cannot connect to the system bus: %m");
                        return EXIT_NOT_RUNNING;
                }
        } else {
                r = sd_bus_new(&bus);
                if (r >= 0)
                        r = sd_bus_set_address(bus, arg_bus);
                if (r >= 0)
                        r = sd_bus_set_bus_client(bus, 1);
                if (r >= 0)
                        r = sd_bus_start(bus);
                if (r < 0) {
                        log_error_errno(r, "cannot connect to the bus at %s: %m", arg_bus);
                        return EXIT_NOT_RUNNING;
                }
        }
        *ret = TAKE_PTR(bus);
        return EXIT_OK;
}

/* Calls a method of the daemon's Manager interface. Returns the exit status; on failure the
 * reason is printed. ret_reply may be NULL. */
static int call(sd_bus *bus, const char *what, const char *method, sd_bus_message **ret_reply,
                const char *types, ...) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        va_list ap;
        int r;

        va_start(ap, types);
        r = sd_bus_call_methodv(bus, CGB_BUS_NAME, CGB_BUS_PATH, CGB_BUS_INTERFACE, method, &e,
                                &reply, types, ap);
        va_end(ap);
        if (r < 0)
                return report_error(what, &e, r);
        if (ret_reply)
                *ret_reply = TAKE_PTR(reply);
        return EXIT_OK;
}

/* ---- the properties, as GetAll returns them; strings point into the reply */

typedef struct Array {
        void *items;
        size_t n;
} Array;

typedef struct Node {
        uint32_t id;
        const char *cpus;
        uint32_t capacity, load_permyriad, pressure_permyriad, runnable;
} Node;

typedef struct Cpu {
        uint32_t cpu, util_permyriad;
} Cpu;

typedef struct Group {
        const char *path;
        uint64_t weight, base_weight, pressure_permyriad; /* UINT64_MAX: unknown */
        int protected_;
} Group;

typedef struct Task {
        uint32_t pid;
        const char *comm, *cgroup;
        int32_t cpu, node;
        uint32_t util_permyriad, demand_permyriad;
        const char *allowed;
        int ours, foreign;
} Task;

typedef struct Counter {
        const char *name;
        uint64_t value;
} Counter;

typedef struct Setting {
        const char *key, *value;
} Setting;

typedef struct Action {
        uint64_t realtime_usec;
        const char *subject, *text;
} Action;

typedef struct Escalation {
        const char *path;
        int idle;
        uint32_t quota_permyriad;
        const char *partition, *for_cgroup, *reason;
} Escalation;

typedef struct Status {
        sd_bus_message *reply;
        uint32_t seen; /* bit i: properties[i] was there */
        const char *version, *state, *cgroup_mode;
        uint64_t last_tick_usec;
        Array nodes, cpus, groups, tasks, counters, config, actions, escalations;
} Status;

static void status_done(Status *s) {
        Array *arrays[] = { &s->nodes,    &s->cpus,   &s->groups,  &s->tasks,
                            &s->counters, &s->config, &s->actions, &s->escalations };

        for (size_t i = 0; i < ELEMENTSOF(arrays); i++)
                free(arrays[i]->items);
        sd_bus_message_unref(s->reply);
        *s = (Status){ 0 };
}

#define ITEMS(type, array) ((const type *) (array).items)

/* ---- reading and writing each property */

static int read_string(sd_bus_message *m, void *ret) {
        return sd_bus_message_read(m, "s", ret);
}

static int read_u64(sd_bus_message *m, void *ret) {
        return sd_bus_message_read(m, "t", ret);
}

static int read_node(sd_bus_message *m, void *ret) {
        Node *x = ret;

        return sd_bus_message_read(m, "(usuuuu)", &x->id, &x->cpus, &x->capacity,
                                   &x->load_permyriad, &x->pressure_permyriad, &x->runnable);
}

static int read_cpu(sd_bus_message *m, void *ret) {
        Cpu *x = ret;

        return sd_bus_message_read(m, "(uu)", &x->cpu, &x->util_permyriad);
}

static int read_group(sd_bus_message *m, void *ret) {
        Group *x = ret;

        return sd_bus_message_read(m, "(stttb)", &x->path, &x->weight, &x->base_weight,
                                   &x->pressure_permyriad, &x->protected_);
}

static int read_task(sd_bus_message *m, void *ret) {
        Task *x = ret;

        return sd_bus_message_read(m, "(ussiiuusbb)", &x->pid, &x->comm, &x->cgroup, &x->cpu,
                                   &x->node, &x->util_permyriad, &x->demand_permyriad, &x->allowed,
                                   &x->ours, &x->foreign);
}

static int read_counter(sd_bus_message *m, void *ret) {
        Counter *x = ret;

        return sd_bus_message_read(m, "{st}", &x->name, &x->value);
}

static int read_setting(sd_bus_message *m, void *ret) {
        Setting *x = ret;

        return sd_bus_message_read(m, "{ss}", &x->key, &x->value);
}

static int read_action(sd_bus_message *m, void *ret) {
        Action *x = ret;

        return sd_bus_message_read(m, "(tss)", &x->realtime_usec, &x->subject, &x->text);
}

static int read_escalation(sd_bus_message *m, void *ret) {
        Escalation *x = ret;

        return sd_bus_message_read(m, "(sbusss)", &x->path, &x->idle, &x->quota_permyriad,
                                   &x->partition, &x->for_cgroup, &x->reason);
}

static void json_string_field(Json *j, const void *field) {
        json_string(j, NULL, *(const char *const *) field);
}

static void json_u64_field(Json *j, const void *field) {
        json_u64(j, NULL, *(const uint64_t *) field);
}

static void json_nodes(Json *j, const void *field) {
        const Array *a = field;

        json_begin(j, '[');
        for (const Node *x = a->items; x < ITEMS(Node, *a) + a->n; x++) {
                json_begin(j, '{');
                json_u64(j, "id", x->id);
                json_string(j, "cpus", x->cpus);
                json_u64(j, "capacity", x->capacity);
                json_u64(j, "load", x->load_permyriad);
                json_u64(j, "pressure", x->pressure_permyriad);
                json_u64(j, "runnable", x->runnable);
                json_end(j, '}');
        }
        json_end(j, ']');
}

static void json_cpus(Json *j, const void *field) {
        const Array *a = field;

        json_begin(j, '[');
        for (const Cpu *x = a->items; x < ITEMS(Cpu, *a) + a->n; x++) {
                json_begin(j, '{');
                json_u64(j, "cpu", x->cpu);
                json_u64(j, "utilisation", x->util_permyriad);
                json_end(j, '}');
        }
        json_end(j, ']');
}

static void json_groups(Json *j, const void *field) {
        const Array *a = field;

        json_begin(j, '[');
        for (const Group *x = a->items; x < ITEMS(Group, *a) + a->n; x++) {
                json_begin(j, '{');
                json_string(j, "path", x->path);
                json_u64(j, "weight", x->weight);
                json_u64(j, "base_weight", x->base_weight);
                json_u64(j, "pressure", x->pressure_permyriad);
                json_bool(j, "protected", x->protected_);
                json_end(j, '}');
        }
        json_end(j, ']');
}

static void json_tasks(Json *j, const void *field) {
        const Array *a = field;

        json_begin(j, '[');
        for (const Task *x = a->items; x < ITEMS(Task, *a) + a->n; x++) {
                json_begin(j, '{');
                json_u64(j, "pid", x->pid);
                json_string(j, "comm", x->comm);
                json_string(j, "cgroup", x->cgroup);
                json_i64(j, "cpu", x->cpu);
                json_i64(j, "node", x->node);
                json_u64(j, "util", x->util_permyriad);
                json_u64(j, "demand", x->demand_permyriad);
                json_string(j, "allowed_cpus", x->allowed);
                json_bool(j, "ours", x->ours);
                json_bool(j, "foreign", x->foreign);
                json_end(j, '}');
        }
        json_end(j, ']');
}

static void json_counters(Json *j, const void *field) {
        const Array *a = field;

        json_begin(j, '{');
        for (const Counter *x = a->items; x < ITEMS(Counter, *a) + a->n; x++)
                json_u64(j, x->name, x->value);
        json_end(j, '}');
}

static void json_config(Json *j, const void *field) {
        const Array *a = field;

        json_begin(j, '{');
        for (const Setting *x = a->items; x < ITEMS(Setting, *a) + a->n; x++)
                json_string(j, x->key, x->value);
        json_end(j, '}');
}

static void json_actions(Json *j, const void *field) {
        const Array *a = field;

        json_begin(j, '[');
        for (const Action *x = a->items; x < ITEMS(Action, *a) + a->n; x++) {
                json_begin(j, '{');
                json_u64(j, "usec", x->realtime_usec);
                json_string(j, "subject", x->subject);
                json_string(j, "text", x->text);
                json_end(j, '}');
        }
        json_end(j, ']');
}

static void json_escalations(Json *j, const void *field) {
        const Array *a = field;

        json_begin(j, '[');
        for (const Escalation *x = a->items; x < ITEMS(Escalation, *a) + a->n; x++) {
                json_begin(j, '{');
                json_string(j, "path", x->path);
                json_bool(j, "idle", x->idle);
                json_u64(j, "quota", x->quota_permyriad);
                json_string(j, "kept_off_cpus", x->partition);
                json_string(j, "for", x->for_cgroup);
                json_string(j, "reason", x->reason);
                json_end(j, '}');
        }
        json_end(j, ']');
}

typedef struct Property {
        const char *name, *signature;
        size_t offset; /* of the field in Status */
        size_t element_size; /* 0: a scalar, read straight into the field; else an Array */
        int (*read)(sd_bus_message *m, void *ret); /* the scalar, or one element */
        void (*to_json)(Json *j, const void *field);
} Property;

#define SCALAR(name, sig, field, reader, writer) \
        { name, sig, offsetof(Status, field), 0, reader, writer }
#define ARRAY(name, sig, field, type, reader, writer) \
        { name, sig, offsetof(Status, field), sizeof(type), reader, writer }

/* In the order status --json prints them. */
static const Property properties[] = {
        SCALAR("Version", "s", version, read_string, json_string_field),
        SCALAR("State", "s", state, read_string, json_string_field),
        SCALAR("CgroupMode", "s", cgroup_mode, read_string, json_string_field),
        SCALAR("LastTickUSec", "t", last_tick_usec, read_u64, json_u64_field),
        ARRAY("Nodes", CGB_SIG_NODES, nodes, Node, read_node, json_nodes),
        ARRAY("CPUs", CGB_SIG_CPUS, cpus, Cpu, read_cpu, json_cpus),
        ARRAY("ManagedCgroups", CGB_SIG_CGROUPS, groups, Group, read_group, json_groups),
        ARRAY("ManagedTasks", CGB_SIG_TASKS, tasks, Task, read_task, json_tasks),
        ARRAY("Counters", CGB_SIG_COUNTERS, counters, Counter, read_counter, json_counters),
        ARRAY("Config", CGB_SIG_CONFIG, config, Setting, read_setting, json_config),
        ARRAY("RecentActions", CGB_SIG_RECENT, actions, Action, read_action, json_actions),
        ARRAY("Escalations", CGB_SIG_ESCALATIONS, escalations, Escalation, read_escalation,
              json_escalations),
};
_Static_assert(ELEMENTSOF(properties) <= 32, "Status.seen has a bit per property");

static int read_array(sd_bus_message *m, const Property *p, Array *a) {
        int r;

        /* "a(usuuuu)" -> "(usuuuu)" */
        r = sd_bus_message_enter_container(m, 'a', p->signature + 1);
        if (r < 0)
                return r;
        for (;;) {
                void *items = reallocarray(a->items, a->n + 1, p->element_size);

                if (!items)
                        return -ENOMEM;
                a->items = items;
                r = p->read(m, (char *) items + a->n * p->element_size);
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                a->n++;
        }
        return sd_bus_message_exit_container(m);
}

static int read_property(sd_bus_message *m, size_t i, Status *s) {
        const Property *p = &properties[i];
        void *field = (char *) s + p->offset;
        int r;

        r = sd_bus_message_enter_container(m, 'v', p->signature);
        if (r < 0)
                return r;
        r = p->element_size ? read_array(m, p, field) : p->read(m, field);
        if (r < 0)
                return r;
        s->seen |= 1u << i;
        return sd_bus_message_exit_container(m);
}

static int parse_one(sd_bus_message *m, Status *s) {
        const char *name;
        int r;

        r = sd_bus_message_read(m, "s", &name);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(properties); i++)
                if (streq(name, properties[i].name)) {
                        r = read_property(m, i, s);
                        if (r < 0)
                                log_error_errno(r, "cgbalanced sent an unreadable %s: %m", name);
                        return r;
                }
        return sd_bus_message_skip(m, "v"); /* a newer daemon's property */
}

/* Parses a GetAll reply; takes a reference. Returns the exit status. */
static int status_parse(sd_bus_message *reply, Status *s) {
        int r;

        s->reply = sd_bus_message_ref(reply);
        r = sd_bus_message_enter_container(reply, 'a', "{sv}");
        while (r >= 0) {
                r = sd_bus_message_enter_container(reply, 'e', "sv");
                if (r <= 0)
                        break;
                r = parse_one(reply, s);
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        if (r < 0) {
                log_error_errno(r, "status: cgbalanced sent unreadable properties: %m");
                return EXIT_REFUSED;
        }
        return EXIT_OK;
}

static void status_print_json(const Status *s, FILE *f) {
        Json j = { .f = f };

        json_begin(&j, '{');
        for (size_t i = 0; i < ELEMENTSOF(properties); i++) {
                if (!(s->seen & (1u << i)))
                        continue;
                json_key(&j, properties[i].name);
                properties[i].to_json(&j, (const char *) s + properties[i].offset);
        }
        json_end(&j, '}');
}

/* ---- the readable report */

typedef char Buf[64];

/* 12345 permyriad of a CPU -> "1.23" */
static const char *fmt_cpus(Buf buf, uint64_t permyriad) {
        uint64_t hundredths = (permyriad + 50) / 100;

        (void) snprintf(buf, sizeof(Buf), "%" PRIu64 ".%02" PRIu64, hundredths / 100,
                        hundredths % 100);
        return buf;
}

/* 1234 permyriad -> "12.34%"; UINT64_MAX (unknown) -> "-" */
static const char *fmt_percent(Buf buf, uint64_t permyriad) {
        if (permyriad == UINT64_MAX)
                return "-";
        (void) snprintf(buf, sizeof(Buf), "%" PRIu64 ".%02" PRIu64 "%%", permyriad / 100,
                        permyriad % 100);
        return buf;
}

/* "0.4 s ago", "3 min 12 s ago", "2 h 5 min ago", "3 d 4 h ago"; 0 is "never". */
static const char *fmt_ago(Buf buf, uint64_t then_usec, uint64_t now_usec) {
        uint64_t d = now_usec > then_usec ? now_usec - then_usec : 0, s = d / 1000000u;

        if (then_usec == 0)
                return "never";
        if (s < 60)
                (void) snprintf(buf, sizeof(Buf), "%" PRIu64 ".%" PRIu64 " s ago", s,
                                d % 1000000u / 100000u);
        else if (s < 3600)
                (void) snprintf(buf, sizeof(Buf), "%" PRIu64 " min %" PRIu64 " s ago", s / 60,
                                s % 60);
        else if (s < 86400)
                (void) snprintf(buf, sizeof(Buf), "%" PRIu64 " h %" PRIu64 " min ago", s / 3600,
                                s % 3600 / 60);
        else
                (void) snprintf(buf, sizeof(Buf), "%" PRIu64 " d %" PRIu64 " h ago", s / 86400,
                                s % 86400 / 3600);
        return buf;
}

/* Writes s with control characters as \xNN, except those in keep ("\n\t" for multi-line text):
 * task names and cgroup paths come from unprivileged users and must not drive the terminal.
 * Returns the number of columns written. */
static size_t put_safe(FILE *f, const char *s, const char *keep) {
        size_t n = 0;

        for (const unsigned char *p = (const unsigned char *) strna(s); *p; p++) {
                if ((*p < 0x20 || *p == 0x7f) && !strchr(keep, *p)) {
                        fprintf(f, "\\x%02x", *p);
                        n += 4;
                } else {
                        fputc(*p, f);
                        n++;
                }
        }
        return n;
}

/* s as put_safe() writes it, in a new string; NULL on OOM. */
static char *escape(const char *s) {
        _cleanup_fclose_ FILE *f = NULL;
        char *buf = NULL;
        size_t size;

        f = open_memstream(&buf, &size);
        if (!f)
                return NULL;
        (void) put_safe(f, s, "");
        if (fclose(TAKE_PTR(f)) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

/* The columns put_safe() needs for s, at least at_least, at most 60 (longer cells overflow). */
static int width_of(const char *s, int at_least) {
        size_t n = 0;

        for (const unsigned char *p = (const unsigned char *) strna(s); *p; p++)
                n += *p < 0x20 || *p == 0x7f ? 4 : 1;
        return n > (size_t) at_least ? (int) MIN(n, 60u) : at_least;
}

/* A left-aligned cell of a table. */
static void put_cell(FILE *f, const char *s, int width) {
        size_t n = put_safe(f, s, "");

        if (n < (size_t) width)
                fprintf(f, "%*s", width - (int) n, "");
}

static uint64_t counter_value(const Status *s, const char *name) {
        for (size_t i = 0; i < s->counters.n; i++)
                if (streq(ITEMS(Counter, s->counters)[i].name, name))
                        return ITEMS(Counter, s->counters)[i].value;
        return 0;
}

static void print_header(const Status *s, uint64_t now, FILE *f) {
        Buf b;

        fputs("Version:     ", f);
        put_safe(f, s->version, "");
        fputs("\nState:       ", f);
        put_safe(f, s->state, "");
        fputs("\nCgroup mode: ", f);
        put_safe(f, s->cgroup_mode, "");
        fprintf(f, "\nLast tick:   %s", fmt_ago(b, s->last_tick_usec, now));
        if (s->last_tick_usec != 0)
                fprintf(f, " (tick %" PRIu64 ")", counter_value(s, "ticks"));
        fputc('\n', f);
}

static void print_nodes(const Status *s, FILE *f) {
        int w = 4;
        Buf a, b;

        for (size_t i = 0; i < s->nodes.n; i++)
                w = width_of(ITEMS(Node, s->nodes)[i].cpus, w);
        fprintf(f, "\nNodes (%zu):\n", s->nodes.n);
        fprintf(f, "  NODE  %-*s  CAPACITY   LOAD  PRESSURE  RUNNABLE\n", w, "CPUS");
        for (const Node *x = s->nodes.items; x < ITEMS(Node, s->nodes) + s->nodes.n; x++) {
                fprintf(f, "  %4" PRIu32 "  ", x->id);
                put_cell(f, x->cpus, w);
                fprintf(f, "  %8" PRIu32 "  %5s  %8s  %8" PRIu32 "\n", x->capacity,
                        fmt_cpus(a, x->load_permyriad), fmt_percent(b, x->pressure_permyriad),
                        x->runnable);
        }
}

static void print_cpus(const Status *s, FILE *f) {
        Buf b;

        fprintf(f, "\nCPU utilisation:");
        for (size_t i = 0; i < s->cpus.n; i++) {
                const Cpu *x = &ITEMS(Cpu, s->cpus)[i];

                char name[16];

                (void) snprintf(name, sizeof name, "cpu%" PRIu32, x->cpu);
                fputs(i % 6 == 0 ? "\n  " : "  ", f);
                fprintf(f, "%-6s %7s", name, fmt_percent(b, x->util_permyriad));
        }
        fputc('\n', f);
}

static void print_groups(const Status *s, FILE *f) {
        int w = 4;
        Buf b;

        for (size_t i = 0; i < s->groups.n; i++)
                w = width_of(ITEMS(Group, s->groups)[i].path, w);
        fprintf(f, "\nManaged cgroups (%zu):\n", s->groups.n);
        if (s->groups.n == 0)
                return;
        fprintf(f, "  %-*s  WEIGHT   BASE  PRESSURE  PROTECTED\n", w, "PATH");
        for (const Group *x = s->groups.items; x < ITEMS(Group, s->groups) + s->groups.n; x++) {
                fputs("  ", f);
                put_cell(f, x->path, w);
                fprintf(f, "  %6" PRIu64 "  %5" PRIu64 "  %8s  %s\n", x->weight, x->base_weight,
                        fmt_percent(b, x->pressure_permyriad), x->protected_ ? "yes" : "no");
        }
}

/* Only when there are some: a daemon that never needed more than weights says nothing here. */
static void print_escalations(const Status *s, FILE *f) {
        int w = 4;
        Buf b;

        if (s->escalations.n == 0)
                return;
        for (size_t i = 0; i < s->escalations.n; i++)
                w = width_of(ITEMS(Escalation, s->escalations)[i].path, w);
        fprintf(f, "\nHeld back past the weight (%zu):\n", s->escalations.n);
        fprintf(f, "  %-*s  IDLE  CPU LIMIT  KEPT OFF  FOR\n", w, "PATH");
        for (const Escalation *x = s->escalations.items;
             x < ITEMS(Escalation, s->escalations) + s->escalations.n; x++) {
                fputs("  ", f);
                put_cell(f, x->path, w);
                fprintf(f, "  %-4s  %9s  %8s  ", x->idle ? "yes" : "no",
                        x->quota_permyriad ? fmt_percent(b, x->quota_permyriad) : "-",
                        x->partition[0] ? x->partition : "-");
                if (x->for_cgroup[0]) {
                        put_safe(f, x->for_cgroup, "");
                        fputs(": ", f);
                        put_safe(f, x->reason, "");
                } else
                        fputs("(an earlier run's, from its record)", f);
                fputc('\n', f);
        }
}

static void print_task(const Task *x, int wc, int wg, int wa, FILE *f) {
        Buf a, b;

        fprintf(f, "  %7" PRIu32 "  ", x->pid);
        put_cell(f, x->comm, wc);
        fputs("  ", f);
        put_cell(f, x->cgroup, wg);
        fprintf(f, "  %3" PRIi32 "  %4" PRIi32 "  %7s  %7s  ", x->cpu, x->node,
                fmt_percent(a, x->util_permyriad), fmt_percent(b, x->demand_permyriad));
        put_cell(f, x->allowed, wa);
        fprintf(f, "  %-4s  %s\n", x->ours ? "yes" : "no", x->foreign ? "yes" : "no");
}

static void print_tasks(const Status *s, FILE *f) {
        int wc = 4, wg = 6, wa = 7;

        fprintf(f, "\nManaged tasks: %zu%s\n", s->tasks.n,
                s->tasks.n > 0 && !arg_verbose ? " (--verbose lists them)" : "");
        if (!arg_verbose || s->tasks.n == 0)
                return;
        for (const Task *x = s->tasks.items; x < ITEMS(Task, s->tasks) + s->tasks.n; x++) {
                wc = width_of(x->comm, wc);
                wg = width_of(x->cgroup, wg);
                wa = width_of(x->allowed, wa);
        }
        fprintf(f, "  %7s  %-*s  %-*s  CPU  NODE     UTIL   DEMAND  %-*s  OURS  FOREIGN\n", "PID",
                wc, "COMM", wg, "CGROUP", wa, "ALLOWED");
        for (const Task *x = s->tasks.items; x < ITEMS(Task, s->tasks) + s->tasks.n; x++)
                print_task(x, wc, wg, wa, f);
}

static void print_counters(const Status *s, FILE *f) {
        size_t col = 0;

        fputs("\nCounters:\n", f);
        for (const Counter *x = s->counters.items; x < ITEMS(Counter, s->counters) + s->counters.n;
             x++) {
                size_t n = (size_t) width_of(x->name, 0) + 1 +
                           (size_t) snprintf(NULL, 0, "%" PRIu64, x->value);

                if (col > 0 && col + 2 + n > 78) {
                        fputc('\n', f);
                        col = 0;
                }
                fputs(col == 0 ? "  " : ", ", f);
                put_safe(f, x->name, "");
                fprintf(f, " %" PRIu64, x->value);
                col += 2 + n;
        }
        if (col > 0)
                fputc('\n', f);
}

static void print_actions(const Status *s, uint64_t now, FILE *f) {
        Buf b;

        fprintf(f, "\nRecent actions (%zu):\n", s->actions.n);
        for (const Action *x = s->actions.items; x < ITEMS(Action, s->actions) + s->actions.n;
             x++) {
                fprintf(f, "  %16s  ", fmt_ago(b, x->realtime_usec, now));
                put_safe(f, x->subject, "");
                fputs(": ", f);
                put_safe(f, x->text, "");
                fputc('\n', f);
        }
}

static void print_config(const Status *s, FILE *f) {
        fputs("\nConfiguration:\n", f);
        for (const Setting *x = s->config.items; x < ITEMS(Setting, s->config) + s->config.n; x++) {
                fputs("  ", f);
                put_safe(f, x->key, "");
                fputs(" = ", f);
                put_safe(f, x->value, "");
                fputc('\n', f);
        }
}

static void status_print_text(const Status *s, uint64_t now, FILE *f) {
        print_header(s, now, f);
        print_nodes(s, f);
        print_cpus(s, f);
        print_groups(s, f);
        print_escalations(s, f);
        print_tasks(s, f);
        print_counters(s, f);
        print_actions(s, now, f);
        if (arg_verbose)
                print_config(s, f);
}

/* ---- commands; each returns the exit status */

static int verb_status(sd_bus *bus, char **args) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(status_done) Status s = { 0 };
        int r;

        (void) args;
        r = sd_bus_call_method(bus, CGB_BUS_NAME, CGB_BUS_PATH, "org.freedesktop.DBus.Properties",
                               "GetAll", &e, &reply, "s", CGB_BUS_INTERFACE);
        if (r < 0)
                return report_error("status", &e, r);
        r = status_parse(reply, &s);
        if (r != EXIT_OK)
                return r;
        if (arg_json)
                status_print_json(&s, stdout);
        else
                status_print_text(&s, clock_usec(CLOCK_REALTIME), stdout);
        return EXIT_OK;
}

static int verb_reload(sd_bus *bus, char **args) {
        (void) args;
        return call(bus, "reload", "Reload", NULL, "");
}

static int verb_pause(sd_bus *bus, char **args) {
        (void) args;
        return call(bus, "pause", "Pause", NULL, "");
}

static int verb_resume(sd_bus *bus, char **args) {
        (void) args;
        return call(bus, "resume", "Resume", NULL, "");
}

static int verb_rebalance(sd_bus *bus, char **args) {
        (void) args;
        return call(bus, "rebalance", "RebalanceNow", NULL, "");
}

static int verb_set(sd_bus *bus, char **args) {
        return call(bus, "set", "SetTunable", NULL, "ss", args[0], args[1]);
}

static int check_record(char **args) {
        if (streq(args[0], "stop") && !args[1])
                return 0;
        if (streq(args[0], "start") && args[1]) {
                if (tunables_record_name_ok(args[1]) && strlen(args[1]) <= 64)
                        return 0;
                log_error("record start: \"%s\" is not a file name in the record directory (no "
                          "'/', not . or .., at most 64 bytes).",
                          args[1]);
                return -EINVAL;
        }
        log_error("record takes \"start NAME\" or \"stop\"; see --help.");
        return -EINVAL;
}

static int verb_record(sd_bus *bus, char **args) {
        if (streq(args[0], "stop"))
                return call(bus, "record stop", "RecordStop", NULL, "");
        return call(bus, "record start", "RecordStart", NULL, "s", args[1]);
}

/* A method returning one string, printed as it is. */
static int print_text_reply(sd_bus_message *reply, const char *what) {
        const char *text;
        int r;

        r = sd_bus_message_read(reply, "s", &text);
        if (r < 0) {
                log_error_errno(r, "%s: cgbalanced sent an unreadable answer: %m", what);
                return EXIT_REFUSED;
        }
        (void) put_safe(stdout, text, "\n\t");
        if (text[0] && text[strlen(text) - 1] != '\n')
                fputc('\n', stdout);
        return EXIT_OK;
}

static int parse_pid(const char *s, uint32_t *ret) {
        unsigned long v;
        char *end;

        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno != 0 || end == s || *end != '\0' || s[0] < '0' || s[0] > '9' || v == 0 ||
            v > INT_MAX)
                return -EINVAL;
        *ret = (uint32_t) v;
        return 0;
}

static int check_explain(char **args) {
        uint32_t pid;

        if (parse_pid(args[0], &pid) < 0) {
                log_error("explain: \"%s\" is not a PID; see --help.", args[0]);
                return -EINVAL;
        }
        return 0;
}

static int verb_explain(sd_bus *bus, char **args) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        uint32_t pid = 0;
        int r;

        (void) parse_pid(args[0], &pid); /* check_explain() accepted it */
        r = call(bus, "explain", "Explain", &reply, "u", pid);
        return r == EXIT_OK ? print_text_reply(reply, "explain") : r;
}

static int verb_dump(sd_bus *bus, char **args) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        (void) args;
        r = call(bus, "dump", "Dump", &reply, "");
        return r == EXIT_OK ? print_text_reply(reply, "dump") : r;
}

static int check_metrics(char **args) {
        if (!args[0] || metrics_format_from_string(args[0]) >= 0)
                return 0;
        log_error("metrics: no format \"%s\": prometheus (the default) or openmetrics.", args[0]);
        return -EINVAL;
}

static int verb_metrics(sd_bus *bus, char **args) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = call(bus, "metrics", "Metrics", &reply, "s", args[0] ? args[0] : "prometheus");
        return r == EXIT_OK ? print_text_reply(reply, "metrics") : r;
}

/* ---- monitor */

static void print_line(const char *format, ...) _printf_(1, 2);
static void print_line(const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        (void) vprintf(format, ap);
        va_end(ap);
        (void) fflush(stdout); /* one line as it comes, even into a pipe */
}

static int print_task_moved(sd_bus_message *m) {
        _cleanup_free_ char *from = NULL, *to = NULL, *why = NULL;
        const char *a, *b, *reason;
        uint32_t pid;
        int r;

        r = sd_bus_message_read(m, "usss", &pid, &a, &b, &reason);
        if (r < 0)
                return r;
        from = escape(a);
        to = escape(b);
        why = escape(reason);
        if (!from || !to || !why)
                return -ENOMEM;
        print_line("TaskMoved pid %" PRIu32 " %s -> %s: %s\n", pid, from, to, why);
        return 0;
}

static int print_weight_changed(sd_bus_message *m) {
        _cleanup_free_ char *path = NULL, *why = NULL;
        const char *cgroup, *reason;
        uint64_t old_weight, new_weight;
        int r;

        r = sd_bus_message_read(m, "stts", &cgroup, &old_weight, &new_weight, &reason);
        if (r < 0)
                return r;
        path = escape(cgroup);
        why = escape(reason);
        if (!path || !why)
                return -ENOMEM;
        print_line("WeightChanged %s %" PRIu64 " -> %" PRIu64 ": %s\n", path, old_weight,
                   new_weight, why);
        return 0;
}

static int print_lever_changed(sd_bus_message *m) {
        _cleanup_free_ char *path = NULL, *name = NULL, *for_path = NULL, *why = NULL;
        const char *cgroup, *lever, *for_cgroup, *reason;
        uint64_t old_value, new_value;
        int r;

        r = sd_bus_message_read(m, "ssttss", &cgroup, &lever, &old_value, &new_value, &for_cgroup,
                                &reason);
        if (r < 0)
                return r;
        path = escape(cgroup);
        name = escape(lever);
        for_path = escape(for_cgroup);
        why = escape(reason);
        if (!path || !name || !for_path || !why)
                return -ENOMEM;
        print_line("LeverChanged %s %s %" PRIu64 " -> %" PRIu64 "%s%s: %s\n", path, name, old_value,
                   new_value, for_path[0] ? " for " : "", for_path, why);
        return 0;
}

static int print_reloaded(sd_bus_message *m) {
        _cleanup_free_ char *text = NULL;
        const char *message;
        int ok, r;

        r = sd_bus_message_read(m, "bs", &ok, &message);
        if (r < 0)
                return r;
        text = escape(message);
        if (!text)
                return -ENOMEM;
        print_line("Reloaded %s%s%s\n", ok ? "ok" : "failed", text[0] ? ": " : "", text);
        return 0;
}

static int print_manager_signal(sd_bus_message *m, const char *member) {
        if (streq(member, "TaskMoved"))
                return print_task_moved(m);
        if (streq(member, "WeightChanged"))
                return print_weight_changed(m);
        if (streq(member, "LeverChanged"))
                return print_lever_changed(m);
        if (streq(member, "Reloaded"))
                return print_reloaded(m);
        return 0; /* PropertiesChanged, and signals of a newer daemon */
}

static int on_manager_signal(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *member = strna(sd_bus_message_get_member(m));
        int r;

        (void) userdata;
        (void) error;
        r = print_manager_signal(m, member);
        if (r < 0)
                log_warning_errno(r, "Failed to read the %s signal, ignoring: %m", member);
        return 0;
}

static int on_name_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *name, *old_owner, *new_owner;

        (void) userdata;
        (void) error;
        if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0)
                return 0;
        if (old_owner[0])
                print_line("cgbalanced went away\n");
        if (new_owner[0])
                print_line("cgbalanced appeared (%s)\n", new_owner);
        return 0;
}

/* userdata: the event loop (closing the bus has detached it from the bus already) */
static int on_disconnected(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        char desc[256];

        (void) m;
        (void) error;
        log_error("lost the connection to %s", bus_description(desc, sizeof desc));
        return sd_event_exit(userdata, EXIT_NOT_RUNNING);
}

static int on_stop_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        (void) si;
        (void) userdata;
        return sd_event_exit(sd_event_source_get_event(s), EXIT_OK);
}

/* Returns the exit status. */
static int monitor_subscribe(sd_bus *bus, sd_event *event) {
        int r;

        r = sd_bus_match_signal(bus, NULL, CGB_BUS_NAME, CGB_BUS_PATH, CGB_BUS_INTERFACE, NULL,
                                on_manager_signal, NULL);
        if (r >= 0)
                r = sd_bus_add_match(bus, NULL,
                                     "type='signal',sender='org.freedesktop.DBus',"
                                     "path='/org/freedesktop/DBus',"
                                     "interface='org.freedesktop.DBus',"
                                     "member='NameOwnerChanged',arg0='" CGB_BUS_NAME "'",
                                     on_name_owner_changed, NULL);
        if (r >= 0)
                r = sd_bus_match_signal(bus, NULL, NULL, "/org/freedesktop/DBus/Local",
                                        "org.freedesktop.DBus.Local", "Disconnected",
                                        on_disconnected, event);
        if (r < 0) {
                sd_bus_error e = SD_BUS_ERROR_NULL;

                return report_error("monitor", &e, r);
        }
        return EXIT_OK;
}

/* After subscribing, so nothing between this and the first signal is missed. */
static int monitor_announce(sd_bus *bus) {
        char desc[256];
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *owner;
        int r;

        r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                               "org.freedesktop.DBus", "GetNameOwner", &e, &reply, "s",
                               CGB_BUS_NAME);
        if (r < 0 && sd_bus_error_has_names(&e, SD_BUS_ERROR_NAME_HAS_NO_OWNER)) {
                fprintf(stderr, "Monitoring %s: cgbalanced is not running yet. Ctrl-C stops.\n",
                        bus_description(desc, sizeof desc));
                return EXIT_OK;
        }
        if (r < 0)
                return report_error("monitor", &e, r);
        r = sd_bus_message_read(reply, "s", &owner);
        if (r < 0)
                owner = "?";
        fprintf(stderr, "Monitoring cgbalanced (%s) on %s. Ctrl-C stops.\n", owner,
                bus_description(desc, sizeof desc));
        return EXIT_OK;
}

static int verb_monitor(sd_bus *bus, char **args) {
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        sigset_t mask;
        int r;

        (void) args;
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        (void) sigprocmask(SIG_BLOCK, &mask, NULL); /* sd-event takes them through a signalfd */
        r = sd_event_default(&event);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGINT, on_stop_signal, NULL);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGTERM, on_stop_signal, NULL);
        if (r >= 0)
                r = sd_bus_attach_event(bus, event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0) {
                log_error_errno(r, "monitor: cannot set up the event loop: %m");
                return EXIT_REFUSED;
        }
        r = monitor_subscribe(bus, event);
        if (r == EXIT_OK)
                r = monitor_announce(bus);
        if (r != EXIT_OK)
                return r;
        r = sd_event_loop(event);
        if (r < 0) {
                log_error_errno(r, "monitor: the event loop failed: %m");
                return EXIT_REFUSED;
        }
        return r;
}

/* ---- the command line */

typedef struct Verb {
        const char *name;
        unsigned n_args;
        unsigned n_args_max; /* 0: n_args exactly */
        int (*check)(char **args); /* before connecting: -EINVAL for a usage error, said why */
        int (*run)(sd_bus *bus, char **args);
} Verb;

static const Verb verbs[] = {
        { "status", 0, 0, NULL, verb_status },
        { "reload", 0, 0, NULL, verb_reload },
        { "pause", 0, 0, NULL, verb_pause },
        { "resume", 0, 0, NULL, verb_resume },
        { "rebalance", 0, 0, NULL, verb_rebalance },
        { "set", 2, 0, NULL, verb_set },
        { "explain", 1, 0, check_explain, verb_explain },
        { "dump", 0, 0, NULL, verb_dump },
        { "metrics", 0, 1, check_metrics, verb_metrics },
        { "monitor", 0, 0, NULL, verb_monitor },
        { "record", 1, 2, check_record, verb_record },
};

static void help(void) {
        printf("Usage: cgbalancectl [OPTIONS] [COMMAND [ARGS]]\n"
               "\n"
               "Shows and controls cgbalanced through its D-Bus API (" CGB_BUS_NAME ").\n"
               "\n"
               "Commands:\n"
               "  status          Version, state, nodes, CPUs, managed cgroups and tasks,\n"
               "                  counters and recent actions (the default command).\n"
               "  reload          Re-read the configuration; on an error the old one stays and\n"
               "                  the error names file and line.\n"
               "  pause           Keep sampling but change nothing.\n"
               "  resume          Act again after pause.\n"
               "  rebalance       A tick now, balancing nodes without waiting.\n"
               "  set KEY VALUE   Set a tunable (\"section.key\") until the next reload.\n"
               "  explain PID     Why the task is where it is, and what was last done to it.\n"
               "  record start NAME | stop\n"
               "                  Record every tick to NAME in [record] directory, or stop;\n"
               "                  replay with cgbalanced --replay (cgbalance-record(5)).\n"
               "  dump            The last snapshot and plan, as cgbalanced --once prints them.\n"
               "  metrics [FORMAT]\n"
               "                  The daemon's metrics for Prometheus: FORMAT prometheus (text\n"
               "                  0.0.4, the default) or openmetrics (OpenMetrics 1.0).\n"
               "  monitor         Print moves, weight and lever changes and reloads as they\n"
               "                  happen, until interrupted.\n"
               "\n"
               "Options:\n"
               "     --bus=ADDRESS  Talk to the daemon on this D-Bus address (default: the\n"
               "                    system bus).\n"
               "  -j --json         status: print the properties as JSON.\n"
               "  -v --verbose      status: also list the managed tasks and the configuration.\n"
               "  -h --help         Show this help.\n"
               "     --version      Show the version.\n"
               "\n"
               "Exit status:\n"
               "  0  success\n"
               "  1  the daemon refused or failed the request (bad configuration, invalid\n"
               "     argument, no such task)\n"
               "  2  usage error\n"
               "  3  cgbalanced is not running, or the bus cannot be reached\n"
               "  4  permission denied (changes need root)\n"
               "\n"
               "See cgbalancectl(1) and cgbalanced(8).\n");
}

/* Returns 1 to go on, 0 to exit successfully, or -EINVAL for a usage error. */
static int parse_argv(int argc, char *argv[]) {
        enum { ARG_BUS = 0x100, ARG_VERSION };
        static const struct option options[] = {
                { "bus", required_argument, NULL, ARG_BUS },   { "json", no_argument, NULL, 'j' },
                { "verbose", no_argument, NULL, 'v' },         { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION }, {},
        };
        int c;

        while ((c = getopt_long(argc, argv, "jvh", options, NULL)) >= 0) {
                switch (c) {
                case ARG_BUS: arg_bus = optarg; break;
                case 'j': arg_json = true; break;
                case 'v': arg_verbose = true; break;
                case 'h': help(); return 0;
                case ARG_VERSION: puts("cgbalancectl " CGBALANCE_VERSION); return 0;
                default: return -EINVAL; /* getopt said why */
                }
        }
        return 1;
}

/* The verb named by the arguments left after the options; NULL after saying why. */
static const Verb *find_verb(int argc, char *argv[]) {
        const char *name = optind < argc ? argv[optind] : "status";
        unsigned n_args = optind < argc ? (unsigned) (argc - optind - 1) : 0;

        for (size_t i = 0; i < ELEMENTSOF(verbs); i++) {
                if (!streq(verbs[i].name, name))
                        continue;
                if (n_args < verbs[i].n_args ||
                    n_args > MAX(verbs[i].n_args, verbs[i].n_args_max)) {
                        if (verbs[i].n_args_max)
                                log_error("%s takes %u to %u arguments, not %u; see --help.", name,
                                          verbs[i].n_args, verbs[i].n_args_max, n_args);
                        else
                                log_error("%s takes %u argument%s, not %u; see --help.", name,
                                          verbs[i].n_args, verbs[i].n_args == 1 ? "" : "s", n_args);
                        return NULL;
                }
                if ((arg_json || arg_verbose) && verbs[i].run != verb_status) {
                        log_error("--json and --verbose only apply to status.");
                        return NULL;
                }
                return &verbs[i];
        }
        log_error("Unknown command \"%s\"; see --help.", name);
        return NULL;
}

int main(int argc, char *argv[]) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        const Verb *verb;
        char **args;
        int r;

        log_set_ident("cgbalancectl");
        log_set_target(LOG_TARGET_STDERR);
        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : EXIT_OK;
        verb = find_verb(argc, argv);
        if (!verb)
                return EXIT_USAGE;
        args = optind < argc ? argv + optind + 1 : argv + argc;
        if (verb->check && verb->check(args) < 0)
                return EXIT_USAGE;

        r = bus_connect(&bus);
        if (r != EXIT_OK)
                return r;
        return verb->run(bus, args);
}
