/**
 * Reading a tool's zod schema for text mode: parameter order (the shape's key order), the base type
 * of each parameter (to turn "40" into 40), and the text form of an action for trajectories.
 */
import type { Tool } from "../../src/shared/contracts.js";

interface ZodLike {
  _zod: { def: { type: string; innerType?: ZodLike; in?: ZodLike } };
}

/** The type under optional/default/nullable wrappers: "string", "number", "boolean", "array", ... */
export function baseType(schema: unknown): string {
  let current = schema as ZodLike | undefined;
  for (let depth = 0; current && depth < 10; depth++) {
    const def = current._zod.def;
    if (def.innerType) current = def.innerType;
    else if (def.type === "pipe" && def.in) current = def.in;
    else return def.type;
  }
  return "unknown";
}

export function isOptional(schema: unknown): boolean {
  const type = (schema as ZodLike)._zod.def.type;
  return type === "optional" || type === "default" || type === "prefault";
}

export function parameterNames(tool: Tool): string[] {
  return Object.keys(tool.parameters.shape);
}

/** Turns one text token into the value the parameter's schema expects, where that is unambiguous. */
export function coerceToken(token: string, schema: unknown): unknown {
  const type = baseType(schema);
  if ((type === "number" || type === "int") && /^-?\d+(\.\d+)?$/.test(token)) return Number(token);
  if (type === "boolean" && (token === "true" || token === "false")) return token === "true";
  if ((type === "array" || type === "object") && /^[[{]/.test(token)) {
    try {
      return JSON.parse(token);
    } catch {
      // Not JSON after all: the token stays text, and validation against the schema reports it.
      return token;
    }
  }
  return token;
}

/** The action as a text-mode command: `open src/a.py 40`, or `edit 3:5` + lines + `end_of_edit`. */
export function formatAction(tool: Tool | undefined, name: string, args: unknown): string {
  if (!args || typeof args !== "object") return name;
  const record = args as Record<string, unknown>;
  const order = tool ? parameterNames(tool) : Object.keys(record);
  const multiline = tool?.multilineArg;
  const quote = (value: unknown) => {
    const text = typeof value === "string" ? value : JSON.stringify(value);
    return /^[^\s"'\\]+$/.test(text) ? text : JSON.stringify(text);
  };
  const parts = order
    .filter((key) => key !== multiline && record[key] !== undefined)
    .map((key) => record[key]);
  let head: string;
  const isLine = (value: unknown) =>
    typeof value === "number" || (typeof value === "string" && /^\d+$/.test(value));
  if (name === "edit" && isLine(record.start_line) && isLine(record.end_line)) {
    head = `edit ${record.start_line}:${record.end_line}`;
    if (typeof record.expected_text === "string") head += ` ${quote(record.expected_text)}`;
  } else if (tool && order.length === 1 && !multiline && typeof record[order[0]!] === "string") {
    head = `${name} ${record[order[0]!]}`; // bash and friends: the command as written
  } else {
    head = [name, ...parts.map(quote)].join(" ");
  }
  if (multiline && typeof record[multiline] === "string") return `${head}\n${record[multiline]}\nend_of_edit`;
  return head;
}
