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
    int fast;    /* --precision fast: rlx_compile_options.precision RLX_PRECISION_FAST */
    int check;   /* 1 (default): compare with an unoptimized CPU run; --no-check: 0 */
    const char *device;   /* NULL/"auto", "cpu", "vulkan", a device index or name */
} demo_options;

void demo_options_init(demo_options *o);
/* Parses the demo's flags (--layers ... --device, --precision, --report,
 * --no-check) into o; 0, or
 * the exit code 2 with the mistake printed under cmd's name. */
int  demo_parse_options(int argc, char **argv, const char *cmd, demo_options *o);
/* The encoder graph of o (NULL: out of memory), and compile options for its
 * --device, --threads and --precision. */
struct rlx_graph *demo_build_encoder(const demo_options *o);
struct rlx_compile_options;
void demo_compile_options(const demo_options *o, struct rlx_compile_options *out);
/* Returns a process exit code. */
int demo_run(const demo_options *o);

#endif
