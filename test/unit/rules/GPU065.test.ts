import assert from "node:assert/strict";
import { test } from "node:test";
import { applyFix, lintCode } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU065");

const SRC =
  'from faster_whisper import WhisperModel\n\nmodel = WhisperModel("large-v2", device="cuda:1", compute_type="float16")\n';

test('GPU065: WhisperModel(device="cuda:1") is an error on the value, in the default set, with the safe device_index fix', async () => {
  const [d, ...rest] = await lintCode(SRC, "GPU065");
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "error");
  assert.deepEqual(d.range, { start: { line: 2, character: 40 }, end: { line: 2, character: 48 } });
  assert.equal(
    d.message,
    'WhisperModel takes the device type only ("cuda", "cpu" or "auto") and the GPU in device_index: CTranslate2 rejects device="cuda:1" with ValueError: unsupported device cuda:1; pass device="cuda", device_index=1',
  );
  assert.equal(d.fix?.safe, true);
  const fixed = applyFix(SRC, d);
  assert.equal(fixed, SRC.replace('device="cuda:1"', 'device="cuda", device_index=1'));
  assert.deepEqual(await lintCode(fixed, "GPU065"), []);
});

test("GPU065: no fix where the call names device_index already, or the value comes through a name or an f-string; other libraries' WhisperModel are not CTranslate2's", async () => {
  const [both] = await lintCode(SRC.replace('compute_type="float16"', "device_index=0"), "GPU065");
  assert.equal(both.fix, undefined);
  assert.match(
    both.message,
    /unsupported device cuda:1; pass device="cuda"; the call's device_index=0 then picks the GPU \(this string asked for GPU 1\)$/,
  );
  const [positional] = await lintCode(SRC.replace('device="cuda:1"', '"cuda:1"'), "GPU065");
  assert.equal(positional.fix, undefined);
  assert.match(positional.message, /pass device="cuda", device_index=1$/);
  const [named] = await lintCode(
    'from faster_whisper import WhisperModel\n\nDEV = "cuda:2"\nmodel = WhisperModel("small", device=DEV)\n',
    "GPU065",
  );
  assert.match(
    named.message,
    /rejects device=DEV \(cuda:2\) with ValueError: unsupported device cuda:2; pass device="cuda", device_index=2$/,
  );
  assert.equal(named.fix, undefined);
  const [fstring] = await lintCode(
    'import faster_whisper\n\ndef load(gpu):\n    return faster_whisper.WhisperModel("small", device=f"cuda:{gpu}")\n',
    "GPU065",
  );
  assert.match(fstring.message, /unsupported device cuda:\{…\}; pass device="cuda", device_index=N$/);
  assert.deepEqual(
    await lintCode(
      'from whisperx import load_model as WhisperModel\n\nm = WhisperModel("small", device="cuda:1")\n',
      "GPU065",
    ),
    [],
  );
});
