import type { PythonRule } from "../rule";
import type { ModuleModel } from "../python/model";
import type { SyntaxNode } from "../python/parser";
import { stringValue } from "../python/parser";
import { nodeRange } from "../python/events";
import type { Fix } from "../types";
import { callArgs, calleePath } from "./shared/py";

/**
 * Constructors that take CTranslate2's device type and a separate `device_index` (dotted paths as
 * the model resolves them): faster-whisper's `WhisperModel(model_size_or_path, device="auto",
 * device_index=0, ...)` passes both on to `ctranslate2.models.Whisper` (SYSTRAN/faster-whisper
 * faster_whisper/transcribe.py at 0044854663: "device: Device to use for computation ("cpu",
 * "cuda", "auto")", "device_index: Device ID to use"), and CTranslate2's own Translator, Generator,
 * Encoder and speech models (device second, after the model path).
 */
const CT2_CONSTRUCTORS: ReadonlySet<string> = new Set([
  "faster_whisper.WhisperModel",
  "faster_whisper.transcribe.WhisperModel",
  "ctranslate2.Translator",
  "ctranslate2.Generator",
  "ctranslate2.Encoder",
  "ctranslate2.models.Whisper",
  "ctranslate2.models.Wav2Vec2",
  "ctranslate2.models.Wav2Vec2Bert",
]);

/** The device string a `device` argument holds, as written or through a name bound to a literal before `at`; `cuda:{…}` for an f-string. */
function deviceText(model: ModuleModel, value: SyntaxNode, at: number): string | null {
  let v: SyntaxNode | null = value;
  if (v.type === "identifier") v = model.valueOf(v.text, at);
  if (!v || v.type !== "string") return null;
  const literal = stringValue(v);
  if (literal !== null) return literal.trim();
  const content = v.namedChildren.find((c) => c?.type === "string_content")?.text ?? "";
  return /^cuda:$/i.test(content) && v.namedChildren.some((c) => c?.type === "interpolation") ? "cuda:{…}" : null;
}

/** `device="cuda:1"` → `device="cuda", device_index=1`, where the call names no device_index and the value is a literal index. */
function splitFix(arg: SyntaxNode, index: string, quote: string): Fix {
  return {
    title: `Use device=${quote}cuda${quote}, device_index=${index}`,
    safe: true,
    edits: [{ range: nodeRange(arg), newText: `device=${quote}cuda${quote}, device_index=${index}` }],
  };
}

/** What to pass instead: `device="cuda", device_index=N`, or only `device="cuda"` where the call already names a device_index (which then picks the GPU). */
function advice(index: string, given: SyntaxNode | undefined): string {
  const n = /^\d+$/.test(index) ? index : "N";
  return given
    ? `pass device="cuda"; the call's device_index=${given.text} then picks the GPU${n !== "N" ? ` (this string asked for GPU ${n})` : ""}`
    : `pass device="cuda", device_index=${n}`;
}

/** GPU065: a CTranslate2 model (faster-whisper's WhisperModel, Translator, Generator) given `device="cuda:N"`, which it rejects. */
export const rule: PythonRule = {
  meta: {
    code: "GPU065",
    name: "ctranslate2-device-with-index",
    severity: "error",
    fixable: true,
    fixSafety: "safe",
    // faster-whisper or CTranslate2, and a device string with an index.
    trigger: (t) => (t.has("faster_whisper") || t.has("ctranslate2")) && t.has("cuda:"),
    docs: {
      what: 'Finds faster-whisper\'s `WhisperModel(...)` and CTranslate2\'s `Translator`, `Generator`, `Encoder`, `models.Whisper`, `models.Wav2Vec2` and `models.Wav2Vec2Bert` given a device string with a GPU index: `device="cuda:1"`, `f"cuda:{gpu}"`, or a name bound to such a literal. These take the device type (`"cuda"`, `"cpu"` or `"auto"`) and the GPU in `device_index`; any other string stops the constructor with `ValueError: unsupported device cuda:1`.',
      follows:
        "The module's calls of those constructors, resolved through its imports (`from faster_whisper import WhisperModel`, `import ctranslate2`), with `device` as a keyword or as the second positional argument: a string literal, an f-string that starts with `cuda:`, or a name the module (or the calling function) binds to a literal before the call. Not followed: values built at run time otherwise (`device = args.device`), wrappers of other libraries that take `cuda:N` themselves (WhisperX, stable-ts: their own parameters), and classes of other modules.",
      why: 'CTranslate2 turns the device string into its device type with `str_to_device`, which accepts `cuda`, `cpu` and `auto` (either case) and otherwise throws `std::invalid_argument("unsupported device " + device)` (OpenNMT/CTranslate2 src/devices.cc at 81dff419ec), seen in Python as `ValueError: unsupported device cuda:1`. faster-whisper passes its `device` straight to `ctranslate2.models.Whisper`. A script moved from openai-whisper, whose `load_model(..., device="cuda:1")` takes a torch device, stops at the model\'s construction (SYSTRAN/faster-whisper#4; the maintainer pointed to `device="cuda", device_index=1`).',
      example:
        'from faster_whisper import WhisperModel\n\nmodel = WhisperModel("large-v2", device="cuda:1", compute_type="float16")  # GPU065\n',
      fix: 'from faster_whisper import WhisperModel\n\nmodel = WhisperModel("large-v2", device="cuda", device_index=1, compute_type="float16")\n',
      whenNotToCare:
        'Never: the constructor raises. The quick fix (safe) splits a literal `cuda:N` into `device="cuda", device_index=N` where the call names no `device_index`; a value given positionally, through a name or as an f-string is reported without a fix.',
      references: [
        'OpenNMT/CTranslate2 src/devices.cc `str_to_device` (at 81dff419ec): `cuda`/`CUDA`, `cpu`/`CPU`, `auto`/`AUTO`, else `throw std::invalid_argument("unsupported device " + device)`',
        'SYSTRAN/faster-whisper faster_whisper/transcribe.py `WhisperModel.__init__` (at 0044854663): `device: Device to use for computation ("cpu", "cuda", "auto")`, `device_index: Device ID to use`; it calls `ctranslate2.models.Whisper(model_path, device=self.device, device_index=device_index, ...)`',
        "SYSTRAN/faster-whisper#4 (2023-02-13): `WhisperModel(..., device=\"cuda:1\")` stopped with 'ValueError: unsupported device cuda:1'",
      ],
    },
  },
  check(ctx) {
    for (const call of ctx.model.nodesOfType("call")) {
      const path = calleePath(ctx.model, call);
      if (!path || !CT2_CONSTRUCTORS.has(path)) continue;
      const { positional, keywords } = callArgs(call);
      const value = keywords.get("device") ?? positional[1];
      if (!value) continue;
      const text = deviceText(ctx.model, value, call.startIndex);
      const m = text ? /^(?:cuda|cpu|auto):(\d+|\{…\})$/i.exec(text) : null;
      if (!text || !m) continue;
      const arg = value.parent?.type === "keyword_argument" ? value.parent : null;
      const quote = value.type === "string" ? (value.text.match(/["']/)?.[0] ?? '"') : '"';
      const literal = value.type === "string" && stringValue(value) !== null && /^\d+$/.test(m[1]);
      ctx.report({
        range: nodeRange(value),
        message: `${path.slice(path.lastIndexOf(".") + 1)} takes the device type only ("cuda", "cpu" or "auto") and the GPU in device_index: CTranslate2 rejects device=${value.type === "string" ? value.text : `${value.text} (${text})`} with ValueError: unsupported device ${text}; ${advice(m[1], keywords.get("device_index"))}`,
        fix: arg && literal && !keywords.has("device_index") ? splitFix(arg, m[1], quote) : undefined,
      });
    }
  },
};
