/**
 * Finds setup secrets in the files setup left in the workspace, before any of them reaches the agent:
 * each value as it is and base64-encoded (at each of the three byte alignments, so it is found inside
 * a longer base64 text too), in file contents, file names and symlink targets.
 */
import { createReadStream } from "node:fs";
import { readdir, readlink } from "node:fs/promises";
import { join } from "node:path";

/** Values shorter than this are not searched: they would match by chance (and are no credential). */
const MIN_SECRET_LENGTH = 8;

interface SecretHit {
  /** The secret's name (never its value). */
  name: string;
  /** Path relative to the scanned directory. */
  file: string;
}

/** The byte strings that give a secret away: the value and its base64 forms. */
function secretForms(value: string): Buffer[] {
  const raw = Buffer.from(value, "utf8");
  const forms = [raw];
  for (let shift = 0; shift < 3; shift++) {
    const encoded = Buffer.concat([Buffer.alloc(shift), raw]).toString("base64");
    // Only the characters that depend on the value's bits alone.
    const start = Math.ceil((shift * 8) / 6);
    const end = Math.floor(((shift + raw.length) * 8) / 6);
    if (end - start >= MIN_SECRET_LENGTH) forms.push(Buffer.from(encoded.slice(start, end), "latin1"));
  }
  return forms;
}

/** The forms searched for a secret's value; none for a value too short to be told from chance. */
export function searchedForms(value: string): Buffer[] {
  return value.length >= MIN_SECRET_LENGTH ? secretForms(value) : [];
}

async function fileContains(path: string, needles: Buffer[]): Promise<boolean> {
  const overlap = Math.max(...needles.map((needle) => needle.length)) - 1;
  let tail = Buffer.alloc(0);
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    const window = Buffer.concat([tail, chunk as Buffer]);
    if (needles.some((needle) => window.includes(needle))) return true;
    tail = window.subarray(Math.max(0, window.length - overlap));
  }
  return false;
}

/** Every (secret, file) pair where `dir` (without its top-level `.git`) holds a secret's value. */
export async function findSecrets(dir: string, secrets: Record<string, string>): Promise<SecretHit[]> {
  const searched = Object.entries(secrets)
    .filter(([, value]) => value.length >= MIN_SECRET_LENGTH)
    .map(([name, value]) => ({ name, forms: secretForms(value) }));
  if (searched.length === 0) return [];
  const hits: SecretHit[] = [];
  const check = (file: string, test: (forms: Buffer[]) => boolean | Promise<boolean>) =>
    Promise.all(
      searched.map(async ({ name, forms }) => {
        if (await test(forms)) hits.push({ name, file });
      }),
    );
  const visit = async (relative: string): Promise<void> => {
    for (const entry of await readdir(join(dir, relative), { withFileTypes: true })) {
      if (relative === "" && entry.name === ".git") continue;
      const path = relative ? `${relative}/${entry.name}` : entry.name;
      const full = join(dir, path);
      await check(path, (forms) => forms.some((form) => Buffer.from(path).includes(form)));
      if (entry.isDirectory()) await visit(path);
      else if (entry.isSymbolicLink()) {
        const target = await readlink(full, { encoding: "buffer" });
        await check(path, (forms) => forms.some((form) => target.includes(form)));
      } else if (entry.isFile()) await check(path, (forms) => fileContains(full, forms));
    }
  };
  await visit("");
  return hits;
}

/** The names of the secrets whose value (or its base64) `text` holds. */
export function secretsIn(text: string, secrets: Record<string, string>): string[] {
  const bytes = Buffer.from(text, "utf8");
  return Object.entries(secrets)
    .filter(([, value]) => value.length >= MIN_SECRET_LENGTH)
    .filter(([, value]) => secretForms(value).some((form) => bytes.includes(form)))
    .map(([name]) => name);
}
