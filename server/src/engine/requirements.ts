/**
 * The project's dependency declarations read as PEP 508 requirements, and the pins they give: the
 * one reader of requirements*.txt, pyproject.toml and environment.yml for the engine (the init
 * catalogue's pins, torch's version, the launch rules' pins). Imports no rule (rules import it).
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";
import { parse as parseYaml } from "yaml";
import { readWorkspaceText } from "../../../common/src/fs/workspaceFile";

/**
 * The dependency requirements (PEP 508 strings, `name<specifier>`) the project folder `dir` declares
 * ({@link requirementsIn} of each of its dependency files, read through the workspace reader).
 * Unreadable or broken files give nothing.
 */
export function projectRequirements(dir: string): string[] {
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const n of names) {
    if (!isRequirementsFile(n)) continue;
    // Only regular files, capped (a committed symlink to /dev/zero or a FIFO must not hang the server).
    const r = readWorkspaceText(join(dir, n));
    if ("text" in r) out.push(...requirementsIn(n, r.text));
  }
  return out;
}

/** Whether a file named `name` declares dependencies {@link requirementsIn} reads. */
export function isRequirementsFile(name: string): boolean {
  return (
    /^requirements.*\.txt$/.test(name) ||
    name === "pyproject.toml" ||
    name === "environment.yml" ||
    name === "environment.yaml"
  );
}

/**
 * The requirements a dependency file named `name` (its base name) declares in `text`:
 * requirements*.txt lines, pyproject.toml `[project].dependencies` and `[tool.poetry.dependencies]`
 * (`^X` read as `>=X`, a bare version as `==X`; smol-toml), environment.yml / environment.yaml
 * dependencies and their `pip:` list (conda `name=X` read as `name==X`, the `pytorch` package as
 * `torch`; the `yaml` package). Broken text gives nothing; other names give nothing.
 */
export function requirementsIn(name: string, text: string): string[] {
  const out: string[] = [];
  try {
    if (/^requirements.*\.txt$/.test(name)) {
      for (const line of text.split(/\r?\n/)) out.push(line);
    } else if (name === "pyproject.toml") {
      const doc = parseToml(text) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
      for (const dep of (doc.project?.dependencies ?? []) as unknown[]) if (typeof dep === "string") out.push(dep);
      for (const [dep, v] of Object.entries((doc.tool?.poetry?.dependencies ?? {}) as Record<string, unknown>)) {
        const spec =
          typeof v === "string"
            ? v
            : v && typeof (v as { version?: unknown }).version === "string"
              ? (v as { version: string }).version
              : null;
        if (spec !== null) out.push(`${dep}${/^[\d.]+$/.test(spec) ? `==${spec}` : spec.replace(/^\^/, ">=")}`);
      }
    } else if (name === "environment.yml" || name === "environment.yaml") {
      const doc = parseYaml(text) as { dependencies?: unknown[] } | null;
      for (const dep of doc?.dependencies ?? []) {
        // The `pytorch` package is torch (not `pytorch-lightning`, `pytorch-cuda`: other packages).
        if (typeof dep === "string")
          out.push(dep.replace(/^pytorch(?=[\s=<>!~]|$)/, "torch").replace(/^([\w.-]+)=(?!=)/, "$1=="));
        else if (dep && typeof dep === "object" && Array.isArray((dep as { pip?: unknown[] }).pip)) {
          for (const pd of (dep as { pip: unknown[] }).pip) if (typeof pd === "string") out.push(pd);
        }
      }
    }
  } catch {
    // An unreadable or broken dependency file tells us nothing about the pins.
  }
  return out;
}

/**
 * The specifier each requirement gives its distribution, by PEP 503-normalised name (`kornia==0.7.0`
 * → `{ kornia: "==0.7.0" }`); requirements without a specifier are left out; a name given twice
 * keeps both specifiers (`,`-joined: both hold).
 */
export function libraryPins(requirements: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of requirements) {
    const line = r.split("#")[0].split(";")[0].trim();
    const m = /^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*\(?\s*([<>=!~][^)]*)\)?$/.exec(line);
    if (!m) continue;
    const name = m[1].toLowerCase().replace(/[-_.]+/g, "-");
    const spec = m[3].replace(/\+[\w.]+/g, "").trim();
    out[name] = out[name] ? `${out[name]},${spec}` : spec;
  }
  return out;
}
