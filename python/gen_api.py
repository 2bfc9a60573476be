#!/usr/bin/env python3
"""gen_api.py — writes python/rlx/_api.py, the ctypes declarations of rlx.h.

include/rlx.h is the one source of the binding: every enum, #define, struct,
callback type and function prototype in it becomes a ctypes declaration, and
each function keeps the comment above it as its documentation. The Python
layer (graph.py, exec.py, models.py) and the op functions (ops.py) call
these; tests/test_api.py fails when _api.py is older than the header.

    gen_api.py [include/rlx.h] [python/rlx/_api.py]   (defaults: the repo's)
    gen_api.py --check                                 exit 1 if out of date
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

SCALARS = {
    "void": "None", "int": "c_int", "unsigned": "c_uint", "float": "c_float", "double": "c_double",
    "size_t": "c_size_t", "int32_t": "c_int32", "int64_t": "c_int64", "uint32_t": "c_uint32",
    "uint64_t": "c_uint64", "char": "c_char", "rlx_node": "c_int32",
}
# Handles the header declares but never defines: passed as void pointers.
OPAQUE = {"rlx_graph", "rlx_exec", "rlx_model", "rlx_encoder", "rlx_onnx"}


def strip_comments(text):
    """Text without comments, and for each prototype start the comment
    block just above it (keyed by the offset in the stripped text)."""
    out, docs, pending, i = [], {}, [], 0
    while i < len(text):
        if text.startswith("/*", i):
            j = text.index("*/", i + 2)
            body = text[i + 2:j]
            line_start = text.rfind("\n", 0, i) + 1
            if text[line_start:i].strip() == "":   # a comment on lines of its own documents what follows
                pending.append(body)
            i = j + 2
            continue
        c = text[i]
        if c == "\n" and text.startswith("\n\n", i):
            pending = []
        if not c.isspace() and pending:
            docs[len("".join(out))] = "\n".join(pending)
            pending = []
        out.append(c)
        i += 1
    return "".join(out), docs


def clean_doc(raw):
    lines = [re.sub(r"^\s*\*? ?", "", ln).rstrip() for ln in raw.splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def ctype_of(decl, structs, enums, callbacks):
    """ctypes expression of a C type (declarator name removed)."""
    t = decl.replace("const", " ").strip()
    stars = t.count("*")
    base = t.replace("*", " ").split()
    base = " ".join(base)
    if base in enums or base == "rlx_status":
        base_ct = "c_int"
    elif base in SCALARS:
        base_ct = SCALARS[base]
    elif base in structs:
        base_ct = base
    elif base in callbacks:
        base_ct = base
    elif base in OPAQUE:
        base_ct = "OPAQUE"
    else:
        raise SystemExit("gen_api: unknown C type %r" % decl)
    if stars == 0:
        if base_ct == "OPAQUE":
            raise SystemExit("gen_api: opaque type by value %r" % decl)
        return base_ct
    if base_ct == "OPAQUE":
        return "c_void_p" if stars == 1 else "POINTER(c_void_p)"
    if base == "char" and stars == 1:
        return "c_char_p"
    if base == "void" and stars == 1:
        return "c_void_p"
    if base == "void":
        return "POINTER(c_void_p)"
    if base == "char" and stars == 2:
        return "POINTER(c_char_p)"
    ct = base_ct
    for _ in range(stars):
        ct = "POINTER(%s)" % ct
    return ct


def split_decl(param):
    """'const int64_t *dims' -> ('const int64_t *', 'dims'); arrays kept."""
    m = re.match(r"^(.*?)([A-Za-z_][A-Za-z_0-9]*)\s*((?:\[[^\]]*\])*)$", param.strip())
    if not m:
        raise SystemExit("gen_api: cannot parse %r" % param)
    return m.group(1).strip(), m.group(2), m.group(3)


def parse(header_text):
    text, docs = strip_comments(header_text)
    text_nopp = re.sub(r"^\s*#.*$", lambda m: " " * len(m.group(0)), text, flags=re.M)
    enums, defines, structs, callbacks, functions = {}, {}, [], {}, []
    struct_names = set()
    for m in re.finditer(r"^#define\s+(RLX_[A-Z0-9_]+)\s+(.+?)\s*$", text, flags=re.M):
        val = m.group(2).strip()
        v = re.sub(r"\(\((?:rlx_node|int64_t)\)(-?\d+)\)", r"\1", val)
        v = re.sub(r"^\((-?\d+)\)$", r"\1", v)
        v = re.sub(r"^(\d+)u$", r"\1", v)
        if re.match(r"^-?\d+$", v):
            defines[m.group(1)] = int(v)
    for m in re.finditer(r"typedef\s+enum\s+(\w+)\s*\{(.*?)\}\s*(\w+)\s*;", text_nopp, flags=re.S):
        vals, nxt = [], 0
        for item in m.group(2).split(","):
            item = item.strip()
            if not item:
                continue
            if "=" in item:
                k, v = [s.strip() for s in item.split("=", 1)]
                v = re.sub(r"(\d+)\s*<<\s*(\d+)", lambda q: str(int(q.group(1)) << int(q.group(2))), v)
                nxt = int(v)
            else:
                k = item
            vals.append((k, nxt))
            nxt += 1
        enums[m.group(3)] = vals
    for m in re.finditer(r"typedef\s+(\w+)\s*\(\*\s*(\w+)\)\s*\((.*?)\)\s*;", text_nopp, flags=re.S):
        callbacks[m.group(2)] = (m.group(1), [p.strip() for p in m.group(3).split(",")])
    for m in re.finditer(r"typedef\s+struct\s+(\w+)\s*\{(.*?)\}\s*(\w+)\s*;", text_nopp, flags=re.S):
        name, fields = m.group(3), []
        for stmt in m.group(2).split(";"):
            stmt = " ".join(stmt.split())
            if not stmt:
                continue
            first, *rest = [s.strip() for s in stmt.split(",")]
            ctype, fname, arr = split_decl(first)
            base = ctype.replace("*", "").strip()
            fields.append((ctype, fname, arr))
            for r in rest:   # "int64_t stride[3], dilation[3]" and "int n_vocab, n_ctx"
                stars = r.count("*")
                _, fname2, arr2 = split_decl(r.replace("*", ""))
                fields.append((base + " " + "*" * stars, fname2, arr2))
        structs.append((name, fields))
        struct_names.add(name)
    proto = re.compile(r"^([A-Za-z_][\w \*]*?[\s\*])(rlx_\w+)\s*\(([^;{]*?)\)\s*;", flags=re.M | re.S)
    for m in proto.finditer(text_nopp):
        ret, name, params = m.group(1).strip(), m.group(2), m.group(3)
        if ret.startswith("typedef"):
            continue
        doc = clean_doc(docs.get(m.start(), ""))
        plist = []
        params = " ".join(params.split())
        if params != "void":
            for p in params.split(","):
                ctype, pname, arr = split_decl(p)
                if arr:
                    ctype += " *"
                plist.append((ctype, pname))
        functions.append((name, ret, plist, doc))
    return enums, defines, structs, callbacks, functions


def generate(header_path):
    src = open(header_path).read()
    enums, defines, structs, callbacks, functions = parse(src)
    names = {s for s, _ in structs}
    o = []
    w = o.append
    w('"""_api.py — ctypes declarations of include/rlx.h. Generated by python/gen_api.py:')
    w("do not edit; run `python3 python/gen_api.py` after changing the header.\"\"\"")
    w("from ctypes import (CFUNCTYPE, POINTER, Structure, c_char, c_char_p, c_double, c_float, c_int, c_int32,")
    w("                    c_int64, c_size_t, c_uint, c_uint32, c_uint64, c_void_p)")
    w("")
    w("# ---- #define constants")
    for k, v in defines.items():
        w("%s = %d" % (k, v))
    w("")
    w("# ---- enums: name -> [(member, value)], and each member as a constant")
    w("ENUMS = {")
    for en, vals in enums.items():
        w("    %r: [%s]," % (en, ", ".join("(%r, %d)" % kv for kv in vals)))
    w("}")
    for en, vals in enums.items():
        for k, v in vals:
            w("%s = %d" % (k, v))
    w("")
    w("# ---- callbacks")
    for cb, (ret, params) in callbacks.items():
        # char pointers stay addresses: a piece of text comes with its length, not a NUL
        ps = ["c_void_p" if "char" in split_decl(p)[0] else ctype_of(split_decl(p)[0], names, enums, {}) for p in params]
        w("%s = CFUNCTYPE(%s)" % (cb, ", ".join([ctype_of(ret, names, enums, {})] + ps)))
    w("")
    w("# ---- structs, in header order (each uses only those above it)")
    for sname, fields in structs:
        w("class %s(Structure):" % sname)
        w("    _fields_ = [")
        for ctype, fname, arr in fields:
            ct = ctype_of(ctype, names, enums, callbacks)
            for dim in reversed(re.findall(r"\[([^\]]*)\]", arr)):
                dim = dim.strip()
                n = defines.get(dim, None) if not dim.isdigit() else int(dim)
                if n is None:
                    raise SystemExit("gen_api: array size %r" % dim)
                ct = "%s * %d" % (ct, n)
            w("        (%r, %s)," % (fname, ct))
        w("    ]")
        w("")
    w("# ---- functions: name -> (restype, argtypes, argnames, doc)")
    w("FUNCTIONS = {")
    for name, ret, plist, doc in functions:
        rt = ctype_of(ret, names, enums, callbacks)
        if rt == "c_char_p" and "const" not in ret:
            rt = "c_void_p"   # a malloc'ed string the caller frees
        ats = [ctype_of(t, names, enums, callbacks) for t, _ in plist]
        w("    %r: (%s, [%s], %r," % (name, rt, ", ".join(ats), tuple(p for _, p in plist)))
        w("        %r)," % doc)
    w("}")
    w("")
    w("# C type names of each function's parameters (ops.py reads them)")
    w("PARAM_TYPES = {")
    for name, ret, plist, doc in functions:
        w("    %r: %r," % (name, tuple(" ".join(t.split()) for t, _ in plist)))
    w("}")
    w("RETURN_TYPES = {")
    for name, ret, plist, doc in functions:
        w("    %r: %r," % (name, " ".join(ret.split())))
    w("}")
    return "\n".join(o) + "\n"


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    header = args[0] if args else os.path.join(ROOT, "include", "rlx.h")
    dest = args[1] if len(args) > 1 else os.path.join(HERE, "rlx", "_api.py")
    text = generate(header)
    if check:
        old = open(dest).read() if os.path.exists(dest) else ""
        if old != text:
            print("gen_api: %s is out of date with %s; run python3 python/gen_api.py" % (dest, header))
            return 1
        return 0
    with open(dest, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
