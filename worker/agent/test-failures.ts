/**
 * Test output a model can read: identical failures (same exception at the same place) are grouped, one
 * example shown whole and the others only named, so 48 near-identical tracebacks become one line and
 * one traceback. Reads unittest's and pytest's reports; other output is returned as it is.
 */

/** One failed or erroring test's report: its lines in the output and what identifies its failure. */
interface FailureBlock {
  start: number;
  end: number;
  kind: "error" | "failure";
  test: string;
  exception: string;
  place: string | null;
}

const UNITTEST_HEADER = /^(ERROR|FAIL): (\S+)/;
const PYTEST_SECTION = /^=+ (FAILURES|ERRORS) =+$/;
const PYTEST_HEADER = /^_{3,} (.+?) _{3,}$/;
const SEPARATOR = /^(=+|-+)( .*)?$/;

/** Failures grouped when some are identical; otherwise the output unchanged. */
export function groupFailures(output: string): string {
  const lines = output.split("\n");
  const blocks = [...unittestBlocks(lines), ...pytestBlocks(lines)].map((block) => identify(lines, block));
  const groups = new Map<string, FailureBlock[]>();
  for (const block of blocks) {
    const key = `${block.kind} ${block.exception} ${block.place ?? ""}`;
    groups.set(key, [...(groups.get(key) ?? []), block]);
  }
  if (![...groups.values()].some((group) => group.length > 1)) return output;
  const dropped = new Set<number>();
  const notes = new Map<number, string>();
  for (const group of groups.values()) {
    const [first, ...rest] = group;
    if (!first || rest.length === 0) continue;
    for (const block of rest) for (let i = block.start; i < block.end; i++) dropped.add(i);
    notes.set(first.end, `(${rest.length} more like the one above: ${names(rest, 10)})`);
  }
  const kept: string[] = [];
  lines.forEach((line, index) => {
    const note = notes.get(index);
    if (note) kept.push(note, "");
    if (!dropped.has(index)) kept.push(line);
  });
  return [summaryOf([...groups.values()]), "", ...kept].join("\n");
}

/** One line per group: "48 errors, all UnboundLocalError at _cachedmethod.py:89, e.g. test_decorator". */
function summaryOf(groups: FailureBlock[][]): string {
  const lines = groups.map((group) => {
    const first = group[0]!;
    const at = first.place ? ` at ${first.place}` : "";
    const count = `${group.length} ${first.kind}${group.length === 1 ? "" : "s"}`;
    return group.length === 1
      ? `- ${count}: ${first.exception}${at} in ${first.test}`
      : `- ${count}, all ${first.exception}${at}, e.g. ${first.test}`;
  });
  return ["Failures, identical ones grouped (the same exception at the same place):", ...lines].join("\n");
}

function names(blocks: FailureBlock[], max: number): string {
  const shown = blocks.slice(0, max).map((block) => block.test);
  return blocks.length > max ? `${shown.join(", ")} and ${blocks.length - max} more` : shown.join(", ");
}

type Located = Pick<FailureBlock, "start" | "end" | "kind" | "test">;

/** unittest: `====` then `ERROR: test_x (module.Class.test_x)`, up to the next `====` or `Ran N tests`. */
function unittestBlocks(lines: string[]): Located[] {
  const blocks: Located[] = [];
  for (let i = 1; i < lines.length; i++) {
    const header = UNITTEST_HEADER.exec(lines[i]!);
    if (!header || !/^=+$/.test(lines[i - 1]!)) continue;
    let end = i + 1;
    while (end < lines.length && !/^=+$/.test(lines[end]!) && !/^Ran \d+ tests?/.test(lines[end + 1] ?? ""))
      end++;
    blocks.push({ start: i - 1, end, kind: header[1] === "ERROR" ? "error" : "failure", test: header[2]! });
  }
  return blocks;
}

/** pytest: inside `=== FAILURES ===` or `=== ERRORS ===`, one block per `___ test_x ___` header. */
function pytestBlocks(lines: string[]): Located[] {
  const blocks: Located[] = [];
  let kind: FailureBlock["kind"] | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const section = PYTEST_SECTION.exec(line);
    if (section) kind = section[1] === "ERRORS" ? "error" : "failure";
    else if (/^=+ .* =+$/.test(line)) kind = null;
    const header = kind ? PYTEST_HEADER.exec(line) : null;
    if (!kind || !header) continue;
    let end = i + 1;
    while (end < lines.length && !PYTEST_HEADER.test(lines[end]!) && !/^=+ .* =+$/.test(lines[end]!)) end++;
    blocks.push({ start: i, end, kind, test: header[1]!.split(" ").at(-1)! });
  }
  return blocks;
}

/** The exception's type and the innermost place it was raised, read from the block's traceback. */
function identify(lines: string[], block: Located): FailureBlock {
  const body = lines
    .slice(block.start, block.end)
    .filter((line) => line.trim() !== "" && !SEPARATOR.test(line));
  let place: string | null = null;
  let exception = "";
  for (const line of body) {
    const pytestPlace = /^(\S+):(\d+): ([A-Za-z_][\w.]*)$/.exec(line);
    const framePlace = /^\s*File "([^"]+)", line (\d+)/.exec(line);
    if (pytestPlace) {
      place = `${basename(pytestPlace[1]!)}:${pytestPlace[2]}`;
      exception = pytestPlace[3]!;
    } else if (framePlace) {
      place = `${basename(framePlace[1]!)}:${framePlace[2]}`;
    }
    const raised = /^(?:E\s+)?([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Failure))\b/.exec(
      line,
    );
    if (raised && !pytestPlace) exception = raised[1]!;
  }
  return { ...block, exception: exception || "the same output", place };
}

function basename(path: string): string {
  return path.split("/").at(-1) ?? path;
}
