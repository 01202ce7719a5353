/** GitHub rejects comment and pull request bodies over 65,536 characters. */
export const GITHUB_BODY_LIMIT = 65_536;

/** Room kept below the limit: GitHub counts characters, JavaScript counts UTF-16 units. */
const SAFETY = 512;

export const TRUNCATION_NOTE = "\n\n_…cut to fit GitHub's 65,536-character limit._";

/** Cuts `text` to fit a comment, saying so. Text that fits is returned unchanged. */
export function fitComment(text: string, limit = GITHUB_BODY_LIMIT - SAFETY): string {
  if (text.length <= limit) return text;
  let cut = text.slice(0, limit - TRUNCATION_NOTE.length);
  // Never leave a lone high surrogate, or an unclosed <details>/code fence that swallows the note.
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  const fences = (cut.match(/^```/gm) ?? []).length;
  if (fences % 2 === 1) cut += "\n```";
  const opened = (cut.match(/<details>/g) ?? []).length - (cut.match(/<\/details>/g) ?? []).length;
  for (let i = 0; i < opened; i++) cut += "\n</details>";
  return cut + TRUNCATION_NOTE;
}
