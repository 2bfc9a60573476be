/*
 * demo.h — `rlx demo`: a small transformer encoder with random weights,
 * compiled for the best backend and checked against an unoptimized CPU run.
 */
#ifndef RLX_TOOLS_DEMO_H
#define RLX_TOOLS_DEMO_H

typedef struct demo_options {
    int layers, d_model, heads, d_ff, seq, batch;
    int runs;
    int threads;
    int report;
    const char *device;   /* NULL/"auto", "cpu", "vulkan", a device index or name */
} demo_options;

void demo_options_init(demo_options *o);
/* Returns a process exit code. */
int demo_run(const demo_options *o);

#endif
