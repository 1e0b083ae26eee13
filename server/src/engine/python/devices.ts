/**
 * Device expressions: the places where code names a CUDA device ordinal. Used by GPU004 (ordinal
 * out of range), GPU017 (id not on this machine) and the machine-aware hover.
 */
import type { SyntaxNode } from "./parser";
import { enclosingFunction, stringValue } from "./parser";
import type { ModuleModel } from "./model";
import { cudaDeviceOrdinal, DEVICE_QUERY_PATHS, LIBRARY_DEVICE_PARAMS, SET_DEVICE_PATHS } from "../frameworks";
import { cudaStringOrdinal } from "./rankFlow";
import { callArgs, calleePath } from "../rules/shared/py";

/** One device ordinal written in code. */
export interface DeviceUse {
  /** The ordinal (0-based, among the visible devices). */
  ordinal: number;
  /** The node holding the number (a string `"cuda:1"` or an integer `1`). */
  node: SyntaxNode;
  /** How it was written, for messages: `"cuda:1"`, `torch.cuda.set_device(1)`, `device_ids=[0, 1]`. */
  form: string;
  /** Replaces the ordinal by another in the source text of `node`. */
  replace(ordinal: number): string;
  /** Set for a library's device parameter (`device_map=`, `transformers.pipeline(device=)`), not torch's own forms. */
  library?: boolean;
}

function intValue(n: SyntaxNode | null | undefined): number | null {
  if (!n || n.type !== "integer") return null;
  const t = n.text;
  return [...t].every((c) => c >= "0" && c <= "9") ? Number(t) : null;
}

/**
 * Every literal device ordinal in the module (anywhere, not only on the timeline); with `within`,
 * only those in expressions that overlap those lines (0-based, inclusive; the editor's visible
 * range or a hovered line: no walk of the whole file).
 */
export function deviceUses(
  model: Pick<ModuleModel, "symbols" | "nodesOfType" | "resolve" | "frameworks" | "tree">,
  within?: { startLine: number; endLine: number },
): DeviceUse[] {
  const out: DeviceUse[] = [];
  const nodes = (type: string): Array<SyntaxNode | null> =>
    within
      ? model.tree.descendantsOfType(type, { row: within.startLine, column: 0 }, { row: within.endLine + 1, column: 0 })
      : model.nodesOfType(type);
  // Cheap text gate: every device expression names `cuda`/`device(s)`, or an alias imported from such a path.
  const words = ["cuda", "device"];
  for (const [name, path] of model.symbols) if (path.includes("cuda") || path.includes("device")) words.push(name);
  const mentions = (n: SyntaxNode) => {
    const t = n.text;
    return words.some((w) => t.includes(w));
  };
  for (const s of nodes("string")) {
    if (!s || !s.text.includes("cuda")) continue;
    const v = stringValue(s);
    if (v === null) continue;
    const n = cudaDeviceOrdinal(v);
    if (n === null || n < 0) continue;
    out.push({ ordinal: n, node: s, form: `"${v}"`, replace: (k) => s.text.replace(/cuda:\s*\d+/, `cuda:${k}`) });
  }
  for (const call of nodes("call")) {
    if (!call || !mentions(call)) continue;
    const fn = call.childForFieldName("function");
    const args =
      call.childForFieldName("arguments")?.namedChildren.filter((a): a is SyntaxNode => !!a && a.type !== "comment") ??
      [];
    const q = model.resolve(fn)?.replace(/\(\)/g, "") ?? null;
    const intArg = (a: SyntaxNode | undefined, form: string, library = false) => {
      const n = intValue(a);
      if (a && n !== null)
        out.push({ ordinal: n, node: a, form, replace: (k) => String(k), ...(library ? { library } : {}) });
    };
    if (q === "torch.device" && args.length >= 2 && stringValue(args[0]) === "cuda")
      intArg(args[1], `torch.device("cuda", ${args[1].text})`);
    else if ((q !== null && SET_DEVICE_PATHS.includes(q)) || q === "torch.cuda.device")
      intArg(args[0], `${q}(${args[0]?.text ?? ""})`);
    else if (
      fn?.type === "attribute" &&
      fn.childForFieldName("attribute")?.text === "cuda" &&
      model.frameworks.has("torch") &&
      q !== "torch.cuda"
    )
      intArg(args[0], `.cuda(${args[0]?.text ?? ""})`);
    for (const a of args) {
      if (a.type !== "keyword_argument") continue;
      const name = a.childForFieldName("name")?.text;
      const value = a.childForFieldName("value");
      if (name === "device_ids" && value && (value.type === "list" || value.type === "tuple")) {
        for (const el of value.namedChildren) intArg(el ?? undefined, `device_ids=${value.text}`);
      } else if ((name === "device" || name === "output_device") && q?.startsWith("torch.")) {
        intArg(value ?? undefined, `${name}=${value?.text}`);
      } else if (name === "device" && q !== null && LIBRARY_DEVICE_PARAMS.get(q)?.keyword === "device") {
        intArg(value ?? undefined, `${q}(device=${value?.text})`, true);
      } else if (name === "device_map" && value?.type === "dictionary") {
        for (const pair of value.namedChildren)
          if (pair?.type === "pair")
            intArg(pair.childForFieldName("value") ?? undefined, `device_map=${value.text}`, true);
      } else if (name === "device_map") intArg(value ?? undefined, `device_map=${value?.text}`, true);
    }
  }
  for (const sub of nodes("subscript")) {
    if (!sub) continue;
    const base = model.resolve(sub.childForFieldName("value"));
    if (base !== "jax.devices()" && base !== "jax.local_devices()") continue;
    const idx = sub.childForFieldName("subscript");
    const n = intValue(idx);
    if (idx && n !== null) out.push({ ordinal: n, node: idx, form: `${base}[${n}]`, replace: (k) => String(k) });
  }
  return out;
}

/**
 * `y` of a device string `f"{x}:{y}"` given to `torch.device()`, whose device type is a value
 * (`device_type`, "cuda" or another accelerator: the ordinal after the colon is an index among that
 * type's visible devices either way); null for any other string.
 */
function typedOrdinal(n: SyntaxNode): SyntaxNode | null {
  if (n.type !== "string") return null;
  const parts = n.namedChildren.filter(
    (c): c is SyntaxNode => !!c && c.type !== "string_start" && c.type !== "string_end",
  );
  if (
    parts.length !== 3 ||
    parts[0].type !== "interpolation" ||
    parts[1].type !== "string_content" ||
    parts[1].text !== ":" ||
    parts[2].type !== "interpolation" ||
    parts[2].namedChildren.length !== 1
  )
    return null;
  return parts[2].namedChildren[0] ?? null;
}

/**
 * The device expressions of a `device_map=` argument: the values of a dict literal (`{"": rank}`,
 * `{"model.embed": 0, ...}`), also one assigned to the name passed (`device_map = {"": rank}` then
 * `device_map=device_map`, the latest such assignment above the call in the same function or at
 * module level), or the argument itself when it is neither (`device_map=rank`: transformers'
 * from_pretrained docstring, "Passing `device_map = 0` means put the whole model on GPU 0").
 * A name bound to anything else (a parameter, `"auto"`, a helper's result) gives the name, whose
 * value the callers' analyses then find or not.
 */
export function deviceMapValues(
  model: Pick<ModuleModel, "nodesOfType">,
  value: SyntaxNode,
  call: SyntaxNode,
): SyntaxNode[] {
  let dict: SyntaxNode | null = value.type === "dictionary" ? value : null;
  if (!dict && value.type === "identifier") {
    const scope = enclosingFunction(call)?.id;
    let best: SyntaxNode | null = null;
    for (const a of model.nodesOfType("assignment")) {
      const right = a?.childForFieldName("right");
      if (!a || right?.type !== "dictionary" || a.endIndex > call.startIndex) continue;
      if (a.childForFieldName("left")?.text !== value.text || enclosingFunction(a)?.id !== scope) continue;
      if (!best || a.startIndex > best.startIndex) best = right;
    }
    dict = best;
  }
  if (!dict) return [value];
  const out: SyntaxNode[] = [];
  for (const pair of dict.namedChildren)
    if (pair?.type === "pair") {
      const v = pair.childForFieldName("value");
      if (v) out.push(v);
    }
  return out;
}

/**
 * The device expressions of a `device_map` that a call receives through `**kw`, where the same
 * function (or the module's top level) sets `kw["device_map"] = …` above the call and rebinds `kw`
 * nowhere between (`kwargs["device_map"] = {"": current_device}` then
 * `from_pretrained(name, **kwargs)`: huggingface/trl#515). The latest such entry counts; [] when none.
 */
function splattedDeviceMap(model: Pick<ModuleModel, "nodesOfType">, call: SyntaxNode): SyntaxNode[] {
  const splats = (call.childForFieldName("arguments")?.namedChildren ?? []).filter(
    (a): a is SyntaxNode => a?.type === "dictionary_splat" && a.namedChildren[0]?.type === "identifier",
  );
  if (!splats.length) return [];
  const scope = enclosingFunction(call)?.id;
  for (const splat of splats) {
    const name = splat.namedChildren[0]!.text;
    // The latest assignment above the call that binds `name` or its "device_map" entry: a rebinding
    // (`kwargs = {...}`) drops the entries written before it.
    let latest: { at: number; value: SyntaxNode | null } | null = null;
    for (const a of model.nodesOfType("assignment")) {
      if (!a || a.endIndex > call.startIndex || (latest && a.startIndex < latest.at)) continue;
      const left = a.childForFieldName("left");
      const rebinds = left?.type === "identifier" && left.text === name;
      const entry =
        left?.type === "subscript" &&
        left.childForFieldName("value")?.text === name &&
        stringValue(left.childForFieldName("subscript")) === "device_map";
      if ((rebinds || entry) && enclosingFunction(a)?.id === scope)
        latest = { at: a.startIndex, value: entry ? a.childForFieldName("right") : null };
    }
    if (latest?.value) return deviceMapValues(model, latest.value, call);
  }
  return [];
}

/** Where one device ordinal is given: the expression and how the call names it, for messages. */
export interface DeviceSlot {
  ordinal: SyntaxNode;
  form: string;
  /** The node is a list of ordinals ({@link deviceIdLists}), not one. */
  list?: boolean;
}

/**
 * The lists of device ids the module hands to `DataParallel` / `DistributedDataParallel` as a value
 * that is no list written out (`device_ids=cfg.gpu_ids`, or DataParallel's second argument).
 */
export function deviceIdLists(model: ModuleModel): DeviceSlot[] {
  const out: DeviceSlot[] = [];
  if (!model.text.includes("DataParallel")) return out;
  for (const call of model.nodesOfType("call")) {
    const path = call ? (calleePath(model, call) ?? "") : "";
    const m = /(^|\.)((Distributed)?DataParallel)$/.exec(path);
    if (!m) continue;
    const { positional, keywords } = callArgs(call!);
    const ids = keywords.get("device_ids") ?? (m[2] === "DataParallel" ? positional[1] : undefined);
    if (ids && ids.type !== "list" && ids.type !== "tuple")
      out.push({ ordinal: ids, form: `${m[2]}(device_ids=…)`, list: true });
  }
  return out;
}

/**
 * The device ordinals the module passes to CUDA: `torch.cuda.set_device(x)`, `torch.cuda.device(x)`,
 * `torch.device("cuda", x)` / `torch.device(x)`, `.to(x)` / `.cuda(x)` (positional or `device=`),
 * `device_ids=[x]`, `output_device=x`, `device_id=x` on any call, `device=x` on a `torch.*` call, the
 * first argument of a torch.cuda device query (frameworks.ts DEVICE_QUERY_PATHS: `get_device_capability(x)`),
 * the library parameters that take a device ordinal (frameworks.ts LIBRARY_DEVICE_PARAMS:
 * `transformers.pipeline(device=x)`, sglang's `load_model(server_args, port_args, x)`), the values of
 * a `device_map=` (`device_map={"": x}`, {@link deviceMapValues}), and device strings built from `x` (`f"cuda:{x}"`, `"cuda:" + str(x)`, `"cuda:{}".format(x)`).
 */
export function deviceSlots(model: ModuleModel): DeviceSlot[] {
  const out: DeviceSlot[] = [];
  // A `kw["device_map"] = ...` entry names the key: without the word no `**kw` call is searched for one.
  const entries = model.text.includes("device_map");
  for (const call of model.nodesOfType("call")) {
    if (!call) continue;
    const fn = call.childForFieldName("function");
    const path = calleePath(model, call);
    const { positional, keywords } = callArgs(call);
    const first = positional[0];
    const method = fn?.type === "attribute" ? fn.childForFieldName("attribute")?.text : undefined;
    if (path && (SET_DEVICE_PATHS.includes(path) || path === "torch.cuda.device")) {
      const x = first ?? keywords.get("device");
      if (x) out.push({ ordinal: x, form: `${path}()` });
    } else if (path && DEVICE_QUERY_PATHS.includes(path)) {
      if (first) out.push({ ordinal: first, form: `${path}()` });
    } else if (path === "torch.device") {
      if (positional.length >= 2 && stringValue(positional[0]) === "cuda")
        out.push({ ordinal: positional[1], form: 'torch.device("cuda", …)' });
      else if (positional.length === 1) out.push({ ordinal: typedOrdinal(first) ?? first, form: "torch.device()" });
      const index = keywords.get("index");
      if (index) out.push({ ordinal: index, form: "torch.device(index=…)" });
    } else if ((method === "to" || method === "cuda") && !path?.startsWith("torch.cuda")) {
      const x = first ?? keywords.get("device");
      if (x) out.push({ ordinal: x, form: `.${method}()` });
    }
    const lib = path ? LIBRARY_DEVICE_PARAMS.get(path) : undefined;
    if (lib) {
      const x = keywords.get(lib.keyword) ?? (lib.index !== null ? positional[lib.index] : undefined);
      if (x) out.push({ ordinal: x, form: `${path!.slice(path!.lastIndexOf(".") + 1)}(${lib.keyword}=…)` });
    }
    for (const [name, value] of keywords) {
      if (name === "device_map") {
        for (const v of deviceMapValues(model, value, call)) out.push({ ordinal: v, form: 'device_map={"": …}' });
        continue;
      }
      if (name === "device_ids" && (value.type === "list" || value.type === "tuple")) {
        for (const el of value.namedChildren)
          if (el && el.type !== "comment") out.push({ ordinal: el, form: "device_ids=[…]" });
      } else if (name === "output_device" || name === "device_id") out.push({ ordinal: value, form: `${name}=` });
      else if (
        name === "device" &&
        path?.startsWith("torch.") &&
        path !== "torch.device" &&
        !SET_DEVICE_PATHS.includes(path) &&
        path !== "torch.cuda.device"
      )
        out.push({ ordinal: value, form: "device=" });
    }
    const inString = cudaStringOrdinal(call);
    if (inString) out.push({ ordinal: inString, form: '"cuda:{}".format()' });
    if (entries && !keywords.has("device_map"))
      for (const v of splattedDeviceMap(model, call)) out.push({ ordinal: v, form: 'device_map={"": …}' });
  }
  for (const s of model.nodesOfType("string")) {
    if (!s || !s.text.includes("cuda:")) continue;
    const x = cudaStringOrdinal(s);
    if (x) out.push({ ordinal: x, form: 'f"cuda:{…}"' });
  }
  for (const b of model.nodesOfType("binary_operator")) {
    if (!b || !b.text.includes("cuda:")) continue;
    const x = cudaStringOrdinal(b);
    if (x) out.push({ ordinal: x, form: '"cuda:" + …' });
  }
  return out;
}

/** A parameter of a function that the function passes on as a CUDA device ordinal (ProjectLookup.callableDeviceParams). */
export interface DeviceParam {
  /** Its position among the parameters (0-based; `self` counts), and its name (for keyword arguments). */
  index: number;
  name: string;
  /** How the function uses it, for messages: `dist.barrier(device_ids=[…])`. */
  form: string;
  /** The 1-based line of that use. */
  line: number;
}

/**
 * The parameters of `def` that reach one of {@link deviceSlots} as they are (the slot's ordinal is
 * the parameter's name, or `int(name)`), and that the function never rebinds.
 * @param slots the module's device slots (computed once per module by the caller)
 */
export function deviceParams(def: SyntaxNode, slots: readonly DeviceSlot[]): DeviceParam[] {
  const params = positionalParams(def);
  const body = def.childForFieldName("body");
  if (!body || !params.some(Boolean)) return [];
  const rebound = namesBoundIn(def);
  const out: DeviceParam[] = [];
  for (const slot of slots) {
    if (slot.ordinal.startIndex < body.startIndex || slot.ordinal.endIndex > body.endIndex) continue;
    let o: SyntaxNode | null = slot.ordinal;
    if (o.type === "call" && o.childForFieldName("function")?.text === "int")
      o = o.childForFieldName("arguments")?.namedChildren[0] ?? null;
    if (o?.type !== "identifier" || rebound.has(o.text)) continue;
    // The slot belongs to this function, not to a nested one.
    let owner: SyntaxNode | null = o.parent;
    while (owner && owner.type !== "function_definition" && owner.type !== "lambda") owner = owner.parent;
    if (owner?.id !== def.id) continue;
    const index = params.indexOf(o.text);
    if (index >= 0 && !out.some((d) => d.index === index))
      out.push({ index, name: o.text, form: slot.form, line: slot.ordinal.startPosition.row + 1 });
  }
  return out;
}

/** A parameter of a function one of whose entries (`args["gpu"]`, `args.gpu`) the function passes on as a CUDA device ordinal. */
export interface KeyedDeviceParam extends DeviceParam {
  /** The entry's key (`gpu`), and whether it is read by subscript (`args["gpu"]`) or as an attribute. */
  key: string;
  subscript: boolean;
  /** The slot converts the value or builds a device string around it (a string `"1"` is then an ordinal). */
  converts: boolean;
  /** The entry is a list of ids (`DataParallel(device_ids=cfg.gpu_ids)`). */
  list: boolean;
}

/**
 * The parameters of `def` one of whose entries reaches one of {@link deviceSlots} as it is
 * (`f"cuda:{args['gpu']}"`, `set_device(int(args.gpu))`), directly or through `self.X` where `def`
 * assigns `self.X = param` once, before the slot (a constructor keeping its config). Silent for a
 * parameter `def` rebinds, an entry it assigns (`args["gpu"] = ...`, `self.args.gpu = ...`), and
 * slots of nested functions.
 * @param slots the module's device slots (computed once per module by the caller)
 */
export function keyedDeviceParams(
  def: SyntaxNode,
  slots: readonly DeviceSlot[],
  scope: SyntaxNode = def,
): KeyedDeviceParam[] {
  const params = positionalParams(def);
  const body = def.childForFieldName("body");
  if (!body || !params.some(Boolean)) return [];
  const rebound = namesBoundIn(def);
  const targets = assignedTexts(scope);
  // `self.X = param`, the attribute's one assignment in `def`.
  const kept = new Map<string, { param: string; end: number } | null>();
  for (const a of body.descendantsOfType("assignment")) {
    const left = a?.childForFieldName("left");
    const right = a?.childForFieldName("right");
    if (!a || left?.type !== "attribute" || left.childForFieldName("object")?.text !== params[0]) continue;
    const ok = right?.type === "identifier" && params.includes(right.text) && !kept.has(left.text);
    kept.set(left.text, ok ? { param: right!.text, end: a.endIndex } : null);
  }
  const out: KeyedDeviceParam[] = [];
  for (const slot of slots) {
    if (slot.ordinal.startIndex < body.startIndex || slot.ordinal.endIndex > body.endIndex) continue;
    if (enclosingDef(slot.ordinal)?.id !== def.id) continue;
    let o: SyntaxNode | null = slot.ordinal;
    const converts = !slot.list && (o.type === "call" || slot.form.includes('"cuda'));
    if (!slot.list && o.type === "call" && o.childForFieldName("function")?.text === "int")
      o = o.childForFieldName("arguments")?.namedChildren[0] ?? null;
    const subscript = o?.type === "subscript";
    const base = subscript
      ? o!.childForFieldName("value")
      : o?.type === "attribute"
        ? o.childForFieldName("object")
        : null;
    const key = subscript
      ? stringValue(o!.childForFieldName("subscript"))
      : (o?.childForFieldName("attribute")?.text ?? null);
    if (!o || !base || !key || targets.has(o.text)) continue;
    let param: string | null = base.type === "identifier" && !rebound.has(base.text) ? base.text : null;
    if (base.type === "attribute") {
      const k = kept.get(base.text);
      param = k && k.end <= o.startIndex && !rebound.has(k.param) ? k.param : null;
    }
    // `self.X`: mentions in the constructor, and in the whole class where the constructor calls a
    // method of its own before the slot (it may change the entry).
    const selfCall = body
      .descendantsOfType("call")
      .some(
        (c) =>
          c!.startIndex < o.startIndex &&
          c!.childForFieldName("function")?.childForFieldName("object")?.text === params[0] &&
          c!.childForFieldName("function")?.type === "attribute",
      );
    const aliasScope = selfCall ? scope : body;
    if (param && (!onlyRead(body, param) || (base.type === "attribute" && !onlyRead(aliasScope, base.text)))) continue;
    const index = param ? params.indexOf(param) : -1;
    if (index > 0 || (index === 0 && params[0] !== "self"))
      if (!out.some((d) => d.index === index && d.key === key))
        out.push({
          index,
          name: param!,
          form: slot.form,
          line: slot.ordinal.startPosition.row + 1,
          key,
          subscript,
          converts,
          list: !!slot.list,
        });
  }
  return out;
}

/** The `__init__` defined in the body of class `cls` (a decorated one too), or undefined. */
export function constructorOf(cls: SyntaxNode): SyntaxNode | undefined {
  for (const m of cls.childForFieldName("body")?.namedChildren ?? []) {
    const def = m?.type === "decorated_definition" ? m.childForFieldName("definition") : m;
    if (def?.type === "function_definition" && def.childForFieldName("name")?.text === "__init__") return def;
  }
  return undefined;
}

/**
 * Whether every mention of `name` (an identifier, or `self.X`) in `scope` reads an entry of it
 * (`name.x`, `name["x"]`, not a method called on it nor an assignment's target), is printed or
 * logged, or is kept as it is (`self.X = name`): no call gets it to change it. With `splats`, also
 * unpacked into a call's arguments (`f(**cfg)`: the callee gets a copy of its entries).
 */
function onlyRead(scope: SyntaxNode, name: string, splats = false): boolean {
  const type = name.includes(".") ? "attribute" : "identifier";
  for (const ref of scope.descendantsOfType(type)) {
    if (!ref || ref.text !== name) continue;
    const parent = ref.parent;
    if (!parent) return false;
    // `x.cfg` and `f(cfg=...)` name no variable.
    if (parent.type === "attribute" && parent.childForFieldName("attribute")?.id === ref.id) continue;
    if (parent.type === "keyword_argument" && parent.childForFieldName("name")?.id === ref.id) continue;
    if (parent.type === "assignment") {
      if (parent.childForFieldName("right")?.id === ref.id && parent.childForFieldName("left")?.type === "attribute")
        continue;
      if (parent.childForFieldName("left")?.id === ref.id && type === "attribute") continue;
      return false;
    }
    const entry =
      (parent.type === "attribute" && parent.childForFieldName("object")?.id === ref.id) ||
      (parent.type === "subscript" && parent.childForFieldName("value")?.id === ref.id);
    if (entry) {
      const method = parent.type === "attribute" ? parent.childForFieldName("attribute")?.text : "";
      const called = parent.parent?.type === "call" && parent.parent.childForFieldName("function")?.id === parent.id;
      if (called && !/^(get|keys|items|values|copy)$/.test(method ?? "")) return false;
      if (isAssigned(parent)) return false;
      continue;
    }
    // `f(**cfg)` hands on a copy of its entries.
    if (splats && parent.type === "dictionary_splat" && parent.parent?.type === "argument_list") continue;
    const call = parent.type === "argument_list" ? parent.parent : null;
    const fn = call?.childForFieldName("function")?.text ?? "";
    if (fn === "print" || /^(logging|logger|self\.logger|log)\.\w+$/.test(fn)) continue;
    return false;
  }
  return true;
}

/** Whether `n` is (part of) an assignment's target, or deleted. */
function isAssigned(n: SyntaxNode): boolean {
  for (let c: SyntaxNode = n, p = n.parent; p; c = p, p = p.parent) {
    if (p.type === "assignment" || p.type === "augmented_assignment") return p.childForFieldName("left")?.id === c.id;
    if (p.type === "delete_statement") return true;
    if (p.type === "expression_statement" || p.type === "block") return false;
  }
  return false;
}

/** The function or lambda that holds `n`, or null. */
function enclosingDef(n: SyntaxNode): SyntaxNode | null {
  let owner: SyntaxNode | null = n.parent;
  while (owner && owner.type !== "function_definition" && owner.type !== "lambda") owner = owner.parent;
  return owner;
}

/** The texts of the assignment targets in `def` (nested functions included: a conservative answer). */
function assignedTexts(def: SyntaxNode): Set<string> {
  const out = new Set<string>();
  for (const a of def.descendantsOfType(["assignment", "augmented_assignment"])) {
    const left = a?.childForFieldName("left");
    const targets = left?.type === "pattern_list" || left?.type === "tuple_pattern" ? left.namedChildren : [left];
    for (const t of targets) if (t) out.add(t.text);
  }
  return out;
}

/**
 * The names of the parameters of `def` that a call can fill by position, in order (`self`
 * included; "" for one without a plain name). A `*args`, `**kwargs`, `*` or `/` ends the list.
 * @param def a `function_definition` node
 */
export function positionalParams(def: SyntaxNode): string[] {
  const out: string[] = [];
  for (const p of def.childForFieldName("parameters")?.namedChildren ?? []) {
    if (!p || p.type === "comment") continue;
    if (
      p.type === "list_splat_pattern" ||
      p.type === "dictionary_splat_pattern" ||
      p.type === "keyword_separator" ||
      p.type === "positional_separator"
    )
      break;
    const name =
      p.type === "identifier"
        ? p
        : (p.childForFieldName("name") ?? p.namedChildren.find((c) => c?.type === "identifier"));
    out.push(name?.type === "identifier" ? name.text : "");
  }
  return out;
}

/**
 * The names a function's own body binds as a whole by assignment, augmented assignment or a `for`
 * target (`x = ...`, `x += ...`, `for x in ...`), not in nested functions, classes or lambdas.
 * @param def a `function_definition` node
 */
export function namesBoundIn(def: SyntaxNode): Set<string> {
  const out = new Set<string>();
  const body = def.childForFieldName("body");
  const stack: SyntaxNode[] = body ? [body] : [];
  while (stack.length) {
    const n = stack.pop()!;
    if (n.type === "function_definition" || n.type === "class_definition" || n.type === "lambda") continue;
    if (n.type === "assignment" || n.type === "augmented_assignment" || n.type === "for_statement") {
      const left = n.childForFieldName("left");
      if (left?.type === "identifier") out.add(left.text);
    }
    for (const c of n.namedChildren) if (c) stack.push(c);
  }
  return out;
}

/** A parameter of a function (or of a class's constructor) that the function unpacks with `**` into a call. */
export interface SplatParam {
  /** Its position among the parameters (0-based; `self` counts), and its name. */
  index: number;
  name: string;
  /** The call's callee as the module resolves it (`utils.initialize_model`), and its arguments written besides the `**`. */
  callee: string;
  positional: number;
  keywords: string[];
  /** The method of the class that holds the call, where it is not `def` itself (`setup`); null in `def`. */
  method: string | null;
  /** The call's 1-based line. */
  line: number;
}

/**
 * The parameters of `def` that it unpacks with `**` into a call whose callee the module resolves
 * (`initialize_model(model, **init_config)`), directly or, for a constructor (`scope` its class),
 * through `self.X` where `def` assigns `self.X = param` (the class's one assignment of `self.X`) and
 * a method of the class unpacks `**self.X`. Silent for a parameter `def` rebinds, and for a name
 * (or `self.X`) used otherwise than read, printed, kept or unpacked (a call may change the dict).
 */
export function splatParams(model: ModuleModel, def: SyntaxNode, scope: SyntaxNode = def): SplatParam[] {
  const params = positionalParams(def);
  const body = def.childForFieldName("body");
  if (!body || !params.some(Boolean) || !scope.text.includes("**")) return [];
  const rebound = namesBoundIn(def);
  const assigned = new Map<string, number>();
  for (const a of scope.descendantsOfType("assignment")) {
    const left = a?.childForFieldName("left")?.text;
    if (left) assigned.set(left, (assigned.get(left) ?? 0) + 1);
  }
  const kept = new Map<string, { param: string; end: number }>();
  for (const a of body.descendantsOfType("assignment")) {
    const left = a?.childForFieldName("left");
    const right = a?.childForFieldName("right");
    if (!a || left?.type !== "attribute" || left.childForFieldName("object")?.text !== params[0]) continue;
    if (right?.type === "identifier" && params.includes(right.text) && assigned.get(left.text) === 1)
      kept.set(left.text, { param: right.text, end: a.endIndex });
  }
  const out: SplatParam[] = [];
  for (const s of scope.descendantsOfType("dictionary_splat")) {
    const inner = s?.namedChildren[0];
    const call = s?.parent?.type === "argument_list" ? s.parent.parent : null;
    const owner = s ? enclosingDef(s) : null;
    if (!s || !inner || call?.type !== "call" || !owner || owner.text.includes("device_count")) continue;
    if (owner.descendantsOfType("try_statement").some((t) => t!.startIndex < s.startIndex && s.endIndex < t!.endIndex))
      continue;
    let param: string | null = null;
    if (inner.type === "identifier" && owner.id === def.id && !rebound.has(inner.text)) {
      param = onlyRead(body, inner.text, true) ? inner.text : null;
    } else if (inner.type === "attribute" && kept.has(inner.text)) {
      const k = kept.get(inner.text)!;
      const inDef = owner.id === def.id;
      // In another method of the class, `self` is its first parameter too; in `def`, after the assignment.
      const method = owner.parent?.type === "decorated_definition" ? owner.parent : owner;
      const ok = inDef
        ? k.end <= s.startIndex
        : method.parent?.parent?.id === scope.id && positionalParams(owner)[0] === params[0];
      param = ok && !rebound.has(k.param) && onlyRead(scope, inner.text, true) ? k.param : null;
    }
    const index = param ? params.indexOf(param) : -1;
    const callee = calleePath(model, call);
    if (index < 0 || (index === 0 && params[0] === "self") || !callee) continue;
    const { positional, keywords } = callArgs(call);
    if (call.childForFieldName("arguments")!.namedChildren.some((a) => a?.type === "list_splat")) continue;
    out.push({
      index,
      name: param!,
      callee,
      positional: positional.filter((a) => a.type !== "dictionary_splat").length,
      keywords: [...keywords.keys()],
      method: owner.id === def.id ? null : (owner.childForFieldName("name")?.text ?? null),
      line: call.startPosition.row + 1,
    });
  }
  return out;
}
