/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lib/utf8.c: what counts as a character and as a control, and the three ways text from others is
 * made safe for a terminal, the bus or a metrics label: checked, escaped as \xNN, replaced by '?'.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "macro.h"
#include "utf8.h"

Test(utf8, char_length_accepts_what_sd_bus_accepts) {
        cr_expect_eq(utf8_char_length("a"), 1);
        cr_expect_eq(utf8_char_length("\xc3\xa9"), 2);
        cr_expect_eq(utf8_char_length("\xe2\x82\xac"), 3);
        cr_expect_eq(utf8_char_length("\xf0\x9f\x99\x82"), 4);
        cr_expect_eq(utf8_char_length("\xc0\x80"), 0, "overlong");
        cr_expect_eq(utf8_char_length("\xed\xa0\x80"), 0, "a surrogate");
        cr_expect_eq(utf8_char_length("\xef\xbf\xbe"), 0, "a noncharacter");
        cr_expect_eq(utf8_char_length("\xf4\x90\x80\x80"), 0, "above U+10FFFF");
        cr_expect_eq(utf8_char_length("\xc3"), 0, "cut short by the NUL");
        cr_expect_eq(utf8_char_length("\xff"), 0);
}

Test(utf8, controls_are_c0_c1_and_del_lines_kept_on_request) {
        cr_expect(utf8_is_control("\x1b", 1, false));
        cr_expect(utf8_is_control("\x7f", 1, false));
        cr_expect(utf8_is_control("\xc2\x9b", 2, false), "C1 CSI");
        cr_expect(utf8_is_control("\n", 1, false));
        cr_expect_not(utf8_is_control("\n", 1, true));
        cr_expect_not(utf8_is_control("\t", 1, true));
        cr_expect_not(utf8_is_control("\xc2\xa0", 2, false), "no-break space");
        cr_expect_not(utf8_is_control("a", 1, false));
}

Test(utf8, is_clean_and_clean_return_clean_text_itself) {
        char *buf = NULL;

        cr_expect(utf8_is_clean("caf\xc3\xa9", false));
        cr_expect(utf8_is_clean("a\nb", true));
        cr_expect_not(utf8_is_clean("a\nb", false));
        cr_expect_not(utf8_is_clean("a\xff", true));
        cr_expect_str_eq(utf8_clean("plain", false, &buf), "plain");
        cr_expect_null(buf, "no copy for clean text");
        cr_expect_str_eq(utf8_clean(NULL, false, &buf), "");
}

Test(utf8, escape_writes_each_byte_of_a_bad_or_control_character_as_hex) {
        _cleanup_free_ char *a = utf8_escape("ev\nil\x1b[31m", false);
        _cleanup_free_ char *b = utf8_escape("a\nb\xff\xc2\x9b", true);
        _cleanup_free_ char *c = NULL;

        cr_expect_str_eq(a, "ev\\x0ail\\x1b[31m");
        cr_expect_str_eq(b, "a\nb\\xff\\xc2\\x9b");
        cr_expect_str_eq(utf8_clean("x\x7f", false, &c), "x\\x7f");
        cr_expect_not_null(c);
}

Test(utf8, replace_controls_keeps_the_length_and_valid_text) {
        char s[] = "bad\x1b[31mkey \xc3\xa9 \xff\tend\xc2\x9b";

        utf8_replace_controls(s);
        cr_expect_str_eq(s, "bad?[31mkey \xc3\xa9 ??end??");
}
