/**
 * Links and images in text the app did not write (the model's summary and thoughts, tool output, an
 * issue's title) made inert unless they point at a host the operator allows: GitHub's image proxy
 * fetches every image of a body on every view, and a reader's browser follows every link, so a
 * hostile model could otherwise send data out (a secret in an image URL) or phish ("Approve and merge").
 *
 * No markdown parser is in the dependencies, so this is a conservative scanner whose OUTPUT has one
 * reading: whatever GitHub's parser decides about a construct, nothing in the result fetches or links
 * outside the allowed hosts.
 * - Fenced code blocks at the start of a line are re-fenced at column 0 after a blank line, with a
 *   fence longer than any backtick run inside, so their content stays code and cannot close them.
 * - Inline code spans are kept only within one line and without `|` (a table cell would split them);
 *   every other backtick is escaped, so GitHub sees exactly the code spans the scanner saw.
 * - Everywhere else (prose): every `<` becomes `&lt;` (no HTML, no autolink `<url>`); entities are
 *   decoded and re-escaped (no `&#x3a;` hides a scheme); `](` keeps its destination only when it is a
 *   plain URL on an allowed host, else a zero-width space breaks it; `]:` (a reference definition) is
 *   always broken; a bare URL (`scheme://`, `www.`) on a host not allowed becomes code text with a note;
 *   every backslash stays paired with what it escapes, so no code span opener is ever escaped.
 */

/** The hosts a link or image of the model's text may point at. */
export interface LinkPolicy {
  /** `host` or `host:port`, lower case: the GitHub host and the operator's `github.linkHosts`. */
  readonly hosts: ReadonlySet<string>;
  /** The page relative links resolve against (a page of the GitHub host). */
  readonly base: string;
}

/** The policy for `githubWebUrl` (github.com, or the GHE host) plus the operator's extra hosts. */
export function linkPolicy(githubWebUrl: string, extraHosts: readonly string[] = []): LinkPolicy {
  const github = new URL(githubWebUrl);
  return {
    hosts: new Set([github.host, ...extraHosts].map((host) => host.toLowerCase())),
    base: `${github.origin}/owner/repository/pull/1`,
  };
}

/** github.com alone: the policy of a caller that was given none (fails closed: more is made inert). */
export const GITHUB_COM_LINKS: LinkPolicy = linkPolicy("https://github.com");

/** The note beside a URL made inert, so a reviewer knows why it is not a link. */
export const NOT_ALLOWED_NOTE = "(link to a host not allowed)";

/** Invisible; breaks `](` and `]:` for the markdown parser without changing what a reader sees. */
const ZERO_WIDTH_SPACE = "\u200B";

/** ASCII characters named entities stand for (HTML5), so a named entity cannot hide a URL or markup. */
const NAMED_ENTITIES: Record<string, string> = {
  Tab: "\t",
  NewLine: "\n",
  excl: "!",
  quot: '"',
  QUOT: '"',
  num: "#",
  dollar: "$",
  percnt: "%",
  amp: "&",
  AMP: "&",
  apos: "'",
  lpar: "(",
  rpar: ")",
  ast: "*",
  midast: "*",
  plus: "+",
  comma: ",",
  period: ".",
  sol: "/",
  colon: ":",
  semi: ";",
  lt: "<",
  LT: "<",
  equals: "=",
  gt: ">",
  GT: ">",
  quest: "?",
  commat: "@",
  lsqb: "[",
  lbrack: "[",
  bsol: "\\",
  rsqb: "]",
  rbrack: "]",
  Hat: "^",
  lowbar: "_",
  UnderBar: "_",
  grave: "`",
  DiacriticalGrave: "`",
  lcub: "{",
  lbrace: "{",
  verbar: "|",
  vert: "|",
  VerticalLine: "|",
  rcub: "}",
  rbrace: "}",
  nbsp: "\u00A0",
};
const ENTITY = /^&(?:#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6})|([A-Za-z][A-Za-z0-9]{0,31}));/;
const ASCII_PUNCTUATION = /^[!-/:-@[-`{-~]$/;
/** Characters of a link destination kept as is (no escape, entity, bracket, quote or backtick). */
const PLAIN_DESTINATION = /^[A-Za-z0-9\-._~:/?#@!$%*+,;=]*/;
/** A URL's start: a scheme and `//`, or `www.` (GitHub autolinks both). */
const URL_START = /^(?:[A-Za-z][A-Za-z0-9+.-]*:\/\/|www\.)/i;
/** Code block info words GitHub renders as something other than code (diagrams, maps, math). */
const RENDERED_INFO = new Set(["mermaid", "geojson", "topojson", "stl", "math"]);

/** A decoded character of prose: `raw` is markdown source, else a literal (escaped or an entity). */
type ProseToken =
  | { kind: "char"; ch: string; raw: boolean }
  /** Emitted verbatim: a code span, or an allowed link destination with its `](`. */
  | { kind: "verbatim"; text: string };

/** Whether `url` (absolute or relative to the policy's base) is http(s) on an allowed host, no user info. */
function allowedUrl(url: string, policy: LinkPolicy): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url, policy.base);
  } catch {
    return false;
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return false;
  if (parsed.username || parsed.password) return false;
  return policy.hosts.has(parsed.host.toLowerCase()) || policy.hosts.has(parsed.hostname.toLowerCase());
}

/**
 * Whether a bare URL GitHub may autolink stays a link: allowed as written and with every trailing
 * punctuation GitHub might trim (so no reading of where it ends leads elsewhere).
 */
function allowedBareUrl(text: string, policy: LinkPolicy): boolean {
  const absolute = /^www\./i.test(text) ? `http://${text}` : text;
  // Bounded: a URL ending in thousands of dots is not worth parsing thousands of times; it goes inert.
  for (let end = absolute.length, tries = 0; end > 0; end--, tries++) {
    if (tries > 32 || !allowedUrl(absolute.slice(0, end), policy)) return false;
    if (!/[?!.,:*_~)'"&;]/.test(absolute[end - 1] ?? "")) break;
  }
  return true;
}

function decodeEntity(match: RegExpExecArray): string | null {
  const [, decimal, hex, name] = match;
  if (name !== undefined) return NAMED_ENTITIES[name] ?? null;
  const code = Number.parseInt(decimal ?? hex ?? "", decimal !== undefined ? 10 : 16);
  return code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)
    ? "\uFFFD"
    : String.fromCodePoint(code);
}

/** The backtick run starting at `at`, as a length. */
function runAt(text: string, at: number): number {
  let end = at;
  while (text[end] === "`") end++;
  return end - at;
}

/** Where the code span opened by a run of `length` backticks at `at` closes on its line, or -1. */
function codeSpanEnd(text: string, at: number, length: number): number {
  let i = at + length;
  while (i < text.length && text[i] !== "\n") {
    if (text[i] === "`") {
      const run = runAt(text, i);
      if (run === length) return i + run;
      i += run;
    } else i++;
  }
  return -1;
}

/** Tokens of one prose chunk (no fenced code block inside). */
function tokenise(text: string, policy: LinkPolicy): ProseToken[] {
  const tokens: ProseToken[] = [];
  const literal = (ch: string) => tokens.push({ kind: "char", ch, raw: false });
  let i = 0;
  while (i < text.length) {
    const ch = text[i] ?? "";
    const next = text[i + 1] ?? "";
    if (ch === "\\" && ASCII_PUNCTUATION.test(next)) {
      literal(next);
      i += 2;
    } else if (ch === "`") {
      const run = runAt(text, i);
      const end = codeSpanEnd(text, i, run);
      const span = end < 0 ? "" : text.slice(i, end);
      if (end > 0 && !span.includes("|")) {
        tokens.push({ kind: "verbatim", text: span });
        i = end;
      } else {
        for (let k = 0; k < run; k++) literal("`");
        i += run;
      }
    } else if (ch === "&" && ENTITY.test(text.slice(i, i + 40))) {
      const match = ENTITY.exec(text.slice(i, i + 40)) as RegExpExecArray;
      const decoded = decodeEntity(match);
      // An entity this table does not know renders as its own text: its `&` is escaped.
      for (const c of decoded ?? match[0]) literal(c);
      i += match[0].length;
    } else if (ch === "]" && next === "(") {
      const destination = PLAIN_DESTINATION.exec(text.slice(i + 2))?.[0] ?? "";
      const after = text[i + 2 + destination.length] ?? "";
      if (/^[)\s]$/.test(after) && allowedUrl(destination, policy)) {
        tokens.push({ kind: "verbatim", text: `](${destination.replaceAll("@", "%40")}` });
        i += 2 + destination.length;
      } else {
        tokens.push({ kind: "char", ch: "]", raw: true }, { kind: "verbatim", text: ZERO_WIDTH_SPACE });
        i += 1;
      }
    } else if (ch === "]" && next === ":") {
      tokens.push({ kind: "char", ch: "]", raw: true }, { kind: "verbatim", text: ZERO_WIDTH_SPACE });
      i += 1;
    } else {
      tokens.push({ kind: "char", ch, raw: true });
      i += 1;
    }
  }
  return tokens;
}

/** One character of prose as markdown that shows exactly it (markup only where the source had it). */
function emitChar(token: { ch: string; raw: boolean }): string {
  const { ch, raw } = token;
  if (ch === "<") return "&lt;";
  if (ch === "&") return "&amp;";
  if (ch === "\\" || ch === "`") return `\\${ch}`;
  if (!raw && ASCII_PUNCTUATION.test(ch)) return `\\${ch}`;
  return ch;
}

/** A URL made inert: code text (no backtick or pipe inside, so one reading); the note follows. */
function inertUrl(url: string): string {
  const shown = url.replaceAll("`", "%60").replaceAll("|", "%7C");
  return `\`${shown}\``;
}

/** Prose tokens to markdown: bare URLs on hosts not allowed become inert code text. */
function emitProse(tokens: ProseToken[], policy: LinkPolicy): string {
  let out = "";
  let i = 0;
  while (i < tokens.length) {
    const token = tokens[i] as ProseToken;
    if (token.kind === "verbatim") {
      out += token.text;
      i++;
      continue;
    }
    // The characters from here to the next verbatim token, as GitHub's autolinker reads them.
    let end = i;
    let value = "";
    while (end < tokens.length && tokens[end]?.kind === "char" && end - i < 64) {
      value += (tokens[end] as { ch: string }).ch;
      end++;
    }
    if (URL_START.test(value)) {
      // GitHub's autolink runs to the next ASCII space, through code spans and `&lt;` alike: the
      // whole run is checked, so no reading of where it ends reaches another host.
      let stop = i;
      let url = "";
      let shown = "";
      for (; stop < tokens.length; stop++) {
        const t = tokens[stop] as ProseToken;
        const piece = t.kind === "char" ? t.ch : t.text;
        const space = piece.search(/[ \t\n\r\v\f]/);
        if (space === 0) break;
        url += space < 0 ? piece : piece.slice(0, space);
        shown += piece;
        // A code span with a space inside: the link would end there; the span goes with the URL.
        if (space > 0) {
          stop++;
          break;
        }
      }
      if (allowedBareUrl(url, policy)) {
        for (let k = i; k < stop; k++) {
          const t = tokens[k] as ProseToken;
          out += t.kind === "verbatim" ? t.text : t.ch === "@" ? "%40" : emitChar(t);
        }
      } else {
        // Punctuation that ends a sentence or markup (`)**`, `">`) is shown after the code text, as
        // prose: checked as part of the URL above, it starts nothing on its own.
        let tail = stop;
        while (tail > i + 1) {
          const t = tokens[tail - 1] as ProseToken;
          if (t.kind !== "char" || !/^[)\]}*_~.,;:!?"'>]$/.test(t.ch)) break;
          tail--;
        }
        const trailing = tokens.slice(tail, stop) as { ch: string; raw: boolean }[];
        out += `${inertUrl(shown.slice(0, shown.length - trailing.length))}${trailing.map(emitChar).join("")} ${NOT_ALLOWED_NOTE}`;
      }
      i = stop;
      continue;
    }
    out += emitChar(token);
    i++;
  }
  return out;
}

/** A fence line that opens a code block: up to three spaces, then ``` or ~~~ (and an info string). */
const FENCE_OPEN = /^( {0,3})(`{3,}(?=[^`]*$)|~{3,})(.*)$/;

/** `text` (markdown) with every link and image to a host not allowed made inert; code stays code. */
export function inertLinks(text: string, policy: LinkPolicy): string {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const out: string[] = [];
  let prose: string[] = [];
  const flush = () => {
    if (prose.length > 0) out.push(emitProse(tokenise(prose.join("\n"), policy), policy));
    prose = [];
  };
  let i = 0;
  while (i < lines.length) {
    const open = FENCE_OPEN.exec(lines[i] ?? "");
    if (!open) {
      prose.push(lines[i] ?? "");
      i++;
      continue;
    }
    const [, indent = "", fence = "", info = ""] = open;
    const close = new RegExp(`^ {0,3}${fence[0] === "`" ? "`" : "~"}{${fence.length},}[ \\t]*$`);
    const content: string[] = [];
    i++;
    while (i < lines.length && !close.test(lines[i] ?? "")) {
      // As CommonMark does, content loses up to the opening fence's indentation.
      content.push((lines[i] ?? "").replace(new RegExp(`^ {0,${indent.length}}`), ""));
      i++;
    }
    i++; // the closing fence (or the end of the text: an unclosed block is closed here)
    flush();
    const body = content.join("\n");
    const longest = Math.max(0, ...(body.match(/`+/g) ?? []).map((run) => run.length));
    const ours = "`".repeat(Math.max(3, longest + 1));
    const word = /^\s*([A-Za-z0-9_+.#-]*)/.exec(info)?.[1] ?? "";
    const language = RENDERED_INFO.has(word.toLowerCase()) ? "" : word;
    if (out.length > 0 && out.at(-1) !== "") out.push("");
    out.push(`${ours}${language}`, ...content, ours);
  }
  flush();
  return out.join("\n");
}

/**
 * Plain text that GitHub autolinks but renders no markdown in (a commit message): URLs on hosts not
 * allowed are defanged (`https[:]//evil[.]example`), so no autolinker finds a scheme or `www.`.
 */
export function inertPlainLinks(text: string, policy: LinkPolicy): string {
  return text.replace(/(?:[A-Za-z][A-Za-z0-9+.-]*:\/\/|www\.)[^\s<]*/gi, (url) =>
    allowedBareUrl(url, policy)
      ? url
      : `${url.replaceAll(":", "[:]").replaceAll(".", "[.]")} ${NOT_ALLOWED_NOTE}`,
  );
}
