// llamacpp_bench.mjs — the llama.cpp comparison point for bench/llm_bench on
// the CPU: prefill and decode tokens/s of a GGUF file through llama.cpp's
// prebuilt CPU libraries as the node-llama-cpp package ships them (npm
// registry; no network beyond it, no compiler). Times what llm_bench times:
// a prompt of N tokens ((i * 7919) % vocab, the same ids) evaluated as one
// batch, then D greedy decode steps of one token, median per step.
//
//   NLC_DIR=/tmp/nlc node bench/llamacpp_bench.mjs MODEL.gguf PROMPT DECODE THREADS
//
// NLC_DIR holds node_modules/node-llama-cpp (bench/cpu_baseline.sh installs
// it). Prints one line: RESULT llama.cpp prefill_tok_s P decode_tok_s D.
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [model, nPromptS, nDecodeS, threadsS] = process.argv.slice(2);
if (!model) {
    console.error("usage: node llamacpp_bench.mjs MODEL.gguf PROMPT DECODE THREADS");
    process.exit(2);
}
const nPrompt = Number(nPromptS ?? 128), nDecode = Number(nDecodeS ?? 32), threads = Number(threadsS ?? 2);
const dir = process.env.NLC_DIR ?? "/tmp/nlc";
const nlc = await import(pathToFileURL(join(dir, "node_modules/node-llama-cpp/dist/index.js")).href);
const llama = await nlc.getLlama({ gpu: false, build: "never", logLevel: nlc.LlamaLogLevel.error, maxThreads: threads });
const m = await llama.loadModel({ modelPath: model, gpuLayers: 0 });
const vocab = m.fileInfo.metadata.llama.vocab_size;
const ctxSize = nPrompt + nDecode + 8;
const ctx = await m.createContext({ contextSize: ctxSize, batchSize: Math.max(nPrompt, 32), threads, sequences: 1 });
const prompt = Array.from({ length: nPrompt }, (_, i) => (i * 7919) % vocab);

async function run(measure) {
    const seq = ctx.getSequence();
    let t = performance.now();
    await seq.evaluateWithoutGeneratingNewTokens(prompt);
    const prefill = (performance.now() - t) / 1e3;
    const steps = [];
    t = performance.now();
    for await (const tok of seq.evaluate([prompt[0]], { temperature: 0 })) {
        const now = performance.now();
        steps.push((now - t) / 1e3);
        t = now;
        if (steps.length >= (measure ? nDecode : 2)) break;
    }
    seq.dispose();
    steps.sort((a, b) => a - b);
    return { prefill, step: steps[steps.length >> 1] };
}

await run(false);   // warm-up, as llm_bench's
const r = await run(true);
console.log(`RESULT llama.cpp prefill_tok_s ${(nPrompt / r.prefill).toFixed(3)} decode_tok_s ${(1 / r.step).toFixed(3)}`);
await ctx.dispose();
await m.dispose();
await llama.dispose();
