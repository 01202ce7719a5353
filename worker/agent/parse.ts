/**
 * Reading an action out of a model's reply, in either format. `function_calling`: the first tool call
 * (the rest are reported as ignored). `thought_action`: free thought, then one fenced code block holding
 * one command, arguments positional in the order of the tool's schema, and for a tool with a
 * `multilineArg` the lines after the command up to `end_of_edit` (`edit START:END` on the first line).
 */
import type { AssistantMessage, Tool } from "../../src/shared/contracts.js";
import { baseType, coerceToken, isOptional, parameterNames } from "./arguments.js";

type ActionFormat = "function_calling" | "thought_action";

export type ParsedReply =
  | { ok: true; thought: string; tool: string; args: Record<string, unknown>; ignoredCalls: number }
  | { ok: false; thought: string; error: string; tool?: string };

export function parseReply(
  message: AssistantMessage,
  tools: readonly Tool[],
  format: ActionFormat,
): ParsedReply {
  return format === "function_calling"
    ? parseFunctionCall(message)
    : parseThoughtAction(message.content ?? "", tools);
}

function parseFunctionCall(message: AssistantMessage): ParsedReply {
  const thought = message.content ?? "";
  const call = message.tool_calls?.[0];
  if (!call)
    return { ok: false, thought, error: "your reply called no function; every reply must call exactly one." };
  const name = call.function.name;
  const raw = call.function.arguments.trim();
  let args: unknown;
  try {
    args = raw === "" ? {} : JSON.parse(raw);
  } catch (error) {
    const shown = raw.length > 300 ? `${raw.slice(0, 300)}...` : raw;
    return {
      ok: false,
      thought,
      tool: name,
      error: `the arguments of ${name} are not valid JSON (${(error as Error).message}): ${shown}`,
    };
  }
  if (!args || typeof args !== "object" || Array.isArray(args)) {
    return {
      ok: false,
      thought,
      tool: name,
      error: `the arguments of ${name} must be a JSON object, not ${raw}`,
    };
  }
  return {
    ok: true,
    thought,
    tool: name,
    args: args as Record<string, unknown>,
    ignoredCalls: message.tool_calls!.length - 1,
  };
}

const FENCE = /^\s*```[\w+-]*\s*$/;

/**
 * The last fenced block of a reply and the text before it. Fence lines pair up in order; an unclosed
 * last block runs to the end of the reply (models often stop right after `end_of_edit`).
 */
function lastFencedBlock(text: string): { before: string; lines: string[] } | null {
  const lines = text.split("\n");
  const fences = lines.flatMap((line, index) => (FENCE.test(line) ? [index] : []));
  if (fences.length === 0) return null;
  const start = fences.length % 2 === 0 ? fences[fences.length - 2]! : fences[fences.length - 1]!;
  const end = fences.length % 2 === 0 ? fences[fences.length - 1]! : lines.length;
  return { before: lines.slice(0, start).join("\n").trim(), lines: lines.slice(start + 1, end) };
}

function parseThoughtAction(content: string, tools: readonly Tool[]): ParsedReply {
  const block = lastFencedBlock(content);
  if (!block) {
    return {
      ok: false,
      thought: content.trim(),
      error: "your reply has no command in a fenced code block (```).",
    };
  }
  const { before: thought } = block;
  const lines = block.lines;
  while (lines.length > 0 && lines[0]!.trim() === "") lines.shift();
  if (lines.length === 0) return { ok: false, thought, error: "the code block in your reply is empty." };
  const commandLine = lines[0]!.trim();
  const name = commandLine.split(/\s+/)[0]!;
  const rest = commandLine.slice(name.length).trim();
  const tool = tools.find((t) => t.name === name);
  if (!tool) {
    const bash = tools.find((t) => t.name === "bash");
    if (bash) {
      const key = parameterNames(bash)[0]!;
      return { ok: true, thought, tool: "bash", args: { [key]: lines.join("\n").trim() }, ignoredCalls: 0 };
    }
    return { ok: false, thought, tool: name, error: `there is no command named ${name}.` };
  }
  const parsed = parseTextArguments(tool, rest, lines.slice(1));
  if (typeof parsed === "string") return { ok: false, thought, tool: name, error: parsed };
  return { ok: true, thought, tool: name, args: parsed, ignoredCalls: 0 };
}

/** Arguments of a text-mode command; a string is the error to show the model. */
function parseTextArguments(tool: Tool, rest: string, bodyLines: string[]): Record<string, unknown> | string {
  const shape = tool.parameters.shape as Record<string, unknown>;
  const multiline = tool.multilineArg;
  const positional = parameterNames(tool).filter((key) => key !== multiline);
  const args: Record<string, unknown> = {};
  if (tool.name === "bash" && positional.length === 1) {
    // The shell command as written: everything after the name, following lines included.
    const text = [rest, ...bodyLines].join("\n").trim();
    if (text !== "") args[positional[0]!] = text;
    return args;
  }
  let tokens = splitWords(rest);
  // A quote the command line leaves open goes on over the following lines: how str_replace's old_str
  // and new_str hold several lines in text mode.
  if (typeof tokens === "string" && !multiline && bodyLines.length > 0)
    tokens = splitWords([rest, ...bodyLines].join("\n"));
  if (typeof tokens === "string") return tokens;
  const expanded = tokens.flatMap((token) => (/^\d+:\d+$/.test(token) ? token.split(":") : [token]));
  if (expanded.length > positional.length) {
    return `${tool.name} takes at most ${positional.length} argument(s) on its command line, got ${expanded.length}.`;
  }
  expanded.forEach((token, index) => {
    const key = positional[index]!;
    args[key] = coerceToken(token, shape[key]);
  });
  if (multiline) {
    const end = bodyLines.findLastIndex((line) => line.trim() === "end_of_edit");
    if (end !== -1) args[multiline] = bodyLines.slice(0, end).join("\n");
    else if (bodyLines.length > 0) args[multiline] = bodyLines.join("\n");
  }
  return args;
}

/** Shell-like word splitting: spaces separate, single and double quotes group, backslash escapes. */
export function splitWords(text: string): string[] | string {
  const words: string[] = [];
  let current = "";
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (quote) {
      if (char === quote) quote = null;
      else if (char === "\\" && quote === '"' && i + 1 < text.length) current += text[++i];
      else current += char;
    } else if (char === '"' || char === "'") {
      quote = char;
      inWord = true;
    } else if (char === "\\" && i + 1 < text.length) {
      current += text[++i];
      inWord = true;
    } else if (/\s/.test(char)) {
      if (inWord) words.push(current);
      current = "";
      inWord = false;
    } else {
      current += char;
      inWord = true;
    }
  }
  if (quote) return `unbalanced ${quote} quote in: ${text}`;
  if (inWord) words.push(current);
  return words;
}

/** How a tool is written in text mode: `open <path> [<line_number>]`, `edit <start_line>:<end_line>` ... */
export function textSignature(tool: Tool): string {
  const shape = tool.parameters.shape as Record<string, unknown>;
  const multiline = tool.multilineArg;
  const positional = parameterNames(tool).filter((key) => key !== multiline);
  let head: string;
  if (tool.name === "edit" && positional[0] === "start_line" && positional[1] === "end_line") {
    const rest = positional.slice(2).map((key) => (isOptional(shape[key]) ? `[<${key}>]` : `<${key}>`));
    head = ["edit <start_line>:<end_line>", ...rest].join(" ");
  } else {
    head = [tool.name, ...positional.map((key) => (isOptional(shape[key]) ? `[<${key}>]` : `<${key}>`))].join(
      " ",
    );
  }
  return multiline ? `${head}\n<${multiline}>\nend_of_edit` : head;
}

/**
 * The text-mode examples, in the tools of the bundle: the `aci` bundle's open and edit, the
 * `editor` bundle's view, str_replace and insert, or a shell command for the `shell` bundle.
 */
function textExamples(tools: readonly Tool[]): string[] {
  const has = (name: string) => tools.some((tool) => tool.name === name);
  if (!has("edit") && !has("view")) {
    // The shell bundle: its examples may name no tool it lacks.
    return ["```", "grep -n 'def mean' src/app.py", "```"];
  }
  if (has("edit")) {
    return [
      "```",
      "open src/app.py 40",
      "```",
      "",
      "Arguments are separated by spaces; quote an argument that contains spaces. For edit, the line range",
      "goes on the command line and the replacement text on the following lines, ending with end_of_edit:",
      "",
      "```",
      "edit 12:13",
      "    return total",
      "end_of_edit",
      "```",
    ];
  }
  return [
    "```",
    "view src/app.py [40,60]",
    "```",
    "",
    "Arguments are separated by spaces; quote an argument that contains spaces, as str_replace's old_str",
    "and new_str usually do; a quoted argument may go on over several lines:",
    "",
    "```",
    'str_replace src/app.py "def mean(values):',
    '    return sum(values) / len(values)" "def mean(values):',
    '    return sum(values) / len(values) if values else 0"',
    "```",
    "",
    "For insert, the path and line number go on the command line and the text to insert on the following",
    "lines, ending with end_of_edit:",
    "",
    "```",
    "insert src/app.py 12",
    "    return total",
    "end_of_edit",
    "```",
  ];
}

/** The instructions on how to act, for the system prompt. */
export function actionFormatInstructions(format: ActionFormat, tools: readonly Tool[]): string {
  if (format === "function_calling") {
    return "RESPONSE FORMAT:\nThink about what to do next, then call exactly one function per reply. Only the first call of a reply is run.";
  }
  return [
    "RESPONSE FORMAT:",
    "Your reply is your reasoning (DISCUSSION), then exactly one command in a fenced code block, e.g.",
    "",
    "DISCUSSION",
    "First I'll look at the function the issue mentions.",
    "",
    ...textExamples(tools),
    "",
    "A command that is not one of the commands above runs in the shell. One command per reply: wait for",
    "its output before you send the next.",
  ].join("\n");
}

/** What a correct reply looks like, for the format error message. */
export function validForm(format: ActionFormat, tools: readonly Tool[], toolName?: string): string {
  const tool = toolName ? tools.find((t) => t.name === toolName) : undefined;
  if (format === "function_calling") {
    const names = tools.map((t) => t.name).join(", ");
    const specific = tool ? ` ${tool.name} takes ${describeParameters(tool)}.` : "";
    return `Call exactly one of these functions, with its arguments as a JSON object: ${names}.${specific}`;
  }
  const example = tool ?? tools.find((t) => t.name === "open" || t.name === "view") ?? tools[0];
  const form = example ? textSignature(example) : "bash <command>";
  return `Reply with your reasoning, then exactly one command in a fenced code block, like:\n\`\`\`\n${form}\n\`\`\`\nCommands: ${tools.map((t) => t.name).join(", ")}.`;
}

function describeParameters(tool: Tool): string {
  const shape = tool.parameters.shape as Record<string, unknown>;
  const keys = parameterNames(tool);
  if (keys.length === 0) return "no arguments ({})";
  return `{${keys.map((key) => `${key}${isOptional(shape[key]) ? "?" : ""}: ${baseType(shape[key])}`).join(", ")}}`;
}
