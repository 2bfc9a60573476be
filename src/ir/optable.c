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

const ir_op_info *ir_op_info_get(ir_op op) { return &op_table[op]; }

int rlx_op_count(void) { return IR_OP_COUNT; }

const char *rlx_op_name(int op) { return (unsigned)op < IR_OP_COUNT ? op_table[op].name : NULL; }

int rlx_op_arity(int op) { return (unsigned)op < IR_OP_COUNT ? op_table[op].arity : -1; }

const char *rlx_op_doc(int op) { return (unsigned)op < IR_OP_COUNT ? op_table[op].doc : NULL; }
