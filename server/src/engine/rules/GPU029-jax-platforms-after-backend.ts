import type { PythonRule } from "../rule";
import { nodeRange } from "../python/events";
import type { InitEvent, TimelineEvent } from "../python/events";
import { stringValue, type SyntaxNode } from "../python/parser";
import { callArgs, calleePath } from "./shared/py";

/** The syntax node an event stands for, or null (a notebook `!export` line, a `%env` magic). */
function eventNode(e: TimelineEvent): SyntaxNode | null {
  if (e.kind === "envWrite") return e.statement;
  return e.kind === "shellExport" ? null : e.node;
}

/** The options GPU029 checks: the platforms, and the older default-platform option (jax-ml/jax#10320). */
const OPTIONS = ["jax_platforms", "jax_platform_name"];

/** GPU029: `jax.config.update("jax_platforms" | "jax_platform_name", ...)` after the JAX backend started: no effect. */
export const rule: PythonRule = {
  meta: {
    code: "GPU029",
    name: "jax-platforms-after-backend",
    severity: "error",
    fixable: false,
    // `jax.config.update("jax_platforms", ...)` or `("jax_platform_name", ...)`.
    trigger: (t) => t.has("jax_platform"),
    docs: {
      what: 'Finds `jax.config.update("jax_platforms", ...)` and its older form `jax.config.update("jax_platform_name", ...)` after a call that started JAX\'s backend (`jax.devices()`, `jax.device_count()`, an array from `jax.numpy` or `jax.random`, ...).',
      follows:
        'The module\'s code in the order it runs (top level, `if __name__ == "__main__":` blocks, notebook cells in order with their `%env` lines), including the bodies of the module\'s own functions, class constructors and methods (on `self` or an instance it made) that it calls, two calls deep; a `jax.config.update("jax_platforms", ...)` (or `"jax_platform_name"`) in a function the module never calls (a device helper) is checked against JAX started by the module\'s own code, earlier in that function, or in the file\'s functions that call it. Not followed: JAX started in other modules (the project\'s own modules count only where the file writes an environment variable after them), and code run in another process.',
      why: 'JAX picks its platforms once, when the backend starts. Measured on 1 x H200 with jax 0.11.2 (docs/ground-truth.md, \'JAX and Keras\'): `jax.config.update("jax_platforms", "cpu")` before the first `jax.devices()` gives the CPU; after it, new arrays still land on the GPU and `jax.devices()` still lists the GPU. No error or warning says so. The same holds for the older option `jax_platform_name` (measured on 1 x H100, jax 0.11.2, verify/results-jax-platform-name-h100.json): before the backend starts, `"cpu"` puts arrays on the CPU; after it, new arrays stay on the GPU and `jax.default_backend()` still says `gpu` (the situation of jax-ml/jax#10320). What does move later work is `jax.config.update("jax_default_device", jax.devices("cpu")[0])` (measured: the next array is on the CPU).',
      example:
        'import jax\n\nprint(jax.devices())\njax.config.update("jax_platforms", "cpu")  # GPU029: no effect, still on the GPU\nx = jax.numpy.ones(3)\n',
      fix: 'import jax\n\njax.config.update("jax_platforms", "cpu")\nprint(jax.devices())\nx = jax.numpy.ones(3)\n',
      whenNotToCare:
        'Never in the same process; to run a later step on the CPU, place arrays explicitly (`jax.device_put(x, jax.devices("cpu")[0])`) or start a new process.',
      references: [
        "docs/ground-truth.md, 'JAX and Keras': config jax_platforms=cpu after backend → platform gpu (jax 0.11.2)",
        "Measured: verify/results-jax-platform-name-h100.json (jax 0.11.2, 1 x H100, verify/frameworks/probe.py): config jax_platform_name=cpu before backend → cpu; after backend → gpu, default_backend gpu; config jax_default_device=cpu after backend → cpu",
        "JAX documentation, jax.config / JAX_PLATFORMS: the platforms are chosen when the backend initialises",
      ],
    },
  },
  check(ctx) {
    const report = (call: SyntaxNode, started: InitEvent, key: SyntaxNode, value: SyntaxNode | undefined) => {
      const option = stringValue(key);
      const at = `\`${started.what}\` (${ctx.where(started.node.startPosition.row)}) started JAX's backend`;
      ctx.report({
        range: nodeRange(call),
        message:
          option === "jax_platform_name"
            ? `jax_platform_name is set after ${at}: the default platform is already chosen, so this has no effect (measured: new arrays stay on the GPU and jax.default_backend() still says gpu); set it before the first JAX call, or move later work with jax.config.update("jax_default_device", jax.devices(${value ? (value.text.length > 20 ? '"cpu"' : value.text) : '"cpu"'})[0])`
            : `jax_platforms is set after ${at}: the platforms are already chosen, so this has no effect (measured: arrays stay on the GPU); set it before the first JAX call${value ? ` or JAX_PLATFORMS=${stringValue(value) ?? "..."} in the environment` : ""}`,
        related: [{ range: nodeRange(started.node), message: "JAX's backend started here" }],
      });
    };
    const onTimeline = new Set<number>();
    for (const c of ctx.model.calls) {
      onTimeline.add(c.node.id);
      if (c.path !== "jax.config.update") continue;
      const [key, value] = callArgs(c.node).positional;
      if (!key || !OPTIONS.includes(stringValue(key) ?? "")) continue;
      const started = ctx.model.events
        .slice(0, c.at)
        .find((e): e is InitEvent => e.kind === "init" && e.framework === "jax");
      if (started) report(c.node, started, key, value);
    }
    // In a function the module never calls (a library's device helper): the backend started earlier
    // in the same function body, in the order the body runs (its own events, python/model.ts
    // functionTimelines), or by the module's own code, which runs first.
    const moduleStart = ctx.model.events.find((e): e is InitEvent => e.kind === "init" && e.framework === "jax");
    for (const call of ctx.model.nodesMentioning("call", OPTIONS)) {
      if (onTimeline.has(call.id) || calleePath(ctx.model, call) !== "jax.config.update") continue;
      const [key, value] = callArgs(call).positional;
      if (!key || !OPTIONS.includes(stringValue(key) ?? "")) continue;
      // The def holding the call, and a timeline that runs it (its own, or a caller's that inlined it).
      let def: SyntaxNode | null = call.parent;
      while (def && def.type !== "function_definition") def = def.parent;
      if (!def) continue;
      const d = def;
      const inDef = (e: TimelineEvent) => {
        const n = eventNode(e);
        return !!n && d.startIndex <= n.startIndex && n.endIndex <= d.endIndex;
      };
      const fn =
        ctx.model.functionTimelines.find((f) => f.def.id === d.id) ??
        ctx.model.functionTimelines.find((f) => f.events.some(inDef));
      if (!fn) continue;
      const firstInDef = fn.events.findIndex(inDef);
      const started =
        moduleStart ??
        fn.events.find(
          (e, i): e is InitEvent =>
            e.kind === "init" &&
            e.framework === "jax" &&
            (inDef(e) ? e.node.endIndex <= call.startIndex : i < firstInDef),
        );
      if (started) report(call, started, key, value);
    }
  },
};
