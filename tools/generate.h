/*
 * generate.h — the `rlx generate` command.
 */
#ifndef RLX_TOOLS_GENERATE_H
#define RLX_TOOLS_GENERATE_H

int cmd_generate(int argc, char **argv);

#endif
