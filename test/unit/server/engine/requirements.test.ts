import assert from "node:assert/strict";
import { test } from "node:test";
import { libraryPins, requirementsIn } from "../../../../server/src/engine/requirements";

test("requirementsIn reads requirements.txt, pyproject.toml (PEP 621 and Poetry) and environment.yml; conda's pytorch is torch, pytorch-lightning stays itself", () => {
  assert.deepEqual(requirementsIn("requirements-dev.txt", "torch==2.1\n# c\n"), ["torch==2.1", "# c", ""]);
  const pyproject =
    '[project]\nname = "x"\ndependencies = ["vllm>=0.10"]\n[tool.poetry.dependencies]\npython = "^3.9"\nlightning = "2.2.0"\n';
  assert.deepEqual(requirementsIn("pyproject.toml", pyproject), ["vllm>=0.10", "python>=3.9", "lightning==2.2.0"]);
  const env = "dependencies:\n  - pytorch=2.1.0\n  - pytorch-lightning=1.8.6\n  - pip:\n    - peft==0.3.0\n";
  assert.deepEqual(requirementsIn("environment.yml", env), ["torch==2.1.0", "pytorch-lightning==1.8.6", "peft==0.3.0"]);
  assert.deepEqual(libraryPins(requirementsIn("environment.yml", env)), {
    torch: "==2.1.0",
    "pytorch-lightning": "==1.8.6",
    peft: "==0.3.0",
  });
  assert.deepEqual(requirementsIn("pyproject.toml", "[project\nbroken"), [], "broken TOML gives nothing");
  assert.deepEqual(requirementsIn("setup.py", "x"), [], "a file it does not read");
});
