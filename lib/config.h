/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * INI configuration driven by one table. A program describes every key once, in a ConfigKey
 * array: section, name, type, default (as text), range, help, and where the value lives in the
 * program's own struct. From that table this module
 *
 *   - loads a fresh struct: defaults, the main file, then MAIN.d/ drop-ins, then the program's
 *     cross-key check; the caller gets the struct only if all of it succeeded, so it can swap
 *     it in whole while the old one stays in force on any error (config_load());
 *   - sets one key the same way, for a D-Bus SetTunable (config_set_one());
 *   - writes the documented default file and prints the effective values (config_write_defaults(),
 *     config_print()), for conf/cgbalance.conf, the man page and --check-config.
 *
 * File syntax (inih underneath, with the stricter rules below enforced here):
 *   [section]             only sections of the table; nothing but a comment after the ']'
 *   key = value           only keys of the table, only '=' (not ':'), each at most once per file;
 *                         leading whitespace is ignored
 *   ; comment, # comment  whole-line comments; " ;" also starts a comment after a value, "#" does
 *                         not (so "5 # five" is a bad number, not 5)
 *   A UTF-8 byte-order mark is allowed at the start. Errors: continuation lines, keys before
 *   the first section, NUL bytes, files over CONFIG_FILE_MAX, and lines longer than inih's
 *   buffer allows (INI_MAX_LINE - 3: 197 bytes with Debian's inih 55), which inih itself would
 *   cut in two, parsing the tail as a line of its own.
 *
 * Drop-ins: MAIN.d/ (MAIN being the main file's path) holds files ending in ".conf", read in
 * strcmp() order of their names, so the order does not depend on the locale; names starting
 * with '.' are skipped. Each is a full INI file; a later file overrides earlier ones, key by key.
 *
 * Values:
 *   bool      yes/no, true/false, on/off, 1/0, any case
 *   int/uint  decimal (base 10 always, so "010" is 10), no '+', within the key's range
 *   duration  "250us", "500ms", "1.5s", "2min", "1h", "1d", or several: "1min 30s"; units us usec
 *             ms msec s sec min h d. A bare number is seconds. Stored in microseconds; a value
 *             finer than 1us is an error, not rounded.
 *   percent   "125" or "125%", an integer
 *   string    at most umax bytes (0: CONFIG_STRING_MAX), no control characters, no ';' first or
 *             after a blank (a file could not hold it: inih would start a comment there)
 *   cpulist   the kernel's list format ("0-3,8"), parsed by cpumask_parse()
 *   enum      one of the key's names, exactly
 *   strv      words separated by spaces or tabs (globs, cgroup names); no quoting
 * Empty values are errors except for string, cpulist and strv keys with CONFIG_EMPTY_OK.
 *
 * Errors: loading stops at the first error. Every function that returns int returns 0 or a
 * negative errno, writes its result only on success and fills *error (if not NULL) only on
 * failure, with a message that names the place: "FILE:LINE: KEY: what" (see ConfigError).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cpumask.h"
#include "macro.h"

typedef enum ConfigType {
        CONFIG_BOOL, /* bool */
        CONFIG_INT, /* int64_t, min..max */
        CONFIG_UINT, /* uint64_t, umin..umax */
        CONFIG_DURATION, /* uint64_t microseconds, umin..umax (in microseconds) */
        CONFIG_PERCENT, /* unsigned, umin..umax */
        CONFIG_STRING, /* char *, owned; never NULL once loaded */
        CONFIG_CPULIST, /* CpuMask *, owned, capacity umax CPUs; never NULL once loaded */
        CONFIG_ENUM, /* int (or any int-sized enum): index into enum_names */
        CONFIG_STRV, /* char **, owned, NULL-terminated; never NULL once loaded */
        _CONFIG_TYPE_MAX,
} ConfigType;

/* ConfigKey.flags */
#define CONFIG_EMPTY_OK (1u << 0) /* string, cpulist, strv: "" is a valid value */

#define CONFIG_STRING_MAX 256u /* default umax of strings and strv words, in bytes */
#define CONFIG_VALUE_MAX 4096u /* longest value config_set_one() accepts */
#define CONFIG_FILE_MAX (1u << 20) /* larger files are refused, not read */
#define CONFIG_NAME_MAX 40u /* section and key names; inih keeps 49 bytes of a section */
#define CONFIG_ERROR_MAX 1024u

/*
 * One key. Fill it with the CONFIG_KEY_*() macros below: they check at compile time that the
 * struct member has the C type the key's type stores into. A range of 0..0 means the type's
 * natural range: all of int64_t/uint64_t, 0..100 for percent, CONFIG_STRING_MAX for strings,
 * CPUMASK_MAX_CPUS for cpulists.
 */
typedef struct ConfigKey {
        const char *section;
        const char *name; /* [A-Za-z0-9_-], at most CONFIG_NAME_MAX bytes; so is section */
        ConfigType type;
        unsigned flags;
        const char *default_value; /* text, parsed like a value from a file */
        int64_t min, max; /* CONFIG_INT only */
        uint64_t umin, umax; /* uint, duration, percent: range; string, strv: max bytes;
                                cpulist: capacity */
        const char *const *enum_names; /* CONFIG_ENUM: NULL-terminated; value = index */
        const char *help; /* one or more sentences; '\n' starts a paragraph */
        size_t offset; /* of the member in the caller's struct */
} ConfigKey;

/* offsetof(T, m), failing to compile unless T.m has type ctype. */
#define CONFIG_MEMBER_(T, m, ctype) \
        (offsetof(T, m) +           \
         0 * sizeof(char[__builtin_types_compatible_p(__typeof__(((T *) 0)->m), ctype) ? 1 : -1]))
/* Enums are compatible with int or unsigned depending on their values: check the size only. */
#define CONFIG_ENUM_MEMBER_(T, m) \
        (offsetof(T, m) + 0 * sizeof(char[sizeof(((T *) 0)->m) == sizeof(int) ? 1 : -1]))

#define CONFIG_KEY_BOOL(sect, key, T, m, def, help_)                                           \
        {                                                                                      \
                .section = (sect), .name = (key), .type = CONFIG_BOOL, .default_value = (def), \
                .help = (help_), .offset = CONFIG_MEMBER_(T, m, bool)                          \
        }
#define CONFIG_KEY_INT(sect, key, T, m, def, lo, hi, help_)                                        \
        {                                                                                          \
                .section = (sect), .name = (key), .type = CONFIG_INT, .default_value = (def),      \
                .min = (lo), .max = (hi), .help = (help_), .offset = CONFIG_MEMBER_(T, m, int64_t) \
        }
#define CONFIG_KEY_UINT(sect, key, T, m, def, lo, hi, help_)                                   \
        {                                                                                      \
                .section = (sect), .name = (key), .type = CONFIG_UINT, .default_value = (def), \
                .umin = (lo), .umax = (hi), .help = (help_),                                   \
                .offset = CONFIG_MEMBER_(T, m, uint64_t)                                       \
        }
#define CONFIG_KEY_DURATION(sect, key, T, m, def, lo_usec, hi_usec, help_)                         \
        {                                                                                          \
                .section = (sect), .name = (key), .type = CONFIG_DURATION, .default_value = (def), \
                .umin = (lo_usec), .umax = (hi_usec), .help = (help_),                             \
                .offset = CONFIG_MEMBER_(T, m, uint64_t)                                           \
        }
#define CONFIG_KEY_PERCENT(sect, key, T, m, def, lo, hi, help_)                                   \
        {                                                                                         \
                .section = (sect), .name = (key), .type = CONFIG_PERCENT, .default_value = (def), \
                .umin = (lo), .umax = (hi), .help = (help_),                                      \
                .offset = CONFIG_MEMBER_(T, m, unsigned)                                          \
        }
#define CONFIG_KEY_STRING(sect, key, T, m, def, max_bytes, flags_, help_)                   \
        {                                                                                   \
                .section = (sect), .name = (key), .type = CONFIG_STRING, .flags = (flags_), \
                .default_value = (def), .umax = (max_bytes), .help = (help_),               \
                .offset = CONFIG_MEMBER_(T, m, char *)                                      \
        }
#define CONFIG_KEY_CPULIST(sect, key, T, m, def, capacity, flags_, help_)                    \
        {                                                                                    \
                .section = (sect), .name = (key), .type = CONFIG_CPULIST, .flags = (flags_), \
                .default_value = (def), .umax = (capacity), .help = (help_),                 \
                .offset = CONFIG_MEMBER_(T, m, CpuMask *)                                    \
        }
#define CONFIG_KEY_ENUM(sect, key, T, m, def, names, help_)                                    \
        {                                                                                      \
                .section = (sect), .name = (key), .type = CONFIG_ENUM, .default_value = (def), \
                .enum_names = (names), .help = (help_), .offset = CONFIG_ENUM_MEMBER_(T, m)    \
        }
#define CONFIG_KEY_STRV(sect, key, T, m, def, max_word_bytes, flags_, help_)              \
        {                                                                                 \
                .section = (sect), .name = (key), .type = CONFIG_STRV, .flags = (flags_), \
                .default_value = (def), .umax = (max_word_bytes), .help = (help_),        \
                .offset = CONFIG_MEMBER_(T, m, char **)                                   \
        }

/* Passed to ConfigSchema.validate; names the file and line each key was last set at. */
typedef struct ConfigContext ConfigContext;

typedef struct ConfigSchema {
        const ConfigKey *keys;
        size_t n_keys;
        size_t struct_size; /* sizeof the caller's struct; every member is described by a key */
        /*
         * Cross-key checks, run on the complete struct after all files (and after each
         * config_set_one()). Return 0, or config_reject(ctx, ...) to fail. Must not modify it.
         */
        int (*validate)(const void *config, ConfigContext *ctx);
} ConfigSchema;

#define CONFIG_SCHEMA(T, table, validate_)                                              \
        {                                                                               \
                .keys = (table), .n_keys = ELEMENTSOF(table), .struct_size = sizeof(T), \
                .validate = (validate_)                                                 \
        }

typedef struct ConfigError {
        int error; /* the negative errno returned */
        unsigned line; /* 1-based line of the file or string; 0 when no line applies */
        /*
         * Ready to log or return over D-Bus, without a trailing newline:
         *   "FILE:LINE: KEY: what"    a key's value, a duplicate, an unknown key
         *   "FILE:LINE: [SECTION]: what", "FILE:LINE: what"    section and line errors
         *   "FILE: what"              the file as a whole (unreadable, too large)
         *   "KEY: what"               config_set_one(), or validate on a key left at its default
         */
        char message[CONFIG_ERROR_MAX];
} ConfigError;

/* config_load() flags */
#define CONFIG_LOAD_MAIN_OPTIONAL (1u << 0) /* a missing main file means "defaults" */

/*
 * Loads defaults, then main_path, then main_path.d/NAME.conf, then runs schema->validate, into a
 * fresh struct, and copies that struct to *ret (schema->struct_size bytes) only if all succeeded.
 * *ret is not read: on failure it keeps what it had, so the caller's current config stays valid.
 * On success the caller owns the members and releases them with config_free().
 * A missing drop-in directory is fine; a missing main file is -ENOENT unless
 * CONFIG_LOAD_MAIN_OPTIONAL. Returns -EINVAL for bad contents (including a broken schema),
 * -ERANGE for a value out of its range, -EISDIR/-EACCES/-EFBIG/... for files that cannot be
 * read, -ENOMEM.
 */
int config_load(const ConfigSchema *schema, const char *main_path, unsigned flags, void *ret,
                ConfigError *error);

/*
 * The same, from size bytes of INI text (which may hold NUL bytes: they are errors) instead of
 * files; name labels the messages ("<string>" if NULL). No drop-ins.
 */
int config_load_string(const ConfigSchema *schema, const char *name, const char *text, size_t size,
                       void *ret, ConfigError *error);

/*
 * Sets one key of an existing, loaded struct from its text value, through the same parser and
 * then schema->validate. key is "section.key", or just "key" when only one section has it
 * (-ENOTUNIQ otherwise, -ENOENT if none). The value must not have leading or trailing blanks
 * and be at most CONFIG_VALUE_MAX bytes. On failure the struct is unchanged.
 */
int config_set_one(const ConfigSchema *schema, void *config, const char *key, const char *value,
                   ConfigError *error);

/* Releases the owned members (strings, masks, string arrays) and NULLs them. NULL is fine. */
void config_free(const ConfigSchema *schema, void *config);

/* The key named "section.key" or a unique "key". -ENOENT, -ENOTUNIQ. */
int config_lookup(const ConfigSchema *schema, const char *key, const ConfigKey **ret);

/* The key's value in config as text that parses back to the same value. Caller frees *ret. */
int config_format_value(const ConfigKey *key, const void *config, char **ret);

/*
 * For a validate callback: formats the error, naming the file and line the key (given as in
 * config_lookup()) was last set at, and returns -EINVAL.
 */
int config_reject(ConfigContext *ctx, const char *key, const char *format, ...) _printf_(3, 4);

/*
 * Checks the table itself: names, ranges, enum lists, members inside the struct and not
 * overlapping, every default valid. -EINVAL with the reason in *error. config_load() does this
 * too; a test of each program's table calls it directly.
 */
int config_check_schema(const ConfigSchema *schema, ConfigError *error);

/* config_write_defaults() flags */
#define CONFIG_WRITE_COMMENT_VALUES (1u << 0) /* "#key = default" rather than "key = default" */

/*
 * Writes an INI file with every key at its default, grouped by section in table order, each
 * preceded by its help text and its type and range as '#' comments. Parses back to the defaults.
 * Returns -EINVAL for a broken schema, -EIO if writing failed.
 */
int config_write_defaults(const ConfigSchema *schema, FILE *f, unsigned flags);

/* Writes "section.key=value" lines, one per key, in the same order. -EIO, -ENOMEM. */
int config_print(const ConfigSchema *schema, const void *config, FILE *f);
