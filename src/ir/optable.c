/*
 * optable.c — the op table built from ops.def, and its public queries
 * (rlx_op_count / rlx_op_name / ...), used by `rlx ops` and error messages.
 */
#include "ir/shape_rules.h"

static const ir_op_info op_table[IR_OP_COUNT] = {
#define X(id, nm, arity, rule, doc) [IR_OP_##id] = {nm, arity, rule, doc},
#include "ir/ops.def"
#undef X
};

_Static_assert(RLX_OP_ARITY_VARIADIC == -1, "ops.def writes a variadic arity as -1");

const ir_op_info *ir_op_info_get(ir_op op) { return &op_table[op]; }

int rlx_op_count(void) { return IR_OP_COUNT; }

/* An op outside the table: a message, and the caller returns its failure value. */
static bool op_valid(int op, const char *fn) {
    if ((unsigned)op < IR_OP_COUNT) return true;
    rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: op %d is outside [0, %d)", fn, op, (int)IR_OP_COUNT);
    return false;
}

const char *rlx_op_name(int op) { return op_valid(op, "rlx_op_name") ? op_table[op].name : NULL; }

int rlx_op_arity(int op) { return op_valid(op, "rlx_op_arity") ? op_table[op].arity : RLX_OP_ARITY_INVALID; }

const char *rlx_op_doc(int op) { return op_valid(op, "rlx_op_doc") ? op_table[op].doc : NULL; }

/* ------------------------------------------------ attributes (op_attrs.def) */

static const ir_attr_family op_attr_family[IR_OP_COUNT] = {
#define ATTR_OP(id, family) [IR_OP_##id] = IR_ATTR_FAMILY_##family,
#include "ir/op_attrs.def"
};

static const char *const attr_family_names[IR_ATTR_FAMILY_COUNT][2] = {
    [IR_ATTR_FAMILY_NONE] = {"", ""},
#define ATTR_FAMILY(family, doc) [IR_ATTR_FAMILY_##family] = {#family, doc},
#include "ir/op_attrs.def"
};

static const ir_attr_desc attr_table[] = {
#define IA(family, slot, name, doc) {IR_ATTR_FAMILY_##family, IR_ATTR_INT, slot, #name, doc},
#define IAV(family, slot, name, doc) {IR_ATTR_FAMILY_##family, IR_ATTR_INT_DIMS, slot, #name, doc},
#define FA(family, slot, name, doc) {IR_ATTR_FAMILY_##family, IR_ATTR_FLOAT, slot, #name, doc},
#include "ir/op_attrs.def"
};

ir_attr_family ir_op_attr_family(ir_op op) { return (unsigned)op < IR_OP_COUNT ? op_attr_family[op] : IR_ATTR_FAMILY_NONE; }

const char *ir_attr_family_name(ir_attr_family f) { return (unsigned)f < IR_ATTR_FAMILY_COUNT ? attr_family_names[f][0] : ""; }

const char *ir_attr_family_doc(ir_attr_family f) { return (unsigned)f < IR_ATTR_FAMILY_COUNT ? attr_family_names[f][1] : ""; }

const ir_attr_desc *ir_attr_table(int *count) {
    *count = (int)(sizeof attr_table / sizeof attr_table[0]);
    return attr_table;
}
