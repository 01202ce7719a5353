/**
 * The output side of a ShellSession's protocol (shell/command.ts): the shell's text goes to the one
 * command waiting for it, up to the marker line that ends that command and carries its status.
 */

import type { OutputBuffer } from "./output-buffer.js";

/** How a command's exchange ended: its marker (with its status), the shell's end, or neither in time. */
export type Outcome =
  | { kind: "marker"; code: number }
  | { kind: "exit"; code: number | null }
  | { kind: "stuck" };

/** The command waiting for output. */
export interface Waiter {
  /** Text that may be the start of the marker, held back until it is known not to be. */
  pending: string;
  buffer: OutputBuffer;
  settle(outcome: Outcome): void;
}

/** Routes the shell's output to the waiting command and finds the marker in it. */
export class MarkerFramer {
  private waiter: Waiter | undefined;

  constructor(private readonly needle: string) {}

  attach(waiter: Waiter): void {
    this.waiter = waiter;
  }

  detach(waiter: Waiter): void {
    if (this.waiter === waiter) this.waiter = undefined;
  }

  /** Ends the waiting command, if any, with `outcome` (the shell ended or the session closed). */
  settle(outcome: Outcome): void {
    this.waiter?.settle(outcome);
  }

  /** Text of the shell's output; with no command waiting, dropped. */
  feed(text: string): void {
    const w = this.waiter;
    if (!w || text.length === 0) return;
    w.pending += text;
    const idx = w.pending.indexOf(this.needle);
    if (idx >= 0) {
      this.atMarker(w, idx);
      return;
    }
    // Held back: as much as could be the start of the marker.
    const keep = this.needle.length;
    if (w.pending.length > keep) {
      w.buffer.push(w.pending.slice(0, w.pending.length - keep));
      w.pending = w.pending.slice(w.pending.length - keep);
    }
  }

  /** The marker starts at `idx` of the pending text: the output before it is the command's. */
  private atMarker(w: Waiter, idx: number): void {
    const end = w.pending.indexOf("\n", idx + this.needle.length);
    if (idx > 0) {
      w.buffer.push(w.pending.slice(0, idx));
      w.pending = w.pending.slice(idx);
    }
    if (end < 0) return; // the status has not arrived yet
    const code = Number.parseInt(w.pending.slice(this.needle.length, end - idx), 10);
    w.pending = "";
    w.settle({ kind: "marker", code: Number.isFinite(code) ? code : 1 });
  }
}
