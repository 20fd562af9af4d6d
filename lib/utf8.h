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
