/** The rule registry: every rule, in code order. A rule file is found by its code (`GPU001-*.ts`). */
import type { Rule } from "../rule";
import { rule as GPU001 } from "./GPU001-env-after-cuda-init";
import { rule as GPU002 } from "./GPU002-env-after-framework-import";
import { rule as GPU003 } from "./GPU003-invalid-visible-devices";
import { rule as GPU004 } from "./GPU004-ordinal-out-of-range";
import { rule as GPU005 } from "./GPU005-visible-id-used-as-ordinal";
import { rule as GPU006 } from "./GPU006-device-order-not-pci";
import { rule as GPU007 } from "./GPU007-misspelled-cuda-variable";
import { rule as GPU008 } from "./GPU008-set-device-discouraged";
import { rule as GPU009 } from "./GPU009-reimport-does-not-reset-cuda";
import { rule as GPU010 } from "./GPU010-dataparallel-pitfalls";
import { rule as GPU011 } from "./GPU011-ddp-device-setup";
import { rule as GPU012 } from "./GPU012-tf-config-after-init";
import { rule as GPU013 } from "./GPU013-tf-deprecated-gpu-api";
import { rule as GPU014 } from "./GPU014-notebook-shell-export";
import { rule as GPU015 } from "./GPU015-putenv-desync";
import { rule as GPU016 } from "./GPU016-unknown-gpu-variable";
import { rule as GPU017 } from "./GPU017-id-not-on-this-machine";
import { rule as GPU018 } from "./GPU018-k8s-gpu-resources";
import { rule as GPU019 } from "./GPU019-visible-devices-baked-into-container";
import { rule as GPU020 } from "./GPU020-compose-gpu-reservation";
import { rule as GPU021 } from "./GPU021-job-script-sets-visible-devices";
import { rule as GPU022 } from "./GPU022-launcher-tasks-gpus-mismatch";
import { rule as GPU023 } from "./GPU023-sbatch-directive-after-command";
import { rule as GPU024 } from "./GPU024-gpus-per-node-used-as-count";
import { rule as GPU025 } from "./GPU025-job-gpu-id-out-of-range";
import { rule as GPU026 } from "./GPU026-alloc-backend-after-import";
import { rule as GPU027 } from "./GPU027-jax-platforms-gpu";
import { rule as GPU028 } from "./GPU028-xla-mem-fraction-renamed";
import { rule as GPU029 } from "./GPU029-jax-platforms-after-backend";
import { rule as GPU030 } from "./GPU030-keras-backend-after-import";
import { rule as GPU031 } from "./GPU031-rocm-visible-devices-conflict";
import { rule as GPU032 } from "./GPU032-mps-xpu-variable-ignored";
import { rule as GPU033 } from "./GPU033-ray-task-sets-visible-devices";
import { rule as GPU034 } from "./GPU034-ray-task-without-gpus-uses-cuda";
import { rule as GPU035 } from "./GPU035-vllm-tensor-parallel-exceeds-visible";
import { rule as GPU036 } from "./GPU036-local-rank-unset-under-srun";
import { rule as GPU037 } from "./GPU037-ordinal-beyond-job-gpus";
import { rule as GPU038 } from "./GPU038-visible-devices-from-slurm-rank";
import { rule as GPU039 } from "./GPU039-global-rank-as-device";
import { rule as GPU040 } from "./GPU040-launch-processes-exceed-gpus";
import { rule as GPU041 } from "./GPU041-jax-platforms-after-import";
import { rule as GPU042 } from "./GPU042-launcher-option-after-script";
import { rule as GPU043 } from "./GPU043-container-gets-host-visible-devices";
import { rule as GPU044 } from "./GPU044-launch-local-rank-option-spelling";
import { rule as GPU045 } from "./GPU045-shell-visible-id-not-on-this-machine";
import { rule as GPU046 } from "./GPU046-ultralytics-device-after-cuda-init";
import { rule as GPU047 } from "./GPU047-visible-devices-after-child-start";
import { rule as GPU048 } from "./GPU048-notebook-launcher-after-cuda-init";
import { rule as GPU049 } from "./GPU049-visible-devices-per-thread";
import { rule as GPU050 } from "./GPU050-notebook-cell-ran-after-init";
import { rule as GPU051 } from "./GPU051-visible-devices-read-without-default";
import { rule as GPU052 } from "./GPU052-launch-device-option-not-visible";
import { rule as GPU053 } from "./GPU053-ultralytics-device-narrows-process";
import { rule as GPU054 } from "./GPU054-startup-variable-not-exported";
import { rule as GPU055 } from "./GPU055-shell-misspelled-variable";
import { rule as GPU056 } from "./GPU056-vllm-device-index-ignored";
import { rule as GPU057 } from "./GPU057-visible-devices-from-counted-ordinals";
import { rule as GPU058 } from "./GPU058-xla-mem-fraction-as-percent";
import { rule as GPU059 } from "./GPU059-visible-devices-from-missing-argument";
import { rule as GPU060 } from "./GPU060-job-starts-cuda-without-gpus";
import { rule as GPU061 } from "./GPU061-ray-runtime-env-copies-visible-devices";
import { rule as GPU062 } from "./GPU062-hydra-env-set-after-import";
import { rule as GPU063 } from "./GPU063-visible-devices-overwritten-under-slurm";
import { rule as GPU064 } from "./GPU064-launch-visible-devices-overwritten";
import { rule as GPU065 } from "./GPU065-ctranslate2-device-with-index";
import { rule as GPU066 } from "./GPU066-cuda-image-without-gpu-request";
import { rule as GPU067 } from "./GPU067-privileged-container-sees-all-gpus";
import { rule as GPU068 } from "./GPU068-notebook-launcher-without-process-count";
import { rule as GPU069 } from "./GPU069-rank-modulo-beside-local-rank";
import { rule as GPU070 } from "./GPU070-tf-input-pipeline-holds-gpus";
import { rule as GPU071 } from "./GPU071-loop-hard-coded-visible-devices";
import { rule as GPU072 } from "./GPU072-docker-gpus-device-list-split";
import { rule as GPU073 } from "./GPU073-load-without-map-location";
import { rule as GPU074 } from "./GPU074-ranks-never-select-device";
import { rule as GPU075 } from "./GPU075-child-process-loses-current-device";
import { rule as GPU076 } from "./GPU076-settings-env-file-not-exported";

export const RULES: readonly Rule[] = [
  GPU001,
  GPU002,
  GPU003,
  GPU004,
  GPU005,
  GPU006,
  GPU007,
  GPU008,
  GPU009,
  GPU010,
  GPU011,
  GPU012,
  GPU013,
  GPU014,
  GPU015,
  GPU016,
  GPU017,
  GPU018,
  GPU019,
  GPU020,
  GPU021,
  GPU022,
  GPU023,
  GPU024,
  GPU025,
  GPU026,
  GPU027,
  GPU028,
  GPU029,
  GPU030,
  GPU031,
  GPU032,
  GPU033,
  GPU034,
  GPU035,
  GPU036,
  GPU037,
  GPU038,
  GPU039,
  GPU040,
  GPU041,
  GPU042,
  GPU043,
  GPU044,
  GPU045,
  GPU046,
  GPU047,
  GPU048,
  GPU049,
  GPU050,
  GPU051,
  GPU052,
  GPU053,
  GPU054,
  GPU055,
  GPU056,
  GPU057,
  GPU058,
  GPU059,
  GPU060,
  GPU061,
  GPU062,
  GPU063,
  GPU064,
  GPU065,
  GPU066,
  GPU067,
  GPU068,
  GPU069,
  GPU070,
  GPU071,
  GPU072,
  GPU073,
  GPU074,
  GPU075,
  GPU076,
];

/** The rule with this code, or undefined. */
export function ruleByCode(code: string): Rule | undefined {
  return (byCode ??= codeIndex()).get(code);
}
/** {@link RULES} by code (the first with a code, as a search of the list finds it): made on first use. */
let byCode: Map<string, Rule> | undefined;
function codeIndex(): Map<string, Rule> {
  const m = new Map<string, Rule>();
  for (const r of RULES) if (!m.has(r.meta.code)) m.set(r.meta.code, r);
  return m;
}
