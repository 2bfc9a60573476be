/*
 * io_cmds.h — `rlx inspect`, `rlx run` and `rlx quantize`: the model file commands.
 * argv holds the arguments after the command name.
 */
#ifndef RLX_TOOLS_IO_CMDS_H
#define RLX_TOOLS_IO_CMDS_H

#include <stddef.h>
#include <stdint.h>

/* rlx inspect FILE: metadata and tensor table of a GGUF or safetensors file
 * (or a safetensors index / model directory); exit 1 on an invalid file. */
int cmd_inspect(int argc, char **argv);
/* The safetensors part of rlx inspect: a file, an index or a directory. */
int inspect_safetensors(const char *path);

/* For the inspect printers: a string value quoted and escaped (control bytes
 * as \n, \xNN: a file's strings must not drive the terminal), long ones cut;
 * a key or tensor name escaped and left-aligned in width columns. */
void inspect_print_str(const char *s, size_t len);
void inspect_print_name(const char *s, int width);
/* "[d0, d1, ...]" into buf (cut to cap). */
void inspect_format_dims(char *buf, size_t cap, int n, const int64_t *dims);
/* ONNX (onnx_cmds.c): rlx inspect MODEL.onnx (operators and whether rlx
 * imports each), and rlx run MODEL.onnx --input NAME=FILE.npy ... */
#include <stdbool.h>
bool is_onnx_path(const char *path);
int  inspect_onnx(const char *path);
int  cmd_run(int argc, char **argv);
/* rlx quantize IN OUT TYPE: quantizes the 2-D float weights of a GGUF file. */
int cmd_quantize(int argc, char **argv);

#endif
