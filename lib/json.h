/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A tiny streaming JSON emitter, pretty-printed with two spaces a level: cgbalancectl's
 * `status --json` and every loadgen report use it. The caller keeps the nesting right; a key is
 * given for members of an object and NULL for array elements.
 *
 *   Json j = { .f = stdout };
 *   json_begin(&j, '{');
 *   json_string(&j, "load", "io_load");
 *   json_u64(&j, "work", 42);
 *   json_end(&j, '}');          -> {\n  "load": "io_load",\n  "work": 42\n}\n
 *
 * Strings are taken as UTF-8: quotes, backslashes and control characters are escaped, other bytes
 * are copied. NULL prints as "(null)". Write errors are the FILE's: check ferror()/fclose().
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct Json {
        FILE *f;
        unsigned depth;
        bool need_comma; /* a value was written at this level */
        bool after_key;
} Json;

/* Opens an object ('{') or array ('['); json_key() first when it is a member. */
void json_begin(Json *j, char open);
/* Closes it ('}' or ']'); a newline follows the outermost close. */
void json_end(Json *j, char close);
void json_key(Json *j, const char *key);
void json_string(Json *j, const char *key, const char *value);
void json_u64(Json *j, const char *key, uint64_t value);
void json_i64(Json *j, const char *key, int64_t value);
void json_bool(Json *j, const char *key, bool value);
/* A finite number with up to `decimals` decimals (trailing zeros kept: 1.50); NaN and infinities,
 * which JSON lacks, print as null. */
void json_double(Json *j, const char *key, double value, unsigned decimals);
void json_null(Json *j, const char *key);
/* A value that is already JSON text (another program's output, embedded verbatim), trailing
 * whitespace dropped and each of its lines indented to this level. Its newlines must all be
 * between tokens, as any emitter writes them (a string's are escaped); it is not checked. */
void json_raw(Json *j, const char *key, const char *text);

/* s as one JSON string on f, quoted and escaped as above, never a newline: for one-line
 * formats (lib/event.h). */
void json_write_quoted(FILE *f, const char *s);
