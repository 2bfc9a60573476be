/*
 * tokenizer_json.h — Hugging Face tokenizers' tokenizer.json as an
 * enc_tokenizer (enc_tokenizer.h): the normalizer, pre-tokenizer and model
 * (WordPiece, BPE, Unigram) sections become the tokenize callback, the
 * post-processor becomes the template, and the added tokens marked special
 * become the specials matched literally in the raw text.
 *
 * Supported (docs/models.md lists each option):
 *   normalizer:    BertNormalizer, Lowercase, NFD, StripAccents, Strip,
 *                  Replace (String pattern), Prepend, Sequence, null
 *   pre_tokenizer: BertPreTokenizer, Whitespace, WhitespaceSplit,
 *                  Punctuation, ByteLevel, Metaspace, Digits,
 *                  CharDelimiterSplit, Split (String pattern, or the
 *                  GPT-2 / llama3 / qwen2 Regex), Sequence, null
 *   model:         WordPiece, BPE (dropout null), Unigram
 *   post_processor: TemplateProcessing, BertProcessing, RobertaProcessing,
 *                  ByteLevel, Sequence, null
 *   decoder:       read for ByteLevel / Metaspace (decode only)
 * Anything else is RLX_STATUS_UNSUPPORTED naming the section and type
 * ("tokenizer.json: normalizer type 'NFKC' is not supported"); a value of the
 * wrong kind or a broken reference is RLX_STATUS_FORMAT with the JSON byte
 * offset. The padding and truncation sections are ignored (enc_options
 * decide), except padding.pad_id, which becomes the pad token.
 */
#ifndef RLX_MODELS_TOKENIZER_JSON_H
#define RLX_MODELS_TOKENIZER_JSON_H

#include "models/enc_tokenizer.h"

/* From tokenizer.json bytes (not kept); name is what messages call it
 * (NULL: "tokenizer.json"). */
rlx_status rlx_tokenizer_json_from_memory(const char *data, size_t len, const char *name, enc_tokenizer **out);
/* From a file. IO when it cannot be read. */
rlx_status rlx_tokenizer_json_load(const char *path, enc_tokenizer **out);

#endif
