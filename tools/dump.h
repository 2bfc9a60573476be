/*
 * dump.h — the `rlx dump` command.
 */
#ifndef RLX_TOOLS_DUMP_H
#define RLX_TOOLS_DUMP_H

int cmd_dump(int argc, char **argv);

#endif
