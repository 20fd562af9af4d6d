/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/json: the emitter cgbalancectl and loadgen print their reports with. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "json.h"

typedef struct Buf {
        char *text;
        size_t size;
        Json j;
} Buf;

static void buf_open(Buf *b) {
        b->text = NULL;
        b->size = 0;
        b->j = (Json){ .f = open_memstream(&b->text, &b->size) };
        cr_assert(b->j.f);
}

static void buf_close(Buf *b) {
        cr_assert_eq(fclose(b->j.f), 0);
}

Test(json, nested_objects_and_arrays_are_indented_two_spaces) {
        Buf b;

        buf_open(&b);
        json_begin(&b.j, '{');
        json_string(&b.j, "load", "io_load");
        json_key(&b.j, "runs");
        json_begin(&b.j, '[');
        json_u64(&b.j, NULL, 1);
        json_i64(&b.j, NULL, -2);
        json_end(&b.j, ']');
        json_bool(&b.j, "quick", true);
        json_end(&b.j, '}');
        buf_close(&b);
        cr_expect_str_eq(b.text,
                         "{\n  \"load\": \"io_load\",\n  \"runs\": [\n    1,\n    -2\n  ],\n"
                         "  \"quick\": true\n}\n");
        free(b.text);
}

Test(json, empty_containers_stay_on_one_line) {
        Buf b;

        buf_open(&b);
        json_begin(&b.j, '{');
        json_key(&b.j, "a");
        json_begin(&b.j, '[');
        json_end(&b.j, ']');
        json_end(&b.j, '}');
        buf_close(&b);
        cr_expect_str_eq(b.text, "{\n  \"a\": []\n}\n");
        free(b.text);
}

Test(json, strings_escape_quotes_backslashes_and_control_characters) {
        Buf b;

        buf_open(&b);
        json_begin(&b.j, '[');
        json_string(&b.j, NULL,
                    "a\"b\\c\nd\te\x01\x7f"
                    "é");
        json_string(&b.j, NULL, NULL);
        json_end(&b.j, ']');
        buf_close(&b);
        cr_expect_str_eq(b.text, "[\n  \"a\\\"b\\\\c\\nd\\te\\u0001\\u007fé\",\n  \"(null)\"\n]\n");
        free(b.text);
}

Test(json, doubles_keep_their_decimals_and_non_finite_is_null) {
        Buf b;

        buf_open(&b);
        json_begin(&b.j, '[');
        json_double(&b.j, NULL, 1.5, 2);
        json_double(&b.j, NULL, 49.04, 1);
        json_double(&b.j, NULL, 3.0, 0);
        json_double(&b.j, NULL, NAN, 2);
        json_double(&b.j, NULL, INFINITY, 2);
        json_end(&b.j, ']');
        buf_close(&b);
        cr_expect_str_eq(b.text, "[\n  1.50,\n  49.0,\n  3,\n  null,\n  null\n]\n");
        free(b.text);
}

Test(json, u64_prints_the_full_range) {
        Buf b;

        buf_open(&b);
        json_begin(&b.j, '{');
        json_u64(&b.j, "max", UINT64_MAX);
        json_i64(&b.j, "min", INT64_MIN);
        json_end(&b.j, '}');
        buf_close(&b);
        cr_expect_str_eq(
                b.text,
                "{\n  \"max\": 18446744073709551615,\n  \"min\": -9223372036854775808\n}\n");
        free(b.text);
}
