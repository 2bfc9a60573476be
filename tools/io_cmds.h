/*
 * io_cmds.h — `rlx inspect` and `rlx quantize`: the GGUF file commands.
 * argv holds the arguments after the command name.
 */
#ifndef RLX_TOOLS_IO_CMDS_H
#define RLX_TOOLS_IO_CMDS_H

/* rlx inspect FILE: metadata and tensor table; exit 1 on an invalid file. */
int cmd_inspect(int argc, char **argv);
/* rlx quantize IN OUT TYPE: quantizes the 2-D float weights of a GGUF file. */
int cmd_quantize(int argc, char **argv);

#endif
