/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * cgbalanced's D-Bus object (daemon/bus-api.h has the API). Only the vtable, the access checks
 * and the signal emitters live here; every method calls into the manager (manager.h), which
 * shares its paths with SIGHUP and the tick. The bus observes the manager: its signals and
 * per-tick PropertiesChanged come from the manager's events (manager_add_observer()); the
 * manager knows nothing of the bus.
 *
 * Degrading, not dying: when the bus cannot be reached (no system bus on the host) the daemon
 * goes on balancing; bus_new() still succeeds, says so once in the log, and retries connecting
 * every BUS_RETRY_USEC from the event loop. When the address is a unix:path= socket (the system
 * bus's default is), the socket's directory is watched too (inotify), and a waiting retry is
 * made as soon as the socket appears; a directory that does not exist leaves only the timer.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "macro.h"

#define BUS_RETRY_USEC (30ULL * 1000000ULL)

typedef struct Manager Manager;
typedef struct Bus Bus;
typedef struct Metrics Metrics;

/* metrics: what Metrics() renders (daemon/metrics.h), NULL for none; it must outlive the bus.
 * address: NULL for the system bus ($DBUS_SYSTEM_BUS_ADDRESS is honoured), else a D-Bus address
 * such as "unix:path=/run/test/bus". The bus observes m (manager_add_observer()) until
 * bus_free(), which must come before manager_free(). Returns -ENOMEM, or manager_add_observer()'s
 * -ENOSPC. */
int bus_new(Manager *m, const Metrics *metrics, sd_event *event, const char *address, Bus **ret);
Bus *bus_free(Bus *b); /* releases the name, stops observing; accepts NULL */
DEFINE_TRIVIAL_CLEANUP_FUNC(Bus *, bus_free);

bool bus_is_connected(const Bus *b);

/* Pure: the socket path of a "unix:path=PATH[,key=value...][;other address]" D-Bus address,
 * %XX escapes decoded, into *ret (caller frees). -EINVAL for another transport, a path that is
 * not absolute, ends in '/' or holds a NUL, a bad escape; -ENOMEM. */
int bus_address_unix_path(const char *address, char **ret);
