/**
 * python/argparseReach.ts: what GPU044 reads of a module's calls (by scope) and which of its scopes
 * run the parse of an option declared in a given scope.
 */
import assert from "node:assert/strict";
import { test, before } from "node:test";
import { initEngine } from "../../../../../server/src/engine/lint";
import { ModuleTrees } from "../../../../../server/src/engine/python/moduleTrees";
import { buildModel } from "../../../../../server/src/engine/python/model";
import {
  closureOf,
  MAIN_SCOPE,
  MODULE_SCOPE,
  moduleCalls,
  parseTargets,
  type ModuleCalls,
} from "../../../../../server/src/engine/python/argparseReach";

before(() => initEngine());

const callsOf = (code: string): ModuleCalls =>
  moduleCalls(buildModel(ModuleTrees.parse(code, false), code, { eagerInitModules: [], torchBelow24: false }));

const targets = (code: string, declaring: string[]) =>
  Object.fromEntries(parseTargets(callsOf(code), new Set(declaring)));

test("moduleCalls: calls into other modules by dotted path, the module's own functions by name, imports and strict parses, per scope", () => {
  const m = callsOf(
    'import argparse\nfrom pkg import opts\nfrom .tools import helper as h\n\n\ndef setup():\n    h(1)\n    return opts.read()\n\n\ndef main():\n    p = argparse.ArgumentParser()\n    setup()\n    return p.parse_args()\n\n\nif __name__ == "__main__":\n    main()\n',
  );
  assert.deepEqual(
    m.scopes.get("setup")?.calls.map((c) => [c.path, c.range.start.line]),
    [
      [".tools.helper", 6],
      ["pkg.opts.read", 7],
    ],
  );
  assert.deepEqual(m.scopes.get("main")?.locals, ["setup"]);
  // argparse's own constructor is a dotted call like any other; parse_args on a local parser is a parse.
  assert.deepEqual(
    m.scopes.get("main")?.calls.map((c) => c.path),
    ["argparse.ArgumentParser"],
  );
  assert.equal(m.scopes.get("main")?.parses, true);
  assert.equal(m.scopes.get("setup")?.parses, false);
  assert.deepEqual(m.scopes.get(MAIN_SCOPE)?.locals, ["main"]);
  assert.deepEqual(
    m.scopes.get(MODULE_SCOPE)?.imports.map((i) => i.path),
    ["argparse", "pkg.opts", ".tools.helper"],
  );
  assert.deepEqual([...closureOf(m, MAIN_SCOPE)].sort(), [MAIN_SCOPE, "main", "setup"].sort());
  assert.equal(m.knownArgs, false);
  assert.equal(m.dashed, false);
  // A module function called through its module (`opts.parse_args()`) is a call, not argparse's parse.
  const viaModule = callsOf("from pkg import opts\n\n\ndef go():\n    return opts.parse_args()\n");
  assert.deepEqual(
    viaModule.scopes.get("go")?.calls.map((c) => c.path),
    ["pkg.opts.parse_args"],
  );
  assert.equal(viaModule.scopes.get("go")?.parses, false);
  // parse_known_args anywhere, --local-rank declared anywhere, parse_args(argv) is no strict parse.
  assert.equal(callsOf("import sys\nargs, rest = p.parse_known_args()\n").knownArgs, true);
  assert.equal(callsOf('p.add_argument("--local-rank", type=int)\n').dashed, true);
  assert.equal(callsOf("def f(argv):\n    return p.parse_args(argv)\n").scopes.get("f")?.parses ?? false, false);
  assert.equal(
    callsOf("import sys\n\ndef f():\n    return p.parse_args(sys.argv[1:])\n").scopes.get("f")?.parses,
    true,
  );
});

test("parseTargets: the scopes whose call runs the declaration and a parse; a declaring function without a parse needs its caller's; none with parse_known_args", () => {
  const shared =
    'import argparse\n\n\ndef _dist(p):\n    p.add_argument("--local_rank", type=int)\n\n\ndef parse():\n    p = argparse.ArgumentParser()\n    _dist(p)\n    return p.parse_args()\n\n\ndef unrelated():\n    return 1\n';
  assert.deepEqual(targets(shared, ["_dist"]), { parse: "parses", _dist: "caller" });
  assert.deepEqual(targets(shared.replace("p.parse_args()", "p.parse_known_args()[0]"), ["_dist"]), {});
  // Declared and parsed at module level: the import runs both; a function that parses again too.
  const global =
    'import argparse\n\nP = argparse.ArgumentParser()\nP.add_argument("--local_rank", type=int)\nARGS = P.parse_args()\n\n\ndef other():\n    return 2\n';
  assert.deepEqual(targets(global, [MODULE_SCOPE]), { [MODULE_SCOPE]: "parses" });
  // Declared at module level, parsed in a function: that function.
  const later =
    'import argparse\n\nP = argparse.ArgumentParser()\nP.add_argument("--local_rank", type=int)\n\n\ndef get():\n    return P.parse_args()\n\n\ndef other():\n    return 2\n';
  assert.deepEqual(targets(later, [MODULE_SCOPE]), { get: "parses" });
});
