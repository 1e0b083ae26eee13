import type { ManifestRule, ManifestRuleContext } from "../rule";
import type { TextEdit } from "../types";
import { containerRun } from "../launch/containerRun";

/** GPU072: `docker run --gpus device=2,3` (no double quotes inside the argument): docker splits the list at the comma. */
export const rule: ManifestRule = {
  meta: {
    code: "GPU072",
    name: "docker-gpus-device-list-split",
    severity: "error",
    fixable: true,
    fixSafety: "safe",
    // Reports on devcontainer.json files (every one is read: `meta.devcontainer`) and shell scripts,
    // never on a YAML manifest.
    trigger: () => false,
    devcontainer: true,
    docs: {
      what: 'Reads the `--gpus` value of `docker run` / `docker create` (also `docker container run`, behind `sudo` or `exec`) in shell scripts and Slurm job scripts, and of the `runArgs` of a Dev Container configuration (`.devcontainer/devcontainer.json`, `.devcontainer.json`, `.devcontainer/<folder>/devcontainer.json`), and reports a `device=` list of more than one GPU that reaches docker without double quotes around it (`device=2,3` rather than `"device=2,3"`), also written `--gpus=device=2,3`.',
      follows:
        'The value docker receives: in a shell script, the word after the shell removed its quotes (`--gpus "device=2,3"` still gives docker `device=2,3`); in `runArgs`, the JSON string as it is (the Dev Containers tools pass each string to `docker run` as one argument, with no shell between). Not followed: values built from variables (`--gpus "device=$GPUS"`), commands built in variables, `podman` and `nerdctl` (Podman\'s `--gpus` takes no `device=` form), compose files (GPU020 reads their `device_ids`).',
      why: "docker reads the `--gpus` value as one line of comma-separated fields (Go's encoding/csv in docker/cli's opts/gpus.go), each `key=value` or a bare count. `device=2,3` is therefore two fields: `device=2`, and `3`, taken as a count of GPUs. The daemon refuses a request with both a count and device ids ('cannot set both Count and DeviceIDs on device request'), so the container does not start; with a bare `0` (`device=2,0`) the count is zero and the container gets GPU 2 only; a bare field that is no number is refused as an invalid count. Docker's documentation writes the list inside double quotes that reach docker: `--gpus '\"device=0,2\"'` in a shell, `\"\\\"device=0,2\\\"\"` in a JSON argument list.",
      example:
        '{\n  "name": "train",\n  "image": "nvcr.io/nvidia/pytorch:24.05-py3",\n  "runArgs": ["--gpus", "device=2,3"]\n}\n',
      fix: '{\n  "name": "train",\n  "image": "nvcr.io/nvidia/pytorch:24.05-py3",\n  "runArgs": ["--gpus", "\\"device=2,3\\""]\n}\n',
      whenNotToCare:
        "A single id (`device=2`) has no comma and is read as meant; `all`, a count and a quoted list (`'\"device=2,3\"'`) are fine. Other fields beside the list (`driver=nvidia`) are read as docker reads them: only a bare field beside a `device=` field is reported.",
      references: [
        "docker/cli, opts/gpus.go (docker/cli@28f756087eea5fa301f3fbf12b01ae62f91521c2, lines 36-72): `csv.NewReader(strings.NewReader(value)).Read()` splits the value; a field without `=` sets the count (`parseCount`), `device=` sets DeviceIDs from the rest of its field",
        "moby/moby, daemon/nvidia_linux.go (moby/moby@5c487368636f7d68bdf7ec6ea74fcba2ed604d94), setNvidiaGPUs: `if req.Count != 0 && len(req.DeviceIDs) > 0 { return errConflictCountDeviceIDs }` ('cannot set both Count and DeviceIDs on device request')",
        "Docker documentation, docker container run, 'Access an NVIDIA GPU' (docs/reference/commandline/container_run.md in docker/cli): `docker run -it --rm --gpus '\"device=0,2\"' ubuntu nvidia-smi` exposes the first and third GPUs",
        "devcontainers/cli, src/spec-node/singleContainer.ts (devcontainers/cli@d4ff072abe2afb963f2e769fd939b97895dae196): `...(config.runArgs || [])` joins the `docker run` argument list as it is",
        'microsoft/vscode-dev-containers#1741: `"runArgs": ["--gpus", "device=2,3"]` does not start (\'cannot set both Count and DeviceIDs on device request\')',
      ],
      language: "jsonc",
    },
  },
  checkManifest(ctx) {
    for (const a of gpusArguments(ctx)) {
      const fields = csvFields(a.value);
      if (!fields) continue;
      const device = fields.find((f) => f.startsWith("device="));
      const bare = fields.filter((f) => !f.includes("="));
      if (!device || !bare.length) continue;
      const list = [device.slice("device=".length), ...bare].join(",");
      const quoted = [`"device=${list}"`, ...fields.filter((f) => f.includes("=") && f !== device)].join(",");
      // Only a value that is the list alone is re-quoted: beside other fields the quotes go round the list only.
      const alone = fields[0] === device && bare.length === fields.length - 1 && !/["']/.test(a.value);
      ctx.report({
        range: ctx.manifest.src.range(a.start, a.end),
        message: `--gpus ${a.value}: docker splits the value at each comma, so ${device} is one field and ${bare.map((b) => (b === "" ? "an empty field" : b)).join(", ")} ${bare.length === 1 ? "is" : "are"} read as a GPU count: ${outcome(fields)}; keep the list in double quotes that reach docker (${a.quotedHint(quoted)})`,
        ...(alone ? { fix: { title: "Quote the device list", edits: a.requote(`"${a.value}"`), safe: true } } : {}),
      });
    }
  },
};

/** A `--gpus` value as docker receives it, where it is written, and how to write it re-quoted. */
interface GpusArgument {
  value: string;
  start: number;
  end: number;
  /** How `--gpus` with the value `value` is written there (`--gpus '"device=2,3"'` in a shell, `"\"device=2,3\""` in JSON). */
  quotedHint(value: string): string;
  /** The edits that make docker receive `newValue`. */
  requote(newValue: string): TextEdit[];
}

/** The `--gpus` values of the file's `docker run` commands (shell) or `runArgs` (devcontainer.json). */
function gpusArguments(ctx: ManifestRuleContext): GpusArgument[] {
  const src = ctx.manifest.src;
  const edit = (start: number, end: number, newText: string): TextEdit[] => [{ range: src.range(start, end), newText }];
  const out: GpusArgument[] = [];
  const args = ctx.manifest.devcontainer?.runArgs ?? [];
  args.forEach((a, i) => {
    const inline = a.value.startsWith("--gpus=");
    const at = inline ? a : a.value === "--gpus" ? args[i + 1] : undefined;
    if (!at) return;
    const json = (value: string) => JSON.stringify(inline ? `--gpus=${value}` : value);
    out.push({
      value: inline ? a.value.slice("--gpus=".length) : at.value,
      start: at.start,
      end: at.end,
      quotedHint: json,
      requote: (value) => edit(at.start, at.end, json(value)),
    });
  });
  for (const c of ctx.manifest.jobscript?.commands ?? []) {
    const run = containerRun(c);
    // Podman's --gpus has no device= form, and nerdctl's parser is not cited here: docker only.
    if (!run?.gpus || run.engine !== "docker" || run.gpus.word.expands) continue;
    const { value, word } = run.gpus;
    const prefix = word.value.startsWith("--gpus=") ? "--gpus=" : "";
    out.push({
      value,
      start: word.start,
      end: word.end,
      quotedHint: (v) => `--gpus${prefix ? "=" : " "}'${v}'`,
      requote: (v) => edit(word.start, word.end, `${prefix}'${v}'`),
    });
  }
  return out;
}

/**
 * The fields of one line of CSV as Go's encoding/csv reads it (comma-separated; a field that starts
 * with `"` is quoted, `""` inside it is a quote), or null where docker would refuse the text for
 * another reason (a bare or stray quote, a line break) or the reading is unsure.
 */
export function csvFields(text: string): string[] | null {
  if (/[\r\n]/.test(text)) return null;
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    let field = "";
    if (text[i] === '"') {
      for (i++; ; i++) {
        if (i >= text.length) return null;
        if (text[i] !== '"') field += text[i];
        else if (text[i + 1] === '"') field += text[++i];
        else break;
      }
      i++;
      if (i < text.length && text[i] !== ",") return null;
    } else {
      const end = text.indexOf(",", i);
      field = text.slice(i, end < 0 ? text.length : end);
      if (field.includes('"')) return null;
      i = end < 0 ? text.length : end;
    }
    fields.push(field);
    if (i >= text.length) return fields;
    i++; // the comma
  }
}

/** What docker makes of the fields (docker/cli opts/gpus.go, then the daemon). */
function outcome(fields: string[]): string {
  const seen = new Set<string>();
  let count = 0;
  let ids = "";
  for (const f of fields) {
    const eq = f.indexOf("=");
    const key = eq < 0 ? f : f.slice(0, eq);
    if (seen.has(key)) return `docker refuses it (gpu request key '${key}' can be specified only once)`;
    seen.add(key);
    if (eq >= 0) {
      if (key === "device") ids = f.slice(eq + 1);
      continue;
    }
    if (f === "all") count = -1;
    else if (/^[+-]?[0-9]+$/.test(f)) count = Number(f);
    else return `docker refuses it (invalid count (${f}): value must be either "all" or an integer)`;
  }
  return count !== 0
    ? "the daemon refuses the request (cannot set both Count and DeviceIDs on device request) and the container does not start"
    : `the count is 0, so the container gets GPU ${ids} only`;
}
