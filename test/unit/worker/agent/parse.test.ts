import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { AssistantMessage, Tool } from "../../../../src/shared/contracts.js";
import { formatAction } from "../../../../worker/agent/arguments.js";
import { parseReply, splitWords, textSignature, validForm } from "../../../../worker/agent/parse.js";

// Tool definitions shaped like the ACI's (the parser only reads name, parameters and multilineArg).
const noRun = async () => ({ observation: "" });
const tools: Tool[] = [
  {
    name: "open",
    doc: "open a file",
    parameters: z.object({ path: z.string(), line_number: z.number().int().optional() }),
    run: noRun,
  },
  {
    name: "edit",
    doc: "replace lines",
    parameters: z.object({
      start_line: z.number().int(),
      end_line: z.number().int(),
      replacement_text: z.string(),
    }),
    multilineArg: "replacement_text",
    run: noRun,
  },
  {
    name: "search_dir",
    doc: "",
    parameters: z.object({ search_term: z.string(), dir: z.string().optional() }),
    run: noRun,
  },
  { name: "bash", doc: "", parameters: z.object({ command: z.string() }), run: noRun },
  { name: "submit", doc: "", parameters: z.object({}), run: noRun },
];

const text = (content: string): AssistantMessage => ({ role: "assistant", content });

describe("thought_action replies", () => {
  it("reads positional arguments in the schema's key order, with numbers coerced", () => {
    const parsed = parseReply(
      text("I should look at a.py.\n\n```\nopen src/a.py 40\n```"),
      tools,
      "thought_action",
    );
    expect(parsed).toEqual({
      ok: true,
      thought: "I should look at a.py.",
      tool: "open",
      args: { path: "src/a.py", line_number: 40 },
      ignoredCalls: 0,
    });
  });

  it("reads edit START:END and the lines up to end_of_edit, keeping indentation and blank lines", () => {
    const reply = "Fix it.\n```\nedit 3:4\n    if x:\n\n        return 1\nend_of_edit\n```";
    const parsed = parseReply(text(reply), tools, "thought_action");
    expect(parsed.ok && parsed.args).toEqual({
      start_line: 3,
      end_line: 4,
      replacement_text: "    if x:\n\n        return 1",
    });
  });

  it("reads an anchored edit: the expected text as a quoted argument after START:END", () => {
    const anchored: Tool = {
      ...tools[1]!,
      parameters: z.object({
        start_line: z.number().int(),
        end_line: z.number().int(),
        replacement_text: z.string(),
        expected_text: z.string().optional(),
      }),
    };
    expect(textSignature(anchored)).toBe(
      "edit <start_line>:<end_line> [<expected_text>]\n<replacement_text>\nend_of_edit",
    );
    const reply = '```\nedit 3:3 "    return total"\n    return total or 0\nend_of_edit\n```';
    const parsed = parseReply(text(reply), [anchored], "thought_action");
    const args = {
      start_line: 3,
      end_line: 3,
      replacement_text: "    return total or 0",
      expected_text: "    return total",
    };
    expect(parsed.ok && parsed.args).toEqual(args);
    expect(formatAction(anchored, "edit", args)).toBe(
      'edit 3:3 "    return total"\n    return total or 0\nend_of_edit',
    );
  });

  it("takes the last block as the action, quotes group words, and an unknown command runs in bash", () => {
    const reply = 'Earlier I ran:\n```\nls\n```\nNow:\n```bash\nsearch_dir "def main" src\n```';
    const parsed = parseReply(text(reply), tools, "thought_action");
    expect(parsed.ok && parsed.args).toEqual({ search_term: "def main", dir: "src" });
    const shell = parseReply(text("```\npython -m pytest -x \\\n  tests/\n```"), tools, "thought_action");
    expect(shell.ok && shell.tool).toBe("bash");
    expect(shell.ok && shell.args).toEqual({ command: "python -m pytest -x \\\n  tests/" });
  });

  it("splits the words of a one-argument tool other than bash", () => {
    const createTool: Tool = {
      name: "create",
      doc: "",
      parameters: z.object({ filename: z.string() }),
      run: noRun,
    };
    const parsed = parseReply(text('```\ncreate "repro file.py"\n```'), [createTool], "thought_action");
    expect(parsed.ok && parsed.args).toEqual({ filename: "repro file.py" });
  });

  it("accepts an edit block the model left unclosed", () => {
    const parsed = parseReply(text("```\nedit 1:1\nx = 2\nend_of_edit"), tools, "thought_action");
    expect(parsed.ok && parsed.args).toEqual({ start_line: 1, end_line: 1, replacement_text: "x = 2" });
  });

  it("reports a missing block, too many arguments and unbalanced quotes as format errors", () => {
    expect(parseReply(text("I will open the file."), tools, "thought_action")).toMatchObject({
      ok: false,
      error: expect.stringContaining("no command in a fenced code block"),
    });
    expect(parseReply(text("```\nopen a b c\n```"), tools, "thought_action")).toMatchObject({
      ok: false,
      tool: "open",
      error: "open takes at most 2 argument(s) on its command line, got 3.",
    });
    expect(splitWords('search "unclosed')).toBe('unbalanced " quote in: search "unclosed');
  });

  it("lets a quote the command line leaves open go on over the following lines (str_replace, issue 16)", () => {
    const reply = text('```\nsearch_dir "def f():\n    return 1" src\n```');
    expect(parseReply(reply, tools, "thought_action")).toMatchObject({
      ok: true,
      args: { search_term: "def f():\n    return 1", dir: "src" },
    });
    expect(parseReply(text('```\nsearch_dir "open\nstill open\n```'), tools, "thought_action")).toMatchObject(
      {
        ok: false,
        error: expect.stringContaining('unbalanced " quote'),
      },
    );
  });
});

describe("function_calling replies", () => {
  const call = (name: string, args: string, id = "c1") => ({
    id,
    type: "function" as const,
    function: { name, arguments: args },
  });

  it("runs the first call and counts the ignored ones", () => {
    const message: AssistantMessage = {
      role: "assistant",
      content: "thinking",
      tool_calls: [call("open", '{"path":"a.py"}'), call("submit", "{}", "c2")],
    };
    expect(parseReply(message, tools, "function_calling")).toEqual({
      ok: true,
      thought: "thinking",
      tool: "open",
      args: { path: "a.py" },
      ignoredCalls: 1,
    });
  });

  it("reports no call and malformed JSON arguments as format errors", () => {
    expect(parseReply(text("done?"), tools, "function_calling")).toMatchObject({ ok: false });
    const bad = parseReply(
      { role: "assistant", content: null, tool_calls: [call("open", '{"path":')] },
      tools,
      "function_calling",
    );
    expect(bad).toMatchObject({ ok: false, tool: "open", error: expect.stringContaining("not valid JSON") });
    const array = parseReply(
      { role: "assistant", content: null, tool_calls: [call("open", "[1]")] },
      tools,
      "function_calling",
    );
    expect(array).toMatchObject({ ok: false, error: expect.stringContaining("must be a JSON object") });
  });
});

describe("text forms", () => {
  it("writes signatures, actions and valid forms that the parser reads back", () => {
    expect(textSignature(tools[0]!)).toBe("open <path> [<line_number>]");
    expect(textSignature(tools[1]!)).toBe("edit <start_line>:<end_line>\n<replacement_text>\nend_of_edit");
    const args = { start_line: 2, end_line: 5, replacement_text: "a\n  b" };
    const action = formatAction(tools[1], "edit", args);
    expect(action).toBe("edit 2:5\na\n  b\nend_of_edit");
    const roundTrip = parseReply(text(`\`\`\`\n${action}\n\`\`\``), tools, "thought_action");
    expect(roundTrip.ok && roundTrip.args).toEqual(args);
    expect(formatAction(tools[2], "search_dir", { search_term: "def main" })).toBe('search_dir "def main"');
    expect(validForm("function_calling", tools, "open")).toContain(
      "open takes {path: string, line_number?: number}",
    );
    expect(validForm("thought_action", tools, "edit")).toContain("edit <start_line>:<end_line>");
  });
});
