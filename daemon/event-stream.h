/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * cgbalanced --events=FD|PATH: the manager's moves and weight changes, one lib/event.h line each,
 * for a program to read (loadgen compare gives the daemon a pipe). It observes the manager as
 * the bus does. Writes block: a reader must keep reading, as it must a pipe on stderr. A reader
 * that goes away (EPIPE) or a failed write ends the stream, with one warning; the daemon goes on.
 */

#include "macro.h"
#include "manager.h"

typedef struct EventStream EventStream;

/*
 * spec: a file descriptor number (inherited open for writing; taken over, made close-on-exec) or
 * a path (created mode 0644 if missing, appended to). Ignores SIGPIPE for the whole process, so
 * that a reader going away is an EPIPE, not the daemon's end. Observes m until
 * event_stream_free(), which must come before manager_free(). -EBADF for a number that is not an
 * fd open for writing, open()'s -errno for a path, -EINVAL for an empty spec, -ENOMEM, -ENOSPC
 * (manager_add_observer()).
 */
int event_stream_new(Manager *m, const char *spec, EventStream **ret);
EventStream *event_stream_free(EventStream *s); /* accepts NULL, returns NULL; closes the fd */
DEFINE_TRIVIAL_CLEANUP_FUNC(EventStream *, event_stream_free);
#define _cleanup_event_stream_ _cleanup_(event_stream_freep)
