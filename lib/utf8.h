/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * UTF-8 as D-Bus and the metrics formats take it: strings from the outside world (comms, cgroup
 * paths, config values) need not be valid, and each consumer decides how to show what is not.
 */

#include <stdbool.h>
#include <stddef.h>

/* Length of the UTF-8 character at s, or 0 if it is not valid as sd-bus sees it (overlong,
 * surrogate, noncharacter, above U+10FFFF, cut short). */
size_t utf8_char_length(const char *s);

/* Whether the character at s, len bytes long (utf8_char_length()), is a C0 or C1 control
 * character or DEL; '\n' and '\t' pass when keep_lines. */
bool utf8_is_control(const char *s, size_t len, bool keep_lines);

/* Whether s is valid UTF-8 without control characters (but '\n', '\t' when keep_lines). */
bool utf8_is_clean(const char *s, bool keep_lines);
/* A copy of s with each byte of an invalid or control character as "\xNN". NULL on ENOMEM. */
char *utf8_escape(const char *s, bool keep_lines);
/* s itself when clean, else an escaped copy kept in *buf (the caller frees *buf); "" for NULL.
 * NULL on ENOMEM. For text from others (comms, cgroup paths, config keys and values) on its way
 * to a terminal or the bus. */
const char *utf8_clean(const char *s, bool keep_lines, char **buf);
/* Replaces in place each byte of an invalid or control character ('\n' and '\t' included) with
 * '?': for fixed-size messages that must stay within their buffer. */
void utf8_replace_controls(char *s);
