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
