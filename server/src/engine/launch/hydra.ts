/**
 * How Hydra starts a task function, for GPU062: the environment entries a config gives
 * `hydra.job.env_set`, and the `@hydra.main(config_path=..., config_name=...)` functions of the
 * project whose config folder holds that config.
 *
 * Facts (facebookresearch/hydra@2c03d1b925fe239e0b67b923699d4027685f198f):
 * - hydra/core/utils.py:100 `run_job` calls the task function inside
 *   `with env_override(hydra_cfg.hydra.job.env_set):` (line 173, the call at line 176), and
 *   `env_override` (line 448) does `os.environ.update(env)` (line 453): the entries reach os.environ
 *   when the task function starts, after the entry module's top level ran (its imports among it).
 * - hydra/main.py:47-53 (the docstring of `main`): "Relative paths are interpreted relative to the
 *   declaring python file"; `pkg://` names a package; config_name is "usually the file name
 *   without the .yaml extension". hydra/_internal/utils.py:128-136 `compute_search_path_dir` joins a
 *   relative config_path to the calling file's folder.
 * - hydra/plugins/config_source.py:114-124 `_normalize_file_name` adds `.yaml` to a name without it
 *   (and refuses `.yml`); lines 127-153 `_get_header_dict` read the `# @package` header from the
 *   comment lines that open the file.
 * - website/docs/advanced/overriding_packages.md:7 "The default package of an input config is
 *   derived from its Config Group" (`hydra/x.yaml` goes under `hydra`), :69 the primary config's is
 *   the global package, :131 `_group_` is the config's own group; website/docs/configure_hydra/job.md:83-92
 *   hydra.job.env_set "is used to set the environment variables of the running job".
 *
 * YAML is read with the `yaml` package (manifests/yaml.ts), files through the caller's reader (the
 * safe reader of a manifest rule's context), folders by slurmLaunch.ts `filesAround`. Never throws.
 */
import { basename, dirname, isAbsolute, resolve } from "node:path";
import { isScalar, type Document, type Node, type Pair, type YAMLMap } from "yaml";
import type { ModuleModel } from "../python/model";
import { stringValue, type SyntaxNode } from "../python/parser";
import { callArgs } from "../rules/shared/py";
import { isMap, isSeq, parseYaml, scalarText, valueAt } from "../manifests/yaml";
import { filesAround } from "../slurmLaunch";

/** Where a config's `env_set` entries are: a config at the root (`hydra.job.env_set`) or an option of the `hydra` group (`job.env_set`). */
export type EnvSetForm = "root" | "hydra-group";

/** The `env_set` mapping of a Hydra config document, with the folder @hydra.main must name for it. */
export interface EnvSetBlock {
  form: EnvSetForm;
  /** The `env_set` mapping. */
  map: YAMLMap;
  /** The config folder a task's config_path must name (absolute). */
  configDir: string;
  /** The config's name in its folder or group, without `.yaml`. */
  stem: string;
}

/** The `# @package` header of a document (Hydra's `_get_header_dict` on the comment lines that open it), or null. */
function packageHeader(doc: Document.Parsed): string | null {
  const root = doc.contents;
  const first = isMap(root) ? (root.items[0]?.key as Node | undefined) : undefined;
  const opening = doc.commentBefore ?? root?.commentBefore ?? first?.commentBefore ?? "";
  for (const raw of opening.split("\n")) {
    const line = raw.trim();
    if (!line) continue;
    if (!line.startsWith("@")) break;
    const [key, value] = line.split(/\s+/);
    if (key === "@package") return value ?? null;
  }
  return null;
}

/**
 * The `env_set` block of a Hydra config file: its one YAML document's `hydra.job.env_set` (a config
 * at the root package: no header, `# @package _global_` or `_group_`), or, in a folder named `hydra`
 * (the `hydra` config group, whose default package is `hydra`), its `job.env_set` (no header,
 * `_group_` or `hydra`). Null for
 * anything else: another name than `*.yaml`, several documents, a Kubernetes object.
 */
export function envSetBlock(
  file: string,
  documents: ReadonlyArray<{ doc: Document.Parsed; broken: boolean }>,
): EnvSetBlock | null {
  if (!file.endsWith(".yaml") || documents.length !== 1 || documents[0].broken) return null;
  const doc = documents[0].doc;
  const root = doc.contents;
  if (!isMap(root) || (valueAt(root, ["apiVersion"]) && valueAt(root, ["kind"]))) return null;
  const header = packageHeader(doc);
  const stem = basename(file).slice(0, -".yaml".length);
  // `_group_` is the config's own group: the root package for a primary config, `hydra` in the group.
  const atRoot = valueAt(root, ["hydra", "job", "env_set"]);
  if (isMap(atRoot) && (header === null || header === "_global_" || header === "_group_"))
    return { form: "root", map: atRoot, configDir: dirname(file), stem };
  const inGroup = valueAt(root, ["job", "env_set"]);
  const groupHeader = header === null || header === "_group_" || header === "hydra";
  if (isMap(inGroup) && groupHeader && basename(dirname(file)) === "hydra")
    return { form: "hydra-group", map: inGroup, configDir: dirname(dirname(file)), stem };
  return null;
}

/** A `@hydra.main(...)` task function of a module. */
export interface HydraMain {
  /** The function definition. */
  def: SyntaxNode;
  /** The `@hydra.main(...)` decorator. */
  decorator: SyntaxNode;
  name: string;
  /** config_path as written: a relative or absolute path (not `pkg://`). */
  configPath: string;
  /** config_name as written, or null when not given (the config is chosen with `--config-name`). */
  configName: string | null;
}

/**
 * The module-level functions decorated with `@hydra.main(...)` (`hydra.main` as the module's
 * imports resolve it) whose config_path is a string literal (keyword or first argument) and whose
 * config_name, when given, is one too (keyword or second argument).
 */
export function hydraMains(model: ModuleModel): HydraMain[] {
  const out: HydraMain[] = [];
  for (const s of model.tree.statements) {
    if (s.type !== "decorated_definition") continue;
    const def = s.childForFieldName("definition");
    const name = def?.type === "function_definition" ? def.childForFieldName("name")?.text : undefined;
    if (!def || !name) continue;
    for (const decorator of s.namedChildren) {
      const call = decorator?.type === "decorator" ? decorator.namedChildren[0] : null;
      if (!decorator || call?.type !== "call" || model.resolve(call.childForFieldName("function")) !== "hydra.main")
        continue;
      const { positional, keywords } = callArgs(call);
      const pathNode = keywords.get("config_path") ?? positional[0];
      const nameNode = keywords.get("config_name") ?? positional[1];
      const configPath = stringValue(pathNode);
      const configName = nameNode ? stringValue(nameNode) : null;
      if (configPath === null || configPath.startsWith("pkg://") || (nameNode && configName === null)) continue;
      out.push({ def, decorator, name, configPath, configName });
    }
  }
  return out;
}

/** The folder a task's config_path names, for the module at `file`. */
export function configDirOf(file: string, main: Pick<HydraMain, "configPath">): string {
  return isAbsolute(main.configPath) ? resolve(main.configPath) : resolve(dirname(file), main.configPath);
}

/** The primary config's file of a task (config_name with `.yaml` added when missing), or null without config_name. */
export function primaryConfigOf(configDir: string, main: Pick<HydraMain, "configName">): string | null {
  if (main.configName === null) return null;
  return resolve(configDir, main.configName.endsWith(".yaml") ? main.configName : `${main.configName}.yaml`);
}

/** At most this many Python files are read when looking for the entry modules of one config. */
const MAX_CANDIDATES = 200;
const MAX_MODULE_BYTES = 1024 * 1024;

/**
 * The Python files around a config folder that may declare a task using it: the `.py` files of
 * the folder above it and of the config folder itself first, then of that folder's ancestors (up to a folder holding `.git`, three levels),
 * and of their direct subfolders (slurmLaunch.ts `filesAround`), whose text holds `hydra` and
 * `main` (a relative config_path is resolved from the file's folder, so the file sits above the
 * config folder, beside it or in it). Read through `read`.
 */
export function entryModuleCandidates(
  configDir: string,
  read: (path: string, maxBytes: number) => string | null,
): Array<{ file: string; text: string }> {
  const out: Array<{ file: string; text: string }> = [];
  const near = [dirname(configDir), configDir];
  for (const file of filesAround(dirname(configDir), (n) => n.endsWith(".py"), MAX_CANDIDATES, near)) {
    const text = read(file, MAX_MODULE_BYTES);
    if (text !== null && text.includes("hydra") && text.includes("main")) out.push({ file, text });
  }
  return out;
}

/** How the config relates to a task: its primary config, named in the primary's defaults, or only in its config folder. */
export type ConfigRelation = "primary" | "default" | "folder";

/**
 * How the config of `block` is used by a task whose config folder is `block.configDir`:
 * - a root config: `primary` when config_name names it; `default` when the primary config's
 *   `defaults:` list names it as a plain entry (`- base`, merged at the root); else `folder` (a
 *   primary config chosen with `--config-name`, or merged by a route not followed here);
 * - a `hydra` group option: `default` when the primary's defaults list selects it (`hydra: NAME`,
 *   `/hydra: NAME`, `override hydra: NAME`, `override /hydra: NAME`); else null (chosen on the
 *   command line, or by another config: not followed).
 * @param readPrimary reads the primary config's text (null: unreadable)
 */
export function relationOf(
  block: EnvSetBlock,
  file: string,
  primary: string | null,
  readPrimary: (path: string) => string | null,
): ConfigRelation | null {
  if (block.form === "root" && primary === resolve(file)) return "primary";
  const defaults = primary ? defaultsOf(readPrimary(primary)) : [];
  const named = (d: DefaultsEntry) =>
    block.form === "root"
      ? d.group === null && d.option === block.stem
      : d.group === "hydra" && d.option === block.stem;
  if (defaults.some(named)) return "default";
  return block.form === "root" ? "folder" : null;
}

/** An entry of a defaults list: `- name` (group null) or `- group: option` (`override` and a leading `/` dropped). */
interface DefaultsEntry {
  group: string | null;
  option: string;
}

/** The entries of the `defaults:` list of a config text (its one document); empty when none can be read. */
function defaultsOf(text: string | null): DefaultsEntry[] {
  if (text === null) return [];
  const docs = parseYaml(text);
  if (docs.length !== 1 || docs[0].broken) return [];
  const list = valueAt(docs[0].doc.contents, ["defaults"]);
  if (!isSeq(list)) return [];
  const out: DefaultsEntry[] = [];
  for (const item of list.items) {
    const plain = scalarText(item);
    if (plain !== null) out.push({ group: null, option: plain.replace(/\.yaml$/, "") });
    if (!isMap(item) || item.items.length !== 1) continue;
    const pair = item.items[0] as Pair;
    const key = isScalar(pair.key) ? String(pair.key.value) : null;
    const option = scalarText(pair.value);
    if (key === null || option === null) continue;
    const group = key.replace(/^override\s+/, "").replace(/^\//, "");
    out.push({ group, option: option.replace(/\.yaml$/, "") });
  }
  return out;
}
