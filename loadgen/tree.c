/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"

#define N_HELPERS 16u /* h0 .. h15 in common.h */
#define N_UTILS 512u /* u0 .. u511 in util.h: the bulk of the headers, mostly parsed, not used */
#define MAX_DEPS 3u /* earlier modules a module calls into */
#define EXPR_DEPTH 3u
#define MIN_STATEMENTS 3u
#define EXTRA_STATEMENTS 4u /* a function has MIN_STATEMENTS + [0, EXTRA_STATEMENTS) */
#define RUN_DEPTH 2u /* call depth mNNNN_run() starts at: bounds the program's run time */
#define EVICT_MAX_DEPTH 64u

/* Each file has a stream of its own, so a module's text does not depend on the order of writing. */
enum { STREAM_COMMON = 1, STREAM_UTIL, STREAM_HEADER, STREAM_SOURCE, STREAM_DEPS };

typedef struct Gen {
        FILE *f;
        uint64_t rng;
        const TreeOptions *o;
        unsigned module; /* the module being written */
        unsigned deps[MAX_DEPS], n_deps;
} Gen;

/* An expression's leaves: variables in scope, and the helpers h0 .. h(helpers-1) it may call. */
typedef struct Scope {
        const char *const *vars;
        unsigned n_vars;
        unsigned helpers;
        unsigned utils; /* u0 .. u(utils-1) too */
} Scope;

static uint64_t splitmix64(uint64_t *state) {
        uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

static uint64_t stream_seed(uint64_t seed, unsigned kind, unsigned index) {
        uint64_t s =
                seed ^ ((uint64_t) kind << 56) ^ ((uint64_t) index * UINT64_C(0x2545f4914f6cdd1d));

        return splitmix64(&s);
}

/* Uniform enough in [0, n) for n far below 2^64. */
static unsigned below(Gen *g, unsigned n) {
        return (unsigned) (splitmix64(&g->rng) % n);
}

static uint32_t rand32(Gen *g) {
        return (uint32_t) (splitmix64(&g->rng) >> 32);
}

static void emit_leaf(Gen *g, const Scope *s) {
        if (s->n_vars == 0 || below(g, 4) == 0)
                fprintf(g->f, "0x%08" PRIx32 "u", rand32(g));
        else
                fputs(s->vars[below(g, s->n_vars)], g->f);
}

static void emit_expr(Gen *g, const Scope *s, unsigned depth);

/* Fully parenthesised unsigned arithmetic: no precedence warnings, no undefined behaviour. k
 * picks the kind: 0-1 a leaf, 2-5 a binary operator, 6 a shift, 7-8 rotl32/mix32, 9 a helper. */
static void emit_expr_kind(Gen *g, const Scope *s, unsigned depth, unsigned k) {
        static const char *const ops[] = { "+", "-", "^", "*", "|", "&" };

        if (k == 9 && s->helpers == 0)
                k = 2;
        switch (k) {
        case 0:
        case 1: emit_leaf(g, s); break;
        case 2:
        case 3:
        case 4:
        case 5:
                fputc('(', g->f);
                emit_expr(g, s, depth - 1);
                fprintf(g->f, " %s ", ops[below(g, ELEMENTSOF(ops))]);
                emit_expr(g, s, depth - 1);
                fputc(')', g->f);
                break;
        case 6:
                fputc('(', g->f);
                emit_expr(g, s, depth - 1);
                fprintf(g->f, " %s %uu)", below(g, 2) ? ">>" : "<<", 1 + below(g, 31));
                break;
        case 7:
                fputs("rotl32(", g->f);
                emit_expr(g, s, depth - 1);
                fprintf(g->f, ", %uu)", 1 + below(g, 31));
                break;
        case 8:
                fputs("mix32(", g->f);
                emit_expr(g, s, depth - 1);
                fputc(')', g->f);
                break;
        default:
                if (s->utils > 0 && below(g, 2))
                        fprintf(g->f, "u%u(", below(g, s->utils));
                else
                        fprintf(g->f, "h%u(", below(g, s->helpers));
                emit_expr(g, s, depth - 1);
                fputs(", ", g->f);
                emit_expr(g, s, depth - 1);
                fputc(')', g->f);
                break;
        }
}

static void emit_expr(Gen *g, const Scope *s, unsigned depth) {
        emit_expr_kind(g, s, depth, depth == 0 ? 0 : below(g, 10));
}

/* Never a bare leaf: "a = a;" would be a self-assignment clang warns about. */
static void emit_operation(Gen *g, const Scope *s, unsigned depth) {
        emit_expr_kind(g, s, MAX(depth, 1u), 2 + below(g, 8));
}

static void emit_assign(Gen *g, const char *indent, const char *lhs, const Scope *s) {
        static const char *const ops[] = { "=", "+=", "^=", "-=" };

        fprintf(g->f, "%s%s %s ", indent, lhs, ops[below(g, ELEMENTSOF(ops))]);
        emit_operation(g, s, EXPR_DEPTH);
        fputs(";\n", g->f);
}

/* ---- include/common.h */

static const char common_head[] =
        "#ifndef COMMON_H\n"
        "#define COMMON_H\n"
        "\n"
        "#include <stddef.h>\n"
        "#include <stdint.h>\n"
        "#include <string.h>\n"
        "\n"
        "#define TBL_SIZE 64u\n"
        "#define TBL_MASK (TBL_SIZE - 1u)\n"
        "\n"
        "struct stats {\n"
        "        uint32_t count;\n"
        "        uint32_t sum;\n"
        "        uint32_t min;\n"
        "        uint32_t max;\n"
        "};\n"
        "\n"
        "struct ring {\n"
        "        uint32_t head;\n"
        "        uint32_t tail;\n"
        "        uint32_t slot[TBL_SIZE];\n"
        "};\n"
        "\n"
        "/* Everything a module's functions work on. */\n"
        "struct ctx {\n"
        "        uint32_t tbl[TBL_SIZE];\n"
        "        uint32_t acc;\n"
        "        struct stats st;\n"
        "        struct ring ring;\n"
        "};\n"
        "\n"
        "static inline uint32_t rotl32(uint32_t v, unsigned r)\n"
        "{\n"
        "        r &= 31u;\n"
        "        return r ? (v << r) | (v >> (32u - r)) : v;\n"
        "}\n"
        "\n"
        "static inline uint32_t mix32(uint32_t v)\n"
        "{\n"
        "        v ^= v >> 16;\n"
        "        v *= 0x85ebca6bu;\n"
        "        v ^= v >> 13;\n"
        "        v *= 0xc2b2ae35u;\n"
        "        return v ^ (v >> 16);\n"
        "}\n"
        "\n"
        "static inline void stats_add(struct stats *s, uint32_t v)\n"
        "{\n"
        "        if (s->count == 0u || v < s->min)\n"
        "                s->min = v;\n"
        "        if (v > s->max)\n"
        "                s->max = v;\n"
        "        s->sum += v;\n"
        "        s->count++;\n"
        "}\n"
        "\n"
        "static inline void ring_push(struct ring *r, uint32_t v)\n"
        "{\n"
        "        r->slot[r->head & TBL_MASK] = v;\n"
        "        r->head++;\n"
        "        if (r->head - r->tail > TBL_SIZE)\n"
        "                r->tail = r->head - TBL_SIZE;\n"
        "}\n"
        "\n"
        "static inline uint32_t ring_pop(struct ring *r)\n"
        "{\n"
        "        if (r->head == r->tail)\n"
        "                return 0u;\n"
        "        return r->slot[r->tail++ & TBL_MASK];\n"
        "}\n"
        "\n"
        /* Not t[(i * 7u + k) & TBL_MASK]: clang 14 -O2 vectorises that, for k = 0, into a
         * read of uninitialised stack (the checksum changes from run to run). */
        "static inline void ctx_scramble(struct ctx *c, uint32_t k)\n"
        "{\n"
        "        uint32_t t[TBL_SIZE];\n"
        "\n"
        "        memcpy(t, c->tbl, sizeof(t));\n"
        "        for (unsigned i = 0; i < TBL_SIZE; i++)\n"
        "                c->tbl[i] = rotl32(t[(i + k + 1u) & TBL_MASK], i & 31u) ^ k;\n"
        "}\n";

static void emit_common_h(Gen *g) {
        static const char *const ab[] = { "a", "b" };

        fprintf(g->f,
                "/* Generated by loadgen (seed 0x%016" PRIx64 "): shared by every module. */\n",
                g->o->seed);
        fputs(common_head, g->f);
        for (unsigned h = 0; h < N_HELPERS; h++) {
                Scope s = { .vars = ab, .n_vars = ELEMENTSOF(ab), .helpers = h };

                fprintf(g->f, "\nstatic inline uint32_t h%u(uint32_t a, uint32_t b)\n{\n", h);
                fputs("        return ", g->f);
                /* Both arguments used, so a helper is never a constant in disguise. */
                fputs("(a ^ b) + ", g->f);
                emit_expr(g, &s, 2);
                fputs(";\n}\n", g->f);
        }
        fputs("\n#endif\n", g->f);
}

/* ---- include/util.h */

static const char util_head[] =
        "#ifndef UTIL_H\n"
        "#define UTIL_H\n"
        "\n"
        "#include <limits.h>\n"
        "#include <stdbool.h>\n"
        "#include <stdlib.h>\n"
        "\n"
        "#include \"common.h\"\n"
        "\n"
        "struct list_node {\n"
        "        struct list_node *next;\n"
        "        struct list_node *prev;\n"
        "};\n"
        "\n"
        "static inline void list_init(struct list_node *h)\n"
        "{\n"
        "        h->next = h;\n"
        "        h->prev = h;\n"
        "}\n"
        "\n"
        "static inline void list_add(struct list_node *n, struct list_node *h)\n"
        "{\n"
        "        n->next = h->next;\n"
        "        n->prev = h;\n"
        "        h->next->prev = n;\n"
        "        h->next = n;\n"
        "}\n"
        "\n"
        "static inline bool list_empty(const struct list_node *h)\n"
        "{\n"
        "        return h->next == h;\n"
        "}\n"
        "\n"
        "#define BITMAP_WORDS 4u\n"
        "\n"
        "struct bitmap {\n"
        "        uint32_t w[BITMAP_WORDS];\n"
        "};\n"
        "\n"
        "static inline void bitmap_set(struct bitmap *m, unsigned bit)\n"
        "{\n"
        "        m->w[(bit / 32u) % BITMAP_WORDS] |= 1u << (bit % 32u);\n"
        "}\n"
        "\n"
        "static inline unsigned bitmap_weight(const struct bitmap *m)\n"
        "{\n"
        "        unsigned n = 0;\n"
        "\n"
        "        for (unsigned i = 0; i < BITMAP_WORDS; i++)\n"
        "                n += (unsigned) __builtin_popcount(m->w[i]);\n"
        "        return n;\n"
        "}\n";

/* Many small helpers, as a real project's headers have: every file parses them all, uses few. */
static void emit_util_h(Gen *g) {
        static const char *const ab[] = { "a", "b" }, *const tab[] = { "t", "a", "b" };
        static const Scope s_ab = { ab, ELEMENTSOF(ab), N_HELPERS, 0 };
        static const Scope s_tab = { tab, ELEMENTSOF(tab), N_HELPERS, 0 };

        fputs("/* Generated by loadgen: helpers every module includes. */\n", g->f);
        fputs(util_head, g->f);
        for (unsigned u = 0; u < N_UTILS; u++) {
                fprintf(g->f, "\nstatic inline uint32_t u%u(uint32_t a, uint32_t b)\n{\n", u);
                fputs("        uint32_t t = ", g->f);
                emit_expr(g, &s_ab, 2);
                fprintf(g->f, ";\n\n        if ((t & %uu) == 0u)\n                t = ",
                        (1u << (1 + below(g, 4))) - 1);
                emit_operation(g, &s_tab, 2);
                fputs(";\n        return t ^ (a + b);\n}\n", g->f);
        }
        fputs("\n#endif\n", g->f);
}

/* ---- include/mNNNN.h */

static void emit_module_h(Gen *g) {
        unsigned m = g->module, nval = 2 + below(g, 6);

        fprintf(g->f, "/* Generated by loadgen: module %u. */\n", m);
        fprintf(g->f, "#ifndef M%04u_H\n#define M%04u_H\n\n#include \"common.h\"\n\n", m, m);
        fprintf(g->f, "#define M%04u_NVAL %uu\n\n", m, nval);
        fprintf(g->f,
                "struct m%04u_rec {\n"
                "        uint32_t key;\n"
                "        uint32_t val[M%04u_NVAL];\n"
                "        uint16_t flags;\n"
                "};\n\n",
                m, m);
        fprintf(g->f,
                "static inline uint32_t m%04u_rec_hash(const struct m%04u_rec *r)\n"
                "{\n"
                "        uint32_t h = r->key ^ 0x%08" PRIx32 "u;\n"
                "\n"
                "        for (unsigned i = 0; i < M%04u_NVAL; i++)\n"
                "                h = mix32(h ^ r->val[i]);\n"
                "        return h + r->val[r->flags %% M%04u_NVAL];\n"
                "}\n\n",
                m, m, rand32(g), m, m);
        for (unsigned j = 0; j < g->o->funcs_per_file; j++)
                fprintf(g->f, "uint32_t m%04u_f%u(struct ctx *c, uint32_t x, unsigned depth);\n", m,
                        j);
        fprintf(g->f, "uint32_t m%04u_run(struct ctx *c);\n\n#endif\n", m);
}

/* ---- src/mNNNN.c */

/* Up to MAX_DEPS distinct earlier modules, from the module's own stream. */
static void module_deps(const TreeOptions *o, unsigned m, unsigned deps[static MAX_DEPS],
                        unsigned *ret_n) {
        Gen g = { .rng = stream_seed(o->seed, STREAM_DEPS, m) };
        unsigned n = 0;

        while (n < MIN(m, MAX_DEPS)) {
                unsigned d = below(&g, m);
                bool dup = false;

                for (unsigned k = 0; k < n; k++)
                        dup = dup || deps[k] == d;
                if (!dup)
                        deps[n++] = d;
        }
        *ret_n = n;
}

static const char *const fn_vars[] = { "a", "b", "x", "c->acc" };
static const char *const loop_vars[] = { "a", "b", "i", "c->tbl[i]" };

static void emit_call(Gen *g, unsigned fn) {
        static const Scope s = { fn_vars, ELEMENTSOF(fn_vars), N_HELPERS, N_UTILS };
        unsigned m = g->module, callee;

        if (fn > 0 && (g->n_deps == 0 || below(g, 2) == 0)) {
                callee = below(g, fn);
        } else {
                m = g->deps[below(g, g->n_deps)];
                callee = below(g, g->o->funcs_per_file);
        }
        fprintf(g->f, "        if (depth > 0u)\n                %s ^= m%04u_f%u(c, ",
                below(g, 2) ? "a" : "b", m, callee);
        emit_expr(g, &s, 2);
        fputs(", depth - 1u);\n", g->f);
}

static void emit_table_loop(Gen *g) {
        static const Scope s = { loop_vars, ELEMENTSOF(loop_vars), N_HELPERS, N_UTILS };

        fputs("        for (unsigned i = 0; i < TBL_SIZE; i++) {\n", g->f);
        emit_assign(g, "                ", "c->tbl[i]", &s);
        fprintf(g->f, "                a += c->tbl[(i + %uu) & TBL_MASK];\n", 1 + below(g, 63));
        fputs("        }\n", g->f);
}

static void emit_switch(Gen *g) {
        static const Scope s = { fn_vars, ELEMENTSOF(fn_vars), N_HELPERS, N_UTILS };
        unsigned n = 3 + below(g, 6);

        fputs("        switch (", g->f);
        emit_expr(g, &s, 2);
        fprintf(g->f, " %% %uu) {\n", n);
        for (unsigned k = 0; k < n; k++) {
                fprintf(g->f, "        case %u:\n", k);
                emit_assign(g, "                ", below(g, 2) ? "a" : "b", &s);
                fputs("                break;\n", g->f);
        }
        fputs("        default:\n", g->f);
        emit_assign(g, "                ", "b", &s);
        fputs("                break;\n        }\n", g->f);
}

static void emit_ring(Gen *g) {
        static const Scope s = { fn_vars, ELEMENTSOF(fn_vars), N_HELPERS, N_UTILS };

        fputs("        ring_push(&c->ring, ", g->f);
        emit_expr(g, &s, 2);
        fputs(");\n        stats_add(&c->st, ", g->f);
        emit_expr(g, &s, 2);
        fprintf(g->f,
                ");\n        if (c->st.count %% %uu == 0u)\n"
                "                b ^= ring_pop(&c->ring) + c->st.max;\n",
                2 + below(g, 7));
}

static void emit_local_array(Gen *g) {
        static const char *const vars[] = { "a", "b", "i", "t[i]" };
        static const Scope s = { vars, ELEMENTSOF(vars), N_HELPERS, N_UTILS };

        fprintf(g->f,
                "        {\n"
                "                uint32_t t[16];\n"
                "\n"
                "                for (unsigned i = 0; i < 16u; i++)\n"
                "                        t[i] = m%04u_tab[i] ^ (a + i);\n"
                "                for (unsigned i = 1; i < 16u; i++)\n",
                g->module);
        emit_assign(g, "                        ", "t[i]", &s);
        fprintf(g->f,
                "                for (unsigned i = 1; i < 16u; i++)\n"
                "                        t[i] += t[i - 1u] >> %uu;\n"
                "                b ^= t[a & 15u];\n"
                "        }\n",
                1 + below(g, 8));
}

static void emit_while(Gen *g) {
        static const Scope s = { fn_vars, ELEMENTSOF(fn_vars), N_HELPERS, N_UTILS };

        fprintf(g->f,
                "        {\n"
                "                unsigned n = (a & %uu) + 1u;\n"
                "\n"
                "                while (n-- > 0u) {\n"
                "                        if ((b & 1u) != 0u)\n"
                "                                b = b * 3u + 1u;\n"
                "                        else\n"
                "                                b >>= 1;\n",
                (1u << (2 + below(g, 3))) - 1);
        emit_assign(g, "                        ", "a", &s);
        fputs("                }\n        }\n", g->f);
}

static void emit_record(Gen *g) {
        static const char *const vars[] = { "a", "b", "i", "x" };
        static const Scope s = { vars, ELEMENTSOF(vars), N_HELPERS, N_UTILS };
        unsigned r = g->n_deps > 0 && below(g, 2) ? g->deps[below(g, g->n_deps)] : g->module;

        fprintf(g->f,
                "        {\n"
                "                struct m%04u_rec r = { .key = a ^ x, .flags = (uint16_t) (b & "
                "0xffffu) };\n"
                "\n"
                "                for (unsigned i = 0; i < M%04u_NVAL; i++)\n",
                r, r);
        emit_assign(g, "                        ", "r.val[i]", &s);
        fprintf(g->f, "                b += m%04u_rec_hash(&r);\n        }\n", r);
}

static void emit_nested(Gen *g) {
        static const char *const vars[] = { "a", "b", "i", "k" };
        static const Scope s = { vars, ELEMENTSOF(vars), N_HELPERS, N_UTILS };

        fputs("        for (unsigned i = 0; i < 8u; i++) {\n"
              "                for (unsigned k = 0; k < 8u; k++)\n",
              g->f);
        emit_assign(g, "                        ", "c->tbl[(i * 8u + k) & TBL_MASK]", &s);
        fprintf(g->f, "                b += c->tbl[(i * %uu) & TBL_MASK];\n        }\n",
                1 + below(g, 15));
}

static void emit_if_chain(Gen *g) {
        static const Scope s = { fn_vars, ELEMENTSOF(fn_vars), N_HELPERS, N_UTILS };

        /* "^ b": a comparison of two constants would be a -Wtype-limits warning. */
        fputs("        if ((", g->f);
        emit_expr(g, &s, 2);
        fprintf(g->f, " ^ b) > 0x%08" PRIx32 "u)\n", rand32(g));
        emit_assign(g, "                ", "a", &s);
        fprintf(g->f, "        else if ((b & 7u) == %uu)\n", below(g, 8));
        emit_assign(g, "                ", "b", &s);
        fprintf(g->f, "        else\n                a = m%04u_step(a, %uu);\n", g->module,
                below(g, 4));
}

static void emit_scramble(Gen *g) {
        fprintf(g->f, "        ctx_scramble(c, %s & %uu);\n", below(g, 2) ? "a" : "b",
                below(g, 64));
}

static void emit_function(Gen *g, unsigned fn) {
        static void (*const statements[])(Gen *
                                          g) = { emit_table_loop,  emit_switch,   emit_ring,
                                                 emit_local_array, emit_while,    emit_record,
                                                 emit_nested,      emit_if_chain, emit_scramble };
        unsigned n = MIN_STATEMENTS + below(g, EXTRA_STATEMENTS);
        bool can_call = fn > 0 || g->n_deps > 0, called = false;

        fprintf(g->f,
                "\nuint32_t m%04u_f%u(struct ctx *c, uint32_t x, unsigned depth)\n"
                "{\n"
                "        uint32_t a = x ^ 0x%08" PRIx32 "u;\n"
                "        uint32_t b = c->acc + 0x%08" PRIx32 "u;\n\n",
                g->module, fn, rand32(g), rand32(g));
        for (unsigned k = 0; k < n; k++) {
                /* One statement in ten is a call: nine kinds of work, one way out of the file. */
                unsigned kind = below(g, ELEMENTSOF(statements) + 1);

                if (kind == ELEMENTSOF(statements) && can_call) {
                        emit_call(g, fn);
                        called = true;
                } else {
                        statements[kind % ELEMENTSOF(statements)](g);
                }
        }
        if (can_call && !called)
                emit_call(g, fn);
        else if (!can_call)
                fputs("        b += depth;\n", g->f);
        fputs("\n        c->acc += a;\n        return a ^ b;\n}\n", g->f);
}

static void emit_module_c(Gen *g) {
        static const char *const vars[] = { "v", "k" };
        static const Scope s = { vars, ELEMENTSOF(vars), N_HELPERS, N_UTILS };
        unsigned m = g->module;

        module_deps(g->o, m, g->deps, &g->n_deps);
        fprintf(g->f, "/* Generated by loadgen: module %u. */\n#include \"util.h\"\n", m);
        fprintf(g->f, "#include \"m%04u.h\"\n", m);
        for (unsigned k = 0; k < g->n_deps; k++)
                fprintf(g->f, "#include \"m%04u.h\"\n", g->deps[k]);

        fprintf(g->f, "\nstatic const uint32_t m%04u_tab[16] = {\n", m);
        for (unsigned k = 0; k < 16; k++)
                fprintf(g->f, "%s0x%08" PRIx32 "u,%s", k % 4 == 0 ? "        " : " ", rand32(g),
                        k % 4 == 3 ? "\n" : "");
        fputs("};\n", g->f);

        fprintf(g->f, "\nstatic uint32_t m%04u_step(uint32_t v, unsigned k)\n{\n", m);
        fputs("        switch (k & 3u) {\n", g->f);
        for (unsigned k = 0; k < 4; k++) {
                fprintf(g->f, "        case %u:\n                return ", k);
                emit_expr(g, &s, EXPR_DEPTH);
                fputs(";\n", g->f);
        }
        fputs("        }\n        return v;\n}\n", g->f);

        for (unsigned fn = 0; fn < g->o->funcs_per_file; fn++)
                emit_function(g, fn);

        fprintf(g->f,
                "\nuint32_t m%04u_run(struct ctx *c)\n"
                "{\n"
                "        uint32_t sum = m%04u_step(c->acc, %uu) ^ m%04u_tab[c->acc & 15u];\n\n",
                m, m, below(g, 4), m);
        for (unsigned fn = 0; fn < g->o->funcs_per_file; fn++)
                fprintf(g->f, "        sum += m%04u_f%u(c, sum, %uu);\n", m, fn, RUN_DEPTH);
        fputs("        return sum;\n}\n", g->f);
}

/* ---- src/main.c and the Makefile */

static void emit_main_c(Gen *g) {
        fputs("/* Generated by loadgen: runs every module once, prints a checksum. */\n"
              "#include <stdio.h>\n\n#include \"common.h\"\n",
              g->f);
        for (unsigned m = 0; m < g->o->files; m++)
                fprintf(g->f, "#include \"m%04u.h\"\n", m);
        fputs("\nint main(void)\n{\n        static struct ctx c;\n        uint32_t sum = 0u;\n\n",
              g->f);
        for (unsigned m = 0; m < g->o->files; m++)
                fprintf(g->f, "        sum ^= m%04u_run(&c);\n", m);
        fputs("        printf(\"%08x\\n\", (unsigned) sum);\n        return 0;\n}\n", g->f);
}

static void emit_makefile(Gen *g) {
        fprintf(g->f,
                "# Generated by loadgen: %u files of %u functions, seed 0x%016" PRIx64 ".\n"
                "# Only CC comes from outside (make's default: cc), so every run compiles the "
                "same.\n"
                "MAKEFLAGS += --no-builtin-rules\n"
                "CFLAGS := -O2 -Wall -Iinclude\n"
                "LDFLAGS :=\n"
                "LDLIBS :=\n"
                "PROG := prog\n"
                "SRCS := src/main.c",
                g->o->files, g->o->funcs_per_file, g->o->seed);
        for (unsigned m = 0; m < g->o->files; m++)
                fprintf(g->f, " \\\n\tsrc/m%04u.c", m);
        fputs("\n"
              "OBJS := $(SRCS:src/%.c=obj/%.o)\n"
              "\n"
              ".SUFFIXES:\n"
              ".DELETE_ON_ERROR:\n"
              ".PHONY: all clean\n"
              "\n"
              "all: $(PROG)\n"
              "\n"
              "$(PROG): $(OBJS)\n"
              "\t$(CC) $(LDFLAGS) -o $@ $(OBJS) $(LDLIBS)\n"
              "\n"
              "obj/%.o: src/%.c | obj\n"
              "\t$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<\n"
              "\n"
              "obj:\n"
              "\tmkdir -p $@\n"
              "\n"
              "clean:\n"
              "\trm -rf obj $(PROG)\n"
              "\n"
              "-include $(OBJS:.o=.d)\n",
              g->f);
}

/* ---- writing */

static int write_file(int dirfd, const char *path, Gen *g, void (*emit)(Gen *g)) {
        _cleanup_close_ int fd = -EBADF;
        int r = 0;

        fd = openat(dirfd, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0644);
        if (fd < 0)
                return negative_errno();
        g->f = fdopen(fd, "w");
        if (!g->f)
                return negative_errno();
        TAKE_FD(fd); /* the FILE owns it now */
        emit(g);
        if (ferror(g->f))
                r = -EIO;
        if (fclose(g->f) != 0 && r == 0)
                r = negative_errno();
        g->f = NULL;
        return r;
}

static int dir_is_empty(int dirfd) {
        _cleanup_close_ int fd = -EBADF;
        struct dirent *de;
        DIR *d;
        int r = 0;

        fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        d = fdopendir(fd);
        if (!d)
                return negative_errno();
        TAKE_FD(fd);
        errno = 0;
        while ((de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, "..")) {
                        r = -ENOTEMPTY;
                        break;
                }
        if (r == 0 && errno != 0)
                r = negative_errno();
        (void) closedir(d);
        return r;
}

void tree_options_init(TreeOptions *o, bool quick) {
        *o = (TreeOptions){
                .files = quick ? TREE_QUICK_FILES : TREE_DEFAULT_FILES,
                .funcs_per_file = quick ? TREE_QUICK_FUNCS_PER_FILE : TREE_DEFAULT_FUNCS_PER_FILE,
                .seed = TREE_DEFAULT_SEED,
        };
}

static int write_modules(int dirfd, const TreeOptions *o) {
        char path[64];
        int r;

        for (unsigned m = 0; m < o->files; m++) {
                Gen g = { .o = o, .module = m, .rng = stream_seed(o->seed, STREAM_HEADER, m) };

                (void) snprintf(path, sizeof(path), "include/m%04u.h", m);
                r = write_file(dirfd, path, &g, emit_module_h);
                if (r < 0)
                        return r;
                g.rng = stream_seed(o->seed, STREAM_SOURCE, m);
                (void) snprintf(path, sizeof(path), "src/m%04u.c", m);
                r = write_file(dirfd, path, &g, emit_module_c);
                if (r < 0)
                        return r;
        }
        return 0;
}

int tree_generate(const char *dir, const TreeOptions *o) {
        _cleanup_close_ int dirfd = -EBADF;
        Gen g = { .o = o };
        int r;

        if (!dir || !o || o->files == 0 || o->funcs_per_file == 0)
                return -EINVAL;
        if (o->files > TREE_MAX_FILES || o->funcs_per_file > TREE_MAX_FUNCS_PER_FILE)
                return -ERANGE;
        dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0)
                return negative_errno();
        r = dir_is_empty(dirfd);
        if (r < 0)
                return r;
        if (mkdirat(dirfd, "include", 0755) < 0 || mkdirat(dirfd, "src", 0755) < 0)
                return negative_errno();

        g.rng = stream_seed(o->seed, STREAM_COMMON, 0);
        r = write_file(dirfd, "include/common.h", &g, emit_common_h);
        if (r < 0)
                return r;
        g.rng = stream_seed(o->seed, STREAM_UTIL, 0);
        r = write_file(dirfd, "include/util.h", &g, emit_util_h);
        if (r < 0)
                return r;
        r = write_modules(dirfd, o);
        if (r < 0)
                return r;
        r = write_file(dirfd, "src/main.c", &g, emit_main_c);
        if (r < 0)
                return r;
        return write_file(dirfd, "Makefile", &g, emit_makefile);
}

/* ---- eviction */

static int evict_file(int dirfd, const char *name) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        /* Dirty pages cannot be dropped: write them out first. */
        if (fdatasync(fd) < 0)
                return negative_errno();
        r = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        return r > 0 ? -r : 0;
}

static int evict_at(int dirfd, dev_t dev, unsigned depth) {
        struct dirent *de;
        int fd, r = 0;
        DIR *d;

        if (depth > EVICT_MAX_DEPTH)
                return -ELOOP;
        fd = dup(dirfd);
        if (fd < 0)
                return negative_errno();
        d = fdopendir(fd);
        if (!d) {
                r = negative_errno();
                (void) close(fd);
                return r;
        }
        rewinddir(d);
        while ((errno = 0, de = readdir(d))) {
                struct stat st;
                int q = 0;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        q = negative_errno();
                } else if (S_ISREG(st.st_mode)) {
                        q = evict_file(dirfd, de->d_name);
                } else if (S_ISDIR(st.st_mode) && st.st_dev == dev) {
                        _cleanup_close_ int sub = openat(
                                dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                        q = sub < 0 ? negative_errno() : evict_at(sub, dev, depth + 1);
                }
                if (q < 0 && r == 0)
                        r = q;
        }
        if (errno != 0 && r == 0)
                r = negative_errno();
        (void) closedir(d);
        return r;
}

int tree_evict(const char *dir) {
        _cleanup_close_ int dirfd = -EBADF;
        struct stat st;

        if (!dir)
                return -EINVAL;
        dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0 || fstat(dirfd, &st) < 0)
                return negative_errno();
        return evict_at(dirfd, st.st_dev, 0);
}
