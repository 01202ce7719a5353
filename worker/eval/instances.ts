/**
 * The instances `agent-fix eval` runs: one JSON object per line with SWE-bench's fields, plus what
 * agent-fix needs to run them without SWE-bench's images (setup commands, a test command, an image).
 */
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { ConfigError } from "../../src/shared/errors.js";

/** SWE-bench's dataset stores the test lists as JSON text; a JSON array is taken as well. */
const testIds = z.union([
  z.array(z.string().min(1)),
  z.string().transform((text, ctx) => {
    try {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed) && parsed.every((id) => typeof id === "string")) return parsed as string[];
    } catch {
      // Reported below as the same issue as any other non-list.
    }
    ctx.addIssue({ code: "custom", message: "must be a list of test ids (or its JSON text)" });
    return z.NEVER;
  }),
]);

const instanceSchema = z.object({
  instance_id: z.string().regex(/^[A-Za-z0-9_.-]+$/, "letters, digits, '_', '.' and '-' only (names files)"),
  /** A local directory holding a git repository, or a git URL to clone. */
  repo: z.string().min(1),
  /** The commit the agent starts from (any revision git accepts; SWE-bench gives a sha). */
  base_commit: z.string().min(1),
  /** The issue: first line the title, the rest the body. */
  problem_statement: z.string().min(1),
  /** Applied after the agent's change, for grading only; the agent never sees it. */
  test_patch: z.string(),
  /** Tests that must fail before the fix and pass after it. */
  FAIL_TO_PASS: testIds,
  /** Tests that passed before and must still pass. */
  PASS_TO_PASS: testIds.default([]),
  /** Shell commands run once with network before the agent starts (dependencies); default: detected. */
  setup: z.union([z.string().transform((command) => [command]), z.array(z.string())]).optional(),
  /** Runs the given tests; `{tests}` becomes their shell-quoted ids. Default: the runner detected. */
  test_command: z
    .string()
    .refine((text) => text.includes("{tests}"), "must contain {tests}, where the test ids go")
    .optional(),
  /** The Docker image the sandboxes start from; default: the one its checkout calls for (eval.ts imageFor). */
  image: z.string().min(1).optional(),
});

export type EvalInstance = z.infer<typeof instanceSchema>;

/** Reads JSON Lines of instances; a bad line is a ConfigError naming the line and the field. */
export async function readInstances(path: string): Promise<EvalInstance[]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new ConfigError(`cannot read instances file ${path}: ${(error as Error).message}`, {
      code: "eval_instances_unreadable",
    });
  }
  const instances: EvalInstance[] = [];
  const seen = new Set<string>();
  for (const [index, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue;
    const where = `${path} line ${index + 1}`;
    const instance = parseLine(line, where);
    if (seen.has(instance.instance_id)) {
      throw invalid(`${where}: instance_id "${instance.instance_id}" appears twice`);
    }
    seen.add(instance.instance_id);
    instances.push(instance);
  }
  if (instances.length === 0) throw invalid(`${path} holds no instances`);
  return instances;
}

function parseLine(line: string, where: string): EvalInstance {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw invalid(`${where} is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = instanceSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw invalid(`${where}: ${issue.path.join(".") || "(line)"}: ${issue.message}`);
}

function invalid(message: string): ConfigError {
  return new ConfigError(message, {
    code: "eval_instances_invalid",
    hint:
      "Each line is one JSON object with instance_id, repo, base_commit, problem_statement, test_patch, " +
      "FAIL_TO_PASS and PASS_TO_PASS (SWE-bench's fields), optionally setup, test_command ('... {tests}') and image.",
  });
}
