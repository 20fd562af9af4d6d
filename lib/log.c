/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-journal.h>

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
        } else {
                if (ident)
                        (void) fprintf(stderr, "%s: %s\n", ident, msg);
                else
                        (void) fprintf(stderr, "%s\n", msg);
        }
        return -e;
}
