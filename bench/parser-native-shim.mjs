// Stand-in for web-tree-sitter over tree-sitter's native binding, for issue 43's whole-CLI
// comparison only: bench/parser-native.mjs --cli bundles server/src/cli.ts with esbuild's alias
// web-tree-sitter -> this file. The engine's parser.ts is unchanged: Parser.init and Language.load
// become no-ops that hand over the native grammar, and the native trees get the delete() and copy()
// the engine calls (the native binding frees its trees in the garbage collector, and has no copy():
// moduleTrees.ts `syntaxErrorsAfter` copies the trees of a file with a fix, so the stand-in parses
// the tree's input again, with the same included ranges: a cost that the real binding would not add). The native
// packages come from TREE_SITTER_NATIVE_DIR at run time (they are not dependencies of GPU Pilot).
import { createRequire } from "node:module";
import { join } from "node:path";

const dir = process.env.TREE_SITTER_NATIVE_DIR;
if (!dir)
  throw new Error(
    "TREE_SITTER_NATIVE_DIR is not set: the folder where tree-sitter and tree-sitter-python are installed",
  );
const req = createRequire(join(dir, "package.json"));
const Native = req("tree-sitter");
const Python = req("tree-sitter-python");
Native.Tree.prototype.delete ??= function () {};
Native.TreeCursor.prototype.delete ??= function () {};
let copier;
Native.Tree.prototype.copy ??= function () {
  if (!copier) {
    copier = new Native();
    copier.setLanguage(Python);
  }
  return copier.parse(this.input, undefined, { includedRanges: this.getIncludedRanges() });
};

export class Parser extends Native {
  static async init() {}
  parse(input, old, options) {
    return super.parse(input, old ?? undefined, options);
  }
}
export const Language = { load: async () => Python };
