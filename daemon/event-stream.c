/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "event-stream.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "event.h"
#include "fileio.h"
#include "log.h"

struct EventStream {
        Manager *manager;
        int fd; /* -EBADF once the stream has ended */
};

/* "3" -> 3: digits only, no sign or blank. -EINVAL if spec is not a number. */
static int parse_fd(const char *spec, int *ret) {
        char *end = NULL;
        long v;

        if (spec[0] < '0' || spec[0] > '9')
                return -EINVAL;
        errno = 0;
        v = strtol(spec, &end, 10);
        if (errno != 0 || *end != '\0' || v > INT_MAX)
                return -EINVAL;
        *ret = (int) v;
        return 0;
}

static int open_spec(const char *spec) {
        int fd, flags;

        if (parse_fd(spec, &fd) < 0) {
                fd = open(spec, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0644);
                return fd < 0 ? negative_errno() : fd;
        }
        flags = fcntl(fd, F_GETFL);
        if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY)
                return -EBADF;
        (void) fcntl(fd, F_SETFD, FD_CLOEXEC);
        return fd;
}

static void event_stream_end(EventStream *s, int error) {
        log_warning_errno(error, "Failed to write to the events stream, closing it: %m");
        (void) close(s->fd);
        s->fd = -EBADF;
}

static void on_manager_event(const ManagerEvent *e, void *userdata) {
        EventStream *s = userdata;
        _cleanup_free_ char *line = NULL;
        int r;

        if (s->fd < 0 ||
            (e->kind != MANAGER_EVENT_TASK_MOVED && e->kind != MANAGER_EVENT_WEIGHT_CHANGED &&
             e->kind != MANAGER_EVENT_LEVER_CHANGED))
                return;
        r = event_format(e->action, &line);
        if (r == -ENOMEM) {
                log_error_errno(r, "Out of memory.");
                return;
        }
        if (r < 0) { /* a value the schema cannot carry: a bug, but not the stream's end */
                log_debug_errno(r, "Failed to format an event, skipping it: %m");
                return;
        }
        r = write_full(s->fd, line, strlen(line));
        if (r < 0)
                event_stream_end(s, r);
}

int event_stream_new(Manager *m, const char *spec, EventStream **ret) {
        _cleanup_event_stream_ EventStream *s = NULL;
        int r;

        if (!spec || !spec[0])
                return -EINVAL;
        s = calloc(1, sizeof *s);
        if (!s)
                return -ENOMEM;
        s->fd = open_spec(spec);
        if (s->fd < 0)
                return s->fd;
        (void) signal(SIGPIPE, SIG_IGN);
        r = manager_add_observer(m, on_manager_event, s);
        if (r < 0)
                return r;
        s->manager = m;
        *ret = TAKE_PTR(s);
        return 0;
}

EventStream *event_stream_free(EventStream *s) {
        if (!s)
                return NULL;
        if (s->manager)
                manager_remove_observer(s->manager, on_manager_event, s);
        if (s->fd >= 0)
                (void) close(s->fd);
        free(s);
        return NULL;
}
