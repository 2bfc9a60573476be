/*
 * test_planner.c — the memory planner against a brute-force validator: on
 * random graphs no two simultaneously live arena tensors overlap, views alias
 * their source, and the arena never exceeds the sum of tensor bytes. Also
 * checks that the validator itself catches a corrupted plan.
 */
#include "harness.h"
#include "passes/passes.h"
#include <math.h>
#include <stdlib.h>

/* A random DAG of elementwise ops, reshapes, slices and matmuls over [R,C]
 * tensors; every node has a random earlier operand, some become outputs. */
static rlx_graph *random_graph(int n_ops) {
    rlx_graph *g = rlx_graph_new();
    int64_t rows = test_rand_int(1, 9), cols = test_rand_int(1, 40);
    int64_t d[2] = {rows, cols}, wd[2] = {cols, cols};
    rlx_node pool[256];
    int n = 0;
    pool[n++] = rlx_input(g, "x", RLX_F32, 2, d);
    pool[n++] = rlx_input(g, "z", RLX_F32, 2, d);
    rlx_node w = rlx_param(g, "w", RLX_F32, 2, wd);
    for (int i = 0; i < n_ops && n < 256; i++) {
        rlx_node a = pool[test_rand_int(0, n - 1)], b = pool[test_rand_int(0, n - 1)], y;
        switch (test_rand_int(0, 5)) {
        case 0: y = rlx_add(g, a, b); break;
        case 1: y = rlx_mul(g, a, b); break;
        case 2: y = rlx_tanh(g, a); break;
        case 3: { int64_t r[1] = {rows * cols}; int64_t back[2] = {rows, cols};
                  y = rlx_reshape(g, rlx_reshape(g, a, 1, r), 2, back); break; }
        case 4: y = rlx_matmul(g, a, w, 0); break;
        default: { /* contiguous slice of a [1, R*C] view, reshaped back */
                  int64_t r[2] = {1, rows * cols}; int64_t back[2] = {rows, cols};
                  rlx_node v = rlx_reshape(g, a, 2, r);
                  rlx_node two = rlx_concat(g, (rlx_node[]){v, v}, 2, 1);
                  y = rlx_reshape(g, rlx_narrow(g, two, 1, rows * cols, rows * cols), 2, back); break; }
        }
        pool[n++] = y;
    }
    int outs = (int)test_rand_int(1, 3);
    for (int i = 0; i < outs; i++) {
        char name[16];
        snprintf(name, sizeof name, "out%d", i);
        rlx_output(g, name, pool[test_rand_int(n / 2, n - 1)]);
    }
    return g;
}

TEST(planner_random_graphs_validate) {
    int planned = 0;
    for (int trial = 0; trial < 200; trial++) {
        rlx_graph *g = random_graph((int)test_rand_int(1, 60));
        CHECK_OK(rlx_graph_status(g));
        ir_graph spec;
        CHECK_OK(pass_specialize(&g->g, NULL, &spec));
        mem_plan plan;
        CHECK_OK(plan_memory(&spec, &plan));
        rlx_status st = plan_validate(&spec, &plan);
        if (st != RLX_OK) {
            char *dump = ir_graph_dump(&spec);
            printf("%s", dump);
            free(dump);
        }
        CHECK_OK(st);
        CHECK(plan.arena_bytes <= plan.tensor_bytes);
        /* views share bytes with their root */
        for (int32_t i = 0; i < spec.n_nodes; i++) {
            const plan_entry *e = &plan.entries[i];
            if (spec.nodes[i].op == IR_OP_RESHAPE) CHECK(e->is_view);
            if (e->is_view && e->storage == PLAN_ARENA) {
                const plan_entry *root = &plan.entries[e->base];
                CHECK(e->offset >= root->offset && e->offset + e->bytes <= root->offset + root->bytes);
            }
        }
        planned++;
        plan_free(&plan);
        ir_graph_clear(&spec);
        rlx_graph_free(g);
    }
    CHECK(planned == 200);
}

TEST(planner_reuses_memory_in_a_chain) {
    /* x -> tanh -> tanh -> ... : only two intermediates are live at a time */
    rlx_graph *g = rlx_graph_new();
    int64_t d[1] = {1000};
    rlx_node y = rlx_input(g, "x", RLX_F32, 1, d);
    for (int i = 0; i < 20; i++) y = rlx_tanh(g, y);
    rlx_output(g, "y", y);
    ir_graph spec;
    CHECK_OK(pass_specialize(&g->g, NULL, &spec));
    mem_plan plan;
    CHECK_OK(plan_memory(&spec, &plan));
    CHECK_OK(plan_validate(&spec, &plan));
    size_t one = 4032;  /* 4000 bytes aligned to 64 */
    CHECK_MSG(plan.arena_bytes <= 4 * one, "arena %zu for a chain of 4000-byte tensors", plan.arena_bytes);
    CHECK(plan.tensor_bytes == 21 * one);
    plan_free(&plan);
    ir_graph_clear(&spec);
    rlx_graph_free(g);
}

TEST(planner_validator_catches_overlap) {
    rlx_graph *g = rlx_graph_new();
    int64_t d[1] = {64};
    rlx_node x = rlx_input(g, "x", RLX_F32, 1, d);
    rlx_node a = rlx_exp(g, x);
    rlx_node b = rlx_exp(g, a);
    rlx_output(g, "y", rlx_add(g, a, b));
    ir_graph spec;
    CHECK_OK(pass_specialize(&g->g, NULL, &spec));
    mem_plan plan;
    CHECK_OK(plan_memory(&spec, &plan));
    CHECK_OK(plan_validate(&spec, &plan));
    plan.entries[b].offset = plan.entries[a].offset;   /* a and b are live together */
    CHECK(plan_validate(&spec, &plan) == RLX_STATUS_INTERNAL);
    plan_free(&plan);
    ir_graph_clear(&spec);
    rlx_graph_free(g);
}

TEST(planner_stats_through_api) {
    rlx_graph *g = rlx_graph_new();
    int64_t d[2] = {16, 16};
    rlx_node y = rlx_input(g, "x", RLX_F32, 2, d);
    for (int i = 0; i < 10; i++) y = rlx_sigmoid(g, y);
    rlx_output(g, "y", y);
    rlx_exec *e;
    CHECK_OK(rlx_compile(g, NULL, &e));
    rlx_exec_stats s;
    CHECK_OK(rlx_exec_get_stats(e, &s));
    rlx_exec_free(e);
    rlx_graph_free(g);
    CHECK(s.arena_bytes > 0 && s.arena_bytes <= s.tensor_bytes);
    CHECK_MSG(s.arena_bytes * 3 <= s.tensor_bytes, "arena %zu vs tensors %zu", s.arena_bytes, s.tensor_bytes);
}

TEST(planner_size_one_transpose_is_a_view) {
    rlx_graph *g = rlx_graph_new();
    int64_t d[4] = {1, 1, 4, 8};
    int perm[4] = {0, 2, 1, 3};   /* [1,1,4,8] -> [1,4,1,8]: same bytes */
    int swap[4] = {0, 1, 3, 2};   /* a real transpose */
    rlx_node x = rlx_input(g, "x", RLX_F32, 4, d);
    rlx_node t = rlx_transpose(g, x, perm);
    rlx_output(g, "y", rlx_exp(g, t));
    rlx_output(g, "z", rlx_exp(g, rlx_transpose(g, x, swap)));
    ir_graph spec;
    CHECK_OK(pass_specialize(&g->g, NULL, &spec));
    mem_plan plan;
    CHECK_OK(plan_memory(&spec, &plan));
    CHECK_OK(plan_validate(&spec, &plan));
    CHECK(plan.entries[t].is_view);
    int views = 0;
    for (int32_t i = 0; i < spec.n_nodes; i++) views += spec.nodes[i].op == IR_OP_TRANSPOSE && plan.entries[i].is_view;
    CHECK(views == 1);
    plan_free(&plan);
    ir_graph_clear(&spec);
    /* and the values are right */
    rlx_exec *e;
    CHECK_OK(rlx_compile(g, NULL, &e));
    float xs[32], y[32], z[32];
    for (int i = 0; i < 32; i++) xs[i] = (float)i / 10;
    rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 4, .dims = {1, 1, 4, 8}, .data = xs, .bytes = sizeof xs};
    CHECK_OK(rlx_exec_run(e, &in, 1));
    CHECK_OK(rlx_exec_read_output(e, "y", y, sizeof y));
    CHECK_OK(rlx_exec_read_output(e, "z", z, sizeof z));
    for (int i = 0; i < 32; i++) CHECK(fabsf(y[i] - expf(xs[i])) < 1e-5f);
    for (int r = 0; r < 8; r++)
        for (int c = 0; c < 4; c++) CHECK(fabsf(z[r * 4 + c] - expf(xs[c * 8 + r])) < 1e-5f);
    rlx_exec_free(e);
    rlx_graph_free(g);
}
