/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>

#include "macro.h"

#define MAX_STRUCT_FIELDS 16u

static int max_level = LOG_INFO;
static LogTarget target = LOG_TARGET_AUTO;
static const char *ident;

static const char *const level_names[] = {
        [LOG_EMERG] = "emerg", [LOG_ALERT] = "alert",     [LOG_CRIT] = "crit",
        [LOG_ERR] = "err",     [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
        [LOG_INFO] = "info",   [LOG_DEBUG] = "debug",
};

void log_set_max_level(int level) {
        max_level = level;
}

int log_get_max_level(void) {
        return max_level;
}

int log_level_from_string(const char *s) {
        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(level_names); i++)
                if (streq(s, level_names[i]))
                        return (int) i;
        if (streq(s, "error"))
                return LOG_ERR;
        if (s[0] >= '0' && s[0] <= '7' && s[1] == '\0')
                return s[0] - '0';
        return -EINVAL;
}

const char *log_level_to_string(int level) {
        if (level < 0 || (size_t) level >= ELEMENTSOF(level_names))
                return NULL;
        return level_names[level];
}

/* systemd sets $JOURNAL_STREAM to "dev:ino" of the stream it connected stderr to. */
static bool stderr_is_journal(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
                return false;
        if (fstat(STDERR_FILENO, &st) < 0)
                return false;
        return (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino;
}

void log_set_target(LogTarget t) {
        target = t;
}

LogTarget log_get_target(void) {
        if (target == LOG_TARGET_AUTO)
                target = stderr_is_journal() ? LOG_TARGET_JOURNAL : LOG_TARGET_STDERR;
        return target;
}

void log_set_ident(const char *name) {
        ident = name;
}

/* A line on stderr, after the program's name if one was set. */
static void print_stderr(const char *msg) {
        if (ident)
                (void) fprintf(stderr, "%s: %s\n", ident, msg);
        else
                (void) fprintf(stderr, "%s\n", msg);
}

int log_internal(int level, int error, const char *file, int line, const char *func,
                 const char *format, ...) {
        char msg[2048], code_file[256], code_line[32];
        int e = abs(error);
        va_list ap;

        errno = e; /* for %m */
        va_start(ap, format);
        (void) vsnprintf(msg, sizeof msg, format, ap);
        va_end(ap);

        if (log_get_target() == LOG_TARGET_JOURNAL) {
                (void) snprintf(code_file, sizeof code_file, "CODE_FILE=%s", file);
                (void) snprintf(code_line, sizeof code_line, "CODE_LINE=%d", line);
                if (e > 0)
                        (void) sd_journal_send_with_location(code_file, code_line, func,
                                                             "MESSAGE=%s", msg, "PRIORITY=%d",
                                                             level, "ERRNO=%d", e, NULL);
                else
                        (void) sd_journal_send_with_location(code_file, code_line, func,
                                                             "MESSAGE=%s", msg, "PRIORITY=%d",
                                                             level, NULL);
        } else
                print_stderr(msg);
        return -e;
}

int log_struct_internal(int level, const char *file, int line, const char *func,
                        const char *const *fields, size_t n_fields, const char *format, ...) {
        char msg[2048], message[2064], priority[32], code_file[256], code_line[32];
        struct iovec iov[2 + MAX_STRUCT_FIELDS];
        size_t n = 0;
        va_list ap;

        va_start(ap, format);
        (void) vsnprintf(msg, sizeof msg, format, ap);
        va_end(ap);

        if (log_get_target() != LOG_TARGET_JOURNAL) {
                print_stderr(msg);
                return 0;
        }
        (void) snprintf(message, sizeof message, "MESSAGE=%s", msg);
        (void) snprintf(priority, sizeof priority, "PRIORITY=%d", level);
        (void) snprintf(code_file, sizeof code_file, "CODE_FILE=%s", file);
        (void) snprintf(code_line, sizeof code_line, "CODE_LINE=%d", line);
        iov[n++] = (struct iovec){ .iov_base = message, .iov_len = strlen(message) };
        iov[n++] = (struct iovec){ .iov_base = priority, .iov_len = strlen(priority) };
        for (size_t i = 0; i < n_fields && i < MAX_STRUCT_FIELDS; i++)
                iov[n++] = (struct iovec){ .iov_base = (void *) fields[i],
                                           .iov_len = strlen(fields[i]) };
        (void) sd_journal_sendv_with_location(code_file, code_line, func, iov, (int) n);
        return 0;
}
