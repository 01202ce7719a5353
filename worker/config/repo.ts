/**
 * Schema of a repository's `.github/agent-fix.yml`: how to set up and test the repository, which
 * model and limits to use, and what the agent may not touch. A bad file ends the run before any work
 * with a comment naming the field, what is wrong and an example of the right form
 * (`parseRepoConfig`). config/agent-fix.schema.json is generated from this schema for editors.
 */
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { ConfigError } from "../../src/shared/errors.js";
import { toolBundles } from "./aci.js";
import { CI_ROUNDS_CEILING } from "./ci.js";

export const REPO_CONFIG_PATH = ".github/agent-fix.yml";

/**
 * Test-file patterns used when the file names none: the common layouts of each ecosystem, in a
 * monorepo's packages too (`packages/x/test/`, a crate's `tests/`, a Maven module's `src/test/`).
 */
export const DEFAULT_TEST_PATHS = [
  "**/test/**",
  "**/tests/**",
  "**/__tests__/**",
  "**/*.test.*",
  "**/*.spec.*",
  "**/test_*.py",
  "**/*_test.py",
  // Django's app/tests.py, a script's test.py beside it; conftest.py holds fixtures the tests run with.
  "**/tests.py",
  "**/test.py",
  "**/conftest.py",
  "**/*_test.go",
  "**/*_spec.rb",
  "spec/**",
];

const seconds = (max: number) => z.number().int().positive().max(max);

export const repoConfigSchema = z
  .strictObject({
    setup: z
      .strictObject({
        commands: z
          .array(z.string().min(1))
          .default([])
          .describe("Shell commands run once in the sandbox before the tests, in order."),
        timeoutSeconds: seconds(3600)
          .default(600)
          .describe("Time allowed for all setup commands together; at most the operator's ceiling."),
        network: z
          .boolean()
          .default(true)
          .describe("Network access during setup (to install dependencies); the agent never has it."),
        user: z
          .enum(["agent", "root"])
          .default("agent")
          .describe(
            "Who runs setup: root for system packages (apt-get install), kept for the agent, who never is root.",
          ),
      })
      .default({ commands: [], timeoutSeconds: 600, network: true, user: "agent" })
      .describe("Preparing the repository in the sandbox."),
    sandbox: z
      .strictObject({
        image: z
          .string()
          .min(1)
          .optional()
          .describe(
            "Docker image to run in, one the operator allows; else .devcontainer/devcontainer.json's, else the operator's (its toolchain image, the rich one by default, when detection finds Go, Rust, Ruby or Java).",
          ),
      })
      .optional()
      .describe("The environment the repository runs in."),
    test: z
      .strictObject({
        command: z
          .string()
          .min(1)
          .optional()
          .describe(
            "The command that runs the repository's tests; exit status 0 means they pass. Left out: found from the repository's files.",
          ),
        timeoutSeconds: seconds(3600)
          .default(300)
          .describe(
            "Time allowed for one run of the test command; at most the operator's ceiling. A run on a change gets 3 × what the tests took before any change when that is more, within the ceiling.",
          ),
        paths: z
          .array(z.string().min(1))
          .optional()
          .describe(
            "Glob patterns of test files, from the repository root (for the fails-before/passes-after proof).",
          ),
      })
      .default({ timeoutSeconds: 300 })
      .describe("How to run the tests: the gate a change must pass."),
    model: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Model to use, e.g. `openai:gpt-4.1`: one the operator allows; the operator's default otherwise.",
      ),
    limits: z
      .strictObject({
        maxSteps: z.number().int().positive().max(500).optional().describe("Agent steps at most."),
        maxCostUsd: z.number().positive().max(100).optional().describe("Model cost at most, in US dollars."),
        maxTimeMinutes: z.number().positive().max(240).optional().describe("Wall time of the agent at most."),
      })
      .default({})
      .describe(
        "Limits of one run, each at most the operator's ceiling; the operator's defaults where not set.",
      ),
    ci: z
      .strictObject({
        maxRounds: z
          .number()
          .int()
          .min(0)
          .max(CI_ROUNDS_CEILING)
          .optional()
          .describe(
            "CI rounds at most on agent-fix's pull request (failing checks start one); at most the operator's `ci.maxRounds`. 0: failing checks start none.",
          ),
      })
      .default({})
      .describe("What agent-fix does when the repository's checks fail on its pull request."),
    tools: z
      .enum(["default", ...toolBundles])
      .default("default")
      .describe(
        "The tool bundle the agent works with: `aci` (the SWE-agent paper's viewer and line edits), `editor` (str_replace style), or `default` (the operator's choice).",
      ),
    forbiddenPaths: z
      .array(z.string().min(1))
      .default([".github/workflows/**", ".github/agent-fix.yml"])
      .describe(
        "Glob patterns (from the repository root; a directory name covers what is below it) of paths the change may not touch, added to the operator's; a change that does is never pushed.",
      ),
    openPullRequestWhenBaselineFails: z
      .boolean()
      .default(false)
      .describe("Open a pull request even when the tests already failed before the change."),
  })
  .describe("agent-fix repository configuration (.github/agent-fix.yml)");

export type RepoConfig = z.output<typeof repoConfigSchema>;

/** An example of the right form for each field, shown in error messages. */
const examples: Record<string, string> = {
  "": "test:\n  command: npm test",
  setup: "setup:\n  commands:\n    - npm ci",
  "setup.commands": "setup:\n  commands:\n    - npm ci",
  "setup.timeoutSeconds": "setup:\n  timeoutSeconds: 600",
  "setup.network": "setup:\n  network: false",
  "setup.user": "setup:\n  user: root",
  sandbox: "sandbox:\n  image: agent-fix-sandbox-rich:0.1.0",
  test: "test:\n  command: npm test",
  "test.command": "test:\n  command: npm test",
  "test.timeoutSeconds": "test:\n  timeoutSeconds: 300",
  "test.paths": 'test:\n  paths:\n    - "tests/**"',
  model: "model: openai:gpt-4.1",
  limits: "limits:\n  maxSteps: 50",
  "limits.maxSteps": "limits:\n  maxSteps: 50",
  "limits.maxCostUsd": "limits:\n  maxCostUsd: 2.5",
  "limits.maxTimeMinutes": "limits:\n  maxTimeMinutes: 30",
  tools: "tools: aci   # or editor, or default",
  forbiddenPaths: 'forbiddenPaths:\n  - ".github/workflows/**"',
  openPullRequestWhenBaselineFails: "openPullRequestWhenBaselineFails: true",
};

function exampleFor(path: (string | number)[]): string {
  const keys = path.filter((p) => typeof p === "string");
  for (let n = keys.length; n >= 0; n--) {
    const example = examples[keys.slice(0, n).join(".")];
    if (example) return example;
  }
  return examples[""] ?? "";
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === "unrecognized_keys") {
    const at = issue.path.length ? ` in \`${issue.path.join(".")}\`` : "";
    return `unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `\`${k}\``).join(", ")}${at} (check the spelling; fields are camelCase)`;
  }
  const field = issue.path.length ? issue.path.join(".") : "(the whole file)";
  return `\`${field}\`: ${issue.message}`;
}

/** The YAML of a config file as data (an empty file is `{}`); throws ConfigError naming the file when it is not YAML. */
export function parseRepoYaml(text: string, source = REPO_CONFIG_PATH): unknown {
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw new ConfigError(`${source} is not valid YAML: ${reason}`, {
      code: "repo_config_invalid",
      hint: `Fix the YAML syntax. A minimal file:\n${examples[""]}`,
    });
  }
  return data ?? {};
}

/**
 * Validates config data. Throws ConfigError (code `repo_config_invalid`) whose message names each
 * wrong field and what is wrong, and whose hint shows the right form.
 */
export function validateRepoConfig(data: unknown, source = REPO_CONFIG_PATH): RepoConfig {
  const result = repoConfigSchema.safeParse(data);
  if (result.success) return result.data;
  const first = result.error.issues[0];
  const problems = result.error.issues.map(describeIssue);
  throw new ConfigError(`${source} is invalid: ${problems.join("; ")}`, {
    code: "repo_config_invalid",
    hint: `Example of the right form:\n${exampleFor(first?.path.map((p) => (typeof p === "symbol" ? String(p) : p)) ?? [])}`,
  });
}

/** Parses and validates the file's text (see parseRepoYaml and validateRepoConfig). */
export function parseRepoConfig(text: string, source = REPO_CONFIG_PATH): RepoConfig {
  return validateRepoConfig(parseRepoYaml(text, source), source);
}

/** The JSON Schema published as config/agent-fix.schema.json (what a user may write: input form). */
export function repoConfigJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(repoConfigSchema, { io: "input", target: "draft-2020-12" }) as Record<
    string,
    unknown
  >;
}
