/*
 * sampler.h — picks the next token from a row of logits: greedy, temperature,
 * top-k, top-p, min-p, repetition/frequency/presence penalties, with its own
 * seeded RNG so a given seed and the same logits always give the same tokens.
 *
 * Order (llama.cpp's default chain, so that the same flags mean the same
 * distribution as there):
 *   1. penalties over the last repeat_last_n accepted tokens (each distinct
 *      token once): logit > 0 -> logit / repeat_penalty, else logit *
 *      repeat_penalty; then logit -= count * frequency_penalty +
 *      presence_penalty.
 *   2. temperature <= 0: greedy, the argmax of the penalized logits (lowest
 *      id on ties); nothing below runs and no random number is drawn.
 *   3. top-k: keep the k largest (k <= 0: off).
 *   4. top-p: softmax over the survivors at temperature 1, keep the smallest
 *      prefix (by probability, descending) whose mass reaches top_p
 *      (top_p >= 1: off).
 *   5. min-p: keep tokens with p >= min_p * p_max (min_p <= 0: off).
 *   6. temperature: divide the survivors' logits by it, softmax, draw.
 * The filters run before temperature so that temperature only reshapes the
 * distribution among tokens the filters judged plausible at temperature 1
 * (a hot temperature cannot smuggle junk tokens past top-p). Every filter
 * keeps at least one token.
 *
 * Non-finite logits: NaN and -inf are never chosen; +inf tokens share all the
 * probability. A row with no finite or +inf entry is INVALID_ARGUMENT.
 */
#ifndef RLX_MODELS_SAMPLER_H
#define RLX_MODELS_SAMPLER_H

#include "core/core.h"

typedef struct sampler_params {
    float    temperature;        /* <= 0: greedy                          (0.8)  */
    int32_t  top_k;              /* <= 0: off                             (40)   */
    float    top_p;              /* >= 1: off                             (0.95) */
    float    min_p;              /* <= 0: off                             (0.05) */
    float    repeat_penalty;     /* 1: off; must be > 0                   (1.0)  */
    int32_t  repeat_last_n;      /* penalty window in accepted tokens     (64)   */
    float    frequency_penalty;  /* 0: off                                (0)    */
    float    presence_penalty;   /* 0: off                                (0)    */
    uint64_t seed;               /* fixed default so runs reproduce; pass
                                    a time or /dev/urandom value for variety */
} sampler_params;

void rlx_sampler_params_init(sampler_params *p);   /* the defaults in parentheses */

typedef struct sampler sampler;

/* INVALID_ARGUMENT for a NaN parameter, repeat_penalty <= 0, top_p or min_p
 * outside [0, 1] (top_p > 1 is accepted as "off"), repeat_last_n < 0. */
rlx_status rlx_sampler_new(const sampler_params *p, sampler **out);
void       rlx_sampler_free(sampler *s);

/* Picks a token from logits[0..n_vocab) (not modified; read several times, so
 * it must not change during the call). Does not record it:
 * call rlx_sampler_accept() with every prompt token and every token kept. */
rlx_status rlx_sampler_sample(sampler *s, const float *logits, int32_t n_vocab, int32_t *token);

/* Adds id to the penalty history (a window of repeat_last_n). */
void rlx_sampler_accept(sampler *s, int32_t id);

/* Clears the history and restarts the RNG from the seed. */
void rlx_sampler_reset(sampler *s);

#endif
