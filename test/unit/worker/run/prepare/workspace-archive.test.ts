import { lstat, mkdir, mkdtemp, readFile, readlink, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pack } from "tar-stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  DEFAULT_INTAKE_LIMITS,
  extractArchive,
  type ReceiveLimits,
  workspaceLimits,
} from "../../../../../worker/run/prepare/workspace-archive.js";

const LIMITS = workspaceLimits(DEFAULT_INTAKE_LIMITS);

type Entry = {
  name: string;
  type?: "file" | "directory" | "symlink" | "link" | "fifo";
  body?: string;
  linkname?: string;
  mode?: number;
  mtime?: Date;
};

/** A tar stream holding `entries`, as a hostile sandbox could send it. */
function archive(entries: Entry[]): Readable {
  const tar = pack();
  for (const { body, ...header } of entries) tar.entry({ type: "file", ...header }, body ?? "");
  tar.finalize();
  return Readable.from(tar as unknown as AsyncIterable<Buffer>);
}

describe("unpacking a sandbox's tar on the host", () => {
  let root: string;
  let dir: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "af-archive-"));
    dir = join(root, "out");
    await mkdir(dir);
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it("writes files, directories and symlinks, keeps the executable bit and drops setuid", async () => {
    await extractArchive(
      archive([
        { name: "./", type: "directory" },
        { name: "./src/", type: "directory" },
        { name: "./src/a.py", body: "print(1)\n" },
        { name: "./run.sh", body: "#!/bin/sh\n", mode: 0o4755 },
        { name: "./link", type: "symlink", linkname: "src/a.py" },
        { name: "./fifo", type: "fifo" },
      ]),
      dir,
      LIMITS,
    );
    expect(await readFile(join(dir, "src/a.py"), "utf8")).toBe("print(1)\n");
    expect((await lstat(join(dir, "run.sh"))).mode & 0o7777).toBe(0o755);
    expect(await readlink(join(dir, "link"))).toBe("src/a.py");
    await expect(lstat(join(dir, "fifo"))).rejects.toThrow(/ENOENT/);
  });

  it("keeps each file's modification time, so that setup's build output stays newer than its sources", async () => {
    const source = new Date("2026-01-02T03:04:05Z");
    const built = new Date("2026-01-02T03:09:00Z");
    await extractArchive(
      archive([
        { name: "./src/lib.rs", body: "pub fn f() {}\n", mtime: source },
        { name: "./target/debug/lib.rlib", body: "built", mtime: built },
      ]),
      dir,
      LIMITS,
    );
    expect((await lstat(join(dir, "src/lib.rs"))).mtime).toEqual(source);
    expect((await lstat(join(dir, "target/debug/lib.rlib"))).mtime).toEqual(built);
  });

  it("never writes under .git, at the top or nested", async () => {
    await extractArchive(
      archive([
        { name: ".git/config", body: "[core]\n\tfsmonitor = evil\n" },
        { name: "vendor/x/.git/hooks/pre-commit", body: "evil" },
        { name: "ok.txt", body: "ok" },
      ]),
      dir,
      LIMITS,
    );
    await expect(lstat(join(dir, ".git"))).rejects.toThrow(/ENOENT/);
    await expect(lstat(join(dir, "vendor/x/.git"))).rejects.toThrow(/ENOENT/);
    expect(await readFile(join(dir, "ok.txt"), "utf8")).toBe("ok");
  });

  it.each([
    ["an absolute name", [{ name: "/etc/passwd", body: "x" }], /absolute/],
    ["a name climbing out", [{ name: "a/../../escape", body: "x" }], /\.\./],
    [
      "a hard link",
      [
        { name: "f", body: "x" },
        { name: "g", type: "link", linkname: "f" },
      ],
      /hard links/,
    ],
    [
      "a write through a symlink",
      [
        { name: "out", type: "symlink", linkname: "../outside" },
        { name: "out/file", body: "x" },
      ],
      /not a directory/,
    ],
  ] as [string, Entry[], RegExp][])(
    "refuses %s and writes nothing outside",
    async (_what, entries, message) => {
      await mkdir(join(root, "outside"));
      await expect(extractArchive(archive(entries), dir, LIMITS)).rejects.toMatchObject({
        code: "unsafe_archive",
        message: expect.stringMatching(message),
      });
      await expect(lstat(join(root, "escape"))).rejects.toThrow(/ENOENT/);
      await expect(lstat(join(root, "outside/file"))).rejects.toThrow(/ENOENT/);
    },
  );

  it("replaces an earlier file by a later symlink without following it", async () => {
    await writeFile(join(root, "target"), "untouched");
    await extractArchive(
      archive([
        { name: "a", body: "first" },
        { name: "a", type: "symlink", linkname: "../target" },
        { name: "b", type: "symlink", linkname: "../target" },
        { name: "b", body: "second" },
      ]),
      dir,
      LIMITS,
    );
    expect(await readlink(join(dir, "a"))).toBe("../target");
    expect(await readFile(join(dir, "b"), "utf8")).toBe("second");
    expect(await readFile(join(root, "target"), "utf8")).toBe("untouched");
  });

  describe("bounded as it arrives", () => {
    const small: ReceiveLimits = {
      maxBytes: 1000,
      maxEntries: 5,
      bytesLimit: "a test's 1000 bytes",
      entriesLimit: "a test's 5",
    };

    it("refuses the first file past the byte cap before writing any of it, naming it and the limit", async () => {
      const entries = [
        { name: "./a.txt", body: "a".repeat(600) },
        { name: "./big.bin", body: "b".repeat(600) },
      ];
      await expect(extractArchive(archive(entries), dir, small)).rejects.toMatchObject({
        code: "receive_limit",
        message: expect.stringMatching(/"big\.bin".*past 1000 bytes \(a test's 1000 bytes\)/),
      });
      expect(await readFile(join(dir, "a.txt"), "utf8")).toHaveLength(600);
      await expect(lstat(join(dir, "big.bin"))).rejects.toThrow(/ENOENT/);
    });

    it("counts a file at the size its header announces (a sparse file at its full size)", async () => {
      const tar = pack();
      // The header says 2 MiB; the stream is cut after the header: nothing may be waited for or written.
      const entry = tar.entry({ name: "sparse.bin", size: 2 * 2 ** 20 });
      entry.write(Buffer.alloc(512));
      const stream = Readable.from(tar as unknown as AsyncIterable<Buffer>);
      await expect(extractArchive(stream, dir, small)).rejects.toMatchObject({ code: "receive_limit" });
      await expect(lstat(join(dir, "sparse.bin"))).rejects.toThrow(/ENOENT/);
    });

    it("refuses the entry past the entry cap, saying where most of them are", async () => {
      const entries = Array.from({ length: 8 }, (_, i) => ({ name: `./many/f${i}`, body: "" }));
      await expect(extractArchive(archive(entries), dir, small)).rejects.toMatchObject({
        code: "receive_limit",
        message: expect.stringMatching(
          /more than 5 files and directories \(a test's 5\); most are under many\/ \(6 so far\)/,
        ),
      });
      await expect(lstat(join(dir, "many/f5"))).rejects.toThrow(/ENOENT/);
    });
  });
});
