// The benchmark corpus: the Python source of Debian's python3-torch package (code nobody here
// wrote), fetched with `apt-get download` and unpacked with `dpkg -x` into bench/cache/ (git-ignored).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/** Ensures bench/cache/torch-src exists; returns its path. Throws with a clear message when apt cannot fetch it. */
export function ensureTorchTree(root) {
  const cache = join(root, "bench", "cache");
  const tree = join(cache, "torch-src");
  if (existsSync(tree)) return tree;
  mkdirSync(cache, { recursive: true });
  let debs = readdirSync(cache).filter((f) => f.startsWith("python3-torch_") && f.endsWith(".deb"));
  if (!debs.length) {
    const r = spawnSync("apt-get", ["download", "python3-torch"], { cwd: cache, encoding: "utf8" });
    debs = readdirSync(cache).filter((f) => f.startsWith("python3-torch_") && f.endsWith(".deb"));
    if (!debs.length) throw new Error(`apt-get download python3-torch failed (run 'apt-get update' first?): ${r.stderr || r.error}`);
  }
  const x = spawnSync("dpkg", ["-x", join(cache, debs[0]), tree], { encoding: "utf8" });
  if (x.status !== 0) throw new Error(`dpkg -x failed: ${x.stderr}`);
  return tree;
}

/** Every .py file under `dir`, sorted. */
export function pythonFiles(dir) {
  const out = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".py") && statSync(p).isFile()) out.push(p);
    }
  };
  walk(dir);
  return out.sort();
}

/** Files, lines and bytes of a file list. */
export function corpusSize(files) {
  let lines = 0, bytes = 0;
  for (const f of files) {
    const t = readFileSync(f, "utf8");
    bytes += Buffer.byteLength(t);
    for (let i = 0; i < t.length; i++) if (t.charCodeAt(i) === 10) lines++;
  }
  return { files: files.length, lines, bytes };
}

/** The deb's version (for the record), or null. */
export function torchDebVersion(root) {
  const cache = join(root, "bench", "cache");
  const deb = existsSync(cache) ? readdirSync(cache).find((f) => f.startsWith("python3-torch_") && f.endsWith(".deb")) : undefined;
  return deb ? deb.replace(/^python3-torch_/, "").replace(/_.*$/, "") : null;
}
