/*
 * train.h — `rlx train` (train.c) and `rlx generate -m DIR` for the folders
 * it writes (gpt_sample.c).
 */
#ifndef RLX_TOOLS_TRAIN_H
#define RLX_TOOLS_TRAIN_H

int cmd_train(int argc, char **argv);
/* Sampling from an `rlx train` output folder; argv as `rlx generate`'s. */
int cmd_gpt_generate(int argc, char **argv);

#endif
