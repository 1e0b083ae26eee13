import type { PythonRule, RuleContext } from "../rule";
import type { SyntaxNode } from "../python/parser";
import { parameterNames, stringValue } from "../python/parser";
import { envWritesAnywhere } from "../python/model";
import { nodeRange, type EnvWriteEvent } from "../python/events";
import type { RelatedInfo } from "../types";
import { DEVICE_QUERY_PATHS, SET_DEVICE_PATHS } from "../frameworks";
import { callArgs, calleePath, enclosingFunction, envReadsOf, flowsFrom, inOtherBranch } from "./shared/py";
import { deviceOfIndex, writeFrozen } from "../python/visibleIndex";
import { calledIndexWrites } from "./shared/calledIndexWrite";

/** GPU005: a device string or ordinal built from the value of CUDA_VISIBLE_DEVICES. */
export const rule: PythonRule = {
  meta: {
    code: "GPU005",
    name: "visible-id-used-as-ordinal",
    severity: "error",
    fixable: true,
    fixSafety: "unsafe",
    // A read of CUDA_VISIBLE_DEVICES or the value the file wrote to it (TextProbe.envWith); or, with
    // a project index, a torch file that names a project function writing a device string's index
    // (python/project.ts INDEX_WRITE: the writers' scan lists those names), as a whole word.
    trigger: (t, _preview, facts) => {
      if (t.envWith(["CUDA_VISIBLE_DEVICES"])) return true;
      const writers = facts?.projectWriters?.();
      return !!writers?.size && t.hasWord("torch") && t.hasAnyWord([...writers]);
    },
    docs: {
      what: 'Finds device strings and ordinals built from the value of CUDA_VISIBLE_DEVICES: `f"cuda:{os.environ[\'CUDA_VISIBLE_DEVICES\']}"`, `"cuda:" + gpu`, `torch.cuda.set_device(int(gpu))`, `device_ids=[gpu]`, `torch.cuda.get_device_capability(int(gpu))` (and the other torch.cuda device queries: `get_device_properties`, `get_device_name`, `mem_get_info`, the memory statistics, `synchronize`), `jax.devices()[gpu]`, where `gpu` was read from the variable (or is the value the file itself wrote to it). Also a device string whose index the file wrote to the variable and then used itself as the device: `os.environ["CUDA_VISIBLE_DEVICES"] = args.device.split(":")[1]` followed by `.to(args.device)` (no quick fix for this kind: the device may be the CPU); likewise where a function of the file or of another project module writes the index of the device string it is given (`pin_gpu(cfg)` whose body writes `cfg.device.split(":")[1]`) and the caller then uses the same string as the device (`.to(cfg.device)`), also in a method of the class whose constructor made the call and kept the config (`self._cfg = cfg`, then `torch.device(self._cfg.device)` in `load()`). In preview: a comparison of ids read from CUDA_VISIBLE_DEVICES with the number of visible GPUs (`max(ids) < torch.cuda.device_count()`, `gpu >= torch.cuda.device_count()`, `gpu in range(torch.cuda.device_count())`), which fails whenever the ids do not start at 0 (a Ray worker with `num_gpus=1` sees `CUDA_VISIBLE_DEVICES="3"` and one device: KarhouTam/FL-bench#162). It stays in preview: whether some worker gets an id other than 0 depends on where the program runs, which the project\'s files do not settle (Ray numbers the GPUs of each node from 0, so on a cluster of one-GPU nodes every worker sees `"0"`, and `ray.init()` joins the cluster that RAY_ADDRESS names or that `ray start` started on the machine); a count of the ids (`len(ids)`, `.count(",") + 1`) is left alone.',
      follows:
        'Every read of CUDA_VISIBLE_DEVICES in the file (functions included) and the name the file itself writes to it (also an element of one at an integer index, `str(gpu_ids[0])`, whose later uses in the same function hold the same id), through the names assigned from them in the file (a few assignments deep), `for` loops over them, and device strings built from them (f-strings, `+`, `%`, `.format`); a value read inside a function is followed within that function only. A device string whose index was written (`d.split(":")[1]` or `[-1]`, `d.replace("cuda:", "")`, `torch.device(d).index`, or `dev.index` where `dev = torch.device(d)`) is followed in the writing function (or module level) until it is assigned again, as the device itself (or its `.index`), `torch.device(d)` or a name assigned from those; through any other call it is not (a helper may renumber it), nor into another branch of the `if` that holds the write (`else: device = torch.device(d)` runs only when nothing was written), nor when CUDA was initialised before the write (the write then changes nothing; GPU001 reports it). A `device=` argument to a function of the same file that never reads that parameter is no device use. A function (of the file, or a project function of another module found as GPU001 finds them, whose module names CUDA_VISIBLE_DEVICES) that writes the index of its parameter or of an attribute of it (`param.split(":")[1]`, the other forms above, also through one name assigned once: `index = cfg.device.split(":")[1]`), where it does not rebind the parameter, assign the attribute, use the parameter after the write otherwise than reading that attribute, or initialise CUDA before the write: at each call given a name or an attribute, the same string (`cfg.device` for `cfg`) is followed after the call in the function of the caller as above, until it or its root name is assigned, a method is called on it, or the root name is used otherwise (given to a call, it may change); and, for a call in a constructor that keeps the parameter as `self.X = cfg` (or passes `self.X`), `self.X.device` in the other methods of the class, which run after the constructor (silent where the class assigns `self.X` elsewhere or `self.X.device` at all, uses `self.X` otherwise than reading its attributes, or calls a method of its own before the call). Silent where CUDA may have been initialised before the call in the caller (an init on the timeline, a `torch.cuda` call, a `.cuda()`/`.to()` move, a project function that initialises CUDA; for a call in a function, also an init at the top level of the module, which may call the function after it). The prefilter finds the callers in other modules by the names of those functions, which the writers scan of the project lists (as for GPU001). Not followed otherwise: function parameters and return values, attributes set in one method and used in another, and other modules (a config handed on to other calls after the write, `run_model_instance(cfg)`, is not followed into them).',
      why: 'CUDA_VISIBLE_DEVICES holds physical ids; inside the process CUDA renumbers the visible GPUs from 0. Measured on 2 x H200 (ground-truth.md): with `CUDA_VISIBLE_DEVICES="1"` the only device is `cuda:0` (physical GPU 1), and `torch.cuda.set_device(1)` or `device="cuda:1"` raises `torch.AcceleratorError: CUDA error: invalid device ordinal`. So `f"cuda:{os.environ[\'CUDA_VISIBLE_DEVICES\']}"` works only when the value happens to be `0`; with any other id it names a device that does not exist (and with `"1,0"` it is not even a device string).',
      example:
        'import os\nimport torch\n\ngpu = os.environ.get("CUDA_VISIBLE_DEVICES", "0")\nbuf = torch.zeros(2, device=f"cuda:{gpu}")  # GPU005: cuda:1 does not exist under CUDA_VISIBLE_DEVICES=1\n',
      fix: 'import os\nimport torch\n\n# The GPUs in CUDA_VISIBLE_DEVICES are numbered from 0 inside the process.\nbuf = torch.zeros(2, device="cuda:0")\n',
      whenNotToCare:
        "When the value is only printed or logged, not used to pick a device (the rule only looks at device strings and ordinals). Never when it selects the device: renumbering is by design, so the first visible GPU is always `cuda:0`.",
      references: [
        "ground-truth.md: 'How CUDA parses CUDA_VISIBLE_DEVICES' row \"1\" (cuda:0 is physical GPU 1; renumbering is normal)",
        "ground-truth.md: 'Other facts measured' row `CUDA_VISIBLE_DEVICES=\"1\"`, then `torch.cuda.set_device(1)` → invalid device ordinal",
        "CUDA C Programming Guide, CUDA Environment Variables: CUDA_VISIBLE_DEVICES",
      ],
    },
  },
  check(ctx) {
    const origins = sourcesOf(ctx);
    if (!origins.size) return;
    const sources = new Set([...origins].filter(([, o]) => !o.deviceString).map(([id]) => id));
    const devices = new Set([...origins].filter(([, o]) => o.deviceString).map(([id]) => id));
    const reported = new Set<number>();
    const report = (node: SyntaxNode, what: string, source: SyntaxNode, replacement: string | null) => {
      if (reported.has(node.id)) return;
      const origin = origins.get(source.id)!;
      // Python names are local to their function: a value read or written in one function does not
      // reach a same-named parameter or variable of another (else real code gets false positives). A
      // module-level source reaches every function.
      const from = enclosingFunction(origin.node);
      if (from && from.id !== enclosingFunction(node)?.id && !origin.otherMethod) return;
      reported.add(node.id);
      ctx.report({
        range: nodeRange(node),
        message: `${what} uses ${origin.what} (${ctx.where(origin.node.startPosition.row)}) as a device ordinal: CUDA renumbers the visible GPUs from 0, so with CUDA_VISIBLE_DEVICES="1" this names cuda:1, which does not exist (invalid device ordinal); the first visible GPU is cuda:0`,
        related: [origin.related, ...(origin.more ?? [])],
        ...(replacement !== null && !origin.deviceString
          ? {
              fix: {
                title: `Use ${replacement}`,
                edits: [{ range: nodeRange(node), newText: replacement }],
                safe: false,
              },
            }
          : {}),
      });
    };

    deviceStrings(ctx, sources, report);
    integerOrdinals(ctx, { sources, devices }, report, new Set(reported));
    countComparisons(ctx, origins);
  },
};

/** Reports a use of a CUDA_VISIBLE_DEVICES source: the node, its snippet, the source node, the fix's text (null: no fix). */
type Report = (node: SyntaxNode, what: string, source: SyntaxNode, replacement: string | null) => void;

/** Device strings built from a source: f"cuda:{gpu}", "cuda:" + gpu, "cuda:%s" % gpu, "cuda:{}".format(gpu). */
function deviceStrings(ctx: RuleContext, sources: Set<number>, report: Report): void {
  for (const s of ctx.model.nodesOfType("string")) {
    if (!s || !isCudaFString(s)) continue;
    for (const i of s.namedChildren) {
      if (i?.type !== "interpolation") continue;
      const hit = flowsFrom(ctx.model, i.childForFieldName("expression"), sources);
      if (hit) {
        report(s, snippetOf(s), hit, exactCudaFString(s) ? `${quoteOf(s)}cuda:0${quoteOf(s)}` : null);
        break;
      }
    }
  }
  for (const b of ctx.model.nodesOfType("binary_operator")) {
    if (!b) continue;
    const left = b.childForFieldName("left");
    const op = b.childForFieldName("operator")?.text;
    const lv = stringValue(left);
    if (lv === null || !left) continue;
    if ((op === "+" && lv === "cuda:") || (op === "%" && /^cuda:%[sd]$/.test(lv))) {
      const hit = flowsFrom(ctx.model, b.childForFieldName("right"), sources);
      if (hit) report(b, snippetOf(b), hit, `${quoteOf(left)}cuda:0${quoteOf(left)}`);
    }
  }
  for (const call of ctx.model.nodesOfType("call")) {
    if (!call) continue;
    const fn = call.childForFieldName("function");
    if (fn?.type !== "attribute" || fn.childForFieldName("attribute")?.text !== "format") continue;
    const obj = fn.childForFieldName("object");
    if (!obj || !/^cuda:\{0?\}$/.test(stringValue(obj) ?? "")) continue;
    const hit = flowsFrom(ctx.model, callArgs(call).positional[0], sources);
    if (hit) report(call, snippetOf(call), hit, `${quoteOf(obj)}cuda:0${quoteOf(obj)}`);
  }
}

/**
 * Integer ordinals taken from a source: set_device(n), torch.device("cuda", n), .cuda(n), .to(n),
 * device=n, device_ids=[n], jax.devices()[n]. `stop`: nodes already reported as device strings.
 */
function integerOrdinals(
  ctx: RuleContext,
  { sources, devices }: { sources: Set<number>; devices: Set<number> },
  report: Report,
  stop: Set<number>,
): void {
  const ordinal = (node: SyntaxNode | undefined, form: string) => {
    if (!node || node.type === "string" || node.type === "list_splat" || node.type === "dictionary_splat") return;
    const hit = flowsFrom(ctx.model, node, sources, 0, stop) ?? deviceStringFrom(ctx, node, devices);
    // A loop or comprehension variable walks a list of devices: "0" would put them all on cuda:0
    // (Lightning walks its device list so); no fix then, the message alone.
    if (hit) report(node, `\`${form}\``, hit, isLoopVariable(node) ? null : "0");
  };
  const torch = ctx.model.frameworks.has("torch");
  for (const call of ctx.model.nodesOfType("call")) {
    if (!call) continue;
    const q = calleePath(ctx.model, call);
    const { positional, keywords } = callArgs(call);
    const fn = call.childForFieldName("function");
    const method = fn?.type === "attribute" ? fn.childForFieldName("attribute")?.text : undefined;
    if ((q !== null && SET_DEVICE_PATHS.includes(q)) || q === "torch.cuda.device")
      ordinal(
        positional[0] ?? keywords.get("device"),
        `${q}(${(positional[0] ?? keywords.get("device"))?.text ?? ""})`,
      );
    else if (q !== null && DEVICE_QUERY_PATHS.includes(q) && positional[0])
      ordinal(positional[0], `${q}(${positional[0].text})`);
    else if (q === "torch.device" && positional.length >= 2 && stringValue(positional[0]) === "cuda")
      ordinal(positional[1], `torch.device("cuda", ${positional[1].text})`);
    else if (q === "torch.device" && positional.length === 1)
      ordinal(positional[0], `torch.device(${positional[0].text})`);
    else if (torch && (method === "cuda" || method === "to") && !isModule(ctx, fn?.childForFieldName("object")))
      ordinal(positional[0], `.${method}(${positional[0]?.text ?? ""})`);
    for (const [name, value] of keywords) {
      if (
        (name === "device" || name === "output_device") &&
        (q?.startsWith("torch.") || (torch && q === null && !unreadParameter(ctx, fn, name)))
      )
        ordinal(value, `${name}=${value.text}`);
      if (name === "device_ids" && (value.type === "list" || value.type === "tuple"))
        for (const el of value.namedChildren) if (el) ordinal(el, `device_ids=${value.text}`);
    }
  }
  for (const sub of ctx.model.nodesOfType("subscript")) {
    if (!sub) continue;
    const base = ctx.model.resolve(sub.childForFieldName("value"));
    if (base === "jax.devices()" || base === "jax.local_devices()")
      ordinal(sub.childForFieldName("subscript") ?? undefined, `${base}[...]`);
  }
}

/**
 * The device-string source that `node` is, directly, as `torch.device(<it>)`, or through a few
 * plain assignments (`dev = torch.device(args.device)`); null otherwise. Unlike flowsFrom it
 * passes through no other call: a helper may map "cuda:3" to "cuda:0".
 */
function deviceStringFrom(ctx: RuleContext, node: SyntaxNode, devices: Set<number>): SyntaxNode | null {
  let n: SyntaxNode | null = node;
  for (let hops = 0; n && hops < 6 && devices.size; hops++) {
    if (devices.has(n.id)) return n;
    // `device.index`: the written index itself, now no visible GPU's number (set_device(device.index)).
    const object =
      n.type === "attribute" && n.childForFieldName("attribute")?.text === "index"
        ? n.childForFieldName("object")
        : null;
    if (object && devices.has(object.id)) return object;
    if (n.type === "call" && calleePath(ctx.model, n) === "torch.device" && callArgs(n).positional.length === 1)
      n = callArgs(n).positional[0];
    else if (n.type === "identifier") n = ctx.model.valueOf(n.text, n.startIndex);
    else return null;
  }
  return null;
}

/** Whether `node` is a name bound by an enclosing `for` loop or comprehension (`for i in ids`, `[... for i in ids]`). */
function isLoopVariable(node: SyntaxNode): boolean {
  while (node.type === "call" && /^(int|str)$/.test(node.childForFieldName("function")?.text ?? "")) {
    const arg = node.childForFieldName("arguments")?.namedChildren[0];
    if (!arg) return false;
    node = arg;
  }
  if (node.type !== "identifier") return false;
  for (let p = node.parent; p; p = p.parent) {
    const clauses =
      p.type === "for_statement"
        ? [p]
        : /comprehension|generator_expression/.test(p.type)
          ? p.namedChildren.filter((c) => c?.type === "for_in_clause")
          : [];
    for (const c of clauses) {
      const left = c?.childForFieldName("left");
      if (left && (left.text === node.text || left.descendantsOfType("identifier").some((i) => i?.text === node.text)))
        return true;
    }
  }
  return false;
}

interface Origin {
  node: SyntaxNode;
  what: string;
  related: RelatedInfo;
  /** A device string ("cuda:3") whose index was written, not an id: followed only as the device itself. */
  deviceString?: boolean;
  /** A read of CUDA_VISIBLE_DEVICES (not a value the file wrote to it). */
  read?: boolean;
  /** Used in another method of the class whose constructor wrote it (shared/calledIndexWrite.ts). */
  otherMethod?: boolean;
  /** Related information after `related` (the write in another module). */
  more?: RelatedInfo[];
}

/**
 * Nodes whose value is the content of CUDA_VISIBLE_DEVICES, by id: every read of the variable, and
 * the expression the file itself wrote to it when that is a name (`str(args.gpu)` → later uses of `args.gpu`).
 */
function sourcesOf(ctx: RuleContext): Map<number, Origin> {
  const out = new Map<number, Origin>();
  for (const r of envReadsOf(ctx.model, "CUDA_VISIBLE_DEVICES")) {
    out.set(r.node.id, {
      node: r.node,
      what: "the value of CUDA_VISIBLE_DEVICES",
      read: true,
      related: { range: nodeRange(r.node), message: "CUDA_VISIBLE_DEVICES read here: it holds physical GPU ids" },
    });
  }
  for (const w of envWritesAnywhere(ctx.model)) {
    if (w.variable !== "CUDA_VISIBLE_DEVICES" || !w.value || !w.statement || w.literal !== null) continue;
    const device = deviceOfIndex(ctx.model, w.value);
    if (device) {
      // Written after CUDA initialised, the write changes nothing (GPU001 says so): cuda:N still exists.
      if (!writeFrozen(ctx.model, w)) deviceStringUses(ctx, w, device, out);
      continue;
    }
    let root: SyntaxNode | null = w.value;
    if (root.type === "call" && root.childForFieldName("function")?.text === "str")
      root = callArgs(root).positional[0] ?? null;
    // A name, an attribute, or an element of one at a literal index (`str(gpu_ids[0])`), whose
    // later uses (an element: in the same function) hold the same id.
    const element = root?.type === "subscript" && isLiteralElement(root);
    if (!root || (root.type !== "identifier" && root.type !== "attribute" && !element)) continue;
    const after = w.statement.endIndex;
    const stmt = w.statement;
    const scope = enclosingFunction(w.statement)?.id;
    for (const n of ctx.model.nodesOfType(root.type)) {
      if (!n || n.startIndex < after || n.text !== root.text) continue;
      if (element && enclosingFunction(n)?.id !== scope) continue;
      if (n.parent?.type === "attribute" && n.parent.childForFieldName("object")?.id !== n.id) continue;
      out.set(n.id, {
        node: stmt,
        what: `the value written to CUDA_VISIBLE_DEVICES from \`${root.text}\``,
        related: {
          range: w.range,
          message: `CUDA_VISIBLE_DEVICES set from ${root.text} here: inside the process that GPU is cuda:0`,
        },
      });
    }
  }
  // A function (of this file or another project module) that writes a given device string's index.
  calledIndexWrites(ctx, (use, w) => {
    if (out.has(use.id)) return;
    const [first, ...more] = w.related;
    out.set(use.id, {
      node: w.statement,
      what: `the device string \`${use.text}\`${use.text === w.device ? "" : ` (kept from \`${w.device}\`)`} whose index ${w.callee}(...) writes to CUDA_VISIBLE_DEVICES (at ${w.where}) when called`,
      deviceString: true,
      related: first,
      more,
      ...(w.otherMethod ? { otherMethod: true } : {}),
    });
  });
  return out;
}

/**
 * Marks the later uses of `device` (a device string such as "cuda:3" whose index the write `w` put
 * in CUDA_VISIBLE_DEVICES) as sources of the device-string kind: in the write's own function (or
 * at module level for a module-level write), up to the first assignment to the same name or
 * attribute after the write (`args.device = "cuda:0"` ends it).
 */
function deviceStringUses(ctx: RuleContext, w: EnvWriteEvent, device: SyntaxNode, out: Map<number, Origin>): void {
  const stmt = w.statement!;
  const scope = enclosingFunction(stmt)?.id;
  // `str(device.index)`: a torch.device, not a string.
  const noun = /\.index\b/.test(w.value?.text ?? "") ? "device" : "device string";
  let end = Infinity;
  for (const a of ctx.model.nodesOfType(["assignment", "augmented_assignment"])) {
    if (!a || a.startIndex < stmt.endIndex || a.startIndex >= end) continue;
    if (a.childForFieldName("left")?.text === device.text && enclosingFunction(a)?.id === scope) end = a.startIndex;
  }
  for (const n of ctx.model.nodesOfType(device.type)) {
    if (!n || n.startIndex < stmt.endIndex || n.startIndex >= end || n.text !== device.text) continue;
    if (enclosingFunction(n)?.id !== scope || inOtherBranch(stmt, n)) continue;
    if (n.parent?.type === "attribute" && n.parent.childForFieldName("object")?.id !== n.id) continue;
    out.set(n.id, {
      node: stmt,
      what: `the ${noun} \`${device.text}\` whose index was written to CUDA_VISIBLE_DEVICES`,
      deviceString: true,
      related: {
        range: w.range,
        message: `CUDA_VISIBLE_DEVICES set to the index of ${device.text} here: inside the process that GPU is cuda:0`,
      },
    });
  }
}

/**
 * Whether `callee` names a function of this file whose parameter `name` its body never reads
 * (`train_epoch(..., device=device)` that ignores it): the argument selects no device.
 */
function unreadParameter(ctx: RuleContext, callee: SyntaxNode | null | undefined, name: string): boolean {
  if (callee?.type !== "identifier") return false;
  const topLevel = (d: SyntaxNode) => {
    for (let p = d.parent; p; p = p.parent)
      if (p.type === "function_definition" || p.type === "class_definition") return false;
    return true;
  };
  const defs = ctx.model
    .nodesOfType("function_definition")
    .filter((d): d is SyntaxNode => !!d && d.childForFieldName("name")?.text === callee.text && topLevel(d));
  return (
    defs.length > 0 &&
    defs.every((d) => {
      const body = d.childForFieldName("body");
      return (
        parameterNames(d.childForFieldName("parameters")).has(name) &&
        !!body &&
        !body.descendantsOfType("identifier").some((i) => i?.text === name)
      );
    })
  );
}

/**
 * Comparisons of GPU ids read from CUDA_VISIBLE_DEVICES with the process's device count:
 * `max(ids) < torch.cuda.device_count()`, `gpu >= torch.cuda.device_count()`,
 * `gpu in range(torch.cuda.device_count())`. The ids are the machine's numbering; the count is of
 * the visible GPUs, renumbered from 0, so with `CUDA_VISIBLE_DEVICES="3"` (a Ray worker with
 * `num_gpus=1`, a Slurm job) the id is 3 and the count 1 (FL-bench#162). Only reads of the variable
 * count, not a value the file wrote (written after CUDA initialised, the count is the machine's),
 * nor a count of the ids (`len(ids)`, `.count(",") + 1`, arithmetic): in preview.
 */
function countComparisons(ctx: RuleContext, origins: Map<number, Origin>): void {
  const reads = new Set([...origins].filter(([, o]) => o.read).map(([id]) => id));
  if (!ctx.preview || !reads.size || !ctx.model.text.includes("device_count")) return;
  // Arithmetic and `.count()` make a count (or a shifted id) of the ids, not an id.
  const stop = new Set<number>();
  for (const n of ctx.model.nodesOfType(["binary_operator", "call"]))
    if (n && (n.type === "binary_operator" || isCountingCall(n))) stop.add(n.id);
  for (const cmp of ctx.model.nodesOfType("comparison_operator")) {
    const operands = cmp?.namedChildren.filter((c): c is SyntaxNode => !!c && c.type !== "comment") ?? [];
    if (!cmp || operands.length !== 2) continue;
    const op = cmp.children.find((c) => c && !c.isNamed && c.startIndex >= operands[0].endIndex)?.text ?? "";
    let id: SyntaxNode | null = null;
    if (op === "in" || /^not\b/.test(op)) id = isCountRange(ctx, operands[1]) ? operands[0] : null;
    else if (/^[<>]=?$/.test(op))
      id = isDeviceCount(ctx, operands[1]) ? operands[0] : isDeviceCount(ctx, operands[0]) ? operands[1] : null;
    const hit = id ? flowsFrom(ctx.model, idOf(id), reads, 0, stop) : null;
    if (!hit) continue;
    const origin = origins.get(hit.id)!;
    const from = enclosingFunction(origin.node);
    if (from && from.id !== enclosingFunction(cmp)?.id) continue;
    ctx.report({
      range: nodeRange(cmp),
      message: `${snippetOf(cmp)} compares GPU ids read from CUDA_VISIBLE_DEVICES (${ctx.where(origin.node.startPosition.row)}) with the number of visible GPUs: the ids are the machine's numbering, the count is of the visible GPUs renumbered from 0, so with CUDA_VISIBLE_DEVICES="3" (a Ray worker, a Slurm job) the id is 3 and the count 1, and the check fails although the GPU is there`,
      related: [origin.related],
      preview: true,
    });
  }
}

/** `int(x)`, `max(x)`, `min(x)` unwrapped to `x`: the id itself. */
function idOf(n: SyntaxNode): SyntaxNode {
  while (n.type === "call" && /^(int|max|min)$/.test(n.childForFieldName("function")?.text ?? "")) {
    const arg = callArgs(n).positional[0];
    if (!arg) break;
    n = arg;
  }
  return n;
}

/** `x.count(...)`, `len(x)`, `x.__len__()`: a count, not an id. */
function isCountingCall(n: SyntaxNode): boolean {
  const fn = n.childForFieldName("function");
  if (fn?.type === "identifier") return fn.text === "len";
  return fn?.type === "attribute" && /^(count|__len__)$/.test(fn.childForFieldName("attribute")?.text ?? "");
}

/** `torch.cuda.device_count()`, or a name assigned from it (a few assignments deep). */
function isDeviceCount(ctx: RuleContext, n: SyntaxNode | null): boolean {
  for (let hops = 0; n && hops < 4; hops++) {
    if (n.type === "call") return calleePath(ctx.model, n) === "torch.cuda.device_count";
    if (n.type !== "identifier") return false;
    n = ctx.model.valueOf(n.text, n.startIndex);
  }
  return false;
}

/** `range(torch.cuda.device_count())` (or a name assigned from it). */
function isCountRange(ctx: RuleContext, n: SyntaxNode | null): boolean {
  for (let hops = 0; n && hops < 4 && n.type === "identifier"; hops++) n = ctx.model.valueOf(n.text, n.startIndex);
  if (n?.type !== "call" || n.childForFieldName("function")?.text !== "range") return false;
  const args = callArgs(n).positional;
  return args.length === 1 && isDeviceCount(ctx, args[0]);
}

/** `x[0]`, `args.gpus[1]`: a name's or attribute's element at an integer literal. */
function isLiteralElement(n: SyntaxNode): boolean {
  const value = n.childForFieldName("value");
  const index = n.childForFieldName("subscript");
  return (value?.type === "identifier" || value?.type === "attribute") && index?.type === "integer";
}

/** An f-string whose text starts with `cuda:` followed by an interpolation. */
function isCudaFString(s: SyntaxNode): boolean {
  const start = s.namedChildren[0];
  if (start?.type !== "string_start" || !/[fF]/.test(start.text)) return false;
  const content = s.namedChildren[1];
  return (
    content?.type === "string_content" &&
    content.text.startsWith("cuda:") &&
    s.namedChildren.some((c) => c?.type === "interpolation")
  );
}

/** Exactly `f"cuda:{expr}"`, which the fix can replace by `"cuda:0"` as a whole. */
function exactCudaFString(s: SyntaxNode): boolean {
  const parts = s.namedChildren.filter((c) => c && c.type !== "string_start" && c.type !== "string_end");
  return parts.length === 2 && parts[0]?.text === "cuda:" && parts[1]?.type === "interpolation";
}

/** The quote characters of a string node (without its prefix letters). */
function quoteOf(s: SyntaxNode): string {
  const start = s.type === "string" ? s.namedChildren[0] : null;
  return start?.type === "string_start" ? start.text.replace(/^[A-Za-z]+/, "") : '"';
}

/** Whether a node names the `torch` or `torch.cuda` module itself (not an object with a `.cuda()`/`.to()` method). */
function isModule(ctx: RuleContext, node: SyntaxNode | null | undefined): boolean {
  const q = ctx.model.resolve(node);
  return q === "torch" || q === "torch.cuda";
}

function snippetOf(n: SyntaxNode): string {
  const t = n.text.split("\n")[0];
  return `\`${t.length > 60 ? `${t.slice(0, 57)}...` : t}\``;
}
