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
