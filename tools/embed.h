/*
 * embed.h — `rlx embed` and `rlx classify` (tools/embed.c).
 */
#ifndef RLX_TOOLS_EMBED_H
#define RLX_TOOLS_EMBED_H

int cmd_embed(int argc, char **argv);
int cmd_classify(int argc, char **argv);

#endif
