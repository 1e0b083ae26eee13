/**
 * Cancel's own-jobs check for a job id not in the view (issue 46 item 9): the API's cancelJobNow
 * and the command with a bare id look the job up with scontrol first; another user's job, or one
 * Slurm cannot place, is refused and scancel never runs.
 */
import { recorded } from "../../support/client-fakeVscode";
import assert from "node:assert/strict";
import { after, test } from "node:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { SlurmFeatures } from "../../../../client/src/slurm/features";
import { currentUser } from "../../../../client/src/slurm/cli";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gp-slurm-cancel-"));
const log = path.join(dir, "scancel.log");
const savedPath = process.env.PATH;
// scontrol: job 4242 is another user's, 4343 the current user's, anything else unknown.
fs.writeFileSync(
  path.join(dir, "scontrol"),
  `#!/bin/sh
case "$3" in
  4242) printf 'JobId=4242 JobName=x\\n   UserId=someoneelse(4242) GroupId=g(1)\\n   JobState=RUNNING Reason=None\\n' ;;
  4343) printf 'JobId=4343 JobName=y\\n   UserId=${currentUser()}(0) GroupId=g(1)\\n   JobState=RUNNING Reason=None\\n' ;;
  *) echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1 ;;
esac
`,
  { mode: 0o755 },
);
fs.writeFileSync(path.join(dir, "scancel"), `#!/bin/sh\necho "$@" >> '${log}'\n`, { mode: 0o755 });
process.env.PATH = `${dir}:${savedPath}`;
after(() => {
  process.env.PATH = savedPath;
  fs.rmSync(dir, { recursive: true, force: true });
});

const scancels = () => (fs.existsSync(log) ? fs.readFileSync(log, "utf8").trim().split("\n") : []);

test("a job id not in the view: another user's job and an unknown one are refused; the user's own is cancelled", async () => {
  const f = new SlurmFeatures({ globalStorageUri: undefined } as never);
  try {
    recorded.messages.length = 0;
    assert.equal(await f.cancelJobNow("4242"), false);
    assert.ok(
      recorded.messages.some((m) => m === "Job 4242 belongs to someoneelse; GPU Pilot cancels only your own jobs."),
      recorded.messages.join("\n"),
    );
    assert.equal(await f.cancelJobNow("9999"), false);
    assert.ok(
      recorded.messages.some((m) =>
        /cannot tell whose job 9999 is: scontrol show job 9999: slurm_load_jobs error: Invalid job id specified/.test(
          m,
        ),
      ),
      recorded.messages.join("\n"),
    );
    assert.deepEqual(scancels(), []);
    assert.equal(await f.cancelJobNow("4343"), true);
    assert.deepEqual(scancels(), ["4343"]);
  } finally {
    f.dispose();
  }
});
