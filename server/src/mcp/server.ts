/**
 * `gpu-pilot mcp`: the GPU Pilot agent tools as a Model Context Protocol server on stdio (the
 * official `@modelcontextprotocol/sdk`), for agents outside VS Code. The same tools,
 * schemas and texts as the VS Code language-model tools (common/src/agents/core.ts); it reads
 * nvidia-smi itself (common/src/gpu/nvidiaSmi.ts, procinfo.ts; amd-smi or rocm-smi when nvidia-smi
 * is not installed, amdSmi.ts), plans runs with the run command's planner (common/src/run/plan.ts)
 * and lints with the same engine and configuration as `gpu-pilot check` (`[tool.gpu-pilot]`, `# noqa`).
 *
 *   gpu-pilot mcp [--allow-run] [--nvidia-smi PATH] [--python PATH] [--root DIR] [--claims-dir DIR | --no-claims] [--claim-minutes N]
 *
 * GPU claims (docs/claims.md, common/src/gpu/claims.ts): gpu-pilot_pickGpus skips GPUs others
 * claimed and claims what it picks (purpose `mcp`, owner this server's pid) for `--claim-minutes`
 * (default 15; not renewed), waiting up to the input's `waitSeconds`; gpu-pilot_runOnGpus refuses
 * GPUs claimed by others and claims its GPUs (purpose `run`) until the run ends. The server
 * releases its claims when it exits.
 *
 * gpu-pilot_runOnGpus is listed always but refuses (an error result naming `--allow-run`) unless
 * the server was started with `--allow-run`. A bad input is an error result (`isError: true`) with
 * a sentence saying what is wrong; the server never exits for one.
 */
import { realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, relative, resolve, sep } from "node:path";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import {
  checkCheckInput,
  checkListInput,
  checkPickInput,
  checkRunInput,
  DESCRIPTIONS,
  formatFindings,
  formatGpuList,
  formatPick,
  formatRunResult,
  INPUT_SCHEMAS,
  notRunnable,
  resolveRunGpus,
  TOOL,
  type ToolName,
} from "../../../common/src/agents/core";
import { DEFAULT_PICK_POLICY } from "../../../common/src/gpu/policy";
import { othersClaims, pickAndClaim } from "../../../common/src/gpu/claimPick";
import { entryUuids } from "../../../common/src/gpu/claimKeeper";
import {
  ClaimLedger,
  currentOwner,
  DEFAULT_CLAIM_TTL_MS,
  describeClaim,
  ledgerDir,
} from "../../../common/src/gpu/claims";
import { queryInventory, type Inventory, type ProcessDetails } from "../../../common/src/gpu/nvidiaSmi";
import { queryAmdInventory } from "../../../common/src/gpu/amdSmi";
import { detectVendor } from "../../../common/src/gpu/vendor";
import { findProgram } from "../../../common/src/run/which";
import { describeProcesses } from "../../../common/src/gpu/procinfo";
import type { McpCheckFile } from "./engine";
import { runToEnd, stopAllRuns } from "./run";
import { LineTransport } from "./transport";

/** Options of {@link startMcpServer} (the `gpu-pilot mcp` flags). */
export interface McpOptions {
  /** `--allow-run`: gpu-pilot_runOnGpus may run files. Default false. */
  allowRun: boolean;
  /** `--nvidia-smi PATH` (default `nvidia-smi`, looked up on PATH). */
  nvidiaSmi: string;
  /** `--python PATH`: the interpreter runs use (default `python3` on PATH). */
  python: string;
  /** `--root DIR`: relative paths are resolved against it (default: the working directory). */
  root: string;
  /** One nvidia-smi call's limit, ms (default 5000, as gpuPilot.nvidiaSmiTimeoutMs). */
  nvidiaSmiTimeoutMs: number;
  /** `--claims-dir DIR` ({@link parseMcpArgs}' default: $GPU_PILOT_CLAIMS_DIR, else /tmp/gpu-pilot-claims); undefined (`--no-claims`): no claims. */
  claimsDir?: string;
  /** `--claim-minutes N`: how long a pick's claims last, ms (default 15 min). */
  claimTtlMs?: number;
}

export const MCP_USAGE = `usage: gpu-pilot mcp [--allow-run] [--nvidia-smi PATH] [--python PATH] [--root DIR] [--claims-dir DIR | --no-claims] [--claim-minutes N]
  Serves GPU Pilot's agent tools over MCP on stdin/stdout: gpu-pilot_listGpus, gpu-pilot_pickGpus,
  gpu-pilot_checkFile, gpu-pilot_runOnGpus (which runs nothing unless --allow-run is given).
  --allow-run         let gpu-pilot_runOnGpus run Python files on GPUs
  --nvidia-smi PATH   the nvidia-smi to read (default: nvidia-smi on PATH)
  --python PATH       the Python interpreter for runs (default: python3 on PATH)
  --root DIR          resolve relative paths against DIR (default: the working directory)
  --claims-dir DIR    the GPU claims ledger (default: $GPU_PILOT_CLAIMS_DIR, else /tmp/gpu-pilot-claims)
  --no-claims         neither read nor write GPU claims
  --claim-minutes N   how long GPUs picked by gpu-pilot_pickGpus stay claimed (default 15)`;

/** Parses the flags after `mcp`. @throws Error naming the bad flag (the caller prints {@link MCP_USAGE} after it). */
export function parseMcpArgs(argv: readonly string[], cwd = process.cwd()): McpOptions {
  const o: McpOptions = {
    allowRun: false,
    nvidiaSmi: "nvidia-smi",
    python: "python3",
    root: cwd,
    nvidiaSmiTimeoutMs: 5000,
    claimsDir: ledgerDir(),
    claimTtlMs: DEFAULT_CLAIM_TTL_MS,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const eq = a.indexOf("=");
    const name = a.startsWith("--") && eq > 0 ? a.slice(0, eq) : a;
    const value = () => {
      const v = eq > 0 ? a.slice(eq + 1) : argv[++i];
      if (v === undefined || v === "" || (eq < 0 && v.startsWith("-"))) throw new Error(`${name} needs a value`);
      return v;
    };
    if (name === "--allow-run" && eq < 0) o.allowRun = true;
    else if (name === "--nvidia-smi") o.nvidiaSmi = value();
    else if (name === "--python") o.python = value();
    else if (name === "--root") o.root = resolve(cwd, value());
    else if (name === "--claims-dir") o.claimsDir = resolve(cwd, value());
    else if (name === "--no-claims" && eq < 0) delete o.claimsDir;
    else if (name === "--claim-minutes") {
      const n = Number(value());
      if (!Number.isFinite(n) || n < 1 || n > 24 * 60)
        throw new Error("--claim-minutes needs a number of minutes from 1 to 1440");
      o.claimTtlMs = n * 60_000;
    } else throw new Error(`unknown option "${a}"`);
  }
  return o;
}

const text = (t: string, isError = false): CallToolResult => ({
  content: [{ type: "text", text: t }],
  ...(isError ? { isError: true } : {}),
});

/** The tools' behaviour, apart from the transport (tests call it directly too). */
export class McpTools {
  /** The claims ledger (undefined: `--no-claims`, or the folder is unusable: {@link claimsProblem}). */
  readonly ledger: ClaimLedger | undefined;
  /** Why claims are off although asked for, in words. */
  readonly claimsProblem: string | undefined;

  /**
   * @param checkFile lints a file for gpu-pilot_checkFile: mcp/engine.ts's mcpCheckFile, passed in
   * by the caller so that this module imports no engine code (mcp/engine.ts says why).
   */
  constructor(
    private readonly options: McpOptions,
    private readonly checkFileWith: McpCheckFile,
  ) {
    const ledger = options.claimsDir
      ? new ClaimLedger({
          dir: options.claimsDir,
          owner: currentOwner(`mcp-${process.pid}`),
          ttlMs: options.claimTtlMs ?? DEFAULT_CLAIM_TTL_MS,
        })
      : undefined;
    this.claimsProblem = ledger?.prepare();
    this.ledger = this.claimsProblem ? undefined : ledger;
  }

  /** Lists the tools (name, description, input schema). */
  list(): Array<{ name: ToolName; description: string; inputSchema: { type: "object"; [k: string]: unknown } }> {
    return (Object.values(TOOL) as ToolName[]).map((name) => ({
      name,
      description:
        name === TOOL.runOnGpus && !this.options.allowRun
          ? `${DESCRIPTIONS[name]} This server was started without --allow-run, so it refuses to run anything.`
          : DESCRIPTIONS[name],
      inputSchema: INPUT_SCHEMAS[name] as { type: "object" },
    }));
  }

  /** Calls one tool; bad input and failures are error results, never exceptions. */
  async call(name: string, input: unknown): Promise<CallToolResult> {
    try {
      switch (name) {
        case TOOL.listGpus:
          return await this.listGpus(input);
        case TOOL.pickGpus:
          return await this.pickGpus(input);
        case TOOL.checkFile:
          return await this.checkFile(input);
        case TOOL.runOnGpus:
          return await this.runOnGpus(input);
        default:
          return text(`Unknown tool "${name}". Tools: ${Object.values(TOOL).join(", ")}.`, true);
      }
    } catch (e) {
      return text(`${name} failed: ${e instanceof Error ? e.message : String(e)}`, true);
    }
  }

  /** The inventory query under way: calls that come meanwhile share it (one nvidia-smi at a time). */
  private inventoryQuery?: Promise<{ inv: Inventory; details: ProcessDetails[] } | { error: string }>;

  /**
   * The GPUs now: from nvidia-smi; when it is not installed (by its bare name) and amd-smi or
   * rocm-smi is on PATH, from that AMD tool, as the GPU view does (the inventory's `vendor` is then `amd`).
   * Calls made while a query is under way share it.
   */
  private inventory(): Promise<{ inv: Inventory; details: ProcessDetails[] } | { error: string }> {
    this.inventoryQuery ??= this.queryInventory().finally(() => {
      this.inventoryQuery = undefined;
    });
    return this.inventoryQuery;
  }

  private async queryInventory(): Promise<{ inv: Inventory; details: ProcessDetails[] } | { error: string }> {
    const { nvidiaSmi, nvidiaSmiTimeoutMs: timeoutMs } = this.options;
    let r = await queryInventory({ path: nvidiaSmi, timeoutMs });
    let tool = `nvidia-smi (${nvidiaSmi})`;
    const amd =
      r.kind === "missing" && !/[\\/]/.test(nvidiaSmi)
        ? detectVendor((n) => findProgram(n, { pathEnv: process.env.PATH })).amdTool
        : undefined;
    if (amd) {
      r = await queryAmdInventory(amd, { timeoutMs });
      tool = `${amd.name} (${amd.path})`;
    }
    if (r.kind !== "ok") return { error: `${tool} could not be read: ${r.message}` };
    return { inv: r.inventory, details: await describeProcesses(r.inventory.apps, undefined) };
  }

  private async listGpus(input: unknown): Promise<CallToolResult> {
    const c = checkListInput(input);
    if ("error" in c) return text(c.error, true);
    const q = await this.inventory();
    if ("error" in q) return text(q.error, true);
    return text(formatGpuList(q.inv, q.details, DEFAULT_PICK_POLICY, othersClaims(this.ledger)));
  }

  private async pickGpus(input: unknown): Promise<CallToolResult> {
    const c = checkPickInput(input, DEFAULT_PICK_POLICY);
    if ("error" in c) return text(c.error, true);
    let inv: Inventory | undefined;
    const read = async () => {
      const q = await this.inventory();
      if ("error" in q) throw new Error(q.error);
      inv = q.inv;
      return { gpus: q.inv.gpus, apps: q.inv.apps, details: q.details };
    };
    const r = await pickAndClaim(this.ledger, read, c.value, "mcp", `gpu-pilot mcp ${process.pid}`, {
      waitMs: c.value.waitSeconds * 1000,
    });
    const held =
      r.claims.length > 0
        ? `this MCP server for ${Math.round((this.options.claimTtlMs ?? DEFAULT_CLAIM_TTL_MS) / 60_000)} minutes (a run on them with gpu-pilot_runOnGpus keeps them while it runs)`
        : undefined;
    const outcome = formatPick(r.result, inv as Inventory, c.value, "index", {
      ...(held ? { held } : {}),
      ...(r.note ? { note: r.note } : {}),
      ...(this.claimsProblem ? { note: `off: ${this.claimsProblem}` } : {}),
    });
    return text(outcome.text, outcome.ids.length === 0);
  }

  /**
   * `path` (relative ones against --root) if it lies inside the root after links are followed:
   * `file` as asked, `real` the path to read. Else an error sentence naming the root.
   */
  private confine(tool: string, path: string): { file: string; real: string } | { error: string } {
    const file = isAbsolute(path) ? path : resolve(this.options.root, path);
    const real = realOf(file);
    const rel = relative(realOf(this.options.root), real);
    if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
      return {
        error: `${tool}: ${file} is outside the root ${this.options.root} (--root): this server reads and runs only files below it`,
      };
    }
    return { file, real };
  }

  private async checkFile(input: unknown): Promise<CallToolResult> {
    const c = checkCheckInput(input);
    if ("error" in c) return text(c.error, true);
    const where = this.confine(TOOL.checkFile, c.value.path);
    if ("error" in where) return text(where.error, true);
    const file = where.file;
    const q = await this.inventory();
    // Without nvidia-smi the machine-aware rule (GPU017) stays silent, as in the editor.
    const machine =
      "error" in q
        ? { gpuCount: null, uuids: [] }
        : { gpuCount: q.inv.gpus.length, uuids: q.inv.gpus.map((g) => g.uuid) };
    const r = await this.checkFileWith(where.real, machine);
    if (!r.ok) return text(`${TOOL.checkFile}: ${r.error}`, true);
    return text(formatFindings(file, r.findings));
  }

  /**
   * Claims a run's GPUs (purpose `run`) and renews them every 5 min until `release()`; a GPU claimed
   * by someone else refuses the run (an error naming the holder). Without a ledger: nothing to hold.
   */
  private holdForRun(ids: readonly string[], inv: Inventory, note: string): { release(): void } | { error: string } {
    const ledger = this.ledger;
    if (!ledger) return { release: () => undefined };
    const got: string[] = [];
    for (const uuid of entryUuids(ids, inv)) {
      const r = ledger.claim(uuid, "run", note);
      if (!r.ok) {
        for (const u of got) ledger.release(u);
        const gpu = inv.gpus.find((g) => g.uuid.toLowerCase() === uuid)?.index ?? uuid;
        return {
          error: `GPU ${gpu} is claimed by ${r.heldBy ? describeClaim(r.heldBy) : `someone else (${r.reason})`}: pick other GPUs with gpu-pilot_pickGpus (waitSeconds waits for free ones).`,
        };
      }
      got.push(uuid);
    }
    const timer = setInterval(() => {
      for (const u of got) ledger.claim(u, "run", note);
    }, 5 * 60_000);
    timer.unref();
    return {
      release: () => {
        clearInterval(timer);
        for (const u of got) ledger.release(u);
      },
    };
  }

  private async runOnGpus(input: unknown): Promise<CallToolResult> {
    if (!this.options.allowRun)
      return text(
        `${TOOL.runOnGpus} is off: this MCP server was started without --allow-run, so it runs nothing. Restart it as "gpu-pilot mcp --allow-run" to let it run files (each run executes the file's code).`,
        true,
      );
    const c = checkRunInput(input);
    if ("error" in c) return text(c.error, true);
    const where = this.confine(TOOL.runOnGpus, c.value.path);
    if ("error" in where) return text(where.error, true);
    const refused = notRunnable(where.file) ?? notRunnable(where.real);
    if (refused) return text(refused, true);
    const q = await this.inventory();
    if ("error" in q) return text(q.error, true);
    const ids = resolveRunGpus(c.value.gpus, q.inv);
    if ("error" in ids) return text(ids.error, true);
    const file = where.file;
    const hold = this.holdForRun(ids.value, q.inv, basename(file));
    if ("error" in hold) return text(`${TOOL.runOnGpus}: ${hold.error}`, true);
    let r: Awaited<ReturnType<typeof runToEnd>>;
    try {
      r = await runToEnd({
        ...c.value,
        file: where.real,
        deviceIds: ids.value,
        interpreter: this.options.python,
        cwd: this.options.root,
        inventory: q.inv,
      });
    } finally {
      hold.release();
    }
    if ("error" in r) return text(`${TOOL.runOnGpus}: ${r.error}`, true);
    return text(
      formatRunResult(
        {
          file,
          launcher: c.value.launcher,
          visibleDevices: r.spec.visibleDevices,
          vendor: r.vendor,
          command: [r.spec.command, ...r.spec.args],
        },
        r.end,
        r.output,
        c.value.timeoutSeconds,
      ),
      r.end.exitCode !== 0,
    );
  }
}

/** `path`'s real path (links followed); for a missing file, its folder's real path joined with its name. */
function realOf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    try {
      return resolve(realpathSync(dirname(path)), basename(path));
    } catch {
      return resolve(path);
    }
  }
}

/**
 * Serves the tools on stdin/stdout until stdin closes or a SIGTERM, SIGINT or SIGHUP comes; then
 * stops the runs still going (their process groups: SIGTERM, SIGKILL 2 s later) and releases the
 * server's GPU claims.
 * @param checkFile how gpu-pilot_checkFile lints (mcp/engine.ts's mcpCheckFile).
 * @returns when the transport has closed.
 */
export async function startMcpServer(options: McpOptions, version: string, checkFile: McpCheckFile): Promise<void> {
  const tools = new McpTools(options, checkFile);
  const release = () => tools.ledger?.releaseAll();
  process.once("exit", release);
  const server = new Server({ name: "gpu-pilot", version }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.list() }));
  server.setRequestHandler(CallToolRequestSchema, (req) => tools.call(req.params.name, req.params.arguments));
  const transport = new LineTransport();
  const closed = new Promise<void>((done) => {
    transport.onclose = () => done();
  });
  for (const [signal, n] of [
    ["SIGTERM", 15],
    ["SIGINT", 2],
    ["SIGHUP", 1],
  ] as const) {
    process.once(signal, () => void stopAllRuns().finally(() => process.exit(128 + n)));
  }
  await server.connect(transport);
  await closed;
  await stopAllRuns();
  await server.close();
  release();
}
