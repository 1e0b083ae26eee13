/**
 * What a Python program does with its CUDA device, as GPU075 asks it of the two sides of a child
 * process start: the child (a project module started with `python -m`), whose CUDA work may be on
 * the default device, and the parent (a file the project's scripts start once per GPU), which may
 * pick its GPU by the local rank. Everything is read from the syntax tree (the module model).
 */
import { SET_DEVICE_PATHS } from "../frameworks";
import type { ModuleModel } from "./model";
import { stringValue, type SyntaxNode } from "./parser";
import { RankFlow } from "./rankFlow";
import { callArgs, calleePath } from "../rules/shared/py";

/** Where a module uses CUDA (1-based line) and how, for messages: `torch.device("cuda")`. */
export interface DeviceSite {
  line: number;
  form: string;
}

/** The environment variables whose read means the program knows its rank (and may pick a device by it). */
const RANK_READS = ["LOCAL_RANK", "RANK", "SLURM_LOCALID", "SLURM_PROCID", "OMPI_COMM_WORLD_LOCAL_RANK"];

/** Calls that choose the current device, or a device for a block (torch.cuda.device is a context manager). */
const CHOOSES_DEVICE: ReadonlySet<string> = new Set([...SET_DEVICE_PATHS, "torch.cuda.device"]);

/** `"cuda"` as a string literal (no ordinal): the current device (PyTorch, CUDA semantics). */
const isDefaultCuda = (n: SyntaxNode | null | undefined): boolean => !!n && stringValue(n) === "cuda";

/**
 * How one call uses the default CUDA device: `torch.device("cuda")`, `device="cuda"` given to a
 * torch function, `x.cuda()` without an argument, `x.to("cuda")`; null otherwise.
 */
function defaultUseOf(model: ModuleModel, call: SyntaxNode): string | null {
  const path = calleePath(model, call);
  const { positional, keywords } = callArgs(call);
  if (path === "torch.device" && positional.length === 1 && isDefaultCuda(positional[0])) return 'torch.device("cuda")';
  if (path?.startsWith("torch.") && isDefaultCuda(keywords.get("device"))) return `${path}(device="cuda")`;
  const fn = call.childForFieldName("function");
  const method = fn?.type === "attribute" ? fn.childForFieldName("attribute")?.text : null;
  if (path?.startsWith("torch.") || !model.frameworks.has("torch")) return null;
  if (method === "cuda" && positional.length === 0 && keywords.size === 0) return ".cuda()";
  if (method === "to" && positional.length >= 1 && isDefaultCuda(positional[0])) return '.to("cuda")';
  return null;
}

/**
 * Whether the module may choose its device itself: it calls torch.cuda.set_device (or
 * `torch.accelerator.set_device_index`, or enters `torch.cuda.device(...)`), writes
 * CUDA_VISIBLE_DEVICES, names a CUDA device with an ordinal (`"cuda:1"`, `f"cuda:{i}"`,
 * `torch.device("cuda", i)`, `.cuda(i)`), builds a device from a value (`torch.device(args.device)`),
 * or reads a rank variable or a variable that names a device or GPU.
 */
function choosesDevice(model: ModuleModel): boolean {
  for (const call of model.nodesOfType("call")) {
    if (!call) continue;
    const path = calleePath(model, call);
    if (path && CHOOSES_DEVICE.has(path)) return true;
    const { positional, keywords } = callArgs(call);
    if (path === "torch.device" && !(positional.length === 1 && stringValue(positional[0]) !== null)) return true;
    const fn = call.childForFieldName("function");
    const method = fn?.type === "attribute" ? fn.childForFieldName("attribute")?.text : null;
    if (method === "cuda" && !path?.startsWith("torch.") && (positional.length > 0 || keywords.size > 0)) return true;
  }
  // A string (or f-string) whose text names an ordinal, `cuda:` followed by anything.
  if (model.nodesOfType("string").some((s) => !!s && s.text.includes("cuda:"))) return true;
  if (model.statementWrites().some((w) => w.writes.some((x) => x.variable === "CUDA_VISIBLE_DEVICES"))) return true;
  return model.events.some(
    (e) => e.kind === "envRead" && (RANK_READS.includes(e.variable) || /DEVICE|GPU/i.test(e.variable)),
  );
}

/**
 * The module's first use of the default CUDA device ({@link defaultUseOf}), when it never chooses
 * a device itself ({@link choosesDevice}) and imports no module of the project (which could choose
 * one for it: `isProjectModule`); null otherwise. Only torch's forms are read.
 */
export function defaultDeviceUse(model: ModuleModel, isProjectModule: (path: string) => boolean): DeviceSite | null {
  if (!model.frameworks.has("torch")) return null;
  if ([...model.symbols.values()].some((p) => isProjectModule(p))) return null;
  let first: DeviceSite | null = null;
  for (const call of model.nodesOfType("call")) {
    if (!call) continue;
    const form = defaultUseOf(model, call);
    if (form) {
      first = { line: call.startPosition.row + 1, form };
      break;
    }
  }
  return first && !choosesDevice(model) ? first : null;
}

/**
 * The module's first `torch.cuda.set_device(x)` (or `torch.accelerator.set_device_index(x)`) whose
 * argument is the local rank (python/rankFlow.ts: `int(os.environ["LOCAL_RANK"])` through names,
 * `args.local_rank`, ...), anywhere in the file; null when none.
 */
export function localRankDevice(model: ModuleModel): DeviceSite | null {
  let flow: RankFlow | null = null;
  for (const call of model.nodesOfType("call")) {
    if (!call) continue;
    const path = calleePath(model, call);
    if (!path || !SET_DEVICE_PATHS.includes(path)) continue;
    const arg = callArgs(call).positional[0];
    if (!arg) continue;
    flow ??= new RankFlow(model);
    if (flow.origin(arg).kind === "local")
      return {
        line: call.startPosition.row + 1,
        form: `${path.replace(/^torch\.cuda\./, "torch.cuda.")}(${arg.text})`,
      };
  }
  return null;
}
