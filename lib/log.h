/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Logging. Levels are syslog priorities (LOG_ERR .. LOG_DEBUG). Messages go to stderr, or to the
 * journal when stderr is connected to it (systemd sets $JOURNAL_STREAM for services); the
 * journal entry carries CODE_FILE/CODE_LINE/CODE_FUNC and ERRNO=.
 *
 * Library code (lib/) logs at debug only; the programs decide what an error means and log it once.
 * The _errno variants set errno from their error argument first, so "%m" prints it, and return
 * -abs(error), so callers can write `return log_error_errno(r, "Failed to ...: %m");`.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <syslog.h>

#include "macro.h"

typedef enum LogTarget {
        LOG_TARGET_AUTO, /* journal if stderr is the journal's stream, else stderr */
        LOG_TARGET_STDERR,
        LOG_TARGET_JOURNAL,
} LogTarget;

void log_set_max_level(int level);
int log_get_max_level(void);
/* Parses "err", "warning", "notice", "info", "debug" (or 3..7). Returns -EINVAL otherwise. */
int log_level_from_string(const char *s);
const char *log_level_to_string(int level);

void log_set_target(LogTarget target);
/* The target in force once AUTO is resolved. */
LogTarget log_get_target(void);
/* Prefix stderr lines with "<name>: " (the program name). NULL for none. */
void log_set_ident(const char *ident);

/* Returns -abs(error). error may be 0 (then %m prints "Success"). */
int log_internal(int level, int error, const char *file, int line, const char *func,
                 const char *format, ...) _printf_(6, 7);

/*
 * A message with extra journal fields, each a "KEY=value" string (KEY in capitals, digits and
 * '_', not starting with '_'), n_fields of them. On stderr only the message is printed: it must
 * say everything the fields do. At most 16 fields. For decisions a program (journalctl -o json,
 * a monitor) reads.
 */
int log_struct_internal(int level, const char *file, int line, const char *func,
                        const char *const *fields, size_t n_fields, const char *format, ...)
        _printf_(7, 8);

#define log_struct(level, fields, n_fields, ...)                                             \
        ({                                                                                   \
                int _lvl_ = (level);                                                         \
                (log_get_max_level() >= _lvl_)                                               \
                        ? log_struct_internal(_lvl_, __FILE__, __LINE__, __func__, (fields), \
                                              (n_fields), __VA_ARGS__)                       \
                        : 0;                                                                 \
        })

#define log_full_errno(level, error, ...)                                                     \
        ({                                                                                    \
                int _lvl_ = (level), _e_ = (error);                                           \
                (log_get_max_level() >= _lvl_)                                                \
                        ? log_internal(_lvl_, _e_, __FILE__, __LINE__, __func__, __VA_ARGS__) \
                        : -abs(_e_);                                                          \
        })

#define log_full(level, ...) (void) log_full_errno(level, 0, __VA_ARGS__)

#define log_debug(...) log_full(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_full(LOG_INFO, __VA_ARGS__)
#define log_notice(...) log_full(LOG_NOTICE, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, __VA_ARGS__)
#define log_error(...) log_full(LOG_ERR, __VA_ARGS__)

#define log_debug_errno(error, ...) log_full_errno(LOG_DEBUG, error, __VA_ARGS__)
#define log_info_errno(error, ...) log_full_errno(LOG_INFO, error, __VA_ARGS__)
#define log_notice_errno(error, ...) log_full_errno(LOG_NOTICE, error, __VA_ARGS__)
#define log_warning_errno(error, ...) log_full_errno(LOG_WARNING, error, __VA_ARGS__)
#define log_error_errno(error, ...) log_full_errno(LOG_ERR, error, __VA_ARGS__)
