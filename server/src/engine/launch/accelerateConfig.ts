/**
 * An accelerate config file named by a launch (`accelerate launch --config_file cfg.yaml`), read as
 * accelerate reads it: its top-level `num_processes`, `num_machines`, `gpu_ids`, `distributed_type`
 * and, under `deepspeed_config`, `deepspeed_multinode_launcher` (huggingface/accelerate at 16cb6eb8,
 * src/accelerate/commands/launch.py `_validate_launch_command`: the config's values fill the options
 * not given on the command line; `distributed_type` decides the launcher only where no
 * `--multi_gpu`/`--use_deepspeed`/`--use_fsdp`/`--use_megatron_lm`/`--tpu` flag is given).
 */
import { existsSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { parse as parseYamlText } from "yaml";
import { wholeNumber } from "./commandLine";

/** The accelerate config values a launch reads (`--config_file`), or from an accelerate YAML file. */
export interface AccelerateConfig {
  numProcesses: number | null;
  numMachines: number | null;
  gpuIds: string | null;
  /** `distributed_type` (`MULTI_GPU`, `DEEPSPEED`, `FSDP`, ...); null when not a string. */
  distributedType: string | null;
  /** `deepspeed_config.deepspeed_multinode_launcher` (`standard`, `pdsh`, ...); null when not written. */
  multinodeLauncher: string | null;
  file: string;
}

/**
 * Reads an accelerate config named by a shell script's `--config_file`: relative to the script's
 * folder, then up to three folders above it (the script may be run from the project root).
 * @param read how files are read (a manifest rule's ManifestRuleContext.read).
 */
export function readAccelerateConfig(
  scriptFile: string | null,
  path: string,
  read: (path: string, maxBytes: number) => string | null,
): AccelerateConfig | null {
  if (!scriptFile || path.includes("$") || path.startsWith("~")) return null;
  const candidates: string[] = [];
  if (isAbsolute(path)) candidates.push(path);
  else
    for (let d = dirname(scriptFile), k = 0; k < 4; k++, d = dirname(d)) {
      candidates.push(join(d, path));
      if (existsSync(join(d, ".git")) || dirname(d) === d) break;
    }
  for (const c of candidates) {
    const text = read(resolve(c), 256 * 1024);
    if (text === null) continue;
    try {
      const doc = parseYamlText(text) as Record<string, unknown> | null;
      if (!doc || typeof doc !== "object") return null;
      const num = (v: unknown) =>
        typeof v === "number" && Number.isInteger(v) ? v : typeof v === "string" ? wholeNumber(v) : null;
      const ids = doc.gpu_ids;
      const ds = doc.deepspeed_config;
      const launcher =
        ds && typeof ds === "object" ? (ds as Record<string, unknown>).deepspeed_multinode_launcher : undefined;
      return {
        numProcesses: num(doc.num_processes),
        numMachines: num(doc.num_machines),
        gpuIds: typeof ids === "number" || typeof ids === "string" ? String(ids) : null,
        distributedType: typeof doc.distributed_type === "string" ? doc.distributed_type : null,
        multinodeLauncher: typeof launcher === "string" ? launcher : null,
        file: c,
      };
    } catch {
      return null;
    }
  }
  return null;
}
