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
 *   [KIND NAME]           an instance of a kind the schema declares (see ConfigKind below)
 *   A UTF-8 byte-order mark is allowed at the start. Errors: continuation lines, keys before
 *   the first section, NUL bytes, files over CONFIG_FILE_MAX, and lines longer than inih's
 *   buffer allows (INI_MAX_LINE - 3: 197 bytes with Debian's inih 55), which inih itself would
 *   cut in two, parsing the tail as a line of its own.
 *
 * Drop-ins: MAIN.d/ (MAIN being the main file's path) holds files ending in ".conf", read in
 * strcmp() order of their names, so the order does not depend on the locale; names starting
 * with '.' are skipped. Each is a full INI file; a later file overrides earlier ones, key by key.
 *
 * Instance sections: besides its fixed sections, a schema may declare kinds (ConfigKind), each
 * with a key table of its own. "[group busy]" (the kind, one or more blanks, a name of the same
 * characters as key names, at most CONFIG_NAME_MAX bytes) creates the instance "busy" of the
 * kind "group" with its keys' defaults, the first time any file names it; instances are kept
 * in that order. The keys that follow, up to the next section line, set that instance's
 * members through the same value parsers, and their errors read "FILE:LINE: group busy: KEY:
 * what". The same [KIND NAME] twice in one file is an error; in a later file (a drop-in) it
 * reopens the instance, whose keys it then overrides key by key, as for fixed sections. At
 * most the kind's max_instances instances. A kind cannot share a name with a fixed section.
 *
 * Lists (CONFIG_LIST keys, in fixed or instance sections): the key may be given any number of
 * times in a section; each occurrence appends its value as one element, in file order, and
 * the element keeps the file and line it came from (ConfigListItem). An empty value ("phase =")
 * clears the list built so far. A file that sets the key at all replaces the list it had from
 * the defaults and earlier files (the first occurrence in each file starts a new list), so a
 * drop-in replaces a list whole, never appends to it.
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
 *   list      each element as a string of at most umax bytes (0: CONFIG_STRING_MAX), unparsed:
 *             the program parses the elements itself, naming ConfigListItem's file and line
 * Empty values are errors except for string, cpulist and strv keys with CONFIG_EMPTY_OK, and
 * list keys (where they clear the list).
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
        CONFIG_LIST, /* ConfigList, owned; one element per occurrence of the key */
        _CONFIG_TYPE_MAX,
} ConfigType;

/* ConfigKey.flags */
#define CONFIG_EMPTY_OK (1u << 0) /* string, cpulist, strv: "" is a valid value */

#define CONFIG_STRING_MAX 256u /* default umax of strings and strv words, in bytes */
#define CONFIG_VALUE_MAX 4096u /* longest value config_set_one() accepts */
#define CONFIG_FILE_MAX (1u << 20) /* larger files are refused, not read */
#define CONFIG_NAME_MAX                                                        \
        40u /* section, kind, instance and key names; inih keeps 49 bytes of a \
               section, but [KIND NAME] is read from the line itself */
#define CONFIG_ERROR_MAX 1024u
#define CONFIG_INSTANCES_MAX 1024u /* default ConfigKind.max_instances */

/*
 * A CONFIG_LIST key's value: its elements in order, each with the place it was written at, so
 * that the program's parser of the elements can name it: "FILE:LINE: phase: what".
 */
typedef struct ConfigListItem {
        char *value; /* owned; checked as a CONFIG_STRING value of at most umax bytes */
        char *file; /* owned; NULL for an element from the default or config_set_one() */
        unsigned line; /* 1-based; 0 when file is NULL */
} ConfigListItem;

typedef struct ConfigList {
        ConfigListItem *items;
        size_t n;
} ConfigList;

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
        const char *default_value; /* text, parsed like a value from a file; for a list, ""
                                      (no elements) or the one element */
        int64_t min, max; /* CONFIG_INT only */
        uint64_t umin, umax; /* uint, duration, percent: range; string, strv, list: max bytes
                                (of each word or element); cpulist: capacity */
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

#define CONFIG_KEY_LIST(sect, key, T, m, def, max_bytes, help_)                                  \
        {                                                                                        \
                .section = (sect), .name = (key), .type = CONFIG_LIST, .default_value = (def),   \
                .umax = (max_bytes), .help = (help_), .offset = CONFIG_MEMBER_(T, m, ConfigList) \
        }

/* Passed to the validate callbacks; names the file and line each key was last set at. */
typedef struct ConfigContext ConfigContext;

/*
 * The instances of one kind, a member of the schema's struct (ConfigKind.offset). Index i of
 * each array is the same instance; order is that of the first [KIND NAME] line naming each.
 * All owned: config_free() releases them, with the members of each item.
 */
typedef struct ConfigInstances {
        void *items; /* n structs of ConfigKind.struct_size: const Group *g = cfg->groups.items */
        char **names;
        char **files; /* the file of the instance's first section line... */
        unsigned *lines; /* ...and that line */
        size_t n;
} ConfigInstances;

/*
 * A kind of instance section, [KIND NAME]. Its keys are a table of their own: each key's
 * .section is the kind's name and its .offset is into the instance struct (struct_size bytes,
 * every member described by a key), not the schema's struct.
 */
typedef struct ConfigKind {
        const char *name; /* [A-Za-z0-9_-], at most CONFIG_NAME_MAX bytes; no fixed section's */
        const ConfigKey *keys;
        size_t n_keys;
        size_t struct_size;
        size_t max_instances; /* more is an error; 0: CONFIG_INSTANCES_MAX */
        size_t offset; /* of the ConfigInstances member in the schema's struct */
        const char *help; /* what one instance is, for config_write_defaults() */
        /*
         * Checks one complete instance, run on each in order after all files were read and
         * before ConfigSchema.validate. Return 0, or config_reject_instance(ctx, ...) to fail;
         * without it a failure reads "FILE:LINE: KIND NAME: rejected: <strerror>". NULL: none.
         * Must not modify it. Not run by config_set_one(), which cannot change instances.
         */
        int (*validate)(const void *instance, const char *name, ConfigContext *ctx);
} ConfigKind;

/* A ConfigKind whose keys are table (of struct T), stored in Parent.m, a ConfigInstances. */
#define CONFIG_KIND(kind, T, table, Parent, m, max, validate_, help_)                  \
        {                                                                              \
                .name = (kind), .keys = (table), .n_keys = ELEMENTSOF(table),          \
                .struct_size = sizeof(T), .max_instances = (max),                      \
                .offset = CONFIG_MEMBER_(Parent, m, ConfigInstances), .help = (help_), \
                .validate = (validate_)                                                \
        }

typedef struct ConfigSchema {
        const ConfigKey *keys;
        size_t n_keys;
        size_t struct_size; /* sizeof the caller's struct; every member is described by a key
                               or, for a ConfigInstances, by a kind */
        /*
         * Cross-key checks, run on the complete struct after all files (and after each
         * config_set_one()). Return 0, or config_reject(ctx, ...) or config_reject_instance()
         * to fail. Must not modify it.
         */
        int (*validate)(const void *config, ConfigContext *ctx);
        const ConfigKind *kinds; /* may be NULL, with n_kinds 0 */
        size_t n_kinds;
} ConfigSchema;

#define CONFIG_SCHEMA(T, table, validate_)                                              \
        {                                                                               \
                .keys = (table), .n_keys = ELEMENTSOF(table), .struct_size = sizeof(T), \
                .validate = (validate_)                                                 \
        }

#define CONFIG_SCHEMA_WITH_KINDS(T, table, kinds_, validate_)                             \
        {                                                                                 \
                .keys = (table), .n_keys = ELEMENTSOF(table), .struct_size = sizeof(T),   \
                .validate = (validate_), .kinds = (kinds_), .n_kinds = ELEMENTSOF(kinds_) \
        }

typedef struct ConfigError {
        int error; /* the negative errno returned */
        unsigned line; /* 1-based line of the file or string; 0 when no line applies */
        /*
         * Ready to log or return over D-Bus, without a trailing newline:
         *   "FILE:LINE: KEY: what"    a key's value, a duplicate, an unknown key
         *   "FILE:LINE: KIND NAME: KEY: what"    the same in an instance section
         *   "FILE:LINE: [SECTION]: what", "FILE:LINE: what"    section and line errors
         *   "FILE: what"              the file as a whole (unreadable, too large)
         *   "KEY: what"               config_set_one(), or validate on a key left at its default
         *   "FILE:LINE: KIND NAME: [KEY: ]what"  config_reject_instance()
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
 * Only keys of fixed sections: instances' keys cannot be set this way ("group.busy.weight" is
 * -ENOENT). A list key is replaced by a list of the one value (no file, line 0), or emptied by "".
 */
int config_set_one(const ConfigSchema *schema, void *config, const char *key, const char *value,
                   ConfigError *error);

/*
 * Releases the owned members (strings, masks, string arrays, lists, instances with their
 * members) and NULLs or zeroes them. NULL is fine.
 */
void config_free(const ConfigSchema *schema, void *config);

/* The key named "section.key" or a unique "key". -ENOENT, -ENOTUNIQ. */
int config_lookup(const ConfigSchema *schema, const char *key, const ConfigKey **ret);

/*
 * The key's value in config as text that parses back to the same value. Caller frees *ret.
 * -EOPNOTSUPP for a CONFIG_LIST key, which no one value describes: read its ConfigList.
 */
int config_format_value(const ConfigKey *key, const void *config, char **ret);

/*
 * A duration as a CONFIG_DURATION value is written ("250ms", "1min 30s", a bare number of
 * seconds), in microseconds: for programs that parse durations inside their own values (a list
 * element such as "run 200ms"). -EINVAL for bad syntax, -ERANGE on overflow, -EDOM for a value
 * finer than 1us.
 */
int config_parse_duration(const char *text, uint64_t *ret_usec);

/* The index of the instance called name in l: 0 and *ret, or -ENOENT. */
int config_instances_find(const ConfigInstances *l, const char *name, size_t *ret);

/*
 * For a validate callback: formats the error, naming the file and line the key (given as in
 * config_lookup()) was last set at, and returns -EINVAL.
 */
int config_reject(ConfigContext *ctx, const char *key, const char *format, ...) _printf_(3, 4);

/*
 * The same for an instance: "FILE:LINE: KIND NAME: KEY: what", naming the file and line key
 * (a key of the kind, e.g. "weight") was last set at in that instance or, if it was left at
 * its default or key is NULL, the instance's first section line ("FILE:LINE: KIND NAME: what"
 * for a NULL key). Outside config_load*() (in config_set_one()) there is no place to name:
 * "KIND NAME: KEY: what". Returns -EINVAL.
 */
int config_reject_instance(ConfigContext *ctx, const char *kind, const char *name, const char *key,
                           const char *format, ...) _printf_(5, 6);

/*
 * Checks the table itself: names, ranges, enum lists, members inside the struct and not
 * overlapping, every default valid; and each kind's name (unique, not a fixed section's), its
 * keys (in its section, inside the instance struct) and its ConfigInstances member (inside the
 * struct, overlapping no other). -EINVAL with the reason in *error. config_load() does this
 * too; a test of each program's table calls it directly.
 */
int config_check_schema(const ConfigSchema *schema, ConfigError *error);

/* config_write_defaults() flags */
#define CONFIG_WRITE_COMMENT_VALUES (1u << 0) /* "#key = default" rather than "key = default" */

/*
 * Writes an INI file with every key at its default, grouped by section in table order, each
 * preceded by its help text and its type and range as '#' comments. Parses back to the defaults.
 * A list key is written "key =" when its default is empty. Then each kind, in table order, as
 * its help and an example instance "#[KIND NAME]" with its keys at their defaults, all
 * commented out whatever the flags, since the defaults have no instances.
 * Returns -EINVAL for a broken schema, -EIO if writing failed.
 */
int config_write_defaults(const ConfigSchema *schema, FILE *f, unsigned flags);

/*
 * Writes "section.key=value" lines, one per key, in the same order, then "kind.name.key=value"
 * for each instance, kinds in table order and instances in theirs. A list key gets one line per
 * element, or one "section.key=" line when empty. -EIO, -ENOMEM.
 */
int config_print(const ConfigSchema *schema, const void *config, FILE *f);

/*
 * config as an INI file that config_load_string() loads back to an equal config: "[section]"
 * headers (each after a blank line) and "key = value" lines (a list: one line per element, "key ="
 * when empty), then a
 * "[kind name]" section per instance. No comments. -EIO, -ENOMEM.
 */
int config_write_values(const ConfigSchema *schema, const void *config, FILE *f);
