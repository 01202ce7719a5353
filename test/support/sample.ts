/**
 * A matrix of slow cases (fault kinds by endpoint, per-bug replays, restarts) sampled per run, so the
 * whole suite stays under its time while every case still runs at some point:
 *
 *   - the cases are dealt into `slots` (case i in slot i mod slots), and a run takes one slot: the
 *     UTC hour since the epoch modulo the slots, so each slot comes round within `slots` hours of runs;
 *   - a run whose change touches the matrix's own code (`ownCode`: the test, its fixtures, the product
 *     code it is a matrix over) takes every case: `git diff HEAD~1` and the working tree, so a commit
 *     and the one before it, as a landing or a developer's edit is;
 *   - TEST_SAMPLE=all takes every case; TEST_SAMPLE=N takes slot N (to run again what a CI run ran:
 *     its output names the slot).
 *
 * A case left out is never silent: the test registers it as skipped, its title saying which slot ran
 * and how to run it (`sampled.skipped`), and `sampled.note` (printed here) says the same once per file.
 */
import { execFileSync } from "node:child_process";

/** One matrix's cases for this run. */
interface Sampled<T> {
  /** The cases to run. */
  run: T[];
  /** The cases left out, as titles to register as skipped (`it.skip(title)`): name, slot, how to run. */
  skipped: string[];
  /** Which slot ran and why, and how to run everything: for the file's output and the skipped titles. */
  note: string;
}

interface SampleOptions<T> {
  /** How many cases a slot holds at most. */
  perSlot: number;
  /** A case's name, for the note. */
  name: (c: T) => string;
  /** Paths (files or folder prefixes from the repository's root) whose change runs every case. */
  ownCode: readonly string[];
}

const ROOT = new URL("../../", import.meta.url);

/** Files changed in the last commit or not yet committed (none when git cannot say: not a checkout). */
function changedFiles(): string[] {
  try {
    return execFileSync("git", ["diff", "--name-only", "HEAD~1"], {
      cwd: ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    })
      .split("\n")
      .filter(Boolean);
  } catch {
    return [];
  }
}

/** The value of TEST_SAMPLE: "all", a slot number, or unset; anything else is refused with the fix. */
function requested(slots: number): "all" | number | undefined {
  const value = process.env.TEST_SAMPLE?.trim();
  if (!value) return undefined;
  if (value === "all") return "all";
  if (/^\d+$/.test(value)) return Number(value) % slots;
  throw new Error(
    `TEST_SAMPLE=${value} is neither "all" nor a slot number: set TEST_SAMPLE=all or TEST_SAMPLE=0`,
  );
}

export function sampleOf<T>(matrix: string, cases: readonly T[], options: SampleOptions<T>): Sampled<T> {
  if (options.perSlot < 1) throw new Error(`${matrix}: perSlot must be at least 1, got ${options.perSlot}`);
  const slots = Math.max(1, Math.ceil(cases.length / options.perSlot));
  const asked = requested(slots);
  const touched =
    asked === undefined ? changedFiles().filter((f) => options.ownCode.some((p) => f.startsWith(p))) : [];
  const hour = Math.floor(Date.now() / 3_600_000);
  const slot = typeof asked === "number" ? asked : hour % slots;
  const whole = asked === "all" || touched.length > 0 || slots === 1;
  const run = whole ? [...cases] : cases.filter((_, i) => i % slots === slot);
  const left = cases.filter((c) => !run.includes(c));
  const why =
    asked === "all"
      ? "TEST_SAMPLE=all"
      : touched.length > 0
        ? `its own code changed: ${touched.slice(0, 3).join(", ")}${touched.length > 3 ? ", ..." : ""}`
        : slots === 1
          ? "one slot"
          : typeof asked === "number"
            ? `slot ${slot} of ${slots} by TEST_SAMPLE=${process.env.TEST_SAMPLE}`
            : `slot ${slot} of ${slots}: UTC hour ${hour} mod ${slots}; TEST_SAMPLE=${slot} runs it again`;
  const note = whole
    ? `[sample] ${matrix}: all ${cases.length} cases (${why})`
    : `[sample] ${matrix}: ${run.length} of ${cases.length} cases, ${why}; TEST_SAMPLE=all runs every case. ` +
      `Ran: ${run.map(options.name).join(", ")}. Not run: ${left.map(options.name).join(", ")}`;
  console.log(note);
  const skipped = left.map(
    (c) => `${options.name(c)}: not in this run's sample (${why}; TEST_SAMPLE=all runs it)`,
  );
  return { run, skipped, note };
}
