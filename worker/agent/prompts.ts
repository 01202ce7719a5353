/** Filling the prompt templates of the `agent.prompts` config, and cleaning issue text before it is shown. */

/**
 * Replaces `{{name}}` with the value given; values are inserted as they are (a `{{x}}` inside an issue
 * body is not expanded). Placeholders were checked against the template's allowed names at config load.
 */
export function renderTemplate(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g, (whole, name: string) =>
    name in values ? String(values[name]) : whole,
  );
}

// Zero-width and bidirectional controls, word joiners, BOM, soft hyphen, and C0/C1 controls except \t and \n.
const INVISIBLE =
  /[\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\u00AD\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g;

/**
 * Issue text as the model should read it: HTML comments (templates' hidden instructions) and invisible
 * characters removed, line endings normalised, and a body longer than `maxChars` cut with a note.
 */
export function cleanIssueText(text: string, maxChars: number): string {
  let cleaned = text
    .replace(/\r\n?/g, "\n")
    .replace(/<!--[\s\S]*?(-->|$)/g, "")
    .replace(INVISIBLE, "")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  if (cleaned.length > maxChars) {
    const total = cleaned.length;
    cleaned = `${cleaned.slice(0, maxChars).trimEnd()}\n\n[The issue text was cut here: ${maxChars} of ${total} characters shown.]`;
  }
  return cleaned;
}

/** Long output cut in the middle, keeping head and tail, with a line saying how much was left out. */
export function cutMiddle(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const half = Math.floor(maxChars / 2);
  const omitted = text.length - 2 * half;
  return `${text.slice(0, half)}\n[... ${omitted} characters omitted ...]\n${text.slice(text.length - half)}`;
}

/**
 * The parts of the system prompt that depend on the tool bundle: what the interface offers and the
 * tips on finding and editing code, each naming only tools the bundle has. Indented to continue a
 * numbered tip of the template.
 */
export function bundlePromptValues(bundle: string): { interface_summary: string; bundle_tips: string } {
  if (bundle === "shell") {
    // The paper's "no ACI" ablation: the model has a shell and submit, nothing else to describe.
    return {
      interface_summary:
        "The interface is a shell (bash) and submit: you find, read and change files with shell commands\n(grep, find, cat, sed, or a short script).",
      bundle_tips: [
        "2. Use grep -rn and find to find the code; print only the lines you need (sed -n '10,40p' FILE)\n   instead of reading long files whole.",
        "3. After each change, print the changed lines again, and run the file (or python3 -m\n   py_compile FILE) to catch a syntax error before you go on.",
      ].join("\n"),
    };
  }
  if (bundle === "editor") {
    return {
      interface_summary:
        "The interface has a file editor (view shows a file or a range of its lines with line numbers;\nstr_replace, insert and create edit, checking syntax before they write; undo_edit reverts an edit),\nsearch commands and a shell.",
      bundle_tips: [
        "2. Use search_dir, search_file and find_file to find the code; view the lines you need with\n   view_range instead of reading long files whole.",
        "3. Check the result of every edit: the answer shows the edited lines with a few lines of context.\n   old_str must match the file exactly, indentation (tabs or spaces) included: copy it from the\n   latest view of those lines. undo_edit reverts the last edit of a file.",
      ].join("\n"),
    };
  }
  return {
    interface_summary:
      "The interface has a file viewer that shows you a window of lines of a file at a time (open, goto,\nscroll_up, scroll_down), search commands, an edit command that checks syntax before it writes, and a shell.",
    bundle_tips: [
      "2. Use search_dir, search_file and find_file to find the code; open files at the line you need\n   and use goto instead of scrolling many times.",
      "3. Check the result of every edit: the answer shows the edited lines with a few lines of context\n   and their new numbers. Lines below an edit move: use the new numbers for the next edit, and\n   give expected_text so that an edit of lines that have moved is refused instead of misplaced.",
    ].join("\n"),
  };
}
