/*
 * tj_regex.c — the small regular expressions of tokenizer.json "Replace"
 * normalizers (" {2,}", "\s+", "[\t\n]"...), compiled at load and run as a
 * Pike VM over code points: every thread advances in lockstep, so a search
 * costs O(text x program) whatever the pattern, with no backtracking.
 * Thread priority gives the leftmost-first matches of the Rust regex crate
 * that Hugging Face uses, and replacement walks them left to right without
 * overlap, as its find_iter does.
 *
 * The subset: literal characters; '.' (anything but '\n'); escapes \s \S
 * (White_Space) \d \D (category Nd) \t \n \r \f \v, \xHH, \x{H...} and
 * escaped punctuation; classes [...] and [^...] of those, with ranges;
 * groups (...) and (?:...); alternation |; greedy quantifiers * + ? {m}
 * {m,} {m,n} (m, n <= 1000). Anything else (anchors, \w, \b, \p{..},
 * lazy quantifiers, flags, lookaround, nested classes) is UNSUPPORTED, and
 * so is a pattern that can match the empty string (where the replacement
 * would go is not well defined) or one that compiles past MAX_PROG.
 */
#include "models/tj_internal.h"
#include "core/json.h"
#include "models/unicode.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_PROG = 4096, MAX_NODES = 1024, MAX_REPEAT = 1000 };
enum { OP_CLASS, OP_SPLIT, OP_JMP, OP_MATCH };
enum { K_CLASS, K_CAT, K_ALT, K_REP, K_EMPTY };
enum { F_SPACE = 1, F_NOSPACE = 2, F_DIGIT = 4, F_NODIGIT = 8, F_NEGATE = 16 };

typedef struct rx_class { uint32_t *r; size_t n; unsigned flags; } rx_class;   /* r: [lo, hi] pairs */
typedef struct rx_inst { int op, x, y; } rx_inst;
typedef struct rx_node { int kind, a, b, min, max; } rx_node;   /* CAT/ALT: a, b; REP: a; CLASS: a = class */

struct tj_regex {
    rx_inst  *prog;
    int       n_prog;
    rx_class *cls;
    int       n_cls;
};

typedef struct parser {
    const uint32_t *p;
    size_t          i, n;
    rx_node         nodes[MAX_NODES];
    int             n_nodes;
    tj_regex       *re;
    const char     *why;           /* set on failure */
} parser;

static int node(parser *ps, int kind, int a, int b, int min, int max) {
    if (ps->n_nodes == MAX_NODES) { ps->why = "too many parts"; return -1; }
    ps->nodes[ps->n_nodes] = (rx_node){kind, a, b, min, max};
    return ps->n_nodes++;
}

static bool class_add(rx_class *c, uint32_t lo, uint32_t hi) {
    uint32_t *r = realloc(c->r, (c->n + 1) * 2 * sizeof *r);
    if (!r) return false;
    c->r = r;
    r[c->n * 2] = lo;
    r[c->n * 2 + 1] = hi;
    c->n++;
    return true;
}

static int new_class(parser *ps) {
    tj_regex *re = ps->re;
    rx_class *v = realloc(re->cls, (size_t)(re->n_cls + 1) * sizeof *v);
    if (!v) { ps->why = "out of memory"; return -1; }
    re->cls = v;
    v[re->n_cls] = (rx_class){0};
    return re->n_cls++;
}

static bool at_end(const parser *ps) { return ps->i >= ps->n; }
static uint32_t peek(const parser *ps) { return at_end(ps) ? 0 : ps->p[ps->i]; }

static long hex_digits(parser *ps, size_t max) {
    long v = 0;
    size_t k = 0;
    for (; k < max && !at_end(ps); k++) {
        uint32_t c = peek(ps);
        int d = c >= '0' && c <= '9' ? (int)(c - '0') : c >= 'a' && c <= 'f' ? (int)(c - 'a' + 10) : c >= 'A' && c <= 'F' ? (int)(c - 'A' + 10) : -1;
        if (d < 0) break;
        v = v * 16 + d;
        ps->i++;
    }
    return k ? v : -1;
}

/* After '\': a literal into *cp, or a class flag into *flag; false: unsupported. */
static bool escape(parser *ps, uint32_t *cp, unsigned *flag) {
    *flag = 0;
    if (at_end(ps)) { ps->why = "a trailing backslash"; return false; }
    uint32_t c = ps->p[ps->i++];
    switch (c) {
    case 's': *flag = F_SPACE; return true;
    case 'S': *flag = F_NOSPACE; return true;
    case 'd': *flag = F_DIGIT; return true;
    case 'D': *flag = F_NODIGIT; return true;
    case 't': *cp = '\t'; return true;
    case 'n': *cp = '\n'; return true;
    case 'r': *cp = '\r'; return true;
    case 'f': *cp = '\f'; return true;
    case 'v': *cp = '\v'; return true;
    case 'x': {
        long v;
        if (peek(ps) == '{') {
            ps->i++;
            v = hex_digits(ps, 8);
            if (peek(ps) != '}') v = -1;
            else ps->i++;
        } else {
            v = hex_digits(ps, 2);
        }
        if (v < 0 || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) { ps->why = "a malformed \\x escape"; return false; }
        *cp = (uint32_t)v;
        return true;
    }
    }
    if (c < 0x80 && c > ' ' && !(c >= '0' && c <= '9') && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z')) {
        *cp = c;   /* escaped punctuation */
        return true;
    }
    ps->why = "an escape outside the subset (\\s \\S \\d \\D \\t \\n \\r \\f \\v \\x, punctuation)";
    return false;
}

/* One class member (char, escape); false: unsupported or the end. */
static bool class_atom(parser *ps, uint32_t *cp, unsigned *flag) {
    *flag = 0;
    if (at_end(ps)) { ps->why = "an unclosed ["; return false; }
    uint32_t c = ps->p[ps->i++];
    if (c == '\\') return escape(ps, cp, flag);
    if (c == '[' || (c == '&' && peek(ps) == '&') || (c == '~' && peek(ps) == '~') || (c == '-' && peek(ps) == '-')) {
        ps->why = "nested classes or class set operations";
        return false;
    }
    *cp = c;
    return true;
}

static int parse_class(parser *ps) {
    int k = new_class(ps);
    if (k < 0) return -1;
    rx_class *c = &ps->re->cls[k];
    if (peek(ps) == '^') { c->flags |= F_NEGATE; ps->i++; }
    bool first = true;
    for (;;) {
        if (at_end(ps)) { ps->why = "an unclosed ["; return -1; }
        if (peek(ps) == ']' && !first) { ps->i++; break; }
        first = false;
        uint32_t lo, hi;
        unsigned f;
        if (!class_atom(ps, &lo, &f)) return -1;
        c = &ps->re->cls[k];
        if (f) { c->flags |= f; continue; }
        hi = lo;
        if (peek(ps) == '-' && ps->i + 1 < ps->n && ps->p[ps->i + 1] != ']') {
            ps->i++;
            if (!class_atom(ps, &hi, &f)) return -1;
            if (f || hi < lo) { ps->why = "a bad class range"; return -1; }
        }
        if (!class_add(c, lo, hi)) { ps->why = "out of memory"; return -1; }
    }
    return node(ps, K_CLASS, k, 0, 0, 0);
}

static int literal_class(parser *ps, uint32_t lo, uint32_t hi, unsigned flags) {
    int k = new_class(ps);
    if (k < 0) return -1;
    rx_class *c = &ps->re->cls[k];
    c->flags = flags;
    if (!flags && !class_add(c, lo, hi)) { ps->why = "out of memory"; return -1; }
    return node(ps, K_CLASS, k, 0, 0, 0);
}

static int parse_alt(parser *ps, int depth);

static int parse_atom(parser *ps, int depth) {
    uint32_t c = ps->p[ps->i++];
    if (c == '(') {
        if (peek(ps) == '?') {
            if (ps->i + 1 < ps->n && ps->p[ps->i + 1] == ':') ps->i += 2;
            else { ps->why = "group flags or lookaround"; return -1; }
        }
        int a = parse_alt(ps, depth + 1);
        if (a < 0) return -1;
        if (peek(ps) != ')') { ps->why = "an unclosed ("; return -1; }
        ps->i++;
        return a;
    }
    if (c == '[') return parse_class(ps);
    if (c == '.') {   /* everything but '\n' */
        int k = literal_class(ps, '\n', '\n', 0);
        if (k >= 0) ps->re->cls[ps->nodes[k].a].flags = F_NEGATE;
        return k;
    }
    if (c == '\\') {
        uint32_t cp = 0;
        unsigned f;
        if (!escape(ps, &cp, &f)) return -1;
        return literal_class(ps, cp, cp, f);
    }
    if (c == '^' || c == '$') { ps->why = "anchors"; return -1; }
    if (c == '*' || c == '+' || c == '?' || c == '{' || c == ')') { ps->why = "a quantifier or ')' with nothing before it"; return -1; }
    return literal_class(ps, c, c, 0);
}

static bool number(parser *ps, int *v) {
    if (at_end(ps) || peek(ps) < '0' || peek(ps) > '9') return false;
    long x = 0;
    while (!at_end(ps) && peek(ps) >= '0' && peek(ps) <= '9') {
        x = x * 10 + (long)(peek(ps) - '0');
        ps->i++;
        if (x > MAX_REPEAT) return false;
    }
    *v = (int)x;
    return true;
}

static int parse_repeat(parser *ps, int depth) {
    int a = parse_atom(ps, depth);
    if (a < 0 || at_end(ps)) return a;
    int min, max;
    uint32_t c = peek(ps);
    if (c == '*') { min = 0; max = -1; }
    else if (c == '+') { min = 1; max = -1; }
    else if (c == '?') { min = 0; max = 1; }
    else if (c == '{') {
        ps->i++;
        if (!number(ps, &min)) { ps->why = "a malformed or too large {m,n}"; return -1; }
        max = min;
        if (peek(ps) == ',') {
            ps->i++;
            max = -1;
            if (peek(ps) != '}' && (!number(ps, &max) || max < min)) { ps->why = "a malformed or too large {m,n}"; return -1; }
        }
        if (peek(ps) != '}') { ps->why = "a malformed {m,n}"; return -1; }
    } else {
        return a;
    }
    ps->i++;
    c = peek(ps);
    if (c == '?' || c == '*' || c == '+' || c == '{') { ps->why = "lazy or stacked quantifiers"; return -1; }
    return node(ps, K_REP, a, 0, min, max);
}

static int parse_cat(parser *ps, int depth) {
    int acc = -1;
    while (!at_end(ps) && peek(ps) != '|' && peek(ps) != ')') {
        int r = parse_repeat(ps, depth);
        if (r < 0) return -1;
        acc = acc < 0 ? r : node(ps, K_CAT, acc, r, 0, 0);
        if (acc < 0) return -1;
    }
    return acc < 0 ? node(ps, K_EMPTY, 0, 0, 0, 0) : acc;
}

static int parse_alt(parser *ps, int depth) {
    if (depth > 32) { ps->why = "groups nested too deep"; return -1; }
    int a = parse_cat(ps, depth);
    while (a >= 0 && peek(ps) == '|' && !at_end(ps)) {
        ps->i++;
        int b = parse_cat(ps, depth);
        a = b < 0 ? -1 : node(ps, K_ALT, a, b, 0, 0);
    }
    return a;
}

static bool nullable(const parser *ps, int k) {
    const rx_node *x = &ps->nodes[k];
    switch (x->kind) {
    case K_CLASS: return false;
    case K_CAT:   return nullable(ps, x->a) && nullable(ps, x->b);
    case K_ALT:   return nullable(ps, x->a) || nullable(ps, x->b);
    case K_REP:   return x->min == 0 || nullable(ps, x->a);
    default:      return true;
    }
}

/* ----------------------------------------------------------- emitting */

static int emit(tj_regex *re, int op, int x, int y) {
    if (re->n_prog >= MAX_PROG) return -1;
    re->prog[re->n_prog] = (rx_inst){op, x, y};
    return re->n_prog++;
}

static bool gen(parser *ps, int k) {
    tj_regex *re = ps->re;
    const rx_node *x = &ps->nodes[k];
    switch (x->kind) {
    case K_CLASS: return emit(re, OP_CLASS, x->a, 0) >= 0;
    case K_EMPTY: return true;
    case K_CAT:   return gen(ps, x->a) && gen(ps, x->b);
    case K_ALT: {
        int s = emit(re, OP_SPLIT, 0, 0);
        if (s < 0 || !gen(ps, x->a)) return false;
        int j = emit(re, OP_JMP, 0, 0);
        if (j < 0) return false;
        re->prog[s].x = s + 1;
        re->prog[s].y = re->n_prog;
        if (!gen(ps, x->b)) return false;
        re->prog[j].x = re->n_prog;
        return true;
    }
    case K_REP: {
        for (int i = 0; i < x->min; i++)
            if (!gen(ps, x->a)) return false;
        if (x->max < 0) {   /* star: L: split body, out; body; jmp L */
            int s = emit(re, OP_SPLIT, 0, 0);
            if (s < 0 || !gen(ps, x->a) || emit(re, OP_JMP, s, 0) < 0) return false;
            re->prog[s].x = s + 1;
            re->prog[s].y = re->n_prog;
            return true;
        }
        int first = re->n_prog, opt = x->max - x->min;
        for (int i = 0; i < opt; i++) {   /* split next, out; body ... (patched below) */
            if (emit(re, OP_SPLIT, re->n_prog + 1, -1) < 0 || !gen(ps, x->a)) return false;
        }
        for (int i = first; i < re->n_prog; i++)
            if (re->prog[i].op == OP_SPLIT && re->prog[i].y == -1) re->prog[i].y = re->n_prog;
        return true;
    }
    }
    return false;
}

rlx_status tj_regex_compile(const char *where, const char *pat, size_t n, tj_regex **out) {
    *out = NULL;
    parser *ps = calloc(1, sizeof *ps);
    tj_regex *re = calloc(1, sizeof *re);
    uint32_t *cps = malloc((n + 1) * sizeof *cps);
    rx_inst *prog = malloc(MAX_PROG * sizeof *prog);
    if (!ps || !re || !cps || !prog) { free(ps); free(re); free(cps); free(prog); return tj_oom(); }
    re->prog = prog;
    size_t m = 0;
    for (size_t i = 0; i < n;) i += uni_utf8_decode((const uint8_t *)pat + i, n - i, &cps[m++]);
    *ps = (parser){.p = cps, .n = m, .re = re};
    int root = parse_alt(ps, 0);
    if (root >= 0 && !at_end(ps)) { ps->why = "an unmatched )"; root = -1; }
    if (root >= 0 && nullable(ps, root)) { ps->why = "it can match the empty string"; root = -1; }
    if (root >= 0 && !(gen(ps, root) && emit(re, OP_MATCH, 0, 0) >= 0)) { ps->why = "it compiles too large"; root = -1; }
    rlx_status st = RLX_OK;
    if (root < 0) {
        char shown[80];
        json_printable(shown, sizeof shown, pat, n);
        st = strcmp(ps->why, "out of memory") == 0 ? tj_oom()
             : rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: the Regex '%s' is outside rlx's subset: %s", where, shown, ps->why);
        tj_regex_free(re);
    } else {
        *out = re;
    }
    free(cps);
    free(ps);
    return st;
}

void tj_regex_free(tj_regex *re) {
    if (!re) return;
    for (int i = 0; i < re->n_cls; i++) free(re->cls[i].r);
    free(re->cls);
    free(re->prog);
    free(re);
}

/* ----------------------------------------------------------- matching */

static bool class_has(const rx_class *c, uint32_t cp) {
    bool in = false;
    for (size_t i = 0; i < c->n && !in; i++) in = cp >= c->r[2 * i] && cp <= c->r[2 * i + 1];
    if (!in && c->flags & (F_SPACE | F_NOSPACE)) {
        bool sp = uni_is_white_space(cp);
        in = (c->flags & F_SPACE && sp) || (c->flags & F_NOSPACE && !sp);
    }
    if (!in && c->flags & (F_DIGIT | F_NODIGIT)) {
        bool d = uni_category(cp) == UNI_Nd;
        in = (c->flags & F_DIGIT && d) || (c->flags & F_NODIGIT && !d);
    }
    return in != ((c->flags & F_NEGATE) != 0);
}

typedef struct rx_list { int *pc; size_t *start; int n; } rx_list;

typedef struct rx_vm {
    const tj_regex *re;
    unsigned *mark, gen;           /* mark[pc] == gen: pc is on the list being built */
    int      *stack;
} rx_vm;

/* Adds pc's closure over SPLIT / JMP to l, in priority order. */
static void add_thread(rx_vm *vm, rx_list *l, int pc, size_t start) {
    int top = 0;
    vm->stack[top++] = pc;
    while (top) {
        int p = vm->stack[--top];
        if (vm->mark[p] == vm->gen) continue;
        vm->mark[p] = vm->gen;
        const rx_inst *in = &vm->re->prog[p];
        if (in->op == OP_JMP) vm->stack[top++] = in->x;
        else if (in->op == OP_SPLIT) { vm->stack[top++] = in->y; vm->stack[top++] = in->x; }
        else { l->pc[l->n] = p; l->start[l->n] = start; l->n++; }
    }
}

bool tj_regex_replace(const tj_regex *re, const uint32_t *a, size_t n, const uint32_t *con, size_t ncon, tj_cps *out) {
    int np = re->n_prog;
    rx_vm vm = {re, calloc((size_t)np, sizeof *vm.mark), 0, malloc((size_t)(2 * np + 2) * sizeof *vm.stack)};
    rx_list l[2];
    for (int k = 0; k < 2; k++) l[k] = (rx_list){malloc((size_t)np * sizeof *l[k].pc), malloc((size_t)np * sizeof(size_t)), 0};
    bool ok = vm.mark && vm.stack && l[0].pc && l[0].start && l[1].pc && l[1].start;
    size_t from = 0;
    while (ok && from < n) {
        bool found = false;
        size_t ms = 0, me = 0;
        rx_list *cur = &l[0], *nxt = &l[1];
        cur->n = 0;
        vm.gen++;
        for (size_t pos = from;; pos++) {
            if (!found && pos < n) add_thread(&vm, cur, 0, pos);   /* a later start: lowest priority */
            if (cur->n == 0) break;
            nxt->n = 0;
            vm.gen++;
            for (int t = 0; t < cur->n; t++) {
                const rx_inst *in = &re->prog[cur->pc[t]];
                if (in->op == OP_MATCH) {   /* threads after this one lose to it */
                    found = true;
                    ms = cur->start[t];
                    me = pos;
                    break;
                }
                if (pos < n && class_has(&re->cls[in->x], a[pos])) add_thread(&vm, nxt, cur->pc[t] + 1, cur->start[t]);
            }
            rx_list *sw = cur; cur = nxt; nxt = sw;
            if (pos >= n) break;
        }
        size_t end = found ? ms : n;
        for (size_t i = from; i < end && ok; i++) ok = tj_cps_push(out, a[i]);
        if (!found) break;
        for (size_t k = 0; k < ncon && ok; k++) ok = tj_cps_push(out, con[k]);
        from = me;   /* me > ms: no pattern matches the empty string */
    }
    free(vm.mark);
    free(vm.stack);
    for (int k = 0; k < 2; k++) { free(l[k].pc); free(l[k].start); }
    return ok;
}
