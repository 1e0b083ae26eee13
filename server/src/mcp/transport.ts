/**
 * The MCP server's stdio transport, in place of the SDK's StdioServerTransport,
 * which ended the server with exit 0 on a message over 10 MiB, answered nothing to a malformed one,
 * joined every chunk to the whole buffer and searched it from the start (a message just under the
 * limit took 5-16 s), and read on while its answers piled up unread.
 *
 * Here: newline-delimited JSON-RPC; a line over {@link MAX_MESSAGE_BYTES} is skipped as it streams
 * past and answered with a JSON-RPC error (-32600, its id when one can be seen at either end);
 * text that is not JSON gets -32700, JSON that is not a JSON-RPC message -32600; reading stops
 * while {@link MAX_IN_FLIGHT} requests are unanswered or the answers wait in the pipe
 * (back-pressure: a client that stops reading cannot grow the server's memory).
 */
import type { Readable, Writable } from "node:stream";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** Largest message read, bytes (the SDK's limit, kept). */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
/** Most requests read and not yet answered; reading waits beyond it. */
export const MAX_IN_FLIGHT = 16;

type Id = string | number | null;

/** The id of an oversized message, if its first or last bytes show one at the top level. */
export function oversizedId(head: string, tail: string): Id {
  const lead = /^\s*\{\s*(?:"(?:jsonrpc|method)"\s*:\s*"[^"]*"\s*,\s*)*"id"\s*:\s*(-?\d{1,15}|"[^"\\]{0,200}")/.exec(
    head,
  );
  const trail = /[,{]\s*"id"\s*:\s*(-?\d{1,15}|"[^"\\]{0,200}")\s*\}\s*$/.exec(tail);
  const raw = lead?.[1] ?? trail?.[1];
  return raw === undefined ? null : (JSON.parse(raw) as string | number);
}

/** A JSON-RPC error response. */
const errorReply = (id: Id, code: number, message: string) => ({
  jsonrpc: "2.0" as const,
  id,
  error: { code, message },
});

/** Newline-delimited JSON-RPC over a readable and a writable stream; see the module comment. */
export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private parts: Buffer[] = [];
  private size = 0;
  /** Bytes of an oversized line skipped so far (-1: not skipping), its first and last bytes. */
  private skipped = -1;
  private head = "";
  private tail = "";
  private readonly pending = new Set<Id>();
  private closed = false;

  constructor(
    private readonly input: Readable = process.stdin,
    private readonly output: Writable = process.stdout,
  ) {}

  /** Starts reading. */
  start(): Promise<void> {
    this.input.on("data", this.onData);
    this.input.on("error", this.onInputError);
    this.input.once("end", () => void this.close());
    this.output.on("drain", this.resumeIfRoom);
    return Promise.resolve();
  }

  /** Writes one message; an answer to a request read frees its place. Resolves when written or buffered. */
  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (("result" in message || "error" in message) && "id" in message) this.pending.delete(message.id as Id);
    this.output.write(JSON.stringify(message) + "\n");
    this.resumeIfRoom();
    return Promise.resolve();
  }

  /** Stops reading and reports the close once. */
  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    this.input.off("data", this.onData);
    this.input.pause();
    this.parts = [];
    this.onclose?.();
    return Promise.resolve();
  }

  private readonly onInputError = (e: Error) => this.onerror?.(e);

  private readonly onData = (chunk: Buffer) => {
    for (let start = 0; start < chunk.length;) {
      const nl = chunk.indexOf(10, start);
      const piece = chunk.subarray(start, nl < 0 ? chunk.length : nl);
      this.take(piece);
      if (nl < 0) break;
      this.endLine();
      start = nl + 1;
    }
    this.pauseIfFull();
  };

  /** Adds part of a line: kept, or counted when the line is over the limit. */
  private take(piece: Buffer): void {
    if (this.skipped < 0 && this.size + piece.length <= MAX_MESSAGE_BYTES) {
      this.parts.push(piece);
      this.size += piece.length;
      return;
    }
    if (this.skipped < 0) {
      this.head = Buffer.concat([...this.parts, piece.subarray(0, 256)])
        .subarray(0, 256)
        .toString("utf8");
      this.skipped = this.size;
      this.parts = [];
      this.size = 0;
    }
    this.skipped += piece.length;
    this.tail = (this.tail + piece.subarray(-256).toString("latin1")).slice(-256);
  }

  /** A line is complete: hand it on, or answer why not. */
  private endLine(): void {
    if (this.skipped >= 0) {
      const id = oversizedId(this.head, this.tail);
      this.reply(
        errorReply(
          id,
          -32600,
          `message larger than 10 MiB (${this.skipped} bytes): not read; the limit is ${MAX_MESSAGE_BYTES} bytes`,
        ),
      );
      this.skipped = -1;
      this.head = this.tail = "";
      return;
    }
    const line = Buffer.concat(this.parts).toString("utf8").replace(/\r$/, "");
    this.parts = [];
    this.size = 0;
    if (line.trim() !== "") this.dispatch(line);
  }

  private dispatch(line: string): void {
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      this.reply(errorReply(null, -32700, "Parse error: not JSON"));
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(json);
    if (!parsed.success) {
      const id = (json as { id?: unknown } | null)?.id;
      this.reply(
        errorReply(
          typeof id === "string" || typeof id === "number" ? id : null,
          -32600,
          "Invalid Request: not a JSON-RPC 2.0 message",
        ),
      );
      return;
    }
    const msg = parsed.data;
    if ("method" in msg && "id" in msg) this.pending.add(msg.id);
    // A cancelled request gets no answer: it no longer holds a place.
    if ("method" in msg && msg.method === "notifications/cancelled")
      this.pending.delete((msg.params as { requestId?: Id } | undefined)?.requestId ?? null);
    this.onmessage?.(msg);
  }

  private reply(message: ReturnType<typeof errorReply>): void {
    void this.send(message as JSONRPCMessage);
  }

  private pauseIfFull(): void {
    if (this.pending.size >= MAX_IN_FLIGHT || this.output.writableNeedDrain) this.input.pause();
  }

  private readonly resumeIfRoom = () => {
    if (!this.closed && this.input.isPaused() && this.pending.size < MAX_IN_FLIGHT && !this.output.writableNeedDrain)
      this.input.resume();
  };
}
