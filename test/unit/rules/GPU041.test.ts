import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode, applyFix } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";
import { initEngine } from "../../../server/src/engine/lint";
import { lintNotebook } from "../../../server/src/engine/notebook";

fixtureTests("GPU041");

test("GPU041 warns on JAX_PLATFORMS after import jax, names the import and the source, and moves the write above it", async () => {
  const src = 'import os\nimport jax\n\nos.environ["JAX_PLATFORMS"] = "cpu"\nprint(jax.devices())\n';
  const [d, ...rest] = await lintCode(src, "GPU041");
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual([d.range.start.line, d.related?.[0].range.start.line], [3, 1]);
  assert.match(d.message, /^JAX_PLATFORMS is set after `import jax` \(line 2\): JAX read it when it was imported/);
  assert.match(d.message, /jax\/_src\/config\.py/);
  assert.equal(d.fix?.title, "Move the JAX_PLATFORMS write above `import jax`");
  const fixed = applyFix(src, d);
  assert.equal(fixed, 'import os\nos.environ["JAX_PLATFORMS"] = "cpu"\nimport jax\n\nprint(jax.devices())\n');
  assert.deepEqual(await lintCode(fixed, "GPU041"), []);
});

test("GPU041: the deprecated JAX_PLATFORM_NAME too; a torch import alone, a write before jax, putenv and other variables are not it", async () => {
  const [d] = await lintCode(
    'import os\nfrom jax import numpy as jnp\nos.environ["JAX_PLATFORM_NAME"] = "cpu"\n',
    "GPU041",
  );
  assert.match(d.message, /^JAX_PLATFORM_NAME is set after `from jax import numpy as jnp` \(line 2\)/);
  for (const src of [
    'import os\nimport torch\nos.environ["JAX_PLATFORMS"] = "cpu"\nimport jax\n',
    'import os\nos.environ["JAX_PLATFORMS"] = "cpu"\nimport jax\n',
    'import os\nimport jax\nos.putenv("JAX_PLATFORMS", "cpu")\n',
    'import os\nimport jax\nos.environ["JAX_ENABLE_X64"] = "1"\n',
  ])
    assert.deepEqual(await lintCode(src, "GPU041"), [], src);
});

test("GPU041 follows a module function called after the import", async () => {
  const viaFunction = 'import os\nimport jax\ndef force_cpu():\n    os.environ["JAX_PLATFORMS"] = "cpu"\nforce_cpu()\n';
  assert.deepEqual(
    (await lintCode(viaFunction, "GPU041")).map((d) => d.range.start.line),
    [3],
  );
});

test("GPU041 fix moves the comment lines directly above the write with it, and its trailing comment; nothing stale stays behind", async () => {
  const fix = async (src: string) => {
    const [d] = await lintCode(src, "GPU041");
    assert.ok(d?.fix, src);
    return applyFix(src, d);
  };
  const w = 'os.environ["JAX_PLATFORMS"] = "cpu"  # no GPU\n';
  // A comment block right above the write: about it, it moves with it.
  assert.equal(
    await fix(`import os\nimport jax\n\n# JAX on the CPU:\n# the GPU is busy.\n${w}x = jax.numpy.ones(4)\n`),
    `import os\n# JAX on the CPU:\n# the GPU is busy.\n${w}import jax\n\nx = jax.numpy.ones(4)\n`,
  );
  // Right below the import, with no blank line: still the write's.
  assert.equal(await fix(`import os\nimport jax\n# CPU only\n${w}`), `import os\n# CPU only\n${w}import jax\n`);
  // CRLF: the same lines, the same breaks.
  assert.equal(
    await fix(`import os\r\nimport jax\r\n# CPU only\r\n${w.replace("\n", "\r\n")}x = 1\r\n`),
    `import os\r\n# CPU only\r\n${w.replace("\n", "\r\n")}import jax\r\nx = 1\r\n`,
  );
  // Separated by a blank line, the comment is about what follows in general: it stays.
  assert.equal(
    await fix(`import os\nimport jax\n\n# Settings\n\n${w}x = 1\n`),
    `import os\n${w}import jax\n\n# Settings\n\nx = 1\n`,
  );
  // Cell markers and tool directives stay where they are.
  for (const marker of ["# %%", "# fmt: off", "# pylint: disable=wrong-import-position"])
    assert.equal(
      await fix(`import os\nimport jax\n${marker}\n${w}x = 1\n`),
      `import os\n${w}import jax\n${marker}\nx = 1\n`,
      marker,
    );
  // In a block: the comment at the write's indentation moves (dedented), one at another stays.
  assert.equal(
    await fix(`import os\nimport jax\nif __name__ == "__main__":\n    # CPU only\n    ${w}    x = 1\n`),
    `import os\n# CPU only\n${w}import jax\nif __name__ == "__main__":\n    x = 1\n`,
  );
  assert.equal(
    await fix(`import os\nimport jax\nif __name__ == "__main__":\n    x = 1\n# about x\n    ${w}`),
    `import os\n${w}import jax\nif __name__ == "__main__":\n    x = 1\n# about x\n`,
  );
  // The write alone in its block, with its comment: the block keeps a `pass` at its indentation.
  assert.equal(
    await fix(`import os\nimport jax\nif True:\n    # CPU only\n    ${w}`),
    `import os\n# CPU only\n${w}import jax\nif True:\n    pass\n`,
  );
});

test("GPU041 fix in a notebook: a comment at the end of the cell above is not the write's", async () => {
  const cells = [
    { kind: "code" as const, text: "import os\nimport jax\n# end of cell 1" },
    { kind: "code" as const, text: '# CPU only\nos.environ["JAX_PLATFORMS"] = "cpu"\nx = 1' },
  ];
  await initEngine();
  const [d] = lintNotebook(cells, { select: ["GPU041"] }).diagnostics;
  assert.ok(d?.fix, "a fix");
  const byCell = (cell: number) =>
    d.fix!.edits.filter((e) => e.cell === cell).map((e) => [e.range.start.line, e.range.end.line, e.newText]);
  // Inserted above `import jax` in cell 1, with its own comment; removed from cell 2 with it.
  assert.deepEqual(byCell(0), [[1, 1, '# CPU only\nos.environ["JAX_PLATFORMS"] = "cpu"\n']]);
  assert.deepEqual(byCell(1), [[0, 2, ""]]);
});
