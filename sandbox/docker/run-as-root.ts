import { setTimeout as sleep } from "node:timers/promises";
import type Docker from "dockerode";

/**
 * One command as root in a started container, `input` on its stdin, for the worker's own set-up
 * steps (egress rules, the Java trust store): its exit code and the last of its output as text (the
 * stream is multiplexed: its 8-byte frame headers are dropped).
 */
export async function runAsRoot(
  container: Docker.Container,
  cmd: string[],
  input?: Buffer,
): Promise<{ exitCode: number | null; output: string }> {
  const exec = await container.exec({
    Cmd: cmd,
    User: "0:0",
    AttachStdin: input !== undefined,
    AttachStdout: true,
    AttachStderr: true,
  });
  const stream = await exec.start(input === undefined ? {} : { hijack: true, stdin: true });
  const output = new Promise<string>((resolve) => {
    let text = "";
    stream.on("data", (chunk: Buffer) => {
      text = (text + chunk.toString("utf8")).slice(-4000);
    });
    stream.on("end", () => resolve(text));
    stream.on("close", () => resolve(text));
    stream.on("error", () => resolve(text));
  });
  if (input !== undefined) stream.end(input);
  const text = await output;
  // The stream can end a moment before the engine records the exit.
  let info = await exec.inspect();
  for (let i = 0; info.Running && i < 50; i++) {
    await sleep(20);
    info = await exec.inspect();
  }
  return { exitCode: info.ExitCode, output: text.replace(/[\x00-\x08\x0e-\x1f\x7f]/g, "").trim() };
}
