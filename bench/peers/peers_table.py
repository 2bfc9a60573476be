#!/usr/bin/env python3
"""peers_table.py FILE... — the table of bench/decode_peers.sh: medians over its
rounds of prefill and decode tok/s for rlx (each build) and llama.cpp (CUDA,
Vulkan), with the ratios rlx / llama.cpp CUDA and rlx / llama.cpp Vulkan (> 1:
rlx is faster; rlx is the last build named in BUILDS, or --rlx BUILD).

Input lines (decode_peers.sh writes them to peers.txt and rlx.txt):
    MODEL:QUANT MODE RUNTIME key value key value ...
with keys prefill_tok_s and decode_tok_s among them (llm_bench's RESULT
fields for rlx, llamacpp_run's for llama.cpp). A line without them (a
failed or skipped run) counts as missing.
"""
import statistics
import sys

PEERS = ("llama.cpp-cuda", "llama.cpp-vulkan")


def mode_key(mode):
    # pp512 < pp2048 < depth4096: by kind (pp first), then length
    kind = 0 if mode.startswith("pp") else 1
    digits = "".join(c for c in mode if c.isdigit())
    return (kind, int(digits) if digits else 0, mode)


def main(argv):
    rlx_name = None
    files = []
    it = iter(argv)
    for a in it:
        if a == "--rlx":
            rlx_name = next(it, None)
        else:
            files.append(a)
    runs = {}   # (mq, mode, runtime) -> {metric: [values]}
    order_models, builds = [], []
    for path in files:
        try:
            lines = open(path).read().splitlines()
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if len(f) < 3:
                continue
            mq, mode, rt = f[0], f[1], f[2]
            kv = dict(zip(f[3::2], f[4::2]))
            if mq not in order_models:
                order_models.append(mq)
            if rt not in PEERS and rt not in builds:
                builds.append(rt)
            d = runs.setdefault((mq, mode, rt), {"prefill_tok_s": [], "decode_tok_s": []})
            for m in d:
                try:
                    d[m].append(float(kv[m]))
                except (KeyError, ValueError):
                    pass
    if not runs:
        print("peers_table: no results in " + " ".join(files))
        return 1
    # --rlx names the build the ratios use; one the results do not hold (PHASE=table run with
    # other BUILDS) falls back to the last build in them
    rlx = rlx_name if rlx_name in builds else (builds[-1] if builds else None)
    modes = sorted({k[1] for k in runs}, key=mode_key)

    def med(mq, mode, rt, metric):
        v = runs.get((mq, mode, rt), {}).get(metric, [])
        return (statistics.median(v), len(v)) if v else (None, 0)

    def cell(x, n):
        return "-" if x is None else f"{x:.1f}" + ("" if n >= 3 else f" (n={n})")

    def ratio(a, b):
        return "-" if a is None or b is None or b == 0 else f"{a / b:.2f}"

    for metric, title in (("prefill_tok_s", "prefill tok/s (prompt of the mode's length)"),
                          ("decode_tok_s", "decode tok/s (steps after the mode's prompt)")):
        print(f"\n{title}; medians over rounds, (n=K) where fewer than 3; ratios: {rlx} / llama.cpp")
        head = "| model | mode |" + "".join(f" rlx {b} |" for b in builds) + \
            " llama.cpp CUDA | rlx / CUDA | llama.cpp Vulkan | rlx / Vulkan |"
        print(head)
        print("|---|---|" + "---:|" * (len(builds) + 4))
        for mq in order_models:
            for mode in modes:
                if not any((mq, mode, rt) in runs for rt in builds + list(PEERS)):
                    continue
                r, _ = med(mq, mode, rlx, metric) if rlx else (None, 0)
                cu, ncu = med(mq, mode, PEERS[0], metric)
                vk, nvk = med(mq, mode, PEERS[1], metric)
                cells = [cell(*med(mq, mode, b, metric)) for b in builds]
                print(f"| {mq} | {mode} |" + "".join(f" {c} |" for c in cells) +
                      f" {cell(cu, ncu)} | {ratio(r, cu)} | {cell(vk, nvk)} | {ratio(r, vk)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
