/**
 * The ACI as the agent loop sees it: validates arguments against each tool's zod schema, runs the tool,
 * cuts long output and ends every observation with the open file and the current directory. Bad input
 * from the model is answered, never thrown.
 */
import { z } from "zod";
import type {
  AciState,
  Environment,
  FunctionSpec,
  Sandbox,
  Tool,
  ToolResult,
} from "../../src/shared/contracts.js";
import { SandboxError } from "../../src/shared/errors.js";
import type { AciConfig } from "../config/aci.js";
import { withEditOutcome } from "./edit-outcome.js";
import { workingTreeDiff } from "./git.js";
import { cutOutput } from "./output.js";
import type { AciRuntime, AciTool } from "./tool.js";

const aciVersion = "1.0.0";

const fileErrorCodes = new Set([
  "io_error",
  "not_found",
  "is_directory",
  "file_too_large",
  "path_outside_workspace",
  "not_regular_file",
  "invalid_argument",
]);

function usage(tool: AciTool): string {
  return `Usage: ${tool.signature}`;
}

function describeIssues(tool: AciTool, error: z.ZodError, args: Record<string, unknown>): string {
  const lines = error.issues.map((issue) => {
    const key = String(issue.path[0] ?? "arguments");
    if (issue.path.length > 0 && args[key] === undefined) return `Error: ${key} is required but missing.`;
    const got = issue.path.length > 0 ? ` (got ${JSON.stringify(args[key])?.slice(0, 80)})` : "";
    return `Error: ${key}: ${issue.message}${got}.`;
  });
  return [usage(tool), ...lines].join("\n");
}

/** Argument objects arrive parsed, or as the JSON text of a function call. */
function argumentObject(args: unknown): Record<string, unknown> | string {
  let value = args ?? {};
  if (typeof value === "string") {
    if (value.trim() === "") return {};
    try {
      value = JSON.parse(value);
    } catch {
      // Not swallowed: the message goes back to the model as the call's error.
      return "the arguments are not valid JSON";
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return "the arguments must be an object";
  return value as Record<string, unknown>;
}

function cleanJsonSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = schema;
  return JSON.parse(JSON.stringify(rest), (_key, value) => {
    if (value && typeof value === "object" && !Array.isArray(value)) {
      if (value.minimum === Number.MIN_SAFE_INTEGER) delete value.minimum;
      if (value.maximum === Number.MAX_SAFE_INTEGER) delete value.maximum;
    }
    return value;
  });
}

/** `    - key (type) [required|optional]: description` per argument: the text-mode docs of a tool's arguments. */
export function argumentDocs(tool: Tool): string[] {
  return Object.entries(tool.parameters.shape).map(([key, schema]) => {
    // The JSON schema finds a description wherever zod keeps it (under .optional() or a .pipe()).
    const json = cleanJsonSchema(z.toJSONSchema(schema as z.ZodType, { io: "input" }));
    const type = json.type ?? "string";
    const required = (schema as z.ZodType).safeParse(undefined).success ? "optional" : "required";
    const description = typeof json.description === "string" ? json.description : "";
    return `    - ${key} (${String(type)}) [${required}]: ${description}`;
  });
}

export class AciEnvironment implements Environment {
  readonly version = aciVersion;
  private readonly current: AciState;

  constructor(
    readonly bundle: string,
    readonly tools: readonly AciTool[],
    private readonly sandbox: Sandbox,
    private readonly runtime: AciRuntime,
    private readonly config: AciConfig,
  ) {
    this.current = { openFile: null, windowStart: 1, workingDir: runtime.root };
  }

  functionSpecs(): FunctionSpec[] {
    return this.tools.map((tool) => ({
      name: tool.name,
      description: tool.doc,
      parameters: cleanJsonSchema(
        z.toJSONSchema(tool.parameters, { io: "input" }) as Record<string, unknown>,
      ),
    }));
  }

  docs(): string {
    return this.tools
      .map((tool) => {
        const args = argumentDocs(tool);
        return [tool.signature, `  ${tool.doc}`, ...(args.length ? ["  arguments:", ...args] : [])].join(
          "\n",
        );
      })
      .join("\n\n");
  }

  state(): AciState {
    return { ...this.current };
  }

  diff(): Promise<string> {
    return workingTreeDiff(this.sandbox, this.runtime.baseCommit, this.config.toolTimeoutMs);
  }

  async execute(name: string, args: unknown, signal?: AbortSignal): Promise<ToolResult> {
    const result = withEditOutcome(name, await this.dispatch(name, args, signal));
    const body = cutOutput(result.observation, {
      maxLines: this.config.outputMaxLines,
      maxChars: this.config.outputMaxChars,
      lineMaxChars: this.config.lineMaxChars,
    });
    const footer = `(Open file: ${this.current.openFile ?? "n/a"})\n(Current directory: ${this.current.workingDir})`;
    return { ...result, observation: `${body}\n${footer}` };
  }

  private async dispatch(name: string, args: unknown, signal?: AbortSignal): Promise<ToolResult> {
    const tool = this.tools.find((candidate) => candidate.name === name);
    if (!tool) {
      const names = this.tools.map((candidate) => candidate.name).join(", ");
      return { observation: `Unknown tool "${name}". The available tools are: ${names}.`, formatError: true };
    }
    const object = argumentObject(args);
    if (typeof object === "string")
      return { observation: `${usage(tool)}\nError: ${object}.`, formatError: true };
    const parsed = tool.parameters.safeParse(object);
    if (!parsed.success)
      return { observation: describeIssues(tool, parsed.error, object), formatError: true };
    try {
      return await tool.run(parsed.data, {
        sandbox: this.sandbox,
        state: this.current,
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      // A file operation the sandbox refused is the model's to fix; a dead sandbox is not.
      if (error instanceof SandboxError && fileErrorCodes.has(error.code)) {
        return { observation: `Error: ${error.message}. Nothing was changed; check the path and try again.` };
      }
      throw error;
    }
  }
}
