/**
 * Real projects taken from the package registries at test time, as the files of a repository to seed
 * into the GitHub stand-in (`stack.github.addRepo({ files })`): a PyPI sdist, an npm package tarball, a
 * Go module zip from the module proxy, a crate, and a Maven project laid out from a library's sources,
 * test sources and pom on Maven Central. Versions are exact; no project's code is kept in this
 * repository. Each archive is downloaded once per machine (kept under the system's temp directory by
 * name and version, checked against the registry's digest where it gives one), so a rerun does not
 * fetch it again. A download that fails throws, saying what and from where: the test fails, never skips.
 */
import { execFile } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** A repository's files by path: text as strings, anything that is not UTF-8 as bytes. */
export type ProjectFiles = Record<string, string | Buffer>;

/** Where downloads are kept between test processes. */
const CACHE = join(tmpdir(), "agent-fix-registry-cache");

const PYPI = "https://pypi.org/pypi";
const NPM = "https://registry.npmjs.org";
const GOPROXY = "https://proxy.golang.org";
const CRATES_INDEX = "https://index.crates.io";
const MAVEN_CENTRAL = "https://repo.maven.apache.org/maven2";

async function get(url: string, what: string): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, { headers: { "user-agent": "agent-fix-tests" } });
  } catch (error) {
    throw new Error(
      `fetching ${what} from ${url} failed: ${(error as Error).message} (is the registry reachable?)`,
    );
  }
  if (!response.ok) throw new Error(`fetching ${what} from ${url} failed: HTTP ${response.status}`);
  return response;
}

async function getJson<T>(url: string, what: string): Promise<T> {
  return (await (await get(url, what)).json()) as T;
}

interface Digest {
  algorithm: "sha1" | "sha256" | "sha512";
  encoding: "hex" | "base64";
  value: string;
}

function check(bytes: Buffer, digest: Digest | undefined, what: string): void {
  if (!digest) return;
  const actual = createHash(digest.algorithm).update(bytes).digest(digest.encoding);
  if (actual !== digest.value)
    throw new Error(`${what}: its ${digest.algorithm} is ${actual}, the registry says ${digest.value}`);
}

/** The archive at `url`, from the cache when an earlier process fetched it (checked again either way). */
async function download(url: string, cacheName: string, what: string, digest?: Digest): Promise<Buffer> {
  const file = join(CACHE, cacheName);
  const cached = await readFile(file).catch(() => undefined);
  if (cached) {
    check(cached, digest, `${what} (cached at ${file})`);
    return cached;
  }
  const bytes = Buffer.from(await (await get(url, what)).arrayBuffer());
  check(bytes, digest, `${what} from ${url}`);
  await mkdir(CACHE, { recursive: true });
  // Written beside its name and renamed: test files (and tests of one file) running at once never read
  // half a file, nor rename each other's.
  const partial = `${file}.${process.pid}.${randomUUID()}.partial`;
  await writeFile(partial, bytes);
  await rename(partial, file);
  return bytes;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function asText(bytes: Buffer): string | Buffer {
  try {
    return utf8.decode(bytes);
  } catch {
    return bytes;
  }
}

/** Every regular file under `dir` (symbolic links are left out: no project here needs one). */
async function readTree(dir: string): Promise<ProjectFiles> {
  const files: ProjectFiles = {};
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const full = join(entry.parentPath, entry.name);
    files[relative(dir, full)] = asText(await readFile(full));
  }
  return files;
}

/** The archive's files (a .tar.gz or a .zip, unpacked by the system's tar or unzip), their paths from `root`. */
async function unpack(
  bytes: Buffer,
  kind: "tar.gz" | "zip",
  root: string,
  what: string,
): Promise<ProjectFiles> {
  const dir = await mkdtemp(join(tmpdir(), "af-registry-"));
  try {
    const archive = join(dir, `archive.${kind}`);
    const out = join(dir, "out");
    await writeFile(archive, bytes);
    await mkdir(out);
    if (kind === "zip") await run("unzip", ["-q", archive, "-d", out]);
    else await run("tar", ["-xzf", archive, "-C", out, "--no-same-owner", "--no-same-permissions"]);
    const files = await readTree(join(out, root));
    if (Object.keys(files).length === 0) throw new Error(`${what} has no files under ${root}/`);
    return files;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The only top-level directory of a tarball (npm packs into `package/`, though some use another name). */
async function topDirectory(bytes: Buffer, what: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "af-registry-"));
  try {
    const archive = join(dir, "archive.tar.gz");
    await writeFile(archive, bytes);
    const { stdout } = await run("tar", ["-tzf", archive], { maxBuffer: 64 * 1024 * 1024 });
    const tops = new Set(
      stdout
        .split("\n")
        .filter(Boolean)
        .map((path) => path.split("/")[0]),
    );
    const [top] = tops;
    if (tops.size !== 1 || top === undefined)
      throw new Error(`${what}: expected one top-level directory, found ${[...tops].join(", ")}`);
    return top;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

interface PypiRelease {
  releases: Record<
    string,
    { packagetype: string; url: string; filename: string; digests: { sha256: string } }[]
  >;
}

/** A PyPI sdist, its `NAME-VERSION/` prefix stripped (an sdist holds its tests when its author ships them). */
export async function pypiSdist(name: string, version: string): Promise<ProjectFiles> {
  const what = `the PyPI sdist of ${name}==${version}`;
  const metaUrl = `${PYPI}/${name}/json`;
  const meta = await getJson<PypiRelease>(metaUrl, `PyPI's metadata of ${name}`);
  const sdist = meta.releases[version]?.find((file) => file.packagetype === "sdist");
  if (!sdist) throw new Error(`${what}: PyPI lists no sdist for that version`);
  const digest: Digest = { algorithm: "sha256", encoding: "hex", value: sdist.digests.sha256 };
  // A mirror of PyPI's JSON API may give the file's URL relative to the metadata's.
  const bytes = await download(new URL(sdist.url, metaUrl).href, sdist.filename, what, digest);
  return unpack(bytes, "tar.gz", sdist.filename.replace(/\.tar\.gz$/, ""), what);
}

/** An npm package's tarball, its top directory (`package/`) stripped. */
export async function npmPackage(name: string, version: string): Promise<ProjectFiles> {
  const what = `the npm tarball of ${name}@${version}`;
  const meta = await getJson<{ dist: { tarball: string; integrity: string } }>(
    `${NPM}/${name}/${version}`,
    `npm's metadata of ${name}@${version}`,
  );
  const [algorithm, value] = meta.dist.integrity.split("-", 2);
  if (algorithm !== "sha512" || !value)
    throw new Error(`${what}: unexpected integrity ${meta.dist.integrity}`);
  const bytes = await download(meta.dist.tarball, `npm-${name.replace("/", "+")}-${version}.tgz`, what, {
    algorithm,
    encoding: "base64",
    value,
  });
  return unpack(bytes, "tar.gz", await topDirectory(bytes, what), what);
}

/**
 * A Go module's zip from the module proxy, its `MODULE@VERSION/` prefix stripped. (The checksum
 * database is not reachable here; the zip is the proxy's, by exact version.)
 */
export async function goModule(module: string, version: string): Promise<ProjectFiles> {
  const what = `the Go module ${module}@${version}`;
  // The proxy's escaping: each upper-case letter is `!` and its lower case.
  const escaped = module.replace(/[A-Z]/g, (c) => `!${c.toLowerCase()}`);
  const bytes = await download(
    `${GOPROXY}/${escaped}/@v/${version}.zip`,
    `go-${module.replaceAll("/", "+")}-${version}.zip`,
    what,
  );
  return unpack(bytes, "zip", `${module}@${version}`, what);
}

/** A crate from crates.io (found through its sparse index, as cargo does), its `NAME-VERSION/` prefix stripped. */
export async function crate(name: string, version: string): Promise<ProjectFiles> {
  const what = `the crate ${name} ${version}`;
  const lower = name.toLowerCase();
  const path =
    lower.length <= 2
      ? `${lower.length}/${lower}`
      : lower.length === 3
        ? `3/${lower[0]}/${lower}`
        : `${lower.slice(0, 2)}/${lower.slice(2, 4)}/${lower}`;
  const index = await (await get(`${CRATES_INDEX}/${path}`, `the crates.io index entry of ${name}`)).text();
  const entry = index
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { vers: string; cksum: string })
    .find((line) => line.vers === version);
  if (!entry) throw new Error(`${what}: the crates.io index has no such version`);
  const { dl } = await getJson<{ dl: string }>(`${CRATES_INDEX}/config.json`, "the crates.io index's config");
  const url = /\{(crate|version|prefix|lowerprefix|sha256-checksum)\}/.test(dl)
    ? dl.replaceAll("{crate}", name).replaceAll("{version}", version)
    : `${dl}/${name}/${version}/download`;
  const bytes = await download(url, `${name}-${version}.crate`, what, {
    algorithm: "sha256",
    encoding: "hex",
    value: entry.cksum,
  });
  return unpack(bytes, "tar.gz", `${name}-${version}`, what);
}

interface MavenCoordinates {
  groupId: string;
  artifactId: string;
  version: string;
}

/**
 * A Maven project made of what a library published on Maven Central: its `.pom` as `pom.xml`, its
 * `-sources.jar` under `src/main/` and its `-test-sources.jar` under `src/test/` (`.java` files in
 * `java/`, the rest in `resources/`; the jars' own META-INF, written by the build that packed them, is
 * left out, except service registrations). `editPom` is for a pom that cannot build as published: a
 * test that uses it says why.
 */
export async function mavenProject(
  coordinates: MavenCoordinates,
  editPom: (pom: string) => string = (pom) => pom,
): Promise<ProjectFiles> {
  const { groupId, artifactId, version } = coordinates;
  const base = `${MAVEN_CENTRAL}/${groupId.replaceAll(".", "/")}/${artifactId}/${version}/${artifactId}-${version}`;
  const fetchArtifact = async (suffix: string): Promise<Buffer> => {
    const what = `${groupId}:${artifactId}:${version}'s ${artifactId}-${version}${suffix}`;
    const sha1 = (await (await get(`${base}${suffix}.sha1`, `the SHA-1 of ${what}`)).text())
      .trim()
      .split(/\s/)[0];
    return download(`${base}${suffix}`, `maven-${groupId}-${artifactId}-${version}${suffix}`, what, {
      algorithm: "sha1",
      encoding: "hex",
      value: sha1 ?? "",
    });
  };
  const files: ProjectFiles = { "pom.xml": editPom((await fetchArtifact(".pom")).toString("utf8")) };
  for (const [suffix, into] of [
    ["-sources.jar", "src/main"],
    ["-test-sources.jar", "src/test"],
  ] as const) {
    const jar = await unpack(await fetchArtifact(suffix), "zip", ".", `${artifactId}-${version}${suffix}`);
    for (const [path, content] of Object.entries(jar)) {
      if (path.startsWith("META-INF/") && !path.startsWith("META-INF/services/")) continue;
      files[`${into}/${path.endsWith(".java") ? "java" : "resources"}/${path}`] = content;
    }
  }
  return files;
}
