/*
 * op_attrs.h — named accessors for op attributes, generated from
 * ir/op_attrs.def: ir_attr_<family>_<name>(n) reads, ir_attr_set_<family>_<name>
 * (n, v) writes, and the table that `rlx dump` and the op-table test walk.
 * Included by ir/ir.h after ir_node; nothing else indexes ia[] / fa[].
 *
 * Each accessor asserts that the node's op carries that family, so reading
 * an attribute an op does not have fails in debug builds.
 */
#ifndef RLX_IR_OP_ATTRS_H
#define RLX_IR_OP_ATTRS_H

#include <assert.h>

typedef enum ir_attr_family {
    IR_ATTR_FAMILY_NONE,
#define ATTR_FAMILY(family, doc) IR_ATTR_FAMILY_##family,
#include "ir/op_attrs.def"
    IR_ATTR_FAMILY_COUNT
} ir_attr_family;

typedef enum ir_attr_kind {
    IR_ATTR_INT,       /* ia[slot] */
    IR_ATTR_INT_DIMS,  /* ia[slot + i] for each output dim i */
    IR_ATTR_FLOAT,     /* fa[slot] */
} ir_attr_kind;

typedef struct ir_attr_desc {
    ir_attr_family family;
    ir_attr_kind   kind;
    int            slot;
    const char    *name;
    const char    *doc;
} ir_attr_desc;

/* The family an op's attributes belong to (NONE: it has none). */
ir_attr_family ir_op_attr_family(ir_op op);
/* A family's name ("matmul") and the ops it documents. */
const char *ir_attr_family_name(ir_attr_family f);
const char *ir_attr_family_doc(ir_attr_family f);
/* Every attribute, in op_attrs.def order. */
const ir_attr_desc *ir_attr_table(int *count);
/* Zeroes every slot (a node rebuilt as an op without attributes). */
static inline void ir_attrs_clear(ir_node *n) {
    for (int i = 0; i < IR_MAX_IATTR; i++) n->ia[i] = 0;
    for (int i = 0; i < IR_MAX_FATTR; i++) n->fa[i] = 0;
}

#define IA(family, slot, name, doc)                                                             \
    _Static_assert((slot) < IR_MAX_IATTR, #family "." #name ": int slot out of range");         \
    static inline int64_t ir_attr_##family##_##name(const ir_node *n) {                         \
        assert(ir_op_attr_family(n->op) == IR_ATTR_FAMILY_##family);                            \
        return n->ia[slot];                                                                     \
    }                                                                                           \
    static inline void ir_attr_set_##family##_##name(ir_node *n, int64_t v) {                   \
        assert(ir_op_attr_family(n->op) == IR_ATTR_FAMILY_##family);                            \
        n->ia[slot] = v;                                                                        \
    }
#define IAV(family, slot, name, doc)                                                            \
    _Static_assert((slot) + IR_MAX_RANK <= IR_MAX_IATTR, #family "." #name ": dims overflow");  \
    static inline int64_t ir_attr_##family##_##name(const ir_node *n, int i) {                  \
        assert(ir_op_attr_family(n->op) == IR_ATTR_FAMILY_##family && i >= 0 && i < IR_MAX_RANK); \
        return n->ia[(slot) + i];                                                               \
    }                                                                                           \
    static inline const int64_t *ir_attr_##family##_##name##_dims(const ir_node *n) {           \
        assert(ir_op_attr_family(n->op) == IR_ATTR_FAMILY_##family);                            \
        return &n->ia[slot];                                                                    \
    }                                                                                           \
    static inline void ir_attr_set_##family##_##name(ir_node *n, int i, int64_t v) {            \
        assert(ir_op_attr_family(n->op) == IR_ATTR_FAMILY_##family && i >= 0 && i < IR_MAX_RANK); \
        n->ia[(slot) + i] = v;                                                                  \
    }
#define FA(family, slot, name, doc)                                                             \
    _Static_assert((slot) < IR_MAX_FATTR, #family "." #name ": float slot out of range");       \
    static inline double ir_attr_##family##_##name(const ir_node *n) {                          \
        assert(ir_op_attr_family(n->op) == IR_ATTR_FAMILY_##family);                            \
        return n->fa[slot];                                                                     \
    }                                                                                           \
    static inline void ir_attr_set_##family##_##name(ir_node *n, double v) {                    \
        assert(ir_op_attr_family(n->op) == IR_ATTR_FAMILY_##family);                            \
        n->fa[slot] = v;                                                                        \
    }
#include "ir/op_attrs.def"

#endif
