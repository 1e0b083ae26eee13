/**
 * Issue 18 item 3: how fix-all, manifest linting and the editor's light-bulb request scale with
 * the number of findings. Prints one line per size: findings, wall time (ms) and ms per finding;
 * linear cost keeps ms per finding flat as the size doubles.
 *   python:   fixAllPython on N writes of CUDA_VISIBLE_DEVICES after CUDA initialisation (2
 *             findings each, GPU001 + GPU006, both with safe fixes);
 *   manifest: lintManifest + fixAllManifest on a Kubernetes YAML of N GPU containers (GPU018 each);
 *   codeaction: the LSP quick-fix request for one diagnostic of that Python file (server process);
 *   functions: lintPython on N functions that each initialise CUDA and then write CUDA_VISIBLE_DEVICES
 *             (GPU001 each: its child-process check searches each function's block once, not the
 *             rest of the file per write, which made 3,000 writes 8.6 s instead of 1.2 s).
 * usage: node --import tsx bench/fix-scaling.ts [python|manifest|codeaction|functions ...] [--sizes 50,100,200]
 */
import { initEngine, lintPython } from "../server/src/engine/lint";
import { fixAllPython } from "../server/src/engine/fixAll";
import { lintManifest, fixAllManifest } from "../server/src/engine/manifests/lintManifest";

const args = process.argv.slice(2);
const sizesAt = args.indexOf("--sizes");
const sizes = sizesAt >= 0 ? args[sizesAt + 1].split(",").map(Number) : [50, 100, 200, 400];
const which = args.filter((a, i) => !a.startsWith("--") && (sizesAt < 0 || i !== sizesAt + 1));
const want = (k: string) => which.length === 0 || which.includes(k);

/** N late CUDA_VISIBLE_DEVICES writes after torch.cuda.init(). */
export function pythonWithFindings(n: number): string {
  return (
    "import os\nimport torch\ntorch.cuda.init()\n" +
    Array.from(
      { length: n },
      (_, i) => `os.environ["CUDA_VISIBLE_DEVICES"] = "${i % 4}"\nx${i} = torch.zeros(1).cuda()\n`,
    ).join("")
  );
}

/** N functions that each initialise CUDA, then write CUDA_VISIBLE_DEVICES (a GPU001 each). */
export function functionsWithFindings(n: number): string {
  return (
    "import os\nimport torch\n\n" +
    Array.from(
      { length: n },
      (_, i) =>
        `def f_${i}():\n    torch.cuda.init()\n    os.environ["CUDA_VISIBLE_DEVICES"] = "1"\n    print("step", ${i})\n\n`,
    ).join("")
  );
}

/** A Kubernetes Deployment with N containers that request GPUs without a limit (GPU018 each). */
export function manifestWithFindings(n: number): string {
  const containers = Array.from(
    { length: n },
    (_, i) =>
      `      - name: c${i}\n        image: nvcr.io/nvidia/pytorch:24.01-py3\n        resources:\n          requests:\n            nvidia.com/gpu: 1\n`,
  ).join("");
  return `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: train\nspec:\n  template:\n    spec:\n      containers:\n${containers}`;
}

const time = <T>(f: () => T): [T, number] => {
  const t = performance.now();
  const r = f();
  return [r, performance.now() - t];
};
const line = (what: string, n: number, findings: number, ms: number, extra = "") =>
  console.log(
    `${what.padEnd(22)} n=${String(n).padStart(5)}  findings=${String(findings).padStart(5)}  ${ms.toFixed(0).padStart(7)} ms  ${(ms / Math.max(1, findings)).toFixed(2).padStart(7)} ms/finding${extra}`,
  );

async function main(): Promise<void> {
  await initEngine();
  for (const n of sizes) {
    if (want("python")) {
      const text = pythonWithFindings(n);
      const r = lintPython(text, { maxFileSizeKB: 0 });
      r.tree?.delete();
      const [fixed, ms] = time(() => fixAllPython(text, { maxFileSizeKB: 0 }));
      line(
        "python fixAll",
        n,
        r.diagnostics.length,
        ms,
        `  applied=${fixed.applied}  ${(text.length / 1024).toFixed(0)} KB`,
      );
    }
    if (want("functions")) {
      const text = functionsWithFindings(n);
      const [r, ms] = time(() => lintPython(text, { maxFileSizeKB: 0, select: ["GPU001"], lazyFixValidation: true }));
      r.tree?.delete();
      line("python lint, in defs", n, r.diagnostics.length, ms, `  ${(text.length / 1024).toFixed(0)} KB`);
    }
    if (want("manifest")) {
      const text = manifestWithFindings(n);
      const [r, lintMs] = time(() => lintManifest(text, "yaml", { maxFileSizeKB: 0 }));
      line("manifest lint", n, r.diagnostics.length, lintMs, `  ${(text.length / 1024).toFixed(0)} KB`);
      const [f, fixMs] = time(() => fixAllManifest(text, "yaml", { maxFileSizeKB: 0 }));
      line("manifest fixAll", n, r.diagnostics.length, fixMs, `  applied=${f.applied}`);
    }
  }
  if (want("codeaction")) {
    const { measureCodeAction } = await import("./fix-scaling-lsp");
    for (const n of sizes) {
      const { findings, ms } = await measureCodeAction(pythonWithFindings(n));
      line("lsp quick-fix request", n, findings, ms);
    }
  }
}

if (process.argv[1]?.endsWith("fix-scaling.ts")) void main();
