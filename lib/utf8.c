/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

size_t utf8_char_length(const char *str) {
        static const uint32_t min_of_length[] = { 0, 0, 0x80, 0x800, 0x10000 };
        const unsigned char *s = (const unsigned char *) str;
        size_t len;
        uint32_t cp;

        if (s[0] < 0x80)
                return 1;
        if ((s[0] & 0xe0) == 0xc0)
                len = 2, cp = s[0] & 0x1fu;
        else if ((s[0] & 0xf0) == 0xe0)
                len = 3, cp = s[0] & 0x0fu;
        else if ((s[0] & 0xf8) == 0xf0)
                len = 4, cp = s[0] & 0x07u;
        else
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xc0) != 0x80) /* a NUL stops here too */
                        return 0;
                cp = cp << 6 | (s[i] & 0x3fu);
        }
        if (cp < min_of_length[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ||
            (cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) == 0xfffe)
                return 0;
        return len;
}

bool utf8_is_control(const char *s, size_t len, bool keep_lines) {
        unsigned char c = (unsigned char) s[0];

        if (len == 2)
                return c == 0xc2 && (unsigned char) s[1] < 0xa0;
        if (len != 1)
                return false;
        if (keep_lines && (c == '\n' || c == '\t'))
                return false;
        return c < 0x20 || c == 0x7f;
}

bool utf8_is_clean(const char *s, bool keep_lines) {
        while (*s) {
                size_t len = utf8_char_length(s);

                if (len == 0 || utf8_is_control(s, len, keep_lines))
                        return false;
                s += len;
        }
        return true;
}

char *utf8_escape(const char *s, bool keep_lines) {
        char *buf = malloc(strlen(s) * 4 + 1), *p = buf;

        if (!buf)
                return NULL;
        while (*s) {
                size_t len = utf8_char_length(s);

                if (len > 0 && !utf8_is_control(s, len, keep_lines)) {
                        memcpy(p, s, len);
                        p += len, s += len;
                        continue;
                }
                len = len > 0 ? len : 1;
                for (size_t i = 0; i < len; i++)
                        p += sprintf(p, "\\x%02x", (unsigned char) s[i]);
                s += len;
        }
        *p = '\0';
        return buf;
}

const char *utf8_clean(const char *s, bool keep_lines, char **buf) {
        if (!s)
                return "";
        if (utf8_is_clean(s, keep_lines))
                return s;
        *buf = utf8_escape(s, keep_lines);
        return *buf;
}

void utf8_replace_controls(char *s) {
        while (*s) {
                size_t len = utf8_char_length(s);

                if (len > 0 && !utf8_is_control(s, len, /* keep_lines= */ false)) {
                        s += len;
                        continue;
                }
                len = len > 0 ? len : 1;
                memset(s, '?', len);
                s += len;
        }
}
