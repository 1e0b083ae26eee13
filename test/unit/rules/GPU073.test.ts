import assert from "node:assert/strict";
import { test } from "node:test";
import { applyFix, lintCode } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU073");

const SRC =
  'import torch\n\ndevice = torch.device("cuda:1")\nmodel = torch.nn.Linear(4, 4)\nmodel.load_state_dict(torch.load("weights.pt"))\nmodel.to(device)\n';

test("GPU073: torch.load into load_state_dict in a program with a CUDA device is preview information on the call, with the unsafe map_location fix", async () => {
  assert.deepEqual(await lintCode(SRC, "GPU073"), []);
  const [d, ...rest] = await lintCode(SRC, "GPU073", { preview: true });
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "information");
  assert.deepEqual(d.range, { start: { line: 4, character: 22 }, end: { line: 4, character: 46 } });
  assert.match(
    d.message,
    /^torch\.load\(\.\.\.\) has no map_location, so CUDA tensors in the checkpoint return to the GPU index they were saved from, not to this program's device `device`: on a machine with fewer GPUs /,
  );
  assert.match(d.message, /Attempting to deserialize object on CUDA device N but torch\.cuda\.device_count\(\) is M/);
  assert.match(d.message, /; pass map_location=device$/);
  assert.equal(d.fix?.safe, false);
  const fixed = applyFix(SRC, d);
  assert.equal(fixed, SRC.replace('torch.load("weights.pt")', 'torch.load("weights.pt", map_location=device)'));
  assert.deepEqual(await lintCode(fixed, "GPU073", { preview: true }), []);
});

test("GPU073: weights_only= does not silence it; map_location as the second argument, **kwargs and a CPU-only use do", async () => {
  const only = SRC.replace('torch.load("weights.pt")', 'torch.load("weights.pt", weights_only=True)');
  assert.equal((await lintCode(only, "GPU073", { preview: true })).length, 1);
  for (const args of ['"weights.pt", "cpu"', '"weights.pt", **opts', "*args"]) {
    const src = SRC.replace('torch.load("weights.pt")', `torch.load(${args})`);
    assert.deepEqual(await lintCode(src, "GPU073", { preview: true }), [], args);
  }
  const cpu =
    'import torch\n\ndevice = torch.device("cuda:1")\nstats = torch.load("stats.pt")\nprint(stats["mean"].numpy())\n';
  assert.deepEqual(await lintCode(cpu, "GPU073", { preview: true }), []);
});

test("GPU073: silent where the same function saved the file it loads, and where no device is chosen", async () => {
  const same =
    'import torch\n\ndef run(model, device="cuda:0"):\n    device = torch.device("cuda:0")\n    torch.save(model.state_dict(), "m.pt")\n    model.load_state_dict(torch.load("m.pt"))\n';
  assert.deepEqual(await lintCode(same, "GPU073", { preview: true }), []);
  const none = 'import torch\n\nmodel = torch.nn.Linear(4, 4).cuda()\nmodel.load_state_dict(torch.load("w.pt"))\n';
  assert.deepEqual(await lintCode(none, "GPU073", { preview: true }), []);
});

test("GPU073: a set_device in another branch than the load does not count", async () => {
  const src =
    "import torch\n\ndef main(args, model):\n    if args.gpu is not None:\n        torch.cuda.set_device(args.gpu)\n    if args.gpu is None:\n        model.load_state_dict(torch.load(args.resume))\n";
  assert.deepEqual(await lintCode(src, "GPU073", { preview: true }), []);
  const pinned = src.replace("    if args.gpu is not None:\n        torch", "    torch");
  const [d] = await lintCode(pinned, "GPU073", { preview: true });
  assert.match(d.message, /chose with torch\.cuda\.set_device\(args\.gpu\)/);
  assert.equal(d.fix, undefined);
});
