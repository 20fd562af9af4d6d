/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus.h"

#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <systemd/sd-bus.h>

#include "bus-api.h"
#include "config.h"
#include "cpumask.h"
#include "log.h"
#include "manager.h"
#include "metrics.h"
#include "policy.h"
#include "topology.h"
#include "tunables.h"
#include "utf8.h"

/* A lost connection that had worked is retried soon (the bus daemon restarted); one that never
 * got as far as the name waits the full BUS_RETRY_USEC, so a refusing bus is not hammered. */
#define BUS_RECONNECT_USEC (1000000ULL)
/* From the socket's appearance to the attempt: the bus daemon listen()s just after its bind(). */
#define BUS_SOCKET_SETTLE_USEC (100000ULL)
#define BUS_SYSTEM_DEFAULT_ADDRESS "unix:path=/run/dbus/system_bus_socket"
/* "section.key": two names and the dot. */
#define BUS_KEY_MAX (2 * CONFIG_NAME_MAX + 1)
#define UID_INVALID ((uid_t) -1)

struct Bus {
        Manager *manager;
        const Metrics *metrics;
        sd_event *event;
        char *address; /* NULL: the system bus */
        sd_bus *bus; /* NULL while unavailable */
        sd_event_source *retry;
        sd_event_source *watch; /* the socket's directory, NULL if it cannot be watched */
        char *socket_name; /* the socket's name in that directory */
        bool name_acquired;
        bool warned; /* this outage has been logged */
        char warned_group[64]; /* a missing control_group already logged */
};

/* ---- strings from the outside world: D-Bus carries only valid UTF-8 */

/* s itself when clean, else an escaped copy kept in *buf (caller frees). NULL on ENOMEM.
 * comms, cgroup paths and config values come from others and need not be UTF-8. */
static const char *clean(const char *s, bool keep_lines, char **buf) {
        return utf8_clean(s, keep_lines, buf);
}

/* ---- access */

static const char *sender_of(sd_bus_message *msg) {
        const char *s = sd_bus_message_get_sender(msg);

        return s ? s : "?";
}

/* The gid of the group name; -ENOENT if there is none. */
static int group_gid(const char *name, gid_t *ret) {
        struct group grp, *res = NULL;
        size_t size = 1024;

        for (;;) {
                _cleanup_free_ char *buf = malloc(size);
                int r;

                if (!buf)
                        return -ENOMEM;
                r = getgrnam_r(name, &grp, buf, size, &res);
                if (r == ERANGE && size < 1024 * 1024) {
                        size *= 2;
                        continue;
                }
                if (r != 0)
                        return -r;
                if (!res)
                        return -ENOENT;
                *ret = grp.gr_gid;
                return 0;
        }
}

/* The groups sd-bus knows of the caller, only those that were not read from /proc afterwards
 * (racy: the pid may belong to another process by now). */
static bool creds_in_group(sd_bus_creds *creds, gid_t gid) {
        uint64_t augmented = sd_bus_creds_get_augmented_mask(creds);
        const gid_t *gids;
        gid_t egid;
        int n;

        if (!(augmented & SD_BUS_CREDS_EGID) && sd_bus_creds_get_egid(creds, &egid) >= 0 &&
            egid == gid)
                return true;
        if (augmented & SD_BUS_CREDS_SUPPLEMENTARY_GIDS)
                return false;
        n = sd_bus_creds_get_supplementary_gids(creds, &gids);
        for (int i = 0; i < n; i++)
                if (gids[i] == gid)
                        return true;
        return false;
}

/*
 * libsystemd 252 does not read "UnixGroupIDs" of GetConnectionCredentials, so ask the bus daemon
 * directly: it recorded the caller's groups when it connected (SO_PEERGROUPS and SO_PEERCRED's
 * gid), which is what an access check may rely on. >0 member, 0 not, <0 unknown.
 */
static int bus_sender_in_group(sd_bus_message *msg, gid_t gid) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        const char *sender = sd_bus_message_get_sender(msg), *key;
        int r;

        if (!sender)
                return -ENODATA;
        r = sd_bus_call_method(sd_bus_message_get_bus(msg), "org.freedesktop.DBus",
                               "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "GetConnectionCredentials", &error, &reply, "s", sender);
        sd_bus_error_free(&error);
        if (r < 0)
                return r;
        r = sd_bus_message_enter_container(reply, 'a', "{sv}");
        while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                r = sd_bus_message_read(reply, "s", &key);
                if (r >= 0 && streq(key, "UnixGroupIDs")) {
                        const void *array = NULL;
                        const uint32_t *gids;
                        size_t size = 0;

                        r = sd_bus_message_enter_container(reply, 'v', "au");
                        if (r >= 0)
                                r = sd_bus_message_read_array(reply, 'u', &array, &size);
                        gids = array;
                        for (size_t i = 0; r >= 0 && i < size / sizeof *gids; i++)
                                if (gids[i] == gid)
                                        return 1;
                        return r < 0 ? r : 0;
                }
                if (r >= 0)
                        r = sd_bus_message_skip(reply, "v");
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
        }
        return r < 0 ? r : -ENODATA;
}

/* Whether the caller is in [bus] control_group, by what the bus recorded. Fails closed. */
static bool bus_caller_in_control_group(Bus *b, sd_bus_message *msg, sd_bus_creds *creds) {
        const char *name = manager_get_tunables(b->manager)->control_group;
        gid_t gid = (gid_t) -1;
        int r;

        if (!name || !name[0])
                return false;
        /* Looked up at call time, so a group created after the start counts. */
        r = group_gid(name, &gid);
        if (r < 0) {
                if (!streq(b->warned_group, name)) {
                        log_warning_errno(r,
                                          "control_group %s cannot be resolved, only root may "
                                          "change things over D-Bus: %m",
                                          name);
                        (void) snprintf(b->warned_group, sizeof b->warned_group, "%s", name);
                }
                return false;
        }
        if (creds_in_group(creds, gid))
                return true;
        r = bus_sender_in_group(msg, gid);
        if (r < 0)
                log_debug_errno(r, "Failed to get the groups of %s, refusing: %m", sender_of(msg));
        return r > 0;
}

/* For the methods that change things: root, or a member of control_group. The credentials are
 * those the bus daemon recorded at connect time, never SD_BUS_CREDS_AUGMENT's /proc reads. */
static int bus_check_privileged(Bus *b, sd_bus_message *msg, sd_bus_error *error) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        const char *member = sd_bus_message_get_member(msg);
        uid_t euid = UID_INVALID;
        int r;

        r = sd_bus_query_sender_creds(
                msg, SD_BUS_CREDS_EUID | SD_BUS_CREDS_EGID | SD_BUS_CREDS_SUPPLEMENTARY_GIDS,
                &creds);
        if (r < 0) {
                log_debug_errno(r, "Failed to get the credentials of %s, refusing: %m",
                                sender_of(msg));
                return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                         "Cannot tell who is calling %s(); refused.", member);
        }
        if (sd_bus_creds_get_augmented_mask(creds) & SD_BUS_CREDS_EUID ||
            sd_bus_creds_get_euid(creds, &euid) < 0)
                euid = UID_INVALID;
        if (euid == 0 || bus_caller_in_control_group(b, msg, creds)) {
                log_info("%s() called by UID %" PRIu32 " (%s).", member, (uint32_t) euid,
                         sender_of(msg));
                return 0;
        }
        log_debug("Refused %s() to UID %" PRIu32 " (%s).", member, (uint32_t) euid, sender_of(msg));
        return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                 "Only root or members of [bus] control_group may call %s().",
                                 member);
}

/* ---- properties */

static int property_get_version(sd_bus *bus, const char *path, const char *interface,
                                const char *property, sd_bus_message *reply, void *userdata,
                                sd_bus_error *error) {
        (void) bus, (void) path, (void) interface, (void) property, (void) userdata, (void) error;
        return sd_bus_message_append(reply, "s", CGBALANCE_VERSION);
}

static int property_get_recording(sd_bus *bus, const char *path, const char *interface,
                                  const char *property, sd_bus_message *reply, void *userdata,
                                  sd_bus_error *error) {
        const Bus *b = userdata;
        const char *file = manager_record_path(b->manager);
        _cleanup_free_ char *buf = NULL;
        const char *clean_file;

        (void) bus, (void) path, (void) interface, (void) property, (void) error;
        clean_file = clean(file ? file : "", false, &buf);
        return sd_bus_message_append(reply, "s", clean_file ? clean_file : "");
}

static int property_get_state(sd_bus *bus, const char *path, const char *interface,
                              const char *property, sd_bus_message *reply, void *userdata,
                              sd_bus_error *error) {
        Bus *b = userdata;

        (void) bus, (void) path, (void) interface, (void) property, (void) error;
        return sd_bus_message_append(reply, "s",
                                     manager_state_to_string(manager_get_state(b->manager)));
}

static int property_get_cgroup_mode(sd_bus *bus, const char *path, const char *interface,
                                    const char *property, sd_bus_message *reply, void *userdata,
                                    sd_bus_error *error) {
        Bus *b = userdata;
        const char *mode = cgroup_mode_to_string(manager_get_layout(b->manager)->mode);

        (void) bus, (void) path, (void) interface, (void) property, (void) error;
        return sd_bus_message_append(reply, "s", mode ? mode : "none");
}

/* The last tick's snapshot, if it was taken on the machine model in force (a hotplug rebuild
 * in between would make its CPU numbers and the node loads' indexes mean something else). */
static const PolicySnapshot *bus_snapshot(const Bus *b) {
        return manager_get_current_snapshot(b->manager);
}

static uint32_t clamp_u32(uint64_t v) {
        return v > UINT32_MAX ? UINT32_MAX : (uint32_t) v;
}

static int append_node(sd_bus_message *reply, const Topology *topo, unsigned idx, uint64_t load,
                       uint32_t pressure, uint32_t runnable) {
        _cleanup_free_ char *cpus = NULL;
        int id = topology_node_id(topo, idx);
        const CpuMask *mask;
        int r;

        if (id < 0)
                return id;
        mask = topology_node_cpus(topo, (unsigned) id);
        r = mask ? cpumask_format(mask, &cpus) : -ENOENT;
        if (r < 0)
                return r;
        return sd_bus_message_append(reply, "(usuuuu)", (uint32_t) id, cpus,
                                     topology_node_capacity(topo, (unsigned) id), clamp_u32(load),
                                     pressure, runnable);
}

static int property_get_nodes(sd_bus *bus, const char *path, const char *interface,
                              const char *property, sd_bus_message *reply, void *userdata,
                              sd_bus_error *error) {
        Bus *b = userdata;
        const Topology *topo = manager_get_topology(b->manager);
        const PolicySnapshot *snap = bus_snapshot(b);
        const uint64_t *loads = snap ? manager_get_node_loads(b->manager) : NULL;
        unsigned n = topo ? topology_n_nodes(topo) : 0;
        _cleanup_free_ uint32_t *pressure = calloc(n + 1, sizeof *pressure);
        _cleanup_free_ uint32_t *runnable = calloc(n + 1, sizeof *runnable);
        int r;

        (void) bus, (void) path, (void) interface, (void) property, (void) error;
        if (!pressure || !runnable)
                return -ENOMEM;
        if (snap)
                manager_node_task_stats(b->manager, snap, pressure, runnable);
        r = sd_bus_message_open_container(reply, 'a', "(usuuuu)");
        for (unsigned i = 0; r >= 0 && i < n; i++)
                r = append_node(reply, topo, i, loads ? loads[i] : 0, pressure[i], runnable[i]);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

static int property_get_cpus(sd_bus *bus, const char *path, const char *interface,
                             const char *property, sd_bus_message *reply, void *userdata,
                             sd_bus_error *error) {
        Bus *b = userdata;
        const Topology *topo = manager_get_topology(b->manager);
        const PolicySnapshot *snap = bus_snapshot(b);
        int r;

        (void) bus, (void) path, (void) interface, (void) property, (void) error;
        r = sd_bus_message_open_container(reply, 'a', "(uu)");
        if (r < 0 || !topo)
                return r < 0 ? r : sd_bus_message_close_container(reply);
        CPUMASK_FOREACH(cpu, topology_online_cpus(topo)) {
                uint32_t util =
                        snap && (unsigned) cpu < snap->n_cpus ? snap->cpus[cpu].util_permyriad : 0;

                r = sd_bus_message_append(reply, "(uu)", (uint32_t) cpu, util);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

static int append_cgroup(sd_bus_message *reply, const PolicyCgroup *c) {
        _cleanup_free_ char *buf = NULL;
        const char *path = clean(c->path, false, &buf);

        if (!path)
                return -ENOMEM;
        return sd_bus_message_append(
                reply, "(stttb)", path, (uint64_t) c->weight, (uint64_t) c->base_weight,
                c->has_pressure ? (uint64_t) c->pressure_permyriad : UINT64_MAX,
                (int) c->protected);
}

static int property_get_cgroups(sd_bus *bus, const char *path, const char *interface,
                                const char *property, sd_bus_message *reply, void *userdata,
                                sd_bus_error *error) {
        Bus *b = userdata;
        const PolicySnapshot *snap = bus_snapshot(b);
        int r;

        (void) bus, (void) path, (void) interface, (void) property, (void) error;
        r = sd_bus_message_open_container(reply, 'a', "(stttb)");
        for (size_t i = 0; r >= 0 && snap && i < snap->n_cgroups; i++)
                r = append_cgroup(reply, &snap->cgroups[i]);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

static int append_task(sd_bus_message *reply, const Topology *topo, const PolicySnapshot *snap,
                       const PolicyTask *t) {
        _cleanup_free_ char *comm_buf = NULL, *cgroup_buf = NULL, *allowed = NULL;
        const char *comm = clean(t->comm, false, &comm_buf);
        const char *cgroup = clean(t->cgroup < snap->n_cgroups ? snap->cgroups[t->cgroup].path : "",
                                   false, &cgroup_buf);
        int node = t->cpu >= 0 ? topology_cpu_node(topo, (unsigned) t->cpu) : -1;

        if (!comm || !cgroup)
                return -ENOMEM;
        if (t->allowed && cpumask_format(t->allowed, &allowed) < 0)
                return -ENOMEM;
        return sd_bus_message_append(reply, "(ussiiuusbb)", (uint32_t) t->pid, comm, cgroup,
                                     (int32_t) t->cpu, (int32_t) (node >= 0 ? node : -1),
                                     t->util_permyriad, t->demand_permyriad, allowed ? allowed : "",
                                     (int) t->ours, (int) t->foreign);
}

static int property_get_tasks(sd_bus *bus, const char *path, const char *interface,
                              const char *property, sd_bus_message *reply, void *userdata,
                              sd_bus_error *error) {
        Bus *b = userdata;
        const PolicySnapshot *snap = bus_snapshot(b);
        const Topology *topo = manager_get_topology(b->manager);
        int r;

        (void) bus, (void) path, (void) interface, (void) property, (void) error;
        r = sd_bus_message_open_container(reply, 'a', "(ussiiuusbb)");
        for (size_t i = 0; r >= 0 && snap && i < snap->n_tasks; i++)
                r = append_task(reply, topo, snap, &snap->tasks[i]);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

static int property_get_counters(sd_bus *bus, const char *path, const char *interface,
                                 const char *property, sd_bus_message *reply, void *userdata,
                                 sd_bus_error *error) {
        Bus *b = userdata;
        const ActuatorCounters *c = manager_get_counters(b->manager);
        const ActuatorCounters zero = { 0 };

        (void) bus, (void) path, (void) interface, (void) property, (void) error;
        if (!c)
                c = &zero;
        return sd_bus_message_append(
                reply, "a{st}", 11, "ticks", manager_get_ticks(b->manager), "moves", c->moves,
                "cross_node_moves", c->cross_node_moves, "weight_changes", c->weight_changes,
                "escalations", c->escalations, "tasks_gone", c->tasks_gone, "masks_refused",
                c->masks_refused, "tasks_banned", c->tasks_banned, "cgroups_gone", c->cgroups_gone,
                "restores", c->restores, "errors", c->errors);
}

static int append_config_key(sd_bus_message *reply, const ConfigKey *key, const Tunables *t) {
        _cleanup_free_ char *name = NULL, *value = NULL, *buf = NULL;
        const char *v;
        int r;

        if (asprintf(&name, "%s.%s", key->section, key->name) < 0)
                return -ENOMEM;
        r = config_format_value(key, t, &value);
        if (r < 0)
                return r;
        v = clean(value, false, &buf);
        if (!v)
                return -ENOMEM;
        return sd_bus_message_append(reply, "{ss}", name, v);
}

static int property_get_config(sd_bus *bus, const char *path, const char *interface,
                               const char *property, sd_bus_message *reply, void *userdata,
                               sd_bus_error *error) {
        Bus *b = userdata;
        const Tunables *t = manager_get_tunables(b->manager);
        int r;

        (void) bus, (void) path, (void) interface, (void) property, (void) error;
        r = sd_bus_message_open_container(reply, 'a', "{ss}");
        for (size_t i = 0; r >= 0 && i < tunables_schema.n_keys; i++)
                r = append_config_key(reply, &tunables_schema.keys[i], t);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

static int property_get_last_tick(sd_bus *bus, const char *path, const char *interface,
                                  const char *property, sd_bus_message *reply, void *userdata,
                                  sd_bus_error *error) {
        Bus *b = userdata;

        (void) bus, (void) path, (void) interface, (void) property, (void) error;
        return sd_bus_message_append(reply, "t", manager_get_last_tick_realtime_usec(b->manager));
}

static int property_get_recent(sd_bus *bus, const char *path, const char *interface,
                               const char *property, sd_bus_message *reply, void *userdata,
                               sd_bus_error *error) {
        Bus *b = userdata;
        const ManagerAction *a;
        int r;

        (void) bus, (void) path, (void) interface, (void) property, (void) error;
        r = sd_bus_message_open_container(reply, 'a', "(tss)");
        for (size_t i = 0; r >= 0 && (a = manager_get_recent(b->manager, i)); i++) {
                _cleanup_free_ char *sbuf = NULL, *tbuf = NULL;
                const char *subject = clean(a->subject, false, &sbuf);
                const char *text = clean(a->text, false, &tbuf);

                r = subject && text
                            ? sd_bus_message_append(reply, "(tss)", a->realtime_usec, subject, text)
                            : -ENOMEM;
        }
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

static int property_get_escalations(sd_bus *bus, const char *path, const char *interface,
                                    const char *property, sd_bus_message *reply, void *userdata,
                                    sd_bus_error *error) {
        Bus *b = userdata;
        const ManagerEscalation *e;
        size_t n = manager_get_escalations(b->manager, &e);
        int r;

        (void) bus, (void) path, (void) interface, (void) property, (void) error;
        r = sd_bus_message_open_container(reply, 'a', "(sbusss)");
        for (size_t i = 0; r >= 0 && i < n; i++) {
                _cleanup_free_ char *pbuf = NULL, *fbuf = NULL, *rbuf = NULL;
                const char *p = clean(e[i].path, false, &pbuf);
                const char *f = clean(e[i].for_cgroup, false, &fbuf);
                const char *why = clean(e[i].reason, false, &rbuf);

                r = p && f && why
                            ? sd_bus_message_append(reply, "(sbusss)", p, (int) e[i].idle,
                                                    e[i].quota_permyriad, e[i].partition, f, why)
                            : -ENOMEM;
        }
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

/* ---- methods */

static void bus_emit_changed(Bus *b, const char *property, const char *other) {
        int r;

        if (!bus_is_connected(b))
                return;
        r = sd_bus_emit_properties_changed(b->bus, CGB_BUS_PATH, CGB_BUS_INTERFACE, property, other,
                                           NULL);
        if (r < 0)
                log_debug_errno(r, "Failed to emit PropertiesChanged for %s: %m", property);
}

/* An error whose message came from elsewhere (a file name may hold any byte). */
static int bus_error_set_clean(sd_bus_error *error, const char *name, const char *message) {
        _cleanup_free_ char *buf = NULL;
        const char *m = clean(message, false, &buf);

        return sd_bus_error_set(error, name, m ? m : "Out of memory.");
}

static int method_reload(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_free_ char *why = NULL;
        Bus *b = userdata;
        int r;

        r = bus_check_privileged(b, msg, error);
        if (r < 0)
                return r;
        /* manager_reload() emits Reloaded(), for SIGHUP and for this call alike. */
        r = manager_reload(b->manager, &why);
        if (r < 0)
                return bus_error_set_clean(error, CGB_ERROR_CONFIG,
                                           why ? why : "The configuration is invalid.");
        return sd_bus_reply_method_return(msg, NULL);
}

static int method_pause_resume(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        int r;

        r = bus_check_privileged(b, msg, error);
        if (r < 0)
                return r;
        if (streq(sd_bus_message_get_member(msg), "Pause"))
                manager_pause(b->manager);
        else
                manager_resume(b->manager);
        bus_emit_changed(b, "State", NULL);
        return sd_bus_reply_method_return(msg, NULL);
}

static int method_record_start(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_free_ char *path = NULL;
        const char *name;
        Bus *b = userdata;
        int r;

        r = sd_bus_message_read(msg, "s", &name);
        if (r < 0)
                return r;
        r = bus_check_privileged(b, msg, error);
        if (r < 0)
                return r;
        /* A name in the record directory, nothing else: the caller chooses no path. */
        if (strlen(name) > 64 || !utf8_is_clean(name, false) || !tunables_record_name_ok(name))
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Invalid recording name (%zu bytes): a file name in the "
                                         "record directory expected (no '/', not . or .., at "
                                         "most 64 bytes).",
                                         strlen(name));
        if (asprintf(&path, "%s/%s", manager_get_tunables(b->manager)->record_directory, name) < 0)
                return -ENOMEM;
        r = manager_record_start(b->manager, path, /* fixed= */ true);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Failed to start recording to %s: %m",
                                               path);
        bus_emit_changed(b, "Recording", NULL);
        return sd_bus_reply_method_return(msg, NULL);
}

static int method_record_stop(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        int r;

        r = bus_check_privileged(b, msg, error);
        if (r < 0)
                return r;
        manager_record_stop(b->manager);
        bus_emit_changed(b, "Recording", NULL);
        return sd_bus_reply_method_return(msg, NULL);
}

static int method_rebalance_now(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        int r;

        r = bus_check_privileged(b, msg, error);
        if (r < 0)
                return r;
        r = manager_rebalance_now(b->manager);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Failed to rebalance: %m");
        return sd_bus_reply_method_return(msg, NULL);
}

/* A caller's string: not empty (unless empty_ok), at most max bytes, no control characters
 * (sd-bus has already checked it is UTF-8). */
static bool argument_is_valid(const char *s, size_t max, bool empty_ok) {
        size_t len = strlen(s);

        return (empty_ok || len > 0) && len <= max && utf8_is_clean(s, /* keep_lines= */ false);
}

static int method_set_tunable(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_free_ char *why = NULL;
        const char *key, *value;
        Bus *b = userdata;
        int r;

        r = sd_bus_message_read(msg, "ss", &key, &value);
        if (r < 0)
                return r;
        r = bus_check_privileged(b, msg, error);
        if (r < 0)
                return r;
        /* Never logged nor echoed raw: only their lengths until they pass. */
        if (!argument_is_valid(key, BUS_KEY_MAX, /* empty_ok= */ false))
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Invalid key (%zu bytes): 1 to %u printable characters "
                                         "expected.",
                                         strlen(key), BUS_KEY_MAX);
        if (!argument_is_valid(value, CONFIG_VALUE_MAX, /* empty_ok= */ true))
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Invalid value for %s (%zu bytes): at most %u printable "
                                         "characters expected.",
                                         key, strlen(value), CONFIG_VALUE_MAX);
        r = manager_set_tunable(b->manager, key, value, &why);
        if (r == -EINVAL || r == -ENOENT || r == -ENOTUNIQ || r == -ERANGE)
                return bus_error_set_clean(error, SD_BUS_ERROR_INVALID_ARGS,
                                           why ? why : "Unknown key or invalid value.");
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Failed to set %s: %m", key);
        bus_emit_changed(b, "Config", "State");
        return sd_bus_reply_method_return(msg, NULL);
}

static int method_explain(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_free_ char *text = NULL, *buf = NULL;
        Bus *b = userdata;
        const char *reply;
        uint32_t pid;
        int r;

        r = sd_bus_message_read(msg, "u", &pid);
        if (r < 0)
                return r;
        if (pid == 0 || pid > INT_MAX)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Invalid PID %" PRIu32 ".", pid);
        r = manager_explain(b->manager, (pid_t) pid, &text);
        if (r == -ESRCH)
                return sd_bus_error_setf(error, CGB_ERROR_NO_SUCH_TASK,
                                         "PID %" PRIu32 " is not a task cgbalanced manages.", pid);
        if (r == -EINVAL)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "PID %" PRIu32 " is a kernel thread.", pid);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Failed to explain PID %" PRIu32 ": %m",
                                               pid);
        reply = clean(text, /* keep_lines= */ true, &buf);
        if (!reply)
                return -ENOMEM;
        return sd_bus_reply_method_return(msg, "s", reply);
}

static int method_dump(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_free_ char *text = NULL, *buf = NULL;
        Bus *b = userdata;
        const char *reply;
        int r;

        r = manager_dump(b->manager, &text);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Failed to dump: %m");
        reply = clean(text, /* keep_lines= */ true, &buf);
        if (!reply)
                return -ENOMEM;
        return sd_bus_reply_method_return(msg, "s", reply);
}

static int method_metrics(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_free_ char *text = NULL;
        const char *name;
        MetricsFormat format;
        Bus *b = userdata;
        int r;

        r = sd_bus_message_read(msg, "s", &name);
        if (r < 0)
                return r;
        format = name[0] ? metrics_format_from_string(name) : METRICS_PROMETHEUS;
        if (format < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "No metrics format \"%.32s\": prometheus or openmetrics.",
                                         name);
        if (!b->metrics)
                return sd_bus_error_set(error, SD_BUS_ERROR_NOT_SUPPORTED, "No metrics here.");
        /* Label values are valid UTF-8 without control characters (lib/openmetrics.h). */
        r = metrics_render(b->metrics, format, &text);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Failed to render the metrics: %m");
        return sd_bus_reply_method_return(msg, "s", text);
}

#define PER_TICK SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE
#define PER_TICK_BIG SD_BUS_VTABLE_PROPERTY_EMITS_INVALIDATION

/* Methods are all SD_BUS_VTABLE_UNPRIVILEGED, else sd-bus demands CAP_SYS_ADMIN of callers;
 * the ones that change things check the caller themselves (bus_check_privileged()). */
static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Version", "s", property_get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("State", "s", property_get_state, 0, PER_TICK),
        SD_BUS_PROPERTY("CgroupMode", "s", property_get_cgroup_mode, 0,
                        SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Nodes", CGB_SIG_NODES, property_get_nodes, 0, PER_TICK_BIG),
        SD_BUS_PROPERTY("CPUs", CGB_SIG_CPUS, property_get_cpus, 0, PER_TICK_BIG),
        SD_BUS_PROPERTY("ManagedCgroups", CGB_SIG_CGROUPS, property_get_cgroups, 0, PER_TICK_BIG),
        SD_BUS_PROPERTY("ManagedTasks", CGB_SIG_TASKS, property_get_tasks, 0, PER_TICK_BIG),
        SD_BUS_PROPERTY("Counters", CGB_SIG_COUNTERS, property_get_counters, 0, PER_TICK),
        SD_BUS_PROPERTY("Config", CGB_SIG_CONFIG, property_get_config, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_INVALIDATION),
        SD_BUS_PROPERTY("LastTickUSec", "t", property_get_last_tick, 0, PER_TICK),
        SD_BUS_PROPERTY("Recording", "s", property_get_recording, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("RecentActions", CGB_SIG_RECENT, property_get_recent, 0, PER_TICK_BIG),
        SD_BUS_PROPERTY("Escalations", CGB_SIG_ESCALATIONS, property_get_escalations, 0,
                        PER_TICK_BIG),

        SD_BUS_METHOD("Reload", NULL, NULL, method_reload, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Pause", NULL, NULL, method_pause_resume, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Resume", NULL, NULL, method_pause_resume, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("RebalanceNow", NULL, NULL, method_rebalance_now, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("RecordStart", SD_BUS_ARGS("s", name), SD_BUS_NO_RESULT,
                                method_record_start, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("RecordStop", NULL, NULL, method_record_stop, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("SetTunable", SD_BUS_ARGS("s", key, "s", value), SD_BUS_NO_RESULT,
                                method_set_tunable, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Explain", SD_BUS_ARGS("u", pid), SD_BUS_RESULT("s", text),
                                method_explain, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Dump", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", text), method_dump,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Metrics", SD_BUS_ARGS("s", format), SD_BUS_RESULT("s", text),
                                method_metrics, SD_BUS_VTABLE_UNPRIVILEGED),

        SD_BUS_SIGNAL_WITH_ARGS("TaskMoved", SD_BUS_ARGS("u", pid, "s", from, "s", to, "s", reason),
                                0),
        SD_BUS_SIGNAL_WITH_ARGS(
                "WeightChanged",
                SD_BUS_ARGS("s", cgroup, "t", old_weight, "t", new_weight, "s", reason), 0),
        SD_BUS_SIGNAL_WITH_ARGS("LeverChanged",
                                SD_BUS_ARGS("s", cgroup, "s", lever, "t", old_value, "t", new_value,
                                            "s", for_cgroup, "s", reason),
                                0),
        SD_BUS_SIGNAL_WITH_ARGS("Reloaded", SD_BUS_ARGS("b", ok, "s", message), 0),
        SD_BUS_VTABLE_END,
};

/* ---- the connection */

static void bus_drop(Bus *b) {
        b->bus = sd_bus_flush_close_unref(b->bus);
        b->name_acquired = false;
}

static void bus_schedule_retry(Bus *b, uint64_t usec) {
        int r;

        r = sd_event_source_set_time_relative(b->retry, usec);
        if (r >= 0)
                r = sd_event_source_set_enabled(b->retry, SD_EVENT_ONESHOT);
        if (r < 0)
                log_warning_errno(r, "Failed to arm the D-Bus reconnection timer, going on "
                                     "without the bus: %m");
}

/* Once an outage: later attempts of the same outage are logged at debug. */
static void bus_log_unavailable(Bus *b, int error) {
        if (b->warned) {
                log_debug_errno(error, "D-Bus still unavailable: %m");
                return;
        }
        b->warned = true;
        if (b->address)
                log_warning_errno(error, "D-Bus bus %s unavailable, going on without it: %m",
                                  b->address);
        else
                log_warning_errno(error, "D-Bus system bus unavailable, going on without it: %m");
}

/* RequestName's answer: 1 primary owner, 4 already the owner; 3 (another owner, and we asked
 * not to queue) or an error (the policy refuses) leave us without the name. */
static int on_name_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        Bus *b = userdata;
        uint32_t ret = 0;

        (void) ret_error;
        if (!e && (sd_bus_message_read(reply, "u", &ret) < 0 || (ret != 1 && ret != 4))) {
                if (!b->warned)
                        log_warning("D-Bus name %s is owned by another process, going on "
                                    "without the bus.",
                                    CGB_BUS_NAME);
                b->warned = true;
                bus_schedule_retry(b, BUS_RETRY_USEC);
                return 0;
        }
        if (e) {
                /* As good as no bus; dropped from the timer, not from inside its dispatch. */
                if (!b->warned)
                        log_warning("Failed to acquire D-Bus name %s, going on without the bus: "
                                    "%s",
                                    CGB_BUS_NAME, e->message ? e->message : e->name);
                b->warned = true;
                bus_schedule_retry(b, BUS_RETRY_USEC);
                return 0;
        }
        b->name_acquired = true;
        b->warned = false;
        log_info("Acquired D-Bus name %s.", CGB_BUS_NAME);
        return 0;
}

static int on_disconnected(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        Bus *b = userdata;

        (void) msg, (void) ret_error;
        if (!b->warned)
                log_warning("Lost the D-Bus connection, reconnecting.");
        b->warned = true;
        bus_schedule_retry(b, b->name_acquired ? BUS_RECONNECT_USEC : BUS_RETRY_USEC);
        b->name_acquired = false;
        return 1;
}

static int bus_open(Bus *b, sd_bus **ret) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        if (!b->address) {
                /* Honours $DBUS_SYSTEM_BUS_ADDRESS. */
                r = sd_bus_open_system_with_description(&bus, "cgbalanced");
                if (r < 0)
                        return r;
        } else {
                r = sd_bus_new(&bus);
                if (r < 0)
                        return r;
                (void) sd_bus_set_description(bus, "cgbalanced");
                r = sd_bus_set_address(bus, b->address);
                if (r >= 0)
                        r = sd_bus_set_bus_client(bus, true);
                if (r >= 0)
                        r = sd_bus_start(bus);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(bus);
        return 0;
}

static int bus_connect(Bus *b) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        r = bus_open(b, &bus);
        if (r < 0)
                return r;
        r = sd_bus_set_exit_on_disconnect(bus, false);
        if (r >= 0)
                r = sd_bus_attach_event(bus, b->event, SD_EVENT_PRIORITY_NORMAL);
        if (r >= 0)
                r = sd_bus_match_signal(bus, NULL, "org.freedesktop.DBus.Local", NULL,
                                        "org.freedesktop.DBus.Local", "Disconnected",
                                        on_disconnected, b);
        if (r >= 0)
                r = sd_bus_add_object_vtable(bus, NULL, CGB_BUS_PATH, CGB_BUS_INTERFACE,
                                             manager_vtable, b);
        if (r >= 0)
                r = sd_bus_request_name_async(bus, NULL, CGB_BUS_NAME, 0, on_name_reply, b);
        if (r < 0)
                return r;
        b->bus = TAKE_PTR(bus);
        return 0;
}

static void bus_try_connect(Bus *b) {
        int r;

        bus_drop(b);
        r = bus_connect(b);
        if (r == -ENOMEM)
                log_error_errno(r, "Out of memory.");
        if (r < 0) {
                bus_log_unavailable(b, r);
                bus_schedule_retry(b, BUS_RETRY_USEC);
        }
}

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        (void) s, (void) usec;
        bus_try_connect(userdata);
        return 0;
}

static int hex_digit(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -EINVAL;
}

int bus_address_unix_path(const char *address, char **ret) {
        static const char prefix[] = "unix:path=";
        _cleanup_free_ char *path = NULL;
        size_t len, j = 0;

        if (!address || !ret)
                return -EINVAL;
        if (strncmp(address, prefix, strlen(prefix)) != 0)
                return -EINVAL;
        address += strlen(prefix);
        len = strcspn(address, ",;");
        path = malloc(len + 1);
        if (!path)
                return -ENOMEM;
        for (size_t i = 0; i < len; i++) {
                int hi, lo;

                if (address[i] != '%') {
                        path[j++] = address[i];
                        continue;
                }
                /* D-Bus escapes a byte of a value as %XX */
                hi = i + 2 < len ? hex_digit(address[i + 1]) : -EINVAL;
                lo = i + 2 < len ? hex_digit(address[i + 2]) : -EINVAL;
                if (hi < 0 || lo < 0)
                        return -EINVAL;
                path[j++] = (char) (hi << 4 | lo);
                i += 2;
        }
        path[j] = '\0';
        if (path[0] != '/' || strlen(path) != j || path[j - 1] == '/')
                return -EINVAL;
        *ret = TAKE_PTR(path);
        return 0;
}

/* The socket appeared: while a retry is waiting, try at once (just about). */
static int on_socket_dir(sd_event_source *s, const struct inotify_event *ev, void *userdata) {
        Bus *b = userdata;
        int enabled = SD_EVENT_OFF;

        (void) s;
        if (ev->len == 0 || !streq(ev->name, b->socket_name))
                return 0;
        if (sd_event_source_get_enabled(b->retry, &enabled) < 0 || enabled == SD_EVENT_OFF)
                return 0; /* connected, or connecting */
        log_debug("D-Bus socket %s appeared, connecting.", ev->name);
        bus_schedule_retry(b, BUS_SOCKET_SETTLE_USEC);
        return 0;
}

/* A bus at a unix:path= socket is joined when the socket appears, not up to BUS_RETRY_USEC
 * later: its directory is watched. Any failure leaves only the timer, silently. */
static void bus_watch_socket(Bus *b) {
        const char *address = b->address;
        _cleanup_free_ char *path = NULL, *dir = NULL;
        int r;

        if (!address)
                address = secure_getenv("DBUS_SYSTEM_BUS_ADDRESS") ?: BUS_SYSTEM_DEFAULT_ADDRESS;
        r = bus_address_unix_path(address, &path);
        if (r < 0) {
                log_debug_errno(r, "D-Bus address %s is no unix:path= socket, not watched: %m",
                                address);
                return;
        }
        dir = strdup(path);
        b->socket_name = strdup(strrchr(path, '/') + 1);
        if (!dir || !b->socket_name)
                return;
        r = sd_event_add_inotify(b->event, &b->watch, dirname(dir), IN_CREATE | IN_MOVED_TO,
                                 on_socket_dir, b);
        if (r < 0)
                /* Not a failure: no /run/dbus yet is a host without a bus, and the timer retries.
                 */
                log_debug_errno(r, "Not watching %s for the D-Bus socket (%m); a timer retries.",
                                dir);
}

static void on_manager_event(const ManagerEvent *e, void *userdata);

int bus_new(Manager *m, const Metrics *metrics, sd_event *event, const char *address, Bus **ret) {
        _cleanup_(bus_freep) Bus *b = NULL;
        int r;

        b = calloc(1, sizeof *b);
        if (!b)
                return -ENOMEM;
        b->manager = m;
        b->metrics = metrics;
        b->event = sd_event_ref(event);
        if (address) {
                b->address = strdup(address);
                if (!b->address)
                        return -ENOMEM;
        }
        r = sd_event_add_time_relative(event, &b->retry, CLOCK_MONOTONIC, BUS_RETRY_USEC, 0,
                                       on_retry, b);
        if (r == -ENOMEM)
                return r;
        if (r < 0) /* without the timer, connecting is tried once */
                log_warning_errno(r, "Failed to create the D-Bus reconnection timer: %m");
        else
                (void) sd_event_source_set_enabled(b->retry, SD_EVENT_OFF);
        r = manager_add_observer(m, on_manager_event, b);
        if (r < 0)
                return r;
        bus_watch_socket(b);
        bus_try_connect(b);
        *ret = TAKE_PTR(b);
        return 0;
}

Bus *bus_free(Bus *b) {
        if (!b)
                return NULL;
        if (b->manager)
                manager_remove_observer(b->manager, on_manager_event, b);
        bus_drop(b); /* closing releases the name, without a call that could block */
        sd_event_source_disable_unref(b->retry);
        sd_event_source_disable_unref(b->watch);
        sd_event_unref(b->event);
        free(b->address);
        free(b->socket_name);
        free(b);
        return NULL;
}

bool bus_is_connected(const Bus *b) {
        return b && b->bus && b->name_acquired;
}

/* After each tick: PropertiesChanged for the properties that change per tick (at most once). */
static void bus_tick_done(Bus *b) {
        int r;

        if (!bus_is_connected(b))
                return;
        r = sd_bus_emit_properties_changed(
                b->bus, CGB_BUS_PATH, CGB_BUS_INTERFACE, "State", "Nodes", "CPUs", "ManagedCgroups",
                "ManagedTasks", "Counters", "LastTickUSec", "RecentActions", "Escalations", NULL);
        if (r < 0)
                log_debug_errno(r, "Failed to emit PropertiesChanged: %m");
}

static void bus_emit_task_moved(Bus *b, pid_t pid, int from_node, int to_node, const char *reason) {
        _cleanup_free_ char *buf = NULL;
        char from[32], to[32];
        const char *why;
        int r;

        if (!bus_is_connected(b))
                return;
        why = clean(reason, false, &buf);
        if (!why)
                return;
        (void) snprintf(from, sizeof from, "node %d", from_node);
        (void) snprintf(to, sizeof to, "node %d", to_node);
        r = sd_bus_emit_signal(b->bus, CGB_BUS_PATH, CGB_BUS_INTERFACE, "TaskMoved", "usss",
                               (uint32_t) pid, from, to, why);
        if (r < 0)
                log_debug_errno(r, "Failed to emit TaskMoved: %m");
}

static void bus_emit_weight_changed(Bus *b, const char *cgroup, uint64_t old_weight,
                                    uint64_t new_weight, const char *reason) {
        _cleanup_free_ char *cbuf = NULL, *rbuf = NULL;
        const char *path, *why;
        int r;

        if (!bus_is_connected(b))
                return;
        path = clean(cgroup, false, &cbuf);
        why = clean(reason, false, &rbuf);
        if (!path || !why)
                return;
        r = sd_bus_emit_signal(b->bus, CGB_BUS_PATH, CGB_BUS_INTERFACE, "WeightChanged", "stts",
                               path, old_weight, new_weight, why);
        if (r < 0)
                log_debug_errno(r, "Failed to emit WeightChanged: %m");
}

static void bus_emit_lever_changed(Bus *b, const Event *e) {
        _cleanup_free_ char *cbuf = NULL, *fbuf = NULL, *rbuf = NULL;
        const char *path, *for_path, *why;
        int r;

        if (!bus_is_connected(b))
                return;
        path = clean(e->cgroup, false, &cbuf);
        for_path = clean(e->for_cgroup, false, &fbuf);
        why = clean(e->reason, false, &rbuf);
        if (!path || !for_path || !why)
                return;
        r = sd_bus_emit_signal(b->bus, CGB_BUS_PATH, CGB_BUS_INTERFACE, "LeverChanged", "ssttss",
                               path, policy_lever_to_string(e->lever), (uint64_t) e->old_value,
                               (uint64_t) e->new_value, for_path, why);
        if (r < 0)
                log_debug_errno(r, "Failed to emit LeverChanged: %m");
}

static void bus_emit_reloaded(Bus *b, bool ok, const char *message) {
        _cleanup_free_ char *buf = NULL;
        const char *text;
        int r;

        if (!bus_is_connected(b))
                return;
        text = clean(message, false, &buf);
        if (!text)
                return;
        r = sd_bus_emit_signal(b->bus, CGB_BUS_PATH, CGB_BUS_INTERFACE, "Reloaded", "bs", (int) ok,
                               text);
        if (r < 0)
                log_debug_errno(r, "Failed to emit Reloaded: %m");
        if (ok)
                bus_emit_changed(b, "Config", "State");
}

/* The manager's events, as signals and PropertiesChanged. */
static void on_manager_event(const ManagerEvent *e, void *userdata) {
        Bus *b = userdata;

        switch (e->kind) {
        case MANAGER_EVENT_TICK_DONE: bus_tick_done(b); break;
        case MANAGER_EVENT_TASK_MOVED:
                bus_emit_task_moved(b, e->action->pid, e->action->from_node, e->action->to_node,
                                    e->action->reason);
                break;
        case MANAGER_EVENT_WEIGHT_CHANGED:
                bus_emit_weight_changed(b, e->action->cgroup, e->action->old_weight,
                                        e->action->new_weight, e->action->reason);
                break;
        case MANAGER_EVENT_LEVER_CHANGED: bus_emit_lever_changed(b, e->action); break;
        case MANAGER_EVENT_RELOADED: bus_emit_reloaded(b, e->ok, e->message); break;
        }
}
