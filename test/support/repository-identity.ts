/**
 * A repository as the worker identifies it (id and installation) for tests that drive prepareTree
 * directly: the id is fixed by the name, so one name is one repository, unless a test says otherwise.
 */
import { createHash } from "node:crypto";

export function repositoryNamed(
  fullName: string,
  ids: { id?: number; installationId?: number } = {},
): { fullName: string; id: number; installationId: number } {
  const fromName = createHash("sha256").update(fullName).digest().readUInt32BE(0);
  return { fullName, id: ids.id ?? fromName + 1, installationId: ids.installationId ?? 1 };
}
