"""models.py — the model front ends: GGUF language models (Model), Hugging
Face encoders (Encoder) and ONNX models (Onnx).

Model.generate() is an iterator of text pieces: rlx_model_generate runs on a
worker thread and hands each piece over through a queue, so the caller
prints text as it comes; leaving the loop early (break, close(), or the
iterator being dropped) makes the next token callback stop the generation.
"""
import ctypes
import queue
import threading

import numpy as np

from . import _api
from ._lib import check, cstr, last_error, lib, take_string
from .errors import error_for_status
from .exec import Exec, compile_options
from .graph import Graph
from .handle import Handle


def _compile_fields(target, options):
    """Copies compile keywords into an options struct's .compile member;
    returns the source struct, which holds the strings it points at (keep it
    until the call that reads the options returns)."""
    src = compile_options(**options)
    ctypes.memmove(ctypes.byref(target), ctypes.byref(src), ctypes.sizeof(src))
    return src


def _s(v):
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else v


class Model(Handle):
    """A Llama-family decoder from a GGUF file (rlx_model), with its tokenizer
    and KV cache. Keywords: n_ctx (0: min(trained, 4096)) and the compile
    options (backend, device, threads, exact_quant, ...)."""

    def __init__(self, path, n_ctx=0, **compile):
        self._ptr = None
        self._busy = None
        o = _api.rlx_model_options()
        lib.rlx_model_options_init(ctypes.byref(o))
        keep = _compile_fields(o.compile, compile) if compile else None
        o.n_ctx = int(n_ctx)
        out = ctypes.c_void_p()
        check(lib.rlx_model_load(cstr(str(path)), ctypes.byref(o), ctypes.byref(out)))
        del keep
        self._ptr = out.value
        self._n_vocab = self.info["n_vocab"]

    _what = "model"

    def close(self):
        gen = self._busy
        if gen is not None:
            gen.close()
        Handle.close(self)

    def _release(self, ptr):
        lib.rlx_model_free(ptr)

    @property
    def info(self):
        """arch, name, n_vocab, n_ctx, n_layer, n_embd, n_head, n_head_kv, bos, eos, backend, device."""
        i = _api.rlx_model_info()
        check(lib.rlx_model_get_info(self._live(), ctypes.byref(i)))
        return {f: _s(getattr(i, f)) for f, _ in i._fields_}

    def tokenize(self, text, add_special=True):
        n = ctypes.c_int()
        t = cstr(text)
        st = lib.rlx_model_tokenize(self._live(), t, int(bool(add_special)), None, 0, ctypes.byref(n))
        if st not in (0, _api.RLX_STATUS_INVALID_ARGUMENT) or n.value < 0:
            check(st)
        ids = (ctypes.c_int32 * max(1, n.value))()
        check(lib.rlx_model_tokenize(self._live(), t, int(bool(add_special)), ids, n.value, ctypes.byref(n)))
        return list(ids[:n.value])

    def detokenize(self, ids):
        ids = [int(i) for i in ids]
        arr = (ctypes.c_int32 * max(1, len(ids)))(*ids)
        need = ctypes.c_size_t()
        st = lib.rlx_model_detokenize(self._live(), arr, len(ids), None, 0, ctypes.byref(need))
        if st not in (0, _api.RLX_STATUS_INVALID_ARGUMENT):
            check(st)
        buf = ctypes.create_string_buffer(need.value + 1)
        check(lib.rlx_model_detokenize(self._live(), arr, len(ids), buf, need.value + 1, ctypes.byref(need)))
        return buf.raw[:need.value].decode("utf-8", "replace")

    def reset(self):
        """Empties the KV cache."""
        check(lib.rlx_model_reset(self._live()))

    def eval(self, ids):
        """Appends tokens at the current position; the last one's logits (new float32 array [n_vocab])."""
        ids = [int(i) for i in ids]
        arr = (ctypes.c_int32 * max(1, len(ids)))(*ids)
        logits = ctypes.POINTER(ctypes.c_float)()
        check(lib.rlx_model_eval(self._live(), arr, len(ids), ctypes.byref(logits)))
        return np.ctypeslib.as_array(logits, shape=(self._n_vocab,)).copy()

    def report(self):
        text = take_string(lib.rlx_model_report(self._live()))
        if text is None:
            raise error_for_status(_api.RLX_STATUS_INVALID_ARGUMENT, last_error())
        return text

    def generate(self, prompt, max_tokens=128, temperature=None, top_k=None, top_p=None, min_p=None,
                 repeat_penalty=None, repeat_last_n=None, seed=None):
        """An iterator of text pieces sampled after prompt (rlx_sampling's
        defaults for options left None; temperature 0 is greedy). Its .stats
        holds rlx_generate_stats once it is exhausted."""
        s = _api.rlx_sampling()
        lib.rlx_sampling_init(ctypes.byref(s))
        for k, v in (("temperature", temperature), ("top_k", top_k), ("top_p", top_p), ("min_p", min_p),
                     ("repeat_penalty", repeat_penalty), ("repeat_last_n", repeat_last_n), ("seed", seed)):
            if v is not None:
                setattr(s, k, v)
        return Generation(self, prompt, int(max_tokens), s)

    def complete(self, prompt, max_tokens=128, **sampling):
        """generate(), joined into one string."""
        return "".join(self.generate(prompt, max_tokens, **sampling))


_DONE = object()


class Generation:
    """The iterator Model.generate returns. .stats: a dict after the end."""

    def __init__(self, model, prompt, max_tokens, sampling):
        if model._busy is not None:
            raise error_for_status(_api.RLX_STATUS_INVALID_ARGUMENT,
                                   "rlx_model_generate: the model is already generating (finish or close "
                                   "the other iterator first)")
        self._model = model
        self._queue = queue.Queue()
        self._stop = False
        self.stats = None
        self._error = None
        self._sampling = sampling
        self._prompt = cstr(prompt)
        self._max = max_tokens
        self._cb = _api.rlx_token_fn(self._on_token)
        self._thread = threading.Thread(target=self._work, name="rlx-generate", daemon=True)
        model._busy = self
        self._thread.start()

    def _on_token(self, text, length, _id, _user):
        if self._stop:
            return 1
        self._queue.put(ctypes.string_at(text, length) if length else b"")
        return 0

    def _work(self):
        st = _api.rlx_generate_stats()
        status = lib.rlx_model_generate(self._model._ptr, self._prompt, self._max, ctypes.byref(self._sampling),
                                        self._cb, None, ctypes.byref(st))
        if status != 0:
            self._error = error_for_status(status, last_error())   # the message is this thread's
        else:
            self.stats = {f: getattr(st, f) for f, _ in st._fields_}
        self._queue.put(_DONE)

    def __iter__(self):
        return self

    def __next__(self):
        if self._thread is None:
            raise StopIteration
        item = self._queue.get()
        if item is _DONE:
            self._finish()
            if self._error is not None:
                err, self._error = self._error, None
                raise err
            raise StopIteration
        return item.decode("utf-8", "replace")

    def _finish(self):
        if self._thread is not None:
            self._thread.join()
            self._thread = None
            self._model._busy = None

    def close(self):
        """Stops the generation (the next token callback returns nonzero) and waits for it."""
        self._stop = True
        if self._thread is not None:
            while self._queue.get() is not _DONE:
                pass
            self._finish()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


_POOLING = {"cls": _api.RLX_POOL_CLS, "mean": _api.RLX_POOL_MEAN, "max": _api.RLX_POOL_MAX}


class Encoder(Handle):
    """A BERT-family encoder from a Hugging Face folder (rlx_encoder).
    Keywords: pooling ("cls", "mean", "max"), normalize, max_length, and the
    compile options (backend, device, precision, threads)."""

    def __init__(self, path, pooling="mean", normalize=False, max_length=0, **compile):
        o = _api.rlx_encoder_options()
        lib.rlx_encoder_options_init(ctypes.byref(o))
        keep = _compile_fields(o.compile, compile) if compile else None
        if pooling not in _POOLING:
            raise ValueError("rlx: pooling %r is not cls, mean or max" % (pooling,))
        o.pooling = _POOLING[pooling]
        o.normalize = int(bool(normalize))
        o.max_length = int(max_length)
        out = ctypes.c_void_p()
        check(lib.rlx_encoder_load(cstr(str(path)), ctypes.byref(o), ctypes.byref(out)))
        del keep
        self._ptr = out.value
        info = self.info
        self._hidden, self._labels = info["hidden"], info["num_labels"]

    _what = "encoder"

    def _release(self, ptr):
        lib.rlx_encoder_free(ptr)

    @property
    def info(self):
        """model_type, hidden, layers, heads, vocab, max_length, num_labels, has_tokenizer, backend, device."""
        i = _api.rlx_encoder_info()
        check(lib.rlx_encoder_get_info(self._live(), ctypes.byref(i)))
        return {f: _s(getattr(i, f)) for f, _ in i._fields_}

    @property
    def labels(self):
        out, i = [], 0
        while True:
            s = lib.rlx_encoder_label(self._live(), i)
            if s is None:
                return out
            out.append(s.decode())
            i += 1

    @staticmethod
    def _texts(texts):
        if isinstance(texts, str):
            raise TypeError("rlx: pass a list of texts (one text: [text])")
        enc = [cstr(t) for t in texts]
        return (ctypes.c_char_p * max(1, len(enc)))(*enc), len(enc)

    def embed(self, texts):
        """n texts -> float32 [n, hidden] embeddings."""
        arr, n = self._texts(texts)
        out = np.empty((n, self._hidden), np.float32)
        check(lib.rlx_encoder_embed(self._live(), arr, n, out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                                    out.size))
        return out

    def classify(self, texts):
        """n texts -> float32 [n, num_labels] logits (checkpoints with a classification head)."""
        arr, n = self._texts(texts)
        out = np.empty((n, max(1, self._labels)), np.float32)
        check(lib.rlx_encoder_classify(self._live(), arr, n, out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                                       out.size))
        return out

    def tokenize(self, text, pair=None):
        """(ids, type_ids) with the model's template."""
        n = ctypes.c_int()
        st = lib.rlx_encoder_tokenize(self._live(), cstr(text), cstr(pair), None, None, 0, ctypes.byref(n))
        if st not in (0, _api.RLX_STATUS_INVALID_ARGUMENT):
            check(st)
        ids = (ctypes.c_int32 * max(1, n.value))()
        types = (ctypes.c_int32 * max(1, n.value))()
        check(lib.rlx_encoder_tokenize(self._live(), cstr(text), cstr(pair), ids, types, n.value, ctypes.byref(n)))
        return list(ids[:n.value]), list(types[:n.value])

    def run_ids(self, ids, type_ids=None, mask=None, outputs=("hidden", "embedding")):
        """ids [batch, seq] -> {name: array} for the names in outputs: hidden
        [batch, seq, hidden], embedding, pooler [batch, hidden], logits [batch, num_labels]."""
        ids = np.ascontiguousarray(ids, dtype=np.int32)
        if ids.ndim != 2:
            raise ValueError("rlx: ids must be [batch, seq], got shape %s" % (ids.shape,))
        b, s = ids.shape
        h = self._hidden
        shapes = {"hidden": (b, s, h), "embedding": (b, h), "pooler": (b, h), "logits": (b, max(1, self._labels))}
        unknown = set(outputs) - set(shapes)
        if unknown:
            raise ValueError("rlx: unknown encoder outputs %s (choose from %s)" % (sorted(unknown), ", ".join(shapes)))
        res = {k: np.empty(shapes[k], np.float32) for k in outputs}
        fp = ctypes.POINTER(ctypes.c_float)
        ip = ctypes.POINTER(ctypes.c_int32)

        def ptr(a, t):
            return a.ctypes.data_as(t) if a is not None else None
        t_arr = None if type_ids is None else np.ascontiguousarray(type_ids, dtype=np.int32)
        m_arr = None if mask is None else np.ascontiguousarray(mask, dtype=np.int32)
        for name, a in (("type_ids", t_arr), ("mask", m_arr)):
            if a is not None and a.shape != ids.shape:
                raise ValueError("rlx: %s has shape %s, ids %s" % (name, a.shape, ids.shape))
        check(lib.rlx_encoder_run_ids(self._live(), b, s, ptr(ids, ip), ptr(t_arr, ip), ptr(m_arr, ip),
                                      ptr(res.get("hidden"), fp), ptr(res.get("embedding"), fp),
                                      ptr(res.get("pooler"), fp), ptr(res.get("logits"), fp)))
        return res


class Onnx(Handle):
    """An ONNX model (rlx_onnx): .graph to compile or extend, compile() to run it."""

    def __init__(self, path):
        out = ctypes.c_void_p()
        check(lib.rlx_onnx_load(cstr(str(path)), ctypes.byref(out)))
        self._ptr = out.value
        self._graph = Graph(_ptr=lib.rlx_onnx_graph(self._ptr), _owner=self)

    _what = "ONNX model"

    def _release(self, ptr):
        if getattr(self, "_graph", None) is not None:
            self._graph._ptr = None
        lib.rlx_onnx_free(ptr)

    @property
    def graph(self):
        """The model's graph (owned by the model): extend it (gradients) or compile it."""
        self._live()
        return self._graph

    def compile(self, **options):
        """An Exec of the graph with every initializer set (rlx_onnx_compile)."""
        out = ctypes.c_void_p()
        check(lib.rlx_onnx_compile(self._live(), ctypes.byref(compile_options(**options)), ctypes.byref(out)))
        return Exec(out.value, keep=self)

    def set_params(self, exe):
        """Sets the initializers on an Exec compiled from an extended graph."""
        check(lib.rlx_onnx_set_params(self._ptr, exe._live()))
        exe._keep = self
