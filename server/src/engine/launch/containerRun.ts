/**
 * `docker run` / `podman run` / `nerdctl run` command lines (also `create`, `docker container run`,
 * behind `sudo` or `exec`): the GPUs they give the container (`--gpus`), the CUDA_VISIBLE_DEVICES
 * they set in it (`-e`), the image and the words after it. GPU043 and GPU045 read the options;
 * launch/sources.ts reads a vLLM server image's arguments as that server's launch.
 */
import type { ShellCommand, ShellWord } from "../manifests/shell";

const CVD = "CUDA_VISIBLE_DEVICES";

/** `docker`, `podman`, `nerdctl`: the container CLIs whose `run`/`create` take `--gpus`. */
const ENGINES = new Set(["docker", "podman", "nerdctl"]);
/**
 * `docker run` options that take no value (docker run --help, Docker 27): the others take one
 * (`-e X`, `--name x`); an option written `--x=v` never takes the next word.
 */
const SWITCHES = new Set([
  "--rm",
  "-d",
  "--detach",
  "-i",
  "--interactive",
  "-t",
  "--tty",
  "-it",
  "-ti",
  "-dit",
  "-itd",
  "-P",
  "--publish-all",
  "--privileged",
  "--init",
  "--read-only",
  "--no-healthcheck",
  "--oom-kill-disable",
  "--sig-proxy",
  "-q",
  "--quiet",
  "--disable-content-trust",
  "--use-api-socket",
]);

/** A `docker run` command line, as far as GPU043, GPU045 and GPU040 read it. */
export interface ContainerRun {
  /** The container CLI: `docker`, `podman` or `nerdctl`. */
  engine: string;
  /** The image (the first word after the options); null when none is written. */
  image: ShellWord | null;
  /** The words after the image: the container's command, or the arguments of the image's ENTRYPOINT. */
  args: ShellWord[];
  /** `--entrypoint` is given: it replaces the image's ENTRYPOINT. */
  entrypoint: boolean;
  /** `--gpus` and its value (`all`, `2`, `device=1,2`, `"device=${X}"` with the quotes removed). */
  gpus: { value: string; word: ShellWord } | null;
  /** The `CUDA_VISIBLE_DEVICES` passed with `-e`/`--env`: its value, or null when the host's is passed on (`-e CUDA_VISIBLE_DEVICES`). */
  env: { value: string | null; fromHost: boolean; word: ShellWord } | null;
}

/** Reads a command as `docker run`/`docker container run`/`podman run` (also `create`), or null. */
export function containerRun(c: ShellCommand): ContainerRun | null {
  const w = c.words;
  let k = 0;
  while (k < w.length && (w[k].value === "sudo" || w[k].value === "exec")) k++;
  const engine = w[k]?.value.replace(/^.*\//, "");
  if (!engine || !ENGINES.has(engine)) return null;
  k++;
  if (w[k]?.value === "container") k++;
  if (w[k]?.value !== "run" && w[k]?.value !== "create") return null;
  const out: ContainerRun = { engine, image: null, args: [], entrypoint: false, gpus: null, env: null };
  for (k++; k < w.length; k++) {
    const word = w[k];
    const v = word.value;
    if (!v.startsWith("-") || v === "--") {
      // The image: what follows is the container's command.
      const at = v === "--" ? k + 1 : k;
      out.image = w[at] ?? null;
      out.args = w.slice(at + 1);
      break;
    }
    const eq = v.indexOf("=");
    const name = eq > 0 && v.startsWith("--") ? v.slice(0, eq) : v;
    if (SWITCHES.has(name) || /^-[dit]+$/.test(name)) continue;
    const inline = eq > 0 && v.startsWith("--") ? { value: v.slice(eq + 1), word } : null;
    const taken = inline ?? (k + 1 < w.length ? { value: w[k + 1].value, word: w[k + 1] } : null);
    if (!inline) k++;
    if (!taken) break;
    if (name === "--gpus") out.gpus = taken;
    else if (name === "--entrypoint") out.entrypoint = true;
    else if (name === "-e" || name === "--env") {
      const e = taken.value.indexOf("=");
      const key = e < 0 ? taken.value : taken.value.slice(0, e);
      if (key !== CVD) continue;
      const value = e < 0 ? null : taken.value.slice(e + 1);
      const fromHost = value === null || /^\$\{?CUDA_VISIBLE_DEVICES\b/.test(value);
      out.env = { value, fromHost, word: taken.word };
    }
  }
  return out;
}

/**
 * The GPUs `--gpus` exposes: `all` (null: every GPU, numbered as on the host), a count, or a
 * `device=` list (its length when literal, NaN when it expands a variable).
 */
export function gpusExposed(value: string): number | null {
  const v = value.trim().replace(/^["']|["']$/g, "");
  if (v === "all" || /(^|,)count=all\b/.test(v)) return null;
  if (/^[0-9]+$/.test(v)) return Number(v);
  const count = /(?:^|,)count=([0-9]+)\b/.exec(v);
  if (count) return Number(count[1]);
  const ids = /(?:^|,)"?device=([^"]*)"?/.exec(v);
  if (!ids) return null;
  if (ids[1].includes("$")) return Number.NaN;
  return ids[1].split(",").filter((x) => x.trim() !== "").length;
}
