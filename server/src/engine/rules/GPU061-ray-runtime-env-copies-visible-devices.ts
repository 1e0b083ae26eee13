import type { PythonRule, RuleContext } from "../rule";
import { snippet } from "../rule";
import type { Fix, RelatedInfo } from "../types";
import { enclosingFunction, parameterNames, stringValue, type SyntaxNode } from "../python/parser";
import { nodeRange } from "../python/events";
import { callArgs, contains, type CallArgs } from "./shared/py";

/** The variables through which Ray hands each GPU task or actor its GPUs (Ray's accelerator managers for NVIDIA and AMD). */
const MASKS = ["CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"];
/** ray.init arguments that are only allowed when ray.init starts a new local cluster (Ray raises "When connecting to an existing cluster, ... must not be provided"). */
const LOCAL_CLUSTER_ARGS = ["num_cpus", "num_gpus", "resources", "object_store_memory", "labels"];
/** Calls that read a dictionary without changing it: passing the copy to one of them leaves its entries as they are. */
const READERS = new Set(["dict", "len", "print", "str", "repr", "sorted", "list", "set", "json.dumps", "copy.copy"]);
const MAX_HOPS = 4;

/** Where a runtime_env reaches Ray: the node that reports, the runtime_env value, and what it applies to. */
interface Site {
  /** The runtime_env value given there (a keyword argument's value or a dictionary pair's). */
  runtimeEnv: SyntaxNode;
  /** "job": ray.init's runtime_env, for every worker of the job; else one task's or actor's. */
  scope: "job" | "actor" | "task" | "task or actor";
  /** The GPU request that makes this a GPU task or actor (`num_gpus=1`), or, for ray.init, one in the file. */
  gpus: SyntaxNode;
}

/** A copy of os.environ: the expression that copies it and the `os.environ` it reads; `via` is the assignment it was followed through, if any. */
interface EnvCopy {
  expr: SyntaxNode;
  environ: SyntaxNode;
  via: SyntaxNode | null;
}

/** Whether `v` is a number literal greater than zero (`1`, `0.5`). */
function positive(v: SyntaxNode | null | undefined): boolean {
  return (
    !!v &&
    (v.type === "integer" || v.type === "float") &&
    /^[0-9._]+$/.test(v.text) &&
    Number(v.text.replace(/_/g, "")) > 0
  );
}

/** Whether `v` is the literal 0 (or 0.0). */
function zero(v: SyntaxNode | null | undefined): boolean {
  return !!v && (v.type === "integer" || v.type === "float") && /^[0._]+$/.test(v.text);
}

/** The plain `name = value` assignments of `name` whose function is `scope` (null: the module's own code). */
function assignmentsIn(ctx: RuleContext, name: string, scope: SyntaxNode | null): SyntaxNode[] {
  return ctx.model
    .nodesMentioning("assignment", [name], true)
    .filter(
      (a) =>
        a.childForFieldName("left")?.type === "identifier" &&
        a.childForFieldName("left")?.text === name &&
        !!a.childForFieldName("right") &&
        (enclosingFunction(a)?.id ?? null) === (scope?.id ?? null),
    );
}

/**
 * The assignment that gives `name` its value where `at` reads it: the latest one of `at`'s function
 * before it; for a name that function neither assigns nor takes as a parameter, the enclosing
 * functions' latest before it, then the module's last. Null when the value is not seen here (a parameter, a
 * name bound otherwise: a loop, a `with`, an import).
 */
function bindingAt(ctx: RuleContext, name: string, at: SyntaxNode): SyntaxNode | null {
  let before = at.startIndex;
  for (let scope = enclosingFunction(at); ; scope = scope ? enclosingFunction(scope) : null) {
    const own = assignmentsIn(ctx, name, scope);
    const earlier = own.filter((a) => a.startIndex < before);
    if (earlier.length) return earlier[earlier.length - 1];
    if (!scope) return null;
    if (own.length || parameterNames(scope.childForFieldName("parameters")).has(name)) return null;
    // An enclosing function's names as they are where `scope` is defined; the module's as they are
    // when the function runs, after the module's own code.
    before = enclosingFunction(scope) ? scope.startIndex : Infinity;
  }
}

/** The text of an expression with its quotes made double (`env['x']` and `env["x"]` compare equal). */
function norm(text: string | undefined): string {
  return (text ?? "").replace(/'/g, '"');
}

/**
 * Whether the code between `from` and `to` may change the entries of the dictionary `target` (a
 * name, or `name["env_vars"]`; `name` is the name it starts with): `.pop(key)` or `del`/assignment
 * of an entry whose key is not a string that `harmless` accepts, `.popitem()`/`.clear()` and the
 * other methods that change it, `|=`, or passing it to a function that may change it. Then the
 * copy may have lost what this rule looks for: silent.
 */
function touched(
  ctx: RuleContext,
  target: string,
  name: string,
  [from, to]: [number, number],
  harmless: (key: string) => boolean,
): boolean {
  const keyOk = (k: SyntaxNode | null | undefined) => {
    const v = stringValue(k);
    return v !== null && harmless(v);
  };
  const types = ["call", "delete_statement", "assignment", "augmented_assignment"];
  for (const n of ctx.model.nodesMentioning(types, [name], true)) {
    // Only what runs between: a node that encloses `to` is the statement that reads the copy.
    if (n.startIndex < from || n.startIndex >= to || n.endIndex > to) continue;
    if (n.type === "call") {
      const fn = n.childForFieldName("function");
      if (fn?.type === "attribute" && norm(fn.childForFieldName("object")?.text) === target) {
        if (changes(fn.childForFieldName("attribute")?.text ?? "", callArgs(n), harmless)) return true;
        continue;
      }
      const args = callArgs(n);
      const passes = [...args.positional, ...args.keywords.values()].some((a) => norm(a.text) === target);
      if (passes && !READERS.has(ctx.model.resolve(fn) ?? fn?.text ?? "")) return true;
      continue;
    }
    if (n.type === "augmented_assignment" && norm(n.childForFieldName("left")?.text) === target) return true;
    const subscripts = n.type === "delete_statement" ? n.descendantsOfType("subscript") : [n.childForFieldName("left")];
    for (const s of subscripts)
      if (
        s?.type === "subscript" &&
        norm(s.childForFieldName("value")?.text) === target &&
        !keyOk(s.childForFieldName("subscript"))
      )
        return true;
  }
  return false;
}

/** Whether calling `method` of a dictionary with `args` may remove or set an entry whose key `harmless` does not accept. */
function changes(method: string, args: CallArgs, harmless: (key: string) => boolean): boolean {
  const keyOk = (k: SyntaxNode | null | undefined) => {
    const v = stringValue(k);
    return v !== null && harmless(v);
  };
  if (["get", "items", "keys", "values", "copy"].includes(method)) return false;
  if (method === "pop" || method === "setdefault") return !keyOk(args.positional[0]);
  if (method !== "update") return true;
  const [arg, ...more] = args.positional;
  if (more.length || (arg && arg.type !== "dictionary")) return true;
  const pairs = arg ? arg.namedChildren : [];
  if (pairs.some((p) => p?.type !== "pair" || !keyOk(p.childForFieldName("key")))) return true;
  return [...args.keywords.keys()].some((k) => !harmless(k));
}

/** For the copied environment: an entry that names no GPU mask. */
const NOT_A_MASK = (key: string) => !MASKS.includes(key);

/** Whether `n` is `os.environ.items()` (or `environ.items()` through an import of it). */
function environItems(ctx: RuleContext, n: SyntaxNode | null | undefined): SyntaxNode | null {
  const fn = n?.type === "call" ? n.childForFieldName("function") : null;
  if (fn?.type !== "attribute" || fn.childForFieldName("attribute")?.text !== "items") return null;
  const obj = fn.childForFieldName("object");
  return ctx.model.isEnviron(obj) ? obj : null;
}

/** Whether a dictionary literal sets one of the GPU masks itself (`{**os.environ, "CUDA_VISIBLE_DEVICES": ...}`): a deliberate value. */
function setsMask(d: SyntaxNode): boolean {
  return d.namedChildren.some(
    (p) => p?.type === "pair" && MASKS.includes(stringValue(p.childForFieldName("key")) ?? ""),
  );
}

/** The `os.environ` an expression copies whole, or null: `os.environ`, `.copy()`, `dict(...)`, `{**os.environ}`, an unfiltered comprehension over `.items()`, `a | b`. */
function copiedEnviron(ctx: RuleContext, v: SyntaxNode): SyntaxNode | null {
  if (v.type === "parenthesized_expression") return v.namedChildren[0] ? copiedEnviron(ctx, v.namedChildren[0]) : null;
  if (ctx.model.isEnviron(v)) return v;
  if (v.type === "call") {
    const fn = v.childForFieldName("function");
    const path = ctx.model.resolve(fn);
    const args = callArgs(v);
    if (path === "copy.copy" || path === "copy.deepcopy")
      return ctx.model.isEnviron(args.positional[0]) ? args.positional[0] : null;
    if (fn?.type === "attribute" && fn.childForFieldName("attribute")?.text === "copy") {
      const obj = fn.childForFieldName("object");
      return ctx.model.isEnviron(obj) ? obj : null;
    }
    if (fn?.type !== "identifier" || fn.text !== "dict" || [...args.keywords.keys()].some((k) => MASKS.includes(k)))
      return null;
    const first = args.positional[0];
    if (first?.type === "dictionary_splat")
      return ctx.model.isEnviron(first.namedChildren[0]) ? first.namedChildren[0] : null;
    return first && ctx.model.isEnviron(first) ? first : environItems(ctx, first);
  }
  if (v.type === "dictionary") {
    if (setsMask(v)) return null;
    // `{**os.environ, ...}`, `{**dict(os.environ), ...}`
    for (const c of v.namedChildren) {
      const inner = c?.type === "dictionary_splat" ? c.namedChildren[0] : null;
      const environ = inner ? copiedEnviron(ctx, inner) : null;
      if (environ) return environ;
    }
    return null;
  }
  if (v.type === "dictionary_comprehension") {
    if (v.namedChildren.some((c) => c?.type === "if_clause")) return null;
    const loops = v.namedChildren.filter((c) => c?.type === "for_in_clause");
    return loops.length === 1 ? environItems(ctx, loops[0]!.childForFieldName("right")) : null;
  }
  if (v.type === "binary_operator" && v.childForFieldName("operator")?.text === "|") {
    const [l, r] = [v.childForFieldName("left"), v.childForFieldName("right")];
    if (!l || !r || [l, r].some((s) => s.type === "dictionary" && setsMask(s))) return null;
    return copiedEnviron(ctx, l) ?? copiedEnviron(ctx, r);
  }
  return null;
}

/** The copy of os.environ that `v` (read at `at`) is, following names assigned before; null when it is none or may have lost the masks. */
function envCopy(ctx: RuleContext, v: SyntaxNode, at: SyntaxNode, hops = 0): EnvCopy | null {
  if (v.type === "identifier" && hops < MAX_HOPS) {
    const a = bindingAt(ctx, v.text, at);
    const value = a?.childForFieldName("right");
    if (!a || !value || touched(ctx, v.text, v.text, [a.endIndex, at.startIndex], NOT_A_MASK)) return null;
    const inner = envCopy(ctx, value, a, hops + 1);
    return inner ? { ...inner, via: inner.via ?? a } : null;
  }
  const environ = copiedEnviron(ctx, v);
  return environ ? { expr: v, environ, via: null } : null;
}

/**
 * The `env_vars` value of a runtime_env read at `at`: the `"env_vars"` entry of a dictionary,
 * `RuntimeEnv(env_vars=...)` / `dict(env_vars=...)`, or a name assigned one of them before `at`
 * (its last `name["env_vars"] = ...` before `at` wins). Null when not seen, or when the code between
 * may have changed the entry.
 */
function envVarsOf(ctx: RuleContext, env: SyntaxNode, at: SyntaxNode, hops = 0): [SyntaxNode, SyntaxNode] | null {
  if (env.type === "dictionary") {
    const pair = env.namedChildren.find(
      (p) => p?.type === "pair" && stringValue(p.childForFieldName("key")) === "env_vars",
    );
    const value = pair?.childForFieldName("value");
    return value ? [value, at] : null;
  }
  if (env.type === "call") {
    const fn = env.childForFieldName("function");
    const path = ctx.model.resolve(fn) ?? "";
    if (!(fn?.type === "identifier" && fn.text === "dict") && !/^ray(\..+)?\.RuntimeEnv$/.test(path)) return null;
    const value = callArgs(env).keywords.get("env_vars");
    return value ? [value, at] : null;
  }
  if (env.type !== "identifier" || hops >= MAX_HOPS) return null;
  const a = bindingAt(ctx, env.text, at);
  const value = a?.childForFieldName("right");
  if (!a || !value) return null;
  const sub = `${env.text}["env_vars"]`;
  const set = ctx.model
    .nodesMentioning("assignment", [env.text], true)
    .filter((s) => s.startIndex > a.endIndex && s.startIndex < at.startIndex)
    .filter((s) => norm(s.childForFieldName("left")?.text) === sub);
  const last = set[set.length - 1];
  const from = last ? last.endIndex : a.endIndex;
  const span: [number, number] = [a.endIndex, at.startIndex];
  if (
    touched(ctx, env.text, env.text, [from, at.startIndex], (k) => k !== "env_vars") ||
    touched(ctx, sub, env.text, span, NOT_A_MASK)
  )
    return null;
  if (last) return [last.childForFieldName("right")!, last];
  return envVarsOf(ctx, value, a, hops + 1);
}

/** Whether the module imports Ray (a binding to `ray` or one of its modules). */
function importsRay(ctx: RuleContext): boolean {
  for (const path of ctx.model.symbols.values()) if (path === "ray" || path.startsWith("ray.")) return true;
  return false;
}

/**
 * Whether a `ray.init(...)` call starts a new local cluster: `address="local"`, or no address and an
 * argument Ray only takes then (`num_gpus=`, `num_cpus=`, ...). Ray reads a missing address from
 * RAY_ADDRESS or the last `ray start` on the machine (services.py:705-708): that may join a cluster.
 */
function startsLocalCluster(call: SyntaxNode): boolean {
  const { positional, keywords } = callArgs(call);
  const address = positional[0] ?? keywords.get("address");
  if (address && stringValue(address) === "local") return true;
  if (address && address.type !== "none") return false;
  return LOCAL_CLUSTER_ARGS.some((k) => keywords.has(k));
}

/** The `num_gpus=` keyword argument (or `"num_gpus":` pair) of a call or dictionary, or null. */
function numGpusOf(n: SyntaxNode): SyntaxNode | null {
  if (n.type === "call") return callArgs(n).keywords.get("num_gpus")?.parent ?? null;
  const pair = n.namedChildren.find(
    (p) => p?.type === "pair" && stringValue(p.childForFieldName("key")) === "num_gpus",
  );
  return pair ?? null;
}

/** The value of a `num_gpus=1` keyword argument or `"num_gpus": 1` pair. */
function valueOf(arg: SyntaxNode): SyntaxNode | null {
  return arg.childForFieldName("value");
}

/**
 * The GPUs an `X.options(...)` call asks for: its own `num_gpus=` when it gives one, else that of the
 * `@ray.remote(num_gpus=...)` decorator of the file's class or function `X`. Null unless a number
 * greater than 0 is seen.
 */
function optionsGpus(ctx: RuleContext, call: SyntaxNode): { gpus: SyntaxNode; kind: Site["scope"] } | null {
  const own = numGpusOf(call);
  const fn = call.childForFieldName("function");
  const receiver = fn?.childForFieldName("object");
  const def =
    receiver?.type === "identifier"
      ? (ctx.model.classes.get(receiver.text) ?? ctx.model.functions.get(receiver.text))
      : null;
  const kind: Site["scope"] = def ? (def.type === "class_definition" ? "actor" : "task") : "task or actor";
  if (own) return positive(valueOf(own)) ? { gpus: own, kind } : null;
  const decorated = def?.parent?.type === "decorated_definition" ? def.parent : null;
  for (const dec of decorated?.namedChildren ?? []) {
    const expr = dec?.type === "decorator" ? dec.namedChildren[0] : null;
    if (expr?.type !== "call" || ctx.model.resolve(expr.childForFieldName("function")) !== "ray.remote") continue;
    const gpus = numGpusOf(expr);
    return gpus && positive(valueOf(gpus)) ? { gpus, kind } : null;
  }
  return null;
}

/**
 * The first place in the file that asks Ray for GPUs (a `num_gpus=` other than 0 given to a Ray
 * call or `.options(...)`, a `"GPU"` / `"num_gpus"` entry other than 0, as in a placement group's
 * bundles or an actor's options, or Ray Train's `use_gpu=True`): evidence that the job ray.init
 * starts has GPU tasks or actors. Null when none.
 */
function jobGpus(ctx: RuleContext): SyntaxNode | null {
  const found: SyntaxNode[] = [];
  for (const call of ctx.model.nodesMentioning("call", ["num_gpus", "use_gpu"], true)) {
    // Ray's own calls only (`ray.remote`, `.options`, `ray.train.ScalingConfig`, ...), not ray.init's
    // (a local cluster's size) nor another library's `num_gpus=` (a count for a report).
    const fn = call.childForFieldName("function");
    const path = ctx.model.resolve(fn) ?? "";
    const options = fn?.type === "attribute" && fn.childForFieldName("attribute")?.text === "options";
    if (path === "ray.init" || !(options || path.startsWith("ray."))) continue;
    const { keywords } = callArgs(call);
    const n = keywords.get("num_gpus");
    if (n && !zero(n)) found.push(n.parent!);
    const u = keywords.get("use_gpu");
    if (u?.type === "true") found.push(u.parent!);
  }
  for (const d of ctx.model.nodesMentioning("dictionary", ["GPU", "num_gpus"])) {
    for (const p of d.namedChildren) {
      if (p?.type !== "pair" || !["GPU", "num_gpus"].includes(stringValue(p.childForFieldName("key")) ?? "")) continue;
      if (!zero(p.childForFieldName("value"))) found.push(p);
    }
  }
  found.sort((a, b) => a.startIndex - b.startIndex);
  return found[0] ?? null;
}

/** The places of the file where a runtime_env reaches Ray for GPU work (see {@link Site}). */
function sites(ctx: RuleContext): Site[] {
  const out: Site[] = [];
  const inits = ctx.model
    .nodesOfType("call")
    .filter((c) => ctx.model.resolve(c.childForFieldName("function")) === "ray.init");
  // A file whose every ray.init starts a local cluster: its raylet got this process's environment.
  const localOnly = inits.length > 0 && inits.every(startsLocalCluster);
  let job: SyntaxNode | null | undefined;
  for (const call of ctx.model.nodesMentioning("call", ["runtime_env"], true)) {
    const runtimeEnv = callArgs(call).keywords.get("runtime_env");
    if (!runtimeEnv) continue;
    const fn = call.childForFieldName("function");
    const path = ctx.model.resolve(fn);
    if (path === "ray.init") {
      if (startsLocalCluster(call)) continue;
      job ??= jobGpus(ctx);
      if (job) out.push({ runtimeEnv, scope: "job", gpus: job });
    } else if (localOnly) continue;
    else if (path === "ray.remote") {
      const gpus = numGpusOf(call);
      const decorates = call.parent?.type === "decorator" ? call.parent.parent?.childForFieldName("definition") : null;
      const kind = decorates ? (decorates.type === "class_definition" ? "actor" : "task") : "task or actor";
      if (gpus && positive(valueOf(gpus))) out.push({ runtimeEnv, scope: kind, gpus });
    } else if (fn?.type === "attribute" && fn.childForFieldName("attribute")?.text === "options") {
      const g = optionsGpus(ctx, call);
      if (g) out.push({ runtimeEnv, scope: g.kind, gpus: g.gpus });
    }
  }
  if (localOnly) return out;
  for (const d of ctx.model.nodesMentioning("dictionary", ["runtime_env"])) {
    const pair = d.namedChildren.find(
      (p) => p?.type === "pair" && stringValue(p.childForFieldName("key")) === "runtime_env",
    );
    const gpus = numGpusOf(d);
    const runtimeEnv = pair?.childForFieldName("value");
    if (runtimeEnv && gpus && positive(valueOf(gpus))) out.push({ runtimeEnv, scope: "task or actor", gpus });
  }
  return out;
}

/** The comprehension that copies `environ` without the GPU masks. */
function withoutMasks(environ: SyntaxNode): string {
  return `{k: v for k, v in ${environ.text}.items() if k not in (${MASKS.map((m) => `"${m}"`).join(", ")})}`;
}

/**
 * The quick fix: the copy written inline at the site becomes a comprehension that leaves the masks
 * out; `dict(os.environ)`, `os.environ.copy()` and `os.environ` are replaced whole, elsewhere only
 * the `os.environ` read (`{**os.environ, ...}`, `dict(os.environ, K=v)`). None for a comprehension or
 * `a | b` (rewritten by hand). Not safe: it changes what the workers get, which is its purpose.
 */
function fixOf(ctx: RuleContext, copy: EnvCopy): Fix | undefined {
  const e = copy.expr;
  if (e.type === "dictionary_comprehension" || e.type === "binary_operator") return undefined;
  const fn = e.type === "call" ? e.childForFieldName("function") : null;
  const args = e.type === "call" ? callArgs(e) : null;
  const whole =
    e.id === copy.environ.id ||
    fn?.type === "attribute" ||
    (ctx.model.resolve(fn) ?? "").startsWith("copy.") ||
    (fn?.text === "dict" &&
      args!.positional.length === 1 &&
      args!.keywords.size === 0 &&
      args!.positional[0].id === copy.environ.id);
  return {
    title: "Leave CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES out of the copied environment",
    edits: [{ range: nodeRange(whole ? e : copy.environ), newText: withoutMasks(copy.environ) }],
    safe: false,
  };
}

/** The message of a finding. */
function messageOf(site: Site, copy: EnvCopy): string {
  const who =
    site.scope === "job"
      ? "ray.init's runtime_env gives every worker of the job"
      : `The runtime_env of this GPU ${site.scope} (${snippet(site.gpus)}) gives its workers`;
  return `${who} a copy of this process's environment (\`${snippet(copy.expr)}\`), so a CUDA_VISIBLE_DEVICES (HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES on AMD) set for the driver is set in each worker: Ray maps the GPUs it assigns a task or actor through the list the worker starts with (ray.get_gpu_ids: a subset of the IDs in CUDA_VISIBLE_DEVICES), so on a node whose Ray sees other GPUs than the driver does, a GPU task or actor runs on a GPU Ray gave another one or dies at start (IndexError in Ray's accelerator-id lookup, measured with Ray 2.58); leave the GPU masks out of the copy`;
}

const RAY = "ray-project/ray@cec0a091 (Ray 2.58.0)";

/** The rule's documentation (docs/rules/GPU061.md is generated from it). */
const DOCS: PythonRule["meta"]["docs"] = {
  what: 'Finds a Ray `runtime_env` whose `env_vars` is a copy of the whole environment of the process that makes it (`dict(os.environ)`, `os.environ.copy()`, `{**os.environ, ...}`, `os.environ` itself, or a comprehension over `os.environ.items()` that leaves nothing out) where Ray starts GPU workers with it: `ray.init(runtime_env=...)` in a file that asks Ray for GPUs, `@ray.remote(num_gpus=1, runtime_env=...)`, `X.options(num_gpus=1, runtime_env=...)` (or `.options(runtime_env=...)` of the file\'s class or function whose `@ray.remote` asks for GPUs), and an options dictionary with both `"num_gpus"` and `"runtime_env"` (Ray Serve\'s `ray_actor_options`). The copy carries the driver\'s `CUDA_VISIBLE_DEVICES` (and `HIP_VISIBLE_DEVICES`, `ROCR_VISIBLE_DEVICES`) into every such worker.',
  follows:
    'The runtime_env at the call and, through names, the values assigned to them before it in the same function (or an enclosing one, or the module), `RuntimeEnv(env_vars=...)` and `dict(env_vars=...)`, and a later `runtime_env["env_vars"] = ...`; the `env_vars` value likewise. The GPU request must be seen: a `num_gpus` number greater than 0 on the task or actor (the call, its `@ray.remote` decorator in the file, or the options dictionary), and for `ray.init` a `num_gpus` other than 0 given to a Ray call or `.options(...)`, a `"GPU"` or `"num_gpus"` entry (placement group bundles, actor options) or Ray Train\'s `use_gpu=True` anywhere in the file. Silent where the copy may have lost the masks before the call: a comprehension with an `if`, a dictionary that sets a mask itself, a `.pop`/`del`/assignment of a mask (or of a key that is not a string), an `.update(...)` of anything but literal keys, or the copy passed to a function. Silent in a file whose every `ray.init` starts a new local cluster (`address="local"`, or no address and `num_gpus`, `num_cpus`, `resources`, `object_store_memory` or `labels`, which Ray accepts only then): the Ray processes it starts already have this process\'s environment. Not followed: a runtime_env, env_vars or num_gpus held in a parameter, an attribute or another module; a `num_gpus` that is not a number literal (for a task or actor); `ray job submit --runtime-env`; and a literal `CUDA_VISIBLE_DEVICES` entry, a deliberate value that Ray maps through like any other.',
  why: `Ray starts each worker process with the runtime_env's env_vars written into its environment (${RAY}: the runtime env agent makes \`RuntimeEnvContext(env_vars=runtime_env.env_vars())\`, python/ray/_private/runtime_env/agent/runtime_env_agent.py:329, and \`exec_worker\` calls \`update_envs(self.env_vars)\`, which sets \`os.environ[key]\`, before it execs the worker: runtime_env/context.py:42-43, _private/utils.py:1665-1677); they override what the node's Ray has (Ray documentation, Environment Dependencies, \`env_vars\`: "By default, these environment variables override the same name environment variables on the cluster"; "there is no need to include os.environ or similar in the env_vars field"). The worker records the CUDA_VISIBLE_DEVICES it starts with (\`original_visible_accelerator_ids\`, _private/worker.py:468, at import: worker.py:1398) and, before each task or actor creation, sets CUDA_VISIBLE_DEVICES to the GPUs Ray assigned (_raylet.pyx \`execute_task\` → \`set_visible_accelerator_ids\`, _private/utils.py:275-306 → accelerators/nvidia_gpu.py:109-117), mapping each assigned index through the recorded list: \`assigned_ids = {str(original_ids[i]) for i in assigned_ids}\` (worker.py:1153-1155; documented for ray.get_gpu_ids: "If the CUDA_VISIBLE_DEVICES environment variable was set when the worker started up, then the IDs returned by this method will be a subset of the IDs in CUDA_VISIBLE_DEVICES"). With the driver's list copied in, that list is the driver's, not the node's: an index past its end raises IndexError, and one within it names the driver's GPU. Measured with Ray 2.58.0 on a cluster started with 4 (logical) GPUs and no mask, a driver with CUDA_VISIBLE_DEVICES=2,3 and 4 actors with num_gpus=1: without runtime_env, and with the copy filtered, the actors got CUDA_VISIBLE_DEVICES 0, 1, 2, 3; with \`{"env_vars": dict(os.environ)}\` the first two got 2 and 3 (the GPUs Ray assigned to the other two) and the other two died at creation (ActorDiedError: IndexError: list index out of range, worker.py:1155). RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES does not avoid it: the look-up runs before that variable is tested (utils.py:289, nvidia_gpu.py:112), and without Ray's write the worker keeps the driver's list (measured: with it set, the first two actors saw 2,3 and the other two died the same way). On AMD nodes Ray 2.58 sets HIP_VISIBLE_DEVICES and raises RuntimeError when only ROCR_VISIBLE_DEVICES is set (accelerators/amd_gpu.py:41-50). In a cluster that ray.init starts itself the copy changes nothing (the Ray processes it starts get this process's environment: _private/services.py:994; measured: the same 2 and 3 with and without the copy), so only a driver that joins a running cluster (\`address=\`, RAY_ADDRESS, a \`ray start\` on the machine: services.py:705, or a Ray job) is affected, when its own mask differs from a node's: a Slurm or container launcher that narrowed the driver's GPUs, or nodes of different kinds (allenai/open-instruct#1519). vLLM leaves these variables out of the driver environment it forwards to Ray workers for this reason.`,
  example:
    'import os\nimport ray\n\n\n@ray.remote(num_gpus=1)\nclass Learner:\n    def step(self):\n        import torch\n        return torch.ones(1, device="cuda").item()\n\n\nray.init(runtime_env={"env_vars": dict(os.environ)})  # GPU061: the driver\'s CUDA_VISIBLE_DEVICES too\nlearners = [Learner.remote() for _ in range(8)]\n',
  fix: 'import os\nimport ray\n\nGPU_MASKS = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")\n\n\n@ray.remote(num_gpus=1)\nclass Learner:\n    def step(self):\n        import torch\n        return torch.ones(1, device="cuda").item()\n\n\n# Ray sets each actor\'s CUDA_VISIBLE_DEVICES from the GPUs it assigned: forward everything else\nray.init(runtime_env={"env_vars": {k: v for k, v in os.environ.items() if k not in GPU_MASKS}})\nlearners = [Learner.remote() for _ in range(8)]\n',
  whenNotToCare:
    "When the driver never runs with a GPU mask of its own (no launcher sets CUDA_VISIBLE_DEVICES for it), or the cluster is this one machine whose Ray was started with the same mask as the driver (a single-machine script whose bare `ray.init()` starts its own cluster): the copy then holds what the workers have anyway. The rule cannot tell these apart from a driver that joins a multi-node cluster, so it is in the preview set: on 8 findings in public code, 2 were true (allenai/open-instruct's grpo_fast.py before #1519, which fixed it; an RL trainer that sizes its placement groups from the cluster's GPUs) and 6 noise (single-machine data, benchmark and serving scripts whose ray.init starts a local cluster, and a multi-pod server whose driver has no mask), none false. The IndexError comes from Ray's own look-up, so a worker that sets its devices itself still fails if it asks for GPUs. The quick fix is not safe: it changes what the workers get, which is its purpose.",
  references: [
    `${RAY} python/ray/_private/worker.py:468 (the starting CUDA_VISIBLE_DEVICES recorded) and :1153-1155 (assigned ids mapped through it); python/ray/_private/utils.py:275-306 and accelerators/nvidia_gpu.py:109-117 (CUDA_VISIBLE_DEVICES set per task or actor, unless RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES); runtime_env/agent/runtime_env_agent.py:329, runtime_env/context.py:42-43, utils.py:1665-1677 (env_vars written into the worker's environment at its start); services.py:994 (a cluster ray.init starts inherits the driver's environment); worker.py:1926-1945 (num_cpus, num_gpus, resources, object_store_memory, labels refused when joining a cluster)`,
    'ray-project/ray@e4854b11 python/ray/_raylet.pyx, execute_task: "Automatically restrict the GPUs (CUDA) ... to restrict availability to this task", `set_visible_accelerator_ids()` for every task type but actor method calls',
    "Ray documentation, ray.get_gpu_ids (docs.ray.io/en/latest/ray-core/api/doc/ray.get_gpu_ids.html): with CUDA_VISIBLE_DEVICES set when the worker started, the IDs are a subset of it",
    "Ray documentation, Environment Dependencies, runtime_env API reference, env_vars (docs.ray.io/en/latest/ray-core/handling-dependencies.html): values override the cluster's; no need to include os.environ",
    "Measured here with Ray 2.58.0 (CPU machine, 4 logical GPUs): the copied driver mask gave two actors the other actors' GPUs and killed two with IndexError; filtered, each actor got its own",
    "allenai/open-instruct#1519: ray.init(runtime_env={'env_vars': dict(os.environ)}) forced the launch node's CUDA_VISIBLE_DEVICES/ROCR_VISIBLE_DEVICES onto every worker; the fix drops them",
    "vllm-project/vllm@e845151d vllm/v1/executor/ray_utils.py WORKER_SPECIFIC_ENV_VARS: CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES 'must NOT be copied from the driver to Ray workers'",
  ],
};

/** GPU061: a Ray runtime_env whose env_vars copy the driver's environment, GPU masks included, into GPU workers. */
export const rule: PythonRule = {
  meta: {
    code: "GPU061",
    name: "ray-runtime-env-copies-visible-devices",
    severity: "warning",
    fixable: true,
    fixSafety: "unsafe",
    // 2 of 8 public findings true, 6 noise (docs.whenNotToCare): below the default set's 95%.
    preview: true,
    // A site names `runtime_env` (a keyword or a dictionary key), the copy reads `environ`, and Ray is imported.
    trigger: (t) => t.has("runtime_env") && t.hasWord("environ") && t.hasWord("ray"),
    docs: DOCS,
  },
  check(ctx) {
    if (!importsRay(ctx)) return;
    for (const site of sites(ctx)) {
      const found = envVarsOf(ctx, site.runtimeEnv, site.runtimeEnv);
      const copy = found ? envCopy(ctx, found[0], found[1]) : null;
      if (!found || !copy) continue;
      const inline = !copy.via && contains(site.runtimeEnv, copy.expr);
      const related: RelatedInfo[] = [];
      if (!inline) related.push({ range: nodeRange(copy.via ?? copy.expr), message: "the environment is copied here" });
      related.push({
        range: nodeRange(site.gpus),
        message: site.scope === "job" ? "the job asks Ray for GPUs here" : "Ray assigns GPUs to it here",
      });
      ctx.report({
        range: nodeRange(inline ? copy.expr : site.runtimeEnv),
        message: messageOf(site, copy),
        related,
        fix: inline ? fixOf(ctx, copy) : undefined,
      });
    }
  },
};
