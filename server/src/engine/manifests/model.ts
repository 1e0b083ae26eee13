/**
 * The model that manifest rules read, built once per lint: the YAML documents, the containers of
 * every Kubernetes pod spec, the services of a compose file, and every environment variable that a
 * Dockerfile `ENV`, a compose `environment` or a pod's `env` sets (with the edits that remove it).
 */
import { devcontainerFacts, type DevcontainerFacts } from "./devcontainer";
import type { Node, Pair, YAMLMap, YAMLSeq } from "yaml";
import type { Range, TextEdit } from "../types";
import type { ManifestKind } from "./files";
import { SourceText } from "./source";
import { dockerfileFacts, type DockerfileFacts } from "./dockerfile";
import { jobScriptFacts, type JobScriptFacts } from "./jobscript";
import {
  parseYaml,
  parseYamlAfter,
  pairOf,
  valueOf,
  scalarText,
  removeItem,
  removePair,
  contentEnd,
  pairStart,
  isMap,
  isSeq,
  isScalar,
  type YamlDocument,
  type YamlParse,
} from "./yaml";

/** A container of a Kubernetes pod spec (Pod, a workload's pod template, a CronJob's job template, a custom resource's template). */
export interface PodContainer {
  /** The container's mapping. */
  node: YAMLMap;
  name: string | null;
  /** The list it is in: `containers` or `initContainers`. */
  field: "containers" | "initContainers";
  /** The Kubernetes object it belongs to, for messages: `Deployment "train"`. */
  owner: string;
  /** 0-based index of its YAML document. */
  document: number;
  /** The `metadata` of the pod it runs in (a Pod's own, a template's), when written. */
  podMetadata?: YAMLMap;
  /** The mapping keys from its object down to its list (`spec`, `roleTemplates`, `template`, `spec`). */
  path: string[];
}

/** A service of a compose file. */
export interface ComposeService {
  name: string;
  /** The service's mapping. */
  node: YAMLMap;
  /** 0-based index of its YAML document. */
  document: number;
}

/** An environment variable set in a manifest. */
export interface EnvSetting {
  name: string;
  /**
   * The value as written; null when none is written (a compose entry without `=` passes the host's
   * value through, a pod entry may use `valueFrom`).
   */
  value: string | null;
  source: "dockerfile" | "compose" | "kubernetes";
  /** Who gets it, for messages: `the image (ENV)`, `service "train"`, `container "train" of Deployment "x"`. */
  owner: string;
  /** The entry (`K=V`, the `- name: K` item, the `K: V` pair). */
  range: Range;
  /** Edits that remove the entry; null when it cannot be removed cleanly. */
  removal: TextEdit[] | null;
  /** The Kubernetes container spec the entry belongs to (its `resources` say what it asks for); absent for other sources. */
  container?: YAMLMap;
}

/** Everything a manifest rule may read. */
export interface ManifestModel {
  kind: ManifestKind;
  src: SourceText;
  /** The YAML documents (none for a Dockerfile); broken ones are kept but not read by the views below. */
  documents: YamlDocument[];
  /** Containers of Kubernetes pod specs (YAML files, not compose files). */
  containers: PodContainer[];
  /** Compose services (compose files only). */
  services: ComposeService[];
  /** Environment settings of every source. */
  env: EnvSetting[];
  /** Dockerfile facts (Dockerfiles only). */
  dockerfile: DockerfileFacts | null;
  /** Slurm job-script facts (job scripts only). */
  jobscript: JobScriptFacts | null;
  /** Dev Container configuration facts (devcontainer.json only). */
  devcontainer: DevcontainerFacts | null;
}

const quoteName = (s: string | null) => (s === null ? "" : ` "${s}"`);

/** Containers of every pod spec under `node` (any map holding a `containers` list of maps). */
function collectContainers(
  node: unknown,
  owner: string,
  document: number,
  out: PodContainer[],
  parentMetadata?: YAMLMap,
  path: string[] = [],
): void {
  if (isSeq(node)) {
    for (const item of node.items) collectContainers(item, owner, document, out, undefined, path);
    return;
  }
  if (!isMap(node)) return;
  const metadata = valueOf(node, "metadata");
  const kind = scalarText(valueOf(node, "kind"));
  if (kind && valueOf(node, "apiVersion")) {
    owner = `${kind}${quoteName(scalarText(valueOf(valueOf(node, "metadata"), "name")))}`;
    path = [];
  }
  for (const field of ["containers", "initContainers"] as const) {
    const list = valueOf(node, field);
    if (!isSeq(list)) continue;
    for (const c of list.items) {
      if (isMap(c))
        out.push({
          node: c,
          name: scalarText(valueOf(c, "name")),
          field,
          owner,
          document,
          ...(isMap(parentMetadata) ? { podMetadata: parentMetadata } : {}),
          path,
        });
    }
  }
  for (const p of node.items) {
    const k = isScalar(p.key) ? String(p.key.value) : "";
    if (k === "containers" || k === "initContainers") continue;
    // A pod spec (`spec` beside `metadata`: a Pod, a template) runs under that metadata.
    const meta = k === "spec" && isMap(metadata) ? metadata : undefined;
    collectContainers(p.value, owner, document, out, meta, [...path, k]);
  }
}

/** `env` entries of a pod container. */
function podEnv(src: SourceText, c: PodContainer, out: EnvSetting[]): void {
  const envPair = pairOf(c.node, "env");
  const list = envPair?.value;
  if (!envPair || !isSeq(list)) return;
  const owner = `container${quoteName(c.name)} of ${c.owner}`;
  list.items.forEach((item, i) => {
    const name = scalarText(valueOf(item, "name"));
    if (!isMap(item) || name === null) return;
    const valueNode = valueOf(item, "value");
    out.push({
      name,
      value: scalarText(valueNode) ?? (isScalar(valueNode) ? "" : null),
      source: "kubernetes",
      owner,
      range: src.range((item as Node).range?.[0] ?? 0, contentEnd(item as Node)),
      removal: removeItem(src, list as YAMLSeq, i, { map: c.node, pair: envPair }),
      container: c.node,
    });
  });
}

/** `environment` entries of a compose service: a mapping (`K: V`) or a list (`- K=V`). */
function composeEnv(src: SourceText, s: ComposeService, out: EnvSetting[]): void {
  const envPair = pairOf(s.node, "environment");
  const env = envPair?.value;
  if (!envPair || !env) return;
  const owner = `service "${s.name}"`;
  const parent = { map: s.node, pair: envPair };
  if (isMap(env)) {
    for (const p of env.items as Pair[]) {
      if (!isScalar(p.key)) continue;
      const v = p.value as Node | null;
      out.push({
        name: String(p.key.value),
        value: isScalar(v) && v.value !== null ? scalarText(v) : null,
        source: "compose",
        owner,
        range: src.range(pairStart(p), contentEnd(p)),
        removal: removePair(src, env, p, parent),
      });
    }
  } else if (isSeq(env)) {
    env.items.forEach((item, i) => {
      const text = scalarText(item);
      if (text === null) return;
      const eq = text.indexOf("=");
      out.push({
        name: (eq < 0 ? text : text.slice(0, eq)).trim(),
        value: eq < 0 ? null : text.slice(eq + 1),
        source: "compose",
        owner,
        range: src.range((item as Node).range?.[0] ?? 0, contentEnd(item as Node)),
        removal: removeItem(src, env, i, parent),
      });
    });
  }
}

/**
 * Builds the model of a manifest. Never throws for any text.
 * @param previous the last version's YAML parse (the editor): only the documents the change touches are parsed again (yaml.ts parseYamlAfter).
 */
export function buildManifestModel(text: string, kind: ManifestKind, previous?: YamlParse): ManifestModel {
  const src = new SourceText(text);
  const model: ManifestModel = {
    kind,
    src,
    documents: [],
    containers: [],
    services: [],
    env: [],
    dockerfile: null,
    jobscript: null,
    devcontainer: null,
  };
  if (kind === "devcontainer") {
    model.devcontainer = devcontainerFacts(text);
    return model;
  }
  if (kind === "dotenv") return model; // GPU076 reads its lines itself (rules/GPU076)
  if (kind === "jobscript") {
    model.jobscript = jobScriptFacts(src);
    return model;
  }
  if (kind === "dockerfile") {
    model.dockerfile = dockerfileFacts(src);
    for (const e of model.dockerfile.env) {
      model.env.push({
        name: e.name,
        value: e.value,
        source: "dockerfile",
        owner: "the image (ENV)",
        range: e.range,
        removal: e.removal,
      });
    }
    return model;
  }
  model.documents = previous ? parseYamlAfter(previous, text).documents : parseYaml(text);
  for (const { doc, index, broken } of model.documents) {
    const root = doc.contents;
    if (broken || !isMap(root)) continue;
    if (kind === "compose") {
      const services = valueOf(root, "services");
      if (!isMap(services)) continue;
      for (const p of services.items) {
        if (isScalar(p.key) && isMap(p.value))
          model.services.push({ name: String(p.key.value), node: p.value, document: index });
      }
    } else if (valueOf(root, "apiVersion") && valueOf(root, "kind")) {
      collectContainers(root, "", index, model.containers);
    }
  }
  for (const c of model.containers) podEnv(src, c, model.env);
  for (const s of model.services) composeEnv(src, s, model.env);
  return model;
}
