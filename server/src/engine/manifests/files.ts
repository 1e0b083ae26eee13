/**
 * Which manifest a file is: a Dockerfile, a compose file, other YAML (read for Kubernetes
 * objects), or a shell script that may be a Slurm job script. Decided by the editor's language id when there is one, else by the file name, as VS
 * Code's built-in `dockerfile`, `dockercompose` and `yaml` languages do.
 */
import { basename, dirname } from "node:path";

/**
 * - `dockerfile`: `Dockerfile`, `Containerfile`, `Dockerfile.*`, `*.Dockerfile` (any case);
 * - `compose`: `compose*.yml`/`.yaml`, `docker-compose*.yml`, `*docker*compose*.yaml`;
 * - `yaml`: any other `.yml`/`.yaml`, whose documents with `apiVersion` and `kind` are Kubernetes objects;
 * - `jobscript`: `.sbatch`, `.slurm`, `.sh`, `.bash` (editor language `shellscript` or `slurm`): a Slurm
 *   batch script when it has `#SBATCH` lines (a shell script without them gets no finding);
 * - `devcontainer`: a Dev Container configuration (JSON with comments) where the Dev Containers
 *   specification looks for one: `.devcontainer/devcontainer.json`, `.devcontainer.json`,
 *   `.devcontainer/<folder>/devcontainer.json`. Its `runArgs` are `docker run` options.
 * - `dotenv`: a dotenv file (`.env`, `.env.*`, `*.env`, any case; whatever the editor's language), read
 *   only by the rules that read one (`meta.dotenv`: GPU076, the pydantic-settings `env_file`).
 */
export type ManifestKind = "dockerfile" | "compose" | "yaml" | "jobscript" | "devcontainer" | "dotenv";

/** Whether a base name (any case) names a dotenv file: `.env`, `.env.local`, `local.env`. */
export function isDotenvName(name: string): boolean {
  const n = name.toLowerCase();
  return n === ".env" || (n.startsWith(".env.") && n.length > 5) || (n.endsWith(".env") && n.length > 4);
}

/** The folder the Dev Containers specification reads configurations from. */
export const DEVCONTAINER_FOLDER = ".devcontainer";

/** Whether a path names a Dev Container configuration (by its name and, for `devcontainer.json`, its folders). */
export function isDevcontainerPath(file: string): boolean {
  const name = basename(file);
  if (name === ".devcontainer.json") return true;
  if (name !== "devcontainer.json") return false;
  const parent = dirname(file);
  return basename(parent) === DEVCONTAINER_FOLDER || basename(dirname(parent)) === DEVCONTAINER_FOLDER;
}

/** Whether a base name (any case) names a shell script that may be a Slurm job script. */
function isJobScriptName(name: string): boolean {
  const n = name.toLowerCase();
  return n.endsWith(".sbatch") || n.endsWith(".slurm") || n.endsWith(".sh") || n.endsWith(".bash");
}

/** Whether a base name (any case) names a Dockerfile. */
export function isDockerfileName(name: string): boolean {
  const n = name.toLowerCase();
  return (
    n === "dockerfile" ||
    n === "containerfile" ||
    n.startsWith("dockerfile.") ||
    n.startsWith("containerfile.") ||
    n.endsWith(".dockerfile") ||
    n.endsWith(".containerfile")
  );
}

const isYamlName = (n: string): boolean => n.endsWith(".yml") || n.endsWith(".yaml");

/** Whether a base name (any case) names a compose file. */
export function isComposeName(name: string): boolean {
  const n = name.toLowerCase();
  if (!isYamlName(n)) return false;
  if (n.startsWith("compose") || n.startsWith("docker-compose")) return true;
  const d = n.indexOf("docker");
  return d >= 0 && n.indexOf("compose", d + 6) >= 0;
}

/**
 * The manifest kind of a file, or null when it is none (Python, notebooks, anything else).
 * @param file the path of the file; only its base name is read (and, for `devcontainer.json`, its
 *   two parent folders' names). Null for unsaved buffers.
 * @param languageId the editor's language id, when known: `dockerfile`, `dockercompose`, `yaml`,
 *   `shellscript` and `slurm` decide; any other id (e.g. `python`) means "not a manifest".
 */
export function manifestKindOf(file: string | null, languageId?: string): ManifestKind | null {
  const name = file ? basename(file) : "";
  // `.sbatch`/`.slurm` have no language of their own in VS Code (plaintext, or an extension's `slurm`).
  if (/\.(?:sbatch|slurm)$/i.test(name)) return "jobscript";
  // VS Code gives these `jsonc` (or `json`): the path decides, whatever the language.
  if (file && isDevcontainerPath(file)) return "devcontainer";
  // No built-in VS Code language is given to every dotenv file (`dotenv`, `properties`, `ini`,
  // `shellscript` or `plaintext`, by extension): the name decides, except for Python itself.
  if (isDotenvName(name) && languageId !== "python") return "dotenv";
  if (languageId !== undefined) {
    if (languageId === "dockerfile") return "dockerfile";
    if (languageId === "dockercompose") return "compose";
    if (languageId === "yaml") return isComposeName(name) ? "compose" : "yaml";
    if (languageId === "shellscript" || languageId === "slurm") return "jobscript";
    return null;
  }
  if (isDockerfileName(name)) return "dockerfile";
  if (isComposeName(name)) return "compose";
  if (isYamlName(name.toLowerCase())) return "yaml";
  if (isJobScriptName(name)) return "jobscript";
  return null;
}
